/*
 * The publisher: RCU-style versioned swaps in shared memory.
 *
 * A writer holds flock() on the control object for as long as it is open, so writers
 * are serialized. To publish, it writes the new snapshot whole into a new object
 * /shmring.RING.GEN (created with O_EXCL and sized in full with posix_fallocate, so
 * a full /dev/shm fails now rather than with SIGBUS later), then stores GEN into the
 * control object, then unlinks the superseded object. The kernel keeps an unlinked
 * object alive while any reader maps it, which makes the kernel the cross-process
 * grace period: no reader can hold a writer up, and no writer can tear a reader's
 * view. A writer killed at any instant leaves the old or the new generation current;
 * the next writer removes what it left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/uatomic.h>

#include "control_internal.h"
#include "publish_internal.h"
#include "snapshot_internal.h"

#define DEFAULT_MODE 0644

void (*shmring__publish_hook)(enum publish_step step);

struct shmring_writer {
    char ring[SHMRING_RING_NAME_MAX + 1];
    int control_fd;
    struct control_block *control;
    uid_t owner;
    gid_t group;
    mode_t mode;
    uint64_t generation;
    /* The current version, mapped on demand by shmring_writer_snapshot(). */
    const void *snapshot;
    size_t snapshot_size;
};

/* Initializes a control object this writer has locked: fields first, magic last, so
 * that a reader that sees the magic sees the rest. */
static void control_initialize(struct control_block *control)
{
    control->format_version = CONTROL_FORMAT_VERSION;
    control->byte_order = SNAPSHOT_BYTE_ORDER_MARK;
    uatomic_set(&control->generation, 0);
    control->publish_count = 0;
    control->publisher_pid = 0;
    control->published_at = 0;
    cmm_smp_wmb();
    PUBLISH_HOOK(PUBLISH_STEP_CONTROL_BEFORE_MAGIC);
    uatomic_set(&control->magic, CONTROL_MAGIC);
}

/* Opens (or creates) the control object and takes the writer lock on it. */
static int control_open_locked(shmring_writer_t *w, unsigned flags,
                               const shmring_create_options_t *options)
{
    char name[OBJECT_NAME_MAX];
    shmring__control_name(w->ring, name);
    mode_t mode = options ? options->mode : DEFAULT_MODE;
    bool created = false;

    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0 && errno == ENOENT && (flags & SHMRING_WRITER_CREATE)) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        created = fd >= 0;
        if (created)
            PUBLISH_HOOK(PUBLISH_STEP_CONTROL_CREATED);
        if (fd < 0 && errno == EEXIST) {
            /* Another creator won the race: an exclusive creator has lost. */
            if (flags & SHMRING_WRITER_EXCL)
                return SHMRING_EEXIST;
            fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
        }
    } else if (fd >= 0 && (flags & SHMRING_WRITER_CREATE) &&
               (flags & SHMRING_WRITER_EXCL)) {
        close(fd);
        return SHMRING_EEXIST;
    }
    if (fd < 0)
        return shmring__errno_code();

    int err = 0;
    /* The lock is taken before the object is initialized, so that nobody else sees
     * a half-made control object as a usable one. */
    if (flock(fd, LOCK_EX) != 0)
        err = shmring__errno_code();
    struct stat st;
    if (err == 0 && fstat(fd, &st) != 0)
        err = shmring__errno_code();
    /* Still empty: new, or its creator died before sizing it. Whoever sizes it gives
     * it the mode and group asked for: shm_open's mode is filtered by the umask; the
     * ring's mode must not be. */
    if (err == 0 && st.st_size == 0 && (flags & SHMRING_WRITER_CREATE)) {
        if (fchmod(fd, mode) != 0 ||
            (options && options->group != (gid_t)-1 &&
             fchown(fd, (uid_t)-1, options->group) != 0) ||
            ftruncate(fd, CONTROL_SIZE) != 0 || fstat(fd, &st) != 0)
            err = shmring__errno_code();
    }
    if (err == 0 && st.st_size != CONTROL_SIZE)
        err = st.st_size == 0 ? 0 : SHMRING_ECONTROL;
    if (err == 0 && st.st_size == 0 && ftruncate(fd, CONTROL_SIZE) != 0)
        err = shmring__errno_code();
    void *map = MAP_FAILED;
    if (err == 0) {
        map = mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
            err = shmring__errno_code();
    }
    if (err != 0) {
        /* Remove what we created, unless another writer has sized (and so taken
         * over) the object since: that ring is theirs now. */
        struct stat now;
        if (created && fstat(fd, &now) == 0 && now.st_size == 0)
            shm_unlink(name);
        close(fd);
        return err;
    }
    struct control_block *control = map;
    if (uatomic_read(&control->magic) == 0) {
        /* New, or its creator died before finishing: we hold the lock, so finish.
         * Not `created`: another writer may have finished it between our O_EXCL and
         * our lock, and published into it. */
        control_initialize(control);
    } else if (!shmring__control_valid(control)) {
        munmap(map, CONTROL_SIZE);
        close(fd);
        return SHMRING_ECONTROL;
    }
    w->control_fd = fd;
    w->control = control;
    w->owner = st.st_uid;
    w->group = st.st_gid;
    w->mode = st.st_mode & 07777;
    return 0;
}

