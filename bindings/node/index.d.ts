// Type declarations of the shmring package (the addon in src/shmring.c).

/** A key: a string (looked up as its UTF-8 bytes, as Buffer.from(key) makes them),
 * or the bytes a Buffer, typed array, DataView or ArrayBuffer views. */
export type Key = string | ArrayBufferView | ArrayBuffer;

/** One node of a ring, as a lookup answers it: frozen, and the same object for every
 * lookup that answers this node from one version of the ring. */
export interface Node {
  /** Stable for as long as the node exists: index connection pools by it. */
  readonly id: number;
  readonly name: string;
  /** Such as '10.0.1.1:11211'. */
  readonly address: string;
  /** 1-65535. */
  readonly weight: number;
}

/** What a ring answers from, as Ring#status() returns it. */
export interface Status {
  /** The ring exists and a published version of it answers. */
  readonly present: boolean;
  /** The ring was destroyed: lookups answer from its last version until a ring made
   * again under its name is followed. */
  readonly destroyed: boolean;
  /** The generation of the version answered from (0: none). */
  readonly generation: number;
  /** That version's fingerprint as the 16 hex digits `ringctl show` prints; null when
   * nothing was published. */
  readonly fingerprint: string | null;
  /** The code of the last failed switch to a newer version ('SHMRING_ENOENT' once the
   * ring was destroyed), null when none failed. */
  readonly error: string | null;
  /** The snapshot format of a version refused as newer than this reader (error
   * 'SHMRING_ENEWFORMAT' or 'SHMRING_EFEATURE': upgrade, then restart the worker), else 0. */
  readonly failedFormat: number;
}

/** Every node of one version, with that version's generation and fingerprint. */
export interface Snapshot {
  readonly generation: number;
  readonly fingerprint: string | null;
  readonly nodes: readonly Node[];
}

export interface RingOptions {
  /** The directory holding the ring, an absolute path (default '/dev/shm'). */
  directory?: string;
  /** A uid whose rings are accepted besides root's and the process's own. */
  trustedOwner?: number;
}

/** A bounded-load lease of one request on a node (docs/bounded-loads.md), as
 * Ring#acquire() returns it: counted on the ring's load board, which every worker
 * process of the host shares, until release(). */
export class Lease {
  private constructor();
  /** The node the request goes to. */
  readonly node: Node;
  /** How many of the key's candidates were tried: 1 when its first took it. */
  readonly candidates: number;
  /** Whether the ring's load board counts the lease; false for a plain lookup's
   * answer (the ring has no board, or this process is not in its group). */
  readonly counted: boolean;
  /** True until the lease is released (or its ring closed, which releases it). */
  readonly held: boolean;
  /** Ends the lease. A second release throws ShmringError with code
   * 'SHMRING_ELEASE'. */
  release(): void;
}

/** A reader of one ring, opened once per process (per worker). Every method throws
 * an Error with code 'ERR_SHMRING_CLOSED' once close() was called. */
export class Ring {
  /** Opens ring NAME (1-200 bytes of [A-Za-z0-9_.-]): maps and validates its current
   * version. Throws RingNotFoundError (no such ring yet), NotTrustedError,
   * PermissionDeniedError, InvalidArgumentError, CorruptRingError, ... */
  constructor(name: string, options?: RingOptions);
  /** The node that owns KEY. Throws EmptyRingError or AllNodesDownError. */
  lookup(key: Key): Node;
  /** The id of the node that owns KEY: the hot-path call. */
  lookupId(key: Key): number;
  /** The ids of the nodes that own each of KEYS, all from one version, in one call. */
  lookupIds(keys: readonly Key[]): Uint32Array;
  /** Up to N distinct up nodes for KEY in preference order (at most LOOKUP_N_MAX);
   * RangeError when N < 1. */
  lookupN(key: Key, n: number): Node[];
  /** The node with id ID in the current version; NoSuchNodeError for any other. */
  node(id: number): Node;
  /** Every node (up and down) of the current version, in node order. */
  nodes(): Node[];
  /** Every node of one version, with its generation and fingerprint. */
  snapshot(): Snapshot;
  /** What the ring answers from, after following a newer version if there is one. */
  status(): Status;
  /** Leases the node for KEY under the ring's balance factor, counting one request
   * in flight on it until the lease's release(): call that in a finally block.
   * Throws EmptyRingError or AllNodesDownError. */
  acquire(key: Key): Lease;
  /** Calls FN with the leased node and releases the lease when FN returns or throws,
   * or, when FN returns a promise, when that promise settles (resolved or rejected).
   * Returns what FN returns. */
  withLease<T>(key: Key, fn: (node: Node) => T): T extends PromiseLike<infer U> ? Promise<U> : T;
  /** Closes the ring (idempotent); its leases are released with it. */
  close(): void;
  /** The generation answered from, after following a newer version (0: none yet). */
  readonly generation: number;
  /** The current version's fingerprint as 16 hex digits, null when none. */
  readonly fingerprint: string | null;
  readonly closed: boolean;
}

/** Base class of every failure of the ring library. */
export class ShmringError extends Error {
  /** The library's code name, such as 'SHMRING_ENOENT'. */
  readonly code: string;
  /** The library's code number, such as -2. */
  readonly errno: number;
}
/** SHMRING_ENOENT (no such ring yet), SHMRING_ENODIR (no such ring directory). */
export class RingNotFoundError extends ShmringError {}
/** SHMRING_EACCES, SHMRING_EPERM. */
export class PermissionDeniedError extends ShmringError {}
/** SHMRING_EOWNER, SHMRING_ENOTRING, SHMRING_EBASEOWNER, SHMRING_EBASEDIR. */
export class NotTrustedError extends PermissionDeniedError {}
/** SHMRING_EEMPTY. */
export class EmptyRingError extends ShmringError {}
/** SHMRING_EALLDOWN. */
export class AllNodesDownError extends ShmringError {}
/** SHMRING_ENODE. */
export class NoSuchNodeError extends ShmringError {}
/** SHMRING_EBADRING, SHMRING_EINVAL, SHMRING_EBADDIR, SHMRING_ENOTRINGDIR, -ENOTDIR. */
export class InvalidArgumentError extends ShmringError {}
/** SHMRING_EBADMAGIC ... SHMRING_ECHECKSUM, SHMRING_ECONTROL. */
export class CorruptRingError extends ShmringError {}
/** SHMRING_ENOMEM. */
export class OutOfMemoryError extends ShmringError {}

/** Every code by name: codes.SHMRING_ENOENT === -2. */
export const codes: Readonly<Record<string, number>>;
/** The library's text for a code. */
export function strerror(code: number): string;
export const LOOKUP_N_MAX: number;
export const DEFAULT_DIRECTORY: string;
/** The package's version: the headers' it was compiled against. */
export const version: string;
/** The version of the libshmring loaded at run time. */
export const libraryVersion: string;
