'use strict';
// The shmring package: the Ring class, whose methods each make one call into the
// addon (src/shmring.c, a thin layer over libshmring), and the Error subclasses its
// failures are.
const addon = require('./build/Release/shmring.node');

/** Base class of every failure of the ring library: `code` is the library's code
 * name ('SHMRING_ENOENT'), `errno` its number (-2), the message the library's text. */
class ShmringError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}
/** SHMRING_ENOENT (no such ring, yet) or SHMRING_ENODIR (no such ring directory). */
class RingNotFoundError extends ShmringError {}
/** SHMRING_EACCES, SHMRING_EPERM. */
class PermissionDeniedError extends ShmringError {}
/** SHMRING_EOWNER, SHMRING_ENOTRING, SHMRING_EBASEOWNER, SHMRING_EBASEDIR. */
class NotTrustedError extends PermissionDeniedError {}
/** SHMRING_EEMPTY: the ring has no nodes. */
class EmptyRingError extends ShmringError {}
/** SHMRING_EALLDOWN: every node is down. */
class AllNodesDownError extends ShmringError {}
/** SHMRING_ENODE: no node has that id. */
class NoSuchNodeError extends ShmringError {}
/** SHMRING_EBADRING, SHMRING_EINVAL, SHMRING_EBADDIR, SHMRING_ENOTRINGDIR, -ENOTDIR. */
class InvalidArgumentError extends ShmringError {}
/** A version or control object that fails validation (SHMRING_EBADMAGIC ...
 * SHMRING_ECHECKSUM, SHMRING_ECONTROL). */
class CorruptRingError extends ShmringError {}
/** SHMRING_ENOMEM. */
class OutOfMemoryError extends ShmringError {}

// A copy of NODES long enough for index ID, made with new Array(length) so that V8
// keeps its elements in a plain array (elements stored far past an array's end would
// turn it into a dictionary).
function grown(nodes, id) {
  let length = Math.max(64, nodes.length);
  while (length <= id) length *= 2;
  const larger = new Array(Math.min(length, NODE_CACHE_IDS));
  for (let i = 0; i < nodes.length; i++) {
    if (nodes[i] !== undefined) larger[i] = nodes[i];
  }
  return larger;
}

// Only Ring#acquire makes a Lease.
const NEW_LEASE = Symbol('shmring.newLease');

/** A bounded-load lease of one request on a node (docs/bounded-loads.md): counted on
 * the ring's load board, which every worker process of the host shares, until
 * release(). `node`, `candidates` and `counted` are the addon's. */
class Lease {
  #lease;

  constructor(token, handle, key) {
    if (token !== NEW_LEASE) throw new TypeError('a Lease is made by ring.acquire(key)');
    this.#lease = addon.acquire(handle, key, this);
  }

  /** Ends the lease; a second release throws ShmringError SHMRING_ELEASE. */
  release() { addon.release(this.#lease); }
  get held() { return addon.held(this.#lease); }
}

// Node ids below this have their objects kept by id in an array, as the addon's own
// cache keeps them (NODE_CACHE_IDS in src/shmring.c); larger ones are asked for.
const NODE_CACHE_IDS = 65536;
// What lookupCachedId() adds to an id when the array must be emptied first.
const FRONT_STALE_FLAG = 2 ** 32;

/** A reader of one ring, opened once per process (each worker opens its own). Each
 * method is one call into the addon, which takes the ring's handle first; lookup()
 * first looks in an array of its own. */
class Ring {
  #handle;
  // The node objects of the addon's cache by id, in an array read in JavaScript: an
  // array slot is one read, where the addon's reference to an object costs two
  // dependent reads more, each a cache miss on a stream of keys over a large ring.
  // Only objects of the version whose fingerprint the addon's cache holds are here:
  // the addon says when that changes, and the array is then emptied.
  #nodes = [];

  constructor(name, options) {
    this.#handle = addon.open(name, options);
  }

  lookup(key) {
    const answer = addon.lookupCachedId(this.#handle, key);
    if (answer < FRONT_STALE_FLAG) {
      const node = this.#nodes[answer];
      if (node !== undefined) return node;
    } else {
      this.#nodes = [];
    }
    return this.#lookupFirst(key);
  }

  // A lookup whose node the array does not hold yet: the addon's lookup (the cached
  // object, or one it makes), kept in the array. Should that lookup have followed a
  // newer version, the addon says so at the next lookupCachedId(), before the array
  // is read again.
  #lookupFirst(key) {
    const node = addon.lookup(this.#handle, key);
    const id = node.id;
    if (id < NODE_CACHE_IDS) {
      if (id >= this.#nodes.length) this.#nodes = grown(this.#nodes, id);
      this.#nodes[id] = node;
    }
    return node;
  }

  lookupId(key) { return addon.lookupId(this.#handle, key); }
  lookupIds(keys) { return addon.lookupIds(this.#handle, keys); }
  lookupN(key, n) { return addon.lookupN(this.#handle, key, n); }
  node(id) { return addon.node(this.#handle, id); }
  nodes() { return addon.nodes(this.#handle); }
  snapshot() { return addon.snapshot(this.#handle); }
  status() { return addon.status(this.#handle); }
  close() { addon.close(this.#handle); }
  get generation() { return addon.generation(this.#handle); }
  get fingerprint() { return addon.fingerprint(this.#handle); }
  get closed() { return addon.closed(this.#handle); }

  /** Leases KEY's node; release() it in a finally block, or use withLease(). */
  acquire(key) { return new Lease(NEW_LEASE, this.#handle, key); }

  /** Calls FN(node) under a lease of KEY and releases it when FN returns or throws,
   * or, when FN returns a promise (an async function), when that promise settles;
   * returns what FN returns (then a promise of its value). */
  withLease(key, fn) {
    if (typeof fn !== 'function') throw new TypeError('withLease(key, fn): fn must be a function');
    const lease = this.acquire(key);
    let result;
    try {
      result = fn(lease.node);
    } catch (error) {
      lease.release();
      throw error;
    }
    if (result !== null && (typeof result === 'object' || typeof result === 'function') &&
        typeof result.then === 'function') {
      return Promise.resolve(result).finally(() => lease.release());
    }
    lease.release();
    return result;
  }
}

const errors = {
  ShmringError,
  RingNotFoundError,
  PermissionDeniedError,
  NotTrustedError,
  EmptyRingError,
  AllNodesDownError,
  NoSuchNodeError,
  InvalidArgumentError,
  CorruptRingError,
  OutOfMemoryError,
};
addon._init(errors);

module.exports = {
  Ring,
  Lease,
  ...errors,
  codes: addon.codes,
  strerror: addon.strerror,
  LOOKUP_N_MAX: addon.LOOKUP_N_MAX,
  DEFAULT_DIRECTORY: addon.DEFAULT_DIRECTORY,
  version: addon.version,
  libraryVersion: addon.libraryVersion,
  _noop: addon._noop,
};
