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

/** A reader of one ring, opened once per process (each worker opens its own). Each
 * method is one call into the addon, which takes the ring's handle first. */
class Ring {
  #handle;

  constructor(name, options) {
    this.#handle = addon.open(name, options);
  }

  lookup(key) { return addon.lookup(this.#handle, key); }
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
  ...errors,
  codes: addon.codes,
  strerror: addon.strerror,
  LOOKUP_N_MAX: addon.LOOKUP_N_MAX,
  DEFAULT_DIRECTORY: addon.DEFAULT_DIRECTORY,
  version: addon.version,
  libraryVersion: addon.libraryVersion,
  _noop: addon._noop,
};
