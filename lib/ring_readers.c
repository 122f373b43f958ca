/*
 * The readers census: which processes map, or hold a descriptor open on, which
 * version of a ring, read from /proc/PID/maps and /proc/PID/fd.
 *
 * A reader maps a version's object whole and keeps it mapped until it switches to a
 * newer one; a publisher unlinks the superseded object at once, so its memory stays
 * in use, invisible to ls, for as long as any process still maps it or holds a
 * descriptor on it. The kernel names such an object by the path it had, followed by
 * " (deleted)". A path DIR/shmring.RING/version.GEN (DIR resolved as the kernel
 * prints it, no symbolic links) only makes an object a candidate: a user who mounts a
 * directory of their own over the ring's path in a mount namespace of their own shows
 * the same path. So an object counts only when it is provably the ring's: the device
 * and inode of a version this census opened in the ring directory itself, or an
 * unlinked regular file of the ring's owner on the ring directory's device, as stat()
 * through /proc/PID/fd or /proc/PID/map_files shows the object itself (that stat
 * follows the kernel's reference, not a path of anyone's namespace). A process whose
 * candidates are not provably the ring's is listed apart, its bytes in no figure.
 *
 * Objects are found by device and inode in a hash table, so the census costs time
 * linear in the lines and descriptors it reads, and it reads at most
 * SHMRING_READERS_PROCESS_MAX of each per process: a larger process is reported as
 * too large to inspect, whatever it holds.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "array_internal.h"
#include "control_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_internal.h"

/* The census's fields added to the public structures took their room to grow, and no
 * more, on every platform: the structures keep their sizes and earlier offsets. */
_Static_assert(offsetof(shmring_ring_reader_t, uid) ==
                       offsetof(shmring_ring_reader_t, mapped_bytes) + 8 &&
                   sizeof(shmring_ring_reader_t) ==
                       offsetof(shmring_ring_reader_t, mapped_bytes) + 8 + 4 * 8,
               "shmring_ring_reader_t outgrew its room");
_Static_assert(offsetof(shmring_ring_readers_t, uncounted_count) ==
                       offsetof(shmring_ring_readers_t, superseded_bytes) + 8 &&
                   offsetof(shmring_ring_readers_t, stuck_processes) ==
                       offsetof(shmring_ring_readers_t, uncounted_count) + 2 * 8 &&
                   sizeof(shmring_ring_readers_t) ==
                       offsetof(shmring_ring_readers_t, superseded_bytes) + 8 + 4 * 8,
               "shmring_ring_readers_t outgrew its room");

#define DELETED_SUFFIX " (deleted)"
/* "PID/map_files/START-END" with 64-bit hexadecimal addresses, or "PID/fd/NUMBER". */
#define PROC_PATH_MAX 64
#define UID_UNKNOWN ((uint32_t)-1)

/* Whether an object is the ring's. */
enum verdict {
    VERDICT_RING,
    VERDICT_FOREIGN,
    /* A mapping whose object the caller may not stat (map_files needs CAP_SYS_ADMIN
     * or CAP_CHECKPOINT_RESTORE): the ring's for a process of the ring's owner, who
     * could change the ring anyway, foreign for anyone else's. */
    VERDICT_BY_PROCESS,
};

/* One object (device and inode) that some process maps or holds, named like a
 * version of the ring. */
struct object_use {
    uint64_t dev;
    uint64_t ino;
    uint64_t generation;
    enum verdict verdict;
    bool deleted;
    /* The largest counted mapping, or the object's size when a counted process holds
     * a descriptor on it, in whole pages. */
    uint64_t bytes;
    /* Counted processes that map or hold it. */
    size_t processes;
    /* The last counted process whose hits were committed, and its entry for this
     * object in readers: processes are scanned one after the other. */
    int64_t last_pid;
    size_t entry;
};

/* One mapping or descriptor of the process being scanned, committed to the census
 * only when the whole process could be read. */
struct hit {
    size_t object;
    uint64_t mapped_bytes;
    /* A descriptor: the object's size in whole pages (0 for a mapping). */
    uint64_t held_bytes;
    bool descriptor;
};

