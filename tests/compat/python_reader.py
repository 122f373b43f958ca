#!/usr/bin/env python3
"""A reader for test_previous_release.py's --reader: the Python binding in a process.

Usage: python_reader.py --dir DIR -r RING lookup --stdin

Answers each key read on standard input with "KEY<TAB>NAME<TAB>ADDRESS" as
`ringctl lookup --stdin` does, through shmring.Ring, whose lookups follow each new
generation; so the installed wheel's bundled reader meets the previous release's
writer and rings published for newer readers as the library's readers do.
"""
import argparse
import sys

import shmring


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("-r", dest="ring", required=True)
    parser.add_argument("command", choices=["lookup"])
    parser.add_argument("--stdin", action="store_true", required=True)
    args = parser.parse_args()
    ring = shmring.Ring(args.ring, directory=args.dir)
    for line in sys.stdin:
        key = line.rstrip("\n")
        try:
            node = ring.lookup(key)
        except shmring.Error as error:
            print("python_reader: %s: %s" % (key, error), file=sys.stderr)
            return 1
        sys.stdout.write("%s\t%s\t%s\n" % (key, node.name, node.address))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
