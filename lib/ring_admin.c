/*
 * Ring-wide operations that need no writer state: status, reading the current
 * snapshot, listing, destroying, and removing version objects.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "control_internal.h"
#include "snapshot_internal.h"

/* POSIX shared-memory objects live here on Linux (glibc's shm_open). */
#define SHM_DIRECTORY "/dev/shm"
#define OBJECT_PREFIX CONTROL_OBJECT_PREFIX

int shmring_ring_status(const char *ring, shmring_ring_status_t *out)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    const struct control_block *control;
    struct stat st;
    err = shmring__control_map(ring, &control, &st);
    if (err != 0)
        return err;
    out->generation = uatomic_read(&control->generation);
    out->publish_count = uatomic_read(&control->publish_count);
    out->publisher_pid = uatomic_read(&control->publisher_pid);
    out->published_at = uatomic_read(&control->published_at);
    out->owner = st.st_uid;
    out->mode = st.st_mode & 07777;
    munmap((void *)control, CONTROL_SIZE);
    if (out->generation == CONTROL_GENERATION_DESTROYED)
        return SHMRING_ENOENT;
    return 0;
}

int shmring_ring_snapshot(const char *ring, uint64_t *generation, void **buffer,
                          size_t *size)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    /* A writer may supersede (and unlink) the version between reading the
     * generation and opening it: read the generation again and retry. */
    for (int attempt = 0; attempt < 100; attempt++) {
        const struct control_block *control;
        struct stat st;
        err = shmring__control_map(ring, &control, &st);
        if (err != 0)
            return err;
        uint64_t gen = uatomic_read(&control->generation);
        munmap((void *)control, CONTROL_SIZE);
        if (gen == CONTROL_GENERATION_DESTROYED)
            return SHMRING_ENOENT;
        if (gen == 0) {
            *generation = 0;
            *buffer = NULL;
            *size = 0;
            return 0;
        }
        const void *map;
        size_t length;
        err = shmring__version_map(ring, gen, st.st_uid, &map, &length);
        if (err == SHMRING_ENOENT)
            continue;
        if (err != 0)
            return err;
        void *copy = malloc(length);
        if (copy != NULL)
            memcpy(copy, map, length);
        munmap((void *)map, length);
        if (copy == NULL)
            return SHMRING_ENOMEM;
        *generation = gen;
        *buffer = copy;
        *size = length;
        return 0;
    }
    return SHMRING_ESTALE;
}

/* Is ENTRY (a /dev/shm file name) a version object of RING: "shmring.RING.GEN", GEN
 * written as the publisher writes it (no leading zero, no overflow)? Only then is the
 * name shmring__version_name() gives back the entry itself. */
static bool is_version_of(const char *entry, const char *ring, uint64_t *generation)
{
    size_t prefix = strlen(OBJECT_PREFIX), ring_len = strlen(ring);
    if (strncmp(entry, OBJECT_PREFIX, prefix) != 0 ||
        strncmp(entry + prefix, ring, ring_len) != 0 || entry[prefix + ring_len] != '.')
        return false;
    const char *digits = entry + prefix + ring_len + 1;
    if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits) ||
        strlen(digits) > 20)
        return false;
    errno = 0;
    uint64_t gen = strtoull(digits, NULL, 10);
    char canonical[24];
    snprintf(canonical, sizeof(canonical), "%" PRIu64, gen);
    if (errno != 0 || strcmp(canonical, digits) != 0)
        return false;
    *generation = gen;
    return true;
}

int shmring__unlink_versions(const char *ring, uint64_t keep)
{
    DIR *dir = opendir(SHM_DIRECTORY);
    if (dir == NULL)
        return shmring__errno_code();
    int err = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        uint64_t gen;
        if (!is_version_of(entry->d_name, ring, &gen) || gen == keep)
            continue;
        char name[OBJECT_NAME_MAX];
        shmring__version_name(ring, gen, name);
        if (shm_unlink(name) != 0 && errno != ENOENT && err == 0)
            err = shmring__errno_code();
    }
    closedir(dir);
    return err;
}

int shmring_ring_destroy(const char *ring)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    char name[OBJECT_NAME_MAX];
    shmring__control_name(ring, name);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return shmring__errno_code();
    /* Wait for a writer in progress, so its version is not left behind. */
    if (flock(fd, LOCK_EX) != 0) {
        err = shmring__errno_code();
        close(fd);
        return err;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        err = shmring__errno_code();
        close(fd);
        return err;
    }
    /* Another destroy removed the object we waited on: the name may belong to a
     * ring created since, which is not ours to remove. */
    if (st.st_nlink == 0) {
        close(fd);
        return SHMRING_ENOENT;
    }
    if (st.st_size == CONTROL_SIZE) {
        struct control_block *control =
            mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (control != MAP_FAILED) {
            /* Readers still holding this control object see the generation change
             * and look the ring up by name again. */
            uatomic_set(&control->generation, CONTROL_GENERATION_DESTROYED);
            munmap(control, CONTROL_SIZE);
        }
    }
    err = shmring__unlink_versions(ring, 0);
    if (shm_unlink(name) != 0 && err == 0)
        err = shmring__errno_code();
    close(fd);
    return err;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int shmring_ring_list(char ***names, size_t *count)
{
    DIR *dir = opendir(SHM_DIRECTORY);
    if (dir == NULL)
        return shmring__errno_code();
    size_t n = 0, capacity = 8;
    char **list = malloc(capacity * sizeof(*list));
    int err = list == NULL ? SHMRING_ENOMEM : 0;
    struct dirent *entry;
    while (err == 0 && (entry = readdir(dir)) != NULL) {
        const char *ring = entry->d_name + strlen(OBJECT_PREFIX);
        if (strncmp(entry->d_name, OBJECT_PREFIX, strlen(OBJECT_PREFIX)) != 0 ||
            shmring_ring_name_check(ring) != 0)
            continue; /* not a control object: a version object or something else */
        if (n + 1 == capacity) {
            char **grown = realloc(list, capacity * 2 * sizeof(*list));
            if (grown == NULL) {
                err = SHMRING_ENOMEM;
                break;
            }
            list = grown;
            capacity *= 2;
        }
        list[n] = strdup(ring);
        if (list[n] == NULL)
            err = SHMRING_ENOMEM;
        else
            n++;
    }
    closedir(dir);
    if (err != 0) {
        if (list != NULL) {
            list[n] = NULL;
            shmring_ring_list_free(list);
        }
        return err;
    }
    qsort(list, n, sizeof(*list), compare_names);
    list[n] = NULL;
    *names = list;
    *count = n;
    return 0;
}

void shmring_ring_list_free(char **names)
{
    if (names == NULL)
        return;
    for (size_t i = 0; names[i] != NULL; i++)
        free(names[i]);
    free(names);
}