/* The census being built. */
struct census {
    /* "DIR/shmring.RING/version.", as /proc prints the paths of its objects. */
    char prefix[PATH_MAX + ENTRY_NAME_MAX + FILE_NAME_MAX];
    size_t prefix_len;
    int dir_fd;
    struct stat dir_st;
    /* The ring's control object, mapped: its current generation, without a system
     * call. */
    const struct control_block *control;
    /* The newest version the ring directory held when the census listed it: a linked
     * object of an older generation that is not in OBJECTS is not the ring's. */
    uint64_t listed_generation;
    uint64_t page_size;
    shmring_ring_reader_t *readers;
    size_t reader_count;
    size_t reader_capacity;
    shmring_ring_reader_t *uncounted;
    size_t uncounted_count;
    size_t uncounted_capacity;
    struct object_use *objects;
    size_t object_count;
    size_t object_capacity;
    /* Open addressing over OBJECTS: index + 1, 0 for an empty slot; a power of two
     * at least twice OBJECT_COUNT. */
    size_t *slots;
    size_t slot_count;
    struct hit *hits;
    size_t hit_count;
    size_t hit_capacity;
    size_t inspected;
    size_t hidden;
    /* The current version's snapshot format, once census_finish() read it. */
    uint32_t current_format;
};

/* The process being scanned. */
struct process {
    int64_t pid;
    const char *pid_text;
    uint32_t uid;
    char command[16];
    /* The libshmring release it maps (shmring_ring_reader_t.reader_release). */
    uint32_t release;
    bool named;
    bool too_large;
};

static size_t slot_of(const struct census *c, uint64_t dev, uint64_t ino)
{
    /* Fibonacci hashing of both keys: inodes of one tmpfs are dense small numbers. */
    uint64_t hash = (ino ^ (dev * 0x9e3779b97f4a7c15u)) * 0x9e3779b97f4a7c15u;
    return (size_t)(hash >> 32) & (c->slot_count - 1);
}

/* The index of object DEV/INO in the census, or SIZE_MAX. */
static size_t object_find(const struct census *c, uint64_t dev, uint64_t ino)
{
    if (c->slot_count == 0)
        return SIZE_MAX;
    for (size_t s = slot_of(c, dev, ino);; s = (s + 1) & (c->slot_count - 1)) {
        if (c->slots[s] == 0)
            return SIZE_MAX;
        const struct object_use *object = &c->objects[c->slots[s] - 1];
        if (object->dev == dev && object->ino == ino)
            return c->slots[s] - 1;
    }
}

/* Adds FIRST (not yet in the census) and sets *INDEX to it. Returns 0 or
 * SHMRING_ENOMEM. */
static int object_add(struct census *c, const struct object_use *first, size_t *index)
{
    if (2 * (c->object_count + 1) > c->slot_count) {
        size_t count = c->slot_count == 0 ? 64 : 2 * c->slot_count;
        size_t *slots = calloc(count, sizeof(*slots));
        if (slots == NULL)
            return SHMRING_ENOMEM;
        free(c->slots);
        c->slots = slots;
        c->slot_count = count;
        for (size_t i = 0; i < c->object_count; i++) {
            size_t s = slot_of(c, c->objects[i].dev, c->objects[i].ino);
            while (c->slots[s] != 0)
                s = (s + 1) & (c->slot_count - 1);
            c->slots[s] = i + 1;
        }
    }
    if (shmring__array_push((void **)&c->objects, &c->object_capacity, &c->object_count,
                            first, sizeof(*first)) == NULL)
        return SHMRING_ENOMEM;
    *index = c->object_count - 1;
    size_t s = slot_of(c, first->dev, first->ino);
    while (c->slots[s] != 0)
        s = (s + 1) & (c->slot_count - 1);
    c->slots[s] = *index + 1;
    return 0;
}

static uint64_t whole_pages(const struct census *c, uint64_t bytes)
{
    return (bytes + c->page_size - 1) / c->page_size * c->page_size;
}

