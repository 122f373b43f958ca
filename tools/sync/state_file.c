/*
 * The state file: the last node set sync applied, kept so that after a reboot the
 * ring comes back before the source answers. It is replaced atomically (a
 * temporary file written and fsynced, renamed over it, the directory fsynced), so a
 * crash or SIGKILL at any moment leaves either the old file or the new one, whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "sync_internal.h"

static int write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

static int sync_directory_of(const char *path)
{
    char *copy = strdup(path);
    if (copy == NULL)
        return -ENOMEM;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (fd < 0)
        return -errno;
    int err = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    return err;
}

int sync__state_write(const char *path, const char *text, size_t len, mode_t mode,
                      gid_t group)
{
    char temporary[4096];
    if ((size_t)snprintf(temporary, sizeof(temporary), "%s.XXXXXX", path) >=
        sizeof(temporary))
        return -ENAMETOOLONG;
    /* A fresh name created exclusively (mkostemp: O_CREAT | O_EXCL, mode 0600): in a
     * directory others can write, nothing planted at a predictable temporary name
     * (a link, another user's file) is ever opened or truncated. The group and mode
     * are set before a byte is written, so that the node set is never readable by
     * more users than the ring it came from. */
    int fd = mkostemp(temporary, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int err = 0;
    if (group != (gid_t)-1 && fchown(fd, (uid_t)-1, group) != 0)
        err = -errno;
    if (err == 0 && fchmod(fd, mode) != 0)
        err = -errno;
    if (err == 0)
        err = write_all(fd, text, len);
    if (err == 0 && fsync(fd) != 0)
        err = -errno;
    if (close(fd) != 0 && err == 0)
        err = -errno;
    if (err == 0 && rename(temporary, path) != 0)
        err = -errno;
    if (err != 0) {
        unlink(temporary);
        return err;
    }
    return sync_directory_of(path);
}

/* Reads FD to its end into a new NUL-terminated buffer, refusing (-EFBIG) more than
 * MAX bytes: a file that never ends (a link to /dev/zero) costs at most MAX. */
static int read_bounded(int fd, size_t max, char **text, size_t *len)
{
    size_t capacity = 65536, used = 0;
    char *buffer = malloc(capacity);
    int err = buffer != NULL ? 0 : -ENOMEM;
    while (err == 0) {
        if (used + 1 >= capacity) {
            if (used > max) {
                err = -EFBIG;
                break;
            }
            size_t grown_capacity = capacity * 2 > max + 2 ? max + 2 : capacity * 2;
            char *grown = realloc(buffer, grown_capacity);
            if (grown == NULL) {
                err = -ENOMEM;
                break;
            }
            buffer = grown;
            capacity = grown_capacity;
        }
        ssize_t n = read(fd, buffer + used, capacity - used - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            err = -errno;
        else if (n == 0)
            break;
        else
            used += (size_t)n;
    }
    if (err == 0 && used > max)
        err = -EFBIG;
    if (err != 0) {
        free(buffer);
        return err;
    }
    buffer[used] = '\0';
    *text = buffer;
    *len = used;
    return 0;
}

int sync__file_read(const char *path, char **text, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int err = read_bounded(fd, SYNC_DOCUMENT_MAX, text, len);
    close(fd);
    return err;
}

/* The kind of file ST describes, in the words of ringctl's messages. */
static const char *kind_of(const struct stat *st)
{
    switch (st->st_mode & S_IFMT) {
    case S_IFREG:
        return "regular file";
    case S_IFDIR:
        return "directory";
    case S_IFLNK:
        return "symbolic link";
    case S_IFIFO:
        return "FIFO";
    case S_IFSOCK:
        return "socket";
    case S_IFCHR:
        return "character device";
    case S_IFBLK:
        return "block device";
    default:
        return "file of unknown kind";
    }
}

/* Says into REFUSAL what ST is and why it is not trusted as a state file. */
static void describe_refusal(const char *path, const struct stat *st, const char *why,
                             char *refusal, size_t size)
{
    char owner[128];
    ringctl_describe_user(st->st_uid, owner, sizeof(owner));
    snprintf(refusal, size, "state file %s is a %s owned by %s%s; not read", path,
             kind_of(st), owner, why);
}

int sync__state_read(const char *path, char **text, size_t *len, char *refusal,
                     size_t size)
{
    refusal[0] = '\0';
    /* O_NOFOLLOW: a link planted at PATH is never followed (the file it names is
     * never opened, let alone quoted); O_NONBLOCK: a FIFO cannot hold sync up. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = -errno;
        struct stat st;
        /* Only to say what is there: the decision was open()'s. */
        if (err == -ELOOP && lstat(path, &st) == 0) {
            describe_refusal(path, &st, ", not a regular file", refusal, size);
            return SYNC_STATE_REFUSED;
        }
        return err;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    /* The ring's owner is whoever may publish it: this process's user. A file of
     * anyone else (but root), or one that others may rewrite, could decide where
     * the ring's keys go. */
    uid_t owner = geteuid();
    char why[128] = "";
    if (!S_ISREG(st.st_mode))
        snprintf(why, sizeof(why), ", not a regular file");
    else if (st.st_uid != owner && st.st_uid != 0)
        snprintf(why, sizeof(why), ", neither the ring's owner nor root");
    else if ((st.st_mode & 0022) != 0)
        snprintf(why, sizeof(why), " that its group or others can write (mode %04o)",
                 (unsigned)(st.st_mode & 07777));
    if (why[0] != '\0') {
        close(fd);
        describe_refusal(path, &st, why, refusal, size);
        return SYNC_STATE_REFUSED;
    }
    int err = read_bounded(fd, SYNC_DOCUMENT_MAX, text, len);
    close(fd);
    return err;
}

const char *sync__file_error(int err)
{
    /* The cap is a power of two, written out: "larger than 268435456 bytes". */
    _Static_assert(SYNC_DOCUMENT_MAX == 268435456, "the text below names the cap");
    if (err == -EFBIG)
        return "larger than 268435456 bytes, the limit for a node set";
    return strerror(-err);
}
