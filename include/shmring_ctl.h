/*
 * shmring control API (libshmringctl): node sets, ring snapshots, publication.
 *
 * A node set is a process-local, mutable description of a ring: its nodes and its
 * placement parameters. A snapshot is the immutable, position-independent buffer
 * built from a node set; it is what gets published into shared memory and what
 * readers look keys up in.
 *
 * The structs that callers allocate end in reserved room, under the rule stated at
 * the top of shmring.h: callers zero what they pass in, the library zeroes the
 * reserved fields of what it fills in.
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
    /* Peers' continua, reproduced bit for bit (docs/peers.md). */
    SHMRING_ALGORITHM_TWEMPROXY = 3,
    SHMRING_ALGORITHM_NGINX = 4,
    SHMRING_ALGORITHM_LIBKETAMA = 5,
    /* Envoy's `MAGLEV` and `RING_HASH` load balancers. */
    SHMRING_ALGORITHM_ENVOY_MAGLEV = 6,
    SHMRING_ALGORITHM_ENVOY_RING = 7,
    /* Node algorithms, with no points: pymemcache's HashClient (RendezvousHash) and
     * Guava's Hashing.consistentHash (jump). */
    SHMRING_ALGORITHM_RENDEZVOUS = 8,
    SHMRING_ALGORITHM_JUMP = 9,
    /* HAProxy's `hash-type consistent`. */
    SHMRING_ALGORITHM_HAPROXY = 10,
    /* Client libraries' rings: Python's uhashring (its default and its ketama
     * mode), npm's hashring (the `memcached` client's), Ruby's Dalli (Dalli::Ring),
     * Java spymemcached's KetamaNodeLocator and Go's groupcache (consistenthash). */
    SHMRING_ALGORITHM_UHASHRING = 11,
    SHMRING_ALGORITHM_HASHRING = 12,
    SHMRING_ALGORITHM_DALLI = 13,
    SHMRING_ALGORITHM_SPYMEMCACHED = 14,
    SHMRING_ALGORITHM_GROUPCACHE = 15,
} shmring_algorithm_t;

typedef enum shmring_hash {
    SHMRING_HASH_XXH3 = 0,
    SHMRING_HASH_MD5 = 1,
    SHMRING_HASH_CRC32 = 2,
    SHMRING_HASH_FNV1A = 3,
    SHMRING_HASH_MURMUR3 = 4,
    /* twemproxy's key hashes (its `hash:` names), for `twemproxy` only; `twemproxy`
     * also takes md5 and crc32 in twemproxy's meaning of those names. */
    SHMRING_HASH_FNV1A_64 = 5,
    SHMRING_HASH_CRC16 = 6,
    SHMRING_HASH_CRC32A = 7,
    SHMRING_HASH_FNV1_32 = 8,
    SHMRING_HASH_FNV1_64 = 9,
    SHMRING_HASH_FNV1A_32 = 10,
    SHMRING_HASH_HSIEH = 11,
    SHMRING_HASH_JENKINS = 12,
    SHMRING_HASH_MURMUR = 13,
    SHMRING_HASH_ONE_AT_A_TIME = 14,
    /* Envoy's hashes: xxHash64 with seed 0 (HashUtil::xxHash64), the point hash of
     * `envoy-maglev` and `envoy-ring` and the key hash of both; murmur2, libstdc++'s
     * 64-bit MurmurHash2 with seed 0xc70f6907 (ring_hash's MURMUR_HASH_2), a point
     * hash of `envoy-ring` only. */
    SHMRING_HASH_XXH64 = 15,
    SHMRING_HASH_MURMUR2 = 16,
    /* pymemcache's murmur3_32 (seed 0) of "NODE-KEY", `rendezvous` only. */
    SHMRING_HASH_MURMUR3_32 = 17,
    /* Guava's Hashing.murmur3_128() (seed 0) of the key, padToLong(): the first
     * little-endian 64 bits, `jump` only. */
    SHMRING_HASH_MURMUR3_128 = 18,
    /* HAProxy's `hash-type consistent` functions, for `haproxy` only (which also takes
     * crc32): sdbm, djb2 and wt6, and each of the four with the `avalanche` modifier
     * (full_hash() over the function's result). */
    SHMRING_HASH_SDBM = 19,
    SHMRING_HASH_DJB2 = 20,
    SHMRING_HASH_WT6 = 21,
    SHMRING_HASH_SDBM_AVALANCHE = 22,
    SHMRING_HASH_DJB2_AVALANCHE = 23,
    SHMRING_HASH_WT6_AVALANCHE = 24,
    SHMRING_HASH_CRC32_AVALANCHE = 25,
    /* uhashring's hash_fn="ketama" (its KetamaRing), `uhashring` only, which also
     * takes md5 (its default ring: the MD5 digest as one 128-bit number). */
    SHMRING_HASH_KETAMA = 26,
    /* Digests npm's hashring takes by name (Node's crypto.createHash()), `hashring`
     * only, which also takes md5 (its default). */
    SHMRING_HASH_SHA1 = 27,
    SHMRING_HASH_SHA256 = 28,
    SHMRING_HASH_SHA512 = 29,
    /* Java's String.hashCode(), spymemcached's NATIVE_HASH, for `spymemcached` only
     * (which also takes md5, crc32, fnv1_64, fnv1a_64, fnv1_32 and fnv1a_32 in its
     * meaning). */
    SHMRING_HASH_NATIVE = 32,
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
    /* Key and point hash of `ring` and `maglev`; the key hash of `twemproxy`;
     * `ketama` and `libketama` always use MD5, `nginx`, `dalli` and `groupcache`
     * CRC-32. */
    shmring_hash_t hash;
    /* Points per unit of weight (`ring`); points per node at equal weights
     * (`uhashring`, `hashring`: docs/peers.md); per peer (`groupcache`'s replicas);
     * spymemcached's repetitions. */
    uint32_t vnodes;
    /* Maglev table size: 0 picks the default prime; otherwise a prime >= up nodes
     * (`envoy-maglev`: a prime up to 5000011, 0 for Envoy's default 65537). */
    uint32_t table_size;
    /* `envoy-ring`'s minimum_ring_size and maximum_ring_size: 0 for Envoy's defaults
     * (1024 and 8388608), otherwise 1 to 8388608, the minimum <= the maximum. */
    uint32_t min_ring_size;
    uint32_t max_ring_size;
    /* Room to grow: zero (see shmring.h). */
    uint64_t reserved[3];
} shmring_params_t;

/* Fills *params with the defaults: `ring`, xxh3, 160 vnodes. */
SHMRING_API void shmring_params_default(shmring_params_t *params);

