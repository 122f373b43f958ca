/*
 * A stable LSD radix sort of ring points by their 64-bit value: four passes of 16
 * bits, skipping the passes in which every point has the same digit (ketama's points
 * live in the top 32 bits, so it sorts in two passes). Stability is what makes ties
 * deterministic: the placement code emits points in tie-break order.
 */
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"

#define DIGIT_BITS 16
#define DIGIT_VALUES (1u << DIGIT_BITS)

int shmring__points_sort(struct snapshot_point *points, size_t count)
{
    if (count < 2)
        return 0;
    struct snapshot_point *scratch = malloc(count * sizeof(*scratch));
    size_t *counts = malloc(DIGIT_VALUES * sizeof(*counts));
    if (scratch == NULL || counts == NULL) {
        free(scratch);
        free(counts);
        return SHMRING_ENOMEM;
    }

    struct snapshot_point *from = points, *to = scratch;
    for (unsigned shift = 0; shift < 64; shift += DIGIT_BITS) {
        memset(counts, 0, DIGIT_VALUES * sizeof(*counts));
        for (size_t i = 0; i < count; i++)
            counts[(from[i].point >> shift) & (DIGIT_VALUES - 1)]++;
        if (counts[(from[0].point >> shift) & (DIGIT_VALUES - 1)] == count)
            continue;
        size_t start = 0;
        for (size_t d = 0; d < DIGIT_VALUES; d++) {
            size_t c = counts[d];
            counts[d] = start;
            start += c;
        }
        for (size_t i = 0; i < count; i++)
            to[counts[(from[i].point >> shift) & (DIGIT_VALUES - 1)]++] = from[i];
        struct snapshot_point *swap = from;
        from = to;
        to = swap;
    }
    if (from != points)
        memcpy(points, from, count * sizeof(*points));
    free(scratch);
    free(counts);
    return 0;
}
