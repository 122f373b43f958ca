/*
 * Shared-memory layout of a ring:
 *
 *   /shmring.NAME       the control object: small, fixed-size, never resized;
 *   /shmring.NAME.GEN   one object per published version: a snapshot, immutable
 *                       once its generation has been published.
 *
 * The control object holds the current generation. A writer publishes version GEN
 * by writing /shmring.NAME.GEN whole and then storing GEN into the control object
 * with release ordering; a reader loads the generation with acquire ordering and
 * opens the object it names. Ring names may not end in a dot and digits, so a
 * control object's name can never look like another ring's version object.
 */
#ifndef SHMRING_CONTROL_INTERNAL_H
#define SHMRING_CONTROL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "shmring_ctl.h"

#define CONTROL_MAGIC UINT64_C(0x316c7274636d6873) /* "shmctrl1" little-endian */
#define CONTROL_FORMAT_VERSION 1u
#define CONTROL_SIZE 4096u
#define CONTROL_OBJECT_PREFIX "shmring."
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
};

/* Longest object name: "/shmring." + ring + "." + 20 digits + NUL. */
#define OBJECT_NAME_MAX (9 + SHMRING_RING_NAME_MAX + 1 + 20 + 1)

/* Writes "/shmring.RING" into NAME. */
void shmring__control_name(const char *ring, char name[OBJECT_NAME_MAX]);
/* Writes "/shmring.RING.GEN" into NAME. */
void shmring__version_name(const char *ring, uint64_t generation,
                           char name[OBJECT_NAME_MAX]);

/*
 * Opens RING's control object read-only and maps it; fills *st with its status (the
 * owner is what version objects must match). Returns 0, SHMRING_ENOENT (missing, or
 * not completely created yet), SHMRING_ECONTROL, or another negated errno value.
 */
int shmring__control_map(const char *ring, const struct control_block **out,
                         struct stat *st);

/* Checks a mapped control object's header (size already checked). */
bool shmring__control_valid(const struct control_block *control);

/*
 * Opens version GENERATION of RING read-only, checks that its owner is OWNER, maps
 * it and validates it. On success *snapshot and *size describe a private read-only
 * mapping the caller must munmap(). Returns 0, SHMRING_ENOENT (the version is gone),
 * SHMRING_EOWNER, a validation error, or another negated errno value.
 */
int shmring__version_map(const char *ring, uint64_t generation, uid_t owner,
                         const void **snapshot, size_t *size);

/* Unlinks every version object of RING except generation KEEP (0: keep none). */
int shmring__unlink_versions(const char *ring, uint64_t keep);

/* Converts the current errno to a SHMRING_E* code. */
int shmring__errno_code(void);

#endif