/* The hash ALGORITHM uses unless told otherwise: md5 for ketama and libketama (the
 * only one they take), crc32 for nginx (likewise), fnv1a_64 for twemproxy (its own
 * default), xxh64 for envoy-maglev and envoy-ring, murmur3_32 for rendezvous and
 * murmur3_128 for jump (the only ones they take), sdbm_avalanche for haproxy (its
 * `hash-type consistent` alone), md5 for uhashring and hashring, crc32 for dalli and
 * groupcache (the only one they take), md5 for spymemcached
 * (KetamaConnectionFactory's), xxh3 for ring and
 * maglev. */
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
 * Checks parameters: returns 0, SHMRING_EBADALGORITHM, SHMRING_EBADHASH (a hash the
 * algorithm does not take: ketama and libketama take only md5, nginx only crc32,
 * twemproxy its twelve, envoy-maglev only xxh64, envoy-ring xxh64 and murmur2,
 * rendezvous only murmur3_32, jump only murmur3_128, haproxy sdbm, djb2, wt6 and crc32
 * with and without avalanche, uhashring md5 and ketama, hashring md5, sha1, sha256 and
 * sha512, dalli and groupcache only crc32, spymemcached md5, crc32, native, fnv1_64,
 * fnv1a_64, fnv1_32 and fnv1a_32, ring and maglev xxh3, md5, crc32, fnv1a and
 * murmur3), SHMRING_EBADVNODES (also vnodes that `uhashring`'s ketama or `hashring`
 * cannot divide by 4), or
 * SHMRING_EINVAL (table size not prime, or past envoy-maglev's 5000011; a ring size
 * past 8388608, or a minimum ring size above the maximum).
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
    /* The node's hash key, or NULL (see shmring_nodeset_set_hash_key()). */
    const char *hash_key;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[3];
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

/*
 * Gives node NAME a hash key: the string hashed into its points or its maglev
 * permutation instead of the default: its name for ring and maglev, and what each
 * peer algorithm (twemproxy, nginx, libketama, envoy-maglev, envoy-ring, dalli,
 * groupcache) derives from its address (dalli takes it as the server's name, groupcache
 * as the peer string); under haproxy it is the server's `id` (decimal, 1 to 2147483647; a
 * node without one takes the id HAProxy would give it, and a ring with a malformed or
 * repeated id is refused with SHMRING_EBADADDRESS when built); under spymemcached it is
 * the server's key, "name/10.0.0.7:11211" for a host name, which it needs (else
 * SHMRING_EUNRESOLVED when built). A node can so match a
 * peer's server name exactly (a named twemproxy server, Envoy's `envoy.lb` hash_key
 * metadata), be re-addressed under a peer algorithm, or be renamed under ring and
 * maglev, without moving keys. NULL removes
 * it; ketama ignores it. Returns 0, SHMRING_ENODE, SHMRING_EBADADDRESS (a hash key
 * follows the address rules) or SHMRING_ENOMEM; on error the set is unchanged.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_set_hash_key(shmring_nodeset_t *set,
                                                                const char *name,
                                                                const char *hash_key);

/*
 * The balance factor of bounded-load leases that SET gives (JSON "balance_factor"),
 * in percent (125 is 1.25; 0: none): 0 and *percent, or SHMRING_ENOENT when it gives
 * none. It is no part of a ring's versions: `ringctl load` sets it on the ring's load
 * board (shmring_writer_set_balance_factor()). Setting it returns 0 or
 * SHMRING_EBADFACTOR (not 0 nor 100 to 10000).
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_balance_factor(const shmring_nodeset_t *set, uint32_t *percent);
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_set_balance_factor(shmring_nodeset_t *set, uint32_t percent);

/*
 * The oldest reader release (MAJOR.MINOR) that SET's ring is published for
 * (docs/upgrading.md): 0.0, the default, publishes the oldest snapshot format that
 * can express the ring, which the previous release reads too; 0.4 publishes format 4,
 * which releases before 0.4 refuse. The ring's versions keep it, so a node set read
 * back from the ring has it. Setting it returns 0 or SHMRING_EINVAL (a release after
 * this library's).
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_set_min_reader(shmring_nodeset_t *set, unsigned major, unsigned minor);
SHMRING_API void shmring_nodeset_min_reader(const shmring_nodeset_t *set, unsigned *major,
                                            unsigned *minor);

/* Number of nodes, and the node at INDEX (0 or SHMRING_EINVAL). */
SHMRING_API size_t shmring_nodeset_count(const shmring_nodeset_t *set);
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_get(const shmring_nodeset_t *set, size_t index, shmring_node_info_t *out);
/* Finds a node by name: 0 and *index, or SHMRING_ENODE. */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_find(const shmring_nodeset_t *set,
                                                        const char *name, size_t *index);

/*
 * Gives ids to the nodes of SET when it replaces PREVIOUS, so that ids stay stable
 * when a whole node set is replaced: a node whose id its JSON text gave (see
 * shmring_nodeset_from_json()) keeps it; a node that also exists (by name) in
 * PREVIOUS takes the id it has there, unless a given id of SET is that id; every
 * other node gets a fresh id after PREVIOUS's ids and the given ones. Returns 0,
 * SHMRING_ENOMEM, or SHMRING_ELIMIT (the new ids would reach the id limit,
 * UINT32_MAX); on an error SET is unchanged.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_inherit_ids(shmring_nodeset_t *set, const shmring_nodeset_t *previous);

/* ---- Node-set differences ------------------------------------------------- */

/* What one difference between two node sets is about. */
typedef enum shmring_difference_kind {
    /* The parameters differ; `fields` says which (SHMRING_DIFF_ALGORITHM...). */
    SHMRING_DIFFERENCE_PARAMS = 0,
    /* A node only the second set holds (`after`). */
    SHMRING_DIFFERENCE_ADDED = 1,
    /* A node only the first set holds (`before`). */
    SHMRING_DIFFERENCE_REMOVED = 2,
    /* A node both hold, by name, with other fields; `fields` says which
     * (SHMRING_DIFF_ADDRESS...). */
    SHMRING_DIFFERENCE_CHANGED = 3,
    /* The nodes both hold are not in the same relative order, and the algorithm
     * (under either set's parameters) may answer differently for it: `ketama`,
     * `libketama`, `envoy-ring`, `dalli` and `groupcache` place the up nodes in
     * node-set order (compared:
     * the nodes up in both sets), `nginx` every node, down ones included (compared:
     * all). `ring`, `maglev`, `envoy-maglev` and `twemproxy` never depend on node
     * order, so for them another order is no difference. */
    SHMRING_DIFFERENCE_ORDER = 4,
} shmring_difference_kind_t;

/* Bits of shmring_difference_t's `fields`. */
#define SHMRING_DIFF_ALGORITHM 0x01u
#define SHMRING_DIFF_HASH 0x02u
#define SHMRING_DIFF_VNODES 0x04u
#define SHMRING_DIFF_TABLE_SIZE 0x08u
#define SHMRING_DIFF_ADDRESS 0x10u
#define SHMRING_DIFF_WEIGHT 0x20u
#define SHMRING_DIFF_STATE 0x40u
#define SHMRING_DIFF_ID 0x80u
/* min_ring_size or max_ring_size (envoy-ring). */
#define SHMRING_DIFF_RING_SIZE 0x100u
#define SHMRING_DIFF_HASH_KEY 0x200u

