/*
 * The reader: lock-free lookups that follow new versions.
 *
 * A handle points, RCU-style, to a `view`: the mapped control object, the mapped
 * snapshot of the version in use, and that version's generation. A lookup is a
 * read-side critical section (liburcu's bulletproof flavour, which needs no thread
 * registration, so any thread of the worker may call in): it loads the control
 * object's generation, and if it still equals the view's, hashes the key and reads
 * the snapshot. When the generation has moved, the calling thread leaves the critical
 * section, maps and validates the new version, swaps the handle's view pointer, waits
 * for a grace period (every thread that could still be reading the old view has left
 * its critical section) and only then unmaps the old view. Only one thread refreshes
 * at a time; the others keep answering from the current view meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <urcu-bp.h>
#include <urcu/uatomic.h>

#include "control_internal.h"
#include "hash_internal.h"
#include "snapshot_internal.h"

/* How long a handle waits before retrying a version it could not use. */
#define RETRY_INTERVAL_NS 100000000 /* 100 ms */

/* A mapped control object, shared by the views made from it. */
struct control_map {
    const struct control_block *block;
    uid_t owner;
    /* Views using this map; changed only by the refreshing thread. */
    unsigned refs;
};

struct view {
    struct control_map *control;
    /* control->block, copied so the hot path follows one pointer less. */
    const struct control_block *block;
    /* NULL when nothing is published yet (generation 0). */
    const void *snapshot;
    size_t size;
    uint64_t generation;
};

struct shmring {
    char ring[SHMRING_RING_NAME_MAX + 1];
    /* The current view, published with rcu_assign_pointer / read with
     * rcu_dereference. Never NULL after shmring_open(). */
    struct view *view;
    /* The pid of the process whose thread is refreshing, or 0. A pid rather than a
     * flag, so a child forked while a parent's thread was refreshing can take over. */
    pid_t refreshing;
    /* The generation that last failed, and when to try it again. */
    uint64_t failed_generation;
    int64_t retry_at_ns;
};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void register_atfork(void)
{
    /* liburcu-bp's registry must be made consistent in a forked child, or the child's
     * first grace period could wait forever for a parent thread that does not exist
     * there. */
    pthread_atfork(urcu_bp_before_fork, urcu_bp_after_fork_parent,
                   urcu_bp_after_fork_child);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    /* The coarse clock is read from the vDSO without a system call. */
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int control_map_open(const char *ring, struct control_map **out)
{
    char name[OBJECT_NAME_MAX];
    shmring__control_name(ring, name);
    int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return shmring__errno_code();
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = shmring__errno_code();
    else if (st.st_size != CONTROL_SIZE)
        err = st.st_size == 0 ? SHMRING_ENOENT : SHMRING_ECONTROL;
    const void *block = MAP_FAILED;
    if (err == 0) {
        block = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
        if (block == MAP_FAILED)
            err = shmring__errno_code();
    }
    close(fd);
    if (err != 0)
        return err;
    if (!shmring__control_valid(block)) {
        munmap((void *)block, CONTROL_SIZE);
        return SHMRING_ENOENT; /* still being created */
    }
    struct control_map *map = malloc(sizeof(*map));
    if (map == NULL) {
        munmap((void *)block, CONTROL_SIZE);
        return SHMRING_ENOMEM;
    }
    map->block = block;
    map->owner = st.st_uid;
    map->refs = 0;
    *out = map;
    return 0;
}

static void control_map_release(struct control_map *map)
{
    if (map != NULL && --map->refs == 0) {
        munmap((void *)map->block, CONTROL_SIZE);
        free(map);
    }
}

static void view_free(struct view *v)
{
    if (v == NULL)
        return;
    if (v->snapshot != NULL)
        munmap((void *)v->snapshot, v->size);
    control_map_release(v->control);
    free(v);
}

static uint64_t load_generation(const struct control_block *control)
{
    /* Acquire: pairs with the publisher's barrier before its generation store. The
     * version object is then opened by system calls, which see its complete
     * contents. */
    uint64_t gen = uatomic_read(&control->generation);
    cmm_smp_rmb();
    return gen;
}

/*
 * Makes a view of the ring's current version, reusing CURRENT's control map unless
 * the ring was destroyed (then the ring is looked up by name again).
 */
static int view_make(const char *ring, const struct view *current, struct view **out)
{
    struct control_map *control = current ? current->control : NULL;
    int err;
    if (control == NULL ||
        load_generation(control->block) == CONTROL_GENERATION_DESTROYED) {
        err = control_map_open(ring, &control);
        if (err != 0)
            return err;
    }
    struct view *v = calloc(1, sizeof(*v));
    if (v == NULL) {
        err = SHMRING_ENOMEM;
        goto fail;
    }
    v->control = control;
    v->block = control->block;
    v->generation = load_generation(control->block);
    err = 0;
    if (v->generation == CONTROL_GENERATION_DESTROYED)
        err = SHMRING_ENOENT;
    else if (v->generation != 0)
        err = shmring__version_map(ring, v->generation, control->owner, &v->snapshot,
                                   &v->size);
    if (err == 0) {
        control->refs++;
        *out = v;
        return 0;
    }
    free(v);
fail:
    if (current == NULL || control != current->control) {
        control->refs = 1;
        control_map_release(control);
    }
    return err;
}

/* Refreshes the handle's view after the generation moved to SEEN. Never blocks on
 * another refresher; waits only for a grace period of short lookups. */
static void refresh(shmring_t *r, uint64_t seen)
{
    if (seen == uatomic_read(&r->failed_generation) &&
        now_ns() < uatomic_read(&r->retry_at_ns))
        return;
    pid_t self = getpid();
    pid_t owner = uatomic_read(&r->refreshing);
    if (owner == self || uatomic_cmpxchg(&r->refreshing, owner, self) != owner)
        return; /* another thread of this process is at it */

    struct view *old = r->view; /* only refreshers write r->view: no race here */
    struct view *fresh;
    int err = view_make(r->ring, old, &fresh);
    if (err != 0) {
        /* Keep serving the last good version; try again later. */
        uatomic_set(&r->failed_generation, seen);
        uatomic_set(&r->retry_at_ns, now_ns() + RETRY_INTERVAL_NS);
    } else {
        rcu_assign_pointer(r->view, fresh);
        /* After the grace period no thread can still be reading OLD. */
        urcu_bp_synchronize_rcu();
        view_free(old);
    }
    uatomic_set(&r->refreshing, 0);
}

/*
 * Enters a read-side critical section and returns the view to use, refreshing it
 * first when a newer generation is published. The caller must urcu_bp_read_unlock().
 */
static inline const struct view *view_enter(shmring_t *r)
{
    urcu_bp_read_lock();
    const struct view *v = rcu_dereference(r->view);
    uint64_t seen = load_generation(v->block);
    if (caa_likely(seen == v->generation))
        return v;
    urcu_bp_read_unlock();
    refresh(r, seen);
    urcu_bp_read_lock();
    return rcu_dereference(r->view);
}

int shmring_open(const char *ring, shmring_t **out)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    pthread_once(&atfork_once, register_atfork);
    shmring_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return SHMRING_ENOMEM;
    strcpy(r->ring, ring);
    err = view_make(ring, NULL, &r->view);
    if (err != 0) {
        free(r);
        return err;
    }
    *out = r;
    return 0;
}

