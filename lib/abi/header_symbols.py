#!/usr/bin/env python3
"""Compares a shared library's exported symbols with what its header declares.

Usage: header_symbols.py --nm NM --header HEADER --library LIBRARY
       header_symbols.py --header HEADER --list

The functions a header exports are its SHMRING_API declarations (the name before the
first parenthesis of each); the library's are its defined dynamic symbols (`nm -D
--defined-only`), without their version (shmring_open@@SHMRING_0.1). Any difference,
either way, fails with the names that differ.
"""
import argparse
import re
import subprocess
import sys


def header_functions(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # Drop preprocessor lines (with their continuations): the SHMRING_API definition
    # is not a declaration.
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    names = set()
    for declaration in re.findall(r"\bSHMRING_API\b([^;{(]*)\(", text):
        identifiers = re.findall(r"[A-Za-z_]\w*", declaration)
        if not identifiers:
            sys.exit(f"{path}: cannot read a SHMRING_API declaration: {declaration!r}")
        names.add(identifiers[-1])
    if not names:
        sys.exit(f"{path}: no SHMRING_API declarations found")
    return names


def library_symbols(nm, path):
    out = subprocess.run([nm, "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        kind, name = fields[1], fields[2].split("@")[0]
        # The version nodes themselves appear as absolute symbols (SHMRING_0.1).
        if kind == "A":
            continue
        names.add(name)
    return names


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--header", required=True)
    parser.add_argument("--library")
    parser.add_argument("--nm", default="nm")
    parser.add_argument("--list", action="store_true",
                        help="print the header's functions, one a line")
    args = parser.parse_args()
    declared = header_functions(args.header)
    if args.list:
        print("\n".join(sorted(declared)))
        return 0
    exported = library_symbols(args.nm, args.library)
    missing = sorted(declared - exported)
    extra = sorted(exported - declared)
    for name in missing:
        print(f"declared in {args.header} but not exported: {name}")
    for name in extra:
        print(f"exported by {args.library} but not declared in {args.header}: {name}")
    if missing or extra:
        return 1
    print(f"{args.library}: {len(exported)} symbols, exactly those of {args.header}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
