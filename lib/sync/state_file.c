/*
 * The state file: the last node set sync applied, kept so that after a reboot the
 * ring comes back before the source answers. It is replaced atomically (a
 * temporary file written and fsynced, renamed over it, the directory fsynced), so a
 * crash or SIGKILL at any moment leaves either the old file or the new one, whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int sync__state_write(const char *path, const char *text, size_t len)
{
    char temporary[4096];
    if ((size_t)snprintf(temporary, sizeof(temporary), "%s.XXXXXX", path) >=
        sizeof(temporary))
        return -ENAMETOOLONG;
    /* A fresh name created exclusively (mkostemp: O_CREAT | O_EXCL, mode 0600): in a
     * directory others can write, nothing planted at a predictable temporary name
     * (a link, another user's file) is ever opened or truncated. */
    int fd = mkostemp(temporary, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fchmod(fd, 0644) != 0) {
        int err = -errno;
        close(fd);
        unlink(temporary);
        return err;
    }
    int err = write_all(fd, text, len);
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

int sync__file_read(const char *path, char **text, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t capacity = 65536, used = 0;
    char *buffer = malloc(capacity);
    int err = buffer != NULL ? 0 : -ENOMEM;
    while (err == 0) {
        if (used + 1 >= capacity) {
            char *grown = realloc(buffer, capacity * 2);
            if (grown == NULL) {
                err = -ENOMEM;
                break;
            }
            buffer = grown;
            capacity *= 2;
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
    close(fd);
    if (err != 0) {
        free(buffer);
        return err;
    }
    buffer[used] = '\0';
    *text = buffer;
    *len = used;
    return 0;
}
