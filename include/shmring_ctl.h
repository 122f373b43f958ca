/*
 * shmring control API (libshmringctl): node sets, ring snapshots, publication.
 *
 * A node set is a process-local, mutable description of a ring: its nodes and its
 * placement parameters. A snapshot is the immutable, position-independent buffer
 * built from a node set; it is what gets published into shared memory and what
 * readers look keys up in.
 */
#ifndef SHMRING_CTL_H
#define SHMRING_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shmring.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum shmring_algorithm {
    SHMRING_ALGORITHM_RING = 0,
    SHMRING_ALGORITHM_MAGLEV = 1,
    SHMRING_ALGORITHM_KETAMA = 2,
} shmring_algorithm_t;

typedef enum shmring_hash {
    SHMRING_HASH_XXH3 = 0,
    SHMRING_HASH_MD5 = 1,
    SHMRING_HASH_CRC32 = 2,
    SHMRING_HASH_FNV1A = 3,
    SHMRING_HASH_MURMUR3 = 4,
} shmring_hash_t;

typedef enum shmring_state {
    SHMRING_STATE_UP = 0,
    SHMRING_STATE_DOWN = 1,
} shmring_state_t;

#define SHMRING_DEFAULT_VNODES 160
#define SHMRING_WEIGHT_MAX 65535
#define SHMRING_VNODES_MAX 65535
/* Limits of one snapshot; anything larger is refused with SHMRING_ELIMIT. */
#define SHMRING_NODES_MAX 1000000u
#define SHMRING_POINTS_MAX (1u << 24)

/* Placement parameters of a ring. */
typedef struct shmring_params {
    shmring_algorithm_t algorithm;
    /* Key and point hash of `ring` and `maglev`; `ketama` always uses MD5. */
    shmring_hash_t hash;
    /* Points per unit of weight (`ring` only). */
    uint32_t vnodes;
    /* Maglev table size: 0 picks the default prime; otherwise a prime >= up nodes. */
    uint32_t table_size;
} shmring_params_t;

/* Fills *params with the defaults: `ring`, xxh3, 160 vnodes. */
SHMRING_API void shmring_params_default(shmring_params_t *params);

/* The hash ALGORITHM uses unless told otherwise: md5 for ketama (the only one it
 * takes), xxh3 for the others. */
SHMRING_API shmring_hash_t shmring_algorithm_default_hash(shmring_algorithm_t algorithm);

/* Names of algorithms and hashes, as ringctl and JSON spell them. */
SHMRING_API const char *shmring_algorithm_name(shmring_algorithm_t algorithm);
SHMRING_API const char *shmring_hash_name(shmring_hash_t hash);
/* Parse a name; return 0, SHMRING_EBADALGORITHM or SHMRING_EBADHASH. */
SHMRING_API SHMRING_MUST_CHECK int shmring_algorithm_parse(const char *name,
                                                           shmring_algorithm_t *out);
SHMRING_API SHMRING_MUST_CHECK int shmring_hash_parse(const char *name,
                                                      shmring_hash_t *out);

/*
 * Checks parameters: returns 0, SHMRING_EBADALGORITHM, SHMRING_EBADHASH (ketama
 * takes only md5), SHMRING_EBADVNODES, or SHMRING_EINVAL (table size not prime).
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_params_check(const shmring_params_t *params);

/* ---- Node sets ------------------------------------------------------------ */

typedef struct shmring_nodeset shmring_nodeset_t;

/* One node of a node set; the strings belong to the node set. */
typedef struct shmring_node_info {
    uint32_t id;
    uint32_t weight;
    shmring_state_t state;
    const char *name;
    const char *address;
} shmring_node_info_t;

/* Creates an empty node set with default parameters. Returns 0 or SHMRING_ENOMEM. */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_new(shmring_nodeset_t **out);
/* Frees a node set (NULL is accepted). */
SHMRING_API void shmring_nodeset_free(shmring_nodeset_t *set);

