/*
 * The validated snapshot handle (shmring_snapshot_t): validated bytes and who owns
 * them. Every public call that reads a snapshot takes one, so the lookups never see
 * bytes that have not passed the validator.
 */
#ifndef SHMRING_SNAPSHOT_HANDLE_INTERNAL_H
#define SHMRING_SNAPSHOT_HANDLE_INTERNAL_H

#include <stddef.h>

#include "shmring_ctl.h"

struct shmring_snapshot {
    /* Validated, and never written again while the handle lives. */
    const void *buffer;
    size_t size;
    /* What shmring_snapshot_free() releases with free(): the buffer when the handle
     * owns it; NULL when it is lent (a writer's mapping of its current version). */
    void *allocation;
};

/*
 * Makes *out own BUFFER, SIZE bytes allocated with malloc() that the caller has
 * validated already (shmring_ring_snapshot() copies a mapping the reader's checks
 * validated). On success the handle frees BUFFER; on failure (SHMRING_ENOMEM) the
 * caller still owns it.
 */
int shmring__snapshot_adopt(void *buffer, size_t size, shmring_snapshot_t **out);

#endif
