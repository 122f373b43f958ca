/*
 * Ring-wide operations that need no writer state: status, the current version's
 * header or whole snapshot, describing what has a ring's path, listing and
 * destroying.
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

#include "array_internal.h"
#include "board_internal.h"
#include "control_internal.h"
#include "publish_internal.h"
#include "ring_admin_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_handle_internal.h"
#include "snapshot_internal.h"

/* A ring opened as a reader would open it: its directory and its control object. */
struct ring_view {
    int dir_fd;
    struct stat dir_st;
    const struct control_block *control;
    /* The control object's status: the ring's owner, group and mode. */
    struct stat control_st;
};

/*
 * Opens RING's directory as a reader with OPTIONS would (NULL: the defaults), with
 * the same trust in its owner, and maps its control object: on success the caller
 * ends with view_close().
 */
static int view_open(const char *ring, const shmring_open_options_t *options,
                     struct ring_view *v)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    err = shmring__ring_dir_open_trusted(options != NULL ? options->directory : NULL,
                                         ring, shmring__trusted_extra(options), OWNER_ANY,
                                         &v->dir_fd, &v->dir_st);
    if (err != 0)
        return err;
    err = shmring__control_map(v->dir_fd, &v->dir_st, &v->control, &v->control_st);
    if (err != 0)
        close(v->dir_fd);
    return err;
}

static void view_close(const struct ring_view *v)
{
    munmap((void *)v->control, CONTROL_SIZE);
    close(v->dir_fd);
}

/* Opens RING's view (see view_open()), calls USE(view, DATA) and closes the view.
 * Returns view_open()'s error or USE's. */
static int with_view(const char *ring, const shmring_open_options_t *options,
                     int (*use)(const struct ring_view *v, void *data), void *data)
{
    struct ring_view v;
    int err = view_open(ring, options, &v);
    if (err != 0)
        return err;
    err = use(&v, data);
    view_close(&v);
    return err;
}

/* Fills the shmring_ring_status_t at DATA from the control object (whole, reserved
 * fields included: see shmring.h's rule for public structs). */
static int view_status(const struct ring_view *v, void *data)
{
    shmring_ring_status_t *out = data;
    memset(out, 0, sizeof(*out));
    out->generation = uatomic_read(&v->control->generation);
    out->publish_count = uatomic_read(&v->control->publish_count);
    out->publisher_pid = uatomic_read(&v->control->publisher_pid);
    out->published_at = uatomic_read(&v->control->published_at);
    out->owner = v->control_st.st_uid;
    out->group = v->control_st.st_gid;
    out->mode = v->control_st.st_mode & 0777;
    return out->generation == CONTROL_GENERATION_DESTROYED ? SHMRING_ENOENT : 0;
}

/* The test hook of view_current() (see ring_admin_internal.h). */
void (*shmring__ring_read_hook)(uint64_t generation);

/*
 * Reads V's status into *STATUS and calls READ_VERSION(V, GEN, DATA) for the
 * generation GEN that this status names, so that both describe one generation. A
 * writer may supersede (and unlink) that version between the two reads: READ_VERSION
 * then fails with SHMRING_ENOENT, and both are read again, at most
 * RING_READ_ATTEMPTS times. Nothing published: STATUS's generation is 0 and
 * READ_VERSION is not called. Returns 0, SHMRING_ENOENT (destroyed), SHMRING_ESTALE
 * (a new version every time) or READ_VERSION's error.
 */
static int view_current(const struct ring_view *v,
                        int (*read_version)(const struct ring_view *v, uint64_t gen,
                                            void *data),
                        void *data, shmring_ring_status_t *status)
{
    for (int attempt = 0; attempt < RING_READ_ATTEMPTS; attempt++) {
        int err = view_status(v, status);
        cmm_smp_rmb(); /* the generation before the version it names */
        if (err != 0 || status->generation == 0)
            return err;
        if (shmring__ring_read_hook != NULL)
            shmring__ring_read_hook(status->generation);
        err = read_version(v, status->generation, data);
        if (err != SHMRING_ENOENT)
            return err;
    }
    return SHMRING_ESTALE;
}

