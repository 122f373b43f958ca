#!/usr/bin/env python3
"""The `jump` algorithm against the real thing: Debian's libguava-java on its
default JDK. A Java program, compiled here with javac against /usr/share/java/guava.jar,
reads keys and prints Hashing.consistentHash(Hashing.murmur3_128().hashString(key,
UTF_8), n) for text keys (as a Java user writes it) and
consistentHash(murmur3_128().hashBytes(key), n) for byte keys; bucket i must be node i
of the node set, whose owner PEER_OWNERS gives.

Usage: test_guava.py PEER_OWNERS [KEYS_PER_SET]
Exits 77 (skipped) when javac or Guava is missing, 1 if so when
SHMRING_REQUIRE_PEERS=1.
"""
import random
import subprocess
import tempfile
import time

from peerlib import (WIDE_TEXT, Case, Failure, arguments, compile_java, compare_sets,
                     java_missing, run)

GUAVA = "/usr/share/java/guava.jar"
DEFAULT_KEYS = 100_000

JAVA = r"""
import com.google.common.hash.HashCode;
import com.google.common.hash.Hashing;
import java.io.*;
import java.nio.charset.StandardCharsets;

public class JumpPeer {
    public static void main(String[] args) throws IOException {
        int buckets = Integer.parseInt(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.US_ASCII), 1 << 16);
        PrintWriter out = new PrintWriter(new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16));
        String line;
        while ((line = in.readLine()) != null) {
            byte[] bytes = new byte[(line.length() - 1) / 2];
            for (int i = 0; i < bytes.length; i++)
                bytes[i] = (byte) Integer.parseInt(line.substring(1 + 2 * i, 3 + 2 * i), 16);
            HashCode hash = line.charAt(0) == 's'
                    ? Hashing.murmur3_128().hashString(
                          new String(bytes, StandardCharsets.UTF_8), StandardCharsets.UTF_8)
                    : Hashing.murmur3_128().hashBytes(bytes);
            out.println(Hashing.consistentHash(hash, buckets));
        }
        out.flush();
    }
}
"""


def random_key(rng):
    """("s", UTF-8 bytes of a string) or ("b", any bytes)."""
    kind = rng.randrange(10)
    if kind == 0:
        return "s", b""
    if kind <= 5:
        return "s", "".join(chr(rng.randrange(0x20, 0x7f))
                            for _ in range(rng.randrange(1, 40))).encode()
    if kind <= 8:
        text = "".join(rng.choice(WIDE_TEXT + "abcxyz0123")
                       for _ in range(rng.randrange(1, 30)))
        return "s", text.encode("utf-8")
    return "b", bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))


def main():
    args = arguments(__doc__, 1, DEFAULT_KEYS)
    if args is None:
        return 2
    (owners_program,), keys_per_set = args
    missing = java_missing(GUAVA, "libguava-java")
    if missing is not None:
        return missing
    rng = random.Random(20261202)
    counts = [1, 2, 3, 4, 5, 7, 8, 10, 16, 31, 50, 64, 100, 127, 128, 200, 255, 256, 300,
              400, 499, 500]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="shmring-guava-") as directory:
        classpath = compile_java(directory, GUAVA, "JumpPeer", JAVA)

        def one_set(index, count):
            """Bucket i of Guava's answer is node "bI" of the node set."""
            forms = ["10.0.%d.%d:11211", "[2001:db8::%x:%x]:11211", "cache-%d-%d.example",
                     "unix:/run/mc-%d-%d.sock"]
            nodes = [{"name": "b%d" % i,
                      "address": forms[(i + index) % 4] % (index, i)}
                     for i in range(count)]
            keys = [random_key(rng) for _ in range(keys_per_set)]
            java = subprocess.run(["java", "-cp", classpath, "JumpPeer", str(count)],
                                  input="".join(kind + raw.hex() + "\n"
                                                for kind, raw in keys),
                                  capture_output=True, text=True, check=False)
            if java.returncode != 0:
                raise Failure("set %d: java failed: %s" % (index, java.stderr[-2000:]))
            return Case("%3d buckets, %d byte keys" %
                        (count, sum(1 for k, _ in keys if k == "b")),
                        {"algorithm": "jump", "hash": "murmur3_128", "nodes": nodes},
                        [raw for _, raw in keys],
                        ["b" + line for line in java.stdout.split("\n")[:-1]],
                        shown=keys)

        total = compare_sets(owners_program, "Guava", directory, counts, one_set)
    print("Guava (%s): %d sets, %d keys, 0 mismatches (%.0f s)" %
          (GUAVA, len(counts), total, time.monotonic() - started))
    return 0


if __name__ == "__main__":
    run(main)
