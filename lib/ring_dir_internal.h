/*
 * Ring directories: where a ring's objects live, and opening them safely in a
 * directory that other users share.
 *
 *   DIR/shmring.RING/                 the ring: owned by its owner, written by nobody
 *                                     else (mode 0700 plus r-x for who may read);
 *   DIR/shmring.RING/control          the current generation (struct control_block);
 *   DIR/shmring.RING/lock             the writers' flock(), mode 0600;
 *   DIR/shmring.RING/version.GEN      the snapshot of generation GEN, read-only;
 *   DIR/.shmring-new.RING.PID.TAGRAND a ring being created by process PID, renamed
 *                                     to shmring.RING once complete;
 *   DIR/.shmring-gone.RING.PID.TAGRAND a ring being destroyed, renamed away from
 *                                     shmring.RING before it is emptied.
 *
 * TAGRAND is 8 hex digits of the creator's pid namespace (so that a sweeper in
 * another namespace does not ask kill() about a pid that is not its own) and 8
 * random ones.
 *
 * Because a ring's directory is writable by its owner alone, nobody else can add,
 * replace or remove anything inside it; the only name another user can take is the
 * ring's own path in DIR, and every open here refuses what it finds there unless it
 * is a directory of a trusted owner. Every object is opened with O_NOFOLLOW,
 * O_NONBLOCK and O_CLOEXEC relative to a directory descriptor already checked, and
 * checked again with fstat() (type, owner, mode, size) before it is mapped.
 */
#ifndef SHMRING_RING_DIR_INTERNAL_H
#define SHMRING_RING_DIR_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "shmring_ctl.h"

#define RING_ENTRY_PREFIX "shmring."
#define CREATING_PREFIX ".shmring-new."
#define REMOVING_PREFIX ".shmring-gone."
#define CONTROL_FILE "control"
#define LOCK_FILE "lock"
#define VERSION_PREFIX "version."

/* Longest entry name in DIR: the longest prefix, the ring, ".PID.RANDOM", NUL. */
#define ENTRY_NAME_MAX                                                                   \
    (sizeof(CREATING_PREFIX) + SHMRING_RING_NAME_MAX + 1 + 10 + 1 + 16 + 1)
/* Longest entry name in a ring's directory. */
#define FILE_NAME_MAX (sizeof(VERSION_PREFIX) + 20 + 1)

/* An "any owner" value for shmring__ring_dir_open_trusted(). */
#define OWNER_ANY ((uid_t)-1)

/* The directory to use: DIRECTORY or the default; NULL when it is too long or not
 * absolute. */
const char *shmring__directory(const char *directory);

/* Writes "shmring.RING" into ENTRY. */
void shmring__ring_entry(const char *ring, char entry[ENTRY_NAME_MAX]);

/* Writes "version.GEN" into NAME. */
void shmring__version_file(uint64_t generation, char name[FILE_NAME_MAX]);

/* Whether ENTRY (a file name in a ring's directory) is "version.GEN" with GEN written
 * canonically (no leading zero, no overflow); fills *generation. */
bool shmring__is_version_file(const char *entry, uint64_t *generation);

/* The uid OPTIONS (may be NULL) trusts besides root and the effective uid, or
 * OWNER_ANY for none (trusted_owner 0, the default, names root, trusted anyway). */
uid_t shmring__trusted_extra(const shmring_open_options_t *options);

/* Whether a ring owned by OWNER may be read by this process: root, the effective
 * uid, or EXTRA. */
bool shmring__owner_trusted(uid_t owner, uid_t extra);

/*
 * Opens DIRECTORY (NULL: the default) and checks that others cannot rename or remove
 * what its users create there: it must be owned by a trusted owner (see above) and
 * either be writable by its owner only or have the sticky bit (like /dev/shm).
 * Returns 0 and the descriptor in *fd, SHMRING_EBADDIR (path empty, relative or too
 * long), SHMRING_ENODIR (no such directory), SHMRING_ENOTRINGDIR (a kernel filesystem
 * such as /proc), SHMRING_EBASEOWNER (an untrusted owner), SHMRING_EBASEDIR (others
 * may write it and it is not sticky), or a negated errno value (-ENOTDIR: not a
 * directory).
 */
