"""The shmring binding against real rings in shared memory, checked against ringctl."""

import errno
import gc
import json
import os
import pathlib
import re
import select
import sys
import threading

import pytest

import shmring

KEYS = ["key-%d" % i for i in range(1000)]
HEADER = pathlib.Path(__file__).resolve().parents[3] / "include" / "shmring.h"


def open_ring(ringctl, **kwargs):
    return shmring.Ring(ringctl.name, ringctl.directory, **kwargs)


# Lookups agree with ringctl --------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["ring", "maglev", "ketama"])
def test_lookup_matches_ringctl(ringctl, algorithm):
    ringctl("init", "--algorithm", algorithm)
    ringctl.load_nodes(50)
    ringctl("weight", "node7", "5")
    expected = ringctl.lookup(KEYS)
    with open_ring(ringctl) as ring:
        nodes = {node.id: node for node in ring.nodes()}
        for key in KEYS:
            node = ring.lookup(key)
            assert [(node.name, node.address)] == expected[key]
            assert ring.lookup_id(key) == node.id
            assert nodes[node.id] == node
        ids = ring.lookup_ids(KEYS)
        assert [(nodes[i].name, nodes[i].address) for i in ids] == [
            expected[k][0] for k in KEYS
        ]


def test_lookup_n_matches_ringctl(small_ring):
    expected = small_ring.lookup(KEYS[:200], n=3)
    with open_ring(small_ring) as ring:
        for key in KEYS[:200]:
            nodes = ring.lookup_n(key, 3)
            assert [(n.name, n.address) for n in nodes] == expected[key]
            assert nodes[0] == ring.lookup(key)


def test_lookup_n_limits(small_ring):
    with open_ring(small_ring) as ring:
        assert len(ring.lookup_n("k", 1)) == 1
        # More than the ring's up nodes, or than LOOKUP_N_MAX: what there is.
        for n in (3, 4, 64, 65, 2**31, 2**63, 10**100):
            assert len(ring.lookup_n("k", n)) == 3
        for n in (0, -1, -(2**63), -(10**100)):
            with pytest.raises(ValueError):
                ring.lookup_n("k", n)
        for n in (None, 1.0, "3"):
            with pytest.raises(TypeError):
                ring.lookup_n("k", n)
        with pytest.raises(TypeError):
            ring.lookup_n("k")
        with pytest.raises(TypeError):
            ring.lookup_n("k", 1, 2)
    assert shmring.LOOKUP_N_MAX == 64


# Keys -----------------------------------------------------------------------------


def test_key_types_are_their_bytes(small_ring):
    with open_ring(small_ring) as ring:
        for text in ["plain", "", "caf\u00e9", "\u65e5\u672c", "emoji \U0001f600", "a\0b"]:
            raw = text.encode()
            expected = ring.lookup_id(raw)
            for key in (text, bytearray(raw), memoryview(raw), memoryview(b"xx" + raw)[2:]):
                assert ring.lookup_id(key) == expected
                assert ring.lookup(key).id == expected
                assert ring.lookup_n(key, 1)[0].id == expected
            assert ring.lookup_ids([text, raw, bytearray(raw)]) == [expected] * 3


def test_bad_keys_raise(small_ring):
    with open_ring(small_ring) as ring:
        for key in (None, 42, 1.5, ["a"], object()):
            for call in (ring.lookup, ring.lookup_id, lambda k: ring.lookup_n(k, 2)):
                with pytest.raises(TypeError):
                    call(key)
            with pytest.raises(TypeError):
                ring.lookup_ids(["ok", key])
        lone_surrogate = "bad \udc80 key"
        with pytest.raises(UnicodeEncodeError):
            ring.lookup_id(lone_surrogate)
        with pytest.raises(UnicodeEncodeError):
            ring.lookup_ids(["a"] * 40 + [lone_surrogate])
        strided = memoryview(b"abcdef")[::2]
        with pytest.raises(BufferError):
            ring.lookup_id(strided)
        with pytest.raises(BufferError):
            ring.lookup_ids([bytearray(b"x"), strided])
        with pytest.raises(TypeError):
            ring.lookup_ids(42)
        with pytest.raises(TypeError):
            ring.lookup_ids(None)