/*
 * Parses the path of a mapping or descriptor: the generation of a version of the
 * census's ring, and whether the object was unlinked. Returns false for any other
 * path.
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

/* Whether ST, the status of an object named like a version that the census does not
 * know, is the ring's: an unlinked regular file of the ring's owner on its device (a
 * linked version of the ring is known once census_list_for() listed it). */
static enum verdict verdict_of(const struct census *c, const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_dev == c->dir_st.st_dev &&
                   st->st_uid == c->dir_st.st_uid && st->st_nlink == 0
               ? VERDICT_RING
               : VERDICT_FOREIGN;
}

/* Adds a linked version of the ring directory to the census, as the ring's. */
static int visit_version(int dir_fd, const char *name, void *data)
{
    struct census *c = data;
    uint64_t generation;
    if (!shmring__is_version_file(name, &generation))
        return 0;
    int fd;
    struct stat st;
    /* A version that is gone, or not the owner's, is not one to find. */
    if (shmring__object_open(dir_fd, &c->dir_st, name, O_RDONLY, &fd, &st) != 0)
        return 0;
    close(fd);
    if (generation > c->listed_generation)
        c->listed_generation = generation;
    if (object_find(c, (uint64_t)st.st_dev, (uint64_t)st.st_ino) != SIZE_MAX)
        return 0;
    const struct object_use first = {.dev = (uint64_t)st.st_dev,
                                     .ino = (uint64_t)st.st_ino,
                                     .generation = generation,
                                     .verdict = VERDICT_RING,
                                     .last_pid = -1};
    size_t index;
    return object_add(c, &first, &index);
}

/* Lists the ring directory, adding its versions to the census, as the ring held them
 * at generation CURRENT or later: once more for each generation published while the
 * census runs, at most. Returns 0, SHMRING_ENOMEM or a negated errno value. */
static int census_list(struct census *c, uint64_t current)
{
    int err = shmring__dir_each(c->dir_fd, visit_version, c);
    if (err == 0 && current > c->listed_generation)
        c->listed_generation = current;
    return err;
}

/*
 * For a linked object DEV/INO named like version GENERATION that the census does not
 * know: lists the ring directory again when that version may have been published
 * since it was listed (no system call otherwise, whatever a process maps), and sets
 * *INDEX to the object's, or SIZE_MAX when it is still not the ring's. Returns 0,
 * SHMRING_ENOMEM or a negated errno value.
 */
static int census_list_for(struct census *c, uint64_t dev, uint64_t ino,
                           uint64_t generation, size_t *index)
{
    *index = SIZE_MAX;
    uint64_t current = __atomic_load_n(&c->control->generation, __ATOMIC_ACQUIRE);
    if (generation <= c->listed_generation || generation > current ||
        current == CONTROL_GENERATION_DESTROYED)
        return 0;
    int err = census_list(c, current);
    if (err == 0)
        *index = object_find(c, dev, ino);
    return err;
}

/*
 * Reads P's command (/proc/PID/comm, "" when it cannot be read) and effective uid
 * (UID_UNKNOWN when it cannot be read), once, for a process with something to report.
 * The uid is the owner of the directory /proc/PID: for the directory the kernel skips
 * the dumpable check that makes root the owner of the files in it for a process that
 * changed its uid.
 */
static void read_identity(int proc_fd, struct process *p)
{
    if (p->named)
        return;
    p->named = true;
    struct stat st;
    if (fstatat(proc_fd, p->pid_text, &st, 0) == 0)
        p->uid = (uint32_t)st.st_uid;
    char path[PROC_PATH_MAX];
    snprintf(path, sizeof(path), "%s/comm", p->pid_text);
    int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, p->command, sizeof(p->command) - 1);
    if (fd >= 0)
        close(fd);
    size_t len = got > 0 ? (size_t)got : 0;
    while (len > 0 && p->command[len - 1] == '\n')
        len--;
    p->command[len] = '\0';
}

/*
 * stat() of the object behind a /proc magic link (PATH in DIR_FD), filling the fields
 * the census uses. AT_STATX_DONT_SYNC: a file system that would ask a server (a FUSE
 * server of another user's, which could take forever to answer) answers from what it
 * has. Returns 0 or the failure's errno value (never 0: a caller may take 0 to
 * mean that *ST was filled).
 */
