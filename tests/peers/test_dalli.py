#!/usr/bin/env python3
"""The `dalli` algorithm against the real thing: Debian's ruby-dalli. For each server
set, a Ruby program makes a Dalli::Client of the server strings, as a Ruby user does,
takes the client's ring, and asks it for each key's server (Ring#server_for_hash_key
of Ring#hash_for, the continuum search that server_for_key makes before its alive?
check, so that servers need not run; a lone server, which has no continuum, takes
every key); the answer, the server's place in the list,
must name the node that PEER_OWNERS gives. One more set runs real memcached servers
on loopback (TCP on 127.0.0.1, on [::1] where the host has IPv6, and a UNIX socket)
and goes the whole way users go: Ring#server_for_key with its alive? check, and
Client#set of keys that each server must then hold.

The sets cover 1 to 500 servers, weights from 1 to 65535, every server string form
Dalli takes (IPv4, [IPv6], host names, UTF-8 host names, default and explicit ports,
an octal port, UNIX sockets, memcached:// URIs by hash_key), two servers of the same
name (all points equal), and keys forged onto the points, one below and above
them, 0 and 0xffffffff (the wrap-around), besides random text, UTF-8, binary and
empty keys.

Usage: test_dalli.py PEER_OWNERS [KEYS_PER_SET]
Exits 77 (skipped) when ruby or Dalli is missing, 1 if so when SHMRING_REQUIRE_PEERS=1.
"""
import hashlib
import json
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time

from peerlib import (Case, Failure, arguments, compare_owners, compare_sets,
                     edge_targets, find_program, forge_key, ipv6_loopback,
                     library_owners, mixed_key, peer_missing, peer_servers, run,
                     start_memcached, start_on_free_port)

DEFAULT_KEYS = 100_000
# Each live memcached's memory (-m), in megabytes: the live set stores 2,000 keys.
MEGABYTES = 16

# Reads the server strings (JSON) from ARGV[0] and keys in hexadecimal on standard
# input; prints, per key, the index in the list of the server the ring gives it. With
# ARGV[1] == "live", the servers run: server_for_key (alive? included), then a set of
# each key of ARGV[2] (one per line, text) through the client.
RUBY = r"""
require 'dalli'
require 'json'
# Dalli 3.0.6 parses memcached:// URIs with URI without requiring it; the
# applications that use them (Rails) have loaded it.
require 'uri'
Dalli.logger.level = Logger::ERROR
servers = JSON.parse(File.read(ARGV[0]))
client = Dalli::Client.new(servers, threadsafe: false, socket_timeout: 5)
ring = client.send(:ring)
index = {}.compare_by_identity
ring.servers.each_with_index { |s, i| index[s] = i }
live = ARGV[1] == 'live'
out = []
STDIN.each_line do |line|
  key = [line.chomp].pack('H*')
  server = if live
             ring.server_for_key(key)
           elsif ring.continuum
             ring.send(:server_for_hash_key, ring.send(:hash_for, key))
           else
             ring.servers.first # server_for_key's choice of a lone server
           end
  out << index[server]
end
if live
  File.readlines(ARGV[2], chomp: true).each { |key| client.set(key, 'v', 0, raw: true) }
end
puts out
"""

