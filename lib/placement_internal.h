/*
 * Placement algorithms. Each is a pure function of the up nodes (in node-set order)
 * and the parameters: the same input gives the same points or table on every host.
 */
#ifndef SHMRING_PLACEMENT_INTERNAL_H
#define SHMRING_PLACEMENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "shmring_ctl.h"
#include "snapshot_internal.h"

/*
 * Whether, and for which nodes, an algorithm's answers may depend on the order of the
 * nodes in the node set (see shmring__placement_order()).
 */
enum placement_order {
    /* Node-set order never changes an answer. */
    PLACEMENT_ORDER_NONE = 0,
    /* The order of the up nodes may; down nodes take no part in placement. */
    PLACEMENT_ORDER_UP = 1,
    /* The order of all nodes, down ones included, may. */
    PLACEMENT_ORDER_ALL = 2,
};

/*
 * The one predicate on node order, for the fingerprint (which covers node order
 * exactly where it may change an answer) and for node-set differences (which report
 * an order difference only there), so that the two cannot disagree.
 */
enum placement_order shmring__placement_order(const shmring_params_t *params);

/* An up node as placement sees it. */
struct placement_node {
    const char *name;
    size_t name_length;
    const char *address;
    /* The node's hash_key, or NULL: the string a peer algorithm hashes into the
     * node's points instead of the one it derives from the address. */
    const char *hash_key;
    uint32_t weight;
    /* Index of the node in the snapshot's node table. */
    uint32_t node_index;
};

/* `ring`: weight x vnodes points per node. */
uint64_t shmring__ring_point_count(const struct placement_node *up, size_t up_count,
                                   uint32_t vnodes);
int shmring__ring_place(const struct placement_node *up, size_t up_count,
                        const shmring_params_t *params, struct snapshot_point *points);

/* `ketama`: libmemcached 1.x weighted ketama's continuum. */
uint64_t shmring__ketama_point_count(const struct placement_node *up, size_t up_count);
int shmring__ketama_place(const struct placement_node *up, size_t up_count,
                          struct snapshot_point *points);

/* `maglev`: fills TABLE (TABLE_SIZE entries, a prime >= up_count) with node indexes. */
int shmring__maglev_place(const struct placement_node *up, size_t up_count,
                          uint32_t table_size, uint32_t *table);

/* `twemproxy`: nutcracker's `distribution: ketama` continuum. */
uint64_t shmring__twemproxy_point_count(const struct placement_node *up, size_t up_count);
int shmring__twemproxy_place(const struct placement_node *up, size_t up_count,
                             struct snapshot_point *points);

/* `libketama`: last.fm's ketama.c continuum. */
uint64_t shmring__libketama_point_count(const struct placement_node *up, size_t up_count);
int shmring__libketama_place(const struct placement_node *up, size_t up_count,
                             struct snapshot_point *points);

/*
 * One node's place in the Maglev fill (shared by `maglev` and `envoy-maglev`, which
 * differ in keys, order and weights, not in how the table is filled): its
 * permutation of the slots and its weighted turns. WEIGHT and TARGET are doubles
 * because Envoy normalizes weights; `maglev`'s integer weights are exact in them
 * (every product stays below 2^53: iterations <= 2^24, weights <= 2^16).
 */
struct maglev_permutation {
    uint64_t offset;
    uint64_t skip;
    /* The slot this node tries next: offset + skip x turns, modulo the size. */
    uint64_t slot;
    double weight;
    double target;
    uint32_t node_index;
};

/*
 * Fills TABLE (TABLE_SIZE entries, a prime) by Maglev's rule with Envoy's weighting:
 * in iteration i (from 1) each node of NODES, in order, takes a turn while
 * i x weight >= its target, which then grows by MAX_WEIGHT; a turn claims the next
 * free slot of its permutation. Stops when the table is full (a table smaller than
 * the node count is filled by the first nodes). Each node's slot must start at its
 * offset and its skip be in [1, TABLE_SIZE - 1].
 */
void shmring__maglev_fill(struct maglev_permutation *nodes, size_t count,
                          double max_weight, uint32_t table_size, uint32_t *table);

/* `envoy-maglev`: Envoy's MaglevTable; fills TABLE (TABLE_SIZE entries, a prime) with
 * node indexes. */
int shmring__envoy_maglev_place(const struct placement_node *up, size_t up_count,
                                uint32_t table_size, uint32_t *table);

/* `envoy-ring`: Envoy's RingHashLoadBalancer ring, with PARAMS' ring sizes and hash. */
uint64_t shmring__envoy_ring_point_count(const struct placement_node *up, size_t up_count,
                                         const shmring_params_t *params);
int shmring__envoy_ring_place(const struct placement_node *up, size_t up_count,
                              const shmring_params_t *params,
                              struct snapshot_point *points);

/*
 * `nginx`: `hash ... consistent`. nginx places every server, down ones included, and
 * merges equal points before it skips down servers, so this takes all NODE_COUNT
 * nodes (node_index = position) with their states. Places them into a new sorted
 * array that the caller frees, *COUNT points after merging and skipping. Returns 0,
 * SHMRING_ENOMEM, or SHMRING_ELIMIT when all nodes' points would pass
 * SHMRING_POINTS_MAX.
 */
int shmring__nginx_continuum(const struct placement_node *nodes,
                             const shmring_state_t *states, size_t node_count,
                             struct snapshot_point **out, size_t *count);

/*
 * The points of any ring-type algorithm of SET (whose up nodes are UP): how many,
 * and placing them, sorted. Returns 0, SHMRING_ENOMEM or SHMRING_ELIMIT.
 */
int shmring__placement_point_count(const shmring_nodeset_t *set,
                                   const struct placement_node *up, size_t up_count,
                                   uint64_t *point_count);
int shmring__placement_place(const shmring_nodeset_t *set,
                             const struct placement_node *up, size_t up_count,
                             struct snapshot_point *points);

/* Node INDEX of SET as placement sees it. */
struct placement_node shmring__placement_node_of(const shmring_nodeset_t *set,
                                                 size_t index);

/* The sum of the weights of UP, which the ketama-style placements share out. */
uint64_t shmring__placement_total_weight(const struct placement_node *up,
                                         size_t up_count);

/*
 * Appends at POINTS[*NEXT] the four points that ketama draws from the MD5 digest of
 * LABEL for NODE_INDEX: each little-endian word of the digest, as a point's high half.
 */
void shmring__points_add_md5_words(struct snapshot_point *points, size_t *next,
                                   const char *label, size_t length, uint32_t node_index);

/* Sorts points by point value, stably (equal points keep their input order). */
int shmring__points_sort(struct snapshot_point *points, size_t count);

#endif
