#!/usr/bin/env python3
"""What a lookup costs from Python, next to its floor and a pure-Python ring.

For rings of 10, 100, 1,000 and 10,000 nodes (or those --nodes lists; 160 points per
node, xxh3, made with ringctl in a private directory under /dev/shm), prints from one
run, in ns per call over 100,000 distinct str keys and over 1,024 keys repeated to
100,000 (loop included):

  - the empty loop over the keys;
  - shmring._noop(key): a no-op function of the same C module with one argument,
    the floor for any call from Python into C;
  - ring.lookup_id(key), ring.lookup(key), and lookup_ids(chunk) per key;
  - uhashring's HashRing.get_node(key) over the same node names (Debian's
    python3-uhashring; its default ring of 160 MD5 points per node), the ring
    library Python applications usually take, and ring.lookup(key) on a ring of
    the `uhashring` algorithm over those names, which answers every key as
    get_node() does;
  - pure-Python rings of the same size and points (bisect over sorted points,
    owners in a parallel list), hashing the key with MD5 (what pure-Python rings
    such as uhashring and hash_ring use) and with zlib.crc32 (the cheapest hash
    in the standard library);

then the ratios lookup / lookup_id (target: at most 1.3: a Node object costs a
table read, not a new object, see README "Speed"), uhashring / lookup, uhashring /
the `uhashring` ring's lookup (the same answers),
lookup_id / _noop (target: at most 1.5) and pure-Python / lookup_id (target: at
least 20). Targets are reported, never enforced here. Without uhashring its rows
say so and the rest runs.

How it times: the key stream is cut into chunks of 1,000 keys, and the contenders
(every row above, the empty loop included) take turns by chunk, never by whole
stream, so that none starts its run on caches that a memory-hungry contender
(uhashring, the pure-Python rings) has just swept, while the others run on warm
ones. A pass is K rotations of the chunks (K contenders): in rotation r, chunk c is
run by contender (offset(c) + r) mod K, so that in a pass every contender runs every
chunk once, and offset(c) - offset(c - 1) steps through 1..K-1, so that each
contender follows each other one about equally often. A contender's time for a pass
is the sum of its chunks' times (each timed alone by the clock); a row is the
lowest of those sums over the passes, divided by the number of keys. One more
pass before them is not counted (its first lookups map the ring's pages and make its
Node objects).

Usage: bench.py [--quick] [--passes N] [--nodes N,N...] [--cpu-time] [--ringctl PATH]
(PATH defaults to $SHMRING_RINGCTL, then ringctl on PATH). --quick: one ring of 100
nodes, 10,000 keys, one pass (a smoke test). --passes: passes, the best of which is
kept (default 7; more on a loaded machine, where a slow phase spoils whole passes).
--nodes: the ring sizes (default 10,100,1000,10000). --cpu-time: time each chunk by
this thread's CPU time rather than the wall clock, so that on a machine shared with
other jobs the time the scheduler gives them is not counted (what they do to the
caches still is).
"""

import argparse
import bisect
import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import shmring

try:
    import uhashring
except ImportError:  # Debian: apt-get install python3-uhashring
    uhashring = None

VNODES = 160
HOT_KEYS = 1024
# Contenders take turns by chunks of this many keys: a chunk of lookups takes tens of
# us, against a read of the clock's under 0.1 us (perf_counter_ns) or about 0.5 us
# (thread_time_ns, a system call), and the caches it inherits from another contender
# are refilled early in it.
CHUNK_KEYS = 1000
TARGET_NOOP_RATIO = 1.5
TARGET_NODE_RATIO = 1.3
TARGET_PURE_PYTHON_RATIO = 20.0


def node_set(count):
    return [
        {"name": "node%d" % i, "address": "10.%d.%d.%d:11211" % (i >> 16 & 255, i >> 8 & 255, i & 255)}
        for i in range(count)
    ]


class PurePythonRing:
    """The usual pure-Python consistent-hash ring: VNODES points per node."""

    def __init__(self, names, hash_bytes):
        self.hash_bytes = hash_bytes
        points = []
        for node_id, name in enumerate(names):
            encoded = name.encode()
            for i in range(VNODES):
                points.append((hash_bytes(encoded + i.to_bytes(4, "little")), node_id))
        points.sort()
        self.points = [p for p, _ in points]
        self.owners = [o for _, o in points]

    def lookup_id(self, key):
        index = bisect.bisect_right(self.points, self.hash_bytes(key.encode()))
        if index == len(self.points):
            index = 0
        return self.owners[index]


