#!/usr/bin/env python3
"""The `uhashring` algorithm against the real thing: Debian's python3-uhashring.

For each server set, a uhashring HashRing is made as its users make one (a list of
node names, a dict of weights, a dict of node configurations, or nodes added one by
one with add_node()), in its default ring (hash md5) or its ketama ring
(hash_fn="ketama"), with its default vnodes or others, and every key's node is read
with get_node(key). The library's answer comes from PEER_OWNERS on the node set of
the same nodes in the same order (the uhashring node name as the node's name, or as
its hash_key under another name; uhashring's vnodes as ours, times 4 in the ketama
ring; per-node vnodes of the default ring folded into the weight).

Each set tries KEYS keys: ASCII, UTF-8 (every length of character), the empty key,
long keys, integers and bytes (uhashring hashes str(key): 42 as "42", b"\\x01" as
"b'\\\\x01'", which is what the library is then given), and every point's own string
("NAME-i", whose hash is the point: uhashring takes the point after it) for the
smaller sets. The ketama sets include nodes whose points collide (names found by a
birthday search of MD5 words), where uhashring's dict keeps the last node written,
and down nodes, which uhashring's ring does not hold at all.

Usage: test_uhashring.py PEER_OWNERS [KEYS]
Exits 77 (skipped) when uhashring is missing, 1 if so when SHMRING_REQUIRE_PEERS=1.
"""
import random
import tempfile
import time

from peerlib import (Case, arguments, client_text_key, compare_sets, md5_colliding_names,
                     peer_missing, run)

DEFAULT_KEYS = 100_000
# The point strings tried as keys, at most, per set.
POINT_KEYS_MAX = 20_000