static void writer_release_control(shmring_writer_t *w)
{
    if (w->control != NULL)
        munmap(w->control, CONTROL_SIZE);
    if (w->control_fd >= 0)
        close(w->control_fd); /* also releases the flock */
    w->control = NULL;
    w->control_fd = -1;
}

int shmring_writer_open(const char *ring, unsigned flags,
                        const shmring_create_options_t *options, shmring_writer_t **out)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    /* Shared memory is never executed, and a setuid or world-anything bit beyond
     * read and write would only mislead: such modes are refused, not masked. */
    if (options != NULL && (options->mode & ~(mode_t)0666) != 0)
        return SHMRING_EINVAL;
    shmring_writer_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return SHMRING_ENOMEM;
    strcpy(w->ring, ring);
    w->control_fd = -1;

    /* A ring destroyed while we waited for its lock is gone: open it again by name
     * (which creates a new one if we may). */
    for (int attempt = 0;; attempt++) {
        err = control_open_locked(w, flags, options);
        if (err != 0)
            break;
        PUBLISH_HOOK(PUBLISH_STEP_OPEN_LOCKED);
        uint64_t gen = uatomic_read(&w->control->generation);
        if (gen != CONTROL_GENERATION_DESTROYED) {
            w->generation = gen;
            break;
        }
        writer_release_control(w);
        if (attempt == 10) {
            err = SHMRING_ESTALE;
            break;
        }
    }
    if (err == 0) {
        /* Objects a killed writer left behind: a version it created but never
         * published, or the one it superseded but did not unlink yet. */
        err = shmring__unlink_versions(ring, w->generation);
        PUBLISH_HOOK(PUBLISH_STEP_OPEN_CLEANED);
    }
    if (err != 0) {
        writer_release_control(w);
        free(w);
        return err;
    }
    *out = w;
    return 0;
}

static void writer_unmap_snapshot(shmring_writer_t *w)
{
    if (w->snapshot != NULL)
        munmap((void *)w->snapshot, w->snapshot_size);
    w->snapshot = NULL;
    w->snapshot_size = 0;
}

void shmring_writer_close(shmring_writer_t *w)
{
    if (w == NULL)
        return;
    writer_unmap_snapshot(w);
    writer_release_control(w);
    free(w);
}

uint64_t shmring_writer_generation(const shmring_writer_t *w)
{
    return w->generation;
}

int shmring_writer_snapshot(shmring_writer_t *w, const void **buffer, size_t *size)
{
    if (w->generation == 0)
        return SHMRING_ENOENT;
    if (w->snapshot == NULL) {
        int err = shmring__version_map(w->ring, w->generation, w->owner, &w->snapshot,
                                       &w->snapshot_size);
        if (err != 0)
            return err;
    }
    *buffer = w->snapshot;
    *size = w->snapshot_size;
    return 0;
}

int shmring_writer_nodeset(shmring_writer_t *w, shmring_nodeset_t **out)
{
    if (w->generation == 0)
        return shmring_nodeset_new(out);
    const void *buffer;
    size_t size;
    int err = shmring_writer_snapshot(w, &buffer, &size);
    if (err != 0)
        return err;
    return shmring_nodeset_from_snapshot(buffer, out);
}