int shmring_ring_status(const char *ring, const shmring_open_options_t *options,
                        shmring_ring_status_t *out)
{
    return with_view(ring, options, view_status, out);
}

/* Copies version GEN into a new snapshot, *(shmring_snapshot_t **)DATA. */
static int read_snapshot(const struct ring_view *v, uint64_t gen, void *data)
{
    const void *map;
    size_t length;
    int err = shmring__version_map(v->dir_fd, &v->dir_st, gen, &map, &length);
    if (err != 0)
        return err;
    /* Validated in the mapping: nobody may write a version object (the reader's
     * checks), so the copy is as valid as what was checked. */
    void *copy = malloc(length);
    if (copy != NULL)
        memcpy(copy, map, length);
    munmap((void *)map, length);
    if (copy == NULL)
        return SHMRING_ENOMEM;
    err = shmring__snapshot_adopt(copy, length, data);
    if (err != 0)
        free(copy);
    return err;
}

/* What shmring_ring_snapshot() and shmring_ring_snapshot_with_status() read. */
struct current_copy {
    shmring_ring_status_t status;
    shmring_snapshot_t *snapshot;
};

static int view_snapshot(const struct ring_view *v, void *data)
{
    struct current_copy *copy = data;
    return view_current(v, read_snapshot, &copy->snapshot, &copy->status);
}

int shmring_ring_snapshot_with_status(const char *ring,
                                      const shmring_open_options_t *options,
                                      shmring_ring_status_t *status,
                                      shmring_snapshot_t **out)
{
    struct current_copy copy = {0};
    int err = with_view(ring, options, view_snapshot, &copy);
    if (err == 0) {
        *status = copy.status;
        *out = copy.snapshot;
    }
    return err;
}

int shmring_ring_snapshot(const char *ring, const shmring_open_options_t *options,
                          uint64_t *generation, shmring_snapshot_t **out)
{
    shmring_ring_status_t status;
    int err = shmring_ring_snapshot_with_status(ring, options, &status, out);
    if (err == 0)
        *generation = status.generation;
    return err;
}

/* Reads the header of version GEN into the version of the shmring_ring_info_t at
 * DATA. */
static int read_header(const struct ring_view *v, uint64_t gen, void *data)
{
    struct snapshot_header header;
    int err = shmring__version_header_read(v->dir_fd, &v->dir_st, gen, &header);
    if (err == 0)
        shmring__snapshot_info(&header, &((shmring_ring_info_t *)data)->version);
    return err;
}

static int view_info(const struct ring_view *v, void *data)
{
    shmring_ring_info_t *info = data;
    return view_current(v, read_header, info, &info->status);
}

int shmring_ring_info(const char *ring, const shmring_open_options_t *options,
                      shmring_ring_info_t *out)
{
    shmring_ring_info_t info;
    memset(&info, 0, sizeof(info));
    int err = with_view(ring, options, view_info, &info);
    if (err == 0)
        *out = info;
    return err;
}

static const char *kind_of(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFDIR:
        return "directory";
    case S_IFREG:
        return "regular file";
    case S_IFIFO:
        return "FIFO";
    case S_IFSOCK:
        return "socket";
    case S_IFLNK:
        return "symbolic link";
    case S_IFCHR:
        return "character device";
    case S_IFBLK:
        return "block device";
    default:
        return "unknown";
    }
}