static int object_stat(int dir_fd, const char *path, struct stat *st)
{
    struct statx stx;
    if (statx(dir_fd, path, AT_STATX_DONT_SYNC,
              STATX_TYPE | STATX_MODE | STATX_INO | STATX_UID | STATX_NLINK | STATX_SIZE,
              &stx) != 0)
        return errno != 0 ? errno : EIO;
    memset(st, 0, sizeof(*st));
    st->st_mode = stx.stx_mode;
    st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    st->st_ino = (ino_t)stx.stx_ino;
    st->st_uid = stx.stx_uid;
    st->st_nlink = stx.stx_nlink;
    st->st_size = (off_t)stx.stx_size;
    return 0;
}

static int hit_add(struct census *c, const struct hit *hit)
{
    return shmring__array_push((void **)&c->hits, &c->hit_capacity, &c->hit_count, hit,
                               sizeof(*hit)) == NULL
               ? SHMRING_ENOMEM
               : 0;
}

/* Adds an entry for P to LIST (readers or uncounted). Returns it, or NULL when
 * memory ran out. */
static shmring_ring_reader_t *entry_add(shmring_ring_reader_t **list, size_t *capacity,
                                        size_t *count, const struct process *p,
                                        uint32_t kind, uint64_t generation, bool current)
{
    shmring_ring_reader_t entry = {.pid = p->pid,
                                   .generation = generation,
                                   .current = current,
                                   .uid = p->uid,
                                   .kind = kind,
                                   .reader_release = p->release};
    snprintf(entry.command, sizeof(entry.command), "%s", p->command);
    return shmring__array_push((void **)list, capacity, count, &entry, sizeof(entry));
}

/*
 * The object of a mapping of generation GENERATION, DEV and INO as /proc/PID/maps
 * gives them (the kernel's own numbers, whatever path a mount namespace shows),
 * adding it to the census (and judging it) when it is new; SIZE_MAX when the mapping
 * is gone. Returns 0 or SHMRING_ENOMEM. Most objects are judged without a system call, so
 * that a process of many mappings costs little: on another device, not the ring's; linked
 * and older than the census's listing of the ring directory, not in it, so not the
 * ring's. Only a newer linked version costs a look into the ring directory, and an
 * unlinked object on the ring's device a stat() through /proc/PID/map_files (its owner).
 */
static int mapping_object(struct census *c, int proc_fd, const struct process *p,
                          uint64_t start, uint64_t end, uint64_t dev, uint64_t ino,
                          uint64_t generation, bool deleted, size_t *index)
{
    *index = object_find(c, dev, ino);
    if (*index != SIZE_MAX) {
        c->objects[*index].deleted = c->objects[*index].deleted || deleted;
        return 0;
    }
    struct object_use first = {.dev = dev,
                               .ino = ino,
                               .generation = generation,
                               .verdict = VERDICT_FOREIGN,
                               .deleted = deleted,
                               .last_pid = -1};
    if (dev != (uint64_t)c->dir_st.st_dev) {
        first.verdict = VERDICT_FOREIGN;
    } else if (!deleted) {
        int err = census_list_for(c, dev, ino, generation, index);
        if (err != 0 || *index != SIZE_MAX)
            return err;
        first.verdict = VERDICT_FOREIGN;
    } else {
        char path[PROC_PATH_MAX];
        snprintf(path, sizeof(path), "%s/map_files/%" PRIx64 "-%" PRIx64, p->pid_text,
                 start, end);
        /* The verdict is kept for every process that maps the object, so it is made
         * only from the object itself: a process that unmaps or replaces the mapping
         * meanwhile (to have another's superseded version judged by its failure)
         * loses this one mapping of its own from the census, nothing else. */
        struct stat st;
        int failure = object_stat(proc_fd, path, &st);
        if (failure == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino)
            first.verdict = verdict_of(c, &st);
        else if (failure == EPERM || failure == EACCES)
            first.verdict = VERDICT_BY_PROCESS;
        else
            return 0;
    }
    return object_add(c, &first, index);
}