def test_lookup_ids_batches(small_ring):
    with open_ring(small_ring) as ring:
        assert ring.lookup_ids([]) == []
        assert ring.lookup_ids(()) == []
        keys = [("k%d" % i).encode() for i in range(5000)]
        expected = [ring.lookup_id(k) for k in keys]
        assert ring.lookup_ids(keys) == expected
        assert ring.lookup_ids(iter(keys)) == expected
        assert ring.lookup_ids(k for k in keys) == expected
        mixed = [memoryview(k) if i % 3 else bytearray(k) for i, k in enumerate(keys)]
        assert ring.lookup_ids(mixed) == expected
        # The buffers were released: a bytearray can be resized again.
        mixed[0].append(0)


def test_large_keys(small_ring):
    with open_ring(small_ring) as ring:
        big = b"x" * (16 << 20)
        assert ring.lookup_id(big) == ring.lookup_id(bytearray(big))


# Nodes ----------------------------------------------------------------------------


def test_nodes_snapshot_and_node(small_ring):
    with open_ring(small_ring) as ring:
        nodes = ring.nodes()
        assert isinstance(nodes, tuple)
        assert [(n.name, n.address, n.weight) for n in nodes] == [
            ("a", "10.0.0.1:11211", 1),
            ("b", "10.0.0.2:11211", 2),
            ("c", "10.0.0.3:11211", 1),
        ]
        assert sorted(n.id for n in nodes) == [0, 1, 2]
        for node in nodes:
            assert ring.node(node.id) == node
        snap = ring.snapshot()
        assert snap.nodes == nodes
        assert snap.generation == ring.generation == 4
        assert snap.fingerprint == ring.fingerprint == ringctl_fingerprint(small_ring)
        assert re.fullmatch(r"[0-9a-f]{16}", snap.fingerprint)
        generation, fingerprint, copied = snap
        assert copied == nodes


def ringctl_fingerprint(ringctl):
    """The fingerprint as `ringctl show` prints it."""
    return re.search(r"^fingerprint: +([0-9a-f]+)$", ringctl("show").stdout.decode(),
                     re.M).group(1)


# Status -----------------------------------------------------------------------------


def test_status_of_a_published_ring(small_ring):
    with open_ring(small_ring) as ring:
        fingerprint = ringctl_fingerprint(small_ring)
        status = ring.status()
        assert status == (True, False, 4, fingerprint, 0)
        assert (status.present, status.destroyed, status.generation, status.fingerprint,
                status.error) == (True, False, 4, fingerprint, 0)
        assert status.failed_format == 0
        assert repr(status) == (
            "shmring.Status(present=True, destroyed=False, generation=4, "
            "fingerprint='%s', error=0)" % fingerprint)
        # status() follows a version published since the last lookup.
        small_ring("add", "d", "10.0.0.4:11211")
        assert ring.status() == (True, False, 5, ringctl_fingerprint(small_ring), 0)


def test_status_before_anything_is_published(ringctl):
    ringctl("init")
    with open_ring(ringctl) as ring:
        # ringctl init publishes the empty node set as generation 1.
        assert ring.status() == (True, False, 1, ringctl_fingerprint(ringctl), 0)


def test_status_says_the_ring_was_destroyed(small_ring):
    with open_ring(small_ring) as ring:
        fingerprint = ringctl_fingerprint(small_ring)
        answer = ring.lookup("k")
        small_ring("destroy")
        # Lookups go on answering from the last version; status() says why.
        assert ring.status() == (False, True, 4, fingerprint, shmring.ENOENT)
        assert ring.lookup("k") is answer
        assert ring.generation == 4 and ring.fingerprint == fingerprint
        # A ring made again under the name (by the same owner) is followed within the
        # library's retry interval (100 ms), and the status says so.
        small_ring("init")
        small_ring("add", "z", "10.0.0.26:11211")
        for _ in range(200):
            status = ring.status()
            if not status.destroyed:
                break
            threading.Event().wait(0.05)
        assert status == (True, False, 2, ringctl_fingerprint(small_ring), 0)
        assert ring.lookup("k").name == "z"


