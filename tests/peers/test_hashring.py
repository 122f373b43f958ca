#!/usr/bin/env python3
"""The `hashring` algorithm against the real thing: npm's memcached client 2.2.2 and
its hashring 3.2.0, installed by npm from tests/peers/npm/package-lock.json into
NPM_DIR (under the build tree) on the first run.

Most server sets go through the memcached client as its users write it: new
Memcached(servers, options), an array of "host:port" strings or an object of
weights, with its default compatibility 'ketama' (4 points a digest, the host alone
hashed for port 11211) and each algorithm option (md5, sha1, sha256, sha512); the
key's server is what the client's HashRing answers, as each command asks it. The
other sets make a HashRing directly (no default port: the library's node then
carries its address as hash_key), with its 'vnode count', and Buffer keys. The
library's answer comes from PEER_OWNERS on the node set of the same servers in the
same order, each server's string as its address.

Each set tries KEYS keys: ASCII, UTF-8 of every character length, the empty key,
long keys, and the strings of points ("S-i", whose hash is a point's), and for the
direct sets bytes that are not UTF-8 (hashring hashes key + '', the replacement
characters' UTF-8, which is what the library is then given). Sets include servers
given twice and servers whose points collide (names found by a birthday search of
MD5 words), where the first server keeps the point, and down nodes, which the
client's ring does not hold.

Usage: test_hashring.py PEER_OWNERS NPM_DIR [KEYS]
Exits 77 (skipped) when node or npm is missing, 1 if so when SHMRING_REQUIRE_PEERS=1.
"""
import json
import os
import random
import shutil
import subprocess
import tempfile
import time

from peerlib import (Case, Failure, arguments, client_text_key, compare_sets,
                     md5_colliding_names, peer_missing, run)

DEFAULT_KEYS = 100_000
POINT_KEYS_MAX = 20_000
HERE = os.path.dirname(os.path.abspath(__file__))


