"""shmring: route keys with a consistent-hash ring kept in POSIX shared memory.

Open a ring once per process (or once in a prefork server's master, before it
forks), then look keys up from any thread::

    import shmring

    ring = shmring.Ring("cache")
    node = ring.lookup("user:42")      # Node(id=3, name='c', address='10.0.1.3:11211', weight=1)
    node_id = ring.lookup_id(b"user:42")

Lookups read the ring's current version straight from shared memory, with no
locks and no system calls, and follow every version that ``ringctl`` publishes.
Every failure of the library raises a subclass of :class:`shmring.Error`, whose
``code`` attribute holds the library's ``SHMRING_E*`` code.
"""

from ._shmring import (
    DEFAULT_DIRECTORY,
    LOOKUP_N_MAX,
    AllNodesDown,
    CorruptRing,
    EmptyRing,
    Error,
    InvalidArgument,
    Lease,
    Node,
    NoSuchNode,
    NotTrusted,
    OutOfMemory,
    PermissionDenied,
    Ring,
    RingNotFound,
    Snapshot,
    Status,
    _noop,
    library_version,
    strerror,
)
from . import _shmring

# The library's error codes (shmring.EEMPTY, ...), generated from its header.
for _name in dir(_shmring):
    if _name.startswith("E") and _name.isupper():
        globals()[_name] = getattr(_shmring, _name)
del _name

# The version of libshmring's headers the extension was compiled against (see
# _shmring.c); library_version is the version of the library it runs with.
__version__ = _shmring.__version__

__all__ = [
    "AllNodesDown",
    "CorruptRing",
    "DEFAULT_DIRECTORY",
    "EmptyRing",
    "Error",
    "InvalidArgument",
    "LOOKUP_N_MAX",
    "Lease",
    "Node",
    "NoSuchNode",
    "NotTrusted",
    "OutOfMemory",
    "PermissionDenied",
    "Ring",
    "RingNotFound",
    "Snapshot",
    "Status",
    "library_version",
    "strerror",
]
