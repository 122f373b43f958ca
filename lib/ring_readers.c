/*
 * The readers census: which processes map which version of a ring, read from
 * /proc/PID/maps.
 *
 * A reader maps a version's object whole and keeps it mapped until it switches to a
 * newer one; a publisher unlinks the superseded object at once, so its memory stays
 * in use, invisible to ls, for as long as any process still maps it. The kernel
 * names such a mapping by the path the object had, followed by " (deleted)". A
 * mapping belongs to the ring when its path is DIR/shmring.RING/version.GEN, with DIR
 * resolved as the kernel prints it (no symbolic links), and its device is the ring
 * directory's: a path alone could name a file of another mount namespace.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "array_internal.h"
#include "ring_dir_internal.h"

#define DELETED_SUFFIX " (deleted)"

/* The census being built. */
struct census {
    /* "DIR/shmring.RING/version.", as /proc prints the paths of its objects. */
    char prefix[PATH_MAX + ENTRY_NAME_MAX + FILE_NAME_MAX];
    size_t prefix_len;
    unsigned dev_major;
    unsigned dev_minor;
    shmring_ring_reader_t *readers;
    size_t reader_count;
    size_t reader_capacity;
    /* One per distinct object (generation and inode) mapped by anyone. */
    struct object_use {
        uint64_t generation;
        uint64_t inode;
        bool deleted;
        uint64_t bytes;
        size_t processes;
        /* The last pid counted in PROCESSES, so a process that maps the object
         * twice counts once (processes are scanned one after the other). */
        int64_t last_pid;
    } * objects;
    size_t object_count;
    size_t object_capacity;
    size_t inspected;
    size_t hidden;
};

/*
 * Parses the path of a mapping: the generation of a version of the census's ring,
 * and whether the object was unlinked. Returns false for any other path.
 */
static bool parse_version_path(const struct census *c, const char *path,
                               uint64_t *generation, bool *deleted)
{
    if (strncmp(path, c->prefix, c->prefix_len) != 0)
        return false;
    char digits[FILE_NAME_MAX];
    const char *rest = path + c->prefix_len;
    size_t len = strlen(rest);
    size_t suffix = strlen(DELETED_SUFFIX);
    *deleted = len > suffix && strcmp(rest + len - suffix, DELETED_SUFFIX) == 0;
    if (*deleted)
        len -= suffix;
    if (len + sizeof(VERSION_PREFIX) > sizeof(digits))
        return false;
    /* shmring__is_version_file() holds the one definition of a canonical name. */
    snprintf(digits, sizeof(digits), VERSION_PREFIX "%.*s", (int)len, rest);
    return shmring__is_version_file(digits, generation);
}

/* Reads /proc/PID/comm into COMMAND ("" when it cannot be read). */
static void read_command(int proc_fd, const char *pid, char command[16])
{
    char path[32];
    command[0] = '\0';
    snprintf(path, sizeof(path), "%s/comm", pid);
    int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t got = read(fd, command, 15);
    close(fd);
    size_t len = got > 0 ? (size_t)got : 0;
    while (len > 0 && command[len - 1] == '\n')
        len--;
    command[len] = '\0';
}

