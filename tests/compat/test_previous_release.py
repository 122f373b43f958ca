#!/usr/bin/env python3
"""Upgrades without a flag day (docs/upgrading.md), against the previous release.

Builds the previous release's libshmring and ringctl from git (its tag, or the
pinned commit when a clean clone has no tags) into WORK, once: later runs reuse that
build. Then, with real shared memory and real processes, in both directions:

1. this release's writer publishes rings of several algorithms, using no new
   feature, and the previous release's readers answer every one of 10,000 keys
   as this release's readers do (the version is format 3);
2. a publication for readers of this release on (--min-reader), format 4, is
   refused by the previous release: a fresh reader fails with its own format
   error, a running one stays on its version, and this release's
   `ringctl readers` and `ringctl metrics` show that process as stuck, and the
   previous release's writer refuses to change it; the ring keeps its minimum
   reader, and --min-reader 0.0 brings format 3, and the stuck reader, back;
3. the previous release's writer publishes, on a ring this release published and on
   its own, and this release's readers answer as its readers do, and follow its
   next publication.

A reader is a long-running process that answers keys on standard input as
`ringctl lookup --stdin` does ("KEY<TAB>NAME<TAB>ADDRESS" a line, following new
generations); the two ringctl builds are the readers by default, and --reader
NAME=COMMAND adds others (the Python wheel's bundled reader) that are checked as
new readers: the command gets --dir DIR -r RING after it.

Exit status 77 (skipped) only when the history has neither the tag nor the commit;
a shallow clone that left them out fails instead.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

PREVIOUS_TAG = "v0.3.0"
# The commit v0.3.0 was tagged at, in main's history: what the test builds when
# a clone (CI's) has no tags.
PREVIOUS_COMMIT = "c7a54c3"
# What the previous release's ringctl prints for a format it does not read
# (SHMRING_EFORMAT, -1003, in 0.3.0).
PREVIOUS_FORMAT_ERROR = "unsupported shmring format version"
KEYS = [f"key-{i}" for i in range(10000)]
BATCH = 250
ALGORITHMS = ["ring", "ketama", "maglev", "jump", "dalli", "spymemcached"]
NODES = 12


def run(command, **kwargs):
    return subprocess.run(command, check=True, text=True, capture_output=True, **kwargs)


def previous_release(source):
    """The commit to build: the tag if the history has it, else the pinned commit."""
    for name in (PREVIOUS_TAG + "^{commit}", PREVIOUS_COMMIT + "^{commit}"):
        found = subprocess.run(["git", "-C", source, "rev-parse", "-q", "--verify", name],
                               text=True, capture_output=True)
        if found.returncode == 0:
            return found.stdout.strip()
    return None


def build_previous(source, commit, work):
    """Builds the previous release's ringctl (and its libraries) under WORK, once."""
    tree = os.path.join(work, "src-" + commit[:12])
    build = os.path.join(work, "build-" + commit[:12])
    ringctl = os.path.join(build, "tools", "ringctl")
    if not os.path.isdir(tree):
        partial = tree + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        archive = subprocess.Popen(["git", "-C", source, "archive", commit],
                                   stdout=subprocess.PIPE)
        run(["tar", "-x", "-C", partial], stdin=archive.stdout)
        if archive.wait() != 0:
            sys.exit(f"FAIL: git archive {commit}")
        os.rename(partial, tree)
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        run(["cmake", "-S", tree, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
             "-DSHMRING_SYNC=OFF", "-DSHMRING_BUILD_BINDINGS=OFF", "-DSHMRING_MAN=OFF",
             "-DSHMRING_BUILD_EXAMPLES=OFF", "-DSHMRING_DOCS=OFF", "-DBUILD_TESTING=OFF"])
    run(["cmake", "--build", build, "-j2", "--target", "ringctl"])
    return ringctl