int shmring__base_open(const char *directory, uid_t extra, int *fd);

/*
 * Opens the directory of RING in BASE_FD, without following a symbolic link or
 * blocking on a FIFO, and checks it: a directory that only its owner can write.
 * Returns 0 (with *fd and *st), SHMRING_ENOENT, SHMRING_ENOTRING (something else has
 * the name), SHMRING_EOWNER (others may write it), SHMRING_EACCES (a directory we may
 * not enter; *st says whose) or a negated errno value.
 */
int shmring__ring_dir_open(int base_fd, const char *ring, int *fd, struct stat *st);

/*
 * Opens RING's directory for reading: the base directory checked as above, the
 * ring's owner trusted (root, the effective uid or EXTRA), and equal to OWNER unless
 * OWNER is OWNER_ANY. Returns what shmring__ring_dir_open() returns, SHMRING_EOWNER
 * for an untrusted or other owner, or an error of shmring__base_open().
 */
int shmring__ring_dir_open_trusted(const char *directory, const char *ring, uid_t extra,
                                   uid_t owner, int *fd, struct stat *st);

/*
 * Opens NAME in the ring directory DIR_FD (whose status is DIR_ST) with FLAGS plus
 * O_NOFOLLOW, O_NONBLOCK and O_CLOEXEC, and checks it is a regular file of the
 * directory's owner that others cannot write. Returns 0 (with *fd and *st),
 * SHMRING_ENOENT, SHMRING_ENOTRING, SHMRING_EOWNER or a negated errno value.
 */
int shmring__object_open(int dir_fd, const struct stat *dir_st, const char *name,
                         int flags, int *fd, struct stat *st);

/* Whether BASE_FD's ENTRY is still the directory DIR_ST describes (a writer that
 * waited for the lock checks that the ring was not destroyed meanwhile). */
bool shmring__entry_is(int base_fd, const char *entry, const struct stat *dir_st);

/* Writes a hidden entry name PREFIX RING.PID.TAGRAND into ENTRY. Returns 0. */
int shmring__hidden_entry(const char *prefix, const char *ring,
                          char entry[ENTRY_NAME_MAX]);

/*
 * Takes the exclusive flock() on LOCK_FD, waiting as OPTIONS say. Before waiting it
 * calls OPTIONS' on_wait with RING, unless *ANNOUNCED says an earlier wait of the
 * same call already did (a writer that finds the ring re-created waits again), and
 * sets *ANNOUNCED. Returns 0, SHMRING_EBUSY or a negated errno value.
 */
int shmring__lock_wait(int lock_fd, const char *ring,
                       const shmring_writer_options_t *options, bool *announced);

/* Marks the control object of the ring directory DIR_FD (status DIR_ST) destroyed, if
 * it has a usable one, so that readers still holding it look the ring up by name
 * again. */
void shmring__mark_destroyed(int dir_fd, const struct stat *dir_st);

/*
 * Removes every entry of the ring directory DIR_FD (the lock file last), then the
 * directory itself, BASE_FD's ENTRY. Returns 0 or the first negated errno value.
 */
int shmring__ring_dir_remove(int base_fd, const char *entry, int dir_fd);

/*
 * Removes what killed creators and destroyers of RING left behind in BASE_FD: hidden
 * directories of this effective uid whose process no longer exists (or, from another
 * pid namespace, that nobody changed for a minute) and whose lock, if it has one,
 * nobody holds. A destroyed ring's control object
 * is marked destroyed first, so readers still holding it look the ring up again.
 */
void shmring__sweep_leftovers(int base_fd, const char *ring);

/* Opens a directory stream on DIR_FD's directory with its own offset (a dup() would
 * share DIR_FD's, and a second listing would start where the first ended). Returns
 * NULL with errno set on failure. */
DIR *shmring__dir_stream(int dir_fd);

/* Calls VISIT(DIR_FD, NAME, DATA) for every entry NAME of the directory DIR_FD but
 * "." and "..". Returns 0, the first error of VISIT (the others are still visited),
 * or a negated errno value when the directory cannot be read. */
int shmring__dir_each(int dir_fd, int (*visit)(int dir_fd, const char *name, void *data),
                      void *data);

/* Converts the current errno to a SHMRING_E* code. */
int shmring__errno_code(void);

#endif
