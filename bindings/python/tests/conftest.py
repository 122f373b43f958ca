"""Fixtures: real rings in real shared memory, made with the built ringctl.

Each test gets its own directory under /dev/shm (mode 0700, removed afterwards)
and a ring name with the pid and a counter, so tests may run in parallel and
leave /dev/shm clean. SHMRING_RINGCTL names the ringctl binary (CMake sets it to
the one it built); otherwise ringctl is taken from PATH.
"""

import itertools
import os
import shutil
import subprocess
import tempfile

import pytest

_counter = itertools.count()


def ringctl_path():
    path = os.environ.get("SHMRING_RINGCTL") or shutil.which("ringctl")
    if not path:
        pytest.fail("ringctl not found: set SHMRING_RINGCTL or put it on PATH")
    return path


class RingCtl:
    """Runs ringctl against one ring in one directory."""

    def __init__(self, directory, name):
        self.directory = directory
        self.name = name
        self.binary = ringctl_path()

    def __call__(self, *args, input=None, check=True):
        result = subprocess.run(
            [self.binary, "--dir", self.directory, "-r", self.name, *args],
            input=input,
            capture_output=True,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                "ringctl %s failed (%d): %s"
                % (" ".join(args), result.returncode, result.stderr.decode(errors="replace"))
            )
        return result

    def lookup(self, keys, n=None):
        """Maps each key to ringctl's answer: a list of (name, address) pairs."""
        args = ["lookup"] + (["-n", str(n)] if n else []) + ["--"] + list(keys)
        out = self(*args).stdout.decode()
        answers = {}
        for line in out.splitlines():
            fields = line.split("\t")
            answers[fields[0]] = list(zip(fields[1::2], fields[2::2]))
        return answers

    def load_nodes(self, count, prefix="node", weight=None):
        """Replaces the node set with COUNT nodes through one `ringctl load`."""
        import json

        nodes = []
        for i in range(count):
            node = {"name": "%s%d" % (prefix, i), "address": "10.%d.%d.%d:11211"
                    % (i >> 16 & 255, i >> 8 & 255, i & 255)}
            if weight:
                node["weight"] = weight
            nodes.append(node)
        self("load", "-", input=json.dumps({"nodes": nodes}).encode())


@pytest.fixture
def ring_dir():
    directory = tempfile.mkdtemp(prefix="shmring-py-", dir="/dev/shm")
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def ringctl(ring_dir):
    """A RingCtl for a fresh, unique ring name (the ring is not created)."""
    return RingCtl(ring_dir, "py%d-%d" % (os.getpid(), next(_counter)))


@pytest.fixture
def small_ring(ringctl):
    """A ring of three nodes: a (weight 1), b (weight 2), c (weight 1)."""
    ringctl("init")
    ringctl("add", "a", "10.0.0.1:11211")
    ringctl("add", "b", "10.0.0.2:11211", "--weight", "2")
    ringctl("add", "c", "10.0.0.3:11211")
    return ringctl
