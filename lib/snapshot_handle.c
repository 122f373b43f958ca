/*
 * Validated snapshots as a type of their own: made once by validating bytes, then
 * passed to the lookups and to the info, shares and moved-share calls. The format
 * and the lookups themselves are the snapshot modules' (snapshot_internal.h); this
 * file only guards the way in.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_handle_internal.h"
#include "snapshot_internal.h"

int shmring__snapshot_adopt(void *buffer, size_t size, shmring_snapshot_t **out)
{
    shmring_snapshot_t *snapshot = malloc(sizeof(*snapshot));
    if (snapshot == NULL)
        return SHMRING_ENOMEM;
    *snapshot =
        (shmring_snapshot_t){.buffer = buffer, .size = size, .allocation = buffer};
    *out = snapshot;
    return 0;
}

int shmring_snapshot_new(const void *buffer, size_t size, shmring_snapshot_t **out)
{
    /* Validated in a private copy, never in place: bytes that another process (or
     * thread) can still change after they passed could make a lookup follow an
     * index the validator never saw. The copy is also aligned, as lookups need. */
    if (buffer == NULL || size < sizeof(struct snapshot_header))
        return SHMRING_ETRUNCATED;
    void *copy = malloc(size);
    if (copy == NULL)
        return SHMRING_ENOMEM;
    memcpy(copy, buffer, size);
    int err = shmring__snapshot_validate(copy, size);
    if (err == 0)
        err = shmring__snapshot_adopt(copy, size, out);
    if (err != 0)
        free(copy);
    return err;
}

int shmring_nodeset_snapshot(const shmring_nodeset_t *set, shmring_snapshot_t **out)
{
    void *bytes;
    size_t size;
    int err = shmring_snapshot_build(set, &bytes, &size);
    if (err != 0)
        return err;
    /* Nobody else has these bytes: validating them in place is safe, and keeps the
     * rule that every snapshot handed out has passed the validator. */
    err = shmring__snapshot_validate(bytes, size);
    if (err == 0)
        err = shmring__snapshot_adopt(bytes, size, out);
    if (err != 0)
        free(bytes);
    return err;
}

void shmring_snapshot_free(shmring_snapshot_t *snapshot)
{
    /* free(NULL) does nothing, as shmring_snapshot_free(NULL) must not either. */
    if (snapshot != NULL)
        free(snapshot->allocation);
    free(snapshot);
}

const void *shmring_snapshot_data(const shmring_snapshot_t *snapshot, size_t *size)
{
    if (size != NULL)
        *size = snapshot->size;
    return snapshot->buffer;
}

void shmring_snapshot_info(const shmring_snapshot_t *snapshot,
                           shmring_snapshot_info_t *out)
{
    shmring__snapshot_info(snapshot->buffer, out);
}

int shmring_snapshot_lookup(const shmring_snapshot_t *snapshot, const void *key,
                            size_t len, shmring_node_t *out)
{
    return shmring__snapshot_lookup(snapshot->buffer, key, len, out);
}

int shmring_snapshot_lookup_id(const shmring_snapshot_t *snapshot, const void *key,
                               size_t len, uint32_t *id)
{
    return shmring__snapshot_lookup_id(snapshot->buffer, key, len, id);
}

int shmring_snapshot_lookup_ids(const shmring_snapshot_t *snapshot,
                                const void *const *keys, const size_t *lens, size_t count,
                                uint32_t *ids)
{
    return shmring__snapshot_lookup_ids(snapshot->buffer, keys, lens, count, ids);
}

int shmring_snapshot_lookup_n(const shmring_snapshot_t *snapshot, const void *key,
                              size_t len, shmring_node_t *out, size_t n)
{
    return shmring__snapshot_lookup_n(snapshot->buffer, key, len, out, n);
}

int shmring_nodeset_from_snapshot(const shmring_snapshot_t *snapshot,
                                  shmring_nodeset_t **out)
{
    return shmring__nodeset_from_snapshot(snapshot->buffer, out);
}
