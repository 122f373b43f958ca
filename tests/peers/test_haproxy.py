#!/usr/bin/env python3
"""The `haproxy` algorithm against the real thing: Debian's haproxy (2.6) on loopback.
One haproxy runs one configuration with a backend per server set, each
`hash-type consistent` with one of HAProxy's hash functions, with or without
`avalanche`, over servers of various weights and ids (given and defaulted, some
`disabled`, some sharing their points). A frontend on a free loopback port sends
each request to the backend its X-Set header names; the backend picks a server by
its consistent hash of the X-Key header (`balance hdr(X-Key)`) or of the request URI
(`balance uri`, `balance uri whole`), and sends the request, carrying the chosen
server's name (`http-send-name-header`), to a second frontend of the same haproxy
on a Unix socket, which answers with that name. Every key is sent pipelined on
keep-alive connections; the name in each answer must be the node that `ringctl
lookup --stdin` names on the ring that `ringctl import haproxy` builds from the
very configuration haproxy runs.

Usage: test_haproxy.py RINGCTL PEER_KEYS [KEYS_PER_SET]
Exits 77 (skipped) when haproxy is missing, 1 if so when SHMRING_REQUIRE_PEERS=1 is
in the environment.
"""
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import zlib

from peerlib import (Failure, Library, PortTaken, Servers, find_program, forge_key,
                     peer_missing, start_on_free_port, wait_listening)

CONNECTIONS = 4
# Requests written at once on a connection before its answers are read: a batch that
# fits in haproxy's 16 kB buffer. Deeper pipelines stalled haproxy 2.6.12 here: one
# connection of four got 303 answers to 500 requests, then none.
PIPELINE = 50
MASK = 0xFFFFFFFF
# Ids this far apart give the same points (id x 4096 wraps at 2^32).
COLLIDING_IDS = 1 << 20


def full_hash(a):
    """HAProxy's full_hash() (include/haproxy/intops.h), to aim keys at points; the
    library's own computation is what the test checks."""
    a = (a + 0x7ed55d16 + (a << 12)) & MASK
    a = (a ^ 0xc761c23c ^ (a >> 19)) & MASK
    a = (a + 0x165667b1 + (a << 5)) & MASK
    a = ((a + 0xd3a2646c) ^ (a << 9)) & MASK
    a = (a + 0xfd7046c5 + (a << 3)) & MASK
    a = (a ^ 0xb55a4f09 ^ (a >> 16)) & MASK
    return (a * 3221225473) & MASK


def full_hash_inverse(b):
    """The value whose full_hash() is B: each step of full_hash() is invertible."""
    a = (b * pow(3221225473, -1, 1 << 32)) & MASK
    a ^= 0xb55a4f09
    a = (a ^ (a >> 16)) & MASK
    a = ((a - 0xfd7046c5) * pow(9, -1, 1 << 32)) & MASK
    # (x + 0xd3a2646c) ^ (x << 9): bit i of x decides bit i of the result, given the
    # bits below it.
    x = 0
    for i in range(32):
        for bit in (0, 1):
            y = x | bit << i
            if ((((y + 0xd3a2646c) ^ (y << 9)) ^ a) >> i) & 1 == 0:
                x = y
                break
    a = ((x - 0x165667b1) * pow(33, -1, 1 << 32)) & MASK
    a ^= 0xc761c23c
    a = (a ^ (a >> 19)) & MASK
    a = ((a - 0x7ed55d16) * pow(4097, -1, 1 << 32)) & MASK
    if full_hash(a) != b:
        raise Failure("full_hash_inverse(%08x) gave %08x" % (b, a))
    return a


class Member:
    def __init__(self, name, weight=None, server_id=None, disabled=False,
                 address=None):
        self.name = name
        self.weight = weight
        self.server_id = server_id
        self.disabled = disabled
        self.address = address


class ServerSet:
    def __init__(self, name, function, avalanche, balance, members):
        self.name = name
        # None: `hash-type consistent` alone (sdbm with avalanche).
        self.function = function
        self.avalanche = avalanche
        self.balance = balance
        self.members = members
        self.forge = function == "crc32"

    def hash_type(self):
        if self.function is None:
            return "hash-type consistent"
        return "hash-type consistent %s%s" % (self.function,
                                              " avalanche" if self.avalanche else "")


