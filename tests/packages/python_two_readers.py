"""The wheel's bundled reader and the system's libshmring in one process.

The bundled extension compiles its own copy of the reader in (bindings/python/
setup.py). This loads a libshmring first, RTLD_GLOBAL, as another extension or a C
module of the process would, so that any symbol the extension left visible would
bind to the library's; then imports the installed `shmring` and checks that:

- the extension exports nothing but PyInit__shmring (its copy of the reader is its
  own), and liburcu-bp, whose registry a process must hold once, is mapped only
  because the library needs it, never by the extension;
- both readers answer the same node for each of 2000 keys, through the library's
  default (liburcu) handle and a serialized one, on a ring of 40 nodes;
- after ringctl removes a node (a publish), both follow it and still agree key for
  key, every key of the removed node moved;
- in a forked child (both readers' fork handlers run) both still agree.

Usage: python_two_readers.py LIBSHMRING RINGCTL
"""

import ctypes
import json
import os
import subprocess
import sys
import tempfile

libshmring_path, ringctl = sys.argv[1], sys.argv[2]
lib = ctypes.CDLL(libshmring_path, mode=ctypes.RTLD_GLOBAL)

import shmring  # noqa: E402  (after the library, on purpose: see the top)

SERIALIZED = 1


class OpenOptions(ctypes.Structure):
    _fields_ = [("directory", ctypes.c_char_p), ("trusted_owner", ctypes.c_uint),
                ("flags", ctypes.c_uint32), ("reserved", ctypes.c_uint64 * 4)]


lib.shmring_open_with.argtypes = [ctypes.c_char_p, ctypes.POINTER(OpenOptions),
                                  ctypes.POINTER(ctypes.c_void_p)]
lib.shmring_lookup_id.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.POINTER(ctypes.c_uint32)]
lib.shmring_close.argtypes = [ctypes.c_void_p]
lib.shmring_close.restype = None


def library_open(directory, name, flags):
    handle = ctypes.c_void_p()
    options = OpenOptions(directory=directory.encode(), flags=flags)
    rc = lib.shmring_open_with(name.encode(), ctypes.byref(options), ctypes.byref(handle))
    assert rc == 0, "shmring_open_with: %d" % rc
    return handle


def library_ids(handle, keys):
    ids, node = [], ctypes.c_uint32()
    for key in keys:
        rc = lib.shmring_lookup_id(handle, key, len(key), ctypes.byref(node))
        assert rc == 0, "shmring_lookup_id: %d" % rc
        ids.append(node.value)
    return ids


def exported_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


def mapped(name):
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if name in line})


extension = shmring._shmring.__file__
assert exported_symbols(extension) == ["PyInit__shmring"], exported_symbols(extension)
urcu = mapped("liburcu-bp")
assert len(urcu) == 1, "liburcu-bp mapped as %s" % urcu
needed = subprocess.run(["ldd", extension], check=True, capture_output=True,
                        text=True).stdout
assert "libshmring" not in needed and "liburcu" not in needed, needed

directory = tempfile.mkdtemp(prefix="shmring-two-", dir="/dev/shm")
name = "two"


def run_ringctl(*args, input=None):
    subprocess.run([ringctl, "--dir", directory, "-r", name, *args], input=input,
                   check=True, capture_output=True)


try:
    nodes = [{"name": "node%d" % i, "address": "10.0.0.%d:11211" % (i + 1)}
             for i in range(40)]
    run_ringctl("load", "-", input=json.dumps({"nodes": nodes}).encode())
    keys = [b"user:%d" % i for i in range(2000)]
    ring = shmring.Ring(name, directory)
    shared = library_open(directory, name, 0)
    serialized = library_open(directory, name, SERIALIZED)

    def agree(stage):
        bundled = [ring.lookup_id(key) for key in keys]
        assert library_ids(shared, keys) == bundled, stage + ": the default handle differs"
        assert library_ids(serialized, keys) == bundled, stage + ": the serialized handle differs"
        return bundled

    before = agree("first version")
    assert len(set(before)) == 40, "2000 keys reached %d of 40 nodes" % len(set(before))
    generation = ring.generation
    run_ringctl("remove", "node7")
    after = agree("after a publish")
    assert ring.generation == generation + 1, (generation, ring.generation)
    removed = set(before) - {node.id for node in ring.nodes()}
    assert len(removed) == 1, removed
    moved = [i for i in range(len(keys)) if before[i] != after[i]]
    assert {i for i in range(len(keys)) if before[i] in removed} <= set(moved), \
        "a key of the removed node did not move"

    pid = os.fork()
    if pid == 0:
        try:
            agree("in a forked child")
            os._exit(0)
        except BaseException as error:  # reported by the parent's exit status
            print("child:", error, file=sys.stderr)
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the forked child's readers differ"

    lib.shmring_close(shared)
    lib.shmring_close(serialized)
    ring.close()
finally:
    subprocess.run(["rm", "-rf", directory], check=True)
print("two readers, %s and %s: %d keys agree before and after a publish "
      "(%d moved) and in a forked child" % (extension, libshmring_path, len(keys),
                                             len(moved)))