/* Sets the parameters after shmring_params_check(); returns its code. */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_set_params(shmring_nodeset_t *set, const shmring_params_t *params);
SHMRING_API void shmring_nodeset_params(const shmring_nodeset_t *set,
                                        shmring_params_t *out);

/*
 * Checks a node name or an address: 1-255 bytes of valid UTF-8 without control
 * characters. Return 0, SHMRING_EBADNAME or SHMRING_EBADADDRESS.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_node_name_check(const char *name);
SHMRING_API SHMRING_MUST_CHECK int shmring_node_address_check(const char *address);

/*
 * Appends a node with a new id; ADDRESS NULL means the name. Returns 0 and fills *id
 * (if not NULL), or SHMRING_EBADNAME, SHMRING_EBADADDRESS, SHMRING_EBADWEIGHT,
 * SHMRING_EDUPLICATE, SHMRING_ELIMIT, SHMRING_EINVAL (bad state) or SHMRING_ENOMEM; on
 * error the set is unchanged.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_add(shmring_nodeset_t *set, const char *name, const char *address,
                    uint32_t weight, shmring_state_t state, uint32_t *id);

/* Remove a node, or change its weight or state: 0, SHMRING_ENODE or SHMRING_EBADWEIGHT.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_remove(shmring_nodeset_t *set,
                                                          const char *name);
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_set_weight(shmring_nodeset_t *set, const char *name, uint32_t weight);
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_set_state(shmring_nodeset_t *set,
                                                             const char *name,
                                                             shmring_state_t state);

/* Number of nodes, and the node at INDEX (0 or SHMRING_EINVAL). */
SHMRING_API size_t shmring_nodeset_count(const shmring_nodeset_t *set);
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_get(const shmring_nodeset_t *set, size_t index, shmring_node_info_t *out);
/* Finds a node by name: 0 and *index, or SHMRING_ENODE. */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_find(const shmring_nodeset_t *set,
                                                        const char *name, size_t *index);

/*
 * Gives the nodes of SET that also exist (by name) in PREVIOUS the ids they have
 * there, and every other node a fresh id after PREVIOUS's, so that ids stay stable
 * when a whole node set is replaced. Returns 0, or SHMRING_ELIMIT (the new ids would
 * reach the id limit, UINT32_MAX) with SET unchanged.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_inherit_ids(shmring_nodeset_t *set, const shmring_nodeset_t *previous);

/* ---- Snapshots ------------------------------------------------------------ */

/*
 * Builds the snapshot of SET into a new buffer (free it with free()). The same node
 * set and parameters give byte-identical snapshots on every host of the same byte
 * order. Returns 0, SHMRING_ELIMIT (checked before anything large is allocated) or
 * SHMRING_ENOMEM.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_snapshot_build(const shmring_nodeset_t *set,
                                                          void **buffer, size_t *size);

/*
 * Validates a snapshot of SIZE bytes that may hold any bytes at all: every offset,
 * length and count, every node index and string, the lookup structures and the
 * checksum. Reads nothing outside [buffer, buffer + size). Returns 0 or the
 * specific SHMRING_E* code of the first problem found.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_snapshot_validate(const void *buffer,
                                                             size_t size);

/* What a validated snapshot's header says. */
typedef struct shmring_snapshot_info {
    shmring_params_t params;
    uint32_t node_count;
    uint32_t up_count;
    /* Ring points (ring, ketama) or maglev table slots. */
    uint32_t point_count;
    uint32_t next_node_id;
    uint64_t size;
    uint64_t fingerprint;
} shmring_snapshot_info_t;

/*
 * The functions below take a buffer that shmring_snapshot_validate() accepted. The
 * lookups answer like the reader's shmring_lookup(), shmring_lookup_id(),
 * shmring_lookup_ids() and shmring_lookup_n() (see shmring.h) on this one snapshot.
 */
