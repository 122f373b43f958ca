#!/usr/bin/env python3
"""The `twemproxy` algorithm against the real thing: Debian's nutcracker fronting
Debian's memcached instances on loopback. For each server set, every key is set
through nutcracker; then each memcached lists the keys it holds
(`lru_crawler metadump all`), and each key's holder must be the node
`ringctl lookup` names on the ring `ringctl import twemproxy` makes of the
configuration file nutcracker runs. The memcached instances listen on
127.0.0.1 at free ports, on other 127/8 addresses at port 11211 (which nutcracker
leaves out of an unnamed server's name) and on Unix sockets (named after the path
and the colon that follows it): each way nutcracker derives a name is compared.

Usage: test_twemproxy.py RINGCTL PEER_KEYS [KEYS_PER_SET]
Exits 77 (skipped) when nutcracker or memcached is missing, 1 if so when
SHMRING_REQUIRE_PEERS=1 is in the environment.
"""
import hashlib
import os
import random
import socket
import struct
import sys
import time
import urllib.parse
import zlib

from peerlib import (Failure, Library, connect, edge_targets, endpoint_text,
                     find_program, forge_key, free_port, peer_missing, peer_servers,
                     start_memcached, start_on_free_port, wait_listening, PortTaken)

HASHES = ["fnv1a_64", "md5", "crc16", "crc32", "crc32a", "fnv1_32", "fnv1_64",
          "fnv1a_32", "hsieh", "jenkins", "murmur", "one_at_a_time"]

# No exchange with a server may wait longer than this (seconds): a stuck peer is a
# failure that says so, not a test killed by ctest's timeout.
IO_TIMEOUT = 60
# How long a memcached may keep answering BUSY to a dump (see held_keys()).
DUMP_WAIT_SECONDS = 120

# Two server names whose point strings "NAME-0".."NAME-39" share an MD5 word: the
# same point on the continuum, which nutcracker gives to the server that comes first
# in its order (by name, shorter names first).
COLLIDING_NAMES = None  # found at start-up by colliding_names()

# The port nutcracker leaves out of an unnamed server's name (libmemcached's
# default); its memcached instances listen on other 127/8 addresses, since a system
# memcached may hold 127.0.0.1:11211.
DEFAULT_PORT = 11211
DEFAULT_PORT_SERVERS = 12
# Each memcached's memory (-m), in megabytes.
MEGABYTES = 1024
UNIX_SERVERS = 8


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


def f32(x):
    """X rounded to single precision, as a C float holds it."""
    return struct.unpack("f", struct.pack("f", x))[0]


def nutcracker_name(written, name):
    """The string nutcracker hashes for a server (conf_add_server): its name when
    given; else "host:port" as written, the host alone for port 11211, and for a
    Unix socket the path with the colon that followed it."""
    if name:
        return name
    if written.startswith("/"):
        return written + ":"
    host, port = written.rsplit(":", 1)
    return host if int(port) == DEFAULT_PORT else written


