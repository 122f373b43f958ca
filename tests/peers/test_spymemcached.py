#!/usr/bin/env python3
"""The `spymemcached` algorithm against the real thing: Debian's libspymemcached-java
on its default JDK. One Java program, compiled here with javac against
/usr/share/java/spymemcached.jar, reads every server set and its keys from standard
input and builds each set's locator as a client would: AddrUtil.getAddresses() parses
the server list, the connection factory makes a MemcachedNode per address
(createMemcachedNode(), over an unconnected SocketChannel) and its own createLocator()
builds the KetamaNodeLocator: KetamaConnectionFactory() for the default configuration,
ConnectionFactoryBuilder with Locator.CONSISTENT and setHashAlg() for the other hashes,
KetamaConnectionFactory with a weights map, or KetamaNodeLocator with a
DefaultKetamaNodeLocatorConfiguration of other repetitions. For each key (sent in
hexadecimal, decoded with new String(bytes, UTF_8)) it prints the index of
getPrimary()'s node; node i of the list must be what PEER_OWNERS gives the key from
the node set of the same servers. Down nodes of a node set are servers the client's
list leaves out.

Usage: test_spymemcached.py PEER_OWNERS [KEYS_PER_SET]
Exits 77 (skipped) when javac or spymemcached is missing, 1 if so when
SHMRING_REQUIRE_PEERS=1.
"""
import random
import socket
import subprocess
import tempfile
import time

from peerlib import (WIDE_TEXT, Case, Failure, arguments, compare_sets, compile_java,
                     java_missing, run)

SPYMEMCACHED = "/usr/share/java/spymemcached.jar"
DEFAULT_KEYS = 100_000

JAVA = r"""
import java.io.*;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.*;
import net.spy.memcached.*;
import net.spy.memcached.util.DefaultKetamaNodeLocatorConfiguration;

/* Reads sets of "HOW HASH REPETITIONS WEIGHTS|- KEYS", the server list, then KEYS
 * keys in hexadecimal; prints each key's node index, and "end" after each set. */
public class SpymemcachedPeer {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8), 1 << 16);
        PrintWriter out = new PrintWriter(new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16));
        String line;
        while ((line = in.readLine()) != null) {
            String[] head = line.split(" ");
            String how = head[0];
            HashAlgorithm hash = DefaultHashAlgorithm.valueOf(head[1]);
            final int repetitions = Integer.parseInt(head[2]);
            int keys = Integer.parseInt(head[4]);
            List<InetSocketAddress> addresses = AddrUtil.getAddresses(in.readLine());
            Map<InetSocketAddress, Integer> weights = new HashMap<>();
            if (!head[3].equals("-")) {
                String[] given = head[3].split(",");
                for (int i = 0; i < given.length; i++)
                    weights.put(addresses.get(i), Integer.parseInt(given[i]));
            }
            KetamaConnectionFactory factory = new KetamaConnectionFactory(16, 16384, 1000,
                    hash, KetamaNodeKeyFormatter.Format.SPYMEMCACHED, weights);
            List<MemcachedNode> nodes = new ArrayList<>();
            List<SocketChannel> channels = new ArrayList<>();
            for (InetSocketAddress address : addresses) {
                SocketChannel channel = SocketChannel.open();
                channels.add(channel);
                nodes.add(factory.createMemcachedNode(address, channel, 16384));
            }
            NodeLocator locator;
            if (how.equals("default"))
                locator = new KetamaConnectionFactory().createLocator(nodes);
            else if (how.equals("builder"))
                locator = new ConnectionFactoryBuilder()
                        .setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
                        .setHashAlg(hash).build().createLocator(nodes);
            else if (how.equals("weights"))
                locator = factory.createLocator(nodes);
            else
                locator = new KetamaNodeLocator(nodes, hash, weights,
                        new DefaultKetamaNodeLocatorConfiguration() {
                            @Override
                            public int getNodeRepetitions() {
                                return repetitions;
                            }
                        });
            IdentityHashMap<MemcachedNode, Integer> index = new IdentityHashMap<>();
            for (int i = 0; i < nodes.size(); i++)
                index.put(nodes.get(i), i);
            for (int k = 0; k < keys; k++) {
                String hex = in.readLine();
                byte[] bytes = new byte[hex.length() / 2];
                for (int i = 0; i < bytes.length; i++)
                    bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
                out.println(index.get(locator.getPrimary(
                        new String(bytes, StandardCharsets.UTF_8))));
            }
            out.println("end");
            for (SocketChannel channel : channels)
                channel.close();
        }
        out.flush();
    }
}
"""