/* Reads a hexadecimal (BASE 16) or decimal number at *AT, moving *AT past it; false
 * when there is none. The kernel writes these fields, so no more than a field's
 * digits are expected; an overflowing one is refused. */
static bool parse_number(const char **at, unsigned base, uint64_t *out)
{
    uint64_t value = 0;
    const char *s = *at;
    for (;; s++) {
        unsigned digit;
        if (*s >= '0' && *s <= '9')
            digit = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            digit = (unsigned)(*s - 'a' + 10);
        else
            break;
        if (value > (UINT64_MAX - digit) / base)
            return false;
        value = value * base + digit;
    }
    if (s == *at)
        return false;
    *at = s;
    *out = value;
    return true;
}

/* Moves *AT past the character EXPECTED; false when it is not there. */
static bool skip_char(const char **at, char expected)
{
    if (**at != expected)
        return false;
    (*at)++;
    return true;
}

/*
 * Parses one line of /proc/PID/maps, "START-END PERMS OFFSET MAJOR:MINOR INODE   PATH",
 * by hand: a scanf() of every line would cost most of a census of a process of many
 * mappings. The kernel escapes newlines in paths, so a line is one mapping.
 */
static bool parse_maps_line(const char *line, uint64_t *start, uint64_t *end,
                            uint64_t *dev, uint64_t *ino, const char **path)
{
    const char *at = line;
    uint64_t offset, major_number, minor_number;
    if (!parse_number(&at, 16, start) || !skip_char(&at, '-') ||
        !parse_number(&at, 16, end) || !skip_char(&at, ' ') || *end < *start)
        return false;
    at += strcspn(at, " ");
    if (!skip_char(&at, ' ') || !parse_number(&at, 16, &offset) || !skip_char(&at, ' ') ||
        !parse_number(&at, 16, &major_number) || !skip_char(&at, ':') ||
        !parse_number(&at, 16, &minor_number) || !skip_char(&at, ' ') ||
        !parse_number(&at, 10, ino) || major_number > UINT32_MAX ||
        minor_number > UINT32_MAX)
        return false;
    at += strspn(at, " ");
    *dev = (uint64_t)makedev((unsigned)major_number, (unsigned)minor_number);
    *path = at;
    return true;
}

/* The release of a mapped libshmring.so.MAJOR.MINOR.PATCH at PATH, as
 * shmring_ring_reader_t.reader_release spells it, or 0 for any other path. */
static uint32_t library_release(const char *path)
{
    const char *base = strrchr(path, '/');
    unsigned major, minor, patch;
    int consumed = 0;
    if (base == NULL ||
        sscanf(base, "/libshmring.so.%3u.%3u.%3u%n", &major, &minor, &patch, &consumed) !=
            3 ||
        (base[consumed] != '\0' && strcmp(base + consumed, DELETED_SUFFIX) != 0) ||
        major > 255 || minor > 255 || patch > 255)
        return 0;
    return SNAPSHOT_VERSION_CODE(major, minor, patch);
}

/* Reads P's mappings (MAPS) into the census's hits: at most
 * SHMRING_READERS_PROCESS_MAX lines and SHMRING_READERS_PROCESS_BYTES_MAX bytes, after
 * which P is too large. Returns 0 or SHMRING_ENOMEM. */
static int scan_maps(struct census *c, int proc_fd, struct process *p, FILE *maps)
{
    char *line = NULL;
    size_t capacity = 0;
    size_t lines = 0;
    uint64_t bytes = 0;
    int err = 0;
    ssize_t len;
    while (err == 0 && (len = getline(&line, &capacity, maps)) > 0) {
        bytes += (uint64_t)len;
        if (++lines > SHMRING_READERS_PROCESS_MAX ||
            bytes > SHMRING_READERS_PROCESS_BYTES_MAX) {
            p->too_large = true;
            break;
        }
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        uint64_t start, end, dev, ino, generation;
        const char *path;
        bool deleted;
        if (!parse_maps_line(line, &start, &end, &dev, &ino, &path))
            continue;
        if (p->release == 0)
            p->release = library_release(path);
        if (!parse_version_path(c, path, &generation, &deleted))
            continue;
        size_t index;
        err = mapping_object(c, proc_fd, p, start, end, dev, ino, generation, deleted,
                             &index);
        if (err == 0 && index != SIZE_MAX) {
            const struct hit hit = {.object = index, .mapped_bytes = end - start};
            err = hit_add(c, &hit);
        }
    }
    free(line);
    return err;
}

