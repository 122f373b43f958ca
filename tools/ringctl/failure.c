/*
 * Saying why the library refused a ring, in words an operator can act on: another
 * user's squatting file told from their own mistake, a lock held by another writer,
 * a ring directory that is missing or unsafe.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringctl.h"

/* Whether a reader with CTL's options accepts a ring of OWNER (as the library
 * decides: root, ourselves, or --owner). */
static bool owner_trusted(const struct ringctl *ctl, uid_t owner)
{
    return owner == 0 || owner == geteuid() ||
           (ctl->open.trusted_owner != 0 && owner == ctl->open.trusted_owner);
}

bool ringctl_describe_occupant(const struct ringctl *ctl, const char *ring, int err,
                               char *out, size_t size)
{
    shmring_ring_object_t object;
    if (shmring_ring_object(ring, ctl->directory, &object) != 0 || !object.exists)
        return false;
    char owner[64 + LOGIN_NAME_MAX];
    ringctl_describe_user(object.owner, owner, sizeof(owner));
    if (strcmp(object.kind, "directory") != 0) {
        snprintf(out, size,
                 "%s is a %s owned by %s, not a ring of yours; remove it or use another "
                 "ring name",
                 object.path, object.kind, owner);
        return true;
    }
    if ((object.mode & 0022) != 0) {
        snprintf(out, size,
                 "%s is a directory owned by %s that others can write (mode %04o), not a "
                 "ring; remove it or use another ring name",
                 object.path, owner, (unsigned)object.mode);
        return true;
    }
    if (err == SHMRING_EOWNER && ctl->writing && object.owner != geteuid()) {
        snprintf(out, size,
                 "%s is a directory owned by %s: the ring belongs to that user, and only "
                 "its owner can change or destroy it",
                 object.path, owner);
        return true;
    }
    if (err == SHMRING_EOWNER && !owner_trusted(ctl, object.owner)) {
        const struct passwd *user = getpwuid(object.owner);
        char name[64 + LOGIN_NAME_MAX];
        if (user != NULL)
            snprintf(name, sizeof(name), "%s", user->pw_name);
        else
            snprintf(name, sizeof(name), "%lu", (unsigned long)object.owner);
        snprintf(out, size,
                 "%s is a directory owned by %s, a user whose rings are not accepted "
                 "(to read it anyway, add --owner %s)",
                 object.path, owner, name);
        return true;
    }
    if (err == SHMRING_ENOENT) {
        /* A ring appears only complete (renamed into place with its control object),
         * so a directory without one is not a ring, whoever made it. */
        snprintf(out, size,
                 "%s is a directory owned by %s that holds no ring; remove it or use "
                 "another ring name",
                 object.path, owner);
        return true;
    }
    return false;
}

/* Says, into OUT, whose the ring directory is (SHMRING_EBASEOWNER): the library
 * told which check failed; only the owner's name is looked up here. */
static void describe_base_owner(const char *path, char *out, size_t size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(out, size,
                 "the ring directory %s belongs to a user whose rings are not accepted",
                 path);
        return;
    }
    char owner[64 + LOGIN_NAME_MAX];
    ringctl_describe_user(st.st_uid, owner, sizeof(owner));
    snprintf(out, size,
             "the ring directory %s belongs to %s, a user whose rings are not accepted",
             path, owner);
}

/* Says, into OUT, what is wrong with the ring directory PATH when ERR is one of the
 * library's directory errors; false for any other ERR. */
static bool describe_base_directory(const char *path, int err, char *out, size_t size)
{
    switch (err) {
    case SHMRING_EBADDIR:
        snprintf(out, size,
                 "directory '%s': the ring directory must be an absolute path of at most "
                 "%d bytes",
                 path, SHMRING_DIRECTORY_MAX);
        return true;
    case SHMRING_ENODIR:
        snprintf(out, size, "the ring directory %s does not exist", path);
        return true;
    case -ENOTDIR:
        snprintf(out, size,
                 "directory '%s' is not a ring directory: it is not a directory", path);
        return true;
    case SHMRING_ENOTRINGDIR:
        snprintf(out, size,
                 "directory '%s' is not a ring directory: it is on a kernel filesystem "
                 "(like /proc or /sys) that cannot hold rings",
                 path);
        return true;
    case SHMRING_EBASEOWNER:
        describe_base_owner(path, out, size);
        return true;
    case SHMRING_EBASEDIR:
        snprintf(out, size,
                 "the ring directory %s is unsafe: others can write it and it is not "
                 "sticky, so anyone could rename or remove rings in it",
                 path);
        return true;
    default:
        return false;
    }
}

int ringctl_library_failure(const char *what, const struct ringctl *ctl, int err)
{
    char detail[LINE_MAX_BYTES];
    if (err == SHMRING_EBUSY)
        return ringctl_fail(
            EXIT_FAILED, "ring '%s': another writer holds the ring's lock (waited %d s)",
            ctl->ring, ctl->wait_seconds);
    if ((err == SHMRING_EOWNER || err == SHMRING_ENOTRING || err == SHMRING_ENOENT) &&
        ringctl_describe_occupant(ctl, ctl->ring, err, detail, sizeof(detail)))
        return ringctl_fail(EXIT_FAILED, "ring '%s': %s", ctl->ring, detail);
    const char *path =
        ctl->directory != NULL ? ctl->directory : SHMRING_DEFAULT_DIRECTORY;
    if (describe_base_directory(path, err, detail, sizeof(detail)))
        return ringctl_fail(EXIT_FAILED, "ring '%s': %s", ctl->ring, detail);
    if (err == -EFBIG)
        return ringctl_fail(
            EXIT_FAILED,
            "cannot %s ring '%s': file too large for this process's file size "
            "limit (ulimit -f); ring unchanged",
            what, ctl->ring);
    /* No space: the memory may be held by processes that keep superseded versions
     * (mapped or open), which the census names. */
    if (err == SHMRING_ENOSPC &&
        output_space_holders(ctl->ring, &ctl->open, detail, sizeof(detail)))
        return ringctl_fail(EXIT_FAILED, "cannot %s ring '%s': %s; %s", what, ctl->ring,
                            shmring_strerror(err), detail);
    return ringctl_fail(EXIT_FAILED, "cannot %s ring '%s': %s", what, ctl->ring,
                        shmring_strerror(err));
}