def md5_hash(data):
    return int.from_bytes(hashlib.md5(data).digest()[:8], "little")


# The clock of every timer: the wall clock, or this thread's CPU time (--cpu-time).
clock_ns = time.perf_counter_ns


def loop_timer(call):
    """A timer of `for key in chunk: call(key)`, in ns for the chunk."""
    def run(chunk):
        start = clock_ns()
        for key in chunk:
            call(key)
        return clock_ns() - start
    return run


def empty_loop(chunk):
    start = clock_ns()
    for key in chunk:
        pass
    return clock_ns() - start


def batch_timer(call):
    def run(chunk):
        start = clock_ns()
        call(chunk)
        return clock_ns() - start
    return run


def chunk_offsets(chunk_count, contender_count):
    """Whose turn each chunk starts a rotation with: from one chunk to the next the
    turn moves on by 1, 2, ..., K-1, 1, 2, ..., so that over a pass each contender
    runs after each other one about equally often (by a fixed step of 1, each would
    always run after the same one, and the one after a cache-sweeping contender would
    pay for it in every chunk)."""
    offsets = [0]
    for chunk in range(1, chunk_count):
        step = 1 + (chunk - 1) % (contender_count - 1) if contender_count > 1 else 0
        offsets.append((offsets[-1] + step) % contender_count)
    return offsets


def best_of(contenders, chunks, passes):
    """Best ns per key of each contender over PASSES passes, each pass K rotations of
    CHUNKS in which chunk c is run by contender (offset(c) + r) mod K (see the
    module's docstring); a contender's time for a pass is the sum of its chunks'."""
    timers = list(contenders.values())
    count = len(timers)
    offsets = chunk_offsets(len(chunks), count)
    key_count = sum(len(chunk) for chunk in chunks)
    best = [None] * count
    gc.disable()
    try:
        # Pass 0 is not counted: its first lookups map the ring's pages and make its
        # Node objects, which no later pass repeats.
        for pass_number in range(passes + 1):
            totals = [0] * count
            for rotation in range(count):
                for chunk, offset in zip(chunks, offsets):
                    turn = (offset + rotation) % count
                    totals[turn] += timers[turn](chunk)
            if pass_number > 0:
                best = [total if b is None else min(b, total)
                        for b, total in zip(best, totals)]
    finally:
        gc.enable()
    return {label: total / key_count for label, total in zip(contenders, best)}


