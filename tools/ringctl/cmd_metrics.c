/*
 * `ringctl metrics`: a ring's state (or, with --all, every ring's) for
 * node_exporter's textfile collector. Every sample of a Prometheus family follows its
 * HELP and TYPE lines (the format requires a family's samples to be together), so
 * the rings are all read first, then handed to the output (output_metrics.c), which
 * prints them family by family.
 */
#include <stdlib.h>
#include <string.h>

#include "ringctl.h"

/* Reads RING's summary and its readers into *OUT. Returns 0 or a library error. */
static int sample_read(const struct ringctl *ctl, const char *ring,
                       struct metrics_sample *out)
{
    memset(out, 0, sizeof(*out));
    int err = ringctl_ring_summary_read(ctl, ring, &out->summary);
    if (err != 0)
        return err;
    /* No board, or one this caller may not read: no board samples, not an error. */
    if (shmring_ring_board(ring, &ctl->open, &out->board) != 0)
        memset(&out->board, 0, sizeof(out->board));
    return shmring_ring_readers(ring, &ctl->open, &out->census);
}

int ringctl_cmd_metrics(struct ringctl *ctl)
{
    bool all = (ctl->given & OPTION(ALL)) != 0;
    if (ctl->ring_given && all)
        return ringctl_fail(EXIT_USAGE, "'metrics' takes -r RING or --all, not both");
    char **names = NULL;
    const char *one[] = {ctl->ring, NULL};
    size_t count = 1;
    if (all) {
        int err = shmring_ring_list(ctl->directory, &names, &count);
        if (err != 0)
            return ringctl_fail(EXIT_FAILED, "cannot list rings in %s: %s",
                                ctl->directory != NULL ? ctl->directory
                                                       : SHMRING_DEFAULT_DIRECTORY,
                                shmring_strerror(err));
    }
    struct metrics_sample *samples = calloc(count + 1, sizeof(*samples));
    if (samples == NULL) {
        shmring_ring_list_free(names);
        return ringctl_library_failure("read", ctl, SHMRING_ENOMEM);
    }
    size_t read = 0, unreadable = 0;
    int status = EXIT_OK;
    for (size_t i = 0; i < count; i++) {
        const char *ring = names != NULL ? names[i] : one[i];
        int err = sample_read(ctl, ring, &samples[read]);
        if (err == 0) {
            read++;
        } else if (!all) {
            status = ringctl_library_failure("read", ctl, err);
        } else if (err != SHMRING_ENOENT) {
            /* Another user's ring, say: name it and go on with the others (a ring
             * destroyed since it was listed is simply gone). */
            shmring_ring_readers_free(&samples[read].census);
            shmring_board_info_free(&samples[read].board);
            ringctl_warn("ring '%s': skipped: %s", ring, shmring_strerror(err));
            unreadable++;
        }
    }
    if (status == EXIT_OK)
        output_metrics(samples, read, unreadable, all);
    for (size_t i = 0; i < read; i++) {
        shmring_ring_readers_free(&samples[i].census);
        shmring_board_info_free(&samples[i].board);
    }
    free(samples);
    shmring_ring_list_free(names);
    return status;
}
