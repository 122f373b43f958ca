/*
 * Ring directories: names, opening with the checks a shared directory needs, the
 * writers' lock, and removing directories whole. See ring_dir_internal.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>
#include <urcu/uatomic.h>

#include "control_internal.h"
#include "ring_dir_internal.h"

/* Flags of every open: never follow a link planted at the name, never block on a
 * FIFO, never leak the descriptor into a program the caller runs. */
#define SAFE_OPEN_FLAGS (O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

int shmring__errno_code(void)
{
    return errno > 0 ? -errno : SHMRING_EIO;
}

DIR *shmring__dir_stream(int dir_fd)
{
    int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    DIR *dir = fdopendir(fd);
    if (dir == NULL) {
        int saved = errno;
        close(fd);
        errno = saved;
    }
    return dir;
}

const char *shmring__directory(const char *directory)
{
    if (directory == NULL)
        return SHMRING_DEFAULT_DIRECTORY;
    /* Relative paths would follow the caller's working directory from one refresh
     * to the next. */
    size_t len = strnlen(directory, SHMRING_DIRECTORY_MAX + 1);
    return len == 0 || len > SHMRING_DIRECTORY_MAX || directory[0] != '/' ? NULL
                                                                          : directory;
}

void shmring__ring_entry(const char *ring, char entry[ENTRY_NAME_MAX])
{
    snprintf(entry, ENTRY_NAME_MAX, RING_ENTRY_PREFIX "%s", ring);
}

void shmring__version_file(uint64_t generation, char name[FILE_NAME_MAX])
{
    snprintf(name, FILE_NAME_MAX, VERSION_PREFIX "%" PRIu64, generation);
}

/* Parses DIGITS as a canonical decimal number: no sign, no leading zero, no
 * overflow, nothing after it. */
static bool parse_canonical(const char *digits, uint64_t *value)
{
    size_t len = strlen(digits);
    if (len == 0 || len > 20 || strspn(digits, "0123456789") != len)
        return false;
    errno = 0;
    uint64_t number = strtoull(digits, NULL, 10);
    char canonical[24];
    snprintf(canonical, sizeof(canonical), "%" PRIu64, number);
    if (errno != 0 || strcmp(canonical, digits) != 0)
        return false;
    *value = number;
    return true;
}

bool shmring__is_version_file(const char *entry, uint64_t *generation)
{
    size_t prefix = strlen(VERSION_PREFIX);
    return strncmp(entry, VERSION_PREFIX, prefix) == 0 &&
           parse_canonical(entry + prefix, generation);
}

uid_t shmring__trusted_extra(const shmring_open_options_t *options)
{
    return options != NULL && options->trusted_owner != 0 ? options->trusted_owner
                                                          : OWNER_ANY;
}

bool shmring__owner_trusted(uid_t owner, uid_t extra)
{
    return owner == 0 || owner == geteuid() || (extra != OWNER_ANY && owner == extra);
}

/*
 * Whether FD is a directory of a kernel filesystem that shows the kernel's state
 * rather than holding files (procfs, sysfs, cgroups, ...): its owner and mode pass
 * every check, but nobody can make a ring in it, so "no such ring" there would
 * blame the ring for the directory. Any filesystem that holds ordinary files is
 * accepted (rings are best kept on a tmpfs, but a disk works, only slower).
 */
static bool on_kernel_filesystem(int fd)
{
    static const unsigned long kernel_filesystems[] = {
        PROC_SUPER_MAGIC, SYSFS_MAGIC,    CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC,
        DEBUGFS_MAGIC,    TRACEFS_MAGIC,  SECURITYFS_MAGIC,   DEVPTS_SUPER_MAGIC,
        BPF_FS_MAGIC,     PSTOREFS_MAGIC, EFIVARFS_MAGIC,     SELINUX_MAGIC,
        SMACK_MAGIC,      NSFS_MAGIC,     BINFMTFS_MAGIC,
    };
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0)
        return false; /* the checks that follow decide */
    for (size_t i = 0; i < sizeof(kernel_filesystems) / sizeof(kernel_filesystems[0]);
         i++)
        if ((unsigned long)fs.f_type == kernel_filesystems[i])
            return true;
    return false;
}

