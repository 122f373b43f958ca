/*
 * The ring-type algorithms behind one door: the snapshot builder asks here how many
 * points a node set has and for the points themselves, whatever the algorithm.
 */
#include <stdlib.h>

#include "hash_internal.h"
#include "nodeset_internal.h"
#include "placement_internal.h"

/*
 * All nodes of SET as placement sees them, with their states, for the algorithms
 * that place down nodes too (nginx). The caller frees both arrays.
 */
static int all_nodes(const shmring_nodeset_t *set, struct placement_node **nodes,
                     shmring_state_t **states)
{
    size_t n = set->count ? set->count : 1;
    *nodes = malloc(n * sizeof(**nodes));
    *states = malloc(n * sizeof(**states));
    if (*nodes == NULL || *states == NULL) {
        free(*nodes);
        free(*states);
        return SHMRING_ENOMEM;
    }
    for (size_t i = 0; i < set->count; i++) {
        const struct nodeset_node *node = &set->nodes[i];
        (*nodes)[i] = (struct placement_node){
            .name = node->name,
            .name_length = node->name_length,
            .address = node->address,
            .hash_key = node->hash_key,
            .weight = node->weight,
            .node_index = (uint32_t)i,
        };
        (*states)[i] = node->state;
    }
    return 0;
}

int shmring__placement_point_count(const shmring_nodeset_t *set,
                                   const struct placement_node *up, size_t up_count,
                                   uint64_t *point_count)
{
    switch (set->params.algorithm) {
    case SHMRING_ALGORITHM_KETAMA:
        *point_count = shmring__ketama_point_count(up, up_count);
        return 0;
    case SHMRING_ALGORITHM_TWEMPROXY:
        *point_count = shmring__twemproxy_point_count(up, up_count);
        return 0;
    case SHMRING_ALGORITHM_LIBKETAMA:
        *point_count = shmring__libketama_point_count(up, up_count);
        return 0;
    case SHMRING_ALGORITHM_ENVOY_RING:
        *point_count = shmring__envoy_ring_point_count(up, up_count, &set->params);
        return 0;
    case SHMRING_ALGORITHM_NGINX: {
        *point_count = 0;
        if (up_count == 0)
            return 0;
        /* The count holds at most the points of all nodes; refuse more before
         * placing them. */
        uint64_t all = 0;
        for (size_t i = 0; i < set->count; i++)
            all += (uint64_t)set->nodes[i].weight * 160;
        if (all > SHMRING_POINTS_MAX)
            return SHMRING_ELIMIT;
        struct placement_node *nodes;
        shmring_state_t *states;
        int err = all_nodes(set, &nodes, &states);
        if (err == 0)
            err = shmring__nginx_point_count(nodes, states, set->count, point_count);
        free(nodes);
        free(states);
        return err;
    }
    default:
        *point_count = shmring__ring_point_count(up, up_count, set->params.vnodes);
        return 0;
    }
}

int shmring__placement_place(const shmring_nodeset_t *set,
                             const struct placement_node *up, size_t up_count,
                             struct snapshot_point *points)
{
    switch (set->params.algorithm) {
    case SHMRING_ALGORITHM_KETAMA:
        return shmring__ketama_place(up, up_count, points);
    case SHMRING_ALGORITHM_TWEMPROXY:
        return shmring__twemproxy_place(up, up_count, points);
    case SHMRING_ALGORITHM_LIBKETAMA:
        return shmring__libketama_place(up, up_count, points);
    case SHMRING_ALGORITHM_ENVOY_RING:
        return shmring__envoy_ring_place(up, up_count, &set->params, points);
    case SHMRING_ALGORITHM_NGINX: {
        struct placement_node *nodes;
        shmring_state_t *states;
        int err = all_nodes(set, &nodes, &states);
        if (err == 0)
            err = shmring__nginx_place(nodes, states, set->count, points);
        free(nodes);
        free(states);
        return err;
    }
    default:
        return shmring__ring_place(up, up_count, &set->params, points);
    }
}

uint64_t shmring__placement_total_weight(const struct placement_node *up, size_t up_count)
{
    uint64_t total = 0;
    for (size_t i = 0; i < up_count; i++)
        total += up[i].weight;
    return total;
}

void shmring__points_add_md5_words(struct snapshot_point *points, size_t *next,
                                   const char *label, size_t length, uint32_t node_index)
{
    uint8_t digest[16];
    shmring__md5(label, length, digest);
    for (int word = 0; word < 4; word++) {
        points[*next].point = (uint64_t)shmring__load_le32(digest + 4 * word) << 32;
        points[*next].node_index = node_index;
        points[*next].reserved = 0;
        (*next)++;
    }
}