def server_sets(rng):
    """The server sets: every function with and without avalanche, the default, node
    counts from 1 to 500, weights from 1 to 256, ids given and defaulted, disabled
    servers, shared points, and the three key sources."""
    def plain(prefix, count, weights=None, ids=None):
        out = []
        for i in range(count):
            w = weights(i) if weights else None
            out.append(Member("%s%d" % (prefix, i), w, ids(i) if ids else None))
        return out

    sets = []
    functions = ["sdbm", "djb2", "wt6", "crc32"]
    counts = [1, 2, 5, 10, 50, 100, 200, 500]
    # Each function with and without avalanche, over the node counts.
    for i, (function, avalanche) in enumerate(
            (f, a) for f in functions for a in (False, True)):
        count = counts[i]
        weights = (lambda j: rng.choice([1, 1, 2, 3, 10])) if count <= 100 else None
        sets.append(ServerSet("f%d" % i, function, avalanche, "hdr(X-Key)",
                              plain("s", count, weights)))
    # `hash-type consistent` alone, three servers.
    sets.append(ServerSet("default", None, None, "hdr(X-Key)",
                          plain("s", 3, lambda j: [1, 2, 1][j])))
    # Weights over the whole range, up to 256.
    sets.append(ServerSet("weights", "sdbm", True, "hdr(X-Key)",
                          plain("w", 20, lambda j: [1, 256, 2, 128, 7][j % 5])))
    sets.append(ServerSet("heavy", "crc32", False, "hdr(X-Key)",
                          plain("h", 1, lambda j: 256)))
    sets.append(ServerSet("many", "wt6", True, "hdr(X-Key)",
                          plain("m", 300, lambda j: rng.randint(1, 4))))
    # Ids: all given (sparse, up to the largest), some given, none given with
    # disabled servers (which hold their ids).
    sets.append(ServerSet("ids", "djb2", True, "hdr(X-Key)",
                          plain("i", 6, ids=lambda j: [5, 17, 1000, 2147483647, 3,
                                                       65536][j])))
    mixed = plain("x", 8)
    for j, server_id in ((0, 3), (2, 1), (5, 12)):
        mixed[j].server_id = server_id
    sets.append(ServerSet("mixed-ids", "sdbm", False, "hdr(X-Key)", mixed))
    down = plain("d", 12, lambda j: 1 + j % 3)
    down[0].disabled = True
    down[0].address = "192.0.2.10:8080"
    down[5].disabled = True
    down[5].address = "localhost:80"
    down[9].disabled = True
    down[9].address = "unix@/nonexistent/socket"
    sets.append(ServerSet("disabled", "crc32", True, "hdr(X-Key)", down))
    # Shared points: ids 2^20 apart share all their points; with weights that differ,
    # some.
    sets.append(ServerSet("collide", "crc32", False, "hdr(X-Key)", [
        Member("c0", None, 1), Member("c1", 2, 7),
        Member("c2", None, 1 + COLLIDING_IDS), Member("c3", None, 1 + 2 * COLLIDING_IDS),
        Member("c4", 1, 7 + COLLIDING_IDS), Member("c5", 3, 9)]))
    sets.append(ServerSet("collide-aval", "crc32", True, "hdr(X-Key)", [
        Member("c0", 2, 4), Member("c1", None, 4 + COLLIDING_IDS), Member("c2", None, 11),
        Member("c3", 3, 11 + 3 * COLLIDING_IDS)]))
    # The URI, cut at '?' or whole.
    sets.append(ServerSet("uri", "sdbm", True, "uri", plain("u", 40)))
    sets.append(ServerSet("uri-whole", "djb2", False, "uri whole",
                          plain("u", 7, lambda j: j + 1)))
    sets.append(ServerSet("uri-crc", "crc32", False, "uri", plain("u", 25)))
    sets.append(ServerSet("wt6-plain", "wt6", False, "hdr(X-Key)",
                          plain("p", 64, lambda j: 1 + j % 5)))
    sets.append(ServerSet("sdbm-aval-500", None, None, "hdr(X-Key)", plain("b", 500)))
    return sets


def haproxy_cfg(tmp, port, sets):
    origin = os.path.join(tmp, "origin.sock")
    lines = [
        "global",
        "    maxconn 1000",
        "defaults",
        "    mode http",
        # A connection to the answering frontend for each request, closed after it:
        # idle ones kept for each of a thousand servers would fill maxconn.
        "    option http-server-close",
        "    timeout connect 10s",
        "    timeout client 120s",
        "    timeout server 120s",
        "frontend origin",
        "    bind unix@%s" % origin,
        '    http-request return status 200 content-type text/plain lf-string '
        '"%[req.hdr(X-Server)]"',
        "frontend entry",
        "    bind 127.0.0.1:%d" % port,
        "    use_backend %[req.hdr(X-Set)]",
    ]
    for s in sets:
        lines += ["backend %s" % s.name,
                  "    balance %s" % s.balance,
                  "    %s" % s.hash_type(),
                  "    http-send-name-header X-Server"]
        for m in s.members:
            words = ["    server", m.name, m.address or "unix@" + origin]
            if m.weight is not None:
                words += ["weight", str(m.weight)]
            if m.server_id is not None:
                words += ["id", str(m.server_id)]
            if m.disabled:
                words.append("disabled")
            lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


