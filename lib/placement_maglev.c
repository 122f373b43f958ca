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
 * Integers replace Envoy's floating-point normalized weights; the rule is the same.
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

struct maglev_entry {
    uint64_t offset;
    uint64_t skip;
    /* The slot this node tries next: offset + skip x turns, modulo the size. */
    uint64_t slot;
    uint64_t target;
    uint32_t weight;
    uint32_t node_index;
};

/* The next slot of a permutation, without a division. */
static inline uint64_t advance(uint64_t slot, uint64_t skip, uint64_t table_size)
{
    slot += skip;
    return slot >= table_size ? slot - table_size : slot;
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
    struct maglev_entry *entries = malloc(up_count * sizeof(*entries));
    if (sorted == NULL || entries == NULL) {
        free(sorted);
        free(entries);
        return SHMRING_ENOMEM;
    }
    memcpy(sorted, up, up_count * sizeof(*sorted));
    qsort(sorted, up_count, sizeof(*sorted), compare_by_key);

    uint32_t max_weight = 0;
    for (size_t i = 0; i < up_count; i++) {
        size_t length;
        const char *key = permutation_key(&sorted[i], &length);
        uint64_t h0 = XXH64(key, length, 0);
        uint64_t h1 = XXH64(key, length, 1);
        entries[i] = (struct maglev_entry){
            .offset = h0 % table_size,
            .skip = h1 % (table_size - 1) + 1,
            .slot = 0,
            .target = 0,
            .weight = sorted[i].weight,
            .node_index = sorted[i].node_index,
        };
        entries[i].slot = entries[i].offset;
        if (sorted[i].weight > max_weight)
            max_weight = sorted[i].weight;
    }

    for (uint32_t s = 0; s < table_size; s++)
        table[s] = UINT32_MAX;

    uint64_t filled = 0;
    for (uint64_t iteration = 1; filled < table_size; iteration++) {
        for (size_t i = 0; i < up_count && filled < table_size; i++) {
            struct maglev_entry *e = &entries[i];
            if (iteration * e->weight < e->target)
                continue;
            e->target += max_weight;
            /* The table size is prime and skip is in [1, size - 1], so the
             * permutation visits every slot: a free one is always found. */
            while (table[e->slot] != UINT32_MAX)
                e->slot = advance(e->slot, e->skip, table_size);
            table[e->slot] = e->node_index;
            e->slot = advance(e->slot, e->skip, table_size);
            filled++;
        }
    }
    free(sorted);
    free(entries);
    return 0;
}