def continuum(servers):
    """nutcracker's points of SERVERS ([(place, weight, name)]), each with the index
    of its server, in its order: servers sorted by name (shorter first), 4 x
    floor(pct x 160 / 4 x servers + 1e-10) points each in float arithmetic, sorted
    stably by value. Used to aim keys; the library's own computation is what the
    test checks."""
    total = sum(weight for _place, weight, _name in servers)
    named = sorted(((nutcracker_name(place[1], name), index)
                    for index, (place, _w, name) in enumerate(servers)),
                   key=lambda n: (len(n[0]), n[0].encode()))
    points = []
    for label, index in named:
        pct = f32(servers[index][1] / total)
        scaled = f32(f32(f32(pct * 160) / 4) * len(servers))
        count = int(f32(scaled + 1e-10)) * 4
        for i in range(count // 4):
            points += [(w, index) for w in md5_words("%s-%d" % (label, i))]
    points.sort(key=lambda p: p[0])
    return points


def server_sets(rng, places, default_places, unix_places):
    """The server sets: (hash or None for nutcracker's default, [(place, weight, name
    or None)]), a place being (endpoint, the address as the server line writes it).
    Every hash at least twice; 1 to 40 servers; equal and mixed weights; named,
    unnamed and mixed; servers at port 11211 and on Unix sockets, alone and mixed."""
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
            servers.append((places[s], weight, "cache-%d-%d" % (i, s) if named else None))
        sets.append((hash_name, servers))
    # Unnamed servers at port 11211, whose names are their hosts alone: with
    # weights, under nutcracker's default hash (no `hash:` line), and under crc32a,
    # which lets keys be aimed at the continuum's ends.
    sets.append((None, [(p, rng.randint(1, 5), None) for p in default_places]))
    sets.append(("crc32a", [(p, 1, None) for p in default_places[:7]]))
    # Unnamed servers on Unix sockets, whose names are their paths and a colon.
    sets.append(("murmur", [(p, rng.randint(1, 3), None) for p in unix_places]))
    # All of them mixed: 127.0.0.1 at other ports, port 11211, Unix sockets, named
    # and unnamed.
    mixed = ([(p, rng.randint(1, 4), None) for p in places[:3]] +
             [(p, rng.randint(1, 4), None) for p in default_places[:4]] +
             [(p, rng.randint(1, 4), None) for p in unix_places[:3]] +
             [(places[3], 2, "cache-mixed-a"), (default_places[4], 1, "cache-mixed-b"),
              (unix_places[3], 3, "cache-mixed-c")])
    rng.shuffle(mixed)
    sets.append(("crc32a", mixed))
    sets.append(("fnv1_32", mixed[::-1]))
    # Equal points on purpose: the colliding names, in both orders, with others,
    # under crc32a so that keys can be aimed at the shared point.
    a, b, _ = COLLIDING_NAMES
    for i, order in enumerate([(a, b), (b, a)]):
        servers = [(places[0], 1, order[0]), (places[1], 1, order[1])]
        servers += [(places[2 + s], 1, "cache-eq%d-%d" % (i, s)) for s in range(3)]
        sets.append(("crc32a", servers))
    return sets


def nutcracker_yaml(listen_port, hash_name, servers):
    lines = ["pool:", "  listen: 127.0.0.1:%d" % listen_port]
    if hash_name is not None:
        lines.append("  hash: %s" % hash_name)
    lines += ["  distribution: ketama", "  auto_eject_hosts: false",
              "  timeout: 30000", "  servers:"]
    for place, weight, name in servers:
        lines.append("   - %s:%d%s" % (place[1], weight, " " + name if name else ""))
    return "\n".join(lines) + "\n"


def aimed_keys(label, members):
    """For a crc32a set: keys forged onto and beside the continuum's ends and every
    shared point (peerlib.edge_targets()). Returns (keys, {key: the index of the
    server nutcracker must give it} for the keys on a shared point)."""
    points = continuum(members)
    targets, shared = edge_targets([p for p, _index in points])
    keys = [forge_key(b"%s%08x" % (label, t), t) for t in targets]
    # The first of equal points in nutcracker's order wins (its lookup takes the
    # first point >= the hash).
    winner = {}
    for value, index in points:
        winner.setdefault(value, index)
    on_shared = {k: winner[zlib.crc32(k)] for k in keys if zlib.crc32(k) in shared}
    return keys, on_shared


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


def held_keys(endpoint, prefix):
    """The set of keys starting with PREFIX that the memcached at ENDPOINT holds. memcached
    answers BUSY while its own background crawl runs (it starts one by itself after
    many sets): that is waited out, bounded, and any other one-line answer is a
    failure rather than a wait for a dump that never comes."""
    deadline = time.monotonic() + DUMP_WAIT_SECONDS
    while True:
        with connect(endpoint, IO_TIMEOUT) as sock:
            sock.sendall(b"lru_crawler metadump all\r\n")
            buffer = recv_until(sock, b"", b"\n")
            if not buffer.startswith(b"BUSY"):
                if not buffer.startswith(b"key=") and not buffer.startswith(b"END\r\n"):
                    raise Failure("memcached at %s refused the dump: %r" %
                                  (endpoint_text(endpoint), buffer[:200]))
                while not buffer.endswith(b"END\r\n"):
                    buffer += recv_some(sock)
                break
        if time.monotonic() > deadline:
            raise Failure("memcached at %s stayed busy crawling for %d s" %
                          (endpoint_text(endpoint), DUMP_WAIT_SECONDS))
        time.sleep(0.05)
    # The dump escapes keys as URLs: the prefix is compared escaped, so only this
    # set's lines are decoded.
    # The dump can list an item twice, as it can miss one (see main()): the LRU
    # maintainer may move an item ahead of the crawl. A set, so that one item is
    # one key, however often the dump met it.
    line_start = b"key=" + urllib.parse.quote_from_bytes(prefix, safe="").encode()
    keys = set()
    for line in buffer.split(b"\n"):
        if line.startswith(line_start):
            keys.add(urllib.parse.unquote_to_bytes(line.split(b" ")[0][4:].decode()))
    return keys


def flush(endpoint):
    """Empties the memcached at ENDPOINT, so the next set's dumps hold only its keys.
    With CAS on (memcached's default; the test never passes -C) flush_all drops the
    items stored before it by their CAS, so keys set within the same second after it
    survive; without CAS it would drop by whole seconds."""
    with connect(endpoint, IO_TIMEOUT) as sock:
        sock.sendall(b"flush_all\r\n")
        answer = recv_until(sock, b"", b"\r\n")
        if answer != b"OK\r\n":
            raise Failure("memcached at %s answered flush_all with %r" %
                          (endpoint_text(endpoint), answer))


def held_of(endpoint, keys):
    """Which of KEYS the memcached at ENDPOINT holds, asked key by key (pipelined
    gets)."""
    held = set()
    with connect(endpoint, IO_TIMEOUT) as sock:
        batch = 200
        for first in range(0, len(keys), batch):
            group = keys[first:first + batch]
            sock.sendall(b"get " + b" ".join(group) + b"\r\n")
            buffer = recv_until(sock, b"", b"END\r\n")
            for line in buffer.split(b"\r\n"):
                if line.startswith(b"VALUE "):
                    held.add(line.split(b" ")[1])
    return held


def default_port_hosts(count):
    """COUNT loopback addresses 127.0.B.2.. whose port 11211 is free. The block B
    starts from the process id, so that two runs at once (other builds) rarely meet,
    and moves on to the next block while any of its addresses is taken. The probe
    binds as memcached does (SO_REUSEADDR), so that connections of an earlier run
    still in TIME_WAIT do not count as taken: only a listener does."""
    first = os.getpid() % 254
    for step in range(254):
        block = 1 + (first + step) % 254
        hosts = ["127.0.%d.%d" % (block, 2 + i) for i in range(count)]
        if all(port_free(host, DEFAULT_PORT) for host in hosts):
            return hosts
    raise Failure("port %d is taken on some address of every block 127.0.B.2-%d" %
                  (DEFAULT_PORT, 1 + count))


def port_free(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def main():
    global COLLIDING_NAMES
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ringctl, peer_keys = sys.argv[1], sys.argv[2]
    keys_per_set = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    nutcracker, memcached = find_program("nutcracker"), find_program("memcached")
    if nutcracker is None or memcached is None:
        return peer_missing("nutcracker or memcached is not installed")
    started_all = time.monotonic()
    COLLIDING_NAMES = colliding_names()
    with peer_servers() as servers:
        library = Library(ringctl, peer_keys, servers.tmp)
        rng = random.Random(13)
        places = []
        for i in range(40):
            port = start_on_free_port(
                lambda port: start_memcached(memcached, servers, ("127.0.0.1", port),
                                             "memcached-%d.log" % i, MEGABYTES),
                "memcached")
            places.append((("127.0.0.1", port), "127.0.0.1:%d" % port))
        default_places = []
        for i, host in enumerate(default_port_hosts(DEFAULT_PORT_SERVERS)):
            start_memcached(memcached, servers, (host, DEFAULT_PORT),
                            "memcached-d%d.log" % i, MEGABYTES)
            default_places.append(((host, DEFAULT_PORT), "%s:%d" % (host, DEFAULT_PORT)))
        socket_dir = servers.socket_directory()
        unix_places = []
        for i in range(UNIX_SERVERS):
            path = os.path.join(socket_dir, "m%d.sock" % i)
            start_memcached(memcached, servers, path, "memcached-u%d.log" % i, MEGABYTES)
            unix_places.append((path, path))
        sets = server_sets(rng, places, default_places, unix_places)
        total_keys = wraps = exact = aimed = shared_keys = 0
        for index, (hash_name, members) in enumerate(sets):
            started = time.monotonic()
            prefix = "s%d:" % index
            conf = os.path.join(servers.tmp, "nutcracker-%d.yml" % index)
            proxy = None

            def start_proxy(listen):
                nonlocal proxy
                with open(conf, "w") as f:
                    f.write(nutcracker_yaml(listen, hash_name, members))
                log = os.path.join(servers.tmp, "nc-%d.log" % index)
                proxy = servers.start([nutcracker, "-c", conf, "-s", str(free_port()),
                                       "-a", "127.0.0.1", "-o", log],
                                      "nutcracker-%d.out" % index)
                # nutcracker writes its errors to its -o log.
                proxy.log_path = log
                try:
                    wait_listening(("127.0.0.1", listen), proxy, "nutcracker")
                except PortTaken:
                    servers.stop(proxy)
                    raise

            listen = start_on_free_port(start_proxy, "nutcracker")
            # The ring is the import of the very file nutcracker runs.
            path = os.path.join(servers.tmp, "set-%d.json" % index)
            with open(path, "wb") as f:
                f.write(library.run("import", "twemproxy", conf))
            keys, w, e = library.keys(path, prefix, keys_per_set, index + 1)
            extra, on_shared = [], {}
            if hash_name == "crc32a":
                extra, on_shared = aimed_keys(prefix.encode(), members)
                keys = extra + keys[:max(0, keys_per_set - len(extra))]
            if members[0][2] in COLLIDING_NAMES[:2] and not on_shared:
                raise Failure("set %d was made to hold a shared point, and no key was "
                              "aimed at one" % index)
            wraps += w
            exact += e
            aimed += len(extra)
            shared_keys += len(on_shared)
            expected = library.owners_of_file("tw-%d" % index, path, keys)
            set_all(listen, keys)
            servers.stop(proxy)

            # The node each memcached stands for: the server's name, or its address
            # as written (what `ringctl import` names an unnamed server).
            node_of = {}
            for (endpoint, written), _weight, name in members:
                node_of[endpoint] = name or written
            holder = {}
            for endpoint in node_of:
                for key in held_keys(endpoint, prefix.encode()):
                    if key in holder:
                        raise Failure("set %d: key %r is on two servers" % (index, key))
                    holder[key] = node_of[endpoint]
            # The LRU crawler's dump can miss an item that memcached's LRU maintainer
            # moves between segments during the crawl: ask every server directly
            # for the few keys no dump listed.
            unlisted = [k for k in keys if k not in holder]
            for endpoint in node_of if unlisted else ():
                for key in held_of(endpoint, unlisted):
                    if key in holder:
                        raise Failure("set %d: key %r is on two servers" % (index, key))
                    holder[key] = node_of[endpoint]
            # A key on a point two servers share is nutcracker's, whatever the
            # library says: it must sit on the server nutcracker orders first.
            for key, winner in on_shared.items():
                (_endpoint, written), _weight, name = members[winner]
                if holder.get(key) != (name or written):
                    raise Failure("set %d: key %r, on a point two servers share, is on "
                                  "%s, not on %s, which nutcracker orders first" %
                                  (index, key, holder.get(key), name or written))
            mismatches = [k for k in keys if holder.get(k) != expected[k]]
            if mismatches:
                k = mismatches[0]
                raise Failure("set %d (hash %s, %d servers): %d of %d keys differ; "
                              "first %r: nutcracker %s, ringctl %s" %
                              (index, hash_name or "default", len(members),
                               len(mismatches), len(keys), k, holder.get(k), expected[k]))
            for endpoint in node_of:
                flush(endpoint)
            total_keys += len(keys)
            print("set %2d: %-13s %2d servers, %d keys (%d aimed), 0 mismatches "
                  "(%.1f s)" %
                  (index, hash_name or "(default)", len(members), len(keys), len(extra),
                   time.monotonic() - started), flush=True)
        print("twemproxy: %d server sets, %d keys (%d past the last point, %d found on a "
              "point, %d forged onto and beside the ends and the shared points, %d of "
              "them on a shared point), 0 mismatches, %.0f s; equal points: %s and %s "
              "share %08x" %
              (len(sets), total_keys, wraps, exact, aimed, shared_keys,
               time.monotonic() - started_all, COLLIDING_NAMES[0], COLLIDING_NAMES[1],
               COLLIDING_NAMES[2]))
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
