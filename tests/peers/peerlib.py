"""What the peer tests share: their command line and exit status, starting real
servers on loopback (always stopped, even on failure), free ports, memcached, Java
programs, the keys to send (and keys forged onto a chosen CRC-32), names whose MD5
points collide, the library's answers (through ringctl on a private ring directory,
or peer_owners on a node set) and their comparison with the peer's, key for key and
set after set, and what to do when a peer is missing."""
import contextlib
import ctypes
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib


class Failure(Exception):
    pass


def peers_required():
    """Whether the build requires the peers (SHMRING_REQUIRE_PEERS, which
    tools/test.sh turns on), so that CI cannot pass without running them."""
    return os.environ.get("SHMRING_REQUIRE_PEERS") == "1"


def arguments(usage, required, default_count):
    """A peer test's command line: its REQUIRED first arguments, then an optional
    count (of keys, or of evaluations), DEFAULT_COUNT when it is not given. Returns
    (the required arguments, the count), or None after printing USAGE (the test's
    docstring) when fewer are given: the test then exits 2."""
    if len(sys.argv) < 1 + required:
        print(usage)
        return None
    given = sys.argv[1:1 + required]
    count = int(sys.argv[1 + required]) if len(sys.argv) > 1 + required else default_count
    return given, count


def run(main):
    """Exits with the status MAIN() returns; a Failure that escapes it is printed as
    "FAIL: <reason>" and exits 1."""
    try:
        status = main()
    except Failure as e:
        print("FAIL: %s" % e)
        status = 1
    sys.exit(status)