/* Adds one mapping of version GENERATION (object INODE) by PID to the census. */
static int add_mapping(struct census *c, int64_t pid, const char *command,
                       uint64_t generation, uint64_t inode, bool deleted, uint64_t bytes)
{
    shmring_ring_reader_t *reader = NULL;
    for (size_t i = c->reader_count; i > 0; i--) {
        shmring_ring_reader_t *candidate = &c->readers[i - 1];
        if (candidate->pid != pid)
            break;
        /* Until census_finish(), CURRENT holds "not unlinked": an unlinked object
         * named like the current version is a destroyed ring's (see there). */
        if (candidate->generation == generation && candidate->current == !deleted)
            reader = candidate;
    }
    if (reader == NULL) {
        const shmring_ring_reader_t first = {
            .pid = pid, .generation = generation, .current = !deleted};
        reader = shmring__array_push((void **)&c->readers, &c->reader_capacity,
                                     &c->reader_count, &first, sizeof(first));
        if (reader == NULL)
            return SHMRING_ENOMEM;
        snprintf(reader->command, sizeof(reader->command), "%s", command);
    }
    reader->mapped_bytes += bytes;

    struct object_use *object = NULL;
    for (size_t i = 0; i < c->object_count && object == NULL; i++) {
        if (c->objects[i].generation == generation && c->objects[i].inode == inode)
            object = &c->objects[i];
    }
    if (object == NULL) {
        const struct object_use first = {
            .generation = generation, .inode = inode, .last_pid = -1};
        object = shmring__array_push((void **)&c->objects, &c->object_capacity,
                                     &c->object_count, &first, sizeof(first));
        if (object == NULL)
            return SHMRING_ENOMEM;
    }
    object->deleted = object->deleted || deleted;
    if (bytes > object->bytes)
        object->bytes = bytes;
    if (object->last_pid != pid) {
        object->last_pid = pid;
        object->processes++;
    }
    return 0;
}

/*
 * Reads the mappings of process PID (a name in PROC_FD). A process that is gone is
 * skipped; one that may not be inspected is counted as hidden.
 */
static int scan_process(struct census *c, int proc_fd, const char *pid_text)
{
    char path[32];
    snprintf(path, sizeof(path), "%s/maps", pid_text);
    int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
    FILE *maps = fd < 0 ? NULL : fdopen(fd, "r");
    if (maps == NULL) {
        if (fd >= 0)
            close(fd);
        else if (errno == EACCES || errno == EPERM)
            c->hidden++;
        return 0;
    }
    int64_t pid = strtoll(pid_text, NULL, 10);
    char command[16] = "";
    bool named = false;
    char *line = NULL;
    size_t capacity = 0;
    int err = 0;
    ssize_t len;
    errno = 0;
    while (err == 0 && (len = getline(&line, &capacity, maps)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        /* "START-END PERMS OFFSET MAJOR:MINOR INODE   PATH" */
        unsigned long long start, end, offset, inode;
        unsigned major_number, minor_number;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset,
                   &major_number, &minor_number, &inode, &path_at) != 7 ||
            path_at == 0 || end < start)
            continue;
        uint64_t generation;
        bool deleted;
        if (major_number != c->dev_major || minor_number != c->dev_minor ||
            !parse_version_path(c, line + path_at, &generation, &deleted))
            continue;
        if (!named) {
            read_command(proc_fd, pid_text, command);
            named = true;
        }
        err = add_mapping(c, pid, command, generation, inode, deleted, end - start);
    }
    /* Reading the maps of a process that exits meanwhile fails (ESRCH): it maps
     * nothing any more. One that may not be traced can also fail only here. */
    bool denied = err == 0 && ferror(maps) && (errno == EACCES || errno == EPERM);
    free(line);
    fclose(maps);
    if (denied)
        c->hidden++;
    else if (err == 0)
        c->inspected++;
    return err;
}

static int compare_readers(const void *a, const void *b)
{
    const shmring_ring_reader_t *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->generation < y->generation ? -1 : x->generation > y->generation;
}

static int compare_versions(const void *a, const void *b)
{
    const shmring_ring_version_use_t *x = a, *y = b;
    if (x->generation != y->generation)
        return x->generation < y->generation ? -1 : 1;
    return (int)x->current - (int)y->current;
}

