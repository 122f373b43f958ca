/*
 * The ring-type algorithms behind one door: the snapshot builder asks here how many
 * points a node set has and for the points themselves, whatever the algorithm.
 */
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "nodeset_internal.h"
#include "placement_internal.h"

struct placement_node shmring__placement_node_of(const shmring_nodeset_t *set,
                                                 size_t index)
{
    const struct nodeset_node *node = &set->nodes[index];
    return (struct placement_node){
        .name = node->name,
        .name_length = node->name_length,
        .address = node->address,
        .hash_key = node->hash_key,
        .weight = node->weight,
        .node_index = (uint32_t)index,
    };
}

/*
 * nginx's continuum of SET (see shmring__nginx_continuum()), from all of its nodes
 * with their states: nginx places down servers too.
 */
static int nginx_continuum(const shmring_nodeset_t *set, struct snapshot_point **points,
                           size_t *count)
{
    size_t n = set->count ? set->count : 1;
    struct placement_node *nodes = malloc(n * sizeof(*nodes));
    shmring_state_t *states = malloc(n * sizeof(*states));
    int err = nodes != NULL && states != NULL ? 0 : SHMRING_ENOMEM;
    for (size_t i = 0; err == 0 && i < set->count; i++) {
        nodes[i] = shmring__placement_node_of(set, i);
        states[i] = set->nodes[i].state;
    }
    if (err == 0)
        err = shmring__nginx_continuum(nodes, states, set->count, points, count);
    free(nodes);
    free(states);
    return err;
}

/*
 * What each placement does with node-set order, read from its code:
 * - `ring` and `maglev` take the nodes by hash key (their hash_key, else their
 *   name), then by name; `envoy-maglev` by key (hash_key, else address), then by
 *   name; `twemproxy` by nutcracker's server name, then by node name. Equal points
 *   are then ordered by that sort, so node-set order never reaches an answer.
 * - `ketama` and `libketama` emit the up nodes' points in node-set order and keep
 *   that order among equal points (the peers' server order: continuum_item_cmp,
 *   glibc's merge-sort qsort()); `envoy-ring` also sums the up hosts' weights in
 *   that order, which decides how many points each host gets. Down nodes are left
 *   out of all three.
 * - `nginx` places every node, down ones included, in node-set order, and of equal
 *   points keeps the first: a down node listed before an up node with an equal point
 *   (the same address, say) takes that point from it.
 */
enum placement_order shmring__placement_order(const shmring_params_t *params)
{
    switch (params->algorithm) {
    case SHMRING_ALGORITHM_KETAMA:
    case SHMRING_ALGORITHM_LIBKETAMA:
    case SHMRING_ALGORITHM_ENVOY_RING:
        return PLACEMENT_ORDER_UP;
    case SHMRING_ALGORITHM_NGINX:
        return PLACEMENT_ORDER_ALL;
    default:
        return PLACEMENT_ORDER_NONE;
    }
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
        /* The count costs a whole placement: nginx merges equal points, down
         * servers' too, before it skips the down servers. */
        *point_count = 0;
        if (up_count == 0)
            return 0;
        struct snapshot_point *points;
        size_t kept;
        int err = nginx_continuum(set, &points, &kept);
        if (err != 0)
            return err;
        free(points);
        *point_count = kept;
        return 0;
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
        struct snapshot_point *placed;
        size_t kept;
        int err = nginx_continuum(set, &placed, &kept);
        if (err != 0)
            return err;
        memcpy(points, placed, kept * sizeof(*points));
        free(placed);
        return 0;
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