def find_program(name):
    """The path of program NAME: on PATH, or in the sbin directories, where Debian
    puts nginx and nutcracker and which an ordinary user's PATH leaves out (as
    CMake's SHMRING_REQUIRE_PEERS check looks); None if neither has it."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")


def peer_missing(what):
    """The exit status for a test whose peer is not installed: 77 (skipped), or 1
    (failed) when the peers are required."""
    if peers_required():
        print("FAIL: %s, and SHMRING_REQUIRE_PEERS is on (tools/deps.sh installs it)" %
              what)
        return 1
    print("skipped: %s" % what)
    return 77


# Bytes a forged key may use: they need no escaping in a query string (nginx keeps
# them in $arg_key as sent), memcached and nutcracker take them in a key, and ringctl
# reads them as one line.
KEY_BYTES = (b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-!*:@,/()")

# A forged key is a label, "-", then FORGE_BYTES bytes, each "A" or "C" (0x41, 0x43:
# both in KEY_BYTES, one bit apart). CRC-32 is affine over GF(2): between keys of one
# length, flipping that bit of tail byte i changes the CRC by a constant column that
# depends on i alone. The 32 columns are linearly independent (checked below), so the
# choice of "A" or "C" for each byte reaches every CRC-32 exactly once: forging
# solves a linear system, never searches, and cannot fail.
FORGE_BYTES = 32


def forge_basis(suffix):
    """The columns in row-echelon form, for tails followed by SUFFIX: {leading bit:
    (column, the tail bytes whose flips sum to it, as a bit mask)}. A fixed suffix
    multiplies each column by the same invertible factor, so the columns stay
    independent whatever it is."""
    tail = b"A" * FORGE_BYTES
    crc = zlib.crc32(tail + suffix)
    basis = {}
    for i in range(FORGE_BYTES):
        column = zlib.crc32(tail[:i] + b"C" + tail[i + 1:] + suffix) ^ crc
        flips = 1 << i
        while column:
            top = column.bit_length() - 1
            if top not in basis:
                basis[top] = (column, flips)
                break
            column ^= basis[top][0]
            flips ^= basis[top][1]
    if len(basis) != 32:
        raise Failure("the forging columns span %d bits, not 32" % len(basis))
    return basis


# The bases by suffix length (the columns depend on nothing else).
FORGE_BASES = {0: forge_basis(b"")}


def forge_key(label, target, suffix=b""):
    """A key of KEY_BYTES whose CRC-32 (nginx's key hash, nutcracker's crc32a) is
    TARGET: LABEL (of KEY_BYTES), "-", and the tail that makes the CRC TARGET. With
    SUFFIX, the CRC-32 of the key followed by SUFFIX is TARGET instead."""
    basis = FORGE_BASES.get(len(suffix))
    if basis is None:
        basis = FORGE_BASES[len(suffix)] = forge_basis(suffix)
    prefix = label + b"-"
    tail = bytearray(b"A" * FORGE_BYTES)
    change = zlib.crc32(prefix + tail + suffix) ^ target
    flips = 0
    for top in sorted(basis, reverse=True):
        if change >> top & 1:
            change ^= basis[top][0]
            flips ^= basis[top][1]
    for i in range(FORGE_BYTES):
        if flips >> i & 1:
            tail[i] = ord("C")
    key = prefix + bytes(tail)
    if zlib.crc32(key + suffix) != target or not all(b in KEY_BYTES for b in key):
        raise Failure("forged %r for %08x, whose CRC-32 is %08x" %
                      (key, target, zlib.crc32(key + suffix)))
    return key


def edge_targets(points):
    """The hashes to aim keys at on a continuum of POINTS (a list of 32-bit values,
    repeats included): 0 and 0xffffffff, the first, middle and last points and one
    below and above each, and the same around every point that occurs more than
    once. Returns (sorted targets, the shared points)."""
    seen, shared = set(), set()
    for p in points:
        (shared if p in seen else seen).add(p)
    ordered = sorted(seen)
    targets = {0, 0xFFFFFFFF}
    for p in [ordered[0], ordered[len(ordered) // 2], ordered[-1]] + sorted(shared):
        targets |= {p - 1, p, p + 1}
    return sorted(t for t in targets if 0 <= t <= 0xFFFFFFFF), sorted(shared)


# Printable ASCII for any byte: byte b becomes 0x20 + b mod 95.
PRINTABLE = bytes(0x20 + b % 95 for b in range(256))
# Characters of every UTF-8 length, a space, a tab and a newline.
WIDE_TEXT = "\u00e9\u00ff\u0100\u20ac\u4e2d\U0001f600\U00010341 \t\n"


def mixed_key(rng):
    """Empty, printable ASCII, UTF-8 (with spaces, tabs and newlines) or any bytes;
    drawn whole from the generator, which keeps 100,000 keys a set cheap."""
    kind = rng.randrange(10)
    if kind == 0:
        return b""
    if kind <= 5:
        return rng.randbytes(rng.randrange(1, 40)).translate(PRINTABLE)
    if kind <= 8:
        return "".join(rng.choices(WIDE_TEXT + "abcxyz0123",
                                   k=rng.randrange(1, 30))).encode("utf-8")
    return rng.randbytes(rng.randrange(0, 40))


# Characters of every UTF-8 length, and ASCII separators.
WIDE_CHARACTERS = ["\u00e9", "\u00ff", "\u0100", "\u0141", "\u20ac", "\u4e2d", "\uff21",
                   "\U0001f600", "\U00010341", "a", "Z", "-", ":"]


def client_text_key(rng, kind):
    """A text key of KIND (drawn by the caller from 0 to 9; kind 9 is the caller's
    own): an ASCII user id for 0 to 4, 1 to 24 of WIDE_CHARACTERS for 5 to 7, 200 to
    398 hexadecimal digits for 8."""
    if kind <= 4:
        return "user:%d:%s" % (rng.randrange(10**9), rng.randbytes(6).hex())
    if kind <= 7:
        return "".join(rng.choices(WIDE_CHARACTERS, k=rng.randrange(1, 25)))
    return rng.randbytes(rng.randrange(100, 200)).hex()


def md5_colliding_names(prefix, count):
    """COUNT pairs of names PREFIX + "N" whose first digests, MD5("NAME-0"), have a
    little-endian word in common: a point both names put on a ketama-style ring
    (four points a digest). A birthday search, deterministic; no name is in two
    pairs."""
    seen, used, pairs = {}, set(), []
    i = 0
    while len(pairs) < count:
        name = "%s%d" % (prefix, i)
        i += 1
        digest = hashlib.md5(("%s-0" % name).encode()).digest()
        for r in range(4):
            word = int.from_bytes(digest[4 * r:4 * r + 4], "little")
            other = seen.get(word)
            if other is not None and other not in used and name not in used:
                pairs.append((other, name))
                used |= {other, name}
                break
            seen[word] = name
    return pairs


def java_missing(jar, package):
    """peer_missing()'s status when javac (or java) or JAR (of Debian's PACKAGE) is
    not installed, else None."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        return peer_missing("javac is not installed (Debian: default-jdk-headless)")
    if not os.path.exists(jar):
        return peer_missing("%s is not installed (Debian: %s)" %
                            (os.path.basename(jar), package))
    return None