def server(form, set_index, i, weight):
    """(Dalli's server string, our node's address, its hash_key or None, Dalli's
    name of the server) for server I of a set, in FORM."""
    suffix = ":%d" % weight if weight != 1 else ""
    if form == 0:
        host = "10.%d.%d.%d" % (set_index, i // 256, i % 256)
        return host + ":11211" + suffix, host + ":11211", None, host + ":11211"
    if form == 1:
        host = "10.%d.%d.%d" % (set_index, i // 256, i % 256)
        if weight != 1:
            return host + ":11211" + suffix, host, None, host + ":11211"
        return host, host, None, host + ":11211"
    if form == 2:
        host = "2001:db8:%x::%x" % (set_index, i)
        address = "[%s]:%d" % (host, 11300 + i)
        return address + suffix, address, None, "%s:%d" % (host, 11300 + i)
    if form == 3:
        host = "cache-%d-%d.example.net" % (set_index, i)
        return host + ":11211" + suffix, host + ":11211", None, host + ":11211"
    if form == 4:
        path = "/run/memcached/s%d-%d.sock" % (set_index, i)
        return path + suffix, path, None, path
    if form == 5:
        host = "cach\u00e9-%d-%d.example" % (set_index, i)
        address = "%s:%d" % (host, 20000 + i)
        return address + suffix, address, None, "%s:%d" % (host, 20000 + i)
    if form == 6:
        # Ruby's Integer() reads a port with a leading 0 in octal.
        host = "oct-%d-%d" % (set_index, i)
        address = "%s:0%o" % (host, 1000 + i)
        return address + suffix, address, None, "%s:%d" % (host, 1000 + i)
    # A URI: no weight in it (Dalli gives URIs weight 1), named host:port.
    host = "uri-%d-%d.example" % (set_index, i)
    uri = "memcached://user:secret@%s:%d" % (host, 11400 + i)
    return uri, uri, "%s:%d" % (host, 11400 + i), "%s:%d" % (host, 11400 + i)


def dalli_points(names, weights):
    """Dalli's continuum values (with repeats) for servers NAMES of WEIGHTS."""
    total = sum(weights)
    values = []
    for name, weight in zip(names, weights):
        count = int(len(names) * 160 * weight / float(total))
        for i in range(count):
            values.append(int(hashlib.sha1(("%s:%d" % (name, i)).encode()).hexdigest()[:8],
                              16))
    return values


def same_name_set():
    """Two servers of one name ("host" is "host:11211"), of other weights: every
    point of the lighter is also the heavier's, and the later server takes them."""
    strings = ["dup.example", "10.9.9.9:11211", "dup.example:11211:3",
               "dup.example:11211"]
    nodes = [{"name": "d0", "address": "dup.example", "weight": 1},
             {"name": "d1", "address": "10.9.9.9:11211", "weight": 1},
             {"name": "d2", "address": "dup.example:11211", "weight": 3},
             {"name": "d3", "address": "dup.example:11211", "weight": 1}]
    names = ["dup.example:11211", "10.9.9.9:11211", "dup.example:11211",
             "dup.example:11211"]
    return strings, nodes, names, [1, 1, 3, 1]


def make_set(rng, set_index, count):
    """The servers of a set: (Dalli strings, our nodes, Dalli's names, weights)."""
    strings, nodes, names, weights = [], [], [], []
    heavy = set_index % 3 == 1
    for i in range(count):
        form = (i + set_index) % 8
        weight = 1
        if form != 7 and heavy and rng.randrange(4) == 0:
            weight = rng.choice([2, 3, 5, 10, 100, 1000, 65535])
        string, address, hash_key, name = server(form, set_index, i, weight)
        node = {"name": "d%d" % i, "address": address, "weight": weight}
        if hash_key is not None:
            node["hash_key"] = hash_key
        strings.append(string)
        nodes.append(node)
        names.append(name)
        weights.append(weight)
    return strings, nodes, names, weights


def run_ruby(script, servers_path, keys, extra=()):
    r = subprocess.run(["ruby", script, servers_path] + list(extra),
                       input="".join(k.hex() + "\n" for k in keys),
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise Failure("ruby failed: %s" % r.stderr[-2000:])
    return ["d" + line for line in r.stdout.split("\n")[:-1]]


def held(endpoint, keys):
    """Which of KEYS (text) the memcached at ENDPOINT holds: pipelined `mg` gets."""
    family = socket.AF_UNIX if isinstance(endpoint, str) else (
        socket.AF_INET6 if ":" in endpoint[0] else socket.AF_INET)
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(endpoint)
        s.sendall("".join("mg %s v\r\n" % k for k in keys).encode() + b"mn\r\n")
        data = b""
        while not data.endswith(b"MN\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise Failure("memcached closed the connection")
            data += chunk
    lines = data.split(b"\r\n")
    found, i = set(), 0
    for key in keys:
        if lines[i].startswith(b"VA"):
            found.add(key)
            i += 2
        elif lines[i] == b"EN":
            i += 1
        else:
            raise Failure("memcached answered %r" % lines[i])
    return found


def live_set(owners_program, script, directory, servers, memcached, rng, keys_per_set):
    """The set of running servers, through server_for_key and Client#set."""
    endpoints = []
    port = start_on_free_port(
        lambda p: start_memcached(memcached, servers, ("127.0.0.1", p), "mc4.log",
                                  MEGABYTES), "memcached")
    endpoints.append((("127.0.0.1", port), "127.0.0.1:%d:3" % port,
                      "127.0.0.1:%d" % port, 3))
    if ipv6_loopback():
        port6 = start_on_free_port(
            lambda p: start_memcached(memcached, servers, ("::1", p), "mc6.log",
                                      MEGABYTES), "memcached")
        endpoints.append((("::1", port6), "[::1]:%d" % port6, "[::1]:%d" % port6, 1))
    path = os.path.join(servers.socket_directory(), "mc.sock")
    start_memcached(memcached, servers, path, "mcu.log", MEGABYTES)
    endpoints.append((path, path + ":2", path, 2))
    strings = [e[1] for e in endpoints]
    nodes = [{"name": "d%d" % i, "address": e[2], "weight": e[3]}
             for i, e in enumerate(endpoints)]
    servers_path = os.path.join(directory, "live.servers.json")
    nodeset_path = os.path.join(directory, "live.json")
    with open(servers_path, "w") as f:
        json.dump(strings, f)
    keys = [mixed_key(rng) for _ in range(keys_per_set)]
    stored = ["live-%d-%s" % (i, rng.randrange(10**9)) for i in range(2000)]
    stored_path = os.path.join(directory, "live.keys")
    with open(stored_path, "w") as f:
        f.write("".join(k + "\n" for k in stored))
    expected = run_ruby(script, servers_path, keys, ["live", stored_path])
    nodeset = {"algorithm": "dalli", "nodes": nodes}
    compare_owners("live set", "Dalli", keys, expected,
                   library_owners(owners_program, nodeset, keys, nodeset_path))
    owners = library_owners(owners_program, nodeset, [k.encode() for k in stored],
                            nodeset_path)
    for i, (endpoint, _, _, _) in enumerate(endpoints):
        want = {k for k, owner in zip(stored, owners) if owner == "d%d" % i}
        got = held(endpoint, stored)
        if got != want:
            raise Failure("live set: memcached %r holds %d keys, the library gives it "
                          "%d (%d differ)" % (endpoint, len(got), len(want),
                                              len(got ^ want)))
    return len(keys) + len(stored), len(endpoints)


def main():
    args = arguments(__doc__, 1, DEFAULT_KEYS)
    if args is None:
        return 2
    (owners_program,), keys_per_set = args
    if shutil.which("ruby") is None:
        return peer_missing("ruby is not installed (Debian: ruby-dalli)")
    if subprocess.run(["ruby", "-e", "require 'dalli'"], capture_output=True).returncode:
        return peer_missing("Dalli is not installed (Debian: ruby-dalli)")
    memcached = find_program("memcached")
    if memcached is None:
        return peer_missing("memcached is not installed (Debian: memcached)")
    version = subprocess.run(["ruby", "-e", "require 'dalli'; print Dalli::VERSION"],
                             capture_output=True, text=True).stdout
    rng = random.Random(20261202)
    counts = [1, 2, 3, 4, 5, 7, 8, 10, 16, 31, 50, 64, 100, 127, 128, 200, 255, 256, 300,
              400, 499, 500]
    # None: same_name_set().
    sets = counts + [None]
    started = time.monotonic()
    status = 1
    with tempfile.TemporaryDirectory(prefix="shmring-dalli-") as directory, \
            peer_servers() as servers:
        script = os.path.join(directory, "ring.rb")
        with open(script, "w") as f:
            f.write(RUBY)

        def one_set(index, count):
            """Server i of Dalli's list is node "dI" of the node set."""
            if count is None:
                strings, nodes, names, weights = same_name_set()
            else:
                strings, nodes, names, weights = make_set(rng, index, count)
            keys = [mixed_key(rng) for _ in range(keys_per_set)]
            values = dalli_points(names, weights)
            targets, shared = edge_targets(values)
            keys += [forge_key(b"edge%d" % i, t) for i, t in enumerate(targets)]
            servers_path = os.path.join(directory, "set%d.servers.json" % index)
            with open(servers_path, "w") as f:
                json.dump(strings, f)
            return Case("%s, %6d points (%d shared)" %
                        ("same name: 4 servers" if count is None else
                         "%3d servers" % count, len(values), len(shared)),
                        {"algorithm": "dalli", "nodes": nodes}, keys,
                        run_ruby(script, servers_path, keys))

        total = compare_sets(owners_program, "Dalli", directory, sets, one_set)
        n, live_count = live_set(owners_program, script, directory, servers, memcached,
                                 rng, keys_per_set // 4)
        total += n
        print("live set: %d running memcached servers, %d keys: 0 mismatches" %
              (live_count, n))
        print("Dalli %s: %d sets, %d keys, 0 mismatches (%.0f s)" %
              (version, len(sets) + 1, total, time.monotonic() - started))
        status = 0
    return status


if __name__ == "__main__":
    run(main)
