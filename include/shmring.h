/*
 * shmring: a consistent-hash ring in POSIX shared memory.
 *
 * This is the reader API that worker processes link (libshmring). A worker opens a
 * ring by name once, then looks keys up from any of its threads. Lookups take no
 * locks and make no system calls: they load the ring's generation, hash the key and
 * read one or two cache lines of the current snapshot. When `ringctl` publishes a new
 * version, the one lookup that first sees it maps and validates it, switches to it,
 * and waits until no other thread of the process still reads the old one before
 * unmapping it (a grace period): that call costs the system calls and the
 * validation, milliseconds on large rings; the other threads keep answering from the
 * old version meanwhile.
 *
 * Every function that can fail returns 0 (or a count) on success and a negative
 * SHMRING_E* code on failure. The library never prints, exits or aborts.
 *
 * "Thread-safe" below is said of the default handle. A worker that makes one call at
 * a time (one thread per process, or a runtime's global lock) opens its handle with
 * SHMRING_OPEN_SERIALIZED instead, for the cheapest one-key lookups: then each call
 * that returns a code may also return SHMRING_EINUSE (misuse: another call of the
 * process is inside the handle).
 *
 * Public structs that callers allocate (here and in shmring_ctl.h) have room to grow:
 * each ends in `uint64_t reserved[4]`, so that a later version can add fields there
 * without changing the struct's size. The rule for every such struct: a caller zeroes
 * what it passes in (`= {0}`, designated or positional initializers, memset, or the
 * matching *_default() call); the library fills what it fills in whole, reserved
 * fields zero. A field added later means the old behaviour when it is zero.
 */
#ifndef SHMRING_H
#define SHMRING_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SHMRING_VERSION_MAJOR, _MINOR, _PATCH and _STRING, generated from the build's
 * project version. */
#include "shmring_version.h"

#if defined(SHMRING_BUILDING)
#define SHMRING_API __attribute__((visibility("default")))
#else
#define SHMRING_API
#endif

/* A call whose result must not be ignored (it can fail). */
#if defined(__GNUC__) || defined(__clang__)
#define SHMRING_MUST_CHECK __attribute__((warn_unused_result))
#else
#define SHMRING_MUST_CHECK
#endif

/* The limits, as enum constants rather than macros so that FFI declarations
 * generated from this header (shmring_ffi.h) carry them too. */
enum shmring_limits {
    /* Longest node name and address, in bytes, without the terminating NUL. */
    SHMRING_NAME_MAX = 255,
    SHMRING_ADDRESS_MAX = 255,
    /* Most nodes one shmring_lookup_n() call returns; a larger N is treated as this. */
    SHMRING_LOOKUP_N_MAX = 64,
    /* Longest ring name, in bytes. */
    SHMRING_RING_NAME_MAX = 200,
    /* Longest directory path accepted, in bytes. */
    SHMRING_DIRECTORY_MAX = 1024
};
/* Where rings live unless a caller names another directory (see "Security model" in
 * docs/security.md: system rings belong in a root-only directory such as /run/shmring).
 */
#define SHMRING_DEFAULT_DIRECTORY "/dev/shm"

/*
 * Error codes. System failures are negated errno values; the library's own codes
 * start at -1000. This one list generates the enum and the message table, so a code
 * and its text cannot drift apart.
 */