def compile_java(directory, jar, class_name, source):
    """Compiles SOURCE, the Java class CLASS_NAME, against JAR into DIRECTORY;
    returns the class path that runs it."""
    path = os.path.join(directory, class_name + ".java")
    with open(path, "w") as f:
        f.write(source)
    subprocess.run(["javac", "-cp", jar, "-d", directory, path], check=True)
    return jar + ":" + directory


def die_with_parent():
    """Runs in each server before exec: it is killed if the test dies without its
    cleanup (SIGKILL on a ctest timeout)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port(host="127.0.0.1"):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Servers:
    """The processes a test starts, stopped in reverse order by stop_all()."""

    def __init__(self):
        self.processes = []
        self.tmp = tempfile.mkdtemp(prefix="shmring-peers-")
        os.chmod(self.tmp, 0o755)

    def socket_directory(self):
        """A directory for Unix sockets that any user may make sockets in, as
        memcached does after it has dropped root for nobody."""
        path = os.path.join(self.tmp, "sockets")
        os.makedirs(path, exist_ok=True)
        os.chmod(path, 0o777)
        return path

    def start(self, argv, log_name):
        log = open(os.path.join(self.tmp, log_name), "wb")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        p.log_path = log.name
        self.processes.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.processes.remove(p)

    def stop_all(self):
        # Every server is asked to stop before any is waited for: memcached takes
        # half a second to wind down its threads, and the test starts forty.
        for p in reversed(self.processes):
            if p.poll() is None:
                p.terminate()
        for p in reversed(list(self.processes)):
            self.stop(p)
        shutil.rmtree(self.tmp, ignore_errors=True)


@contextlib.contextmanager
def peer_servers():
    """The Servers of a peer test's main(), all stopped when the block ends. A Failure
    raised in the block is printed as "FAIL: <reason>" (before the servers stop) and
    ends the block, so that what follows it returns the exit status 1."""
    servers = Servers()
    try:
        yield servers
    except Failure as e:
        print("FAIL: %s" % e)
    finally:
        servers.stop_all()


def ipv6_loopback():
    """Whether this host has IPv6 loopback ([::1]) to listen on."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def connect(endpoint, timeout):
    """A connection to ENDPOINT: a (host, port) pair or a Unix socket path."""
    if isinstance(endpoint, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(endpoint)
        except OSError:
            sock.close()
            raise
        return sock
    return socket.create_connection(endpoint, timeout=timeout)


def endpoint_text(endpoint):
    return endpoint if isinstance(endpoint, str) else "%s:%d" % endpoint


class PortTaken(Failure):
    """A server could not bind its port because another process holds it: a port
    that bind(0) gave (free_port()) can be taken by another test run between the
    moment it is given and the moment the server binds it."""


def listens_on(process, port):
    """Whether a socket of PROCESS listens on TCP PORT: /proc/net/tcp and tcp6 give
    each listening socket's inode, /proc/PID/fd the process's sockets."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().split("\n")[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[3] == "0A" and \
                    int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add("socket:[%s]" % fields[9])
    fd_dir = "/proc/%d/fd" % process.pid
    try:
        descriptors = os.listdir(fd_dir)
    except OSError:
        return False
    for fd in descriptors:
        try:
            if os.readlink(os.path.join(fd_dir, fd)) in inodes:
                return True
        except OSError:
            continue
    return False


def wait_listening(endpoint, process, what, limit=20.0):
    """Polls until ENDPOINT ((host, port) or a Unix socket path) accepts a
    connection of PROCESS's own: a readiness check, bounded, that also notices the
    server dying. A TCP port that answers counts only when PROCESS holds the
    listening socket; another process's listener on it (another test run's server
    on a port both were given) is waited out, and when PROCESS then exits saying
    that the address is in use, PortTaken tells the caller to try another port."""
    deadline = time.monotonic() + limit
    while True:
        if process.poll() is not None:
            log = getattr(process, "log_path", None)
            said = ""
            if log is not None:
                with open(log, errors="replace") as f:
                    said = f.read()
            kind = PortTaken if "Address already in use" in said else Failure
            raise kind("%s exited with status %d before listening on %s: %s" %
                       (what, process.returncode, endpoint_text(endpoint),
                        said.strip()[-300:]))
        try:
            with connect(endpoint, 1):
                if isinstance(endpoint, str) or listens_on(process, endpoint[1]):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise Failure("%s is not listening on %s" % (what, endpoint_text(endpoint)))
        time.sleep(0.02)


def start_on_free_port(start, what, tries=5):
    """Calls START(port) with a free loopback port until it starts a server that
    listens there, and returns the port: START raises PortTaken when another process
    took the port first, and then another port is given, TRIES times at most."""
    for _ in range(tries):
        try:
            port = free_port()
            start(port)
            return port
        except PortTaken as e:
            taken = e
    raise Failure("%s: %d ports in a row were taken by other processes; last: %s" %
                  (what, tries, taken))


def start_memcached(memcached, servers, endpoint, log_name, megabytes):
    """Starts a memcached of MEGABYTES and one thread among SERVERS at ENDPOINT (a
    (host, port) pair, or a Unix socket path in SERVERS.socket_directory()) and
    waits until it listens there (PortTaken when another process took the port
    first; the memcached is gone then)."""
    where = (["-s", endpoint, "-a", "0777"] if isinstance(endpoint, str) else
             ["-l", endpoint[0], "-p", str(endpoint[1])])
    p = servers.start([memcached] + where + ["-U", "0", "-m", str(megabytes), "-t", "1",
                                             "-u", "nobody"], log_name)
    try:
        wait_listening(endpoint, p, "memcached")
    except PortTaken:
        servers.stop(p)
        raise


class Library:
    """The library's answers: `ringctl load` of a node set into a private ring
    directory, then `ringctl lookup --stdin`."""

    def __init__(self, ringctl, peer_keys, directory):
        self.ringctl = ringctl
        self.peer_keys = peer_keys
        self.dir = directory

    def run(self, *args, stdin=None):
        r = subprocess.run([self.ringctl, "--dir", self.dir] + list(args),
                           input=stdin, capture_output=True)
        if r.returncode != 0:
            raise Failure("ringctl %s: %s" % (" ".join(args), r.stderr.decode()))
        return r.stdout

    def keys(self, nodeset_path, prefix, count, seed, exact_tries=None):
        """COUNT keys (bytes) for the ring of NODESET_PATH, with the wrap-around and
        on-a-point keys peer_keys mines (trying EXACT_TRIES candidates for the
        latter, or its default); returns (keys, wraps, exact)."""
        argv = [self.peer_keys, nodeset_path, prefix, str(count), str(seed)]
        if exact_tries is not None:
            argv.append(str(exact_tries))
        r = subprocess.run(argv, capture_output=True, check=True)
        words = r.stderr.decode().split()
        keys = r.stdout.split(b"\n")[:-1]
        return keys, int(words[1]), int(words[3])

    def owners(self, ring, nodeset, keys):
        """Loads NODESET (a dict) as RING and returns {key: node name}."""
        path = os.path.join(self.dir, ring + ".json")
        with open(path, "w") as f:
            json.dump(nodeset, f)
        return self.owners_of_file(ring, path, keys)

    def owners_of_file(self, ring, path, keys):
        """Loads the JSON node set at PATH as RING and returns {key: node name}."""
        self.run("-r", ring, "load", path)
        out = self.run("-r", ring, "lookup", "--stdin", stdin=b"\n".join(keys) + b"\n")
        answers = {}
        for line in out.split(b"\n")[:-1]:
            key, name, _address = line.split(b"\t")
            answers[key] = name.decode()
        self.run("-r", ring, "destroy")
        if len(answers) != len(keys):
            raise Failure("ringctl answered %d of %d keys" % (len(answers), len(keys)))
        return answers


def library_owners(owners_program, nodeset, keys, path):
    """The name of the node the library gives each of KEYS (bytes), in order:
    OWNERS_PROGRAM (peer_owners, which builds the snapshot in process) over the node
    set NODESET (a dict), written to PATH."""
    with open(path, "w") as f:
        json.dump(nodeset, f)
    r = subprocess.run([owners_program, path],
                       input="".join(k.hex() + "\n" for k in keys),
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise Failure("peer_owners %s failed: %s" % (path, r.stderr.strip()))
    owners = r.stdout.split("\n")[:-1]
    if len(owners) != len(keys):
        raise Failure("peer_owners %s answered %d of %d keys" %
                      (path, len(owners), len(keys)))
    return owners


def compare_owners(label, peer, keys, expected, got):
    """Raises a Failure unless PEER's answers (EXPECTED) and the library's (GOT)
    agree for each of KEYS (the keys as a failure shows them): it names LABEL, how
    many of how many keys differ, and the first three, each with both answers."""
    if len(expected) != len(keys) or len(got) != len(keys):
        raise Failure("%s: %d answers from %s, %d from the library, for %d keys" %
                      (label, len(expected), peer, len(got), len(keys)))
    differ = [i for i in range(len(keys)) if expected[i] != got[i]]
    if differ:
        raise Failure("%s: %d of %d keys differ; first: %s" % (
            label, len(differ), len(keys),
            "; ".join("%r: %s %s, library %s" % (keys[i], peer, expected[i], got[i])
                      for i in differ[:3])))


class Case:
    """One set as a peer test gives it to compare_sets(): DESCRIPTION (for its line
    and its failure), the NODESET (a dict) the library is given, the KEYS (bytes) it
    looks up, and EXPECTED, the peer's answer for each key: the name of a node, or
    what NAMES (a dict) makes of the library's node names (the peer's own names of
    the servers). SHOWN: the keys as a failure shows them (what the peer was given),
    when they are not KEYS."""

    def __init__(self, description, nodeset, keys, expected, shown=None, names=None):
        self.description = description
        self.nodeset = nodeset
        self.keys = keys
        self.expected = expected
        self.shown = keys if shown is None else shown
        self.names = names


def compare_sets(owners_program, peer, directory, sets, one_set):
    """Compares PEER with the library on each of SETS in turn: ONE_SET(index, set)
    runs the peer on the set and returns its Case; the library answers through
    OWNERS_PROGRAM on the node set (written to DIRECTORY), key for key. Prints a line
    for each set that agrees, and raises a Failure naming the first that does not.
    Returns how many keys were compared."""
    total = 0
    for index, spec in enumerate(sets):
        case = one_set(index, spec)
        got = library_owners(owners_program, case.nodeset, case.keys,
                             os.path.join(directory, "set%d.json" % index))
        if case.names is not None:
            got = [case.names.get(name, name) for name in got]
        # The description's columns, which align the lines, are one space here.
        compare_owners("set %d (%s)" % (index, " ".join(case.description.split())),
                       peer, case.shown, case.expected, got)
        total += len(case.keys)
        print("set %2d: %s, %d keys: 0 mismatches" %
              (index, case.description, len(case.keys)), flush=True)
    return total
