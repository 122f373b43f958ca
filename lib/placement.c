/*
 * Helpers that several placement algorithms share. They call no algorithm and no
 * table: the algorithm files call them, never the other way round.
 */
#include <stdio.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"
#include "text_internal.h"

uint64_t shmring__placement_total_weight(const struct placement_node *up, size_t up_count)
{
    uint64_t total = 0;
    for (size_t i = 0; i < up_count; i++)
        total += up[i].weight;
    return total;
}

/* The four points of LABEL's MD5 digest: its little-endian words, as high halves. */
static void add_md5_words(struct snapshot_point *points, size_t *next, const char *label,
                          size_t length, uint32_t node_index)
{
    uint8_t digest[16];
    shmring__md5(label, length, digest);
    for (int word = 0; word < 4; word++)
        shmring__points_append(points, next,
                               (uint64_t)shmring__load_le32(digest + 4 * word) << 32,
                               node_index);
}

void shmring__points_add_md5_labels(struct snapshot_point *points, size_t *next,
                                    const char *name, size_t name_length,
                                    uint32_t digests, size_t label_max,
                                    uint32_t node_index)
{
    /* NAME, '-', up to ten digits and the NUL that snprintf() writes. */
    char label[PLACEMENT_LABEL_NAME_MAX + 12];
    if (name_length > PLACEMENT_LABEL_NAME_MAX)
        name_length = PLACEMENT_LABEL_NAME_MAX;
    memcpy(label, name, name_length);
    for (uint32_t k = 0; k < digests; k++) {
        int suffix = snprintf(label + name_length, sizeof(label) - name_length, "-%u", k);
        size_t length = name_length + (size_t)suffix;
        add_md5_words(points, next, label, length < label_max ? length : label_max,
                      node_index);
    }
}

const char *shmring__placement_node_key(const struct placement_node *node, size_t *length)
{
    if (node->hash_key != NULL) {
        *length = strlen(node->hash_key);
        return node->hash_key;
    }
    *length = node->name_length;
    return node->name;
}

int shmring__placement_compare_by_key(const struct placement_node *x,
                                      const struct placement_node *y)
{
    size_t x_length, y_length;
    const char *x_key = shmring__placement_node_key(x, &x_length);
    const char *y_key = shmring__placement_node_key(y, &y_length);
    int c = shmring__text_compare(x_key, x_length, y_key, y_length);
    if (c != 0)
        return c;
    return shmring__text_compare(x->name, x->name_length, y->name, y->name_length);
}

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

int shmring__place_prepared_points(const struct placement_input *input, uint64_t size,
                                   void *points)
{
    memcpy(points, input->prepared, size * sizeof(struct snapshot_point));
    return 0;
}
