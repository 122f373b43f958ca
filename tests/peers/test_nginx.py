#!/usr/bin/env python3
"""The `nginx` algorithm against the real thing: Debian's nginx on loopback. For each
server set, nginx runs a configuration whose `upstream` is `hash $arg_key consistent`
over servers that answer their own name: more server blocks of the same nginx, each
listening where its `server` line points (an IPv4 or IPv6 address, a host name, a
Unix socket) and answering `return 200 "<server as written>"`. Every key is sent as
`GET /?key=KEY` (pipelined on keep-alive connections); the name in each answer must
be the node that `ringctl lookup --stdin` names on the ring built by `ringctl import
nginx` of that very configuration file.

Then the stream module's twin: one set under `stream { upstream { hash $remote_addr
consistent; } }`, the same kinds of servers answering their name with `return`, and
each key a client address in 127/8 that the test connects from (KEYS_PER_SET of
them, as for every http set), among them the addresses nearest to and farthest
beyond both edges of the continuum, which PEER_ADDRESSES finds among all candidates.

Usage: test_nginx.py RINGCTL PEER_KEYS PEER_ADDRESSES [KEYS_PER_SET]
Exits 77 (skipped) when nginx is missing, 1 if so when SHMRING_REQUIRE_PEERS=1 is in
the environment (which also makes a missing stream module a failure; otherwise the
stream set is left out with a note).
"""
import os
import random
import re
import selectors
import socket
import subprocess
import sys
import time
import zlib

from peerlib import (Failure, Library, edge_targets, find_program, forge_key,
                     ipv6_loopback, peer_missing, peer_servers, peers_required,
                     wait_listening)

CONNECTIONS = 6
# Debian's libnginx-mod-stream.
STREAM_MODULE = "/usr/lib/nginx/modules/ngx_stream_module.so"
# Connections the stream set keeps open at once.
STREAM_IN_FLIGHT = 64
# Client addresses the stream set takes past the last point, and at or below the
# first, where that many exist.
STREAM_EDGE_KEYS = 10


def server_points(server, weight=1):
    """nginx's weight x 160 points of one server string (ngx_http_upstream_init_chash),
    to aim keys at them; the library's own computation is what the test checks."""
    if server.startswith("unix:"):
        host, port = server[5:], ""
    else:
        m = re.match(r"^(.*):([0-9]*)$", server)
        host, port = (m.group(1), m.group(2)) if m else (server, "")
    base = zlib.crc32(host.encode() + b"\0" + port.encode())
    points, previous = [], 0
    for _ in range(160 * weight):
        previous = zlib.crc32(previous.to_bytes(4, "little"), base)
        points.append(previous)
    return points


def colliding_sockets(directory):
    """Two Unix socket paths in DIRECTORY whose servers share a point: the same place
    on the continuum, which nginx gives to the server listed first. Constructed, not
    searched for: a server's first point is the CRC-32 of its path, a NUL (its empty
    port) and four zero bytes (server_points()), so a path forged onto the last
    point of the first server's chain starts the second server's chain there. The
    two share exactly that point, since the next one of the chain is beyond the
    first server's 160."""
    first = "unix:%s/eq-a.sock" % directory
    shared = server_points(first)[-1]
    second_path = forge_key(("%s/eq-b" % directory).encode(), shared,
                            suffix=b"\0" * 5).decode()
    second = "unix:" + second_path
    common = set(server_points(first)) & set(server_points(second))
    if common != {shared}:
        raise Failure("the socket paths %s and %s share the points %s, where they were "
                      "made to share %08x" % (first, second, sorted(common), shared))
    return first, second, shared


