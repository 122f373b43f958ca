/*
 * ringctl check: a drift check for configuration management and monitoring. The
 * comparison is the library's (shmring_nodeset_diff()); this file only reads the two
 * node sets and hands the differences to the output (output_check.c).
 */
#include <stdlib.h>

#include "ringctl.h"

/* The exit statuses of check: a drift check's, not ringctl's usual ones. */
enum {
    CHECK_SAME = 0,
    CHECK_DIFFERS = 1,
    CHECK_ERROR = 2,
};

/* Compares CTL's ring with the JSON node set TEXT of LEN bytes, read from LABEL, as
 * `load` of it would leave the ring. Returns the exit status. */
static int check(const struct ringctl *ctl, const char *text, size_t len,
                 const char *label)
{
    const char *ring = ctl->ring;
    const shmring_open_options_t *open = &ctl->open;
    uint64_t generation;
    shmring_snapshot_t *snapshot;
    int err = shmring_ring_snapshot(ring, open, &generation, &snapshot);
    if (err != 0)
        return ringctl_fail(CHECK_ERROR, "cannot read ring '%s': %s", ring,
                            shmring_strerror(err));
    shmring_nodeset_t *current = NULL;
    err = snapshot != NULL ? shmring_nodeset_from_snapshot(snapshot, &current)
                           : shmring_nodeset_new(&current);
    shmring_snapshot_free(snapshot);
    if (err != 0)
        return ringctl_fail(CHECK_ERROR, "cannot read ring '%s': %s", ring,
                            shmring_strerror(err));

    /* The document as `load` would apply it: the ring's parameters where it gives
     * none, and the ring's ids for the nodes that stay. */
    shmring_params_t ring_params, file_params;
    shmring_nodeset_params(current, &ring_params);
    shmring_nodeset_t *wanted = NULL;
    shmring_json_error_t error;
    err = shmring_nodeset_from_json(text, len, &ring_params, &wanted, &error);
    if (err == 0)
        err = shmring_nodeset_inherit_ids(wanted, current);
    shmring_nodeset_diff_t *diff = NULL;
    if (err == 0)
        err = shmring_nodeset_diff(current, wanted, &diff);
    int status;
    if (err == SHMRING_EJSON) {
        status = ringctl_fail(CHECK_ERROR, "%s: %s", label, error.text);
    } else if (err != 0) {
        status = ringctl_fail(CHECK_ERROR, "%s: %s", label, shmring_strerror(err));
    } else {
        shmring_nodeset_params(wanted, &file_params);
        status = output_check(ctl, diff, &ring_params, &file_params);
        if (status == EXIT_OK)
            status = shmring_nodeset_diff_count(diff) == 0 ? CHECK_SAME : CHECK_DIFFERS;
        else
            status = CHECK_ERROR;
    }
    shmring_nodeset_diff_free(diff);
    shmring_nodeset_free(wanted);
    shmring_nodeset_free(current);
    return status;
}

int ringctl_cmd_check(struct ringctl *ctl)
{
    struct load_input in;
    if (ringctl_read_load_input(ctl->args[0], &in) != EXIT_OK)
        return CHECK_ERROR;
    int status = check(ctl, in.text, in.len, in.label);
    free(in.text);
    return status;
}
