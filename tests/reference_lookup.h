/*
 * The reference that the lookup tests and the fuzz targets hold the snapshot's
 * lookups to: a plain bisection of the whole sorted points array, which knows
 * nothing of the bucket index or the answers the fast path reads.
 */
#ifndef SHMRING_REFERENCE_LOOKUP_H
#define SHMRING_REFERENCE_LOOKUP_H

#include <stdint.h>

#include "snapshot_internal.h"

/* Index of the first point >= KEY_HASH in SNAPSHOT's points, wrapping to point 0
 * past the last one. */
static inline uint32_t reference_first_point(const void *snapshot, uint64_t key_hash)
{
    const struct snapshot_header *h = snapshot_header(snapshot);
    const struct snapshot_point *points = snapshot_section_at(snapshot, &h->points);
    uint32_t low = 0, high = h->point_count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (points[middle].point < key_hash)
            low = middle + 1;
        else
            high = middle;
    }
    return low == h->point_count ? 0 : low;
}

#endif