def bench_ring(ringctl, directory, nodes, key_sets, passes):
    name = "pybench-%d-%d" % (os.getpid(), nodes)
    subprocess.run(
        [ringctl, "--dir", directory, "-r", name, "load", "-"],
        input=json.dumps({"algorithm": "ring", "hash": "xxh3", "vnodes": VNODES,
                          "nodes": node_set(nodes)}).encode(),
        check=True, capture_output=True,
    )
    names = [n["name"] for n in node_set(nodes)]
    pure_md5 = PurePythonRing(names, md5_hash)
    pure_crc = PurePythonRing(names, zlib.crc32)
    uhash = uhashring.HashRing(nodes=names) if uhashring is not None else None
    # The same node names placed as uhashring places them.
    uhash_name = name + "-uhashring"
    subprocess.run(
        [ringctl, "--dir", directory, "-r", uhash_name, "load", "-"],
        input=json.dumps({"algorithm": "uhashring", "hash": "md5",
                          "nodes": node_set(nodes)}).encode(),
        check=True, capture_output=True,
    )
    results = {}
    with shmring.Ring(name, directory) as ring, \
            shmring.Ring(uhash_name, directory) as uhash_ring:
        for label, keys in key_sets.items():
            chunks = [keys[i:i + CHUNK_KEYS] for i in range(0, len(keys), CHUNK_KEYS)]
            contenders = {
                "empty loop": empty_loop,
                "shmring._noop(key)": loop_timer(shmring._noop),
                "ring.lookup_id(key)": loop_timer(ring.lookup_id),
                "ring.lookup(key)": loop_timer(ring.lookup),
                "ring.lookup_ids(chunk), per key": batch_timer(ring.lookup_ids),
                "pure Python, MD5 + bisect": loop_timer(pure_md5.lookup_id),
                "pure Python, crc32 + bisect": loop_timer(pure_crc.lookup_id),
            }
            contenders["uhashring ring.lookup(key)"] = loop_timer(uhash_ring.lookup)
            if uhash is not None:
                contenders["uhashring get_node(key)"] = loop_timer(uhash.get_node)
            results[label] = best_of(contenders, chunks, passes)
    for ring_name in (name, uhash_name):
        subprocess.run([ringctl, "--dir", directory, "-r", ring_name, "destroy"],
                       check=True, capture_output=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one ring of 100 nodes, 10,000 keys, one pass")
    parser.add_argument("--passes", type=int, default=7, help="passes (the best kept)")
    parser.add_argument("--nodes", default="10,100,1000,10000",
                        help="ring sizes, comma-separated (default 10,100,1000,10000)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by this thread's CPU time, not the wall clock")
    parser.add_argument("--ringctl", default=os.environ.get("SHMRING_RINGCTL") or shutil.which("ringctl"))
    args = parser.parse_args()
    if not args.ringctl:
        parser.error("ringctl not found: pass --ringctl or set SHMRING_RINGCTL")
    try:
        sizes = [int(size) for size in args.nodes.split(",")]
    except ValueError:
        parser.error("--nodes takes ring sizes separated by commas, e.g. 100,10000")
    if any(size < 1 for size in sizes):
        parser.error("--nodes: a ring needs at least one node")
    if args.quick:
        sizes = [100]
    if args.cpu_time:
        global clock_ns
        clock_ns = time.thread_time_ns
    key_count = 10000 if args.quick else 100000
    passes = 1 if args.quick else max(1, args.passes)
    keys = ["user:%d:%x" % (i, i * 2654435761 & 0xFFFFFFFF) for i in range(key_count)]
    hot = keys[:HOT_KEYS]
    key_sets = {
        "distinct": keys,
        "hot": (hot * (key_count // len(hot) + 1))[:key_count],
    }

    print("shmring %s (library %s), Python %s" % (
        shmring.__version__, shmring.library_version, sys.version.split()[0]))
    print("%d str keys, %d points per node; ns per key (%s): the lowest total of %d "
          "passes, contenders taking turns by chunks of %d keys"
          % (key_count, VNODES, "thread CPU time" if args.cpu_time else "wall clock",
             passes, CHUNK_KEYS))
    print("distinct: %d distinct keys; hot: %d distinct keys, repeated"
          % (key_count, HOT_KEYS))
    if uhashring is None:
        print("uhashring: not installed (Debian: apt-get install python3-uhashring)")
    else:
        try:
            from importlib.metadata import version
            print("uhashring %s" % version("uhashring"))
        except Exception:  # a uhashring without distribution metadata
            print("uhashring (version unknown)")
    directory = tempfile.mkdtemp(prefix="shmring-bench-", dir="/dev/shm")
    try:
        for nodes in sizes:
            results = bench_ring(args.ringctl, directory, nodes, key_sets, passes)
            print("\nring of %d nodes (%d points)      %12s %12s"
                  % (nodes, nodes * VNODES, "distinct", "hot"))
            columns = list(results.values())
            for label in columns[0]:
                print("  %-34s" % label + "".join("%9.1f ns" % c[label] for c in columns))

            def ratios(label, target, compare, numerator, denominator):
                if numerator not in columns[0]:
                    return
                values = [c[numerator] / c[denominator] for c in columns]
                print("  %-34s" % label + "".join("%11.2fx" % v for v in values)
                      + ("   (target %s: %s)" % (target, ", ".join(
                          "met" if compare(v) else "NOT met" for v in values))
                         if target else ""))

            ratios("lookup / lookup_id", "<= %.1fx" % TARGET_NODE_RATIO,
                   lambda v: v <= TARGET_NODE_RATIO, "ring.lookup(key)", "ring.lookup_id(key)")
            ratios("uhashring get_node / lookup", None, None, "uhashring get_node(key)",
                   "ring.lookup(key)")
            ratios("uhashring get_node / its ring's", None, None,
                   "uhashring get_node(key)", "uhashring ring.lookup(key)")

            ratios("lookup_id / _noop", "<= %.1fx" % TARGET_NOOP_RATIO,
                   lambda v: v <= TARGET_NOOP_RATIO, "ring.lookup_id(key)", "shmring._noop(key)")
            ratios("pure Python MD5 / lookup_id", ">= %.0fx" % TARGET_PURE_PYTHON_RATIO,
                   lambda v: v >= TARGET_PURE_PYTHON_RATIO, "pure Python, MD5 + bisect",
                   "ring.lookup_id(key)")
            ratios("pure Python crc32 / lookup_id", ">= %.0fx" % TARGET_PURE_PYTHON_RATIO,
                   lambda v: v >= TARGET_PURE_PYTHON_RATIO, "pure Python, crc32 + bisect",
                   "ring.lookup_id(key)")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