/* Reads the descriptors of P (its /proc/PID/fd, FD_DIR) into the census's hits. A
 * descriptor costs one stat() (that asks no server: see object_stat()), so that a
 * version is found whatever path the process's mount namespace gives it; only a
 * regular file of the ring directory's device that the census does not know costs a
 * readlink() as well. Returns 0 or SHMRING_ENOMEM. */
static int scan_descriptors(struct census *c, struct process *p, DIR *fd_dir)
{
    int fd_dir_fd = dirfd(fd_dir);
    size_t descriptors = 0;
    int err = 0;
    struct dirent *entry;
    while (err == 0 && (entry = readdir(fd_dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        if (++descriptors > SHMRING_READERS_PROCESS_MAX) {
            p->too_large = true;
            break;
        }
        struct stat st;
        if (object_stat(fd_dir_fd, entry->d_name, &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_dev != c->dir_st.st_dev)
            continue;
        size_t index = object_find(c, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
        uint64_t generation = 0;
        if (index == SIZE_MAX) {
            char path[PATH_MAX + sizeof(DELETED_SUFFIX)];
            ssize_t len = readlinkat(fd_dir_fd, entry->d_name, path, sizeof(path));
            bool deleted;
            /* A path that fills the buffer may have been cut: not a version's. */
            if (len <= 0 || (size_t)len >= sizeof(path))
                continue;
            path[len] = '\0';
            if (!parse_version_path(c, path, &generation, &deleted))
                continue;
            if (st.st_nlink != 0) {
                err = census_list_for(c, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
                                      generation, &index);
                if (err != 0)
                    break;
            }
        }
        if (index == SIZE_MAX) {
            const struct object_use first = {.dev = (uint64_t)st.st_dev,
                                             .ino = (uint64_t)st.st_ino,
                                             .generation = generation,
                                             .verdict = verdict_of(c, &st),
                                             .last_pid = -1};
            err = object_add(c, &first, &index);
            if (err != 0)
                break;
        }
        struct object_use *object = &c->objects[index];
        object->deleted = object->deleted || st.st_nlink == 0;
        const struct hit hit = {.object = index,
                                .held_bytes = whole_pages(c, (uint64_t)st.st_size),
                                .descriptor = true};
        err = hit_add(c, &hit);
    }
    return err;
}

/*
 * Commits the hits of P, which was read whole, to the census: one reader entry per
 * version of the ring it maps or holds, and one uncounted entry for all it maps or
 * holds that is not provably the ring's (with the lowest generation its objects are
 * named with): a process of thousands of planted objects is one line, not thousands.
 * Returns 0 or SHMRING_ENOMEM.
 */
static int commit_hits(struct census *c, int proc_fd, struct process *p)
{
    /* Whose the process is decides whether an object judged by it counts. */
    if (c->hit_count > 0)
        read_identity(proc_fd, p);
    size_t unverified = SIZE_MAX;
    for (size_t i = 0; i < c->hit_count; i++) {
        const struct hit *hit = &c->hits[i];
        struct object_use *object = &c->objects[hit->object];
        bool counted =
            object->verdict == VERDICT_RING || (object->verdict == VERDICT_BY_PROCESS &&
                                                p->uid == (uint32_t)c->dir_st.st_uid);
        shmring_ring_reader_t *entry;
        if (!counted) {
            if (unverified == SIZE_MAX) {
                if (entry_add(&c->uncounted, &c->uncounted_capacity, &c->uncounted_count,
                              p, SHMRING_READER_UNVERIFIED, object->generation,
                              false) == NULL)
                    return SHMRING_ENOMEM;
                unverified = c->uncounted_count - 1;
            }
            entry = &c->uncounted[unverified];
            if (object->generation < entry->generation)
                entry->generation = object->generation;
        } else if (object->last_pid != p->pid) {
            /* Until census_finish(), CURRENT holds "not unlinked": an unlinked object
             * named like the current version is a destroyed ring's (see there). */
            entry =
                entry_add(&c->readers, &c->reader_capacity, &c->reader_count, p,
                          SHMRING_READER_COUNTED, object->generation, !object->deleted);
            if (entry == NULL)
                return SHMRING_ENOMEM;
            object->last_pid = p->pid;
            object->entry = c->reader_count - 1;
            object->processes++;
        } else {
            entry = &c->readers[object->entry];
        }
        /* No sum overflows: the mappings of one process lie apart in its address
         * space, and it holds at most SHMRING_READERS_PROCESS_MAX descriptors. */
        entry->mapped_bytes += hit->mapped_bytes;
        entry->descriptors += hit->descriptor;
        if (!counted)
            continue;
        if (hit->mapped_bytes > object->bytes)
            object->bytes = hit->mapped_bytes;
        if (hit->held_bytes > object->bytes)
            object->bytes = hit->held_bytes;
    }
    return 0;
}

/* Whether the last call failed because the caller may not inspect the process. */
static bool denied(void)
{
    return errno == EACCES || errno == EPERM;
}

/*
 * Reads the mappings and descriptors of process PID_TEXT (a name in PROC_FD). A
 * process that is gone is skipped; one that may not be inspected is counted as
 * hidden; one too large to inspect is listed apart.
 */
static int scan_process(struct census *c, int proc_fd, const char *pid_text)
{
    char path[PROC_PATH_MAX];
    snprintf(path, sizeof(path), "%s/maps", pid_text);
    int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
    FILE *maps = fd < 0 ? NULL : fdopen(fd, "r");
    if (maps == NULL) {
        if (fd >= 0)
            close(fd);
        else if (denied())
            c->hidden++;
        return 0;
    }
    struct process p = {
        .pid = strtoll(pid_text, NULL, 10), .pid_text = pid_text, .uid = UID_UNKNOWN};
    c->hit_count = 0;
    errno = 0;
    int err = scan_maps(c, proc_fd, &p, maps);
    /* Reading the maps of a process that exits meanwhile fails (ESRCH): it maps
     * nothing any more. One that may not be traced can also fail only here. */
    bool hidden = err == 0 && !p.too_large && ferror(maps) && denied();
    fclose(maps);
    if (err == 0 && !hidden && !p.too_large) {
        snprintf(path, sizeof(path), "%s/fd", pid_text);
        fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *fd_dir = fd < 0 ? NULL : fdopendir(fd);
        if (fd_dir != NULL) {
            err = scan_descriptors(c, &p, fd_dir);
            closedir(fd_dir);
        } else if (fd >= 0) {
            close(fd);
        } else {
            hidden = denied();
        }
    }
    if (err != 0)
        return err;
    if (hidden) {
        c->hidden++;
        return 0;
    }
    c->inspected++;
    if (!p.too_large)
        return commit_hits(c, proc_fd, &p);
    read_identity(proc_fd, &p);
    return entry_add(&c->uncounted, &c->uncounted_capacity, &c->uncounted_count, &p,
                     SHMRING_READER_TOO_LARGE, 0, false) == NULL
               ? SHMRING_ENOMEM
               : 0;
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

/* Opens RING's directory in DIRECTORY, fills the census's prefix, and adds the
 * versions the directory holds. */
static int census_locate(struct census *c, const char *ring,
                         const shmring_open_options_t *options)
{
    const char *directory = options != NULL ? options->directory : NULL;
    int err =
        shmring__ring_dir_open_trusted(directory, ring, shmring__trusted_extra(options),
                                       OWNER_ANY, &c->dir_fd, &c->dir_st);
    if (err != 0)
        return err;
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
    struct stat control_st;
    err = shmring__control_map(c->dir_fd, &c->dir_st, &c->control, &control_st);
    if (err != 0)
        return err;
    return census_list(c, __atomic_load_n(&c->control->generation, __ATOMIC_ACQUIRE));
}

/* Sorts LIST by pid and generation, and hands it to *OUT (NULL when empty). */
static void hand_over(shmring_ring_reader_t **list, size_t count,
                      shmring_ring_reader_t **out)
{
    if (count > 0)
        qsort(*list, count, sizeof(**list), compare_readers);
    else
        free(*list);
    *out = count > 0 ? *list : NULL;
    *list = NULL;
}

/*
 * The oldest release that reads version GENERATION (the current one), 0 for any,
 * and its format into C->current_format: format 3 is read by every release so far;
 * format 4 from 0.4 on, or from its minimum reader; a newer format than this
 * library's by releases after this one at least.
 */
static uint32_t current_needs(struct census *c, uint64_t generation)
{
    struct snapshot_header header;
    if (generation == 0 || generation == CONTROL_GENERATION_DESTROYED)
        return 0;
    int err = shmring__version_header_read(c->dir_fd, &c->dir_st, generation, &header);
    if (err != 0 && err != SHMRING_ENEWFORMAT && err != SHMRING_EFEATURE)
        return 0;
    c->current_format = header.format_version;
    if (err != 0)
        return SNAPSHOT_VERSION_SELF + 1;
    if (header.format_version <= SNAPSHOT_FORMAT_OLDEST)
        return 0;
    return header.min_reader > SNAPSHOT_VERSION_FORMAT4 ? header.min_reader
                                                        : SNAPSHOT_VERSION_FORMAT4;
}

/* Turns the census's counted objects into OUT's versions, with the current
 * generation. */
static int census_finish(struct census *c, uint64_t generation,
                         shmring_ring_readers_t *out)
{
    size_t version_count = 0;
    for (size_t i = 0; i < c->object_count; i++)
        version_count += c->objects[i].processes > 0;
    shmring_ring_version_use_t *versions = NULL;
    if (version_count > 0) {
        versions = calloc(version_count, sizeof(*versions));
        if (versions == NULL)
            return SHMRING_ENOMEM;
    }
    memset(out, 0, sizeof(*out));
    size_t v = 0;
    for (size_t i = 0; i < c->object_count; i++) {
        const struct object_use *object = &c->objects[i];
        if (object->processes == 0)
            continue;
        shmring_ring_version_use_t *version = &versions[v++];
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
    /* The oldest release that reads the current version: a process of an older one
     * that maps an older version is stuck there. */
    uint32_t needed = current_needs(c, generation);
    for (size_t i = 0; i < c->reader_count; i++) {
        shmring_ring_reader_t *reader = &c->readers[i];
        reader->current = reader->current && reader->generation == generation;
        if (!reader->current && reader->generation < generation &&
            reader->reader_release != 0 && reader->reader_release < needed) {
            reader->stuck_format = c->current_format;
            out->stuck_processes++;
        }
    }
    if (versions != NULL)
        qsort(versions, version_count, sizeof(*versions), compare_versions);
    out->generation = generation;
    out->reader_count = c->reader_count;
    hand_over(&c->readers, c->reader_count, &out->readers);
    out->uncounted_count = c->uncounted_count;
    hand_over(&c->uncounted, c->uncounted_count, &out->uncounted);
    out->version_count = version_count;
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
    c->dir_fd = -1;
    c->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
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
    if (c->dir_fd >= 0)
        close(c->dir_fd);
    if (c->control != NULL)
        munmap((void *)c->control, CONTROL_SIZE);
    free(c->readers);
    free(c->uncounted);
    free(c->objects);
    free(c->slots);
    free(c->hits);
    free(c);
    return err;
}

void shmring_ring_readers_free(shmring_ring_readers_t *readers)
{
    if (readers == NULL)
        return;
    shmring__array_release((void **)&readers->readers, &readers->reader_count);
    shmring__array_release((void **)&readers->versions, &readers->version_count);
    shmring__array_release((void **)&readers->uncounted, &readers->uncounted_count);
}