def member_ids(members):
    """HAProxy's ids (cfgparse.c), to aim keys at points."""
    taken = {m.server_id for m in members if m.server_id is not None}
    next_id, ids = 1, []
    for m in members:
        if m.server_id is None:
            while next_id in taken:
                next_id += 1
            ids.append(next_id)
        else:
            ids.append(m.server_id)
        next_id += 1
    return ids


def boundary_targets(members):
    """Hashes on and beside every point and every middle between neighbouring
    points (where the nearest point changes), and the ends of the hash space."""
    points = set()
    for m, server_id in zip(members, member_ids(members)):
        if not m.disabled:
            for j in range((m.weight or 1) * 16):
                points.add(full_hash((server_id * 4096 + j) & MASK))
    ordered = sorted(points)
    targets = {0, MASK}
    for i, p in enumerate(ordered):
        gap = (ordered[(i + 1) % len(ordered)] - p) & MASK or 1 << 32
        middle = (p + gap // 2) & MASK
        targets |= {(p - 1) & MASK, p, (p + 1) & MASK, middle, (middle + 1) & MASK}
    return sorted(targets)


def forged_keys(s, prefix, limit):
    """Keys whose hash is each boundary target (at most LIMIT, spread over them):
    CRC-32 forged (peerlib.forge_key), through full_hash()'s inverse with avalanche."""
    targets = boundary_targets(s.members)
    if len(targets) > limit:
        step = len(targets) / limit
        targets = [targets[int(i * step)] for i in range(limit)]
    keys = []
    # A URI balance hashes the path, slash included: the label starts with it.
    label = b"/" + prefix if s.balance.startswith("uri") else prefix
    for t in targets:
        crc = full_hash_inverse(t) if s.avalanche else t
        keys.append(forge_key(label, crc))
    return keys


def request_of(s, key):
    """The request that hands KEY to set S, and the key as haproxy hashes it."""
    if s.balance.startswith("uri"):
        path = key if key.startswith(b"/") else \
            b"/" + urllib.parse.quote_from_bytes(key, safe="-._~:@!*()").encode()
        if s.balance == "uri whole":
            target = path + b"?q=" + path[1:]
            hashed = target
        else:
            target = path + b"?ignored=1"
            hashed = path
        return (b"GET %s HTTP/1.1\r\nHost: t\r\nX-Set: %s\r\n\r\n" %
                (target, s.name.encode())), hashed
    return (b"GET / HTTP/1.1\r\nHost: t\r\nX-Set: %s\r\nX-Key: %s\r\n\r\n" %
            (s.name.encode(), key)), key


def parse_answers(buffer, start, out):
    """Appends the bodies of the complete responses in BUFFER from START to OUT;
    returns where the first incomplete one starts."""
    while True:
        end = buffer.find(b"\r\n\r\n", start)
        if end < 0:
            return start
        head = buffer[start:end]
        if not head.startswith(b"HTTP/1.1 200 "):
            raise Failure("haproxy answered %r" % bytes(buffer[start:start + 300]))
        at = head.find(b"content-length: ")
        length = int(head[at + 16:head.find(b"\r\n", at)])
        if end + 4 + length > len(buffer):
            return start
        out.append(bytes(buffer[end + 4:end + 4 + length]).decode())
        start = end + 4 + length


def ask_haproxy(port, requests):
    """The answers to REQUESTS, in order, over CONNECTIONS keep-alive connections."""
    slices = [requests[i::CONNECTIONS] for i in range(CONNECTIONS)]
    results = [None] * CONNECTIONS
    errors = []

    def run(n):
        try:
            answers = []
            with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
                mine = slices[n]
                for first in range(0, len(mine), PIPELINE):
                    batch = mine[first:first + PIPELINE]
                    sock.sendall(b"".join(batch))
                    want = len(answers) + len(batch)
                    buffer, start = bytearray(), 0
                    while len(answers) < want:
                        data = sock.recv(1 << 20)
                        if not data:
                            raise Failure("haproxy closed the connection after %d "
                                          "answers" % len(answers))
                        buffer += data
                        start = parse_answers(buffer, start, answers)
            results[n] = answers
        except (Failure, OSError) as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise Failure(str(errors[0]))
    answers = [None] * len(requests)
    for n in range(CONNECTIONS):
        answers[n::CONNECTIONS] = results[n]
    return answers


def check_documented_example(haproxy, library, tmp):
    """docs/haproxy.md's configuration: haproxy takes it, and its import is the node
    set the page describes."""
    page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                        "haproxy.md")
    with open(page) as f:
        text = f.read()
    example = text.split("```text\n", 1)[1].split("```", 1)[0]
    path = os.path.join(tmp, "documented.cfg")
    with open(path, "w") as f:
        f.write(example)
    r = subprocess.run([haproxy, "-c", "-f", path], capture_output=True, text=True)
    # 2: valid, but it would not start, having no listener.
    if r.returncode not in (0, 2) or "no error" not in r.stdout + r.stderr:
        raise Failure("haproxy -c refuses the example of %s: %s" % (page, r.stderr))
    nodes = json.loads(library.run("import", "haproxy", path, "--backend", "cache"))
    got = (nodes["algorithm"], nodes["hash"],
           [(n["name"], n["weight"], n["state"], n.get("hash_key"))
            for n in nodes["nodes"]])
    wanted = ("haproxy", "crc32_avalanche",
              [("a", 3, "up", None), ("b", 1, "up", "12"), ("c", 1, "down", None)])
    if got != wanted:
        raise Failure("the example of %s imports as %s, not %s" % (page, got, wanted))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ringctl, peer_keys = sys.argv[1:3]
    keys_per_set = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    haproxy = find_program("haproxy")
    if haproxy is None:
        return peer_missing("haproxy is not installed")
    started = time.monotonic()
    servers = Servers()
    try:
        library = Library(ringctl, peer_keys, servers.tmp)
        check_documented_example(haproxy, library, servers.tmp)
        rng = random.Random(31)
        sets = server_sets(rng)
        cfg = os.path.join(servers.tmp, "haproxy.cfg")
        ports = {}

        def start(port):
            with open(cfg, "w") as f:
                f.write(haproxy_cfg(servers.tmp, port, sets))
            process = servers.start([haproxy, "-db", "-f", cfg], "haproxy.out")
            try:
                wait_listening(("127.0.0.1", port), process, "haproxy")
            except PortTaken:
                servers.stop(process)
                raise
            ports["entry"] = port

        start_on_free_port(start, "haproxy")
        port = ports["entry"]
        total = forged_total = wraps = 0
        for index, s in enumerate(sets):
            nodeset_path = os.path.join(servers.tmp, "%s.json" % s.name)
            with open(nodeset_path, "wb") as f:
                f.write(library.run("import", "haproxy", cfg, "--backend", s.name))
            prefix = "h%d:" % index
            # Sets with forged keys need no search for keys on a point.
            keys, w, _exact = library.keys(nodeset_path, prefix, keys_per_set, index + 1,
                                           exact_tries=0 if s.forge else None)
            forged = forged_keys(s, prefix.encode(), keys_per_set // 4) if s.forge else []
            keys = forged + keys[:keys_per_set - len(forged)]
            requests, hashed = zip(*(request_of(s, k) for k in keys))
            expected = library.owners_of_file("hap-%d" % index, nodeset_path,
                                              list(hashed))
            asked = time.monotonic()
            answers = ask_haproxy(port, list(requests))
            asking = time.monotonic() - asked
            mismatches = [i for i, h in enumerate(hashed) if answers[i] != expected[h]]
            if mismatches:
                i = mismatches[0]
                raise Failure("set %s (%d servers, %s): %d of %d keys differ; first %r: "
                              "haproxy %s, ringctl %s" %
                              (s.name, len(s.members), s.hash_type(), len(mismatches),
                               len(keys), hashed[i], answers[i], expected[hashed[i]]))
            total += len(keys)
            forged_total += len(forged)
            wraps += w
            print("set %-14s %3d servers (%d disabled), %-40s %-14s %6d keys "
                  "(%d forged), 0 mismatches (%.1f s in haproxy)" %
                  (s.name, len(s.members), sum(m.disabled for m in s.members),
                   s.hash_type(), s.balance, len(keys), len(forged), asking), flush=True)
        print("haproxy: %d server sets, %d keys (%d past the last point, %d forged onto "
              "and beside points and middles), 0 mismatches, %.0f s" %
              (len(sets), total, wraps, forged_total, time.monotonic() - started))
        return 0
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        servers.stop_all()


if __name__ == "__main__":
    sys.exit(main())
