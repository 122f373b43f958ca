/*
 * The publisher: RCU-style versioned swaps in shared memory.
 *
 * A writer holds flock() on the ring's lock file (which only the owner can open, so
 * no reader can hold writers up) for as long as it is open, so writers are
 * serialized. To publish, it builds the new snapshot whole, through a shared
 * mapping, into a new object version.GEN in the ring's directory (created with
 * O_EXCL and sized in full with posix_fallocate, so a full file system fails now
 * rather than with SIGBUS later), then stores GEN into the control object, then unlinks
 * the superseded object. The kernel keeps an unlinked object alive while any reader maps
 * it, which makes the kernel the cross-process grace period: no reader can hold a writer
 * up, and no writer can tear a reader's view. A writer killed at any instant leaves the
 * old or the new generation current; the next writer removes what it left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/uatomic.h>

#include "control_internal.h"
#include "nodeset_internal.h"
#include "publish_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_build_internal.h"
#include "snapshot_handle_internal.h"
#include "snapshot_internal.h"

#define DEFAULT_MODE 0644

void (*shmring__publish_hook)(enum publish_step step);

struct shmring_writer {
    char ring[SHMRING_RING_NAME_MAX + 1];
    /* The ring's directory, its status, and the lock file (flock held). */
    int dir_fd;
    struct stat dir_st;
    int lock_fd;
    /* A ring created with SHMRING_WRITER_ATOMIC_CREATE and not yet published: still
     * under its hidden name HIDDEN in the directory BASE_FD (else -1). */
    int base_fd;
    char hidden[ENTRY_NAME_MAX];
    struct control_block *control;
    gid_t group;
    mode_t mode;
    uint64_t generation;
    /* The current version, mapped on demand by shmring_writer_snapshot() (buffer
     * NULL until then) and lent as a snapshot that does not own the mapping. */
    shmring_snapshot_t current;
};

void shmring_writer_options_default(shmring_writer_options_t *options)
{
    memset(options, 0, sizeof(*options));
    options->mode = DEFAULT_MODE;
    options->group = (gid_t)-1;
    options->wait_ms = -1;
}

/* The owner keeps read and write; group and others may read, nothing more. Anything
 * else is refused, not masked: execute or setuid bits would only mislead, write bits
 * for others would let them change generations, and a mode without the owner's own
 * read and write would lock the owner out. */
static bool mode_valid(mode_t mode)
{
    return (mode & ~(mode_t)0644) == 0 && (mode & 0600) == 0600;
}

/* The ring directory's mode for a ring of MODE: whoever may read the ring may list
 * and enter its directory; nobody but the owner may change it. */
static mode_t directory_mode(mode_t mode)
{
    return 0700 | ((mode & 0040) ? 0050 : 0) | ((mode & 0004) ? 0005 : 0);
}

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

static void writer_release(shmring_writer_t *w)
{
    /* An atomically created ring that was never published: it was never visible, so
     * removing it is all there is to undo. */
    if (w->base_fd >= 0) {
        shmring__ring_dir_remove(w->base_fd, w->hidden, w->dir_fd);
        close(w->base_fd);
        w->base_fd = -1;
    }
    if (w->control != NULL)
        munmap(w->control, CONTROL_SIZE);
    if (w->lock_fd >= 0)
        close(w->lock_fd); /* also releases the flock */
    if (w->dir_fd >= 0)
        close(w->dir_fd);
    w->control = NULL;
    w->lock_fd = -1;
    w->dir_fd = -1;
}

/*
 * Renames a created ring from its hidden name into place, failing with
 * SHMRING_EEXIST if the name was taken since. The ring is then visible and no longer
 * removed when the writer is closed.
 */
static int ring_reveal(shmring_writer_t *w)
{
    char entry[ENTRY_NAME_MAX];
    shmring__ring_entry(w->ring, entry);
    if (renameat2(w->base_fd, w->hidden, w->base_fd, entry, RENAME_NOREPLACE) != 0)
        return errno == EEXIST ? SHMRING_EEXIST : shmring__errno_code();
    close(w->base_fd);
    w->base_fd = -1;
    return 0;
}

