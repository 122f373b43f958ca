"""What the peer tests share: starting real servers on loopback (always stopped,
even on failure), free ports, the keys to send, and the library's answers through
ringctl on a private ring directory."""
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


class Failure(Exception):
    pass


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


def wait_listening(host, port, process, what, limit=20.0):
    """Polls until HOST:PORT accepts a connection: a readiness check, bounded, that
    also notices the server dying."""
    deadline = time.monotonic() + limit
    while True:
        if process.poll() is not None:
            raise Failure("%s exited with status %d before listening" %
                          (what, process.returncode))
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise Failure("%s is not listening on %s:%d" % (what, host, port))
            time.sleep(0.02)


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
