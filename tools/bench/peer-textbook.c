/*
 * The textbook ring: TEXTBOOK_VNODES points per node at xxh3(name || le32(i)), one
 * sorted array of points, the owners in a parallel array, a lookup by binary search
 * for the first point >= xxh3(key), wrapping to the first point. shmring's ring places
 * the same points, so the two must agree key for key.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ringbench.h"

#define TEXTBOOK_VNODES 160

struct textbook_point {
    uint64_t point;
    uint32_t owner;
};

static int textbook_point_compare(const void *a, const void *b)
{
    const struct textbook_point *x = a, *y = b;
    if (x->point != y->point)
        return x->point < y->point ? -1 : 1;
    return (x->owner > y->owner) - (x->owner < y->owner);
}

int textbook_build(size_t nodes, struct textbook *t)
{
    size_t count = nodes * TEXTBOOK_VNODES;
    if (count == 0) {
        fail("a textbook ring needs at least one node");
        return -1;
    }
    struct textbook_point *all = malloc(count * sizeof(*all));
    t->points = malloc(count * sizeof(*t->points));
    t->owners = malloc(count * sizeof(*t->owners));
    t->count = count;
    if (all == NULL || t->points == NULL || t->owners == NULL) {
        free(all);
        textbook_free(t);
        fail("cannot allocate a textbook ring of %zu points", count);
        return -1;
    }
    size_t k = 0;
    for (size_t n = 0; n < nodes; n++) {
        uint8_t text[40];
        char name[32];
        node_name(n, name);
        size_t length = strlen(name);
        memcpy(text, name, length);
        for (uint32_t v = 0; v < TEXTBOOK_VNODES; v++) {
            text[length] = (uint8_t)v;
            text[length + 1] = (uint8_t)(v >> 8);
            text[length + 2] = (uint8_t)(v >> 16);
            text[length + 3] = (uint8_t)(v >> 24);
            all[k].point = XXH3_64bits(text, length + 4);
            all[k].owner = (uint32_t)n;
            k++;
        }
    }
    qsort(all, count, sizeof(*all), textbook_point_compare);
    for (size_t i = 0; i < count; i++) {
        t->points[i] = all[i].point;
        t->owners[i] = all[i].owner;
    }
    free(all);
    return 0;
}

void textbook_free(struct textbook *t)
{
    free(t->points);
    free(t->owners);
    memset(t, 0, sizeof(*t));
}

uint32_t textbook_owner(const struct textbook *t, uint64_t hash)
{
    size_t low = 0, high = t->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (t->points[middle] < hash)
            low = middle + 1;
        else
            high = middle;
    }
    return t->owners[low == t->count ? 0 : low];
}

uint64_t run_textbook(const void *context, const struct keyset *keys, size_t first,
                      size_t count)
{
    const struct textbook *t = context;
    uint64_t sum = 0;
    for (size_t i = first; i < first + count; i++)
        sum += textbook_owner(t, XXH3_64bits(key_at(keys, i), keys->length[i]));
    return sum;
}