# One Node object per node and version ---------------------------------------------------


def test_lookup_returns_one_object_per_node_and_version(small_ring):
    with open_ring(small_ring) as ring:
        nodes = {}
        for key in KEYS:
            node = ring.lookup(key)
            assert nodes.setdefault(node.id, node) is node
        assert sorted((n.id, n.name, n.address, n.weight) for n in nodes.values()) == [
            (0, "a", "10.0.0.1:11211", 1), (1, "b", "10.0.0.2:11211", 2),
            (2, "c", "10.0.0.3:11211", 1)]
        # A new version: new objects, with the new version's fields.
        small_ring("weight", "a", "5")
        again = ring.lookup(KEYS[0])
        assert again is not nodes[again.id]
        fresh = {n.id: n for n in map(ring.lookup, KEYS)}
        assert fresh[0] == shmring.Node((0, "a", "10.0.0.1:11211", 5))
        assert fresh[again.id] is again
        expected = small_ring.lookup(KEYS)
        assert [[(n.name, n.address)] for n in map(ring.lookup, KEYS)] == [
            expected[k] for k in KEYS]
        # Content published again unchanged keeps its fingerprint, and so its nodes.
        small_ring("weight", "a", "5")
        assert ring.lookup(KEYS[0]) is again


def test_lookup_caches_large_ids(ringctl):
    nodes = [{"name": "n%d" % i, "address": "10.0.0.%d:11211" % i, "id": node_id}
             for i, node_id in enumerate([3, 65535, 65536, 2**32 - 2])]
    ringctl("load", "-", input=json.dumps({"nodes": nodes}).encode())
    expected = ringctl.lookup(KEYS)
    with open_ring(ringctl) as ring:
        seen = {}
        for key in KEYS:
            node = ring.lookup(key)
            assert [(node.name, node.address)] == expected[key]
            assert seen.setdefault(node.id, node) is node
        assert sorted(seen) == [3, 65535, 65536, 2**32 - 2]


def test_node_errors(small_ring):
    with open_ring(small_ring) as ring:
        for node_id in (3, 1000, 2**32 - 1, 2**32, -1, 2**64, -(10**100)):
            with pytest.raises(shmring.NoSuchNode) as info:
                ring.node(node_id)
            assert info.value.code == shmring.ENODE
            assert isinstance(info.value, LookupError)
        for bad in (None, "1", 1.0):
            with pytest.raises(TypeError):
                ring.node(bad)


def test_node_object():
    node = shmring.Node((7, "a", "10.0.0.1:11211", 3))
    assert (node.id, node.name, node.address, node.weight) == (7, "a", "10.0.0.1:11211", 3)
    assert node == shmring.Node((7, "a", "10.0.0.1:11211", 3))
    assert hash(node) == hash(shmring.Node((7, "a", "10.0.0.1:11211", 3)))
    assert node != shmring.Node((8, "a", "10.0.0.1:11211", 3))
    assert repr(node) == "shmring.Node(id=7, name='a', address='10.0.0.1:11211', weight=3)"
    node_id, name, address, weight = node
    assert node_id == 7
    with pytest.raises(AttributeError):
        node.id = 8
    with pytest.raises(TypeError):
        node[0] = 8
    assert {node: 1}[shmring.Node((7, "a", "10.0.0.1:11211", 3))] == 1


# Following new versions -------------------------------------------------------------