int shmring__base_open(const char *directory, uid_t extra, int *out)
{
    const char *path = shmring__directory(directory);
    if (path == NULL)
        return SHMRING_EBADDIR;
    /* The administrator's path may go through symbolic links (/dev/shm is one on some
     * systems); only names inside it are treated as hostile. */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        /* The directory's own ENOENT must not read as "no such ring". */
        return errno == ENOENT ? SHMRING_ENODIR : shmring__errno_code();
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = shmring__errno_code();
    else if (on_kernel_filesystem(fd))
        err = SHMRING_ENOTRINGDIR;
    else if (!shmring__owner_trusted(st.st_uid, extra))
        err = SHMRING_EBASEOWNER;
    /* Without the sticky bit, whoever may write the directory may also rename or
     * remove another user's ring in it. */
    else if ((st.st_mode & 0022) != 0 && (st.st_mode & S_ISVTX) == 0)
        err = SHMRING_EBASEDIR;
    if (err != 0) {
        close(fd);
        return err;
    }
    *out = fd;
    return 0;
}

int shmring__ring_dir_open(int base_fd, const char *ring, int *out, struct stat *st)
{
    char entry[ENTRY_NAME_MAX];
    shmring__ring_entry(ring, entry);
    int fd = openat(base_fd, entry, O_RDONLY | O_DIRECTORY | SAFE_OPEN_FLAGS);
    if (fd < 0) {
        /* A file, FIFO, socket or device (ENOTDIR) or a symbolic link (ELOOP) has
         * the ring's name: never a ring, whoever made it. */
        if (errno == ENOTDIR || errno == ELOOP)
            return SHMRING_ENOTRING;
        int err = shmring__errno_code();
        /* A directory we may not enter: *st says whose it is, so that callers can
         * tell another user's squat from a ring they may not read. */
        if (err == SHMRING_EACCES &&
            fstatat(base_fd, entry, st, AT_SYMLINK_NOFOLLOW) != 0)
            err = shmring__errno_code();
        return err;
    }
    int err = 0;
    if (fstat(fd, st) != 0)
        err = shmring__errno_code();
    else if ((st->st_mode & 0022) != 0)
        err = SHMRING_EOWNER; /* others could replace what is inside */
    if (err != 0) {
        close(fd);
        return err;
    }
    *out = fd;
    return 0;
}

int shmring__ring_dir_open_trusted(const char *directory, const char *ring, uid_t extra,
                                   uid_t owner, int *out, struct stat *st)
{
    int base_fd;
    int err = shmring__base_open(directory, extra, &base_fd);
    if (err != 0)
        return err;
    int fd;
    err = shmring__ring_dir_open(base_fd, ring, &fd, st);
    close(base_fd);
    if (err == SHMRING_EACCES && !shmring__owner_trusted(st->st_uid, extra))
        return SHMRING_EOWNER;
    if (err != 0)
        return err;
    if (!shmring__owner_trusted(st->st_uid, extra) ||
        (owner != OWNER_ANY && st->st_uid != owner)) {
        close(fd);
        return SHMRING_EOWNER;
    }
    *out = fd;
    return 0;
}

int shmring__object_open(int dir_fd, const struct stat *dir_st, const char *name,
                         int flags, int *out, struct stat *st)
{
    int fd = openat(dir_fd, name, flags | SAFE_OPEN_FLAGS);
    if (fd < 0)
        return errno == ELOOP ? SHMRING_ENOTRING : shmring__errno_code();
    int err = 0;
    if (fstat(fd, st) != 0)
        err = shmring__errno_code();
    else if (!S_ISREG(st->st_mode))
        err = SHMRING_ENOTRING;
    else if (st->st_uid != dir_st->st_uid || (st->st_mode & 0022) != 0)
        err = SHMRING_EOWNER;
    if (err != 0) {
        close(fd);
        return err;
    }
    *out = fd;
    return 0;
}

bool shmring__entry_is(int base_fd, const char *entry, const struct stat *dir_st)
{
    struct stat now;
    return fstatat(base_fd, entry, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
           now.st_dev == dir_st->st_dev && now.st_ino == dir_st->st_ino;
}

/* A tag of this process's pid namespace (the low 32 bits of its inode), 0 when
 * /proc cannot tell: a pid in a hidden name is only meaningful to kill() in the
 * namespace it came from. */
static uint32_t pid_namespace_tag(void)
{
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) != 0)
        return 0;
    return (uint32_t)st.st_ino;
}