# DefaultHashAlgorithm's names, by ours.
JAVA_HASHES = {"md5": "KETAMA_HASH", "native": "NATIVE_HASH", "crc32": "CRC_HASH",
               "fnv1_64": "FNV1_64_HASH", "fnv1a_64": "FNV1A_64_HASH",
               "fnv1_32": "FNV1_32_HASH", "fnv1a_32": "FNV1A_32_HASH"}

# (servers, how the client is built, hash, repetitions, weights, what is special).
# "default" is KetamaConnectionFactory(); "builder" ConnectionFactoryBuilder's
# CONSISTENT locator; "weights" KetamaConnectionFactory with a weights map ("random",
# or "equal": every server 2); "custom" a configuration of other repetitions.
SETS = [
    (1, "default", "md5", 160, None, "one server: every key wraps to it"),
    (2, "default", "md5", 160, None, ""),
    (3, "default", "md5", 160, None, "localhost"),
    (5, "builder", "native", 160, None, ""),
    (7, "builder", "crc32", 160, None, "fifteen-bit points: equal points"),
    (10, "builder", "fnv1_64", 160, None, ""),
    (16, "builder", "fnv1a_64", 160, None, ""),
    (31, "builder", "fnv1_32", 160, None, ""),
    (50, "builder", "fnv1a_32", 160, None, ""),
    (64, "weights", "md5", 160, "random", ""),
    (100, "weights", "native", 160, "random", ""),
    (127, "weights", "crc32", 160, "random", ""),
    (128, "weights", "fnv1a_32", 160, "equal", "a map of equal weights"),
    (200, "default", "md5", 160, None, "down nodes"),
    (255, "builder", "native", 160, None, "one address twice"),
    (256, "custom", "md5", 100, None, "repetitions"),
    (300, "custom", "native", 7, None, "repetitions"),
    (400, "default", "md5", 160, None, "down nodes"),
    (499, "builder", "crc32", 160, None, "more points than values"),
    (500, "default", "md5", 160, None, ""),
    (500, "weights", "md5", 160, "random", "down nodes"),
    (20, "custom", "fnv1_64", 1000, None, "repetitions"),
    (8, "default", "md5", 160, None, "one address twice"),
    (12, "custom", "md5", 6, "random", "repetitions"),
]

def random_key(rng):
    """The UTF-8 of a string, or (a tenth of them) any bytes, which the JDK decodes
    with U+FFFD for what is malformed; sometimes the empty key."""
    kind = rng.randrange(20)
    if kind == 0:
        return b""
    if kind <= 11:
        return b"key:%d:%d" % (rng.getrandbits(40), rng.randrange(1000))
    if kind <= 17:
        return "".join(rng.choice(WIDE_TEXT + "abcxyz0123")
                       for _ in range(rng.randrange(1, 16))).encode("utf-8")
    return rng.randbytes(rng.randrange(0, 24))


def localhost_ipv4():
    """What the JDK resolves localhost to: its first IPv4 address (the JDK prefers
    IPv4 unless told otherwise)."""
    return socket.getaddrinfo("localhost", None, socket.AF_INET)[0][4][0]