def test_follows_add_remove_and_down(small_ring):
    with open_ring(small_ring) as ring:
        generation = ring.generation
        fingerprint = ring.fingerprint
        small_ring("add", "d", "10.0.0.4:11211")
        assert ring.lookup_ids(KEYS) == [
            ring.node(ring.lookup_id(k)).id for k in KEYS
        ]
        assert ring.generation == generation + 1
        assert ring.fingerprint != fingerprint
        expected = small_ring.lookup(KEYS)
        assert [[(n.name, n.address)] for n in map(ring.lookup, KEYS)] == [
            expected[k] for k in KEYS
        ]
        d = [n for n in ring.nodes() if n.name == "d"][0]
        small_ring("remove", "d")
        assert d.id not in ring.lookup_ids(KEYS)
        with pytest.raises(shmring.NoSuchNode):
            ring.node(d.id)
        assert ring.generation == generation + 2
        for name in ("a", "b", "c"):
            small_ring("down", name)
        with pytest.raises(shmring.AllNodesDown) as info:
            ring.lookup("k")
        assert info.value.code == shmring.EALLDOWN
        assert isinstance(info.value, LookupError)
        for call in (ring.lookup_id, lambda k: ring.lookup_n(k, 2), lambda k: ring.lookup_ids([k])):
            with pytest.raises(shmring.AllNodesDown):
                call("k")
        with pytest.raises(shmring.AllNodesDown):
            ring.lookup_ids([])
        assert len(ring.nodes()) == 3
        small_ring("up", "b")
        assert ring.lookup("k").name == "b"


def test_empty_ring(ringctl):
    ringctl("init")
    with open_ring(ringctl) as ring:
        assert ring.generation == 1
        assert ring.nodes() == ()
        with pytest.raises(shmring.EmptyRing) as info:
            ring.lookup("k")
        assert info.value.code == shmring.EEMPTY
        assert str(info.value) == shmring.strerror(shmring.EEMPTY)
        for call in (ring.lookup_id, lambda k: ring.lookup_n(k, 1), lambda k: ring.lookup_ids([k])):
            with pytest.raises(shmring.EmptyRing):
                call("k")
        with pytest.raises(shmring.Error):
            ring.node(0)
        ringctl("add", "a", "10.0.0.1:11211")
        assert ring.lookup("k").name == "a"


# Opening ------------------------------------------------------------------------------


def test_open_errors(ringctl):
    with pytest.raises(shmring.RingNotFound) as info:
        open_ring(ringctl)
    assert info.value.code == shmring.ENOENT
    assert isinstance(info.value, FileNotFoundError)
    assert str(info.value) == f"no such ring: '{ringctl.name}'"
    for name in ("", "a/b", "..", "x" * 201, "a\0b", "caf\u00e9", "ring.5"):
        with pytest.raises(shmring.InvalidArgument) as info:
            shmring.Ring(name, ringctl.directory)
        assert info.value.code == shmring.EBADRING
        assert isinstance(info.value, ValueError)
    with pytest.raises(shmring.InvalidArgument) as info:
        shmring.Ring("x", "/" + "d" * 2000)
    assert info.value.code == shmring.EBADDIR
    with pytest.raises(ValueError):
        shmring.Ring("x", "/dev/shm\0/x")
    with pytest.raises(TypeError):
        shmring.Ring(b"x")
    with pytest.raises(TypeError):
        shmring.Ring()
    with pytest.raises(TypeError):
        shmring.Ring("x", 5)
    with pytest.raises(TypeError):
        shmring.Ring("x", None, "nobody")
    for owner in (-1, 2**32, 2**32 - 1, 10**100):
        with pytest.raises(shmring.InvalidArgument):
            shmring.Ring("x", None, owner)