int shmring_ring_object(const char *ring, const char *directory,
                        shmring_ring_object_t *out)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    const char *path = shmring__directory(directory);
    if (path == NULL)
        return SHMRING_EBADDIR;
    memset(out, 0, sizeof(*out));
    snprintf(out->path, sizeof(out->path), "%s/" RING_ENTRY_PREFIX "%s", path, ring);
    struct stat st;
    if (fstatat(AT_FDCWD, out->path, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : shmring__errno_code();
    out->exists = true;
    out->kind = kind_of(st.st_mode);
    out->owner = st.st_uid;
    out->mode = st.st_mode & 07777;
    return 0;
}

int shmring_ring_destroy(const char *ring, const shmring_writer_options_t *options)
{
    shmring_writer_options_t defaults;
    int err = shmring__writer_call_start(ring, &options, &defaults);
    if (err != 0)
        return err;
    int base_fd;
    err = shmring__base_open(options->directory, OWNER_ANY, &base_fd);
    if (err != 0)
        return err;
    int dir_fd = -1, lock_fd = -1;
    struct stat dir_st, st;
    char entry[ENTRY_NAME_MAX], hidden[ENTRY_NAME_MAX];
    shmring__ring_entry(ring, entry);
    err = shmring__ring_dir_open(base_fd, ring, &dir_fd, &dir_st);
    if ((err == 0 || err == SHMRING_EACCES) && dir_st.st_uid != geteuid())
        err = SHMRING_EOWNER;
    /* Wait for a writer in progress, so its version is not left behind. */
    if (err == 0)
        err = shmring__object_open(dir_fd, &dir_st, LOCK_FILE, O_RDWR, &lock_fd, &st);
    if (err == 0)
        err = shmring__lock_wait(lock_fd, ring, options, &(bool){false});
    /* Another destroy removed the ring we waited on: the name may belong to a ring
     * created since, which is not ours to remove. */
    if (err == 0 && !shmring__entry_is(base_fd, entry, &dir_st))
        err = SHMRING_ENOENT;
    /* One rename takes the whole ring away: readers and writers that look it up
     * from now on find nothing, and a failure here leaves the ring as it was. A
     * hidden name another user happened to take is drawn again. */
    for (int attempt = 0; err == 0; attempt++) {
        err = shmring__hidden_entry(REMOVING_PREFIX, ring, hidden);
        if (err == 0 && renameat2(base_fd, entry, base_fd, hidden, RENAME_NOREPLACE) != 0)
            err = shmring__errno_code();
        if (err != SHMRING_EEXIST || attempt == 3)
            break;
        err = 0;
    }
    if (err == 0) {
        PUBLISH_HOOK(PUBLISH_STEP_DESTROY_RENAMED);
        /* Readers still holding the control object see the generation change and
         * look the ring up by name again. */
        shmring__mark_destroyed(dir_fd, &dir_st);
        PUBLISH_HOOK(PUBLISH_STEP_DESTROY_MARKED);
        /* The load board is no file of the directory: a System V segment outlives
         * it unless removed (workers that attached it keep it until they detach). */
        const struct control_block *control;
        if (shmring__control_map(dir_fd, &dir_st, &control, &st) == 0) {
            shmring__board_remove_of(control);
            munmap((void *)control, CONTROL_SIZE);
        }
        /* The ring is gone; what remains is only storage to free (a sweeper frees
         * it if we die here), so a failure to free it is not reported. */
        shmring__ring_dir_remove(base_fd, hidden, dir_fd);
    }
    if (lock_fd >= 0)
        close(lock_fd);
    if (dir_fd >= 0)
        close(dir_fd);
    close(base_fd);
    return err;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int shmring_ring_list(const char *directory, char ***names, size_t *count)
{
    const char *path = shmring__directory(directory);
    if (path == NULL)
        return SHMRING_EBADDIR;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    if (dir == NULL) {
        int err = shmring__errno_code();
        if (fd >= 0)
            close(fd);
        return err;
    }
    /* Room for the names and the NULL after them: N + 1 below the capacity. */
    size_t n = 0, capacity = 0;
    char **list = NULL;
    int err = shmring__array_reserve((void **)&list, &capacity, n + 1, sizeof(*list));
    struct dirent *entry;
    size_t prefix = strlen(RING_ENTRY_PREFIX);
    while (err == 0 && (entry = readdir(dir)) != NULL) {
        const char *ring = entry->d_name + prefix;
        if (strncmp(entry->d_name, RING_ENTRY_PREFIX, prefix) != 0 ||
            shmring_ring_name_check(ring) != 0)
            continue;
        err = shmring__array_reserve((void **)&list, &capacity, n + 1, sizeof(*list));
        if (err != 0)
            break;
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