int shmring__hidden_entry(const char *prefix, const char *ring,
                          char entry[ENTRY_NAME_MAX])
{
    /* The name must be unguessable, not secret: never wait for the entropy pool
     * (early at boot), fall back to the clock. */
    uint32_t random;
    if (getrandom(&random, sizeof(random), GRND_NONBLOCK) != (ssize_t)sizeof(random)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        random = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u;
    }
    snprintf(entry, ENTRY_NAME_MAX, "%s%s.%ld.%08" PRIx32 "%08" PRIx32, prefix, ring,
             (long)getpid(), pid_namespace_tag(), random);
    return 0;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int shmring__lock_wait(int lock_fd, const char *ring,
                       const shmring_writer_options_t *options, bool *announced)
{
    if (flock(lock_fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    if (errno != EWOULDBLOCK)
        return shmring__errno_code();
    if (options->wait_ms == 0)
        return SHMRING_EBUSY;
    if (options->on_wait != NULL && !*announced)
        options->on_wait(ring, options->on_wait_data);
    *announced = true;
    if (options->wait_ms < 0) {
        while (flock(lock_fd, LOCK_EX) != 0)
            if (errno != EINTR)
                return shmring__errno_code();
        return 0;
    }
    /* flock() has no timeout: poll, from 1 ms doubling to 50 ms between tries. */
    int64_t deadline = monotonic_ms() + options->wait_ms;
    long pause_ms = 1;
    for (;;) {
        int64_t left = deadline - monotonic_ms();
        if (left <= 0)
            return SHMRING_EBUSY;
        long pause = pause_ms < left ? pause_ms : (long)left;
        struct timespec ts = {pause / 1000, (pause % 1000) * 1000000};
        nanosleep(&ts, NULL);
        if (flock(lock_fd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK)
            return shmring__errno_code();
        pause_ms = pause_ms * 2 > 50 ? 50 : pause_ms * 2;
    }
}

/* Deepest directory tree remove_contents() descends into. */
#define REMOVE_DEPTH_MAX 16

int shmring__dir_each(int dir_fd, int (*visit)(int dir_fd, const char *name, void *data),
                      void *data)
{
    DIR *dir = shmring__dir_stream(dir_fd);
    if (dir == NULL)
        return shmring__errno_code();
    int err = 0;
    struct dirent *item;
    while ((item = readdir(dir)) != NULL) {
        if (strcmp(item->d_name, ".") == 0 || strcmp(item->d_name, "..") == 0)
            continue;
        int visited = visit(dir_fd, item->d_name, data);
        if (err == 0)
            err = visited;
    }
    closedir(dir);
    return err;
}

/* What remove_contents() keeps, and how deep it is. */
struct removal {
    const char *keep;
    int depth;
};

static int remove_entry(int dir_fd, const char *name, void *data);

/*
 * Removes everything in the directory DIR_FD but the entry KEEP (NULL: none). Only
 * the ring's owner can have put anything in a ring's directory, but the owner may
 * have made subdirectories; they are entered without following links, to a bounded
 * depth. Returns 0 or the first negated errno value.
 */
static int remove_contents(int dir_fd, const char *keep, int depth)
{
    struct removal removal = {.keep = keep, .depth = depth};
    return shmring__dir_each(dir_fd, remove_entry, &removal);
}

static int remove_entry(int dir_fd, const char *name, void *data)
{
    const struct removal *removal = data;
    if ((removal->keep != NULL && strcmp(name, removal->keep) == 0) ||
        unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR || removal->depth >= REMOVE_DEPTH_MAX)
        return shmring__errno_code();
    int sub_fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | SAFE_OPEN_FLAGS);
    int err = sub_fd < 0 ? shmring__errno_code()
                         : remove_contents(sub_fd, NULL, removal->depth + 1);
    if (sub_fd >= 0)
        close(sub_fd);
    if (err == 0 && unlinkat(dir_fd, name, AT_REMOVEDIR) != 0)
        err = shmring__errno_code();
    return err;
}

int shmring__ring_dir_remove(int base_fd, const char *entry, int dir_fd)
{
    int err = remove_contents(dir_fd, LOCK_FILE, 0);
    /* The lock goes last: while it exists, a sweeper sees it held and keeps away. */
    if (unlinkat(dir_fd, LOCK_FILE, 0) != 0 && errno != ENOENT && err == 0)
        err = shmring__errno_code();
    if (unlinkat(base_fd, entry, AT_REMOVEDIR) != 0 && err == 0)
        err = shmring__errno_code();
    return err;
}

/* Whether ENTRY is PREFIX RING.PID.TAGRANDOM as shmring__hidden_entry() writes it;
 * fills *pid and *tag (the creator's pid namespace tag). */
static bool is_hidden_entry_of(const char *entry, const char *prefix, const char *ring,
                               pid_t *pid, uint32_t *tag)
{
    size_t prefix_len = strlen(prefix), ring_len = strlen(ring);
    if (strncmp(entry, prefix, prefix_len) != 0 ||
        strncmp(entry + prefix_len, ring, ring_len) != 0 ||
        entry[prefix_len + ring_len] != '.')
        return false;
    const char *rest = entry + prefix_len + ring_len + 1;
    const char *dot = strchr(rest, '.');
    if (dot == NULL || strlen(dot + 1) != 16 ||
        strspn(dot + 1, "0123456789abcdef") != 16 || (size_t)(dot - rest) > 10)
        return false;
    char digits[12];
    memcpy(digits, rest, (size_t)(dot - rest));
    digits[dot - rest] = '\0';
    uint64_t value;
    if (!parse_canonical(digits, &value) || value == 0 || value > INT32_MAX)
        return false;
    *pid = (pid_t)value;
    char tag_digits[9];
    memcpy(tag_digits, dot + 1, 8);
    tag_digits[8] = '\0';
    *tag = (uint32_t)strtoul(tag_digits, NULL, 16);
    return true;
}

void shmring__mark_destroyed(int dir_fd, const struct stat *dir_st)
{
    int fd;
    struct stat st;
    if (shmring__object_open(dir_fd, dir_st, CONTROL_FILE, O_RDWR, &fd, &st) != 0)
        return;
    if (st.st_size == CONTROL_SIZE) {
        struct control_block *control =
            mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (control != MAP_FAILED) {
            uatomic_set(&control->generation, CONTROL_GENERATION_DESTROYED);
            munmap(control, CONTROL_SIZE);
        }
    }
    close(fd);
}

/* How long a hidden directory of a process in another pid namespace (whose pid
 * kill() cannot check) must have been left unchanged before it counts as abandoned. */
#define FOREIGN_GRACE_SECONDS 60

/*
 * Whether the process that made a hidden directory (PID, of the namespace TAG; the
 * directory's status DIR_ST) is gone. In our own pid namespace kill() tells; from
 * another one only time can: a directory nobody changed for a minute is abandoned.
 */
static bool maker_gone(pid_t pid, uint32_t tag, const struct stat *dir_st)
{
    uint32_t own = pid_namespace_tag();
    if (own != 0 && tag == own)
        return kill(pid, 0) != 0 && errno == ESRCH;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec - dir_st->st_ctim.tv_sec > FOREIGN_GRACE_SECONDS;
}

/*
 * Removes BASE_FD's hidden ENTRY if the process that worked on it is gone and its
 * lock (if it has one yet) is free: creators and destroyers hold the ring's lock for
 * as long as they work on the directory. The leftover is first claimed by renaming
 * it to a hidden name of ours, under its lock, and removed only if the claimed entry
 * is the directory inspected: a creator that revealed its ring meanwhile took the
 * directory away from the hidden name, so a live ring is never emptied.
 */
static void sweep_one(int base_fd, const char *ring, const char *entry, pid_t pid,
                      uint32_t tag)
{
    int dir_fd = openat(base_fd, entry, O_RDONLY | O_DIRECTORY | SAFE_OPEN_FLAGS);
    if (dir_fd < 0)
        return;
    struct stat dir_st;
    if (fstat(dir_fd, &dir_st) != 0 || dir_st.st_uid != geteuid() ||
        !maker_gone(pid, tag, &dir_st)) {
        close(dir_fd);
        return;
    }
    int lock_fd = -1;
    struct stat lock_st;
    int err =
        shmring__object_open(dir_fd, &dir_st, LOCK_FILE, O_RDWR, &lock_fd, &lock_st);
    bool free_to_take =
        err == SHMRING_ENOENT || (err == 0 && flock(lock_fd, LOCK_EX | LOCK_NB) == 0);
    char claimed[ENTRY_NAME_MAX];
    if (free_to_take && shmring__hidden_entry(REMOVING_PREFIX, ring, claimed) == 0 &&
        renameat2(base_fd, entry, base_fd, claimed, RENAME_NOREPLACE) == 0) {
        if (shmring__entry_is(base_fd, claimed, &dir_st)) {
            shmring__mark_destroyed(dir_fd, &dir_st);
            shmring__ring_dir_remove(base_fd, claimed, dir_fd);
        } else {
            /* Not what we inspected: give the name back. */
            renameat2(base_fd, claimed, base_fd, entry, RENAME_NOREPLACE);
        }
    }
    if (lock_fd >= 0)
        close(lock_fd);
    close(dir_fd);
}

void shmring__sweep_leftovers(int base_fd, const char *ring)
{
    DIR *dir = shmring__dir_stream(base_fd);
    if (dir == NULL)
        return;
    struct dirent *item;
    while ((item = readdir(dir)) != NULL) {
        pid_t pid;
        uint32_t tag;
        if (is_hidden_entry_of(item->d_name, CREATING_PREFIX, ring, &pid, &tag) ||
            is_hidden_entry_of(item->d_name, REMOVING_PREFIX, ring, &pid, &tag))
            sweep_one(base_fd, ring, item->d_name, pid, tag);
    }
    closedir(dir);
}