def test_directory_errors_name_the_directory(ringctl, tmp_path):
    """What is wrong with the directory is said of the directory, not of the ring."""
    with pytest.raises(shmring.InvalidArgument) as info:
        shmring.Ring(ringctl.name, "rel/x")
    assert info.value.code == shmring.EBADDIR
    assert str(info.value) == ("ring directory must be an absolute path of at most "
                               "1024 bytes: 'rel/x'")
    with pytest.raises(shmring.InvalidArgument) as info:
        shmring.Ring(ringctl.name, "/proc")
    assert info.value.code == shmring.ENOTRINGDIR
    assert str(info.value) == ("not a ring directory (a kernel filesystem such as "
                               "/proc): '/proc'")
    missing = os.path.join(ringctl.directory, "missing")
    with pytest.raises(shmring.RingNotFound) as info:
        shmring.Ring(ringctl.name, missing)
    assert info.value.code == shmring.ENODIR
    assert str(info.value) == f"no such ring directory: '{missing}'"
    file = os.path.join(ringctl.directory, "file")
    open(file, "w").close()
    with pytest.raises(shmring.InvalidArgument) as info:
        shmring.Ring(ringctl.name, file)
    assert info.value.code == -errno.ENOTDIR
    assert str(info.value) == f"Not a directory: '{file}'"
    os.unlink(file)


def test_directory_as_path_and_bytes(small_ring):
    path = pathlib.Path(small_ring.directory)
    with shmring.Ring(small_ring.name, path) as ring:
        assert ring.directory == small_ring.directory
        assert ring.name == small_ring.name
    with shmring.Ring(small_ring.name, os.fsencode(path)) as ring:
        assert ring.lookup("k")


def test_default_directory(ringctl):
    """A ring in /dev/shm itself, opened without a directory."""
    ringctl.directory = shmring.DEFAULT_DIRECTORY
    ringctl("init")
    try:
        ringctl("add", "a", "10.0.0.1:11211")
        with shmring.Ring(ringctl.name) as ring:
            assert ring.directory == "/dev/shm"
            assert ring.lookup("k").name == "a"
    finally:
        ringctl("destroy")
    assert not os.path.exists("/dev/shm/shmring." + ringctl.name)


def test_unsafe_directory_is_not_trusted(small_ring):
    os.chmod(small_ring.directory, 0o777)
    try:
        with pytest.raises(shmring.NotTrusted) as info:
            open_ring(small_ring)
        assert info.value.code == shmring.EBASEDIR
        assert str(info.value) == ("ring directory is unsafe (writable by others, not "
                                   f"sticky): '{small_ring.directory}'")
        assert isinstance(info.value, PermissionError)
        assert isinstance(info.value, shmring.PermissionDenied)
    finally:
        os.chmod(small_ring.directory, 0o700)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a ring to nobody")
def test_other_owner_needs_trusted_owner(small_ring):
    import pwd

    nobody = pwd.getpwnam("nobody").pw_uid
    ring_path = os.path.join(small_ring.directory, "shmring." + small_ring.name)
    for entry in [ring_path] + [os.path.join(ring_path, f) for f in os.listdir(ring_path)]:
        os.chown(entry, nobody, -1)
    # Only root's rings, the process's own and trusted_owner's are accepted.
    with pytest.raises(shmring.NotTrusted) as info:
        open_ring(small_ring)
    assert info.value.code == shmring.EOWNER
    with open_ring(small_ring, trusted_owner=nobody) as ring:
        assert ring.lookup("k").name in ("a", "b", "c")


# Closing ------------------------------------------------------------------------------


def test_close_and_context_manager(small_ring):
    ring = open_ring(small_ring)
    assert not ring.closed
    assert "closed" not in repr(ring)
    with ring as entered:
        assert entered is ring
    assert ring.closed
    assert repr(ring).endswith(" closed>")
    ring.close()
    calls = [
        lambda: ring.lookup("k"),
        lambda: ring.lookup_id("k"),
        lambda: ring.lookup_ids(["k"]),
        lambda: ring.lookup_n("k", 1),
        lambda: ring.node(0),
        ring.nodes,
        ring.snapshot,
        lambda: ring.generation,
        lambda: ring.fingerprint,
        lambda: ring.__enter__(),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="closed"):
            call()
    del ring
    gc.collect()


