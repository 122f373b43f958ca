/*
 * `maglev`: the lookup table of Maglev (Eisenbud et al., NSDI 2016, pseudocode
 * listing 1). Each node has a permutation of the table's slots, given by an offset
 * and a skip from two differently seeded 64-bit xxHash values of its key (as in
 * Envoy): its hash_key when it has one, its name otherwise. Nodes take turns
 * claiming their next free slot until the table is full.
 *
 * Weights follow Envoy's weighted Maglev: a node of weight w takes a turn in
 * iteration i only while i x w >= its running target, which then grows by the
 * largest weight, so it claims slots at w / max_weight of the heaviest node's rate.
 * Integer weights stand in for Envoy's normalized ones; the rule is the same, and
 * the fill is the one `envoy-maglev` uses (shmring__maglev_fill()).
 *
 * Nodes are taken in key order (then name order, for nodes sharing a hash_key), so
 * node-set order does not change the table, and neither does renaming a node that
 * has a hash_key.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "params_internal.h"
#include "placement_internal.h"

/* qsort()'s view of shmring__placement_compare_by_key(). */
static int compare_by_key(const void *a, const void *b)
{
    return shmring__placement_compare_by_key(a, b);
}

static int place_table(const struct placement_node *up, size_t up_count,
                       uint32_t table_size, uint32_t *table)
{
    struct placement_node *sorted = malloc(up_count * sizeof(*sorted));
    struct maglev_permutation *nodes = malloc(up_count * sizeof(*nodes));
    if (sorted == NULL || nodes == NULL) {
        free(sorted);
        free(nodes);
        return SHMRING_ENOMEM;
    }
    memcpy(sorted, up, up_count * sizeof(*sorted));
    qsort(sorted, up_count, sizeof(*sorted), compare_by_key);

    uint32_t max_weight = 0;
    for (size_t i = 0; i < up_count; i++) {
        size_t length;
        const char *key = shmring__placement_node_key(&sorted[i], &length);
        uint64_t offset = XXH64(key, length, 0) % table_size;
        nodes[i] = (struct maglev_permutation){
            .offset = offset,
            .skip = XXH64(key, length, 1) % (table_size - 1) + 1,
            .slot = offset,
            .weight = sorted[i].weight,
            .target = 0,
            .node_index = sorted[i].node_index,
        };
        if (sorted[i].weight > max_weight)
            max_weight = sorted[i].weight;
    }
    shmring__maglev_fill(nodes, up_count, max_weight, table_size, table);
    free(sorted);
    free(nodes);
    return 0;
}

/* The table size: the parameter, or the default for the up count; every up node
 * gets a slot, so a table smaller than the up count is refused. */
static int size(struct placement_input *input, uint64_t *size)
{
    uint32_t table_size = input->params->table_size
                              ? input->params->table_size
                              : shmring__maglev_default_size((uint32_t)input->up_count);
    if (table_size == 0 || table_size < input->up_count)
        return SHMRING_ELIMIT;
    *size = table_size;
    return 0;
}

static int place(const struct placement_input *input, uint64_t size, void *table)
{
    return place_table(input->up, input->up_count, (uint32_t)size, table);
}

/* Maglev takes the 64-bit hashes only (PLACEMENT_HASHES_OWN). */
const struct placement_algorithm shmring__placement_maglev = {
    .name = "maglev",
    .id = SHMRING_ALGORITHM_MAGLEV,
    .peer = false,
    .default_hash = SHMRING_HASH_XXH3,
    .hashes = PLACEMENT_HASHES_OWN,
    .parameters = PLACEMENT_PARAM_TABLE_SIZE,
    .key_hash = KEY_HASH_PARAMS,
    .order = PLACEMENT_ORDER_NONE,
    .lookup = PLACEMENT_LOOKUP_TABLE,
    .candidates = PLACEMENT_CANDIDATES_TABLE_FORWARD,
    .size = size,
    .place = place,
};