/*
 * Whether a file of SIZE bytes fits the caller's RLIMIT_FSIZE: -EFBIG when it does
 * not. posix_fallocate() past the limit raises SIGXFSZ, whose default action kills
 * the process; a library must not die of a signal its caller did not ask for, and
 * cannot ignore it behind the caller's back (the disposition is process-wide), so
 * it asks first. (A caller that changed the limit meanwhile from another thread
 * still gets the signal; one that ignores SIGXFSZ gets -EFBIG from the kernel.)
 */
static int check_file_size_limit(off_t size)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return 0;
    return (rlim_t)size > limit.rlim_cur ? -EFBIG : 0;
}

/*
 * Fills the hidden directory DIR_FD of a ring being created: the lock (taken at
 * once), the control object allocated in full and initialized, then the modes and
 * group asked for.
 */
static int ring_fill(shmring_writer_t *w, const shmring_writer_options_t *options)
{
    w->lock_fd =
        openat(w->dir_fd, LOCK_FILE,
               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    /* Locked at once: a sweeper leaves a hidden ring with a held lock alone. The
     * mode is set again because openat()'s is filtered by the umask. */
    if (w->lock_fd < 0 || flock(w->lock_fd, LOCK_EX | LOCK_NB) != 0 ||
        fchmod(w->lock_fd, 0600) != 0)
        return shmring__errno_code();
    int fd =
        openat(w->dir_fd, CONTROL_FILE,
               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0)
        return shmring__errno_code();
    int err = 0;
    if (options->group != (gid_t)-1 &&
        (fchown(fd, (uid_t)-1, options->group) != 0 ||
         fchown(w->dir_fd, (uid_t)-1, options->group) != 0))
        err = shmring__errno_code();
    /* openat()'s mode is filtered by the umask; the ring's mode must not be. */
    if (err == 0 && fchmod(fd, options->mode) != 0)
        err = shmring__errno_code();
    if (err == 0)
        err = check_file_size_limit(CONTROL_SIZE);
    if (err == 0) {
        int rc = posix_fallocate(fd, 0, CONTROL_SIZE);
        if (rc != 0)
            err = -rc; /* posix_fallocate() returns the errno value */
    }
    void *map = MAP_FAILED;
    if (err == 0) {
        map = mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
            err = shmring__errno_code();
    }
    close(fd);
    if (err != 0)
        return err;
    w->control = map;
    control_initialize(w->control);
    if (fchmod(w->dir_fd, directory_mode(options->mode)) != 0 ||
        fstat(w->dir_fd, &w->dir_st) != 0)
        return shmring__errno_code();
    w->group = w->dir_st.st_gid;
    w->mode = options->mode;
    w->generation = 0;
    return 0;
}

/*
 * Creates RING complete under a hidden name in BASE_FD, then renames it into place
 * in one step that fails if the name is taken: nobody ever sees half a ring, and a
 * creator that fails or dies leaves nothing under the ring's name. With ATOMIC the
 * rename waits for the first publication (see shmring_writer_publish()). Returns 0
 * (the writer holds the new ring, locked), SHMRING_EEXIST (the name was taken
 * meanwhile) or another error, having removed what it made.
 */
static int ring_create(shmring_writer_t *w, int base_fd,
                       const shmring_writer_options_t *options, bool atomic)
{
    /* The name is unguessable, but another user may have made one like it: a taken
     * name is drawn again, never used. */
    int err = 0;
    for (int attempt = 0; attempt < 4; attempt++) {
        err = shmring__hidden_entry(CREATING_PREFIX, w->ring, w->hidden);
        /* mkdirat()'s mode is filtered by the umask: the owner needs all of 0700 to
         * open and fill the directory, whatever the umask says. The name is ours
         * alone from here on (nobody else may replace an entry of ours in a
         * sticky or private directory), so setting the mode by name is safe. */
        if (err == 0 && (mkdirat(base_fd, w->hidden, 0700) != 0 ||
                         fchmodat(base_fd, w->hidden, 0700, 0) != 0))
            err = shmring__errno_code();
        if (err != SHMRING_EEXIST)
            break;
    }
    if (err != 0)
        return err;
    PUBLISH_HOOK(PUBLISH_STEP_RING_DIR_CREATED);
    w->dir_fd =
        openat(base_fd, w->hidden, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (w->dir_fd < 0) {
        err = shmring__errno_code();
        unlinkat(base_fd, w->hidden, AT_REMOVEDIR);
        return err;
    }
    w->base_fd = fcntl(base_fd, F_DUPFD_CLOEXEC, 0);
    if (w->base_fd < 0) {
        err = shmring__errno_code();
        shmring__ring_dir_remove(base_fd, w->hidden, w->dir_fd);
        writer_release(w);
        return err;
    }
    err = ring_fill(w, options);
    PUBLISH_HOOK(PUBLISH_STEP_RING_BEFORE_RENAME);
    if (err == 0 && !atomic)
        err = ring_reveal(w);
    if (err != 0)
        writer_release(w); /* removes the hidden directory */
    return err;
}

/*
 * Opens the existing ring directory DIR_FD for writing: only its owner may, and only
 * once it holds the lock and the directory is still the ring (not destroyed while
 * we waited). Returns 0, SHMRING_ESTALE (destroyed meanwhile: look again), or an
 * error.
 */
static int ring_attach(shmring_writer_t *w, int base_fd,
                       const shmring_writer_options_t *options, bool *announced)
{
    if (w->dir_st.st_uid != geteuid())
        return SHMRING_EOWNER;
    struct stat st;
    int err =
        shmring__object_open(w->dir_fd, &w->dir_st, LOCK_FILE, O_RDWR, &w->lock_fd, &st);
    if (err == 0)
        err = shmring__lock_wait(w->lock_fd, w->ring, options, announced);
    if (err == 0)
        PUBLISH_HOOK(PUBLISH_STEP_OPEN_LOCKED);
    char entry[ENTRY_NAME_MAX];
    shmring__ring_entry(w->ring, entry);
    if (err == 0 && !shmring__entry_is(base_fd, entry, &w->dir_st))
        return SHMRING_ESTALE;
    int fd = -1;
    if (err == 0)
        err = shmring__object_open(w->dir_fd, &w->dir_st, CONTROL_FILE, O_RDWR, &fd, &st);
    if (err == 0 && st.st_size != CONTROL_SIZE)
        err = SHMRING_ECONTROL;
    if (err == 0) {
        void *map = mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
            err = shmring__errno_code();
        else
            w->control = map;
    }
    if (fd >= 0)
        close(fd);
    if (err != 0)
        return err;
    /* A newer release's control object is refused too: this writer must not change
     * a layout it does not know. */
    err = shmring__control_check(w->control);
    if (err != 0)
        return err;
    w->generation = uatomic_read(&w->control->generation);
    if (w->generation == CONTROL_GENERATION_DESTROYED)
        return SHMRING_ESTALE;
    w->group = st.st_gid;
    w->mode = st.st_mode & 0777;
    return 0;
}

int shmring__writer_call_start(const char *ring, const shmring_writer_options_t **options,
                               shmring_writer_options_t *defaults)
{
    if (*options == NULL) {
        shmring_writer_options_default(defaults);
        *options = defaults;
    }
    return shmring_ring_name_check(ring);
}

int shmring_writer_open(const char *ring, unsigned flags,
                        const shmring_writer_options_t *options, shmring_writer_t **out)
{
    shmring_writer_options_t defaults;
    int err = shmring__writer_call_start(ring, &options, &defaults);
    if (err != 0)
        return err;
    if ((flags & SHMRING_WRITER_CREATE) && !mode_valid(options->mode))
        return SHMRING_EINVAL;
    int base_fd;
    err = shmring__base_open(options->directory, OWNER_ANY, &base_fd);
    if (err != 0)
        return err;
    shmring_writer_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        close(base_fd);
        return SHMRING_ENOMEM;
    }
    strcpy(w->ring, ring);
    w->dir_fd = -1;
    w->lock_fd = -1;
    w->base_fd = -1;

    bool announced = false;
    /* Rings may be created, or destroyed while we wait for their lock, by others of
     * the owner's processes: look the name up again then. Bounded, for a ring that
     * keeps being destroyed and re-created. */
    for (int attempt = 0;; attempt++) {
        err = shmring__ring_dir_open(base_fd, ring, &w->dir_fd, &w->dir_st);
        if (err == SHMRING_ENOENT && (flags & SHMRING_WRITER_CREATE)) {
            err = ring_create(w, base_fd, options,
                              (flags & SHMRING_WRITER_ATOMIC_CREATE) != 0);
            if (err == 0 || err != SHMRING_EEXIST || (flags & SHMRING_WRITER_EXCL))
                break;
            err = SHMRING_ESTALE; /* another creator won: open theirs */
        } else if (err == 0 && (flags & SHMRING_WRITER_CREATE) &&
                   (flags & SHMRING_WRITER_EXCL)) {
            err = w->dir_st.st_uid == geteuid() ? SHMRING_EEXIST : SHMRING_EOWNER;
            break;
        } else if (err == 0) {
            err = ring_attach(w, base_fd, options, &announced);
            if (err == 0)
                break;
        } else {
            /* A directory we may not even enter is another user's squat. */
            if (err == SHMRING_EACCES && w->dir_st.st_uid != geteuid())
                err = SHMRING_EOWNER;
            break;
        }
        writer_release(w);
        if (err != SHMRING_ESTALE || attempt == 10)
            break;
    }
    if (err == 0) {
        /* What killed writers left behind: a version created but never published,
         * or the one superseded but not unlinked yet; hidden directories of rings
         * whose creator or destroyer died. */
        err = shmring__unlink_versions(w->dir_fd, w->generation);
        shmring__sweep_leftovers(base_fd, ring);
        PUBLISH_HOOK(PUBLISH_STEP_OPEN_CLEANED);
    }
    close(base_fd);
    if (err != 0) {
        writer_release(w);
        free(w);
        return err;
    }
    *out = w;
    return 0;
}

static void writer_unmap_snapshot(shmring_writer_t *w)
{
    if (w->current.buffer != NULL)
        munmap((void *)w->current.buffer, w->current.size);
    w->current = (shmring_snapshot_t){0};
}

void shmring_writer_close(shmring_writer_t *w)
{
    if (w == NULL)
        return;
    writer_unmap_snapshot(w);
    writer_release(w);
    free(w);
}

uint64_t shmring_writer_generation(const shmring_writer_t *w)
{
    return w->generation;
}

int shmring_writer_snapshot(shmring_writer_t *w, const shmring_snapshot_t **out)
{
    if (w->generation == 0)
        return SHMRING_ENOENT;
    if (w->current.buffer == NULL) {
        int err = shmring__version_map(w->dir_fd, &w->dir_st, w->generation,
                                       &w->current.buffer, &w->current.size);
        if (err != 0)
            return err;
    }
    *out = &w->current;
    return 0;
}

int shmring_writer_nodeset(shmring_writer_t *w, shmring_nodeset_t **out)
{
    if (w->generation == 0)
        return shmring_nodeset_new(out);
    const shmring_snapshot_t *current;
    int err = shmring_writer_snapshot(w, &current);
    if (err != 0)
        return err;
    return shmring_nodeset_from_snapshot(current, out);
}

/*
 * Creates version object NAME in the ring's directory, with the ring's group and
 * read bits, and builds PLAN's snapshot of SET straight into it: sized in full
 * first, so that a full file system fails here rather than with SIGBUS when a page
 * is first written, then mapped and filled, header last.
 */
static int version_create(const shmring_writer_t *w, const char *name,
                          const shmring_nodeset_t *set, const struct snapshot_plan *plan)
{
    size_t size = plan->header.total_size;
    int fd =
        openat(w->dir_fd, name,
               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0)
        return shmring__errno_code();
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_CREATED);
    int err = 0;
    if (fchown(fd, (uid_t)-1, w->group) != 0)
        err = shmring__errno_code();
    /* Read bits only, even for the owner: readers validate a version once and then
     * trust it, so nobody may change it afterwards (our descriptor, opened for
     * writing before this, still writes it, and so does its mapping). */
    if (err == 0 && fchmod(fd, w->mode & 0444) != 0)
        err = shmring__errno_code();
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_OWNED);
    if (err == 0)
        err = check_file_size_limit((off_t)size);
    if (err == 0) {
        int rc = posix_fallocate(fd, 0, (off_t)size);
        if (rc != 0)
            err = -rc; /* posix_fallocate() returns the errno value */
    }
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_SIZED);
    void *map = MAP_FAILED;
    if (err == 0) {
        /* Populated at once: one call maps every page that the build writes, where
         * faulting them one at a time costs more than the writes. */
        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (map == MAP_FAILED)
            err = shmring__errno_code();
    }
    close(fd);
    /* The object is new and allocated by posix_fallocate(): all zeros, as the
     * builder needs. */
    if (err == 0)
        err = shmring__snapshot_fill(set, plan, map);
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_SECTIONS_WRITTEN);
    if (err == 0)
        shmring__snapshot_seal(plan, map);
    PUBLISH_HOOK(PUBLISH_STEP_VERSION_WRITTEN);
    if (map != MAP_FAILED)
        munmap(map, size);
    if (err != 0)
        unlinkat(w->dir_fd, name, 0);
    return err;
}