#define SHMRING_ERRNO_MAP(XX)                                                            \
    XX(ENOENT, -ENOENT, "no such ring")                                                  \
    XX(EACCES, -EACCES, "permission denied")                                             \
    XX(EPERM, -EPERM, "operation not permitted")                                         \
    XX(ENOMEM, -ENOMEM, "out of memory")                                                 \
    XX(ENOSPC, -ENOSPC, "no space left in shared memory")                                \
    XX(EEXIST, -EEXIST, "already exists")                                                \
    XX(EINVAL, -EINVAL, "invalid argument")                                              \
    XX(EMFILE, -EMFILE, "too many open files")                                           \
    XX(EIO, -EIO, "input/output error")                                                  \
    XX(EEMPTY, -1000, "ring has no nodes")                                               \
    XX(EALLDOWN, -1001, "all nodes of the ring are down")                                \
    XX(EBADMAGIC, -1002, "not a shmring object (bad magic)")                             \
    XX(EFORMAT, -1003, "unsupported shmring format version")                             \
    XX(EBYTEORDER, -1004, "snapshot was written with another byte order")                \
    XX(ETRUNCATED, -1005, "snapshot size disagrees with its header")                     \
    XX(EBADSECTION, -1006, "snapshot section out of bounds or misaligned")               \
    XX(EBADPARAMS, -1007, "snapshot algorithm, hash or parameters invalid")              \
    XX(EBADNODE, -1008, "snapshot node entry invalid")                                   \
    XX(EBADSTRING, -1009, "snapshot string out of bounds or not terminated")             \
    XX(EBADPOINTS, -1010, "snapshot ring points unsorted or owned by no valid node")     \
    XX(EBADINDEX, -1011, "snapshot bucket index or lookup table inconsistent")           \
    XX(ECHECKSUM, -1012, "snapshot checksum mismatch")                                   \
    XX(EOWNER, -1013, "shared-memory object has an unexpected owner or is writable")     \
    XX(ELIMIT, -1014, "size limit exceeded")                                             \
    XX(ENODE, -1015, "no such node")                                                     \
    XX(EDUPLICATE, -1016, "duplicate node name")                                         \
    XX(EBADNAME, -1017, "invalid node name")                                             \
    XX(EBADADDRESS, -1018, "invalid node address")                                       \
    XX(EBADWEIGHT, -1019, "weight must be an integer from 1 to 65535")                   \
    XX(EBADRING, -1020, "invalid ring name")                                             \
    XX(EBADALGORITHM, -1021, "unknown placement algorithm")                              \
    XX(EBADHASH, -1022, "unknown hash function or not usable with this algorithm")       \
    XX(EBADVNODES, -1023, "vnodes must be an integer from 1 to 65535")                   \
    XX(EJSON, -1024, "invalid JSON node set")                                            \
    XX(ECONTROL, -1025, "ring control object is corrupt")                                \
    XX(ESTALE, -1026, "ring changed during the operation")                               \
    XX(ENOTRING, -1027, "the ring's path holds something that is not a ring")            \
    XX(EBUSY, -1028, "another writer holds the ring's lock")                             \
    XX(EBASEDIR, -1029, "ring directory is unsafe (writable by others, not sticky)")     \
    XX(EINUSE, -1030, "serialized handle is already in another call")                    \
    XX(EBADDIR, -1031, "ring directory must be an absolute path of at most 1024 bytes")  \
    XX(ENODIR, -1032, "no such ring directory")                                          \
    XX(ENOTRINGDIR, -1033, "not a ring directory (a kernel filesystem such as /proc)")   \
    XX(EBASEOWNER, -1034, "ring directory belongs to an untrusted user")                 \
    XX(EUNWEIGHTED, -1035, "this algorithm takes no weights (every weight must be 1)")   \
    XX(EJUMPDOWN, -1036, "jump takes no down nodes (remove the last node instead)")      \
    XX(ERENUMBER, -1037, "jump would renumber its buckets (remove only the last nodes)") \
    XX(EFEATURE, -1038,                                                                  \
       "version uses a feature this reader does not know (a newer writer's: upgrade)")   \
    XX(ENEWFORMAT, -1039, "format is newer than this reader (upgrade and restart it)")   \
    XX(ENODOWN, -1040, "this algorithm takes no down nodes (remove the node instead)")   \
    XX(EUNRESOLVED, -1041,                                                               \
       "the algorithm hashes resolved addresses: give a host name's node a hash_key")    \
    XX(ELEASE, -1042, "lease already released, or never acquired")                       \
    XX(ENOBOARD, -1043, "ring has no load board (ringctl board GROUP adds one)")         \
    XX(EBOARD, -1044, "load board is damaged or not the ring owner's")                   \
    XX(EBADFACTOR, -1045, "balance factor must be 0 (none) or from 1.00 to 100.00")

