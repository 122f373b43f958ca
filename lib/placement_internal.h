/*
 * What the placement algorithms share: the nodes they are given, and the helpers
 * that several of them use (lib/placement.c, lib/point_sort.c), which call no
 * algorithm back. Each algorithm is a pure function of the nodes (in node-set order)
 * and the parameters: the same input gives the same points or table on every host.
 * Its file exports nothing but its description (algorithm_internal.h).
 */
#ifndef SHMRING_PLACEMENT_INTERNAL_H
#define SHMRING_PLACEMENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "algorithm_internal.h"
#include "shmring_ctl.h"
#include "snapshot_internal.h"

/* A node as placement sees it. */
struct placement_node {
    const char *name;
    size_t name_length;
    const char *address;
    /* The node's hash_key, or NULL: the string a peer algorithm hashes into the
     * node's points instead of the one it derives from the address. */
    const char *hash_key;
    uint32_t weight;
    shmring_state_t state;
    /* Index of the node in the snapshot's node table. */
    uint32_t node_index;
};

/*
 * What an algorithm places: the parameters, every node of the node set in its order
 * (NODES[i].node_index == i), and the up ones among them in the same order. Most
 * algorithms read only UP; nginx places down servers too.
 */
struct placement_input {
    const shmring_params_t *params;
    const struct placement_node *nodes;
    size_t node_count;
    const struct placement_node *up;
    size_t up_count;
    /* Work that an algorithm's size() did and its place() takes over (nginx counts
     * its points by placing them), or NULL; the builder frees it with free(). */
    void *prepared;
};

/* The sum of the weights of UP, which the ketama-style placements share out. */
uint64_t shmring__placement_total_weight(const struct placement_node *up,
                                         size_t up_count);

/*
 * Writes point POINT of NODE_INDEX at POINTS[*NEXT], its reserved word zero, and
 * advances *NEXT: how every placement stores a point. Inline, because every point of
 * every placement passes here.
 */
static inline void shmring__points_append(struct snapshot_point *points, size_t *next,
                                          uint64_t point, uint32_t node_index)
{
    points[*next].point = point;
    points[*next].node_index = node_index;
    points[*next].reserved = 0;
    (*next)++;
}

/* The longest NAME that shmring__points_add_md5_labels() takes: an address or hash
 * key, with what a peer adds to it (twemproxy's colon after a socket path, ketama's
 * port). */
#define PLACEMENT_LABEL_NAME_MAX (SHMRING_ADDRESS_MAX + 8)

/*
 * The ketama point strings of one server (libmemcached's, libketama's and
 * nutcracker's alike): appends at POINTS[*NEXT], for k from 0 to DIGESTS - 1, the four
 * points drawn from the MD5 digest of "NAME-k" (k in decimal), cut to its first
 * LABEL_MAX bytes: each little-endian word of the digest, as a point's high half, for
 * NODE_INDEX. NAME has NAME_LENGTH bytes, at most PLACEMENT_LABEL_NAME_MAX.
 */
void shmring__points_add_md5_labels(struct snapshot_point *points, size_t *next,
                                    const char *name, size_t name_length,
                                    uint32_t digests, size_t label_max,
                                    uint32_t node_index);

/*
 * The string that `ring` and `maglev` hash into NODE's points or permutation: its
 * hash_key when it has one, its name otherwise; its length in *LENGTH.
 */
const char *shmring__placement_node_key(const struct placement_node *node,
                                        size_t *length);

/*
 * The order in which `ring` and `maglev` take nodes: by the key above, then by name
 * (two nodes may share a hash_key; names are unique), so that node-set order never
 * reaches an answer. Negative, 0 or positive, as strcmp().
 */
int shmring__placement_compare_by_key(const struct placement_node *x,
                                      const struct placement_node *y);

/* Sorts points by point value, stably (equal points keep their input order). */
int shmring__points_sort(struct snapshot_point *points, size_t count);

/*
 * place() for an algorithm whose size() had to build the whole placement to count its
 * points (nginx, haproxy) and kept them in INPUT->prepared: copies SIZE points out.
 */
int shmring__place_prepared_points(const struct placement_input *input, uint64_t size,
                                   void *points);

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

#endif
