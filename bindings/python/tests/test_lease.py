"""Bounded-load leases (Ring.acquire) against real rings and load boards."""

import json
import os
import signal
import time

import pytest

import shmring


def open_ring(ringctl):
    return shmring.Ring(ringctl.name, ringctl.directory)


def board(ringctl):
    """What `ringctl show --json` says of the ring's load board and its nodes."""
    shown = json.loads(ringctl("--json", "show").stdout)
    return shown["board"], {n["name"]: n for n in shown["nodes"]}


@pytest.fixture
def bounded_ring(ringctl):
    """Three nodes of weight 1, c = 1.25, a board for this process's group."""
    ringctl("init", "--workers-group", str(os.getgid()), "--balance-factor", "1.25")
    for name in "abc":
        ringctl("add", name, "10.0.0.%d:11211" % (ord(name) - ord("a") + 1))
    yield ringctl
    # destroy removes the board's segment, which removing the directory would leave.
    ringctl("destroy")


def test_with_block_counts_and_releases(bounded_ring):
    ring = open_ring(bounded_ring)
    with ring.acquire("user:42") as node:
        assert node == ring.lookup("user:42")
        summary, nodes = board(bounded_ring)
        assert summary["in_flight"] == 1
        assert nodes[node.name]["in_flight"] == 1
    summary, nodes = board(bounded_ring)
    assert summary["in_flight"] == 0
    assert summary["acquires"] == 1 and summary["first_candidate"] == 1


def test_lease_node_is_the_lookup_node(bounded_ring):
    # One Node object per node of a version, whether a lease or a lookup asks first.
    ring = open_ring(bounded_ring)
    with ring.acquire("user:7") as node:
        assert node is ring.lookup("user:7")
    bounded_ring("add", "d", "10.0.0.4:11211")
    with ring.acquire("user:7") as node:
        assert node is ring.lookup("user:7")


def test_exception_in_block_releases(bounded_ring):
    ring = open_ring(bounded_ring)
    with pytest.raises(KeyError):
        with ring.acquire("user:42"):
            raise KeyError("the request failed")
    assert board(bounded_ring)[0]["in_flight"] == 0


def test_dropped_lease_is_released(bounded_ring):
    ring = open_ring(bounded_ring)
    lease = ring.acquire("k")
    assert lease.held and lease.counted
    assert board(bounded_ring)[0]["in_flight"] == 1
    del lease
    assert board(bounded_ring)[0]["in_flight"] == 0


def assert_double_release(lease):
    """A second release raises the base class with the library's code, as every
    binding's does."""
    with pytest.raises(shmring.Error) as info:
        lease.release()
    assert type(info.value) is shmring.Error
    assert info.value.code == shmring.ELEASE
    assert info.value.code == -1042
    assert str(info.value) == "lease already released, or never acquired"


def test_release_once(bounded_ring):
    ring = open_ring(bounded_ring)
    first = ring.acquire("k")
    second = ring.acquire("k")
    assert first.release() is None
    assert not first.held and second.held
    assert board(bounded_ring)[0]["in_flight"] == 1
    assert_double_release(first)
    assert_double_release(first)
    assert not first.held
    assert board(bounded_ring)[0]["in_flight"] == 1
    del first  # released already: freeing it counts nothing down
    assert board(bounded_ring)[0]["in_flight"] == 1
    with second:
        pass
    assert not second.held
    assert board(bounded_ring)[0]["in_flight"] == 0
    assert_double_release(second)
    summary = board(bounded_ring)[0]
    assert summary["in_flight"] == 0 and summary["acquires"] == 2


def test_release_in_block(bounded_ring):
    # A block that released its lease itself leaves quietly, as Lua's with_lease()
    # does: leaving it is no second release.
    ring = open_ring(bounded_ring)
    lease = ring.acquire("k")
    with lease as node:
        assert node is lease.node
        lease.release()
        assert board(bounded_ring)[0]["in_flight"] == 0
    assert not lease.held
    assert board(bounded_ring)[0]["in_flight"] == 0
    assert_double_release(lease)
    # The block's own exception goes through unchanged.
    lease = ring.acquire("k")
    with pytest.raises(KeyError, match="the request failed"):
        with lease:
            lease.release()
            raise KeyError("the request failed")
    assert board(bounded_ring)[0]["in_flight"] == 0
    # Releasing before the block, too.
    lease = ring.acquire("k")
    lease.release()
    with lease:
        pass
    assert board(bounded_ring)[0]["in_flight"] == 0


def test_candidates_by_hand(bounded_ring):
    # With N in flight every capacity is ceil(1.25 (N + 1) / 3): 1 1 2 2 3 3 3 4 for
    # N = 0..7, so one key takes its candidates in the order 0 1 0 1 0 1 2 0.
    ring = open_ring(bounded_ring)
    order = ring.lookup_n("hot", 3)
    leases = [ring.acquire("hot") for _ in range(8)]
    assert [lease.node for lease in leases] == [order[i] for i in (0, 1, 0, 1, 0, 1, 2, 0)]
    assert [lease.candidates for lease in leases] == [1, 2, 1, 2, 1, 2, 3, 1]
    _, nodes = board(bounded_ring)
    assert [nodes[n.name]["in_flight"] for n in order] == [4, 3, 1]
    assert [nodes[n.name]["capacity"] for n in order] == [4, 4, 4]  # ceil(1.25 x 9 / 3)
    for lease in leases:
        lease.release()


def test_plain_without_board(small_ring):
    ring = open_ring(small_ring)
    for i in range(100):
        key = "key-%d" % i
        with ring.acquire(key) as node:
            assert node == ring.lookup(key)
    lease = ring.acquire("k")
    assert not lease.counted and lease.candidates == 1
    lease.release()
    assert_double_release(lease)


def test_closed_ring(bounded_ring):
    ring = open_ring(bounded_ring)
    lease = ring.acquire("k")
    ring.close()
    with pytest.raises(ValueError):
        ring.acquire("k")
    assert lease.held
    lease.release()  # the handle gave it back when it closed
    assert not lease.held
    assert board(bounded_ring)[0]["in_flight"] == 0
    assert_double_release(lease)
    # A lease released before the ring closed stays released.
    ring = open_ring(bounded_ring)
    lease = ring.acquire("k")
    lease.release()
    ring.close()
    assert_double_release(lease)
    with lease:
        pass


def test_killed_worker_leases_come_back(bounded_ring):
    ring = open_ring(bounded_ring)
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            held = [ring.acquire("key-%d" % i) for i in range(5)]
            os.write(ready_write, b"x")
            signal.pause()
        finally:
            os._exit(1)
    assert os.read(ready_read, 1) == b"x"
    assert board(bounded_ring)[0]["in_flight"] == 5
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    # The next acquire after the sweep interval (250 ms) reclaims the dead worker's
    # slot; wait for it, with a generous deadline.
    deadline = time.monotonic() + 10
    while True:
        with ring.acquire("probe"):
            pass
        summary, _ = board(bounded_ring)
        if summary["in_flight"] == 0 and summary["workers"] == 1:
            break
        assert time.monotonic() < deadline, summary
        time.sleep(0.05)
    assert summary["reclaimed"] == 1
