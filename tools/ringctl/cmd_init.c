/* ringctl init: create a ring and publish it, empty, as generation 1. */
#include <inttypes.h>

#include "ringctl.h"

static int change_init(const struct ringctl *ctl, const void *input,
                       shmring_nodeset_t **set, struct change *out)
{
    const shmring_params_t *params = input;
    int err = shmring_nodeset_set_params(*set, params);
    if (err != 0)
        return ringctl_library_failure("create", ctl, err);
    out->action = ACTION_INIT;
    out->params = *params;
    out->sample = false; /* nothing was published before: nothing moves */
    return EXIT_OK;
}

int ringctl_cmd_init(struct ringctl *ctl)
{
    shmring_params_t params = ctl->params;
    /* Without --hash, the algorithm's own (ketama takes only md5: use it rather than
     * refuse). */
    if (!(ctl->given & OPTION(HASH)))
        params.hash = shmring_algorithm_default_hash(params.algorithm);
    int err = shmring_params_check(&params);
    if (err == SHMRING_EBADHASH)
        return ringctl_fail(EXIT_USAGE, "hash '%s' cannot be used with algorithm '%s'",
                            shmring_hash_name(params.hash),
                            shmring_algorithm_name(params.algorithm));
    if (err == SHMRING_EINVAL && params.min_ring_size != 0 && params.max_ring_size != 0 &&
        params.min_ring_size > params.max_ring_size)
        return ringctl_fail(
            EXIT_USAGE, "--min-ring-size %" PRIu32 " exceeds --max-ring-size %" PRIu32,
            params.min_ring_size, params.max_ring_size);
    if (err == SHMRING_EINVAL && params.max_ring_size != 0 &&
        params.max_ring_size < 1024 && params.min_ring_size == 0)
        return ringctl_fail(
            EXIT_USAGE,
            "--max-ring-size %" PRIu32
            " is below the default minimum ring size 1024 (give --min-ring-size)",
            params.max_ring_size);
    if (err == SHMRING_EINVAL && params.algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV)
        return ringctl_fail(EXIT_USAGE,
                            "table size must be 0 or a prime number up to 5000011 for "
                            "envoy-maglev: '%" PRIu32 "'",
                            params.table_size);
    if (err == SHMRING_EINVAL)
        return ringctl_fail(
            EXIT_USAGE, "table size must be 0 or a prime number up to %u: '%" PRIu32 "'",
            SHMRING_POINTS_MAX, params.table_size);
    if (err != 0)
        return ringctl_fail(EXIT_USAGE, "%s", shmring_strerror(err));
    int status = ringctl_run_change(ctl, OPEN_EXCLUSIVE, change_init, &params);
    if (status != EXIT_OK)
        return status;
    return ringctl_board_apply(ctl, (ctl->given & OPTION(WORKERS_GROUP)) != 0,
                               (ctl->given & OPTION(BALANCE_FACTOR)) != 0,
                               ctl->balance_percent);
}
