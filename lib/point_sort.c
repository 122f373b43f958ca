/*
 * A stable LSD radix sort of ring points by their 64-bit value, skipping the passes
 * in which every point has the same digit (ketama's points live in the top 32 bits,
 * so it sorts in half the passes). Large sets use 16-bit digits (four passes);
 * small ones 8-bit digits, whose 256 counters cost nothing to clear, where 65,536
 * would cost more than the points themselves. Stability is what makes ties
 * deterministic: the placement code emits points in tie-break order.
 */
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"

#define WIDE_DIGIT_BITS 16
#define NARROW_DIGIT_BITS 8

int shmring__points_sort(struct snapshot_point *points, size_t count)
{
    if (count < 2)
        return 0;
    unsigned digit_bits =
        count >= (1u << WIDE_DIGIT_BITS) ? WIDE_DIGIT_BITS : NARROW_DIGIT_BITS;
    size_t digit_values = (size_t)1 << digit_bits;
    uint64_t digit_mask = digit_values - 1;
    struct snapshot_point *scratch = malloc(count * sizeof(*scratch));
    size_t *counts = malloc(digit_values * sizeof(*counts));
    if (scratch == NULL || counts == NULL) {
        free(scratch);
        free(counts);
        return SHMRING_ENOMEM;
    }

    struct snapshot_point *from = points, *to = scratch;
    for (unsigned shift = 0; shift < 64; shift += digit_bits) {
        memset(counts, 0, digit_values * sizeof(*counts));
        for (size_t i = 0; i < count; i++)
            counts[(from[i].point >> shift) & digit_mask]++;
        if (counts[(from[0].point >> shift) & digit_mask] == count)
            continue;
        size_t start = 0;
        for (size_t d = 0; d < digit_values; d++) {
            size_t c = counts[d];
            counts[d] = start;
            start += c;
        }
        for (size_t i = 0; i < count; i++)
            to[counts[(from[i].point >> shift) & digit_mask]++] = from[i];
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
