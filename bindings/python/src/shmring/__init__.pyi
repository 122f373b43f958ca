"""Type stubs for shmring (the C extension shmring._shmring, re-exported)."""

import os
from typing import Final, Iterable, NamedTuple, Optional, Union


Key = Union[str, bytes, bytearray, memoryview]

DEFAULT_DIRECTORY: Final[str]
LOOKUP_N_MAX: Final[int]
library_version: Final[str]
__version__: Final[str]

class Node(tuple):
    """One node of a ring: an immutable named tuple (id, name, address, weight)."""
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    def __new__(cls, sequence: tuple[int, str, str, int]) -> Node: ...
    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def address(self) -> str: ...
    @property
    def weight(self) -> int: ...

class Snapshot(tuple):
    """Every node of one version, with its generation and fingerprint."""
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    def __new__(cls, sequence: tuple[int, Optional[str], tuple[Node, ...]]) -> Snapshot: ...
    @property
    def generation(self) -> int: ...
    @property
    def fingerprint(self) -> Optional[str]: ...
    @property
    def nodes(self) -> tuple[Node, ...]: ...

class Status(tuple):
    """What a Ring answers from: for health checks and status pages."""
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    def __new__(cls, sequence: tuple[bool, bool, int, Optional[str], int]) -> Status: ...
    @property
    def present(self) -> bool: ...
    @property
    def destroyed(self) -> bool: ...
    @property
    def generation(self) -> int: ...
    @property
    def fingerprint(self) -> Optional[str]: ...
    @property
    def error(self) -> int: ...
    @property
    def failed_format(self) -> int: ...

class Lease:
    """A bounded-load lease of one request on a node (Ring.acquire())."""
    @property
    def node(self) -> Node: ...
    @property
    def held(self) -> bool: ...
    @property
    def candidates(self) -> int: ...
    @property
    def counted(self) -> bool: ...
    def release(self) -> None: ...
    def __enter__(self) -> Node: ...
    def __exit__(self, *exc_info: object) -> bool: ...

class Ring:
    """A reader of one shmring ring, shared by threads and forked children."""
    def __new__(
        cls,
        name: str,
        directory: Union[str, bytes, os.PathLike[str], os.PathLike[bytes], None] = ...,
        trusted_owner: Optional[int] = ...,
    ) -> Ring: ...
    @property
    def name(self) -> str: ...
    @property
    def directory(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def generation(self) -> int: ...
    @property
    def fingerprint(self) -> Optional[str]: ...
    def status(self) -> Status: ...
    def lookup(self, key: Key, /) -> Node: ...
    def acquire(self, key: Key, /) -> Lease: ...
    def lookup_id(self, key: Key, /) -> int: ...
    def lookup_ids(self, keys: Iterable[Key], /) -> list[int]: ...
    def lookup_n(self, key: Key, n: int, /) -> list[Node]: ...
    def node(self, id: int, /) -> Node: ...
    def nodes(self) -> tuple[Node, ...]: ...
    def snapshot(self) -> Snapshot: ...
    def close(self) -> None: ...
    def __enter__(self) -> Ring: ...
    def __exit__(self, *exc_info: object) -> None: ...

class Error(Exception):
    """Base class of every error of the ring library."""
    code: int

class RingNotFound(Error, FileNotFoundError): ...
class PermissionDenied(Error, PermissionError): ...
class NotTrusted(PermissionDenied): ...
class EmptyRing(Error, LookupError): ...
class AllNodesDown(Error, LookupError): ...
class NoSuchNode(Error, LookupError): ...
class InvalidArgument(Error, ValueError): ...
class CorruptRing(Error): ...
class OutOfMemory(Error, MemoryError): ...

def strerror(code: int, /) -> str: ...
def _noop(x: object, /) -> None: ...

ENOENT: Final[int]
EACCES: Final[int]
EPERM: Final[int]
ENOMEM: Final[int]
ENOSPC: Final[int]
EEXIST: Final[int]
EINVAL: Final[int]
EMFILE: Final[int]
EIO: Final[int]
EEMPTY: Final[int]
EALLDOWN: Final[int]
EBADMAGIC: Final[int]
EFORMAT: Final[int]
EBYTEORDER: Final[int]
ETRUNCATED: Final[int]
EBADSECTION: Final[int]
EBADPARAMS: Final[int]
EBADNODE: Final[int]
EBADSTRING: Final[int]
EBADPOINTS: Final[int]
EBADINDEX: Final[int]
ECHECKSUM: Final[int]
EOWNER: Final[int]
ELIMIT: Final[int]
ENODE: Final[int]
EDUPLICATE: Final[int]
EBADNAME: Final[int]
EBADADDRESS: Final[int]
EBADWEIGHT: Final[int]
EBADRING: Final[int]
EBADALGORITHM: Final[int]
EBADHASH: Final[int]
EBADVNODES: Final[int]
EJSON: Final[int]
ECONTROL: Final[int]
ESTALE: Final[int]
ENOTRING: Final[int]
EBUSY: Final[int]
EBASEDIR: Final[int]
EINUSE: Final[int]
EBADDIR: Final[int]
ENODIR: Final[int]
ENOTRINGDIR: Final[int]
EBASEOWNER: Final[int]
EUNWEIGHTED: Final[int]
EJUMPDOWN: Final[int]
ERENUMBER: Final[int]
EFEATURE: Final[int]
ENEWFORMAT: Final[int]
ENODOWN: Final[int]
EUNRESOLVED: Final[int]
ELEASE: Final[int]
ENOBOARD: Final[int]
EBOARD: Final[int]
EBADFACTOR: Final[int]