def fixed_ports(count):
    """COUNT distinct loopback ports below the ephemeral range. Each set's nginx
    binds them afresh; a port from the ephemeral range could meanwhile become the
    local end of some outgoing connection (nginx's own, to its backends) and make
    that bind fail. They are taken in a run from a random start (wrapping), not
    scattered: another run of this test at the same time (another build on the same
    machine) then rarely shares a port, where two scattered choices of 500 of these
    22,768 ports would share about 11."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        ephemeral_low = int(f.read().split()[0])
    candidates = list(range(10000, min(ephemeral_low, 32768)))
    start = random.Random(os.getpid()).randrange(len(candidates))
    ports = []
    for port in candidates[start:] + candidates[:start]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == count:
            return ports
    raise Failure("fewer than %d free ports below %d" % (count, ephemeral_low))


class Pool:
    """The listening places the servers of a set take, allocated once: loopback
    ports (free when no nginx runs) and socket paths."""

    def __init__(self, tmp, count):
        self.tmp = tmp
        self.ports = fixed_ports(count + 1)
        self.front = self.ports.pop()
        self.ipv6 = ipv6_loopback()
        localhost = {a[4][0] for a in socket.getaddrinfo("localhost", 80,
                                                          proto=socket.IPPROTO_TCP)}
        # nginx resolves a host name once, at start, to every address it has, and
        # may send a key to any of them: the backend listens on all of them.
        self.localhost = sorted(localhost)

    @staticmethod
    def kind_of(server):
        """The kind of listening place of SERVER, as written by server()."""
        if server.startswith("unix:"):
            return "unix"
        if server.startswith("["):
            return "ipv6"
        return "host" if server.startswith("localhost:") else "ip"

    def server(self, kind, i):
        """(the server as written in the upstream, the backend's listen lines)."""
        port = self.ports[i]
        if kind == "ip":
            return "127.0.0.1:%d" % port, ["127.0.0.1:%d" % port]
        if kind == "ipv6":
            return "[::1]:%d" % port, ["[::1]:%d" % port]
        if kind == "host":
            listens = ["[%s]:%d" % (a, port) if ":" in a else "%s:%d" % (a, port)
                       for a in self.localhost]
            return "localhost:%d" % port, listens
        if kind == "unix":
            path = "%s/s%d.sock" % (self.tmp, i)
            return "unix:" + path, ["unix:" + path]
        raise ValueError(kind)


def server_sets(rng, pool, eq_a, eq_b):
    """The server sets: lists of (server, listens, weight, down, parameters)."""
    kinds = ["ip", "host", "unix"] + (["ipv6"] if pool.ipv6 else [])
    specs = [
        # (size, kinds, weights, down share)
        (1, ["ip"], (1, 1), 0), (2, ["ip"], (1, 1), 0), (2, ["host"], (1, 5), 0.5),
        (3, ["unix"], (1, 1), 0), (4, kinds, (1, 3), 0.25), (5, ["ip"], (1, 100), 0),
        (7, ["host"], (1, 1), 0.15), (8, kinds, (1, 10), 0), (10, ["ip"], (1, 1), 0.2),
        (16, kinds, (1, 4), 0.1), (20, ["ipv6" if pool.ipv6 else "ip"], (1, 2), 0),
        (25, ["unix"], (1, 6), 0.2), (32, kinds, (1, 1), 0), (50, ["ip"], (1, 8), 0.1),
        (64, kinds, (1, 3), 0.25), (100, ["host"], (1, 1), 0.1), (128, kinds, (1, 2), 0),
        (200, ["ip"], (1, 5), 0.2), (300, kinds, (1, 1), 0.05), (500, kinds, (1, 3), 0.1),
    ]
    sets = []
    for index, (size, set_kinds, (low, high), down_share) in enumerate(specs):
        members = []
        order = list(range(size))
        rng.shuffle(order)
        down = set(order[:int(size * down_share)])
        for s in range(size):
            server, listens = pool.server(set_kinds[s % len(set_kinds)], s)
            parameters = []
            if s % 7 == 3:
                parameters.append("max_fails=0")
            members.append((server, listens, rng.randint(low, high), s in down,
                            parameters))
        sets.append(members)
    # Equal points on purpose: two servers sharing a point, in both orders, and with
    # the first one down (its point hides the second's, nginx moves on to the next).
    for first, second, first_down in [(eq_a, eq_b, False), (eq_b, eq_a, False),
                                      (eq_a, eq_b, True)]:
        members = [(first, [first], 1, first_down, []),
                   (second, [second], 1, False, [])]
        for s in range(3):
            server, listens = pool.server("ip", s)
            members.append((server, listens, 1, False, []))
        sets.append(members)
    return sets


def nginx_conf(tmp, front_port, members):
    """The configuration nginx runs and ringctl imports."""
    lines = ["worker_processes 2;", "pid %s/nginx.pid;" % tmp,
             "error_log %s/error.log warn;" % tmp,
             "events { worker_connections 4096; }", "http {", "  access_log off;",
             "  keepalive_requests 10000000;", "  keepalive_timeout 300s;",
             "  client_body_temp_path %s/body;" % tmp,
             "  proxy_temp_path %s/proxy;" % tmp,
             "  fastcgi_temp_path %s/fastcgi;" % tmp, "  uwsgi_temp_path %s/uwsgi;" % tmp,
             "  scgi_temp_path %s/scgi;" % tmp,
             # An upstream of another method: the import takes the one named.
             "  upstream decoy { least_conn; server 127.0.0.1:9; }",
             "  upstream peers {", "    hash $arg_key consistent;"]
    for server, _listens, weight, down, parameters in members:
        words = [server] + (["weight=%d" % weight] if weight != 1 else [])
        words += (["down"] if down else []) + parameters
        lines.append("    server %s;" % " ".join(words))
    # Enough idle connections kept to reach every server from each worker: with
    # fewer, the large sets open a new connection for most keys.
    lines += ["    keepalive %d;" % max(64, len(members)), "  }",
              "  server {", "    listen 127.0.0.1:%d;" % front_port,
              "    location / {", "      proxy_pass http://peers;",
              "      proxy_http_version 1.1;", '      proxy_set_header Connection "";',
              "      proxy_next_upstream off;", "    }", "  }"]
    for server, listens, _weight, down, _parameters in members:
        if down:
            continue  # nginx never sends to it: nothing needs to listen
        lines.append("  server {")
        lines += ["    listen %s;" % listen for listen in listens]
        lines += ['    return 200 "%s\\n";' % server, "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def wait_serving(port, process, limit=30.0):
    """Waits until nginx's own master process listens on loopback PORT (bounded,
    noticing nginx dying): another nginx on the port (another run of this test at
    the same time) is never taken for it."""
    wait_listening(("127.0.0.1", port), process, "nginx", limit)


def parse_answers(buffer, count):
    """The bodies of COUNT pipelined responses in BUFFER, or None if incomplete.
    Each body is one server name and a newline, so a response is whole once its
    body ends in one."""
    pieces = bytes(buffer).split(b"HTTP/1.1 ")
    if pieces[0] != b"" or len(pieces) - 1 < count:
        return None
    answers = []
    for piece in pieces[1:]:
        head, separator, body = piece.partition(b"\r\n\r\n")
        if not separator or not body.endswith(b"\n"):
            return None
        if not head.startswith(b"200 "):
            raise Failure("nginx answered %r: %r" % (head.split(b"\r\n")[0], body[:200]))
        answers.append(body[:-1].decode())
    if len(answers) != count:
        raise Failure("nginx sent %d answers to %d keys" % (len(answers), count))
    return answers


def ask_nginx(port, keys):
    """{key: the server name nginx's answer carries}, over CONNECTIONS keep-alive
    connections, each sending its share of the keys pipelined."""
    selector = selectors.DefaultSelector()
    share = (len(keys) + CONNECTIONS - 1) // CONNECTIONS
    states = []
    try:
        for c in range(CONNECTIONS):
            chunk = keys[c * share:(c + 1) * share]
            if not chunk:
                continue
            sock = socket.create_connection(("127.0.0.1", port))
            sock.setblocking(False)
            out = b"".join(b"GET /?key=%s HTTP/1.1\r\nHost: peers\r\n\r\n" % k
                           for k in chunk)
            state = {"keys": chunk, "out": memoryview(out), "in": bytearray(),
                     "answers": None, "sock": sock, "seen": 0}
            selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, state)
            states.append(state)
        pending = len(states)
        while pending:
            events = selector.select(timeout=120)
            if not events:
                raise Failure("nginx stopped answering")
            for key, mask in events:
                state = key.data
                sock = key.fileobj
                if mask & selectors.EVENT_WRITE and len(state["out"]):
                    sent = sock.send(state["out"][:1 << 18])
                    state["out"] = state["out"][sent:]
                    if not len(state["out"]):
                        selector.modify(sock, selectors.EVENT_READ, state)
                if mask & selectors.EVENT_READ:
                    data = sock.recv(1 << 20)
                    if not data:
                        raise Failure("nginx closed a connection after %d bytes" %
                                      len(state["in"]))
                    # Count responses in what arrived (with the 8 bytes before it,
                    # shorter than the marker, so that none is counted twice), to
                    # parse only once all may be there.
                    state["seen"] += (bytes(state["in"][-8:]) + data).count(b"HTTP/1.1 ")
                    state["in"] += data
                    if state["seen"] >= len(state["keys"]) and data.endswith(b"\n"):
                        answers = parse_answers(state["in"], len(state["keys"]))
                        if answers is not None:
                            state["answers"] = answers
                            selector.unregister(sock)
                            pending -= 1
    finally:
        for state in states:
            state["sock"].close()
        selector.close()
    result = {}
    for state in states:
        result.update(zip(state["keys"], state["answers"]))
    return result


def aimed_keys(label, members):
    """Keys aimed at the continuum's edges (peerlib.edge_targets()): around hash 0
    and 0xffffffff, the first, middle and last points, and every point that two
    servers share. Returns (keys, how many points are shared)."""
    targets, shared = edge_targets([p for server, _l, weight, _d, _p in members
                                    for p in server_points(server, weight)])
    return [forge_key(b"%s%08x" % (label, t), t) for t in targets], len(shared)


def stream_members(rng, pool):
    """The stream set: 40 servers of every kind, weights 1-5, 4 of them down."""
    kinds = ["ip", "host", "unix"] + (["ipv6"] if pool.ipv6 else [])
    size = 40
    down = set(rng.sample(range(size), 4))
    members = []
    for s in range(size):
        server, listens = pool.server(kinds[s % len(kinds)], s)
        members.append((server, listens, rng.randint(1, 5), s in down, []))
    return members


def stream_conf(tmp, front_port, members):
    """An nginx configuration whose stream upstream hashes the client's address."""
    lines = ["load_module %s;" % STREAM_MODULE, "worker_processes 2;",
             "pid %s/nginx.pid;" % tmp, "error_log %s/error.log warn;" % tmp,
             "events { worker_connections 4096; }", "stream {",
             "  upstream peers {", "    hash $remote_addr consistent;"]
    for server, _listens, weight, down, _parameters in members:
        words = [server] + (["weight=%d" % weight] if weight != 1 else [])
        lines.append("    server %s;" % " ".join(words + (["down"] if down else [])))
    lines += ["  }", "  server {", "    listen 127.0.0.1:%d;" % front_port,
              "    proxy_pass peers;", "    proxy_next_upstream off;", "  }"]
    for server, listens, _weight, down, _parameters in members:
        if not down:
            lines.append("  server {")
            lines += ["    listen %s;" % listen for listen in listens]
            lines += ['    return "%s\n";' % server, "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def edge_addresses(peer_addresses, first_point, last_point):
    """The client addresses at the continuum's edges, from the whole candidate set
    (peer_addresses enumerates every 127.B.C.D the test may connect from): up to
    STREAM_EDGE_KEYS whose hash is past LAST_POINT (the wrap to the first point) and
    as many at or below FIRST_POINT. Returns (past, below), lists of bytes."""
    r = subprocess.run([peer_addresses, str(first_point), str(last_point),
                        str(STREAM_EDGE_KEYS)], capture_output=True, check=True)
    past, below = [], []
    for line in r.stdout.split(b"\n")[:-1]:
        kind, address = line.split(b" ")
        (past if kind == b"past" else below).append(address)
    return past, below


def client_addresses(rng, count, edges):
    """COUNT distinct loopback addresses to connect from (any of 127/8 is ours):
    the EDGES, then 127.B.C.D drawn at random with B from 1 to 254, so none is
    127.0.0.1 (the front's address), and D neither 0 nor 255."""
    chosen = set(edges)
    while len(chosen) < count:
        bits = rng.getrandbits(24)
        b, c, d = bits >> 16, (bits >> 8) & 0xFF, bits & 0xFF
        if b not in (0, 255) and d not in (0, 255):
            chosen.add(b"127.%d.%d.%d" % (b, c, d))
    return sorted(a.decode() for a in chosen)


def stream_points(members):
    """{point: index of the member that owns it} of the stream set."""
    return {p: i for i, (server, _l, weight, _d, _p) in enumerate(members)
            for p in server_points(server, weight)}


def stream_edges(peer_addresses, pool, members):
    """The edge addresses of the stream set MEMBERS: (past, below, first point,
    last point). The candidate addresses' hashes span 0x000001a9 to 0xffffffb4, so
    a set whose last point lies above the highest of them (or whose first point
    lies below the lowest) has no address past it: rare, since they reach to within
    0x1a9 of 0 and 0x4b of 0xffffffff, but it depends on the ports and paths drawn. The server that owns that point then moves to a listening
    place no other member uses, which gives it new points, until both edges have
    addresses: the test never depends on the ports and paths it happened to get."""
    spare = len(members)
    while True:
        owners = stream_points(members)
        first_point, last_point = min(owners), max(owners)
        past, below = edge_addresses(peer_addresses, first_point, last_point)
        if past and below:
            return past, below, first_point, last_point
        if spare == len(pool.ports):
            raise Failure("no listening place left to move a stream server to")
        moved = owners[last_point] if not past else owners[first_point]
        server, listens, weight, down, parameters = members[moved]
        kind = pool.kind_of(server)
        server, listens = pool.server(kind, spare)
        spare += 1
        members[moved] = (server, listens, weight, down, parameters)


def ask_stream(port, addresses):
    """{address: the server name nginx's stream proxy answers a connection from
    that address with}, STREAM_IN_FLIGHT connections at a time."""
    selector = selectors.DefaultSelector()
    waiting = iter(addresses)
    answers = {}
    open_count = 0

    def connect_next():
        address = next(waiting, None)
        if address is None:
            return 0
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.bind((address, 0))
        sock.connect_ex(("127.0.0.1", port))
        selector.register(sock, selectors.EVENT_READ, (address, bytearray()))
        return 1

    try:
        for _ in range(STREAM_IN_FLIGHT):
            open_count += connect_next()
        while open_count:
            events = selector.select(timeout=60)
            if not events:
                raise Failure("nginx's stream proxy stopped answering")
            for key, _mask in events:
                address, received = key.data
                try:
                    chunk = key.fileobj.recv(4096)
                except OSError as e:
                    raise Failure("the connection from %s: %s" % (address, e))
                if chunk:
                    received += chunk
                    continue
                selector.unregister(key.fileobj)
                key.fileobj.close()
                open_count -= 1
                if not received.endswith(b"\n"):
                    raise Failure("the connection from %s ended after %r" %
                                  (address, bytes(received[:200])))
                answers[address] = received[:-1].decode()
                open_count += connect_next()
    finally:
        for key in list(selector.get_map().values()):
            key.fileobj.close()
        selector.close()
    return answers


def compare_stream(nginx, servers, library, peer_addresses, pool, rng, key_count):
    """The stream set: returns (servers, keys, keys past the last point, keys at or
    below the first)."""
    members = stream_members(rng, pool)
    past, below, first_point, last_point = stream_edges(peer_addresses, pool, members)
    tmp = os.path.join(servers.tmp, "nginx-stream")
    os.mkdir(tmp)
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(stream_conf(tmp, pool.front, members))
    nodeset_path = os.path.join(tmp, "peers.json")
    with open(nodeset_path, "wb") as f:
        f.write(library.run("import", "nginx", conf, "--upstream", "peers"))
    addresses = client_addresses(rng, key_count, past + below)
    keys = [a.encode() for a in addresses]
    expected = library.owners_of_file("ng-stream", nodeset_path, keys)
    wraps = sum(1 for k in keys if zlib.crc32(k) > last_point)
    lows = sum(1 for k in keys if zlib.crc32(k) <= first_point)
    if wraps < 1 or lows < 1:
        raise Failure("stream set: %d client addresses past the last point and %d at "
                      "or below the first, where each edge needs one" % (wraps, lows))
    process = servers.start([nginx, "-p", tmp, "-c", conf, "-e",
                             os.path.join(tmp, "error.log"), "-g",
                             "daemon off; master_process on;"], "nginx-stream.out")
    wait_serving(pool.front, process)
    try:
        answers = ask_stream(pool.front, addresses)
    except (Failure, OSError) as e:
        raise Failure("stream set: %s; nginx's error log ends:\n%s" %
                      (e, log_tail(os.path.join(tmp, "error.log"))))
    servers.stop(process)
    mismatches = [a for a in addresses if answers.get(a) != expected[a.encode()]]
    if mismatches:
        a = mismatches[0]
        raise Failure("stream set (%d servers): %d of %d client addresses differ; first "
                      "%s (crc32 %08x): nginx %s, ringctl %s" %
                      (len(members), len(mismatches), len(addresses), a,
                       zlib.crc32(a.encode()), answers.get(a), expected[a.encode()]))
    return len(members), len(keys), wraps, lows


def log_tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "(%s)" % e


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    ringctl, peer_keys, peer_addresses = sys.argv[1:4]
    keys_per_set = int(sys.argv[4]) if len(sys.argv) > 4 else 100000
    nginx = find_program("nginx")
    if nginx is None:
        return peer_missing("nginx is not installed")
    started = time.monotonic()
    with peer_servers() as servers:
        library = Library(ringctl, peer_keys, servers.tmp)
        rng = random.Random(13)
        pool = Pool(servers.tmp, 500)
        eq_a, eq_b, eq_point = colliding_sockets(servers.tmp)
        sets = server_sets(rng, pool, eq_a, eq_b)
        total_keys = wraps = aimed = shared_points = 0
        for index, members in enumerate(sets):
            tmp = os.path.join(servers.tmp, "nginx-%d" % index)
            os.mkdir(tmp)
            front = pool.front
            conf = os.path.join(tmp, "nginx.conf")
            with open(conf, "w") as f:
                f.write(nginx_conf(tmp, front, members))
            nodeset_path = os.path.join(tmp, "peers.json")
            with open(nodeset_path, "wb") as f:
                f.write(library.run("import", "nginx", conf, "--upstream", "peers"))
            prefix = "n%d:" % index
            # The keys on a point are forged below: peer_keys need not search.
            keys, w, _exact = library.keys(nodeset_path, prefix, keys_per_set,
                                           index + 1, exact_tries=0)
            extra, shared = aimed_keys(prefix.encode(), members)
            if members[0][0] in (eq_a, eq_b) and shared == 0:
                raise Failure("set %d was made to hold a shared point, and holds none" %
                              index)
            keys = extra + keys[:max(0, keys_per_set - len(extra))]
            wraps += w
            aimed += len(extra)
            shared_points += shared
            expected = library.owners_of_file("ng-%d" % index, nodeset_path, keys)

            process = servers.start([nginx, "-p", tmp, "-c", conf, "-e",
                                     os.path.join(tmp, "error.log"), "-g",
                                     "daemon off; master_process on;"],
                                    "nginx-%d.out" % index)
            wait_serving(front, process)
            asked = time.monotonic()
            try:
                answers = ask_nginx(front, keys)
            except (Failure, OSError) as e:
                raise Failure("set %d: %s; nginx's error log ends:\n%s" %
                              (index, e, log_tail(os.path.join(tmp, "error.log"))))
            asking = time.monotonic() - asked
            servers.stop(process)

            mismatches = [k for k in keys if answers.get(k) != expected[k]]
            if mismatches:
                k = mismatches[0]
                raise Failure("set %d (%d servers): %d of %d keys differ; first %r "
                              "(crc32 %08x): nginx %s, ringctl %s" %
                              (index, len(members), len(mismatches), len(keys), k,
                               zlib.crc32(k), answers.get(k), expected[k]))
            total_keys += len(keys)
            downs = sum(1 for m in members if m[3])
            print("set %2d: %3d servers (%d down), %d keys, 0 mismatches (%.1f s in "
                  "nginx)" % (index, len(members), downs, len(keys), asking), flush=True)
        print("nginx: %d server sets, %d keys (%d past the last point, %d forged onto "
              "and beside the edges and %d shared points), 0 mismatches, %.0f s; equal "
              "points: %s and %s share %08x" %
              (len(sets), total_keys, wraps, aimed, shared_points,
               time.monotonic() - started, eq_a, eq_b, eq_point), flush=True)
        if os.path.exists(STREAM_MODULE):
            stream_started = time.monotonic()
            size, count, stream_wraps, stream_lows = compare_stream(
                nginx, servers, library, peer_addresses, pool, rng, keys_per_set)
            print("nginx stream: 1 server set (%d servers), %d client addresses (%d past "
                  "the last point, %d at or below the first), 0 mismatches, %.0f s" %
                  (size, count, stream_wraps, stream_lows,
                   time.monotonic() - stream_started))
        elif peers_required():
            raise Failure("nginx's stream module (%s) is not installed, and "
                          "SHMRING_REQUIRE_PEERS is on (tools/deps.sh installs "
                          "libnginx-mod-stream)" % STREAM_MODULE)
        else:
            print("nginx stream: not compared: %s is not installed (Debian: "
                  "libnginx-mod-stream)" % STREAM_MODULE)
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