/* Fills the census's prefix and device from RING's directory in DIRECTORY. */
static int census_locate(struct census *c, const char *ring,
                         const shmring_open_options_t *options)
{
    const char *directory = options != NULL ? options->directory : NULL;
    int dir_fd;
    struct stat dir_st;
    int err = shmring__ring_dir_open_trusted(
        directory, ring, shmring__trusted_extra(options), OWNER_ANY, &dir_fd, &dir_st);
    if (err != 0)
        return err;
    close(dir_fd);
    c->dev_major = major(dir_st.st_dev);
    c->dev_minor = minor(dir_st.st_dev);
    /* The kernel prints a mapping's path with every symbolic link resolved (/dev/shm
     * may be a link to /run/shm). */
    char resolved[PATH_MAX];
    if (realpath(shmring__directory(directory), resolved) == NULL)
        return shmring__errno_code();
    const char *separator = strcmp(resolved, "/") == 0 ? "" : "/";
    int len = snprintf(c->prefix, sizeof(c->prefix),
                       "%s%s" RING_ENTRY_PREFIX "%s/" VERSION_PREFIX, resolved, separator,
                       ring);
    c->prefix_len = (size_t)len;
    return 0;
}

/* Turns the census's objects into OUT's versions, with the current generation. */
static int census_finish(struct census *c, uint64_t generation,
                         shmring_ring_readers_t *out)
{
    shmring_ring_version_use_t *versions = NULL;
    if (c->object_count > 0) {
        versions = calloc(c->object_count, sizeof(*versions));
        if (versions == NULL)
            return SHMRING_ENOMEM;
    }
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < c->object_count; i++) {
        const struct object_use *object = &c->objects[i];
        shmring_ring_version_use_t *version = &versions[i];
        version->generation = object->generation;
        /* An unlinked object named like the current version is an older ring's
         * that was destroyed and re-created: superseded as well. */
        version->current = object->generation == generation && !object->deleted;
        version->processes = object->processes;
        version->bytes = object->bytes;
        if (!version->current) {
            out->superseded_versions++;
            out->superseded_bytes += object->bytes;
        }
    }
    for (size_t i = 0; i < c->reader_count; i++)
        c->readers[i].current =
            c->readers[i].current && c->readers[i].generation == generation;
    if (c->reader_count > 0)
        qsort(c->readers, c->reader_count, sizeof(*c->readers), compare_readers);
    if (versions != NULL)
        qsort(versions, c->object_count, sizeof(*versions), compare_versions);
    out->generation = generation;
    out->reader_count = c->reader_count;
    out->readers = c->reader_count > 0 ? c->readers : NULL;
    if (out->readers == NULL)
        free(c->readers);
    c->readers = NULL;
    out->version_count = c->object_count;
    out->versions = versions;
    out->processes_inspected = c->inspected;
    out->processes_hidden = c->hidden;
    return 0;
}

int shmring_ring_readers(const char *ring, const shmring_open_options_t *options,
                         shmring_ring_readers_t *out)
{
    shmring_ring_status_t status;
    int err = shmring_ring_status(ring, options, &status);
    if (err != 0)
        return err;
    struct census *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return SHMRING_ENOMEM;
    err = census_locate(c, ring, options);
    int proc_fd = -1;
    DIR *proc = NULL;
    if (err == 0) {
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        proc = proc_fd < 0 ? NULL : shmring__dir_stream(proc_fd);
        if (proc == NULL)
            err = shmring__errno_code();
    }
    struct dirent *entry;
    while (err == 0 && (entry = readdir(proc)) != NULL) {
        const char *name = entry->d_name;
        if (!isdigit((unsigned char)name[0]) ||
            strspn(name, "0123456789") != strlen(name) || strlen(name) > 10)
            continue;
        err = scan_process(c, proc_fd, name);
    }
    if (proc != NULL)
        closedir(proc);
    if (proc_fd >= 0)
        close(proc_fd);
    /* The generation after the census: a version superseded while /proc was read is
     * reported superseded, as it is by the time the caller looks. */
    if (err == 0)
        err = shmring_ring_status(ring, options, &status);
    if (err == 0)
        err = census_finish(c, status.generation, out);
    free(c->readers);
    free(c->objects);
    free(c);
    return err;
}

void shmring_ring_readers_free(shmring_ring_readers_t *readers)
{
    if (readers == NULL)
        return;
    shmring__array_release((void **)&readers->readers, &readers->reader_count);
    shmring__array_release((void **)&readers->versions, &readers->version_count);
}