enum shmring_error {
#define SHMRING_ERROR_ENUM(name, value, text) SHMRING_##name = (value),
    SHMRING_ERRNO_MAP(SHMRING_ERROR_ENUM)
#undef SHMRING_ERROR_ENUM
};

/*
 * Returns a static, never NULL description of a SHMRING_E* code (or of any other
 * negative errno value). Thread-safe.
 */
SHMRING_API const char *shmring_strerror(int err);

/*
 * Returns the static, never NULL name of a SHMRING_E* code as this header spells it
 * ("SHMRING_ENOENT" for SHMRING_ENOENT), or "unknown" for any other value (0 and
 * negated errno values that are not SHMRING_E* codes included). Thread-safe.
 */
SHMRING_API const char *shmring_err_name(int err);

/* Returns the library's version as "MAJOR.MINOR.PATCH". Thread-safe. */
SHMRING_API const char *shmring_version(void);

/*
 * One node, as a lookup answers it. The strings are copies made by the call into
 * the caller's struct: they stay valid for as long as the struct does, whatever
 * versions are published or unmapped meanwhile.
 */
typedef struct shmring_node {
    /* Stable for as long as the node exists: index connection pools by it. */
    uint32_t id;
    uint32_t weight;
    char name[SHMRING_NAME_MAX + 1];
    char address[SHMRING_ADDRESS_MAX + 1];
    /* Room to grow (see the top of this header). */
    uint64_t reserved[4];
} shmring_node_t;

/* A reader handle. One handle may be shared by all threads of a process, unless it
 * was opened with SHMRING_OPEN_SERIALIZED. */
typedef struct shmring shmring_t;

/*
 * Flags for shmring_open_options_t.flags.
 *
 * SHMRING_OPEN_SERIALIZED: the caller promises that no two calls on this handle run
 * at the same time (SQLite's "no mutex" connections make the same promise). Its
 * calls may come from different threads one after the other, ordered by the
 * caller's own lock: a language runtime's global lock (CPython's GIL), one thread
 * per process (prefork servers, nginx/OpenResty workers, PHP-FPM workers, gunicorn
 * sync workers), or a mutex. A lookup then enters no read-side critical section: it
 * checks the published generation and reads the snapshot, and a switch to a newer
 * version unmaps the old one at once instead of waiting for a grace period. A
 * one-key lookup costs about what the same lookup on an in-process snapshot costs
 * (docs/performance.md); the default handle adds liburcu's read section instead,
 * which is what lets any number of threads share it.
 *
 * Such a handle is inherited by fork() like any other: the child's copy is its own,
 * so parent and child may each go on using theirs. A call that finds another call
 * of the same process still inside the handle refuses to run and returns
 * SHMRING_EINUSE (shmring_generation() returns 0, shmring_status() fills in only
 * failed_error = SHMRING_EINUSE); this catches a thread that calls while another
 * is switching versions, say, but not every overlap, so it is a safety net rather
 * than a lock. A program whose threads cannot take turns opens one serialized
 * handle per thread, or uses the default handle.
 */
enum shmring_open_flags { SHMRING_OPEN_SERIALIZED = 1 };

/*
 * Where to find a ring and whom to trust, for shmring_open_with() and the control
 * API's read-only calls. All zero (or a NULL pointer) means the defaults.
 */
typedef struct shmring_open_options {
    /* The directory holding the rings, an absolute path (only its last component is
     * checked, so every directory above it must be one only trusted users can
     * change); NULL means SHMRING_DEFAULT_DIRECTORY. */
    const char *directory;
    /* A ring is accepted only when its owner is root, the caller's effective uid, or
     * this uid (0, the default, adds nobody: root is trusted anyway). A handle then
     * trusts only the owner it first accepted, even after the ring is re-created. */
    uid_t trusted_owner;
    /* SHMRING_OPEN_* flags (0: a handle that every thread may share). Only
     * shmring_open_with() reads them; the control API's calls ignore them. */
    uint32_t flags;
    /* Room to grow: zero (see the top of this header). */
    uint64_t reserved[4];
} shmring_open_options_t;

