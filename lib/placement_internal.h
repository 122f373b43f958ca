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

/* An up node as placement sees it. */
struct placement_node {
    const char *name;
    size_t name_length;
    const char *address;
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

/* Sorts points by point value, stably (equal points keep their input order). */
int shmring__points_sort(struct snapshot_point *points, size_t count);

#endif
