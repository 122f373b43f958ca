"""What the peer tests share: starting real servers on loopback (always stopped,
even on failure), free ports, the keys to send (and keys forged onto a chosen CRC-32),
the library's answers through ringctl on a private ring directory, and what to do
when a peer is missing."""
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import zlib


class Failure(Exception):
    pass


def peers_required():
    """Whether the build requires the peers (SHMRING_REQUIRE_PEERS, which
    tools/test.sh turns on), so that CI cannot pass without running them."""
    return os.environ.get("SHMRING_REQUIRE_PEERS") == "1"


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