/*
 * Opens the ring RING (1-200 bytes of [A-Za-z0-9_.-]) for reading and fills *out,
 * like shmring_open_with() with default options.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_open(const char *ring, shmring_t **out);

/*
 * Opens the ring RING in OPTIONS' directory (NULL: the defaults) for reading and
 * fills *out. The handle belongs to the caller until shmring_close(); it holds no
 * file descriptor. Returns 0, SHMRING_EBADRING, SHMRING_EBADDIR (a directory path
 * that is empty, relative or longer than SHMRING_DIRECTORY_MAX), SHMRING_ENODIR (no
 * such directory), SHMRING_ENOTRINGDIR (a directory on a kernel filesystem such as
 * /proc or /sys, which cannot hold rings), -ENOTDIR (the path is not a directory),
 * SHMRING_EBASEOWNER (the directory belongs to a user this call does not trust),
 * SHMRING_EBASEDIR (others may write the directory and it is not sticky),
 * SHMRING_ENOENT (the ring does not exist yet: retry later if you like),
 * SHMRING_EACCES, SHMRING_ENOMEM,
 * SHMRING_EMFILE, SHMRING_EOWNER (the ring belongs to a user this call does not trust, or
 * others may write it), SHMRING_ENOTRING (something else has the ring's name: another
 * user's file, a FIFO, a symbolic link), SHMRING_ECONTROL (a corrupt
 * control object), SHMRING_ENEWFORMAT or SHMRING_EFEATURE (the ring or its current
 * version is a newer release's that this reader cannot read: docs/upgrading.md), or a
 * validation error of the current version; SHMRING_EINVAL
 * also for flags this version does not know. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_open_with(const char *ring, const shmring_open_options_t *options,
                  shmring_t **out);

/*
 * Closes a handle (NULL is accepted). No other thread may use the handle during or
 * after this call.
 */
SHMRING_API void shmring_close(shmring_t *r);

/*
 * Finds the node that owns KEY and copies it to *out. Returns 0, SHMRING_EEMPTY (no
 * nodes), SHMRING_EALLDOWN (every node is down) or, on a serialized handle only,
 * SHMRING_EINUSE (see SHMRING_OPEN_SERIALIZED). Never waits for a writer or for
 * another process; may be called from any number of threads at once. When a newer
 * version is published, this call switches to it first (see above for what that one
 * call costs); if that version cannot be used (it vanished, or fails validation),
 * the call keeps answering from the last good version.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_lookup(shmring_t *r, const void *key,
                                                  size_t len, shmring_node_t *out);

/*
 * Finds the node that owns KEY, like shmring_lookup(), and stores only its id in
 * *id: the call for hot paths that keep their own table of nodes (connection pools
 * indexed by id), as it copies no strings. Returns 0, SHMRING_EEMPTY or
 * SHMRING_EALLDOWN. Thread-safe and follows new versions like shmring_lookup().
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_lookup_id(shmring_t *r, const void *key,
                                                     size_t len, uint32_t *id);

/*
 * Finds the node that owns KEY like shmring_lookup_id(), and stores in *fingerprint
 * the content fingerprint of the version that answered (what shmring_fingerprint()
 * says of it): for a language binding that keeps one node object per node of a
 * version, made once and returned by every lookup that answers that node from a
 * version of that fingerprint (two versions with one fingerprint have the same name,
 * address and weight for every id). Both come from one version, whatever other
 * threads switch meanwhile, which a shmring_lookup_id() followed by another call
 * cannot promise. Returns 0, SHMRING_EEMPTY or SHMRING_EALLDOWN (then neither out
 * parameter is written). Thread-safe and follows new versions like shmring_lookup().
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_lookup_id_versioned(shmring_t *r,
                                                               const void *key,
                                                               size_t len, uint32_t *id,
                                                               uint64_t *fingerprint);

/*
 * Looks up COUNT keys at once: ids[i] gets the id of the owner of keys[i], which is
 * lens[i] bytes long. All the keys are answered from one version, and the batch
 * overlaps the keys' memory accesses, so it costs less per key than COUNT calls of
 * shmring_lookup_id() (a multi-get routing its keys, say). Returns 0, SHMRING_EEMPTY
 * or SHMRING_EALLDOWN (whatever COUNT, even 0); on an error IDS is not written.
 * Thread-safe and follows new versions like shmring_lookup().
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_lookup_ids(shmring_t *r,
                                                      const void *const *keys,
                                                      const size_t *lens, size_t count,
                                                      uint32_t *ids);

/*
 * Fills out[0..n-1] with up to N distinct up nodes for KEY, in the algorithm's
 * preference order (the first is what shmring_lookup answers). Returns how many it
 * filled (fewer than N when the ring has fewer up nodes), or SHMRING_EEMPTY,
 * SHMRING_EALLDOWN or SHMRING_EINVAL (N is 0). Thread-safe like shmring_lookup.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_lookup_n(shmring_t *r, const void *key,
                                                    size_t len, shmring_node_t *out,
                                                    size_t n);

/*
 * Copies the node whose id is ID in the version this handle answers from (after
 * switching to a newer published version if there is one) to *out: how a worker
 * that routes with shmring_lookup_id() learns a new id's name and address. Returns
 * 0, SHMRING_ENODE (no node of this version has that id) or SHMRING_EEMPTY (nothing
 * is published yet). Thread-safe; O(log nodes).
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_node(shmring_t *r, uint32_t id,
                                                shmring_node_t *out);

/* Every node of one version, with that version's generation and fingerprint. */
typedef struct shmring_nodes {
    uint64_t generation;
    /* The version's content fingerprint (0 when nothing is published). */
    uint64_t fingerprint;
    size_t count;
    /* COUNT nodes in the version's node order; owned by the library until
     * shmring_nodes_free(). */
    shmring_node_t *nodes;
    /* Room to grow (see the top of this header). */
    uint64_t reserved[4];
} shmring_nodes_t;

