/*
 * Control objects and version objects: their names, and mapping a version for
 * reading. Shared by the reader and the publisher.
 */
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
#include "snapshot_internal.h"

int shmring__errno_code(void)
{
    return errno > 0 ? -errno : SHMRING_EIO;
}

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
    /* "." and ".." would name directories; a dot and digits at the end would make the
     * control object's name that of another ring's version object. */
    if (strcmp(ring, ".") == 0 || strcmp(ring, "..") == 0)
        return SHMRING_EBADRING;
    size_t digits = 0;
    while (digits < len && ring[len - 1 - digits] >= '0' && ring[len - 1 - digits] <= '9')
        digits++;
    if (digits > 0 && digits < len && ring[len - 1 - digits] == '.')
        return SHMRING_EBADRING;
    return 0;
}

void shmring__control_name(const char *ring, char name[OBJECT_NAME_MAX])
{
    snprintf(name, OBJECT_NAME_MAX, "/" CONTROL_OBJECT_PREFIX "%s", ring);
}

void shmring__version_name(const char *ring, uint64_t generation,
                           char name[OBJECT_NAME_MAX])
{
    snprintf(name, OBJECT_NAME_MAX, "/" CONTROL_OBJECT_PREFIX "%s.%llu", ring,
             (unsigned long long)generation);
}

bool shmring__control_valid(const struct control_block *control)
{
    if (uatomic_read(&control->magic) != CONTROL_MAGIC)
        return false;
    /* Pairs with the creator's write barrier before it stores the magic: the fields
     * it wrote first are seen here as written. */
    cmm_smp_rmb();
    return control->format_version == CONTROL_FORMAT_VERSION &&
           control->byte_order == SNAPSHOT_BYTE_ORDER_MARK;
}

int shmring__version_map(const char *ring, uint64_t generation, uid_t owner,
                         const void **snapshot, size_t *size)
{
    char name[OBJECT_NAME_MAX];
    shmring__version_name(ring, generation, name);
    int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return shmring__errno_code();
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = shmring__errno_code();
    else if (st.st_uid != owner || (st.st_mode & 0222) != 0)
        err = SHMRING_EOWNER; /* writable: it could change after validation */
    else if (st.st_size < (off_t)sizeof(struct snapshot_header))
        err = SHMRING_ETRUNCATED;
    else if ((uint64_t)st.st_size > SIZE_MAX)
        err = SHMRING_ELIMIT;
    if (err != 0) {
        close(fd);
        return err;
    }
    /* The size comes from the object itself, so a mapping never extends past its
     * end; the validator then checks that the header agrees with that size. */
    size_t length = (size_t)st.st_size;
    void *map = mmap(NULL, length, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return shmring__errno_code();
    err = shmring_snapshot_validate(map, length);
    if (err != 0) {
        munmap(map, length);
        return err;
    }
    *snapshot = map;
    *size = length;
    return 0;
}

int shmring__control_map(const char *ring, const struct control_block **out,
                         struct stat *st)
{
    char name[OBJECT_NAME_MAX];
    shmring__control_name(ring, name);
    int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return shmring__errno_code();
    int err = 0;
    if (fstat(fd, st) != 0)
        err = shmring__errno_code();
    else if (st->st_size != CONTROL_SIZE)
        /* Size 0: a creator has not sized it yet; the ring does not exist so far. */
        err = st->st_size == 0 ? SHMRING_ENOENT : SHMRING_ECONTROL;
    void *map = MAP_FAILED;
    if (err == 0) {
        map = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
            err = shmring__errno_code();
    }
    close(fd);
    if (err != 0)
        return err;
    if (!shmring__control_valid(map)) {
        munmap(map, CONTROL_SIZE);
        /* A creator that has not finished (or died before) writing the magic. */
        return SHMRING_ENOENT;
    }
    *out = map;
    return 0;
}
