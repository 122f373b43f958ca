/*
 * A ring's control object and version objects (see ring_dir_internal.h for where
 * they live).
 *
 * The control object holds the current generation. A writer publishes version GEN
 * by writing version.GEN whole and then storing GEN into the control object with
 * release ordering; a reader loads the generation with acquire ordering and opens
 * the object it names.
 */
#ifndef SHMRING_CONTROL_INTERNAL_H
#define SHMRING_CONTROL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "shmring_ctl.h"

#define CONTROL_MAGIC UINT64_C(0x316c7274636d6873) /* "shmctrl1" little-endian */
/* 2: rings are directories (control, lock, version.GEN) instead of flat objects.
 * The control object and the directory layout follow the snapshot's rule
 * (docs/upgrading.md): a layout that an older release cannot use takes the next
 * format, which it refuses; what it may ignore (the load board's record) keeps the
 * format. Format 1 (flat objects) is no longer read, so format 2 is the oldest. */
#define CONTROL_FORMAT_VERSION 2u
/* The control object's features (its features field), each a bit a reader must
 * know: none yet. Readers before 0.4 ignore the field, so a writer that sets one
 * publishes the next control format too. */
#define CONTROL_FEATURES_KNOWN 0u
#define CONTROL_SIZE 4096u
/* The generation a destroyed ring's control object is left with, so that readers
 * still holding it notice and look the ring up by name again. */
#define CONTROL_GENERATION_DESTROYED UINT64_MAX

struct control_block {
    /* Written last when the object is created: a reader that sees it sees the
     * rest initialized. */
    uint64_t magic;
    uint32_t format_version;
    uint32_t byte_order;
    /* The current generation: 0 before the first publication. */
    uint64_t generation;
    /* Publisher metadata, for `ringctl show` only (not ordered with generation). */
    uint64_t publish_count;
    int64_t publisher_pid;
    int64_t published_at;
    /* The features the ring's control object and directory use
     * (CONTROL_FEATURES_KNOWN), zero from every writer so far (0.3.0 and older left
     * it zero without knowing it). */
    uint32_t features;
};

/*
 * Opens the control object of the ring directory DIR_FD (status DIR_ST) read-only,
 * checks it and maps it; fills *st with its status. Returns 0, SHMRING_ENOENT,
 * SHMRING_ENOTRING, SHMRING_EOWNER, SHMRING_ECONTROL or another negated errno value.
 */
int shmring__control_map(int dir_fd, const struct stat *dir_st,
                         const struct control_block **out, struct stat *st);

/* Checks a mapped control object's header (size already checked): 0,
 * SHMRING_ECONTROL, or SHMRING_ENEWFORMAT and SHMRING_EFEATURE for a newer writer's. */
int shmring__control_check(const struct control_block *control);

/*
 * Opens version GENERATION in the ring directory DIR_FD (status DIR_ST) read-only,
 * checks that it is the directory owner's and that nobody can write it, maps it and
 * validates it. On success *snapshot and *size describe a private read-only mapping
 * the caller must munmap(). Returns 0, SHMRING_ENOENT (the version is gone),
 * SHMRING_EOWNER, SHMRING_ENOTRING, a validation error, or another negated errno
 * value.
 */
int shmring__version_map(int dir_fd, const struct stat *dir_st, uint64_t generation,
                         const void **snapshot, size_t *size);

/*
 * Reads the header of version GENERATION in the ring directory DIR_FD (status DIR_ST)
 * into *out, with the same checks of the object as shmring__version_map(), and checks
 * the header alone (shmring__snapshot_header_check()) against the object's size.
 * Returns 0, SHMRING_ENOENT (the version is gone), SHMRING_EOWNER, SHMRING_ENOTRING,
 * SHMRING_ETRUNCATED, a header check's code, or another negated errno value.
 */
struct snapshot_header;
int shmring__version_header_read(int dir_fd, const struct stat *dir_st,
                                 uint64_t generation, struct snapshot_header *out);

/* Unlinks every version object in the ring directory DIR_FD except generation KEEP
 * (0: keep none). */
int shmring__unlink_versions(int dir_fd, uint64_t keep);

#endif
