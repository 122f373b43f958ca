#!/usr/bin/env python3
"""The `twemproxy` algorithm against the real thing: Debian's nutcracker fronting
Debian's memcached instances on loopback. For each server set, every key is set
through nutcracker; then each memcached lists the keys it holds
(`lru_crawler metadump all`), and each key's holder must be the node
`ringctl lookup` names on the ring `ringctl import twemproxy` makes of the
configuration file nutcracker runs.

Usage: test_twemproxy.py RINGCTL PEER_KEYS [KEYS_PER_SET]
Exits 77 (skipped) when nutcracker or memcached is missing.
"""
import hashlib
import os
import random
import shutil
import socket
import sys
import time
import urllib.parse

from peerlib import Failure, Library, Servers, free_port, wait_listening

HASHES = ["fnv1a_64", "md5", "crc16", "crc32", "crc32a", "fnv1_32", "fnv1_64",
          "fnv1a_32", "hsieh", "jenkins", "murmur", "one_at_a_time"]

# No exchange with a server may wait longer than this (seconds): a stuck peer is a
# failure that says so, not a test killed by ctest's timeout.
IO_TIMEOUT = 60
# How long a memcached may keep answering BUSY to a dump (see held_keys()).
DUMP_WAIT_SECONDS = 120

# Two server names whose point strings "NAME-0".."NAME-39" share an MD5 word: the
# same point on the continuum, which nutcracker gives to the server listed first.
COLLIDING_NAMES = None  # found at start-up by colliding_names()


def md5_words(label):
    d = hashlib.md5(label.encode()).digest()
    return [int.from_bytes(d[i:i + 4], "little") for i in (0, 4, 8, 12)]


def colliding_names():
    """Two names whose 160 points (40 digests, what a server of average weight gets)
    share a value: searched once, deterministic."""
    seen = {}
    for i in range(100000):
        name = "tw%d" % i
        for k in range(40):
            for w in md5_words("%s-%d" % (name, k)):
                other = seen.get(w)
                if other is not None and other != name:
                    return other, name, w
                seen[w] = name
    raise Failure("no colliding names found")


def server_sets(rng, ports):
    """The server sets: (hash, [(port, weight, name or None)]). Every hash at least
    twice; 1 to 40 servers; equal and mixed weights; named, unnamed and mixed."""
    sizes = [1, 2, 3, 4, 5, 7, 8, 10, 12, 16, 20, 25, 30, 40]
    sets = []
    for i in range(2 * len(HASHES)):
        hash_name = HASHES[i % len(HASHES)]
        size = sizes[i % len(sizes)]
        naming = ["unnamed", "named", "mixed"][i % 3]
        weighted = i % 2 == 1
        servers = []
        for s in range(size):
            weight = rng.randint(1, 5) if weighted else 1
            named = naming == "named" or (naming == "mixed" and s % 2 == 0)
            servers.append((ports[s], weight, "cache-%d-%d" % (i, s) if named else None))
        sets.append((hash_name, servers))
    # Equal points on purpose: the colliding names, in both orders, with others.
    a, b, _ = COLLIDING_NAMES
    for i, order in enumerate([(a, b), (b, a)]):
        servers = [(ports[0], 1, order[0]), (ports[1], 1, order[1])]
        servers += [(ports[2 + s], 1, "cache-eq%d-%d" % (i, s)) for s in range(3)]
        sets.append((HASHES[i], servers))
    return sets


def nutcracker_yaml(listen_port, hash_name, servers):
    lines = ["pool:", "  listen: 127.0.0.1:%d" % listen_port, "  hash: %s" % hash_name,
             "  distribution: ketama", "  auto_eject_hosts: false",
             "  timeout: 30000", "  servers:"]
    for port, weight, name in servers:
        lines.append("   - 127.0.0.1:%d:%d%s" % (port, weight, " " + name if name else ""))
    return "\n".join(lines) + "\n"


def recv_some(sock):
    chunk = sock.recv(1 << 20)
    if not chunk:
        raise Failure("the server closed the connection")
    return chunk


def recv_until(sock, buffer, terminator):
    while terminator not in buffer:
        buffer += recv_some(sock)
    return buffer


def set_all(port, keys):
    """Sets every key through nutcracker, pipelined in batches."""
    with socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT) as sock:
        batch = 500
        for first in range(0, len(keys), batch):
            group = keys[first:first + batch]
            sock.sendall(b"".join(b"set " + k + b" 0 0 1\r\nv\r\n" for k in group))
            buffer = b""
            while buffer.count(b"\r\n") < len(group):
                buffer += recv_some(sock)
            if buffer != b"STORED\r\n" * len(group):
                raise Failure("nutcracker answered %r" % buffer[:200])


def held_keys(port, prefix):
    """The keys starting with PREFIX that the memcached on PORT holds. memcached
    answers BUSY while its own background crawl runs (it starts one by itself after
    many sets): that is waited out, bounded, and any other one-line answer is a
    failure rather than a wait for a dump that never comes."""
    deadline = time.monotonic() + DUMP_WAIT_SECONDS
    while True:
        with socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT) as sock:
            sock.sendall(b"lru_crawler metadump all\r\n")
            buffer = recv_until(sock, b"", b"\n")
            if not buffer.startswith(b"BUSY"):
                if not buffer.startswith(b"key=") and not buffer.startswith(b"END\r\n"):
                    raise Failure("memcached on port %d refused the dump: %r" %
                                  (port, buffer[:200]))
                while not buffer.endswith(b"END\r\n"):
                    buffer += recv_some(sock)
                break
        if time.monotonic() > deadline:
            raise Failure("memcached on port %d stayed busy crawling for %d s" %
                          (port, DUMP_WAIT_SECONDS))
        time.sleep(0.05)
    # The dump escapes keys as URLs: the prefix is compared escaped, so only this
    # set's lines are decoded.
    line_start = b"key=" + urllib.parse.quote_from_bytes(prefix, safe="").encode()
    keys = []
    for line in buffer.split(b"\n"):
        if line.startswith(line_start):
            keys.append(urllib.parse.unquote_to_bytes(line.split(b" ")[0][4:].decode()))
    return keys