/* Writes bytes FROM to SIZE of BUFFER to FD at the same offsets. */
static int write_all(int fd, const unsigned char *buffer, size_t from, size_t size)
{
    size_t done = from;
    while (done < size) {
        ssize_t n = pwrite(fd, buffer + done, size - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? shmring__errno_code() : SHMRING_EIO;
        done += (size_t)n;
    }
    return 0;
}

/* Creates version object NAME holding BUFFER, owned and permitted like the control
 * object, so that readers (who check the owner) accept it. */
static int version_create(const shmring_writer_t *w, const char *name, const void *buffer,
                          size_t size)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return shmring__errno_code();
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_CREATED);
    int err = 0;
    if (geteuid() != w->owner) {
        /* Publishing into another user's ring (as root, or through a group-writable
         * control object): hand the version to the ring's owner, or readers would
         * refuse it. Only a privileged writer can. */
        if (fchown(fd, w->owner, w->group) != 0)
            err = SHMRING_EPERM;
    } else if (fchown(fd, (uid_t)-1, w->group) != 0 && errno != EPERM) {
        err = shmring__errno_code();
    }
    /* Read bits only, even for the owner: readers validate a version once and then
     * trust it, so nobody may change it afterwards (our descriptor, opened for
     * writing before this, still writes it). */
    if (err == 0 && fchmod(fd, w->mode & 0444) != 0)
        err = shmring__errno_code();
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_OWNED);
    if (err == 0) {
        int rc = posix_fallocate(fd, 0, (off_t)size);
        if (rc != 0)
            err = rc == ENOSPC ? SHMRING_ENOSPC : -rc;
    }
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_SIZED);
    if (err == 0)
        err = write_all(fd, buffer, 0, size / 2);
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_HALF_WRITTEN);
    if (err == 0)
        err = write_all(fd, buffer, size / 2, size);
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_WRITTEN);
    close(fd);
    if (err != 0)
        shm_unlink(name);
    return err;
}

int shmring_writer_publish(shmring_writer_t *w, const shmring_nodeset_t *set,
                           uint64_t *generation)
{
    /* The last generation number marks a destroyed ring: never publish it. */
    uint64_t next = w->generation + 1;
    if (next == CONTROL_GENERATION_DESTROYED)
        return SHMRING_ELIMIT;
    void *buffer;
    size_t size;
    int err = shmring_snapshot_build(set, &buffer, &size);
    if (err != 0)
        return err;

    char name[OBJECT_NAME_MAX];
    shmring__version_name(w->ring, next, name);
    err = version_create(w, name, buffer, size);
    free(buffer);
    if (err != 0)
        return err;

    /*
     * Publish. The version's bytes reached the object through pwrite() system calls
     * that completed above, so they are visible to any process that opens the object
     * after seeing GEN. The full barrier orders those writes before the generation
     * store (a release store), pairing with the reader's acquire load of the
     * generation; uatomic/cmm give the right instructions on x86-64 and on weakly
     * ordered CPUs such as aarch64.
     */
    cmm_smp_mb();
    uatomic_set(&w->control->generation, next);
    PUBLISH_HOOK(PUBLISH_STEP_GENERATION_STORED);
    /* The metadata (for `ringctl show` only) describes a publication that happened:
     * a writer killed before these stores leaves the previous one's. */
    uatomic_set(&w->control->publisher_pid, (int64_t)getpid());
    uatomic_set(&w->control->published_at, (int64_t)time(NULL));
    uatomic_set(&w->control->publish_count, w->control->publish_count + 1);
    PUBLISH_HOOK(PUBLISH_STEP_METADATA_STORED);

    /* The superseded version: readers that map it keep it alive until they unmap. */
    if (w->generation != 0) {
        char old[OBJECT_NAME_MAX];
        shmring__version_name(w->ring, w->generation, old);
        shm_unlink(old);
    }
    PUBLISH_HOOK(PUBLISH_STEP_OLD_UNLINKED);
    writer_unmap_snapshot(w);
    w->generation = next;
    if (generation != NULL)
        *generation = next;
    return 0;
}
