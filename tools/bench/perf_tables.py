#!/usr/bin/env python3
"""Formats one `ringbench --json` run as the tables of the manual's performance page
(docs/performance.md).

ringbench prints every contender at every node count (over 70 rows a table); the
page shows the calls a worker makes, hot keys next to the streamed ones, cold keys
next to the one-miss floor, and the publish, switch and memory figures, all from the
same run. Nothing here measures: every number is read from the JSON.

Usage: perf_tables.py RUN.json     (from: build-bench/tools/ringbench --json > RUN.json)
"""

import json
import sys

ALGORITHMS = ["ring", "maglev", "ketama", "twemproxy", "nginx", "libketama",
              "envoy-maglev", "envoy-ring"]
# The key hash each algorithm computes: the floor its lookups are compared with.
KEY_HASH = {"ring": "xxh3", "maglev": "xxh3", "ketama": "md5", "twemproxy": "fnv1a_64",
            "nginx": "crc32", "libketama": "md5", "envoy-maglev": "xxh64",
            "envoy-ring": "xxh64"}
# The calls a worker makes, as the JSON names them, and as the tables do.
CALLS = [("reader_id", "id"), ("reader_batch", "batch, 16 keys"),
         ("serialized_id", "id, serialized"), ("in_process_id", "id, in-process")]


def key(algorithm, call):
    return algorithm.replace("-", "_") + "_" + call


def cell(value, width=9):
    return ("%.1f" % value if value is not None else "-").rjust(width)


def by_nodes(rows, field):
    return {row["nodes"]: row[field] for row in rows}


def lookup_table(run):
    """Hot keys and the stream side by side, at the node counts the stream has."""
    hot = by_nodes(run["lookup_ns"], "hot")
    stream = by_nodes(run["lookup_stream"]["lookup_ns"], "ns")
    counts = [n for n in sorted(stream) if n in hot]
    head = "%-36s" % "ns per lookup" + "".join(
        "%9s%9s" % ("hot", "stream") for _ in counts)
    print("%-36s" % "nodes" + "".join("%18s" % format(n, ",") for n in counts))
    print(head)
    for algorithm in ALGORITHMS:
        floor = KEY_HASH[algorithm] + "_floor"
        for call, label in CALLS:
            name = "%s %s" % (algorithm, label)
            line = "%-36s" % name
            for n in counts:
                line += cell(hot[n].get(key(algorithm, call)))
                line += cell(stream[n].get(key(algorithm, call)))
            print(line)
        line = "%-36s" % ("  %s floor (the key hash alone)" % KEY_HASH[algorithm])
        for n in counts:
            line += cell(hot[n].get(floor)) + cell(stream[n].get(floor))
        print(line)
    for name, field in (("textbook ring (binary search)", "textbook_ring"),
                        ("libmemcached ketama", "libmemcached_ketama")):
        line = "%-36s" % name
        for n in counts:
            line += cell(hot[n].get(field)) + cell(None)
        print(line)


def cold_table(run):
    """Cold keys on the largest rings, against one dependent random read."""
    cold = by_nodes(run["lookup_ns"], "cold")
    counts = [n for n in sorted(cold) if n >= 10000]
    print("%-30s" % "nodes" + "".join("%19s" % format(n, ",") for n in counts))
    print("%-30s" % "ns per lookup" + "".join("%10s%9s" % ("ns", "x floor")
                                              for _ in counts))
    line = "%-30s" % "one-miss floor"
    for n in counts:
        line += cell(cold[n]["one_miss_floor"], 10) + "%9s" % "1.00x"
    print(line)
    for algorithm in ALGORITHMS:
        for call, label in CALLS[:2]:
            line = "%-30s" % ("%s %s" % (algorithm, label))
            for n in counts:
                value = cold[n].get(key(algorithm, call))
                line += cell(value, 10)
                line += "%8.2fx" % (value / cold[n]["one_miss_floor"])
            print(line)