def node_name(index, i, kind):
    """A uhashring node name of one of the forms users give: addresses, host names,
    sockets, UTF-8."""
    kind %= 6
    if kind == 0:
        return "10.%d.%d.%d:%d" % (index, i // 256, i % 256, 11211 + i % 3)
    if kind == 1:
        return "[2001:db8::%x]:11211" % (index * 1000 + i + 1)
    if kind == 2:
        return "cache-%d-%d.example.com" % (index, i)
    if kind == 3:
        return "/run/memcached/%d-%d.sock" % (index, i)
    if kind == 4:
        return "caf\u00e9-%d-\u4e2d-%d" % (index, i)
    return "node%d" % i


def server_sets(rng):
    """Dicts: hash ("md5" or "ketama"), vnodes (uhashring's, None for its default),
    form, nodes [(name, weight, up, per-node vnodes or None)]."""
    sets = []
    counts = [1, 2, 3, 5, 8, 13, 20, 32, 50, 64, 100, 128, 200, 256, 333, 500]
    for index, count in enumerate(counts):
        ketama = index % 2 == 1
        weighted = index % 3 == 2
        nodes = [(node_name(index, i, i + index), rng.randrange(1, 6) if weighted else 1,
                  True, None) for i in range(count)]
        vnodes = [None, 40, 7, None, 100, 10][index % 6] if not ketama else \
            [None, 10, 50, None, 3][index % 5]
        form = ["list", "weights", "conf", "add_node"][(index // 2) % 4]
        if form == "list" and weighted:
            form = "weights"
        # add_node() rebuilds a ketama ring whole each time: quadratic.
        if form == "add_node" and ketama and count > 64:
            form = "conf"
        sets.append({"hash": "ketama" if ketama else "md5", "vnodes": vnodes,
                     "form": form, "nodes": nodes})
    # Collisions in the ketama ring: the last node written owns the shared point.
    pairs = md5_colliding_names("c", 6)
    sets.append({"hash": "ketama", "vnodes": None, "form": "list",
                 "nodes": [(name, 1, True, None) for pair in pairs for name in pair]})
    sets.append({"hash": "ketama", "vnodes": None, "form": "list",
                 "nodes": [(name, 1, True, None) for pair in pairs
                           for name in reversed(pair)]})
    # Down nodes: not in uhashring's ring at all; N and W count the up ones.
    nodes = [("down-%d" % i, 1 + i % 4, i % 5 != 2, None) for i in range(40)]
    sets.append({"hash": "ketama", "vnodes": None, "form": "weights", "nodes": nodes})
    sets.append({"hash": "md5", "vnodes": None, "form": "weights", "nodes": nodes})
    # Per-node vnodes of the default ring (points = vnodes x weight).
    nodes = [("pv-%d" % i, 1 + i % 3, True, [1, 40, 160, 250][i % 4]) for i in range(30)]
    sets.append({"hash": "md5", "vnodes": 1, "form": "conf", "nodes": nodes})
    # Heavy weights in the ketama ring, where the integer division truncates.
    nodes = [("w-%d" % i, [1, 7, 100, 999][i % 4], True, None) for i in range(17)]
    sets.append({"hash": "ketama", "vnodes": None, "form": "conf", "nodes": nodes})
    return sets


def make_ring(HashRing, spec):
    """The uhashring HashRing of SPEC, built as its FORM says."""
    kwargs = {}
    if spec["hash"] == "ketama":
        kwargs["hash_fn"] = "ketama"
    if spec["vnodes"] is not None:
        kwargs["vnodes"] = spec["vnodes"]
    up = [n for n in spec["nodes"] if n[2]]
    form = spec["form"]
    if form == "list":
        return HashRing([name for name, _, _, _ in up], **kwargs)
    if form == "weights":
        return HashRing({name: weight for name, weight, _, _ in up}, **kwargs)
    if form == "conf":
        confs = {}
        for name, weight, _, per_node in up:
            conf = {"weight": weight}
            if per_node is not None:
                conf["vnodes"] = per_node
            confs[name] = conf
        return HashRing(confs, **kwargs)
    ring = HashRing(**kwargs)
    for name, weight, _, _ in up:
        ring.add_node(name, {"weight": weight})
    return ring


def nodeset(spec, index):
    """The JSON node set of SPEC: uhashring's vnodes x 4 in the ketama ring (4 points
    a digest), its default 160 or 40 standing for our default 160; per-node vnodes
    folded into the weight over vnodes 1. Every fourth set names its nodes apart
    and gives uhashring's name as the hash_key."""
    vnodes = spec["vnodes"]
    document = {"algorithm": "uhashring", "hash": spec["hash"]}
    if vnodes is not None:
        document["vnodes"] = vnodes * 4 if spec["hash"] == "ketama" else vnodes
    nodes = []
    for i, (name, weight, up, per_node) in enumerate(spec["nodes"]):
        node = {"name": name, "address": "10.9.%d.%d:11211" % (i // 256, i % 256),
                "weight": weight * (per_node or 1), "state": "up" if up else "down"}
        if index % 4 == 3:
            node["name"] = "n%d" % i
            node["hash_key"] = name
        nodes.append(node)
    document["nodes"] = nodes
    return document


def random_keys(rng, count):
    """(what uhashring is given, the bytes the library looks up) pairs."""
    pairs = [("", b""), (0, b"0"), (-7, b"-7")]
    while len(pairs) < count:
        kind = rng.randrange(10)
        if kind == 9:
            raw = rng.randbytes(rng.randrange(0, 12))
            pairs.append((raw, str(raw).encode("utf-8")))
            continue
        text = client_text_key(rng, kind)
        pairs.append((text, text.encode("utf-8")))
    return pairs


def main():
    args = arguments(__doc__, 1, DEFAULT_KEYS)
    if args is None:
        return 2
    (owners_program,), keys_per_set = args
    try:
        from uhashring import HashRing
    except ImportError:
        return peer_missing("uhashring is not installed (Debian: python3-uhashring)")
    rng = random.Random(20261202)
    sets = server_sets(rng)
    started = time.monotonic()

    def one_set(index, spec):
        """uhashring's node names become the node set's names of the same nodes."""
        ring = make_ring(HashRing, spec)
        document = nodeset(spec, index)
        names = {}
        for node, (name, _, _, _) in zip(document["nodes"], spec["nodes"]):
            names[name] = node["name"]
        pairs = random_keys(rng, keys_per_set)
        # Every point's own string, in part for the large sets.
        points = [p for name, weight, up, per_node in spec["nodes"] if up
                  for p in ("%s-%d" % (name, i) for i in range(
                      min(40, (per_node or 160) * weight)))]
        rng.shuffle(points)
        pairs += [(p, p.encode("utf-8")) for p in points[:POINT_KEYS_MAX]]
        shared = len(ring.runtime._keys) - len(set(ring.runtime._keys))
        return Case("%-6s %-8s %3d nodes, vnodes %-4s %7d points (%d shared)" %
                    (spec["hash"], spec["form"], len(spec["nodes"]),
                     spec["vnodes"] or "def", len(ring.runtime._keys), shared),
                    document, [raw for _, raw in pairs],
                    [names[ring.get_node(key)] for key, _ in pairs],
                    shown=[key for key, _ in pairs])

    with tempfile.TemporaryDirectory(prefix="shmring-uhashring-") as directory:
        total_keys = compare_sets(owners_program, "uhashring", directory, sets, one_set)
    print("uhashring (Debian python3-uhashring): %d sets, %d keys, 0 mismatches (%.0f s)"
          % (len(sets), total_keys, time.monotonic() - started))
    return 0


if __name__ == "__main__":
    run(main)