class Reader:
    """A long-running reader process answering keys on its standard input."""

    def __init__(self, name, command, directory, ring):
        self.name = name
        self.process = subprocess.Popen(
            command + ["--dir", directory, "-r", ring, "lookup", "--stdin"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1)

    def owners(self, keys):
        answers = []
        for start in range(0, len(keys), BATCH):
            batch = keys[start:start + BATCH]
            self.process.stdin.write("".join(k + "\n" for k in batch))
            self.process.stdin.flush()
            for key in batch:
                line = self.process.stdout.readline()
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 3 or fields[0] != key:
                    self.stop()
                    sys.exit(f"FAIL: {self.name} answered {line!r} for {key!r}; "
                             f"stderr: {self.process.stderr.read()}")
                answers.append(fields[1])
        return answers

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def nodes_file(directory, count, name):
    path = os.path.join(directory, name)
    nodes = [{"name": f"cache-{i}", "address": f"10.0.0.{i + 1}:11211"}
             for i in range(count)]
    with open(path, "w") as out:
        json.dump({"nodes": nodes}, out)
    return path


def snapshot_format(directory, ring, generation):
    """The format_version field of a published version's header (offset 8)."""
    path = os.path.join(directory, "shmring." + ring, f"version.{generation}")
    with open(path, "rb") as version:
        header = version.read(12)
    return int.from_bytes(header[8:12], sys.byteorder)


def generation_of(ringctl, directory, ring):
    shown = json.loads(run(ringctl + ["--dir", directory, "-r", ring, "--json",
                                      "show"]).stdout)
    return shown["generation"]


def expect_equal(what, got, expected):
    if got != expected:
        differ = sum(1 for a, b in zip(got, expected) if a != b)
        sys.exit(f"FAIL: {what}: {differ} of {len(expected)} answers differ")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--ringctl", required=True)
    parser.add_argument("--reader", action="append", default=[],
                        help="NAME=COMMAND: another reader of this release")
    args = parser.parse_args()
    commit = previous_release(args.source)
    shallow = subprocess.run(["git", "-C", args.source, "rev-parse",
                              "--is-shallow-repository"], text=True, capture_output=True)
    if commit is None and shallow.stdout.strip() == "true":
        # The previous release exists, but this clone left it out: not a reason to
        # skip the test that guards upgrades.
        print(f"FAIL: a shallow clone lacks {PREVIOUS_TAG} and {PREVIOUS_COMMIT}: "
              "git fetch --unshallow --tags")
        return 1
    if commit is None:
        print(f"SKIP: the history has neither {PREVIOUS_TAG} nor {PREVIOUS_COMMIT}: "
              "fetch the tags (git fetch --tags) to test against the previous release")
        return 77
    os.makedirs(args.work, exist_ok=True)
    old = [build_previous(args.source, commit, args.work)]
    new = [args.ringctl]
    extra = []
    for spec in args.reader:
        name, _, command = spec.partition("=")
        extra.append((name, shlex.split(command)))

    directory = tempfile.mkdtemp(prefix="shmring-compat-", dir="/dev/shm")
    os.chmod(directory, 0o700)
    readers = []
    try:
        def start(name, command, ring):
            reader = Reader(name, command, directory, ring)
            readers.append(reader)
            return reader

        def ringctl(command, ring, *words):
            return run(command + ["--dir", directory, "-r", ring] + list(words))

        # 1. New writer, old readers, no new feature: format 3, the same answers.
        full = nodes_file(directory, NODES, "full.json")
        fewer = nodes_file(directory, NODES - 3, "fewer.json")
        for algorithm in ALGORITHMS:
            ring = "new-" + algorithm
            ringctl(new, ring, "init", "--algorithm", algorithm)
            ringctl(new, ring, "load", full)
            generation = generation_of(new, directory, ring)
            version_format = snapshot_format(directory, ring, generation)
            if version_format != 3:
                sys.exit(f"FAIL: {ring}: published format {version_format}, not 3")
            expected = start("new ringctl", new, ring).owners(KEYS)
            expect_equal(f"{ring}: the previous release's reader",
                         start("old ringctl", old, ring).owners(KEYS), expected)
            for name, command in extra:
                expect_equal(f"{ring}: {name}", start(name, command, ring).owners(KEYS),
                             expected)
            print(f"{algorithm}: format 3, {len(KEYS)} keys agree between releases")

        # 2. Published for readers of 0.4 on: format 4, which the old release refuses.
        ring = "new-ring"
        old_reader = readers[1]
        assert old_reader.name == "old ringctl"
        before = generation_of(new, directory, ring)
        answers_before = old_reader.owners(KEYS)
        ringctl(new, ring, "load", "--min-reader", "0.4", fewer)
        after = generation_of(new, directory, ring)
        if snapshot_format(directory, ring, after) != 4:
            sys.exit("FAIL: --min-reader 0.4 did not publish format 4")
        fresh = subprocess.run(old + ["--dir", directory, "-r", ring, "lookup", "key-1"],
                               text=True, capture_output=True)
        if fresh.returncode == 0 or PREVIOUS_FORMAT_ERROR not in fresh.stderr:
            sys.exit(f"FAIL: the old reader opened format 4: {fresh.returncode} "
                     f"{fresh.stderr!r}")
        print(f"old reader refuses format 4: {fresh.stderr.strip()}")
        # The running old reader keeps answering from its version, as 0.3.0 does.
        expect_equal("the stuck old reader", old_reader.owners(KEYS), answers_before)
        new_answers = start("new ringctl", new, ring).owners(KEYS)
        if new_answers == answers_before:
            sys.exit("FAIL: removing three nodes moved no key")
        census = json.loads(ringctl(new, ring, "--json", "readers").stdout)
        stuck = [r for r in census["readers"] if r["pid"] == old_reader.process.pid]
        if (len(stuck) != 1 or stuck[0]["generation"] != before
                or stuck[0]["stuck_format"] != 4 or stuck[0]["reader_release"] != "0.3.0"
                or census["stuck_processes"] != 1):
            sys.exit(f"FAIL: the census does not show the old reader as stuck: {census}")
        text = ringctl(new, ring, "readers").stdout
        line = (f"stuck on generation {before}: format 4 is newer than this reader "
                "(libshmring 0.3.0)")
        if line not in text:
            sys.exit(f"FAIL: ringctl readers lacks {line!r}:\n{text}")
        metrics = ringctl(new, ring, "metrics").stdout
        sample = f'shmring_ring_stuck_processes{{ring="{ring}"}} 1'
        if sample not in metrics:
            sys.exit(f"FAIL: ringctl metrics lacks {sample!r}:\n{metrics}")
        print(f"ringctl readers: {line}; metrics: {sample}")
        # The old writer does not overwrite a version it cannot read.
        refused = subprocess.run(old + ["--dir", directory, "-r", ring, "add", "other",
                                        "10.0.0.201:11211"], text=True,
                                 capture_output=True)
        if refused.returncode == 0 or PREVIOUS_FORMAT_ERROR not in refused.stderr:
            sys.exit(f"FAIL: the old writer changed a format-4 ring: {refused.stderr!r}")
        if generation_of(new, directory, ring) != after:
            sys.exit("FAIL: the old writer's refusal published something")

        # The ring keeps its minimum reader across changes; 0.0 returns to format 3,
        # which the stuck reader then follows.
        ringctl(new, ring, "add", "extra", "10.0.0.200:11211")
        kept = generation_of(new, directory, ring)
        if snapshot_format(directory, ring, kept) != 4:
            sys.exit("FAIL: a change after --min-reader 0.4 went back to format 3")
        ringctl(new, ring, "load", "--min-reader", "0.0", fewer)
        oldest = generation_of(new, directory, ring)
        if snapshot_format(directory, ring, oldest) != 3:
            sys.exit("FAIL: --min-reader 0.0 did not publish format 3")
        expect_equal("the old reader back on format 3", old_reader.owners(KEYS),
                     new_answers)
        census = json.loads(ringctl(new, ring, "--json", "readers").stdout)
        if census["stuck_processes"] != 0:
            sys.exit(f"FAIL: still stuck after format 3: {census}")
        print("--min-reader 0.0: format 3 again, and the old reader follows it")

        # 3. Old writer, new readers: on a ring this release published (format 3),
        # then on one the old release made.
        ring = "new-ketama"
        new_reader = start("new ringctl", new, ring)
        ringctl(old, ring, "remove", "cache-0")
        expected = start("old ringctl", old, ring).owners(KEYS)
        expect_equal("the new reader after the old writer's publication",
                     new_reader.owners(KEYS), expected)
        ring = "old-ring"
        ringctl(old, ring, "init", "--algorithm", "ketama")
        ringctl(old, ring, "load", full)
        expected = start("old ringctl", old, ring).owners(KEYS)
        new_reader = start("new ringctl", new, ring)
        expect_equal("the new reader of the old writer's ring", new_reader.owners(KEYS),
                     expected)
        ringctl(old, ring, "load", fewer)
        expected = start("old ringctl", old, ring).owners(KEYS)
        expect_equal("the new reader after the old writer's next publication",
                     new_reader.owners(KEYS), expected)
        for name, command in extra:
            expect_equal(f"{ring}: {name}", start(name, command, ring).owners(KEYS),
                         expected)
        print("old writer: the new reader answers as the old one, and follows it")

        # 4. Load boards: one of the default sizes, which this release makes for a
        # ring of up to 512 nodes, is the previous release's layout, and its readers
        # attach it; a board of other sizes they refuse (leases are plain lookups
        # for them), and this release's readers attach it.
        ring = "board"
        group = str(os.getegid())
        ringctl(new, ring, "init", "--workers-group", group)
        ringctl(new, ring, "load", full)
        ringctl(new, ring, "board", group)

        def board_of(command):
            shown = json.loads(ringctl(command, ring, "--json", "show").stdout)
            return shown.get("board")

        old_board = board_of(old)
        if old_board is None or old_board.get("in_flight") != 0:
            sys.exit(f"FAIL: the previous release does not read a default board: {old_board}")
        ringctl(new, ring, "board", group, "--nodes", "2048", "--slots", "64")
        if board_of(old) is not None:
            sys.exit("FAIL: the previous release reads a board of 2048 x 64")
        new_board = board_of(new)
        if new_board is None or new_board.get("in_flight") != 0:
            sys.exit(f"FAIL: this release does not read its 2048 x 64 board: {new_board}")
        ringctl(new, ring, "board", group, "--nodes", "1024", "--slots", "128")
        if board_of(old) is None:
            sys.exit("FAIL: the previous release does not read a board resized to 1024 x 128")
        print("load boards: the previous release reads default-sized ones only")
    finally:
        for reader in readers:
            reader.stop()
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