void shmring_close(shmring_t *r)
{
    if (r == NULL)
        return;
    /* The caller guarantees no thread uses the handle any more. */
    view_free(r->view);
    free(r);
}

static int view_state(const struct view *v)
{
    if (v->snapshot == NULL)
        return SHMRING_EEMPTY;
    const struct snapshot_header *h = snapshot_header(v->snapshot);
    if (h->node_count == 0)
        return SHMRING_EEMPTY;
    if (h->up_count == 0)
        return SHMRING_EALLDOWN;
    return 0;
}

int shmring_lookup(shmring_t *r, const void *key, size_t len, shmring_node_t *out)
{
    const struct view *v = view_enter(r);
    int err = view_state(v);
    if (caa_likely(err == 0)) {
        const struct snapshot_header *h = snapshot_header(v->snapshot);
        uint64_t hash = shmring__key_hash((shmring_algorithm_t)h->algorithm,
                                          (shmring_hash_t)h->hash, key, len);
        shmring__snapshot_node_copy(v->snapshot,
                                    shmring__snapshot_owner(v->snapshot, hash), out);
    }
    urcu_bp_read_unlock();
    return err;
}

int shmring_lookup_n(shmring_t *r, const void *key, size_t len, shmring_node_t *out,
                     size_t n)
{
    if (n == 0)
        return SHMRING_EINVAL;
    if (n > SHMRING_LOOKUP_N_MAX)
        n = SHMRING_LOOKUP_N_MAX;
    const struct view *v = view_enter(r);
    int result = view_state(v);
    if (result == 0) {
        const struct snapshot_header *h = snapshot_header(v->snapshot);
        uint64_t hash = shmring__key_hash((shmring_algorithm_t)h->algorithm,
                                          (shmring_hash_t)h->hash, key, len);
        uint32_t found[SHMRING_LOOKUP_N_MAX];
        result = shmring__snapshot_lookup_n_indexes(v->snapshot, hash, found, n);
        for (int i = 0; i < result; i++)
            shmring__snapshot_node_copy(v->snapshot, found[i], &out[i]);
    }
    urcu_bp_read_unlock();
    return result;
}

uint64_t shmring_generation(shmring_t *r)
{
    const struct view *v = view_enter(r);
    uint64_t gen = v->generation;
    urcu_bp_read_unlock();
    return gen;
}
