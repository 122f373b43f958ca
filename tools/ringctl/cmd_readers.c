/*
 * `ringctl readers`: the library's census of the processes that map a ring's
 * versions (shmring_ring_readers()), handed to the output (output_readers.c).
 */
#include "ringctl.h"

int ringctl_cmd_readers(struct ringctl *ctl)
{
    shmring_ring_readers_t census;
    int err = shmring_ring_readers(ctl->ring, &ctl->open, &census);
    if (err != 0)
        return ringctl_library_failure("read the readers of", ctl, err);
    int status = output_readers(ctl, &census);
    shmring_ring_readers_free(&census);
    return status;
}
