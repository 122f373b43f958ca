#!/usr/bin/env python3
"""The `groupcache` algorithm against the real thing: Debian's
golang-github-golang-groupcache-dev, built here by Debian's golang-go offline
(GOPATH mode over /usr/share/gocode, no module proxy). A Go program makes
consistenthash.New(replicas, nil), as groupcache's HTTPPool does, Adds the set's peer
strings and prints, for each key, the place in the list of the peer that Get(key)
returns; it must name the node that PEER_OWNERS gives.

The sets cover 1 to 500 peers, replicas from 1 to 1000 (HTTPPool's 50 among them), the
peer strings groupcache is given (HTTPPool's base URLs over IPv4, [IPv6] and host
names, host:port, UTF-8 and UNIX socket names), peers forged so that one of their
points equals another peer's (the last peer added owns it), and keys forged onto the
points, one below and above them, 0 and 0xffffffff (the wrap-around), besides random
text, UTF-8, binary and empty keys.

Usage: test_groupcache.py PEER_OWNERS [KEYS_PER_SET]
Exits 77 (skipped) when go or groupcache is missing, 1 if so when
SHMRING_REQUIRE_PEERS=1.
"""
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
import zlib

from peerlib import (Case, Failure, arguments, compare_sets, edge_targets, forge_key,
                     mixed_key, peer_missing, run)

DEFAULT_KEYS = 100_000
GOPATH = "/usr/share/gocode"
PACKAGE = "github.com/golang/groupcache/consistenthash"

GO = r"""
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/golang/groupcache/consistenthash"
)

func main() {
	replicas, err := strconv.Atoi(os.Args[1])
	if err != nil {
		panic(err)
	}
	data, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	var peers []string
	if err := json.Unmarshal(data, &peers); err != nil {
		panic(err)
	}
	index := map[string]int{}
	for i, p := range peers {
		index[p] = i
	}
	m := consistenthash.New(replicas, nil)
	m.Add(peers...)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		key, err := hex.DecodeString(in.Text())
		if err != nil {
			panic(err)
		}
		peer, ok := index[m.Get(string(key))]
		if !ok {
			panic(fmt.Sprintf("Get gave %q, no peer", m.Get(string(key))))
		}
		out.WriteString(strconv.Itoa(peer))
		out.WriteByte('\n')
	}
	out.Flush()
}
"""


def peer(form, set_index, i):
    """Peer I of set SET_INDEX as groupcache users name one, in FORM."""
    if form == 0:
        return "http://10.%d.%d.%d:8080" % (set_index, i // 256, i % 256)
    if form == 1:
        return "http://[2001:db8:%x::%x]:8080" % (set_index, i)
    if form == 2:
        return "https://cache-%d-%d.example.net" % (set_index, i)
    if form == 3:
        return "10.%d.%d.%d:%d" % (set_index, i // 256, i % 256, 9000 + i)
    if form == 4:
        return "http://cach\u00e9-%d-%d.example/_groupcache/" % (set_index, i)
    return "unix:/run/groupcache/%d-%d.sock" % (set_index, i)


def points(peers, replicas):
    return [zlib.crc32(("%d%s" % (i, p)).encode()) for p in peers for i in range(replicas)]


def main():
    args = arguments(__doc__, 1, DEFAULT_KEYS)
    if args is None:
        return 2
    (owners_program,), keys_per_set = args
    go = shutil.which("go")
    if go is None:
        return peer_missing("go is not installed (Debian: golang-go)")
    if not os.path.isdir(os.path.join(GOPATH, "src", PACKAGE)):
        return peer_missing("groupcache is not installed "
                            "(Debian: golang-github-golang-groupcache-dev)")
    rng = random.Random(20261202)
    sets = [(1, 50), (2, 1), (3, 50), (4, 160), (5, 3), (7, 50), (8, 1000), (10, 50),
            (16, 7), (31, 50), (50, 160), (64, 50), (100, 1), (127, 50), (128, 100),
            (200, 50), (255, 20), (256, 50), (300, 160), (400, 50), (499, 10), (500, 50),
            (500, 1000)]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="shmring-groupcache-") as directory:
        source = os.path.join(directory, "peer.go")
        with open(source, "w") as f:
            f.write(GO)
        program = os.path.join(directory, "peer")
        # Offline, in GOPATH mode: the package is Debian's, and no proxy is asked.
        environment = dict(os.environ, GO111MODULE="off", GOPATH=GOPATH, GOPROXY="off",
                           GOFLAGS="", GOCACHE=os.path.join(directory, "cache"),
                           HOME=directory)
        subprocess.run([go, "build", "-o", program, source], env=environment,
                       check=True, cwd=directory)

        def one_set(index, spec):
            """Peer i of the Go program's list is node "gI" of the node set."""
            count, replicas = spec
            peers = [peer((i + index) % 6, index, i) for i in range(count)]
            # Every fifth peer (from the second) is forged so that one of its points,
            # replica 0, equals a random point of an earlier or later peer.
            for i in range(1, count, 5):
                other = rng.randrange(count)
                if other == i:
                    continue
                target = zlib.crc32(("%d%s" % (rng.randrange(replicas),
                                               peers[other])).encode())
                forged = forge_key(b"0forged-%d-%d" % (index, i), target)[1:].decode()
                if forged not in peers:
                    peers[i] = forged
            values = points(peers, replicas)
            targets, shared = edge_targets(values)
            keys = [mixed_key(rng) for _ in range(keys_per_set)]
            keys += [forge_key(b"edge%d" % i, t) for i, t in enumerate(targets)]
            peers_path = os.path.join(directory, "set%d.peers.json" % index)
            with open(peers_path, "w") as f:
                json.dump(peers, f)
            theirs = subprocess.run([program, str(replicas), peers_path],
                                    input="".join(k.hex() + "\n" for k in keys),
                                    capture_output=True, text=True, check=False)
            if theirs.returncode != 0:
                raise Failure("set %d: the Go program failed: %s" %
                              (index, theirs.stderr[-2000:]))
            return Case("%3d peers x %4d replicas, %d shared points" %
                        (count, replicas, len(shared)),
                        {"algorithm": "groupcache", "vnodes": replicas,
                         "nodes": [{"name": "g%d" % i, "address": p}
                                   for i, p in enumerate(peers)]},
                        keys, ["g" + line for line in theirs.stdout.split("\n")[:-1]])

        total = compare_sets(owners_program, "groupcache", directory, sets, one_set)
    print("groupcache (%s): %d sets, %d keys, 0 mismatches (%.0f s)" %
          (PACKAGE, len(sets), total, time.monotonic() - started))
    return 0


if __name__ == "__main__":
    run(main)
