/*
 * Control objects and version objects: checking and mapping them for reading.
 * Shared by the reader, the publisher and the ring-wide operations.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "control_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_internal.h"

int shmring_ring_name_check(const char *ring)
{
    if (ring == NULL)
        return SHMRING_EBADRING;
    size_t len = strnlen(ring, SHMRING_RING_NAME_MAX + 1);
    if (len == 0 || len > SHMRING_RING_NAME_MAX)
        return SHMRING_EBADRING;
    if (strspn(ring,
               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
        len)
        return SHMRING_EBADRING;
    /* "." and ".." would name directories; a dot and digits at the end would make
     * names ambiguous with generation numbers in listings and hidden entries. */
    if (strcmp(ring, ".") == 0 || strcmp(ring, "..") == 0)
        return SHMRING_EBADRING;
    size_t digits = 0;
    while (digits < len && ring[len - 1 - digits] >= '0' && ring[len - 1 - digits] <= '9')
        digits++;
    if (digits > 0 && digits < len && ring[len - 1 - digits] == '.')
        return SHMRING_EBADRING;
    return 0;
}

int shmring__control_check(const struct control_block *control)
{
    if (uatomic_read(&control->magic) != CONTROL_MAGIC)
        return SHMRING_ECONTROL;
    /* Pairs with the creator's write barrier before it stores the magic: the fields
     * it wrote first are seen here as written. */
    cmm_smp_rmb();
    if (control->byte_order != SNAPSHOT_BYTE_ORDER_MARK)
        return SHMRING_ECONTROL;
    if (control->format_version > CONTROL_FORMAT_VERSION)
        return SHMRING_ENEWFORMAT;
    if (control->format_version != CONTROL_FORMAT_VERSION)
        return SHMRING_ECONTROL;
    if ((uatomic_read(&control->features) & ~CONTROL_FEATURES_KNOWN) != 0)
        return SHMRING_EFEATURE;
    return 0;
}

/*
 * Opens version GENERATION of the ring directory DIR_FD read-only with the checks
 * every reader of a version makes: the directory owner's, writable by nobody, at
 * least a header long. Fills *fd and *length (the object's own size).
 */
static int version_open(int dir_fd, const struct stat *dir_st, uint64_t generation,
                        int *fd, size_t *length)
{
    char name[FILE_NAME_MAX];
    shmring__version_file(generation, name);
    struct stat st;
    int err = shmring__object_open(dir_fd, dir_st, name, O_RDONLY, fd, &st);
    if (err != 0)
        return err;
    if ((st.st_mode & 0222) != 0)
        err = SHMRING_EOWNER; /* writable: it could change after validation */
    else if (st.st_size < (off_t)sizeof(struct snapshot_header))
        err = SHMRING_ETRUNCATED;
    else if ((uint64_t)st.st_size > SIZE_MAX)
        err = SHMRING_ELIMIT;
    if (err != 0) {
        close(*fd);
        return err;
    }
    *length = (size_t)st.st_size;
    return 0;
}

int shmring__version_header_read(int dir_fd, const struct stat *dir_st,
                                 uint64_t generation, struct snapshot_header *out)
{
    int fd;
    size_t length;
    int err = version_open(dir_fd, dir_st, generation, &fd, &length);
    if (err != 0)
        return err;
    ssize_t n;
    do
        n = pread(fd, out, sizeof(*out), 0);
    while (n < 0 && errno == EINTR);
    err = n < 0 ? shmring__errno_code() : 0;
    close(fd);
    if (err != 0)
        return err;
    /* Shorter than version_open() saw: the object cannot shrink (nobody may write
     * it), so this is damage, reported like any short snapshot. */
    if ((size_t)n != sizeof(*out))
        return SHMRING_ETRUNCATED;
    return shmring__snapshot_header_check(out, length);
}

int shmring__version_map(int dir_fd, const struct stat *dir_st, uint64_t generation,
                         const void **snapshot, size_t *size)
{
    int fd;
    size_t length;
    int err = version_open(dir_fd, dir_st, generation, &fd, &length);
    if (err != 0)
        return err;
    /* The size comes from the object itself, so a mapping never extends past its
     * end; the validator then checks that the header agrees with that size. */
    /* Populated at once: the validator reads every page next, and one call maps
     * them all for less than a fault per page. */
    void *map = mmap(NULL, length, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return shmring__errno_code();
    err = shmring__snapshot_validate(map, length);
    if (err != 0) {
        munmap(map, length);
        return err;
    }
    *snapshot = map;
    *size = length;
    return 0;
}

int shmring__control_map(int dir_fd, const struct stat *dir_st,
                         const struct control_block **out, struct stat *st)
{
    int fd;
    int err = shmring__object_open(dir_fd, dir_st, CONTROL_FILE, O_RDONLY, &fd, st);
    if (err != 0)
        return err;
    /* A ring appears only once its control object is allocated in full and
     * initialized, so any other size is damage, never a creator at work. */
    if (st->st_size != CONTROL_SIZE) {
        close(fd);
        return SHMRING_ECONTROL;
    }
    void *map = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    err = map == MAP_FAILED ? shmring__errno_code() : 0;
    close(fd);
    if (err != 0)
        return err;
    err = shmring__control_check(map);
    if (err != 0) {
        munmap(map, CONTROL_SIZE);
        return err;
    }
    *out = map;
    return 0;
}

/* Unlinks NAME if it is a version other than *(uint64_t *)KEEP. */
static int unlink_version(int dir_fd, const char *name, void *keep)
{
    uint64_t gen;
    if (!shmring__is_version_file(name, &gen) || gen == *(const uint64_t *)keep ||
        unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT)
        return 0;
    return shmring__errno_code();
}

int shmring__unlink_versions(int dir_fd, uint64_t keep)
{
    return shmring__dir_each(dir_fd, unlink_version, &keep);
}
