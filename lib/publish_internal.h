/*
 * A test-only hook into the publisher. The crash tests set it to stop or kill a
 * writer at each named step of destroying or creating a ring, opening a writer and
 * publishing, so that every state a killed writer can leave behind is reached
 * deterministically.
 * It is NULL (and costs one load and branch per step) everywhere else.
 */
#ifndef SHMRING_PUBLISH_INTERNAL_H
#define SHMRING_PUBLISH_INTERNAL_H

#include "shmring_ctl.h"

enum publish_step {
    /* shmring_ring_destroy() renamed the ring away, not yet marked or emptied. */
    PUBLISH_STEP_DESTROY_RENAMED,
    /* It marked the control object destroyed, not yet emptied the directory. */
    PUBLISH_STEP_DESTROY_MARKED,
    /* A new ring's hidden directory exists, empty. */
    PUBLISH_STEP_RING_DIR_CREATED,
    /* Its control object is allocated and initialized except for its magic. */
    PUBLISH_STEP_CONTROL_BEFORE_MAGIC,
    /* The new ring is complete under its hidden name, not yet renamed into place. */
    PUBLISH_STEP_RING_BEFORE_RENAME,
    /* shmring_writer_open() holds the writer lock. */
    PUBLISH_STEP_OPEN_LOCKED,
    /* shmring_writer_open() removed the versions a killed writer left behind. */
    PUBLISH_STEP_OPEN_CLEANED,
    /* The new version object was created (O_EXCL), empty. */
    PUBLISH_STEP_VERSION_CREATED,
    /* Its owner, group and mode are set. */
    PUBLISH_STEP_VERSION_OWNED,
    /* It is sized in full (posix_fallocate). */
    PUBLISH_STEP_VERSION_SIZED,
    /* Its sections are written, its header (magic, checksum) not yet. */
    PUBLISH_STEP_VERSION_SECTIONS_WRITTEN,
    /* It is written whole. */
    PUBLISH_STEP_VERSION_WRITTEN,
    /* The new generation is stored: the version is published. */
    PUBLISH_STEP_GENERATION_STORED,
    /* The publisher metadata of that publication is stored. */
    PUBLISH_STEP_METADATA_STORED,
    /* The superseded version is unlinked (also reached when there was none). */
    PUBLISH_STEP_OLD_UNLINKED,
    PUBLISH_STEP_COUNT
};

/* Called at each step when not NULL. A hidden symbol: only the static test library
 * exposes it. */
extern void (*shmring__publish_hook)(enum publish_step step);

#define PUBLISH_HOOK(step)                                                               \
    do {                                                                                 \
        if (shmring__publish_hook != NULL)                                               \
            shmring__publish_hook(step);                                                 \
    } while (0)

/*
 * The start of every call that changes a ring (open a writer, destroy): checks RING's
 * name and points *options at the options to use, the caller's or DEFAULTS filled
 * with the defaults. Returns 0 or SHMRING_EBADRING.
 */
int shmring__writer_call_start(const char *ring, const shmring_writer_options_t **options,
                               shmring_writer_options_t *defaults);

/* The writer W's control object, mapped for writing, and its ring directory (for
 * the load board's owner side, board_admin.c). */
struct control_block;
struct stat;
struct control_block *shmring__writer_control(shmring_writer_t *w, int *dir_fd,
                                              struct stat *dir_st);

#endif