/* The algorithm's checks of a publication of SET over the current version, when both
 * have that algorithm (`jump` refuses to renumber its buckets). */
static int check_change(shmring_writer_t *w, const shmring_nodeset_t *set)
{
    if (w->generation == 0)
        return 0;
    const struct placement_algorithm *algorithm =
        shmring__algorithm((unsigned)set->params.algorithm);
    if (algorithm == NULL || algorithm->check_change == NULL)
        return 0;
    const shmring_snapshot_t *current;
    int err = shmring_writer_snapshot(w, &current);
    if (err != 0)
        return err;
    if (snapshot_header(current->buffer)->algorithm != (uint8_t)algorithm->id)
        return 0;
    return algorithm->check_change(current->buffer, set);
}

int shmring_writer_publish(shmring_writer_t *w, const shmring_nodeset_t *set,
                           uint64_t *generation)
{
    /* The last generation number marks a destroyed ring: never publish it. */
    uint64_t next = w->generation + 1;
    if (next == CONTROL_GENERATION_DESTROYED)
        return SHMRING_ELIMIT;
    int err = check_change(w, set);
    if (err != 0)
        return err;
    struct snapshot_plan plan;
    err = shmring__snapshot_plan(set, &plan);
    if (err != 0)
        return err;

    char name[FILE_NAME_MAX];
    shmring__version_file(next, name);
    err = version_create(w, name, set, &plan);
    shmring__snapshot_plan_free(&plan);
    if (err != 0)
        return err;

    /*
     * Publish. The version's bytes were stored through a shared mapping of the
     * object, into the very pages that any process mapping it afterwards maps, so
     * they are visible to one that opens the object after seeing GEN. The full
     * barrier orders those stores before the generation
     * store (a release store), pairing with the reader's acquire load of the
     * generation; uatomic/cmm give the right instructions on x86-64 and on weakly
     * ordered CPUs such as aarch64.
     */
    cmm_smp_mb();
    uatomic_set(&w->control->generation, next);
    PUBLISH_HOOK(PUBLISH_STEP_GENERATION_STORED);

    /* The first publication of an atomically created ring makes it visible. If its
     * name was taken meanwhile, the hidden ring is put back as it was: nobody ever
     * saw it. */
    if (w->base_fd >= 0) {
        err = ring_reveal(w);
        if (err != 0) {
            uatomic_set(&w->control->generation, w->generation);
            unlinkat(w->dir_fd, name, 0);
            return err;
        }
    }

    /* The metadata (for `ringctl show` only) describes a publication that happened:
     * a writer killed before these stores leaves the previous one's. */
    uatomic_set(&w->control->publisher_pid, (int64_t)getpid());
    uatomic_set(&w->control->published_at, (int64_t)time(NULL));
    uatomic_set(&w->control->publish_count, w->control->publish_count + 1);
    PUBLISH_HOOK(PUBLISH_STEP_METADATA_STORED);

    /* The superseded version: readers that map it keep it alive until they unmap. */
    if (w->generation != 0) {
        char old[FILE_NAME_MAX];
        shmring__version_file(w->generation, old);
        unlinkat(w->dir_fd, old, 0);
    }
    PUBLISH_HOOK(PUBLISH_STEP_OLD_UNLINKED);
    writer_unmap_snapshot(w);
    w->generation = next;
    if (generation != NULL)
        *generation = next;
    return 0;
}

struct control_block *shmring__writer_control(shmring_writer_t *w, int *dir_fd,
                                              struct stat *dir_st)
{
    *dir_fd = w->dir_fd;
    *dir_st = w->dir_st;
    return w->control;
}
