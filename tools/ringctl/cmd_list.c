/* ringctl list: every ring of the ring directory, one line (or object) each. */
#include <string.h>

#include "ringctl.h"

int ringctl_ring_summary_read(const struct ringctl *ctl, const char *ring,
                              struct ring_summary *out)
{
    /* The control object and the current version's header alone: a few kilobytes
     * whatever the ring's size. */
    shmring_ring_info_t info;
    int err = shmring_ring_info(ring, &ctl->open, &info);
    if (err != 0)
        return err;
    *out = (struct ring_summary){.ring = ring,
                                 .status = info.status,
                                 .info = info.version,
                                 .published = info.status.generation != 0};
    return 0;
}

/* Says why RING (listed, then refused with ERR) is skipped, unless it was destroyed
 * since it was listed. Another user's ring, or something else that has a ring's name,
 * is no reason to fail the listing of the others. */
static void skip(const struct ringctl *ctl, const char *ring, int err)
{
    char detail[LINE_MAX_BYTES];
    bool described =
        (err == SHMRING_EOWNER || err == SHMRING_ENOTRING || err == SHMRING_ENOENT) &&
        ringctl_describe_occupant(ctl, ring, err, detail, sizeof(detail));
    if (described)
        ringctl_warn("ring '%s': skipped: %s", ring, detail);
    else if (err != SHMRING_ENOENT)
        ringctl_warn("ring '%s': skipped: %s", ring, shmring_strerror(err));
}

int ringctl_cmd_list(struct ringctl *ctl)
{
    char **names;
    size_t count;
    int err = shmring_ring_list(ctl->directory, &names, &count);
    if (err != 0)
        return ringctl_fail(EXIT_FAILED, "cannot list rings in %s: %s",
                            ctl->directory != NULL ? ctl->directory
                                                   : SHMRING_DEFAULT_DIRECTORY,
                            err > -1000 ? strerror(-err) : shmring_strerror(err));
    /* Each ring is handed to the output as it is read, so that a warning about one
     * comes where it is skipped. */
    struct list_output output;
    output_list_start(ctl, &output);
    for (size_t i = 0; i < count; i++) {
        struct ring_summary entry;
        err = ringctl_ring_summary_read(ctl, names[i], &entry);
        if (err != 0) {
            skip(ctl, names[i], err);
            continue;
        }
        output_list_ring(&output, &entry);
    }
    int status = output_list_end(&output);
    shmring_ring_list_free(names);
    return status;
}
