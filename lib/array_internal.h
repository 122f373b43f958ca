/*
 * Growing arrays: the one place where the library's lists (node sets, diffs, reader
 * censuses, ring lists) make room for one more element, doubling their capacity so
 * that appending N elements costs O(N), and where the arrays public structs hand to
 * callers are released.
 */
#ifndef SHMRING_ARRAY_INTERNAL_H
#define SHMRING_ARRAY_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shmring.h"

/*
 * Makes room in *ITEMS (COUNT elements of SIZE bytes in use, room for *CAPACITY) for
 * at least one more element: unchanged while there is room, else reallocated to
 * twice the capacity (16 elements at first). Returns 0 or SHMRING_ENOMEM, which
 * leaves *ITEMS and *CAPACITY as they were.
 */
static inline int shmring__array_reserve(void **items, size_t *capacity, size_t count,
                                         size_t size)
{
    if (count < *capacity)
        return 0;
    size_t wanted = *capacity == 0 ? 16 : *capacity * 2;
    if (wanted < *capacity || wanted > SIZE_MAX / size)
        return SHMRING_ENOMEM;
    void *grown = realloc(*items, wanted * size);
    if (grown == NULL)
        return SHMRING_ENOMEM;
    *items = grown;
    *capacity = wanted;
    return 0;
}

/*
 * Appends a copy of the SIZE bytes at VALUE to *ITEMS (see shmring__array_reserve())
 * and counts it in *COUNT. Returns the new element, or NULL when out of memory.
 */
static inline void *shmring__array_push(void **items, size_t *capacity, size_t *count,
                                        const void *value, size_t size)
{
    if (shmring__array_reserve(items, capacity, *count, size) != 0)
        return NULL;
    void *element = (unsigned char *)*items + *count * size;
    memcpy(element, value, size);
    (*count)++;
    return element;
}

/*
 * Frees an array handed to a caller in a public struct and leaves the struct saying
 * it holds none: *ITEMS NULL and *COUNT 0, so that freeing twice is harmless.
 */
static inline void shmring__array_release(void **items, size_t *count)
{
    free(*items);
    *items = NULL;
    *count = 0;
}

#endif /* SHMRING_ARRAY_INTERNAL_H */