def publish_tables(run):
    switch = {(r["algorithm"], r["nodes"]): r for r in run["switch"]}
    publish = {(r["algorithm"], r["nodes"]): r for r in run["publish"]}
    print("%-14s%8s%14s%12s%12s%11s%9s" % ("algorithm", "nodes", "snapshot MiB",
                                          "publish s", "switch ms", "read ms", "ratio"))
    for algorithm in ALGORITHMS:
        for nodes in sorted({n for a, n in switch if a == algorithm}):
            s = switch[(algorithm, nodes)]
            p = publish.get((algorithm, nodes))
            print("%-14s%8s%14.1f%12s%12.2f%11.2f%8.2fx" % (
                algorithm, format(nodes, ","), s["snapshot_bytes"] / 1048576.0,
                "%.3f" % p["seconds"] if p else "-", s["switch_seconds"] * 1e3,
                s["read_seconds"] * 1e3, s["switch_seconds"] / s["read_seconds"]))
    print()
    print("%-24s%14s%14s%12s%10s" % ("ringctl load (ring)", "peak RSS MiB",
                                     "snapshot MiB", "x snapshot", "seconds"))
    for r in run["ringctl_load"]:
        print("%-24s%14.1f%14.1f%11.2fx%10.3f" % (
            format(r["nodes"], ",") + " nodes", r["max_rss_bytes"] / 1048576.0,
            r["snapshot_bytes"] / 1048576.0, r["max_rss_bytes"] / r["snapshot_bytes"],
            r["seconds"]))


def other_tables(run):
    """Worker scaling, balance, disruption and sync, as ringbench's tables 2, 5-7."""
    one = run["processes"][0]["lookups_per_second"]
    for p in run["processes"]:
        print("%d worker(s) on ring@100: %.1f M lookups/s, %.2fx one worker's" % (
            p["workers"], p["lookups_per_second"] / 1e6, p["lookups_per_second"] / one))
    balance = {}
    for b in run["balance"]:
        balance.setdefault(b["algorithm"], {})[b["nodes"]] = b["max_over_mean"]
    counts = sorted({n for row in balance.values() for n in row})
    print("\n%-22s" % "largest / mean share" + "".join(
        "%10s" % format(n, ",") for n in counts))
    for algorithm, row in balance.items():
        print("%-22s" % algorithm + "".join("%10.3f" % row[n] for n in counts))
    print("\n%-12s%24s%24s" % ("moved keys", "node-100 joins 100", "node-0 leaves"))
    for d in run["disruption"]:
        print("%-12s%15.3f%% (%.2fx)%15.3f%% (%.2fx)" % (
            d["algorithm"], d["add_moved"] * 100, d["add_moved"] / d["add_ideal"],
            d["remove_moved"] * 100, d["remove_moved"] / d["remove_ideal"]))
    sync = run.get("sync")
    if sync:
        each = sync["put_to_publish_each_ring_seconds"]
        every = sync["put_to_publish_all_rings_seconds"]
        rereads = sorted(sync["reread_seconds"])
        print("\nringctl sync, %d-node set, %d puts: put to publish p50 / p99 %.1f / %.1f ms"
              "\neach ring, %.1f / %.1f ms all three; full re-read of %s keys %.0f ms"
              " (best of %d)" % (
                  sync["nodes"], sync["puts"], each["p50"] * 1e3, each["p99"] * 1e3,
                  every["p50"] * 1e3, every["p99"] * 1e3,
                  format(sync["reread_nodes"], ","), rereads[0] * 1e3, len(rereads)))


def targets(run):
    for t in run["targets"]:
        value = "not measured" if t["value"] is None else "%.3f (%s %.2f)" % (
            t["value"], "<=" if t["at_most"] else ">=", t["limit"])
        print("  %-4s  %s: %s" % (t["result"], t["name"], value))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    with open(sys.argv[1]) as f:
        run = json.load(f)
    load = run["load_average"]
    print("shmring %s, %d CPUs, load average %.2f at the start, %.2f at the end" % (
        run["shmring_version"], run["cpus"], load["start"], load["end"]))
    for title, table in (("Lookups: hot keys and the stream", lookup_table),
                         ("Cold keys", cold_table),
                         ("Publish, switch and ringctl", publish_tables),
                         ("Workers, balance, disruption, sync", other_tables),
                         ("Targets", targets)):
        print("\n" + title)
        table(run)


if __name__ == "__main__":
    main()