SHMRING_API void shmring_snapshot_info(const void *buffer, shmring_snapshot_info_t *out);
SHMRING_API SHMRING_MUST_CHECK int shmring_snapshot_lookup(const void *buffer,
                                                           const void *key, size_t len,
                                                           shmring_node_t *out);
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_lookup_id(const void *buffer, const void *key, size_t len, uint32_t *id);
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_lookup_ids(const void *buffer, const void *const *keys,
                            const size_t *lens, size_t count, uint32_t *ids);
SHMRING_API SHMRING_MUST_CHECK int shmring_snapshot_lookup_n(const void *buffer,
                                                             const void *key, size_t len,
                                                             shmring_node_t *out,
                                                             size_t n);
/*
 * Fills SHARES[i] with the fraction of the keyspace owned by the i-th node of the
 * snapshot (node-set order); SHARES has room for node_count values.
 */
SHMRING_API void shmring_snapshot_shares(const void *buffer, double *shares);

/*
 * Recreates the node set a snapshot was built from (nodes, ids, parameters).
 * Returns 0, SHMRING_ENOMEM, or SHMRING_EBADNODE when the snapshot holds two nodes
 * of the same name (which the validator, run by every reader, does not look for).
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_from_snapshot(const void *buffer,
                                                                 shmring_nodeset_t **out);

/* ---- JSON node sets ------------------------------------------------------- */

/* Where a JSON node set went wrong, filled by the JSON functions on failure. */
typedef struct shmring_json_error {
    /* 1-based line and column of a syntax error; 0 when the error is not syntax. */
    int line;
    int column;
    /* The complete one-line message, e.g. "nodes[3].weight: must be an integer from 1
     * to 65535" or "line 4, column 7: ...". */
    char text[320];
} shmring_json_error_t;

/*
 * Parses a JSON node set (see README.md) of LEN bytes into a new node set. Fields the
 * text leaves out (algorithm, hash, vnodes, table_size) are taken from BASE (NULL:
 * the defaults); a hash that BASE gives but the text's algorithm cannot use falls
 * back to that algorithm's default (ketama: md5, others: xxh3). Node order in the
 * text is node-set order; ids are 0, 1, ... (see shmring_nodeset_inherit_ids()).
 * Returns 0, SHMRING_EJSON (with *error filled), or SHMRING_ENOMEM.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_from_json(const char *text, size_t len,
                                                             const shmring_params_t *base,
                                                             shmring_nodeset_t **out,
                                                             shmring_json_error_t *error);

/*
 * Writes SET as JSON that shmring_nodeset_from_json() reads back to the same node
 * set and parameters (ids aside). *text is NUL-terminated and belongs to the caller
 * (free()). Returns 0 or SHMRING_ENOMEM.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_to_json(const shmring_nodeset_t *set,
                                                           char **text);

/* ---- Publication into shared memory --------------------------------------- */

/*
 * Checks a ring name: 1-200 bytes of [A-Za-z0-9_.-], not "." or "..", and not ending
 * in a dot followed by digits (that is how version objects are named). Returns 0 or
 * SHMRING_EBADRING.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_ring_name_check(const char *ring);

/* What a ring's control object says. */
typedef struct shmring_ring_status {
    uint64_t generation;
    uint64_t publish_count;
    /* The last publisher's pid and the time of its publication (Unix seconds). */
    int64_t publisher_pid;
    int64_t published_at;
    uid_t owner;
    mode_t mode;
} shmring_ring_status_t;

/* Reads a ring's control object: 0, SHMRING_EBADRING, SHMRING_ENOENT,
 * SHMRING_EACCES or SHMRING_ECONTROL. */
SHMRING_API SHMRING_MUST_CHECK int shmring_ring_status(const char *ring,
                                                       shmring_ring_status_t *out);

/*
 * Copies the current version of RING (validated) into a new buffer that the caller
 * frees with free(), without taking the writer lock: only read permission is needed.
 * Fills *generation; when nothing is published yet, *buffer is NULL and *generation
 * 0. Returns 0, SHMRING_EBADRING, SHMRING_ENOENT, SHMRING_EACCES, SHMRING_EOWNER,
 * SHMRING_ECONTROL, SHMRING_ENOMEM, SHMRING_ESTALE (writers kept replacing the version
 * while it was being copied) or a validation error.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_ring_snapshot(const char *ring,
                                                         uint64_t *generation,
                                                         void **buffer, size_t *size);

/* A writer: holds a ring's writer lock from open to close. */
typedef struct shmring_writer shmring_writer_t;