/*
 * Fills *out with a copy of every node of the version this handle answers from
 * (after switching to a newer one if there is one), and that version's generation
 * and fingerprint: one consistent copy, all from the same version, so a worker can
 * rebuild its connection pools and know which version they match. When nothing is
 * published, count is 0 and generation 0. Free with shmring_nodes_free(). Returns 0
 * or SHMRING_ENOMEM. Thread-safe; the copy holds back another thread's switch to a
 * newer version until it is done (a grace period), so it is not for hot paths.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodes(shmring_t *r, shmring_nodes_t *out);

/* Frees what shmring_nodes() filled in (NULL is accepted) and zeroes its count. */
SHMRING_API void shmring_nodes_free(shmring_nodes_t *nodes);

/*
 * Stores the content fingerprint of the version this handle answers from (after
 * switching to a newer one if there is one) in *fingerprint. It covers exactly what
 * decides answers: the algorithm, the hash, the parameters the algorithm uses (vnodes
 * for ring, groupcache and spymemcached, the table size in use for maglev) and, for
 * each node taken in name order, its name, address, weight, state, id and hash key
 * (and node order where it may change an answer: for ketama, libketama, envoy-ring,
 * dalli, spymemcached and groupcache the order of the up nodes,
 * for nginx and haproxy of all nodes, down ones included; never for ring, maglev,
 * envoy-maglev and twemproxy). So two rings show the same fingerprint, on any host and
 * whatever their history, exactly when they answer every key with the same nodes and ids
 * (docs/fleet.md). Returns 0 or SHMRING_EEMPTY (nothing published yet).
 * Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_fingerprint(shmring_t *r,
                                                       uint64_t *fingerprint);

/*
 * Returns the generation of the version that this handle currently answers from,
 * after switching to a newer published version if there is one. Thread-safe.
 */
SHMRING_API uint64_t shmring_generation(shmring_t *r);

/* What a handle answers from and how its switching went, for a worker's own status
 * page or health check. */
