/*
 * The table of placement algorithms: each algorithm file (placement_NAME.c) exports
 * one description, and lib/algorithm.c lists them by shmring_algorithm_t. Every
 * module that needs to know something about an algorithm (its name, parameters and
 * their checks, key hash, size, placement, lookup, candidate order, node-order
 * dependence) reads it here: the parameter checks (params.c), the builder
 * (snapshot_build.c), the validator and the lookups (snapshot_validate.c,
 * snapshot_internal.h), the fingerprint, node-set differences, and the JSON reader.
 *
 * The description fits three lookup kinds. Ring-type algorithms place points and a
 * key takes the first point at or after its hash; table algorithms (Maglev) fill a
 * table and a key takes a slot; node algorithms keep no structure at all: a key's
 * owner is computed from the up nodes in node order alone (rendezvous: the node
 * with the highest hash of node and key; jump: Lamping and Veach's jump hash, in
 * O(log n) over the node order). A node algorithm has a size of 0 and no place();
 * its rank() gives a key's candidates in turn.
 */
#ifndef SHMRING_ALGORITHM_INTERNAL_H
#define SHMRING_ALGORITHM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shmring_ctl.h"

/*
 * Whether, and for which nodes, an algorithm's answers may depend on the order of the
 * nodes in the node set. The fingerprint covers node order exactly where it may
 * change an answer, and node-set differences report an order difference only there,
 * so that the two cannot disagree.
 */
enum placement_order {
    /* Node-set order never changes an answer. */
    PLACEMENT_ORDER_NONE = 0,
    /* The order of the up nodes may; down nodes take no part in placement. */
    PLACEMENT_ORDER_UP = 1,
    /* The order of all nodes, down ones included, may. */
    PLACEMENT_ORDER_ALL = 2,
};

/* How a snapshot answers a key, and so which sections it has. */
enum placement_lookup {
    /* Sorted points (with the bucket index and answers): the owner of the first point
     * at or after the key's hash, wrapping. */
    PLACEMENT_LOOKUP_POINTS = 0,
    /* A table of node indexes: the entry at the key's slot (shmring__snapshot_slot()). */
    PLACEMENT_LOOKUP_TABLE = 1,
    /* No points and no table: rank() computes the owner from the up nodes in node
     * order (rendezvous, jump). */
    PLACEMENT_LOOKUP_NODES = 2,
};

/*
 * The order in which a key tries distinct nodes (`lookup -n`, bounded loads): the
 * walk clockwise over the points from the key's, or forward over the table from the
 * key's slot, each wrapping once; or the algorithm's own ranking (rank()).
 */
enum placement_candidates {
    PLACEMENT_CANDIDATES_CLOCKWISE = 0,
    PLACEMENT_CANDIDATES_TABLE_FORWARD = 1,
    PLACEMENT_CANDIDATES_RANKED = 2,
};

/*
 * How an algorithm hashes a key for its lookups (its description's key_hash). The
 * peers' 32-bit key hashes sit in the top half of the 64-bit hash, as their points
 * do (see snapshot_internal.h).
 */