def flush(port):
    """Empties the memcached on PORT, so the next set's dumps hold only its keys.
    With CAS on (memcached's default; the test never passes -C) flush_all drops the
    items stored before it by their CAS, so keys set within the same second after it
    survive; without CAS it would drop by whole seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT) as sock:
        sock.sendall(b"flush_all\r\n")
        answer = recv_until(sock, b"", b"\r\n")
        if answer != b"OK\r\n":
            raise Failure("memcached on port %d answered flush_all with %r" % (port, answer))


def held_of(port, keys):
    """Which of KEYS the memcached on PORT holds, asked key by key (pipelined gets)."""
    held = set()
    with socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT) as sock:
        batch = 200
        for first in range(0, len(keys), batch):
            group = keys[first:first + batch]
            sock.sendall(b"get " + b" ".join(group) + b"\r\n")
            buffer = recv_until(sock, b"", b"END\r\n")
            for line in buffer.split(b"\r\n"):
                if line.startswith(b"VALUE "):
                    held.add(line.split(b" ")[1])
    return held


def main():
    global COLLIDING_NAMES
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ringctl, peer_keys = sys.argv[1], sys.argv[2]
    keys_per_set = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    if not shutil.which("nutcracker") or not shutil.which("memcached"):
        print("skipped: nutcracker or memcached is not installed")
        return 77
    COLLIDING_NAMES = colliding_names()
    servers = Servers()
    try:
        library = Library(ringctl, peer_keys, servers.tmp)
        rng = random.Random(13)
        memcached_ports = []
        for i in range(40):
            port = free_port()
            p = servers.start(["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0",
                               "-m", "1024", "-t", "1", "-u", "nobody"],
                              "memcached-%d.log" % i)
            wait_listening("127.0.0.1", port, p, "memcached")
            memcached_ports.append(port)
        sets = server_sets(rng, memcached_ports)
        total_keys = wraps = exact = 0
        for index, (hash_name, members) in enumerate(sets):
            started = time.monotonic()
            prefix = "s%d:" % index
            listen = free_port()
            stats = free_port()
            conf = os.path.join(servers.tmp, "nutcracker-%d.yml" % index)
            with open(conf, "w") as f:
                f.write(nutcracker_yaml(listen, hash_name, members))
            # The ring is the import of the very file nutcracker runs.
            path = os.path.join(servers.tmp, "set-%d.json" % index)
            with open(path, "wb") as f:
                f.write(library.run("import", "twemproxy", conf))
            keys, w, e = library.keys(path, prefix, keys_per_set, index + 1)
            wraps += w
            exact += e
            expected = library.owners_of_file("tw-%d" % index, path, keys)
            proxy = servers.start(["nutcracker", "-c", conf, "-s", str(stats), "-a",
                                   "127.0.0.1", "-o",
                                   os.path.join(servers.tmp, "nc-%d.log" % index)],
                                  "nutcracker-%d.out" % index)
            wait_listening("127.0.0.1", listen, proxy, "nutcracker")
            set_all(listen, keys)
            servers.stop(proxy)

            name_of_port = {}
            for port, _weight, name in members:
                name_of_port[port] = name or "127.0.0.1:%d" % port
            holder = {}
            for port in name_of_port:
                for key in held_keys(port, prefix.encode()):
                    if key in holder:
                        raise Failure("set %d: key %r is on two servers" % (index, key))
                    holder[key] = name_of_port[port]
            # The LRU crawler's dump can miss an item that memcached's LRU maintainer
            # moves between segments during the crawl: ask every server directly
            # for the few keys no dump listed.
            unlisted = [k for k in keys if k not in holder]
            for port in name_of_port if unlisted else ():
                for key in held_of(port, unlisted):
                    if key in holder:
                        raise Failure("set %d: key %r is on two servers" % (index, key))
                    holder[key] = name_of_port[port]
            mismatches = [k for k in keys if holder.get(k) != expected[k]]
            if mismatches:
                k = mismatches[0]
                raise Failure("set %d (hash %s, %d servers): %d of %d keys differ; "
                              "first %r: nutcracker %s, ringctl %s" %
                              (index, hash_name, len(members), len(mismatches),
                               len(keys), k, holder.get(k), expected[k]))
            for port in name_of_port:
                flush(port)
            total_keys += len(keys)
            print("set %2d: %-13s %2d servers, %d keys, 0 mismatches (%.1f s)" %
                  (index, hash_name, len(members), len(keys),
                   time.monotonic() - started), flush=True)
        print("twemproxy: %d server sets, %d keys (%d past the last point, %d on a "
              "point), 0 mismatches; equal points: %s and %s share %08x" %
              (len(sets), total_keys, wraps, exact, COLLIDING_NAMES[0],
               COLLIDING_NAMES[1], COLLIDING_NAMES[2]))
        return 0
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        servers.stop_all()


if __name__ == "__main__":
    sys.exit(main())