def install_packages(npm_dir):
    """npm ci of the committed lock file into NPM_DIR, unless it is there already
    from the same lock file."""
    lock = os.path.join(HERE, "npm", "package-lock.json")
    with open(lock, "rb") as f:
        wanted = f.read()
    installed = os.path.join(npm_dir, "node_modules", ".package-lock.json")
    current = os.path.join(npm_dir, "package-lock.json")
    if os.path.exists(installed) and os.path.exists(current):
        with open(current, "rb") as f:
            if f.read() == wanted:
                return
    os.makedirs(npm_dir, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(os.path.join(HERE, "npm", name), os.path.join(npm_dir, name))
    result = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                            cwd=npm_dir, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise Failure("npm ci in %s failed: %s" % (npm_dir, result.stderr.strip()))


def server_string(index, i, kind):
    """A server as memcached users write one: IPv4 and IPv6 addresses with ports
    (11211, whose host alone is hashed, and others), host names, a bare host, a
    socket path, a port with a leading zero, UTF-8."""
    kind %= 9
    if kind == 0:
        return "10.%d.%d.%d:11211" % (index, i // 256, i % 256)
    if kind == 1:
        return "10.%d.%d.%d:%d" % (index, i // 256, i % 256, 11212 + i % 7)
    if kind == 2:
        return "[2001:db8::%x]:11211" % (index * 1000 + i + 1)
    if kind == 3:
        return "cache-%d-%d.example.com:11211" % (index, i)
    if kind == 4:
        return "mc-%d-%d" % (index, i)
    if kind == 5:
        return "/run/memcached/%d-%d.sock" % (index, i)
    if kind == 6:
        return "h%d-%d:011211" % (index, i)
    if kind == 7:
        return "caf\u00e9-%d-%d:11211" % (index, i)
    return "[::ffff:10.0.%d.%d]:%d" % (index, i % 256, 11211 + i % 2)


def server_sets(rng):
    """Dicts: via, algorithm, vnode_count (None: the default 40), servers
    [(string, weight, up)], weighted (the object form)."""
    sets = []
    counts = [1, 2, 3, 5, 8, 13, 20, 32, 50, 64, 100, 128, 200, 256, 333, 500]
    algorithms = ["md5", "sha1", "md5", "sha256", "md5", "sha512"]
    for index, count in enumerate(counts):
        weighted = index % 3 == 1
        servers = [(server_string(index, i, i + index),
                    rng.randrange(1, 9) if weighted else 1, True) for i in range(count)]
        sets.append({"via": "client", "algorithm": algorithms[index % 6],
                     "vnode_count": None, "servers": servers, "weighted": weighted})
    # HashRing used directly: no default port, other vnode counts, Buffer keys.
    for index, (count, vnode_count, algorithm) in enumerate(
            [(7, 10, "md5"), (60, None, "sha1"), (150, 3, "md5"), (25, 100, "sha256")]):
        servers = [(server_string(40 + index, i, i), 1 + i % 3, True)
                   for i in range(count)]
        sets.append({"via": "hashring", "algorithm": algorithm, "vnode_count": vnode_count,
                     "servers": servers, "weighted": True})
    # Equal points: a server given twice, and servers whose points collide; the
    # first in server order keeps the point.
    pairs = md5_colliding_names("k", 6)
    servers = [(s, 1, True) for pair in pairs for s in pair]
    servers += [("10.1.1.1:11211", 1, True), ("10.1.1.1:11211", 1, True)]
    sets.append({"via": "client", "algorithm": "md5", "vnode_count": None,
                 "servers": servers, "weighted": False})
    servers = [(s, 1, True) for pair in pairs for s in reversed(pair)]
    sets.append({"via": "client", "algorithm": "md5", "vnode_count": None,
                 "servers": servers, "weighted": False})
    # Down nodes: not in the client's ring at all.
    servers = [("10.2.0.%d:%d" % (i, 11211 + i % 2), 1 + i % 4, i % 5 != 2)
               for i in range(40)]
    sets.append({"via": "client", "algorithm": "md5", "vnode_count": None,
                 "servers": servers, "weighted": True})
    return sets


def spec_of(spec):
    """The hashring_owners.js spec of SPEC (its up servers)."""
    up = [(s, w) for s, w, is_up in spec["servers"] if is_up]
    if spec["weighted"]:
        servers = {s: w for s, w in up}
    else:
        servers = [s for s, _ in up]
    if spec["via"] == "client":
        return {"via": "client", "servers": servers,
                "options": {"algorithm": spec["algorithm"]}}
    options = {}
    if spec["vnode_count"] is not None:
        options["vnode count"] = spec["vnode_count"]
    return {"via": "hashring", "servers": servers, "algorithm": spec["algorithm"],
            "options": options}


def nodeset(spec):
    """The JSON node set of SPEC: each server's string as its address (and as its
    hash_key for a HashRing without default port), vnodes 4 x hashring's."""
    document = {"algorithm": "hashring", "hash": spec["algorithm"]}
    if spec["vnode_count"] is not None:
        document["vnodes"] = 4 * spec["vnode_count"]
    nodes = []
    for i, (server, weight, up) in enumerate(spec["servers"]):
        node = {"name": "s%d" % i, "address": server, "weight": weight,
                "state": "up" if up else "down"}
        if spec["via"] == "hashring":
            node["hash_key"] = server
        nodes.append(node)
    document["nodes"] = nodes
    return document


def random_keys(rng, count, buffers):
    """Lines for hashring_owners.js: keys whose UTF-8 is given in hexadecimal, and,
    with BUFFERS, "b" and the hexadecimal of bytes given as a Buffer."""
    lines = ["", "30"]
    while len(lines) < count:
        kind = rng.randrange(10)
        if kind <= 8:
            text = client_text_key(rng, kind)
        elif buffers:
            lines.append("b" + rng.randbytes(rng.randrange(1, 12)).hex())
            continue
        else:
            text = "%d" % rng.randrange(10**6)
        lines.append(text.encode("utf-8").hex())
    return lines


def point_strings(spec):
    """The strings of the up servers' first points, "S-i", S the string hashed."""
    strings = []
    for server, _, up in spec["servers"]:
        if not up:
            continue
        hashed = server
        if spec["via"] == "client":
            host, _, rest = server.partition(":")
            port = rest.split(":")[0]
            if port.isdigit() and int(port) == 11211:
                hashed = host
        strings += ["%s-%d" % (hashed, i) for i in range(10)]
    return strings


def main():
    args = arguments(__doc__, 2, DEFAULT_KEYS)
    if args is None:
        return 2
    (owners_program, npm_dir), keys_per_set = args
    if shutil.which("node") is None or shutil.which("npm") is None:
        return peer_missing("node or npm is not installed (nodesource's nodejs)")
    install_packages(npm_dir)
    script = os.path.join(HERE, "hashring_owners.js")
    environment = dict(os.environ, NODE_PATH=os.path.join(npm_dir, "node_modules"))
    versions = subprocess.run(
        ["node", "-p", "require('memcached/package.json').version + ' ' + "
         "require('hashring/package.json').version + ' ' + process.version"],
        env=environment, capture_output=True, text=True, check=True).stdout.split()
    rng = random.Random(20261202)
    sets = server_sets(rng)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="shmring-hashring-") as directory:

        def one_set(index, spec):
            """hashring answers with the server's string, the node's address."""
            spec_path = os.path.join(directory, "spec%d.json" % index)
            with open(spec_path, "w") as f:
                json.dump(spec_of(spec), f)
            document = nodeset(spec)
            lines = random_keys(rng, keys_per_set, spec["via"] == "hashring")
            points = point_strings(spec)
            rng.shuffle(points)
            lines += [p.encode("utf-8").hex() for p in points[:POINT_KEYS_MAX]]
            peer = subprocess.run(["node", script, spec_path], env=environment,
                                  input="".join(line + "\n" for line in lines),
                                  capture_output=True, text=True, check=False)
            if peer.returncode != 0:
                raise Failure("set %d: hashring_owners.js failed: %s" %
                              (index, peer.stderr))
            # A string key's UTF-8 is what its line gives; a Buffer's, what node says.
            answers = [answer.split("\t") if "\t" in answer else [answer, line]
                       for answer, line in zip(peer.stdout.split("\n")[:-1], lines)]
            return Case("%-8s %-6s %3d servers (%d up)" %
                        (spec["via"], spec["algorithm"], len(spec["servers"]),
                         sum(1 for s in spec["servers"] if s[2])),
                        document, [bytes.fromhex(hashed) for _, hashed in answers],
                        [server for server, _ in answers], shown=lines,
                        names={n["name"]: n["address"] for n in document["nodes"]})

        total_keys = compare_sets(owners_program, "hashring", directory, sets, one_set)
    print("memcached %s, hashring %s on node %s: %d sets, %d keys, 0 mismatches (%.0f s)"
          % (versions[0], versions[1], versions[2], len(sets), total_keys,
             time.monotonic() - started))
    return 0


if __name__ == "__main__":
    run(main)