typedef struct shmring_status {
    /* The version the handle answers from: its generation and fingerprint (both 0
     * when nothing was published yet). */
    uint64_t generation;
    uint64_t fingerprint;
    /* The generation the ring names as current now. Ahead of GENERATION when no
     * lookup ran since the publication (the next one switches) or when the handle
     * cannot switch (then FAILED_GENERATION says why). */
    uint64_t published_generation;
    /* When the handle began answering from GENERATION (at open or at its last
     * switch), Unix time in nanoseconds. */
    int64_t switched_at_ns;
    /* The last failed attempt to switch since then: the generation it tried (0:
     * none failed; UINT64_MAX: the ring was destroyed), its SHMRING_E* code (a validation
     * error for a corrupt version, SHMRING_ENOENT for a ring destroyed or a version gone,
     * ...) and when, in Unix nanoseconds. The handle retries such a version every 100 ms
     * or so. */
    uint64_t failed_generation;
    int failed_error;
    int64_t failed_at_ns;
    /* Skew (docs/upgrading.md): when FAILED_ERROR is SHMRING_ENEWFORMAT or
     * SHMRING_EFEATURE, the ring moved on to a version of a newer release than this
     * reader, which keeps answering from GENERATION until it is upgraded and restarted:
     * the refused version's snapshot format (0 when the ring's control object itself
     * was refused); else 0. */
    uint32_t failed_format;
    uint32_t reserved0;
    /* Room to grow (see the top of this header). */
    uint64_t reserved[3];
} shmring_status_t;

/*
 * Fills *out with the handle's state. Never switches versions and makes no system
 * call: a few loads, cheap enough for every health check. Thread-safe; the fields
 * of one call are consistent with each other (one version, one failure).
 */
SHMRING_API void shmring_status(shmring_t *r, shmring_status_t *out);

/*
 * A bounded-load lease (docs/bounded-loads.md): one request in flight on a node,
 * counted on the ring's load board, which every worker process of the host shares.
 * The caller allocates it (zeroed or not: shmring_acquire() fills it whole) and
 * passes it back to shmring_release() once the request is done.
 */
typedef struct shmring_lease {
    /* The node the request goes to: shmring_node() gives its name and address. */
    uint32_t id;
    /* How many of the key's candidates were tried: 1 when its first candidate (the
     * node shmring_lookup_id() answers) took it. */
    uint32_t candidates;
    /* Whether the lease is counted on the board (1), or is a plain lookup's answer
     * (0: the ring has no board, this process is not in its group, or every slot
     * of the board is taken). */
    uint32_t counted;
    uint32_t reserved0;
    /* The library's own. */
    uint64_t internal[4];
    /* Room to grow (see the top of this header). */
    uint64_t reserved[4];
} shmring_lease_t;

/*
 * Picks the node for KEY under the ring's balance factor C and counts one request in
 * flight on it until shmring_release(). The candidates are KEY's distinct up nodes
 * in the order shmring_lookup_n() gives (at most SHMRING_LOOKUP_N_MAX); the node is
 * the first whose in-flight count is below its capacity,
 * ceil(C x (in-flight requests of the ring + 1) x weight / sum of the up nodes'
 * weights), or, when every candidate is at its capacity, the least loaded one (by
 * in-flight count over weight; never a refusal). Without a balance factor the node
 * is the one shmring_lookup() answers (the request is still counted). Without a
 * board, or in a process that may not write it, the lease is a plain lookup's
 * answer, not counted (lease->counted is 0). Returns 0, SHMRING_EEMPTY,
 * SHMRING_EALLDOWN or, on a serialized handle, SHMRING_EINUSE. Thread-safe.
 * Release the lease in the process that acquired it: a forked child's release of a
 * parent's lease counts nothing.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_acquire(shmring_t *r, const void *key,
                                                   size_t len, shmring_lease_t *lease);

/*
 * Ends LEASE, acquired on the handle R: the node's in-flight count goes down by one.
 * Returns 0, or SHMRING_ELEASE for a lease already released or never acquired (then
 * nothing is counted down), or SHMRING_EINUSE on a serialized handle in another
 * call. A lease of a node removed from the ring since, or of a worker whose leases
 * were reclaimed, counts nothing down. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_release(shmring_t *r, shmring_lease_t *lease);

#ifdef __cplusplus
}
#endif

#endif /* SHMRING_H */
