/* ringctl destroy: remove a ring; readers keep answering from their last version. */
#include "ringctl.h"

int ringctl_cmd_destroy(struct ringctl *ctl)
{
    struct change change = {.action = ACTION_DESTROY};
    ctl->writing = true;
    if (ctl->dry_run) {
        shmring_ring_status_t status;
        int err = shmring_ring_status(ctl->ring, &ctl->open, &status);
        if (err == 0)
            err = ringctl_dry_run_owner_check(&status);
        if (err != 0)
            return ringctl_library_failure("open", ctl, err);
        return output_change(ctl, &change, status.generation, NULL);
    }
    int err = shmring_ring_destroy(ctl->ring, &ctl->writer);
    if (err != 0)
        return ringctl_library_failure("destroy", ctl, err);
    ctl->destroyed = true;
    return output_change(ctl, &change, 0, NULL);
}
