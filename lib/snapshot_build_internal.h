/*
 * Building a snapshot in three steps, so that the caller chooses where its bytes
 * live: the publisher builds straight into the version object's shared mapping, sized
 * in full before anything is written, rather than into a private buffer that it
 * copies afterwards (which doubled its memory and its writes).
 */
#ifndef SHMRING_SNAPSHOT_BUILD_INTERNAL_H
#define SHMRING_SNAPSHOT_BUILD_INTERNAL_H

#include "placement_internal.h"
#include "snapshot_internal.h"

/* A snapshot's header, sizes and sections laid out, before any of its bytes exist. */
struct snapshot_plan {
    /* Complete but for the checksum; header.total_size is the size to allocate. */
    struct snapshot_header header;
    /* Every node, then the up ones (NODES holds both), as the algorithm is given
     * them, with the work its size() kept for its place(). */
    struct placement_node *nodes;
    struct placement_input input;
    /* SET's algorithm. */
    const struct placement_algorithm *algorithm;
};

/*
 * Lays out SET's snapshot into *PLAN, refusing anything over a limit: 0,
 * SHMRING_EBADPARAMS, SHMRING_ELIMIT or SHMRING_ENOMEM. Free it with
 * shmring__snapshot_plan_free() once built.
 */
int shmring__snapshot_plan(const shmring_nodeset_t *set, struct snapshot_plan *plan);
void shmring__snapshot_plan_free(struct snapshot_plan *plan);

/*
 * Writes every section of PLAN's snapshot of SET into BUFFER, header.total_size
 * bytes, zeroed and 64-byte aligned, leaving the header zero: 0 or SHMRING_ENOMEM.
 */
int shmring__snapshot_fill(const shmring_nodeset_t *set, const struct snapshot_plan *plan,
                           void *buffer);

/* Writes the header of a filled BUFFER and its checksum, last: the bytes are then
 * the snapshot that shmring_snapshot_build() gives. */
void shmring__snapshot_seal(const struct snapshot_plan *plan, void *buffer);

#endif /* SHMRING_SNAPSHOT_BUILD_INTERNAL_H */