/* One difference. `before` and `after` are the node in each set when the kind has
 * one there (zeroed otherwise); their strings belong to the node sets. */
typedef struct shmring_difference {
    shmring_difference_kind_t kind;
    unsigned fields;
    shmring_node_info_t before;
    shmring_node_info_t after;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_difference_t;

/* How many differences of each kind a diff holds. */
typedef struct shmring_difference_counts {
    size_t added;
    size_t removed;
    size_t changed;
    bool params_changed;
    bool order_changed;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_difference_counts_t;

typedef struct shmring_nodeset_diff shmring_nodeset_diff_t;

/*
 * Compares BEFORE with AFTER: parameters as the node sets hold them (algorithm,
 * hash, vnodes, table size, and the two ring sizes as one), nodes by name (address,
 * hash key, weight, state, id), and the relative order of the
 * nodes both hold where the algorithm may depend on it (see
 * SHMRING_DIFFERENCE_ORDER). The differences come in a fixed order: the parameters
 * first, then the nodes of AFTER in its order (added or changed), then the nodes only
 * BEFORE holds in its order, then the order. Two node sets with no difference answer
 * every key alike and show the same fingerprint. *out refers to both node sets, which
 * must outlive it and stay unchanged; free it with shmring_nodeset_diff_free(). Returns 0
 * or SHMRING_ENOMEM. Thread-safe on distinct diffs.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_diff(const shmring_nodeset_t *before,
                                                        const shmring_nodeset_t *after,
                                                        shmring_nodeset_diff_t **out);
/* Frees a diff (NULL is accepted). */
SHMRING_API void shmring_nodeset_diff_free(shmring_nodeset_diff_t *diff);
/* The number of differences (0: the node sets are the same). */
SHMRING_API size_t shmring_nodeset_diff_count(const shmring_nodeset_diff_t *diff);
/* The difference at INDEX: 0 or SHMRING_EINVAL (INDEX out of range). */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_diff_get(const shmring_nodeset_diff_t *diff, size_t index,
                         shmring_difference_t *out);
/* Counts the differences by kind. */
SHMRING_API void shmring_nodeset_diff_counts(const shmring_nodeset_diff_t *diff,
                                             shmring_difference_counts_t *out);

/* ---- Snapshots ------------------------------------------------------------ */

/*
 * Builds the snapshot of SET into a new buffer (free it with free()). The same node
 * set and parameters give byte-identical snapshots on every host of the same byte
 * order. Returns 0, SHMRING_ELIMIT (checked before anything large is allocated),
 * SHMRING_ENOMEM, or what the algorithm refuses of the nodes: SHMRING_EUNWEIGHTED
 * (`rendezvous`, `jump`: a weight other than 1), SHMRING_EJUMPDOWN (`jump`: a down
 * node), SHMRING_EBADADDRESS (`rendezvous`: an address whose port is not a number;
 * `nginx`: an address nginx cannot parse; `spymemcached`: one AddrUtil or the JDK
 * would refuse), SHMRING_EDUPLICATE (`rendezvous`: two up nodes with one pymemcache
 * node string), SHMRING_EUNRESOLVED (`spymemcached`: a host name without a hash key)
 * or SHMRING_EINVAL (`spymemcached`: a continuum without points).
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_snapshot_build(const shmring_nodeset_t *set,
                                                          void **buffer, size_t *size);

/*
 * A validated snapshot: the only thing the lookup, info and keyspace calls below
 * take, so that no unvalidated bytes ever reach them. It is made once, by
 * shmring_snapshot_new() (which validates), shmring_nodeset_snapshot(),
 * shmring_ring_snapshot() or shmring_writer_snapshot(), and never changes afterwards: any
 * number of threads may use one snapshot at the same time.
 */
typedef struct shmring_snapshot shmring_snapshot_t;

/*
 * Validates a snapshot of SIZE bytes that may hold any bytes at all (every offset,
 * length and count, every node index and string, the lookup structures and the
 * checksum), reading nothing outside [buffer, buffer + size), and makes *out, a
 * snapshot holding its own copy of them: BUFFER may be changed or freed afterwards,
 * and need not be aligned. Free *out with shmring_snapshot_free(). Returns 0,
 * SHMRING_ENOMEM, or the specific SHMRING_E* code of the first problem found
 * (SHMRING_ETRUNCATED, SHMRING_EBADMAGIC, SHMRING_EBYTEORDER, SHMRING_EFORMAT,
 * SHMRING_EBADPARAMS, SHMRING_EBADSECTION, SHMRING_ECHECKSUM, SHMRING_EBADNODE,
 * SHMRING_EBADSTRING, SHMRING_EBADPOINTS, SHMRING_EBADINDEX). Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_snapshot_new(const void *buffer, size_t size,
                                                        shmring_snapshot_t **out);

/*
 * Builds SET's snapshot (as shmring_snapshot_build() does) straight into *out,
 * validated in place: no second copy of the bytes, which matters for a ring of
 * millions of points. Free it with shmring_snapshot_free(). Returns 0 or the codes
 * of shmring_snapshot_build().
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_snapshot(const shmring_nodeset_t *set,
                                                            shmring_snapshot_t **out);

/* Frees a snapshot made by shmring_snapshot_new(), shmring_nodeset_snapshot() or
 * shmring_ring_snapshot() (NULL is accepted). One that shmring_writer_snapshot() lent
 * belongs to its writer. */
SHMRING_API void shmring_snapshot_free(shmring_snapshot_t *snapshot);

/* The snapshot's bytes, as shmring_snapshot_build() made them and as they are
 * published; they live as long as SNAPSHOT. Fills *size if not NULL. */
SHMRING_API const void *shmring_snapshot_data(const shmring_snapshot_t *snapshot,
                                              size_t *size);

/* What a snapshot's header says. */
typedef struct shmring_snapshot_info {
    shmring_params_t params;
    uint32_t node_count;
    uint32_t up_count;
    /* Ring points (ring, ketama) or maglev table slots. */
    uint32_t point_count;
    uint32_t next_node_id;
    uint64_t size;
    uint64_t fingerprint;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_snapshot_info_t;

/*
 * The calls below read one snapshot and are thread-safe. The lookups answer like the
 * reader's shmring_lookup(), shmring_lookup_id(), shmring_lookup_ids() and
 * shmring_lookup_n() (see shmring.h) on this one snapshot.
 */
SHMRING_API void shmring_snapshot_info(const shmring_snapshot_t *snapshot,
                                       shmring_snapshot_info_t *out);
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_lookup(const shmring_snapshot_t *snapshot, const void *key, size_t len,
                        shmring_node_t *out);
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_lookup_id(const shmring_snapshot_t *snapshot, const void *key,
                           size_t len, uint32_t *id);
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_lookup_ids(const shmring_snapshot_t *snapshot, const void *const *keys,
                            const size_t *lens, size_t count, uint32_t *ids);
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_lookup_n(const shmring_snapshot_t *snapshot, const void *key, size_t len,
                          shmring_node_t *out, size_t n);

/*
 * Fills SHARES[i] with the exact fraction of the keyspace owned by the i-th node of
 * the snapshot (node-set order): the share of the values its key hash takes that fall
 * on its arcs of the ring (the arcs' length over 2^64 for a 64-bit hash; twemproxy's
 * and spymemcached's crc32, libmemcached's 15 bits of the CRC-32, reach only the
 * arcs up to 2^47), or its maglev table slots over the table size; for `rendezvous`
 * and `jump`, which have neither, the expected share of keys hashed at random, 1 /
 * (up nodes). Down nodes, and every node of a
 * snapshot without up nodes, own 0. COUNT is how many values SHARES has room for. Returns
 * 0, or SHMRING_EINVAL (nothing written) when COUNT is less than the snapshot's
 * node_count.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_shares(const shmring_snapshot_t *snapshot, double *shares, size_t count);

/*
 * Fills *share with the fraction of the keyspace whose owner changes from BEFORE to
 * AFTER, computed exactly from the two lookup structures, not by sampling keys. A key
 * stays when both answer it with a node of the same name; it moves when the names
 * differ or when only one of the two has up nodes to answer with. Either may be NULL
 * for nothing published (so from NULL everything moves if AFTER has up nodes). How:
 *
 *   - maglev against maglev with equal table sizes: differing slots over the size;
 *   - otherwise, when both give every key the same hash: the hash space is cut
 *     where either snapshot's owner can change (points, or the first hash of each
 *     maglev slot), and the pieces whose owners differ are summed. The algorithms'
 *     key hashes decide, not the hash parameter alone: ketama, libketama, and the
 *     md5 of twemproxy, hashring and spymemcached (for keys that are UTF-8) take
 *     ketama's MD5 word, but the md5 of ring and maglev 64 bits of the MD5; nginx,
 *     dalli, groupcache, the crc32 of ring, maglev and haproxy, and twemproxy's
 *     crc32a take zlib's CRC-32; Envoy's take xxHash64, whatever their points' hash.
 *     Not for envoy-maglev, whose slots are residues of the hash, not ranges;
 *   - two snapshots of `rendezvous`, or two of `jump`: the share expected for keys
 *     hashed at random. Rendezvous keeps a key when the best of the up nodes of both
 *     is one they share (same name, address and hash key): 1 - shared / (all up
 *     nodes of both, once each). Jump keeps it when its bucket is below both counts
 *     and holds the same node in both: 1 - (same nodes in the same places) / (the
 *     larger count);
 *   - snapshots that hash keys differently (and envoy-maglev against another
 *     table or a ring), and a node algorithm against another algorithm, give a key
 *     two unrelated places: the share is then the chance that a uniformly hashed key
 *     changes owner, 1 - sum over nodes N of share_before(N) x share_after(N).
 *
 * Arc lengths are summed in integers; only the final division rounds. Time is linear
 * in the points or slots of both, plus sorting node names. Returns 0 or SHMRING_ENOMEM.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_snapshot_moved_share(const shmring_snapshot_t *before,
                             const shmring_snapshot_t *after, double *share);

/*
 * Recreates the node set a snapshot was built from (nodes, ids, parameters).
 * Returns 0 or SHMRING_ENOMEM (the validator refuses a snapshot with two nodes of
 * one name, so every snapshot this takes makes a node set).
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_nodeset_from_snapshot(const shmring_snapshot_t *snapshot,
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
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_json_error_t;

/*
 * Parses a JSON node set (see docs/nodesets.md) of LEN bytes into a new node set. Fields
 * the text leaves out (algorithm, hash, vnodes, table_size, min_ring_size, max_ring_size)
 * are taken from BASE (NULL: the defaults); a hash that BASE gives but the text's
 * algorithm cannot use falls back to that algorithm's default
 * (shmring_algorithm_default_hash()). Node order in the
 * text is node-set order. A node may give its "id" (0 to UINT32_MAX - 1; two nodes
 * giving the same id are refused with the path of the second); nodes that give none
 * are numbered after the largest given id (from 0 when none is given), in order, and
 * shmring_nodeset_inherit_ids() keeps given ids while it renumbers the others.
 * Returns 0, SHMRING_EJSON (with *error filled), or SHMRING_ENOMEM.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_from_json(const char *text, size_t len,
                                                             const shmring_params_t *base,
                                                             shmring_nodeset_t **out,
                                                             shmring_json_error_t *error);

/*
 * Writes SET as JSON that shmring_nodeset_from_json() reads back to the same node
 * set, ids and parameters, so that a dump on one host loads as the same ring on
 * another. *text is NUL-terminated and belongs to the caller
 * (free()). Returns 0 or SHMRING_ENOMEM.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_to_json(const shmring_nodeset_t *set,
                                                           char **text);

/* ---- Base64 ---------------------------------------------------------------- */

/*
 * Base64 as RFC 4648 section 4 defines it (standard alphabet, padded): how etcd's
 * JSON gateway carries keys and values, and how JSON output gives a key that is not
 * UTF-8. Encodes the LEN bytes at DATA into *out, a NUL-terminated string that
 * belongs to the caller (free()). Returns 0 or SHMRING_ENOMEM. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_base64_encode(const void *data, size_t len,
                                                         char **out);

/*
 * Decodes the LEN characters at TEXT into *out (*out_len bytes, then a NUL that is
 * not counted; the caller's, free()). Strict: only the standard alphabet, padding
 * only at the end and to a multiple of four, unused bits zero, so that each byte
 * string has one encoding. Returns 0, SHMRING_EINVAL (not such base64; *out
 * untouched) or SHMRING_ENOMEM. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_base64_decode(const char *text, size_t len,
                                                         char **out, size_t *out_len);

/* ---- Importing a peer's configuration -------------------------------------- */

/* The configuration files shmring_nodeset_import() reads. */
typedef enum shmring_import_format {
    /* An nginx configuration holding `upstream NAME { hash KEY consistent; server
     * ADDRESS [weight=N] [down]; ... }` (http or stream): algorithm `nginx`. */
    SHMRING_IMPORT_NGINX = 0,
    /* A nutcracker (twemproxy) YAML configuration, one pool of `distribution:
     * ketama`: algorithm `twemproxy` with the pool's `hash:`. */
    SHMRING_IMPORT_TWEMPROXY = 1,
    /* A libketama server file, one `ADDRESS MEMORY` line per server: algorithm
     * `libketama`. */
    SHMRING_IMPORT_LIBKETAMA = 2,
    /* An HAProxy configuration, one `backend` or `listen` section of a hash
     * `balance` with `hash-type consistent`: algorithm `haproxy` with its hash. */
    SHMRING_IMPORT_HAPROXY = 3,
} shmring_import_format_t;

/* Where a peer's configuration went wrong, filled by shmring_nodeset_import(). */
typedef struct shmring_import_error {
    /* The 1-based line the problem is on; 0 when it concerns the whole file (no
     * upstream or pool of the name asked for, several to choose from). */
    int line;
    /* The one-line message without the line number, naming the directive, e.g.
     * "'ip_hash' is not supported in an upstream: only 'hash KEY consistent' places
     * keys on a continuum". */
    char text[320];
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_import_error_t;

/* Parses a format name ("nginx", "twemproxy", "libketama", "haproxy"): 0 or
 * SHMRING_EINVAL. */
SHMRING_API SHMRING_MUST_CHECK int
shmring_import_format_parse(const char *name, shmring_import_format_t *out);

/*
 * Reads a peer's configuration TEXT of LEN bytes (untrusted; it need not be
 * NUL-terminated) and makes *out, the node set that places every key as that peer
 * does: its algorithm and hash, and one node per server in the peer's order, with
 * its weight, its state (nginx's `down`) and, where the peer hashes a name other
 * than the address (a named twemproxy server), that name as its hash key. SECTION
 * names the nginx upstream, the twemproxy pool or the HAProxy backend to read; NULL takes
 * the file's only one (libketama files have none: SECTION must be NULL). What the node
 * set cannot reproduce is refused, never approximated: a balancing method other than the
 * continuum, a key transformation (twemproxy's hash_tag), an `include`, two servers
 * with the same address, a weight above 65535, and any directive or parameter this
 * reader does not know. Options that only act while servers fail (nginx's max_fails,
 * fail_timeout, max_conns; twemproxy's auto_eject_hosts) and connection settings are
 * accepted, as they do not move keys while every server answers. docs/peers.md
 * ("Importing a peer's configuration") lists what each format accepts.
 *
 * Returns 0, SHMRING_EINVAL with *error filled (a bad or unsupported configuration,
 * an unknown FORMAT, or a SECTION given to libketama), or SHMRING_ENOMEM.
 * Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_nodeset_import(shmring_import_format_t format,
                                                          const char *text, size_t len,
                                                          const char *section,
                                                          shmring_nodeset_t **out,
                                                          shmring_import_error_t *error);

/* ---- Publication into shared memory --------------------------------------- */

/*
 * Layout and trust (docs/security.md says the same for operators). A
 * ring RING lives in a directory DIR (SHMRING_DEFAULT_DIRECTORY unless a caller names
 * another) as DIR/shmring.RING/, a directory that belongs to the ring's owner and
 * that nobody else may write, holding:
 *
 *   control        the current generation (fixed size, written by the owner only);
 *   lock           the writers' lock, readable and writable by the owner only;
 *   version.GEN    one immutable snapshot per published generation, read-only.
 *
 * Only the owner's uid can create, change, lock or destroy a ring; group and others
 * can at most read it. A ring appears whole (created under a hidden name and renamed
 * into place) and disappears whole (renamed away, then emptied), so no reader or
 * writer ever sees a half-made or half-removed one. Another user can occupy a ring's
 * name before its owner creates it (DIR is usually shared, like /dev/shm): then the
 * owner's calls fail with SHMRING_EOWNER or SHMRING_ENOTRING, and nothing of the
 * squatter's is ever used, followed or removed.
 */

/*
 * Checks a ring name: 1-200 bytes of [A-Za-z0-9_.-], not "." or "..", and not ending
 * in a dot followed by digits. Returns 0 or SHMRING_EBADRING.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_ring_name_check(const char *ring);

/* What a ring's control object and directory say. */
typedef struct shmring_ring_status {
    uint64_t generation;
    uint64_t publish_count;
    /* The last publisher's pid and the time of its publication (Unix seconds). */
    int64_t publisher_pid;
    int64_t published_at;
    uid_t owner;
    gid_t group;
    /* The ring's mode: 0600, 0640, 0604 or 0644. */
    mode_t mode;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_ring_status_t;

/*
 * Reads a ring's control object, trusting owners as shmring_open_with() does
 * (OPTIONS may be NULL). Returns 0, SHMRING_EBADRING, a ring directory's error as
 * shmring_open_with() names them (SHMRING_EBADDIR, SHMRING_ENODIR,
 * SHMRING_ENOTRINGDIR, -ENOTDIR, SHMRING_EBASEOWNER, SHMRING_EBASEDIR),
 * SHMRING_ENOENT, SHMRING_EACCES, SHMRING_EOWNER, SHMRING_ENOTRING or
 * SHMRING_ECONTROL. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_status(const char *ring, const shmring_open_options_t *options,
                    shmring_ring_status_t *out);

/*
 * Copies the current version of RING into a new snapshot (validated) that the caller
 * frees with shmring_snapshot_free(), without taking the writer lock: only read
 * permission is needed. Owners are trusted as by shmring_open_with() (OPTIONS may be
 * NULL). Fills *generation; when nothing is published yet, *out is NULL and
 * *generation 0. Returns 0, the codes of shmring_ring_status(), SHMRING_ENOMEM,
 * SHMRING_ESTALE (writers kept replacing the version while it was being copied) or a
 * validation error. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_snapshot(const char *ring, const shmring_open_options_t *options,
                      uint64_t *generation, shmring_snapshot_t **out);

/*
 * Reads RING's status and copies the version that this status names into a new
 * snapshot (validated) that the caller frees with shmring_snapshot_free(), so that
 * both describe one generation: status->generation is the snapshot's. When nothing is
 * published, *out is NULL and status->generation 0. A writer that publishes between
 * the two reads makes the call read both again, up to 100 times. The publisher fields
 * of the status (publish_count, publisher_pid, published_at) are stored after the
 * generation, so for a moment they may still describe the previous publication.
 * Owners are trusted as by shmring_open_with() (OPTIONS may be NULL). Returns 0, the
 * codes of shmring_ring_status(), SHMRING_ENOMEM, SHMRING_ESTALE (a writer published
 * between the reads every time: no status and version of one generation were read)
 * or a validation error; on an error *status and *out are left unchanged.
 * Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_snapshot_with_status(const char *ring, const shmring_open_options_t *options,
                                  shmring_ring_status_t *status,
                                  shmring_snapshot_t **out);

/* What a ring's control object and the header of its current version say. */
typedef struct shmring_ring_info {
    /* As shmring_ring_status() fills it; status.generation names the version below. */
    shmring_ring_status_t status;
    /* The header of version status.generation, as shmring_snapshot_info() would fill
     * it (all zero when nothing is published). Only the header is read and checked
     * (magic, byte order, format, size against the object, parameters and counts
     * within limits); the rest is neither read nor validated, so a program that
     * relies on the nodes or lookups uses shmring_ring_snapshot(). */
    shmring_snapshot_info_t version;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_ring_info_t;

/*
 * Reads what `ringctl list` shows of RING from its control object and the header of
 * its current version alone: a few kilobytes whatever the ring's size. Owners are
 * trusted, and the version object checked (the directory owner's, writable by
 * nobody), as by shmring_open_with() (OPTIONS may be NULL). Returns 0, the codes of
 * shmring_ring_status(), SHMRING_ESTALE (writers kept replacing the version while it
 * was being read), or the header's SHMRING_ETRUNCATED, SHMRING_EBADMAGIC,
 * SHMRING_EBYTEORDER, SHMRING_EFORMAT or SHMRING_EBADPARAMS. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_info(const char *ring, const shmring_open_options_t *options,
                  shmring_ring_info_t *out);

/* What occupies a ring's path, for error messages that name it. */
typedef struct shmring_ring_object {
    /* DIR/shmring.RING, NUL-terminated. */
    char path[SHMRING_DIRECTORY_MAX + 9 + SHMRING_RING_NAME_MAX + 1];
    /* False when nothing has that path (the other fields are then zero). */
    bool exists;
    /* "directory", "regular file", "FIFO", "socket", "symbolic link", "character
     * device", "block device" or "unknown": a static string. */
    const char *kind;
    uid_t owner;
    mode_t mode;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_ring_object_t;

/*
 * Describes what has RING's path in DIRECTORY (NULL: the default) without following
 * a symbolic link or opening anything. Returns 0 (also when nothing is there),
 * SHMRING_EBADRING, SHMRING_EBADDIR or another negated errno value. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_object(const char *ring, const char *directory, shmring_ring_object_t *out);

/* A writer: holds a ring's writer lock from open to close. */
typedef struct shmring_writer shmring_writer_t;

/* Options of the calls that change a ring; fill them with
 * shmring_writer_options_default() first. A NULL pointer means the defaults. */
typedef struct shmring_writer_options {
    /* The directory holding the rings, an absolute path; NULL means
     * SHMRING_DEFAULT_DIRECTORY. */
    const char *directory;
    /* When creating: the ring's mode (default 0644). The owner must keep read and
     * write; group and others may be given read, nothing else: 0600, 0640, 0604 and
     * 0644 are the valid modes. */
    mode_t mode;
    /* When creating: the ring's group, or (gid_t)-1 (default) to keep the creator's.
     * The group can only ever read. */
    gid_t group;
    /* How long to wait for another writer's lock, in milliseconds: -1 (default) as
     * long as it takes, 0 not at all. */
    int wait_ms;
    /* If not NULL, called once (from the calling thread) when the call starts to
     * wait for another writer, so that a tool can say so. */
    void (*on_wait)(const char *ring, void *data);
    void *on_wait_data;
    /* Room to grow: zero (see shmring.h). */
    uint64_t reserved[4];
} shmring_writer_options_t;

/* Fills *options with the defaults. */
SHMRING_API void shmring_writer_options_default(shmring_writer_options_t *options);

/* Flags of shmring_writer_open(). CREATE without EXCL opens the ring if it exists and
 * creates it otherwise, in one call, so that processes that all do so share one ring:
 * without ATOMIC_CREATE, a call that loses the race to put its new ring in place
 * opens the winner's instead; with it, a ring that appears while the call creates
 * its own is found at the first publication (see below). */
#define SHMRING_WRITER_CREATE 1u /* create the ring if it does not exist */
#define SHMRING_WRITER_EXCL 2u   /* with CREATE: fail with SHMRING_EEXIST if it exists */
/* With CREATE: a ring created by this call appears only with its first publication,
 * whole; if the writer is closed before that, or the first publication fails, no
 * trace of it is left (`ringctl init` and a creating `load` use this). That first
 * publication fails with SHMRING_EEXIST if another writer created the ring since. */
#define SHMRING_WRITER_ATOMIC_CREATE 4u

/*
 * Opens RING for writing: takes its writer lock (waiting for another writer at most
 * OPTIONS' wait_ms), then removes version objects that a killed writer left behind.
 * A ring created here appears whole, empty (generation 0), with OPTIONS' mode and
 * group (with SHMRING_WRITER_ATOMIC_CREATE: at its first publication). Returns 0,
 * SHMRING_EBADRING, SHMRING_EINVAL (a mode other than the four valid ones), a ring
 * directory's error as shmring_open_with() names them (SHMRING_EBADDIR,
 * SHMRING_ENODIR, SHMRING_ENOTRINGDIR, -ENOTDIR, SHMRING_EBASEOWNER, SHMRING_EBASEDIR),
 * SHMRING_ENOENT, SHMRING_EEXIST, SHMRING_EOWNER (the ring, or what has its name, is
 * not the caller's), SHMRING_ENOTRING,
 * SHMRING_EBUSY (another writer kept the lock for wait_ms), SHMRING_ENOSPC,
 * SHMRING_EACCES, SHMRING_EPERM, SHMRING_ECONTROL, SHMRING_ESTALE (the ring kept being
 * destroyed and re-created while we waited) or another negated errno value. On an error
 * nothing is left behind.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_writer_open(const char *ring, unsigned flags,
                    const shmring_writer_options_t *options, shmring_writer_t **out);

/* Releases the lock and frees the writer (NULL is accepted). A writer belongs to the
 * process that opened it: a forked child must neither use nor close it (closing
 * would remove a ring created with SHMRING_WRITER_ATOMIC_CREATE and not yet
 * published); the child only keeps the lock until it exits or execs. */
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
 * Lends the current version, mapped read-only and validated, for inspection: *out
 * belongs to the writer and stays valid until the writer's next publication or
 * shmring_writer_close(), whichever comes first (do not free it). Returns 0,
 * SHMRING_ENOENT (nothing published) or a validation error.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_writer_snapshot(shmring_writer_t *w, const shmring_snapshot_t **out);

/*
 * Builds SET's snapshot and publishes it as the next generation: a new read-only
 * object version.GEN in the ring's directory, sized in full first (a full file system
 * fails here with SHMRING_ENOSPC), written whole, then made current by one atomic
 * store of GEN into the control object; the superseded object is then unlinked. On
 * any error nothing is published and the ring is unchanged. Fills *generation if not
 * NULL. Returns 0, what shmring_snapshot_build() refuses, SHMRING_ERENUMBER (`jump`
 * over a `jump` version: a node the two share is in another bucket, its place, in
 * SET, which may add nodes at the end, drop the last ones, or put a new node in the
 * place of one it drops), SHMRING_ENOSPC, SHMRING_ELIMIT (the snapshot
 * would be too large, or the ring's generations are used up), SHMRING_ENOMEM,
 * SHMRING_EEXIST (see SHMRING_WRITER_ATOMIC_CREATE), -EFBIG (see below) or another
 * negated errno value.
 *
 * File size limits: an object larger than the caller's RLIMIT_FSIZE (ulimit -f) is
 * refused with -EFBIG before it is allocated, so this call (like
 * shmring_writer_open(), which allocates the control object) never raises SIGXFSZ,
 * whose default action would kill the process. The library does not change signal
 * dispositions, which are process-wide: a program that lowers RLIMIT_FSIZE from one
 * thread while another publishes should ignore SIGXFSZ itself (ringctl does), and
 * then gets -EFBIG from the kernel.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_writer_publish(shmring_writer_t *w,
                                                          const shmring_nodeset_t *set,
                                                          uint64_t *generation);

/*
 * Removes a ring, whole: under its writer lock (waited for as OPTIONS says; NULL
 * means the defaults) the ring's directory is renamed away in one step, then
 * emptied. Readers that have the ring open keep answering from what they mapped.
 * Returns 0, SHMRING_EBADRING, a ring directory's error as shmring_open_with() names
 * them, SHMRING_ENOENT, SHMRING_EOWNER, SHMRING_ENOTRING, SHMRING_EBUSY or
 * SHMRING_EACCES; on an error the ring is as it was.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_destroy(const char *ring, const shmring_writer_options_t *options);

/*
 * Lists the names that look like rings in DIRECTORY (NULL: the default), whoever
 * owns them: *names is a NULL-terminated, sorted array of strings; free it with
 * shmring_ring_list_free(). Whether a listed ring can be read is for
 * shmring_ring_status() to say. Returns 0, SHMRING_EBADDIR, SHMRING_ENOMEM or another
 * negated errno value.
 */
SHMRING_API SHMRING_MUST_CHECK int shmring_ring_list(const char *directory, char ***names,
                                                     size_t *count);
SHMRING_API void shmring_ring_list_free(char **names);

/* ---- Who reads a ring ------------------------------------------------------ */

/* One process that maps one version of a ring. */
typedef struct shmring_ring_reader {
    int64_t pid;
    /* The process's command name (/proc/PID/comm: at most 15 bytes), NUL-terminated;
     * "" when it could not be read. */
    char command[16];
    uint64_t generation;
    /* Whether that version is the ring's current one (false: superseded, kept alive
     * only by this process and others like it). */
    bool current;
    /* Bytes of the version this process maps (twice for two handles that map it). */
    uint64_t mapped_bytes;
    /* The process's user (the owner of /proc/PID: its effective uid), or
     * (uint32_t)-1 when it could not be read. */
    uint32_t uid;
    /* Descriptors the process holds open on the version: a descriptor keeps a
     * superseded version's memory in use just as a mapping does, while mapping
     * nothing. */
    uint32_t descriptors;
    /* A shmring_reader_kind_t: SHMRING_READER_COUNTED in
     * shmring_ring_readers_t.readers, one of the others in its uncounted list. */
    uint32_t kind;
    /* The libshmring release the process maps (its libshmring.so.MAJOR.MINOR.PATCH),
     * as MAJOR << 16 | MINOR << 8 | PATCH; 0 when it maps none (a reader built into
     * the program) or the census could not tell. */
    uint32_t reader_release;
    /* Skew (docs/upgrading.md): the snapshot format of the ring's current version
     * when this process maps an older one and its release cannot read the current
     * one (too old for that format, its features or its minimum reader), so that it
     * stays on GENERATION until it is upgraded and restarted; else 0. */
    uint32_t stuck_format;
    /* Room to grow (see shmring.h). */
    uint32_t reserved_word;
    uint64_t reserved[1];
} shmring_ring_reader_t;

/* Why a process is in a census's readers or apart from them. */
typedef enum shmring_reader_kind {
    /* It maps or holds a version that is provably the ring's: counted. */
    SHMRING_READER_COUNTED = 0,
    /* It maps or holds an object named like a version of the ring that the census
     * could not prove to be the ring's (another device or inode than the ring's
     * objects, or an unlinked file of another owner: what a user sees who mounted a
     * directory of their own over the ring's path in a mount namespace of their
     * own). Its bytes are in no figure of the ring. */
    SHMRING_READER_UNVERIFIED = 1,
    /* It has more than SHMRING_READERS_PROCESS_MAX mappings or descriptors, or more
     * than SHMRING_READERS_PROCESS_BYTES_MAX bytes of mappings' lines: the census read
     * no further, so whether it holds a version is unknown (generation
     * and bytes are 0). */
    SHMRING_READER_TOO_LARGE = 2,
} shmring_reader_kind_t;

/* The most lines of /proc/PID/maps, and the most descriptors, that the census reads
 * of one process (the kernel's default vm.max_map_count is 65530), and the most bytes
 * of its /proc/PID/maps (an average line of 256 bytes: a path may be 4095). */
#define SHMRING_READERS_PROCESS_MAX 32768
#define SHMRING_READERS_PROCESS_BYTES_MAX (8u << 20)

/* One version of a ring that at least one process maps. */
typedef struct shmring_ring_version_use {
    uint64_t generation;
    bool current;
    /* How many processes map it. */
    size_t processes;
    /* The memory the version occupies: its largest mapping, whole pages. A superseded
     * version is already unlinked, so these bytes stay in use (df counts them, ls
     * shows nothing) until the last of its processes switches or exits. */
    uint64_t bytes;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_ring_version_use_t;

/* A census of a ring's readers, filled by shmring_ring_readers(). */
typedef struct shmring_ring_readers {
    /* The ring's current generation, read after the census. */
    uint64_t generation;
    /* One entry per process and version it maps, by pid, then generation; owned by
     * the library until shmring_ring_readers_free(). */
    size_t reader_count;
    shmring_ring_reader_t *readers;
    /* One entry per version mapped by anyone, by generation; owned likewise. */
    size_t version_count;
    shmring_ring_version_use_t *versions;
    /* Processes whose mappings were read, and those that could not be (another
     * user's, to a caller without the right to trace them): the census is complete
     * only when processes_hidden is 0. Processes that a hidepid mount of /proc hides
     * from the caller are in neither count. */
    size_t processes_inspected;
    size_t processes_hidden;
    /* The superseded versions in VERSIONS and the bytes they keep in use. */
    size_t superseded_versions;
    uint64_t superseded_bytes;
    /* Processes listed apart, one entry each, by pid: those whose objects could not
     * be proven the ring's (SHMRING_READER_UNVERIFIED: generation is the lowest their
     * objects are named with, mapped_bytes and descriptors the sums over them all)
     * and those too large to inspect (SHMRING_READER_TOO_LARGE). Nothing of theirs is
     * in VERSIONS or the superseded figures. Owned by the library until
     * shmring_ring_readers_free(). */
    size_t uncounted_count;
#if UINTPTR_MAX == UINT32_MAX
    /* These two fields take the 16 bytes of room they were given on every platform,
     * so that the structure keeps its size where size_t and pointers have 4. */
    uint32_t reserved_count_pad;
#endif
    shmring_ring_reader_t *uncounted;
#if UINTPTR_MAX == UINT32_MAX
    uint32_t reserved_pointer_pad;
#endif
    /* Counted processes stuck on an older version because their release cannot read
     * the current one (stuck_format set in READERS): restart them after upgrading. */
    uint64_t stuck_processes;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[1];
} shmring_ring_readers_t;

/*
 * Finds every process, among those the caller may inspect, that maps a version of
 * RING or holds a descriptor open on one (read from /proc/PID/maps and /proc/PID/fd:
 * DIR/shmring.RING/version.GEN, or that path marked "(deleted)" once a newer version
 * superseded it), and fills *out. A mapping or descriptor counts only when its object
 * is provably the ring's: the same device and inode as a version the census opened
 * in the ring directory itself, or an unlinked regular file of the ring's owner on
 * the ring directory's device (checked with stat() through /proc/PID/fd and, for
 * a caller with CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE, /proc/PID/map_files;
 * without them, an unlinked version mapped and not held open counts when the
 * process is the owner's). Other processes are listed apart (uncounted). Owners are
 * trusted as by shmring_open_with() (OPTIONS may be NULL). Processes in another
 * mount namespace that see the ring directory under another path, processes of pid
 * namespaces the caller cannot see, and descriptors passed over a Unix socket and
 * held only in flight are not found. Free with shmring_ring_readers_free(). Returns
 * 0, the codes of shmring_ring_status(), SHMRING_ENOMEM, or a negated errno value
 * when /proc cannot be read. Thread-safe; its cost is linear in the mappings and
 * descriptors it reads (at most SHMRING_READERS_PROCESS_MAX of each per process).
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_readers(const char *ring, const shmring_open_options_t *options,
                     shmring_ring_readers_t *out);

/* Frees what shmring_ring_readers() filled in (NULL is accepted) and zeroes its
 * counts. */
SHMRING_API void shmring_ring_readers_free(shmring_ring_readers_t *readers);

/*
 * Bounded loads (docs/bounded-loads.md): a ring's load board, which the owner
 * creates for one group, the workers'. Balance factors are given in percent, as
 * HAProxy's hash-balance-factor and Envoy's hash_balance_factor are: 125 is 1.25,
 * 0 is none; 100 to 10000 are valid.
 */

/*
 * Gives the writer's ring a load board that the group GROUP (and the owner) may
 * write, with the balance factor BALANCE_PERCENT (SHMRING_BALANCE_KEEP: the factor
 * the ring has, 0 if none), or changes the factor of the board it has. A board of another
 * group is replaced by a new one (counts start at 0). The board is sized as
 * shmring_writer_set_board_sized() sizes it with ENTRIES and SLOTS 0. The owner must be
 * allowed to give files to GROUP (be a member, or have CAP_CHOWN). Returns 0,
 * SHMRING_EBADFACTOR, SHMRING_EPERM (GROUP is not the owner's to give), SHMRING_ENOSPC,
 * SHMRING_ENOMEM (the system's shared-memory limits: shmmax, shmmni) or another negated
 * errno value; on an error the ring is as it was.
 */
#define SHMRING_BALANCE_KEEP UINT32_MAX
SHMRING_API SHMRING_MUST_CHECK int
shmring_writer_set_board(shmring_writer_t *w, gid_t group, uint32_t balance_percent);

/*
 * shmring_writer_set_board() with the board's sizes: ENTRIES node entries (a node
 * beyond them takes plain lookups), 1,024 to 65,536, and SLOTS slots (worker handles;
 * the handles beyond them take plain lookups), 1 to 1,024, with ENTRIES x SLOTS at
 * most 16,777,216 (2^24). 0 is automatic: SLOTS 128; ENTRIES twice the current
 * version's node count rounded up to a power of two, at least 1,024 and at most
 * what the limits leave. For a board of GROUP that the ring has, 0 keeps its count
 * (its entries as long as they hold the ring's nodes); other sizes replace it by a
 * new board (counts start at 0). Only a board of 1,024 entries and 128 slots is
 * bounded by readers of 0.4 and older (docs/upgrading.md). Returns the codes of
 * shmring_writer_set_board() and SHMRING_ELIMIT (sizes out of these limits).
 */
#define SHMRING_BOARD_ENTRIES_MIN 1024u
#define SHMRING_BOARD_ENTRIES_MAX 65536u
#define SHMRING_BOARD_SLOTS_MAX 1024u
#define SHMRING_BOARD_CELLS_MAX 16777216u
SHMRING_API SHMRING_MUST_CHECK int
shmring_writer_set_board_sized(shmring_writer_t *w, gid_t group, uint32_t balance_percent,
                               uint32_t entries, uint32_t slots);

/* Sets the balance factor of the writer's ring, kept for its load board whether or
 * not it has one yet (0: none). Returns 0 or SHMRING_EBADFACTOR. */
SHMRING_API SHMRING_MUST_CHECK int
shmring_writer_set_balance_factor(shmring_writer_t *w, uint32_t balance_percent);

/* Removes the ring's load board, if it has one: leases become plain lookups.
 * Returns 0 or a negated errno value. */
SHMRING_API SHMRING_MUST_CHECK int shmring_writer_remove_board(shmring_writer_t *w);

/* One node of a ring's load board. */
typedef struct shmring_board_node {
    uint32_t id;
    uint32_t weight;
    char name[SHMRING_NAME_MAX + 1];
    /* Whether the node is up in the current version. */
    bool up;
    uint64_t in_flight;
    /* Its capacity now, with the ring's in-flight total: 0 without a factor. */
    uint64_t capacity;
    /* Requests that found it full and went on to another candidate. */
    uint64_t overflow;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[4];
} shmring_board_node_t;

/* What a ring's load board says. */
typedef struct shmring_board_info {
    /* False when the ring has no board (then only balance_percent is set). */
    bool present;
    /* The version whose nodes are listed. */
    uint64_t generation;
    gid_t group;
    uint32_t balance_percent;
    uint64_t in_flight;
    /* Worker handles holding a slot, and slots reclaimed from dead workers. */
    uint32_t workers;
    uint64_t reclaimed;
    /* Leases acquired, those that their key's first candidate took, and the
     * candidates they tried in all. */
    uint64_t acquires;
    uint64_t first_candidate;
    uint64_t candidates_tried;
    size_t node_count;
    /* The current version's nodes, in node order; the library's until
     * shmring_board_info_free(). */
    shmring_board_node_t *nodes;
    /* The board's sizes: its slots (worker handles) and node entries. */
    uint32_t slot_count;
    uint32_t entry_count;
    /* Room to grow (see shmring.h). */
    uint64_t reserved[3];
} shmring_board_info_t;

/*
 * Reads RING's load board (trusting owners as shmring_open_with(); OPTIONS may be
 * NULL) with its current version's nodes. The caller must be the owner, root or a
 * member of the board's group. Returns 0, the codes of shmring_ring_status(),
 * SHMRING_ENOBOARD (the ring has none), SHMRING_EACCES, SHMRING_EBOARD,
 * SHMRING_ENOMEM or a validation error. Thread-safe.
 */
SHMRING_API SHMRING_MUST_CHECK int
shmring_ring_board(const char *ring, const shmring_open_options_t *options,
                   shmring_board_info_t *out);

/* Frees what shmring_ring_board() filled in (NULL is accepted). */
SHMRING_API void shmring_board_info_free(shmring_board_info_t *info);

/* Parses a balance factor ("1.25", "2", "0" for none) into percent: 0 or
 * SHMRING_EBADFACTOR. */
SHMRING_API SHMRING_MUST_CHECK int shmring_balance_factor_parse(const char *text,
                                                                uint32_t *percent);

#ifdef __cplusplus
}
#endif

#endif /* SHMRING_CTL_H */