def test_close_while_keys_are_converted(small_ring):
    """Converting keys runs Python code (an iterator here; a __buffer__ on 3.12)
    that may close the ring: the call raises instead of using a closed handle, and
    changing the caller's list meanwhile cannot free keys in use."""
    ring = open_ring(small_ring)

    def closing_keys():
        yield b"a"
        ring.close()
        yield b"b"

    with pytest.raises(ValueError, match="closed"):
        ring.lookup_ids(closing_keys())
    assert ring.closed

    ring = open_ring(small_ring)
    keys = [b"k%d" % i for i in range(100)]
    expected = ring.lookup_ids(keys)

    def clearing_keys():
        for key in list(keys):
            keys.clear()
            yield key

    assert ring.lookup_ids(clearing_keys()) == expected
    ring.close()


def test_close_while_other_threads_copy(small_ring):
    """close() from one thread while others call nodes() in a loop:
    each call returns its copy or raises ValueError, and nothing crashes."""
    small_ring.load_nodes(2000)
    for _ in range(5):
        ring = open_ring(small_ring)
        outcomes = []
        started = threading.Barrier(5)

        def copy():
            started.wait()
            try:
                while True:
                    assert len(ring.nodes()) == 2000
                    outcomes.append("copy")
            except ValueError:
                outcomes.append("closed")

        threads = [threading.Thread(target=copy) for _ in range(4)]
        for t in threads:
            t.start()
        started.wait()
        ring.close()
        for t in threads:
            t.join()
        assert outcomes.count("closed") == 4


# Threads and fork -------------------------------------------------------------------


def test_threads_follow_changes(small_ring):
    small_ring.load_nodes(20)
    ring = open_ring(small_ring)
    stop = threading.Event()
    errors = []

    def worker():
        try:
            while not stop.is_set():
                snap = ring.snapshot()
                ids = {n.id for n in snap.nodes}
                node = ring.lookup("some key")
                assert node.name.startswith("node")
                assert len(ring.lookup_ids(KEYS[:50])) == 50
                assert ids
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(20, 40):
            small_ring("add", "node%d" % i, "10.1.0.%d:11211" % i)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    expected = small_ring.lookup(KEYS)
    assert [[(n.name, n.address)] for n in map(ring.lookup, KEYS)] == [expected[k] for k in KEYS]
    ring.close()


def _child(ring, write_fd, read_fd):
    """In a forked child: answer the keys, wait for the parent's change, answer again."""
    try:
        before = "\n".join("%s\t%s" % (n.name, n.address) for n in map(ring.lookup, KEYS))
        os.write(write_fd, (str(ring.generation) + "\n" + before + "\n\0").encode())
        assert os.read(read_fd, 1) == b"g"
        after = "\n".join("%s\t%s" % (n.name, n.address) for n in map(ring.lookup, KEYS))
        os.write(write_fd, (str(ring.generation) + "\n" + after + "\n\0").encode())
        os._exit(0)
    except BaseException:
        os._exit(1)


def _read_message(fd):
    data = b""
    while not data.endswith(b"\0"):
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, "child did not answer within 60 s"
        chunk = os.read(fd, 65536)
        assert chunk, "child exited early"
        data += chunk
    generation, _, body = data[:-1].decode().partition("\n")
    return int(generation), body.splitlines()


def test_fork_children_share_the_parents_ring(small_ring):
    ring = open_ring(small_ring)
    ring.lookup("warm")
    children = []
    try:
        for _ in range(3):
            to_parent = os.pipe()
            to_child = os.pipe()
            pid = os.fork()
            if pid == 0:
                _child(ring, to_parent[1], to_child[0])
            os.close(to_parent[1])
            os.close(to_child[0])
            children.append((pid, to_parent[0], to_child[1]))
        expected = small_ring.lookup(KEYS)
        lines = ["%s\t%s" % expected[k][0] for k in KEYS]
        for _, from_child, _ in children:
            assert _read_message(from_child) == (4, lines)
        small_ring("add", "d", "10.0.0.4:11211")
        expected = small_ring.lookup(KEYS)
        lines = ["%s\t%s" % expected[k][0] for k in KEYS]
        for _, _, to_child in children:
            os.write(to_child, b"g")
        for _, from_child, _ in children:
            assert _read_message(from_child) == (5, lines)
    finally:
        for pid, from_child, to_child in children:
            os.close(from_child)
            os.close(to_child)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
    assert ring.generation == 5
    ring.close()