enum key_hash {
    /* The parameters' hash, 64 bits (`ring`, `maglev`). */
    KEY_HASH_PARAMS = 0,
    /* libmemcached's and libketama's: the first little-endian word of the MD5. */
    KEY_HASH_KETAMA = 1,
    /* twemproxy's `hash:`, the parameters' hash in twemproxy's meaning. */
    KEY_HASH_TWEMPROXY = 2,
    /* nginx's ngx_crc32_long(), the CRC-32 zlib computes. */
    KEY_HASH_CRC32 = 3,
    /* Envoy's hash policies hash the header, cookie or address with
     * HashUtil::xxHash64 (seed 0), whatever ring_hash's hash_function. */
    KEY_HASH_XXH64 = 4,
    /* None: the algorithm's rank() hashes the key itself, with each node
     * (`rendezvous`), and the lookups' key hash is 0. */
    KEY_HASH_NONE = 5,
    /* HAProxy's: the parameters' hash in HAProxy's meaning (sdbm, djb2, wt6, crc32,
     * each with or without avalanche). */
    KEY_HASH_HAPROXY = 6,
    /* uhashring's: with md5, the top 64 bits of the MD5 digest read big-endian, plus
     * one; with ketama, the first little-endian word of the MD5 digest in the top
     * half, the bottom half all ones. Both make "the first point at or after" the
     * first point above the key, as uhashring's bisect() takes it. */
    KEY_HASH_UHASHRING = 7,
    /* npm hashring's: the first little-endian word of the parameters' digest (md5,
     * sha1, sha256 or sha512). */
    KEY_HASH_HASHRING = 8,
    /* spymemcached's DefaultHashAlgorithm: the parameters' hash in its meaning
     * (hash_spymemcached.c). */
    KEY_HASH_SPYMEMCACHED = 9,
};

/* Bits of a description's `parameters`: the fields of shmring_params_t beyond the
 * algorithm and the hash that the algorithm reads (and the fingerprint covers). */
#define PLACEMENT_PARAM_VNODES 0x1u
#define PLACEMENT_PARAM_TABLE_SIZE 0x2u
#define PLACEMENT_PARAM_RING_SIZES 0x4u

/* An algorithm's hashes as a set: bit H for shmring_hash_t H (below 64). */
#define PLACEMENT_HASH_BIT(hash) (UINT64_C(1) << (hash))

/* The hashes of shmring's own algorithms (`ring`, `maglev`): the 64-bit ones, whose
 * well mixed top bits a ring's bucket index and a table's slot need; the peers' 32-bit
 * hashes do not give them. */
#define PLACEMENT_HASHES_OWN                                                             \
    (PLACEMENT_HASH_BIT(SHMRING_HASH_XXH3) | PLACEMENT_HASH_BIT(SHMRING_HASH_MD5) |      \
     PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32) | PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1A) |   \
     PLACEMENT_HASH_BIT(SHMRING_HASH_MURMUR3))

struct placement_input;
struct snapshot_point;
struct shmring_nodeset;

/* One placement algorithm. Every field is set; the functions not named optional are
 * never NULL. */
struct placement_algorithm {
    /* As ringctl and JSON spell it (shmring_algorithm_name()). */
    const char *name;
    /* Its value in shmring_algorithm_t, which is its row in the table and the byte
     * that a snapshot's header stores. */
    shmring_algorithm_t id;
    /* Whether the algorithm reproduces a peer's (docs/peers.md). */
    bool peer;
    /* The hash it uses unless told otherwise, and every hash it takes (a set of
     * PLACEMENT_HASH_BIT()s, the default among them). */
    shmring_hash_t default_hash;
    uint64_t hashes;
    /* The parameters it reads: PLACEMENT_PARAM_* bits. */
    unsigned parameters;
    /* Its own checks of PARAMS (whose algorithm is this one and whose common fields
     * shmring_params_check() has checked): 0, SHMRING_EINVAL or SHMRING_EBADVNODES.
     * Optional. */
    int (*check)(const shmring_params_t *params);
    /* Its checks of the node set's nodes beyond the parameters, whether or not any
     * is up (`jump` takes no weights and no down nodes): 0 or a SHMRING_E* code. The
     * builder calls it before anything else. Optional. */
    int (*check_nodes)(const struct placement_input *input);
    /* Its checks of a publication of AFTER over the validated snapshot BEFORE of
     * the same algorithm (`jump` refuses to renumber its buckets): 0 or a SHMRING_E*
     * code. Optional. */
    int (*check_change)(const void *before, const struct shmring_nodeset *after);
    /* How it hashes a key for a lookup (hash_internal.h). */
    enum key_hash key_hash;
    enum placement_order order;
    enum placement_lookup lookup;
    enum placement_candidates candidates;
    /*
     * The number of points (PLACEMENT_LOOKUP_POINTS) or the table size
     * (PLACEMENT_LOOKUP_TABLE) of INPUT, which has up nodes, into *SIZE; 0 for
     * PLACEMENT_LOOKUP_NODES. It may keep work for place() in INPUT->prepared.
     * Returns 0, SHMRING_ELIMIT, SHMRING_EBADADDRESS (nginx) or SHMRING_ENOMEM; the
     * builder refuses more than SHMRING_POINTS_MAX points itself.
     */
    int (*size)(struct placement_input *input, uint64_t *size);
    /*
     * Places INPUT (with up nodes) into OUT: SIZE points (struct snapshot_point),
     * sorted, or a table of SIZE node indexes (uint32_t), as size() gave SIZE.
     * Returns 0 or SHMRING_ENOMEM. NULL for PLACEMENT_LOOKUP_NODES.
     */
    int (*place)(const struct placement_input *input, uint64_t size, void *out);
    /*
     * PLACEMENT_CANDIDATES_RANKED only (NULL otherwise): the first N (>= 1) distinct
     * up nodes that the key KEY (LEN bytes), whose key hash is KEY_HASH, tries in
     * turn in the validated snapshot BUFFER (which has up nodes), as node indexes
     * into FOUND, the owner first. Returns how many: N, or the up count when smaller.
     */
    size_t (*rank)(const void *buffer, const void *key, size_t len, uint64_t key_hash,
                   uint32_t *found, size_t n);
};

