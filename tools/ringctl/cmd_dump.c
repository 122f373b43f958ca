/* ringctl dump: the node set as JSON, in the format that load reads. */
#include <stdlib.h>

#include "ringctl.h"

/* SNAPSHOT's node set (an empty one when SNAPSHOT is NULL: nothing published). */
static int nodeset_of(const shmring_snapshot_t *snapshot, shmring_nodeset_t **set)
{
    return snapshot != NULL ? shmring_nodeset_from_snapshot(snapshot, set)
                            : shmring_nodeset_new(set);
}

int ringctl_cmd_dump(struct ringctl *ctl)
{
    uint64_t generation;
    shmring_snapshot_t *snapshot;
    int err = shmring_ring_snapshot(ctl->ring, &ctl->open, &generation, &snapshot);
    if (err != 0)
        return ringctl_library_failure("open", ctl, err);
    shmring_nodeset_t *set = NULL;
    char *text = NULL;
    err = nodeset_of(snapshot, &set);
    shmring_snapshot_free(snapshot);
    if (err == 0)
        err = shmring_nodeset_to_json(set, &text);
    shmring_nodeset_free(set);
    if (err != 0)
        return ringctl_library_failure("read", ctl, err);
    output_document(text);
    free(text);
    return EXIT_OK;
}