# The module ------------------------------------------------------------------------------


def test_error_codes_match_the_header():
    codes = re.findall(r"XX\((E[A-Z]+), ([-A-Z0-9]+),", HEADER.read_text())
    assert len(codes) >= 30
    for name, value in codes:
        code = getattr(shmring, name)
        if value.startswith("-E"):
            assert code == -getattr(__import__("errno"), value[1:])
        else:
            assert code == int(value)
        assert shmring.strerror(code)
    assert shmring.strerror(12345) and shmring.strerror(-(10**100))


def test_version_is_the_library_version():
    # The package's version is the headers' it was compiled against; the library it
    # runs with is the one built with it.
    assert shmring.__version__ == shmring.library_version
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", shmring.__version__)


def test_version_is_cmake_version():
    # CMake's project(VERSION), the one place the version is written, as ctest passes it.
    expected = os.environ.get("SHMRING_VERSION")
    if expected is None:
        pytest.skip("SHMRING_VERSION (CMake's project version) is set only by ctest")
    assert shmring.__version__ == expected
    assert shmring.library_version == expected


def test_error_hierarchy():
    for cls in (
        shmring.RingNotFound,
        shmring.PermissionDenied,
        shmring.NotTrusted,
        shmring.EmptyRing,
        shmring.AllNodesDown,
        shmring.NoSuchNode,
        shmring.InvalidArgument,
        shmring.CorruptRing,
        shmring.OutOfMemory,
    ):
        assert issubclass(cls, shmring.Error)
        assert cls.__module__ == "shmring"
        assert cls.__doc__
    assert issubclass(shmring.Error, Exception)
    assert issubclass(shmring.NotTrusted, PermissionError)
    assert issubclass(shmring.InvalidArgument, ValueError)
    assert issubclass(shmring.OutOfMemory, MemoryError)


def test_docstrings_and_stubs():
    stub = (pathlib.Path(shmring.__file__).parent / "__init__.pyi").read_text()
    assert (pathlib.Path(shmring.__file__).parent / "py.typed").exists()
    for name in shmring.__all__ + [n for n in dir(shmring) if re.fullmatch(r"E[A-Z]+", n)]:
        assert re.search(r"\b%s\b" % name, stub), name
        obj = getattr(shmring, name)
        if callable(obj):
            assert obj.__doc__, name
    for name in dir(shmring.Ring):
        if not name.startswith("_") or name in ("__enter__", "__exit__"):
            assert getattr(shmring.Ring, name).__doc__, name
            assert re.search(r"def %s\b|def %s\(|\b%s\b" % (name, name, name), stub), name
    assert shmring._noop(1) is None
    assert sys.modules["shmring._shmring"].__doc__


def test_odd_objects_do_not_crash(small_ring):
    import copy
    import pickle

    class Text(str):
        pass

    class Raw(bytes):
        pass

    with open_ring(small_ring) as ring:
        expected = ring.lookup_id(b"abc")
        assert ring.lookup_id(Text("abc")) == expected
        assert ring.lookup_id(Raw(b"abc")) == expected
        assert ring.lookup_ids([Text("abc"), Raw(b"abc"), b"abc"]) == [expected] * 3
        import array

        assert ring.lookup_id(array.array("b", b"abc")) == expected
        with pytest.raises(TypeError):
            pickle.dumps(ring)
        with pytest.raises(TypeError):
            copy.copy(ring)
        with pytest.raises(TypeError):
            class Sub(shmring.Ring):  # noqa: F841 - not a base type
                pass
        with pytest.raises(AttributeError):
            ring.name = "other"
        with pytest.raises(AttributeError):
            ring.generation = 1
        # Re-initialising changes nothing.
        ring.__init__("other")
        assert ring.name == small_ring.name
        assert ring.lookup_id("abc") == expected