/* Options for creating a ring; a NULL pointer means the defaults. */
typedef struct shmring_create_options {
    /* Permission bits of the ring's objects (default 0644): read and write bits only
     * (within 0666); execute, setuid, setgid and sticky bits are refused. */
    mode_t mode;
    /* Group of the ring's objects, or (gid_t)-1 to keep the creator's. */
    gid_t group;
} shmring_create_options_t;

/* Flags of shmring_writer_open(). */
#define SHMRING_WRITER_CREATE 1u /* create the ring if it does not exist */
#define SHMRING_WRITER_EXCL 2u   /* with CREATE: fail with SHMRING_EEXIST if it exists */

/*
 * Opens RING for writing: takes its writer lock (waiting for another writer to
 * finish), then removes version objects that a killed writer left behind. Returns 0,
 * SHMRING_EBADRING, SHMRING_EINVAL (OPTIONS' mode has bits outside 0666),
 * SHMRING_ENOENT, SHMRING_EEXIST, SHMRING_EACCES, SHMRING_EPERM, SHMRING_ECONTROL,
 * SHMRING_ESTALE (the ring kept being destroyed and re-created while we waited) or
 * another negated errno value.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_writer_open(const char *ring, unsigned flags,
                    const shmring_create_options_t *options, shmring_writer_t **out);

/* Releases the lock and frees the writer (NULL is accepted). */
SHMRING_API void shmring_writer_close(shmring_writer_t *w);

/* The generation currently published (0: nothing published yet). */
SHMRING_API uint64_t shmring_writer_generation(const shmring_writer_t *w);

/*
 * Copies the current version's node set into a new node set that the caller frees
 * (an empty one with default parameters if nothing is published yet). Returns 0,
 * SHMRING_ENOMEM, or the validation error of a corrupt current version.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_writer_nodeset(shmring_writer_t *w,
                                                          shmring_nodeset_t **out);

/*
 * Maps the current version read-only (validated) for inspection: *buffer stays valid
 * until shmring_writer_close(). Returns 0, SHMRING_ENOENT (nothing published) or a
 * validation error.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_writer_snapshot(shmring_writer_t *w, const void **buffer, size_t *size);

/*
 * Builds SET's snapshot and publishes it as the next generation: a new object
 * /shmring.RING.GEN, sized in full first (a full /dev/shm fails here with
 * SHMRING_ENOSPC), written whole, then made current by one atomic store of GEN into
 * the control object; the superseded object is then unlinked. On any error nothing
 * is published and the ring is unchanged. Fills *generation if not NULL. Returns 0,
 * SHMRING_ENOSPC, SHMRING_ELIMIT (the snapshot would be too large, or the ring's
 * generations are used up), SHMRING_ENOMEM, SHMRING_EEXIST (an object already has the
 * next version's name), SHMRING_EPERM or another negated errno value.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_writer_publish(shmring_writer_t *w,
                                                          const shmring_nodeset_t *set,
                                                          uint64_t *generation);

/*
 * Removes a ring: its control object and every version object. Readers that have it
 * open keep answering from what they mapped. Returns 0, SHMRING_EBADRING,
 * SHMRING_ENOENT or SHMRING_EACCES.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_ring_destroy(const char *ring);

/*
 * Lists the rings on this host: *names is a NULL-terminated, sorted array of
 * strings; free it with shmring_ring_list_free(). Returns 0 or SHMRING_ENOMEM.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_ring_list(char ***names, size_t *count);
SHMRING_API void shmring_ring_list_free(char **names);

#ifdef __cplusplus
}
#endif

#endif /* SHMRING_CTL_H */
