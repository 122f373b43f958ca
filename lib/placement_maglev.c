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

#include "placement_internal.h"
#include "text_internal.h"

/* The next slot of a permutation, without a division. */
static inline uint64_t advance(uint64_t slot, uint64_t skip, uint64_t table_size)
{
    slot += skip;
    return slot >= table_size ? slot - table_size : slot;
}

void shmring__maglev_fill(struct maglev_permutation *nodes, size_t count,
                          double max_weight, uint32_t table_size, uint32_t *table)
{
    for (uint32_t s = 0; s < table_size; s++)
        table[s] = UINT32_MAX;
    uint64_t filled = 0;
    for (uint32_t iteration = 1; filled < table_size; iteration++) {
        for (size_t i = 0; i < count && filled < table_size; i++) {
            struct maglev_permutation *node = &nodes[i];
            if ((double)iteration * node->weight < node->target)
                continue;
            node->target += max_weight;
            /* The table size is prime and skip is in [1, size - 1], so the
             * permutation visits every slot: a free one is always found. */
            while (table[node->slot] != UINT32_MAX)
                node->slot = advance(node->slot, node->skip, table_size);
            table[node->slot] = node->node_index;
            node->slot = advance(node->slot, node->skip, table_size);
            filled++;
        }
    }
}

/* The string hashed into NODE's permutation. */
static const char *permutation_key(const struct placement_node *node, size_t *length)
{
    if (node->hash_key != NULL) {
        *length = strlen(node->hash_key);
        return node->hash_key;
    }
    *length = node->name_length;
    return node->name;
}

static int compare_by_key(const void *a, const void *b)
{
    const struct placement_node *x = a;
    const struct placement_node *y = b;
    size_t x_length, y_length;
    const char *x_key = permutation_key(x, &x_length);
    const char *y_key = permutation_key(y, &y_length);
    int c = shmring__text_compare(x_key, x_length, y_key, y_length);
    if (c != 0)
        return c;
    return shmring__text_compare(x->name, x->name_length, y->name, y->name_length);
}

int shmring__maglev_place(const struct placement_node *up, size_t up_count,
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
        const char *key = permutation_key(&sorted[i], &length);
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