def server_list(count, index, special, rng):
    """(address, hash_key or None) of each server: IPv4, IPv6 bare and bracketed (in
    upper case too), IPv4-mapped and IPv4-compatible IPv6, various ports; localhost
    with the key the JDK gives it."""
    servers = []
    for i in range(count):
        form = (i + index) % 6
        port = (11211, 11212, 1, 65535, 20000 + i)[(i * 7 + index) % 5]
        if form == 0:
            servers.append(("10.%d.%d.%d:%d" % (index, i // 250, i % 250, port), None))
        elif form == 1:
            servers.append(("2001:db8:%x::%x:%d" % (index, i, port), None))
        elif form == 2:
            servers.append(("[2001:db8:0:%x:0:0:%x:1]:%d" % (index, i, port), None))
        elif form == 3:
            servers.append(("[::ffff:10.%d.%d.%d]:%d" % (index, i // 250, i % 250, port),
                            None))
        elif form == 4:
            servers.append(("192.0.2.%d:%d" % (i % 250, 11211 + i // 250 + index), None))
        elif i % 2:
            servers.append(("[::10.%d.%d.%d]:%d" % (index, i // 250, i % 250, port), None))
        else:
            servers.append(("[2001:DB8::%X:%X]:%d" % (index, i, port), None))
    if special == "localhost":
        ip = localhost_ipv4()
        servers[1] = ("localhost:11211", "localhost/%s:11211" % ip)
        servers[2] = ("localhost:0", "localhost/%s:0" % ip)
    if special == "one address twice":
        twin = rng.randrange(1, count)
        servers[twin] = servers[rng.randrange(twin)]
    return servers


def run_set(index, spec, rng, keys_per_set):
    """The node set of SETS[INDEX], the client's input for it, and its keys."""
    count, how, hash_name, repetitions, weighting, special = spec
    servers = server_list(count, index, special, rng)
    if weighting == "random":
        weights = [rng.randrange(1, 100) for _ in servers]
    elif weighting == "equal":
        weights = [2] * count
    else:
        weights = [1] * count
    down = set()
    if special == "down nodes":
        down = set(rng.sample(range(count), count // 10))
    nodes = []
    for i, (address, hash_key) in enumerate(servers):
        node = {"name": "n%d" % i, "address": address, "weight": weights[i]}
        if hash_key is not None:
            node["hash_key"] = hash_key
        if i in down:
            node["state"] = "down"
        nodes.append(node)
    node_set = {"algorithm": "spymemcached", "hash": hash_name, "vnodes": repetitions,
                "nodes": nodes}
    up = [i for i in range(count) if i not in down]
    keys = [random_key(rng) for _ in range(keys_per_set)]
    client = "%s %s %d %s %d\n%s\n" % (
        how, JAVA_HASHES[hash_name], repetitions,
        ",".join(str(weights[i]) for i in up) if weighting else "-", len(keys),
        " ".join(servers[i][0] for i in up))
    client += "\n".join(key.hex() for key in keys) + "\n"
    return node_set, up, keys, client


def main():
    args = arguments(__doc__, 1, DEFAULT_KEYS)
    if args is None:
        return 2
    (owners_program,), keys_per_set = args
    missing = java_missing(SPYMEMCACHED, "libspymemcached-java")
    if missing is not None:
        return missing
    rng = random.Random(20261202)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="shmring-spymemcached-") as directory:
        classpath = compile_java(directory, SPYMEMCACHED, "SpymemcachedPeer", JAVA)
        sets = [run_set(index, spec, rng, keys_per_set) for index, spec in enumerate(SETS)]
        # One JVM answers every set.
        java = subprocess.run(["java", "-cp", classpath, "SpymemcachedPeer"],
                              input="".join(client for _, _, _, client in sets),
                              capture_output=True, text=True, check=False)
        if java.returncode != 0:
            raise Failure("java failed: %s" % java.stderr[-2000:])
        answers = java.stdout.split("end\n")
        if len(answers) != len(SETS) + 1 or answers[-1] != "":
            raise Failure("java answered %d sets of %d" % (len(answers) - 1, len(SETS)))

        def one_set(index, prepared):
            """The index in the client's list of up servers is node "nI" of the node
            set, I its place among all."""
            node_set, up, keys, _ = prepared
            count, how, hash_name, repetitions, weighting, special = SETS[index]
            return Case("%3d servers, %-7s %-8s x%-4d %s%s" % (
                count, how, hash_name, repetitions,
                "weights " + weighting + " " if weighting else "", special),
                node_set, keys,
                ["n%d" % up[int(line)] for line in answers[index].split("\n")[:-1]])

        total = compare_sets(owners_program, "spymemcached", directory, sets, one_set)
    print("spymemcached (%s): %d sets, %d keys, 0 mismatches (%.0f s)" %
          (SPYMEMCACHED, len(SETS), total, time.monotonic() - started))
    return 0


if __name__ == "__main__":
    run(main)
