#!/usr/bin/env python3
"""Draws the performance page's pictures from one `ringbench --json` run.

SVG files into OUTDIR, every value read from the JSON (nothing here measures), each
drawn when the run measured it (`ringbench --only ...` runs measure fewer):

  lookup.svg      ns per id lookup against the number of nodes, for each algorithm:
                  hot keys (solid) and the stream of distinct keys (dashed)
  balance.svg     the largest node's share of the keyspace over the mean share,
                  against the number of nodes, for each algorithm ringbench balances
  disruption.svg  the share of keys that move when a node joins and when one leaves,
                  next to the ideal (1/n)
  vnodes.svg      the largest share over the mean share against the points (or
                  table slots) per node, at 100 nodes: a line for each algorithm
                  whose point count a parameter sets, a marker for each fixed one
  bounded-loads.svg the busiest node's in-flight requests over the mean, every 2 ms,
                  for plain consistent hashing, a bound per process and the bound
                  shared through the load board (Zipf s = 0.99, c = 1.25)

Usage: perf_plots.py RUN.json OUTDIR
Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

ALGORITHMS = ["ring", "maglev", "ketama", "twemproxy", "nginx", "libketama",
              "envoy-maglev", "envoy-ring"]


def field(algorithm):
    return algorithm.replace("-", "_") + "_reader_id"


def lookup_plot(run, path):
    hot = {row["nodes"]: row["hot"] for row in run["lookup_ns"]}
    stream = {row["nodes"]: row["ns"] for row in run["lookup_stream"]["lookup_ns"]}
    fig, ax = plt.subplots(figsize=(8, 5))
    for n, algorithm in enumerate(ALGORITHMS):
        color = "C%d" % n
        for rows, style, label in ((hot, "-", "hot"), (stream, "--", "stream")):
            points = sorted((nodes, values[field(algorithm)]) for nodes, values in
                            rows.items() if values.get(field(algorithm)) is not None)
            if points:
                ax.plot(*zip(*points), style, color=color, marker="o",
                        label="%s, %s" % (algorithm, label))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("ns per id lookup")
    ax.set_title("Lookup cost: hot keys and a stream of distinct keys")
    ax.legend(fontsize="x-small", ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def balance_plot(run, path):
    fig, ax = plt.subplots(figsize=(8, 5))
    for algorithm in ALGORITHMS:
        points = sorted((row["nodes"], row["max_over_mean"]) for row in run["balance"]
                        if row["algorithm"] == algorithm)
        if points:
            ax.plot(*zip(*points), marker="o", label=algorithm)
    ax.set_xscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("largest share / mean share")
    ax.set_title("Balance across nodes")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def disruption_plot(run, path):
    rows = [row for row in run["disruption"]]
    fig, ax = plt.subplots(figsize=(8, 5))
    width = 0.2
    for n, row in enumerate(rows):
        ax.bar(n - 1.5 * width, 100 * row["add_moved"], width, color="C0",
               label="a node joins" if n == 0 else None)
        ax.bar(n - 0.5 * width, 100 * row["add_ideal"], width, color="C0", alpha=0.4,
               label="ideal on join" if n == 0 else None)
        ax.bar(n + 0.5 * width, 100 * row["remove_moved"], width, color="C1",
               label="a node leaves" if n == 0 else None)
        ax.bar(n + 1.5 * width, 100 * row["remove_ideal"], width, color="C1", alpha=0.4,
               label="ideal on leave" if n == 0 else None)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(["%s@%d" % (row["algorithm"], row["nodes"]) for row in rows])
    ax.set_ylabel("keys moved, %")
    ax.set_title("Keys that move when one node joins or leaves")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def vnodes_plot(run, path):
    rows = run["balance_vnodes"]
    fig, ax = plt.subplots(figsize=(8, 5))
    names = sorted(set(row["algorithm"] for row in rows),
                   key=lambda name: [row["algorithm"] for row in rows].index(name))
    for algorithm in names:
        points = sorted((row["points_per_node"], row["max_over_mean"]) for row in rows
                        if row["algorithm"] == algorithm)
        if len(points) > 1:
            # Envoy's maglev fills its table as maglev does, so its line lies on
            # maglev's: dashed, it stays visible.
            style = "--" if algorithm.startswith("envoy-") else "-"
            ax.plot(*zip(*points), style, marker="o", label=algorithm)
        else:
            ax.plot(*zip(*points), marker="D", linestyle="none", markersize=8,
                    label="%s (fixed)" % algorithm)
    ax.set_xscale("log")
    ax.set_xlabel("points (or maglev table slots) per node")
    ax.set_ylabel("largest share / mean share")
    ax.set_title("Balance against points per node, %d nodes" % rows[0]["nodes"])
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def bounded_plot(run, path):
    series = run["bounded_series"]
    step = series["sample_ms"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for key, label in (("plain", "plain consistent hashing"),
                       ("per_process", "bound per process"),
                       ("shared", "bound shared by all workers (board)")):
        values = series[key]
        ax.plot([i * step for i in range(len(values))], values, label=label, linewidth=0.8)
    ax.axhline(1.25, color="black", linestyle=":", label="c = 1.25")
    ax.set_xlabel("ms")
    ax.set_ylabel("busiest node's in-flight / mean")
    ax.set_title("8 workers, 20 nodes, Zipf s = 0.99 over 1,000,000 keys")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# Each picture, the member of the run it is drawn from, and how.
PLOTS = [("lookup.svg", "lookup_ns", lookup_plot),
         ("balance.svg", "balance", balance_plot),
         ("disruption.svg", "disruption", disruption_plot),
         ("vnodes.svg", "balance_vnodes", vnodes_plot),
         ("bounded-loads.svg", "bounded_series", bounded_plot)]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: perf_plots.py RUN.json OUTDIR")
    run = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    drawn = 0
    for name, member, plot in PLOTS:
        if run.get(member):
            plot(run, os.path.join(out, name))
            print(os.path.join(out, name))
            drawn += 1
    if drawn == 0:
        sys.exit("perf_plots.py: %s holds none of the figures it draws" % sys.argv[1])


if __name__ == "__main__":
    main()