/*
 * The description of ALGORITHM, or NULL when no algorithm has that value.
 * shmring__algorithm_count() is the number of rows: every algorithm's value is below
 * it, and a value below it that no algorithm has is a NULL row.
 */
const struct placement_algorithm *shmring__algorithm(unsigned algorithm);
size_t shmring__algorithm_count(void);
/* The description named NAME, or NULL. */
const struct placement_algorithm *shmring__algorithm_find(const char *name);

/* The rows, by value; ALGORITHM must be one (checked parameters, a validated
 * snapshot). For the lookups' hot path, which must not pay for a range check. */
extern const struct placement_algorithm *const shmring__algorithms[];

static inline const struct placement_algorithm *
shmring__algorithm_valid(unsigned algorithm)
{
    return shmring__algorithms[algorithm];
}

/* Whether a valid ALGORITHM answers from a table (maglev's kind). */
static inline bool shmring__algorithm_has_table(unsigned algorithm)
{
    return shmring__algorithm_valid(algorithm)->lookup == PLACEMENT_LOOKUP_TABLE;
}

/*
 * The one predicate on node order, the description's `order` of PARAMS' algorithm (a
 * valid one), for the fingerprint and for node-set differences.
 */
enum placement_order shmring__placement_order(const shmring_params_t *params);

/* The descriptions, one per algorithm file. */
extern const struct placement_algorithm shmring__placement_ring;
extern const struct placement_algorithm shmring__placement_maglev;
extern const struct placement_algorithm shmring__placement_ketama;
extern const struct placement_algorithm shmring__placement_twemproxy;
extern const struct placement_algorithm shmring__placement_nginx;
extern const struct placement_algorithm shmring__placement_libketama;
extern const struct placement_algorithm shmring__placement_envoy_maglev;
extern const struct placement_algorithm shmring__placement_envoy_ring;
extern const struct placement_algorithm shmring__placement_rendezvous;
extern const struct placement_algorithm shmring__placement_jump;
extern const struct placement_algorithm shmring__placement_haproxy;
extern const struct placement_algorithm shmring__placement_uhashring;
extern const struct placement_algorithm shmring__placement_hashring;
extern const struct placement_algorithm shmring__placement_dalli;
extern const struct placement_algorithm shmring__placement_spymemcached;
extern const struct placement_algorithm shmring__placement_groupcache;

#endif /* SHMRING_ALGORITHM_INTERNAL_H */
