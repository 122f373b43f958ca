#!/usr/bin/env python3
"""The `rendezvous` algorithm against the real thing: Debian's python3-pymemcache.
For each server set, a HashClient (pymemcache's default hasher, RendezvousHash) is
made of the servers as a user writes them (strings "host:port", "[v6]:port", "host",
"unix:/path", "/path", and (host, port) tuples), and every key's server is read
through the client's public hasher (client.hasher.get_node(key)), which is what
HashClient._get_client() asks for each command; keys that HashClient accepts are also
routed through _get_client() itself, and the client it returns must be that server's.
The library's answer comes from PEER_OWNERS on the same node set (the server strings
as addresses; a tuple as "host:port", or with a hash_key where the host holds a
colon).

pymemcache's murmur3_32 is pure Python: a key costs one hash per server. The test
budgets node-hash evaluations (EVALUATIONS in all, spread over the sets) rather than
keys.

Usage: test_pymemcache.py PEER_OWNERS [EVALUATIONS]
Exits 77 (skipped) when pymemcache is missing, 1 if so when SHMRING_REQUIRE_PEERS=1.
"""
import random
import tempfile
import time

from peerlib import Case, Failure, arguments, compare_sets, peer_missing, run

# Node-hash evaluations in all (keys x servers, summed over the sets).
DEFAULT_EVALUATIONS = 1_000_000
# At most this many keys in one set, however small.
KEYS_MAX = 20_000

# Characters of keys: ASCII without whitespace, and letters of every UTF-8 length,
# chosen so that their low bytes also fall on ASCII letters and on each other.
ASCII = "".join(chr(c) for c in range(0x21, 0x7f))
WIDE = "\u00e9\u00ff\u0100\u0141\u0361\u20ac\u4e2d\uff21\U0001f600\U00010341\u0041"


def server_sets(rng):
    """(description, servers) pairs: each server a string or a (host, port) tuple."""
    sets = []
    counts = [1, 2, 3, 4, 5, 7, 10, 16, 25, 32, 50, 64, 100, 128, 200, 256, 333, 400,
              500]
    for index, count in enumerate(counts):
        servers = []
        for i in range(count):
            kind = (i + index) % 9
            if kind == 0:
                servers.append("10.%d.%d.%d:%d" % (index, i // 256, i % 256,
                                                   11211 + i % 3))
            elif kind == 1:
                servers.append("[2001:db8::%x]:%d" % (i + 1, 11211 + index))
            elif kind == 2:
                servers.append("cache-%d-%d.example.com:%d" % (index, i, 11211))
            elif kind == 3:
                servers.append("mc%d-%d" % (index, i))
            elif kind == 4:
                servers.append("unix:/run/memcached/%d-%d.sock" % (index, i))
            elif kind == 5:
                servers.append(("192.168.%d.%d" % (index, i % 256), 11000 + i))
            elif kind == 6:
                servers.append("[fe80::%x]" % (index * 1000 + i + 1))
            elif kind == 7:
                servers.append("/var/run/mc-%d-%d.sock" % (index, i))
            else:
                servers.append(("::ffff:10.0.%d.%d" % (index, i % 256), 11211))
        sets.append(("%d servers, mixed forms" % count, servers))
    # Ports with leading zeros, IPv6 without brackets, one server, UTF-8 host names.
    sets.append(("leading zeros and bare IPv6",
                 ["h1:011211", "::1:11211", "fe80::7:0", "h2:00", "10.0.0.1:65535"]))
    sets.append(("UTF-8 host names",
                 ["caf\u00e9-%d.example:11211" % i for i in range(12)] +
                 [("\u4e2d\u6587-%d" % i, 11211) for i in range(12)]))
    sets.append(("one socket", ["unix:/tmp/only.sock"]))
    return sets


def node_entry(name, server):
    """The JSON node for SERVER: its address as the user wrote it, or, for a tuple,
    "host:port" (a host with a colon keeps its node string as a hash_key)."""
    if isinstance(server, tuple):
        host, port = server
        if ":" in host:
            return {"name": name, "address": "[%s]:%d" % (host, port),
                    "hash_key": "%s:%s" % (host, port)}
        return {"name": name, "address": "%s:%d" % (host, port)}
    return {"name": name, "address": server}


def random_key(rng):
    """A key as bytes (what the library looks up) and the str pymemcache is given:
    the str whose UTF-8 the bytes are, each stray byte as its surrogate escape."""
    kind = rng.randrange(10)
    if kind == 0:
        return b"", ""
    if kind <= 4:
        text = "".join(rng.choice(ASCII) for _ in range(rng.randrange(1, 40)))
    elif kind <= 7:
        text = "".join(rng.choice(ASCII + WIDE * 3) for _ in range(rng.randrange(1, 30)))
    elif kind == 8:
        text = "".join(rng.choice(ASCII) for _ in range(rng.randrange(200, 251)))
    else:
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20)))
        return raw, raw.decode("utf-8", "surrogateescape")
    return text.encode("utf-8"), text


def main():
    args = arguments(__doc__, 1, DEFAULT_EVALUATIONS)
    if args is None:
        return 2
    (owners_program,), evaluations = args
    try:
        import pymemcache
        from pymemcache.client.base import normalize_server_spec
        from pymemcache.client.hash import HashClient
    except ImportError:
        return peer_missing("pymemcache is not installed (Debian: python3-pymemcache)")
    version = getattr(pymemcache, "__version__", "?")
    rng = random.Random(20261202)
    sets = server_sets(rng)
    per_set = evaluations // len(sets)
    total_evaluations = 0
    started = time.monotonic()

    def one_set(index, spec):
        """The hasher's node strings become the node set's names "sI"."""
        nonlocal total_evaluations
        description, servers = spec
        client = HashClient(servers, allow_unicode_keys=True)
        names = {}
        nodes = []
        for i, server in enumerate(servers):
            name = "s%d" % i
            nodes.append(node_entry(name, server))
            names[client._make_client_key(normalize_server_spec(server))] = name
        if len(names) != len(servers):
            raise Failure("set %d: two servers share a node string" % index)
        count = max(1, min(KEYS_MAX, per_set // len(servers)))
        pairs = [random_key(rng) for _ in range(count)]
        # Wrap-around of the hash has no meaning here; the ties are in the unit
        # tests (check_placement_rendezvous.c).
        expected = []
        via_client = 0
        for raw, text in pairs:
            node = client.hasher.get_node(text)
            expected.append(names[node])
            try:
                raw.decode("utf-8")
                routable = (len(raw) <= 250 and raw and not any(
                    c in raw for c in b" \t\n\r\x0b\x0c\x00"))
            except UnicodeDecodeError:
                routable = False
            if routable:
                chosen = client._get_client(text)
                if chosen is not client.clients[node]:
                    raise Failure("set %d: _get_client(%r) is not the hasher's %s" %
                                  (index, text, node))
                via_client += 1
        total_evaluations += len(pairs) * len(servers)
        return Case("%-32s %4d servers (%d keys through _get_client)" %
                    (description, len(servers), via_client),
                    {"algorithm": "rendezvous", "nodes": nodes},
                    [raw for raw, _ in pairs], expected)

    with tempfile.TemporaryDirectory(prefix="shmring-pymemcache-") as directory:
        total_keys = compare_sets(owners_program, "pymemcache", directory, sets, one_set)
    print("pymemcache %s: %d sets, %d keys, %d node-hash evaluations, 0 mismatches "
          "(%.0f s)" % (version, len(sets), total_keys, total_evaluations,
                        time.monotonic() - started))
    return 0


if __name__ == "__main__":
    run(main)
