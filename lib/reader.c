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
 *
 * A serialized handle (SHMRING_OPEN_SERIALIZED) has its caller's word that no two of
 * its calls overlap, so no other thread can be reading its view: a call enters no
 * critical section, and a switch frees the old view at once. What it does instead is
 * mark the handle as in a call (with the process's pid, so that a child forked while
 * another thread of the parent was inside is not locked out), which costs two plain
 * stores and lets a call that finds the mark refuse with SHMRING_EINUSE.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * liburcu's read-side primitives are inlined (_LGPL_SOURCE: MIT code is LGPL
 * compatible, and they are a few lines each), so a lookup makes no call into
 * liburcu-bp; see lib/CMakeLists.txt for the TLS dialect that keeps their
 * thread-local access cheap.
 *
 * SHMRING_READER_SERIALIZED_ONLY builds a reader of serialized handles alone: the
 * copy that the Python wheel compiles into its extension (bindings/python/setup.py),
 * which may share a process with the system's libshmring. Its calls enter no
 * read-side section, so it leaves liburcu-bp out (a process must hold one registry
 * of its readers, the system library's); its process state is its own pid cache,
 * read by its own handles only. It refuses to open a shared handle.
 */
#ifdef SHMRING_READER_SERIALIZED_ONLY
#define read_section_enter() ((void)0)
#define read_section_exit() ((void)0)
#define grace_period_wait() ((void)0)
#include <urcu/compiler.h>
#else
#define _LGPL_SOURCE
#include <urcu-bp.h>
#define read_section_enter() urcu_bp_read_lock()
#define read_section_exit() urcu_bp_read_unlock()
#define grace_period_wait() urcu_bp_synchronize_rcu()
#endif
#include <urcu/uatomic.h>

#include "array_internal.h"
#include "board_internal.h"
#include "control_internal.h"
#include "hash_internal.h"
#include "reader_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_internal.h"

/* How long a handle waits before retrying a version it could not use. */
#define RETRY_INTERVAL_NS 100000000 /* 100 ms */

/* A mapped control object, shared by the views made from it. */
struct control_map {
    const struct control_block *block;
    /* The ring directory it came from: a directory found under the ring's name later
     * is another ring (destroyed and re-created) and needs its own control object. */
    dev_t dir_dev;
    ino_t dir_ino;
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
    /* The ring's owner, as its directory said when this view was made. */
    uid_t owner;
    /* The snapshot's node count and fingerprint, and its nodes by id (NULL when it
     * has no nodes). */
    uint32_t node_count;
    uint64_t fingerprint;
    struct node_id_entry *id_index;
    /* When the view was made (Unix nanoseconds), for shmring_status(). */
    int64_t made_at_ns;
    /* The load board's entries of this version's nodes, made by the first lease on
     * it (NULL until then; see lease.c's part below). */
    _Atomic(struct board_map *) board_map;
};

/* The skew fields took the status's room to grow, and no more: its size and earlier
 * offsets are those of 0.3.0. */
_Static_assert(sizeof(shmring_status_t) ==
                       offsetof(shmring_status_t, failed_at_ns) + 8 + 4 * 8 &&
                   offsetof(shmring_status_t, failed_format) ==
                       offsetof(shmring_status_t, failed_at_ns) + 8,
               "shmring_status_t outgrew its room");

/*
 * The last failed switch, for shmring_status(): written only by the refreshing thread
 * (one at a time), read by any. A sequence count (odd while it is written) lets a
 * reader take the three fields of one failure together without a lock that a
 * lookup's refresh would have to take.
 */
struct switch_failure {
    _Atomic unsigned sequence;
    _Atomic uint64_t generation;
    _Atomic int error;
    _Atomic int64_t at_ns;
    /* The refused version's snapshot format when ERROR says it is too new. */
    _Atomic uint32_t format;
};

struct shmring {
    char ring[SHMRING_RING_NAME_MAX + 1];
    char directory[SHMRING_DIRECTORY_MAX + 1];
    /* The uid trusted besides root and the effective uid (OWNER_ANY: none), and the
     * owner of the ring first accepted: the only one trusted from then on, so a ring
     * re-created under the same name by another trusted user is never followed. */
    uid_t trusted_extra;
    uid_t owner;
    /* The current view: stored with release and loaded with acquire ordering, so a
     * thread that loads the pointer sees the view fully initialized (what
     * rcu_assign_pointer and rcu_dereference do; C11 atomics say the same to
     * ThreadSanitizer). Never NULL after shmring_open(). */
    _Atomic(struct view *) view;
    /* SHMRING_OPEN_SERIALIZED: the caller serializes every call (see the top). */
    bool serialized;
    /* A serialized handle only: the pid of the process one of whose threads is in a
     * call, or 0. Relaxed atomics: the caller's own lock orders the calls, this only
     * catches those that break that promise. */
    _Atomic pid_t in_call;
    /* A serialized handle only: the current view's control block, snapshot and
     * generation, copied into the handle at each switch, so that a lookup reaches
     * the snapshot with one load from the handle (as an in-process lookup has it at
     * hand) and checks the generation beside it, off the lookup's path. Plain
     * fields: only the handle's calls, which never overlap, touch them. */
    struct {
        const struct control_block *block;
        const void *snapshot;
        uint64_t generation;
        uint64_t fingerprint;
    } serialized_view;
    /* The pid of the process whose thread is refreshing, or 0. A pid rather than a
     * flag, so a child forked while a parent's thread was refreshing can take over. */
    _Atomic pid_t refreshing;
    /* The generation that last failed, and when to try it again. */
    _Atomic uint64_t failed_generation;
    _Atomic int64_t retry_at_ns;
    struct switch_failure last_failure;
    /* Bounded-load leases: this handle's slot on the ring's load board (NULL: none
     * yet, or plain lookups), replaced ones kept until close because leases in
     * flight name them, and when to look for dead workers' slots again. The mutex
     * serializes attaching and sweeping, never a lease's fast path. */
    pthread_mutex_t lease_mutex;
    _Atomic(struct lease_slot *) lease_slot;
    struct lease_slot *retired_slots;
    _Atomic int64_t next_sweep_ns;
    _Atomic int64_t attach_retry_ns;
};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

void (*shmring__reader_switch_hook)(void);

/* This process's pid, kept here because lookups compare it while another thread
 * refreshes, and glibc's getpid() is a system call each time. Set once, and again in
 * every forked child (before any of the child's threads can look up). */
static _Atomic pid_t process_pid;

static void after_fork_child(void)
{
#ifndef SHMRING_READER_SERIALIZED_ONLY
    urcu_bp_after_fork_child();
#endif
    atomic_store_explicit(&process_pid, getpid(), memory_order_relaxed);
}

static void register_atfork(void)
{
    atomic_store_explicit(&process_pid, getpid(), memory_order_relaxed);
#ifdef SHMRING_READER_SERIALIZED_ONLY
    pthread_atfork(NULL, NULL, after_fork_child);
#else
    /* liburcu-bp's registry must be made consistent in a forked child, or the child's
     * first grace period could wait forever for a parent thread that does not exist
     * there. */
    pthread_atfork(urcu_bp_before_fork, urcu_bp_after_fork_parent, after_fork_child);
#endif
}

static int64_t now_ns(void)
{
    struct timespec ts;
    /* The coarse clock is read from the vDSO without a system call. */
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t unix_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Records the outcome of a switch to GENERATION for shmring_status(): ERROR 0 clears
 * the failure. Called by the refreshing thread only. */
static void switch_failure_note(struct switch_failure *failure, uint64_t generation,
                                int error, uint32_t format)
{
    unsigned sequence = atomic_load_explicit(&failure->sequence, memory_order_relaxed);
    atomic_store_explicit(&failure->sequence, sequence + 1, memory_order_relaxed);
    /* The odd count is visible before any field changes. */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&failure->generation, error != 0 ? generation : 0,
                          memory_order_relaxed);
    atomic_store_explicit(&failure->error, error, memory_order_relaxed);
    atomic_store_explicit(&failure->format, format, memory_order_relaxed);
    atomic_store_explicit(&failure->at_ns, error != 0 ? unix_now_ns() : 0,
                          memory_order_relaxed);
    /* Release: the fields are visible before the even count is. */
    atomic_store_explicit(&failure->sequence, sequence + 2, memory_order_release);
}

static int control_map_open(int dir_fd, const struct stat *dir_st,
                            struct control_map **out)
{
    const struct control_block *block;
    struct stat st;
    int err = shmring__control_map(dir_fd, dir_st, &block, &st);
    if (err != 0)
        return err;
    struct control_map *map = malloc(sizeof(*map));
    if (map == NULL) {
        munmap((void *)block, CONTROL_SIZE);
        return SHMRING_ENOMEM;
    }
    map->block = block;
    map->dir_dev = dir_st->st_dev;
    map->dir_ino = dir_st->st_ino;
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

/*
 * ThreadSanitizer cannot see liburcu's grace periods (its reader side is plain
 * stores and compiler barriers, its writer side is in an uninstrumented library), so
 * a TSan build states the one ordering they guarantee: everything a reader did with a
 * view before leaving its critical section happens before the view is freed after the
 * next grace period.
 */
#if defined(__SANITIZE_THREAD__)
#define SHMRING_TSAN_ANNOTATE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHMRING_TSAN_ANNOTATE 1
#endif
#endif
#ifdef SHMRING_TSAN_ANNOTATE
void AnnotateHappensBefore(const char *file, int line, const volatile void *address);
void AnnotateHappensAfter(const char *file, int line, const volatile void *address);
#define grace_period_before(v) AnnotateHappensBefore(__FILE__, __LINE__, (v))
#define grace_period_after(v) AnnotateHappensAfter(__FILE__, __LINE__, (v))
#else
#define grace_period_before(v) ((void)(v))
#define grace_period_after(v) ((void)(v))
#endif

/* Leaves the read-side critical section in which V was used. */
static inline void view_exit(const struct view *v)
{
    grace_period_before(v);
    read_section_exit();
}

/* A version's nodes on a load board: each node's entry (UINT32_MAX: none, every
 * entry being taken) and its tag, weight and state, and what the candidates need. */
struct board_node {
    uint32_t entry;
    uint32_t weight;
    uint64_t tag;
    bool up;
};

struct board_map {
    /* The board it was made for. */
    uint64_t nonce;
    uint64_t up_weight;
    /* The version's ids, sorted, for sweeps that drop removed nodes' entries. */
    uint32_t *ids;
    uint32_t node_count;
    /* A map made for an earlier board of the same view, freed with it. */
    struct board_map *older;
    struct board_node nodes[];
};

static void board_maps_free(struct board_map *m)
{
    while (m != NULL) {
        struct board_map *older = m->older;
        free(m->ids);
        free(m);
        m = older;
    }
}

static void view_free(struct view *v)
{
    if (v == NULL)
        return;
    if (v->snapshot != NULL)
        munmap((void *)v->snapshot, v->size);
    free(v->id_index);
    board_maps_free(atomic_load_explicit(&v->board_map, memory_order_relaxed));
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
 * Makes a view of the ring's current version. The ring's directory is looked up by
 * name each time (a handle keeps no descriptor) and must belong to the handle's
 * owner; CURRENT's control map is reused while that directory is the one it came
 * from and the ring was not destroyed.
 */
static int view_make(const shmring_t *r, const struct view *current, struct view **out,
                     uint32_t *refused_format)
{
    int dir_fd;
    struct stat dir_st;
    int err = shmring__ring_dir_open_trusted(r->directory, r->ring, r->trusted_extra,
                                             r->owner, &dir_fd, &dir_st);
    if (err != 0)
        return err;
    struct control_map *control = current ? current->control : NULL;
    if (control == NULL || control->dir_dev != dir_st.st_dev ||
        control->dir_ino != dir_st.st_ino ||
        load_generation(control->block) == CONTROL_GENERATION_DESTROYED) {
        err = control_map_open(dir_fd, &dir_st, &control);
        if (err != 0) {
            close(dir_fd);
            return err;
        }
    }
    struct view *v = calloc(1, sizeof(*v));
    if (v == NULL) {
        err = SHMRING_ENOMEM;
        goto fail;
    }
    v->control = control;
    v->block = control->block;
    v->made_at_ns = unix_now_ns();
    v->owner = dir_st.st_uid;
    /* A writer may publish a newer version and unlink this one between our load of
     * the generation and our open: then the generation has moved, so take the newer
     * one. Bounded, for a writer that publishes faster than we can open. */
    for (int attempt = 0;; attempt++) {
        v->generation = load_generation(control->block);
        err = 0;
        if (v->generation == CONTROL_GENERATION_DESTROYED)
            err = SHMRING_ENOENT;
        else if (v->generation != 0)
            err = shmring__version_map(dir_fd, &dir_st, v->generation, &v->snapshot,
                                       &v->size);
        if (err != SHMRING_ENOENT || attempt == 100 ||
            load_generation(control->block) == v->generation)
            break;
    }
    if (err == SHMRING_ENEWFORMAT || err == SHMRING_EFEATURE) {
        /* A newer release's version: its format, for the status to name (its header
         * is read again; the check that refuses it again leaves it read). */
        struct snapshot_header header;
        if (shmring__version_header_read(dir_fd, &dir_st, v->generation, &header) ==
                err &&
            refused_format != NULL)
            *refused_format = header.format_version;
    }
    if (err == 0 && v->snapshot != NULL) {
        shmring_snapshot_info_t info;
        shmring__snapshot_info(v->snapshot, &info);
        v->node_count = info.node_count;
        v->fingerprint = info.fingerprint;
        err = shmring__node_id_index(v->snapshot, &v->id_index);
        if (err != 0)
            munmap((void *)v->snapshot, v->size);
    }
    if (err == 0) {
        close(dir_fd);
        control->refs++;
        *out = v;
        return 0;
    }
    free(v);
fail:
    close(dir_fd);
    if (current == NULL || control != current->control) {
        control->refs = 1;
        control_map_release(control);
    }
    return err;
}

/* Whether a switch to SEEN may be tried now: not while it is the generation that
 * last failed and its retry interval has not passed. */
static bool switch_due(const shmring_t *r, uint64_t seen)
{
    return seen != atomic_load_explicit(&r->failed_generation, memory_order_relaxed) ||
           now_ns() >= atomic_load_explicit(&r->retry_at_ns, memory_order_relaxed);
}

/*
 * Makes a view of the published version SEEN and makes it the handle's. Returns the
 * view it replaced, for the caller to free once no call can read it any more, or
 * NULL when the switch failed (the handle keeps serving its last good version and
 * tries again later). Called by one refresher at a time.
 */
static struct view *view_switch(shmring_t *r, uint64_t seen)
{
    /* Only refreshers store r->view, and we are the only one. */
    struct view *old = atomic_load_explicit(&r->view, memory_order_relaxed);
    struct view *fresh;
    uint32_t refused_format = 0;
    int err = view_make(r, old, &fresh, &refused_format);
    if (err != 0) {
        atomic_store_explicit(&r->failed_generation, seen, memory_order_relaxed);
        atomic_store_explicit(&r->retry_at_ns, now_ns() + RETRY_INTERVAL_NS,
                              memory_order_relaxed);
        switch_failure_note(&r->last_failure, seen, err, refused_format);
        return NULL;
    }
    switch_failure_note(&r->last_failure, 0, 0, 0);
    if (shmring__reader_switch_hook != NULL)
        shmring__reader_switch_hook();
    atomic_store_explicit(&r->view, fresh, memory_order_release);
    return old;
}

/* Refreshes a shared handle's view after the generation moved to SEEN. Never blocks
 * on another refresher; waits only for a grace period of short lookups. Out of line,
 * so that the lookups' fast path saves no registers for it. */
static __attribute__((noinline, cold)) void refresh(shmring_t *r, uint64_t seen)
{
    if (!switch_due(r, seen))
        return;
    pid_t self = atomic_load_explicit(&process_pid, memory_order_relaxed);
    pid_t owner = atomic_load_explicit(&r->refreshing, memory_order_relaxed);
    /* Acquire pairs with the release below: this refresher sees what the previous
     * one did to the handle. */
    if (owner == self ||
        !atomic_compare_exchange_strong_explicit(
            &r->refreshing, &owner, self, memory_order_acquire, memory_order_relaxed))
        return; /* another thread of this process is at it */
    struct view *old = view_switch(r, seen);
    if (old != NULL) {
        /* After the grace period no thread can still be reading OLD. */
        grace_period_wait();
        grace_period_after(old);
        view_free(old);
    }
    atomic_store_explicit(&r->refreshing, 0, memory_order_release);
}

/*
 * Enters a read-side critical section and returns the view to use, refreshing it
 * first when a newer generation is published. The caller must view_exit(v).
 */
static inline const struct view *view_enter(shmring_t *r)
{
    read_section_enter();
    const struct view *v = atomic_load_explicit(&r->view, memory_order_acquire);
    uint64_t seen = load_generation(v->block);
    if (caa_likely(seen == v->generation))
        return v;
    view_exit(v);
    refresh(r, seen);
    read_section_enter();
    return atomic_load_explicit(&r->view, memory_order_acquire);
}

/* Copies a serialized handle's current view into the handle (see serialized_view). */
static void serialized_view_copy(shmring_t *r)
{
    const struct view *v = atomic_load_explicit(&r->view, memory_order_relaxed);
    r->serialized_view.block = v->block;
    r->serialized_view.snapshot = v->snapshot;
    r->serialized_view.generation = v->generation;
    r->serialized_view.fingerprint = v->fingerprint;
}

/* A serialized handle's switch to SEEN: the old view is freed at once, as no other
 * call can be reading it. Out of line, so that the lookups' fast path saves no
 * registers for it. */
static __attribute__((noinline, cold)) void serialized_refresh(shmring_t *r,
                                                               uint64_t seen)
{
    if (switch_due(r, seen)) {
        view_free(view_switch(r, seen));
        serialized_view_copy(r);
    }
}

/* Marks a serialized handle as in a call; false, marking nothing, when another call
 * of this process is inside it. */
static inline bool serialized_mark(shmring_t *r)
{
    pid_t self = atomic_load_explicit(&process_pid, memory_order_relaxed);
    if (caa_unlikely(atomic_load_explicit(&r->in_call, memory_order_relaxed) == self))
        return false;
    atomic_store_explicit(&r->in_call, self, memory_order_relaxed);
    return true;
}

static inline void serialized_unmark(shmring_t *r)
{
    atomic_store_explicit(&r->in_call, 0, memory_order_relaxed);
}

/* Switches a marked serialized handle to a newer published version, if there is
 * one. */
static inline void serialized_follow(shmring_t *r)
{
    uint64_t seen = load_generation(r->serialized_view.block);
    if (caa_unlikely(seen != r->serialized_view.generation))
        serialized_refresh(r, seen);
}

/*
 * A serialized handle's view_enter(): marks the handle as in a call and returns the
 * view to use, after switching to a newer published version. Returns NULL, marking
 * nothing, when another call of this process is inside the handle.
 */
static inline const struct view *serialized_enter(shmring_t *r)
{
    if (!serialized_mark(r))
        return NULL;
    serialized_follow(r);
    return atomic_load_explicit(&r->view, memory_order_relaxed);
}

/*
 * Enters a call on R: returns the view to answer from, or NULL (a serialized handle
 * already in another call: answer SHMRING_EINUSE). The caller must call_exit(r, v)
 * when it got a view.
 */
static inline const struct view *call_enter(shmring_t *r)
{
    if (r->serialized)
        return serialized_enter(r);
    return view_enter(r);
}

static inline void call_exit(shmring_t *r, const struct view *v)
{
    if (r->serialized)
        serialized_unmark(r);
    else
        view_exit(v);
}

int shmring_open_with(const char *ring, const shmring_open_options_t *options,
                      shmring_t **out)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    const char *directory = shmring__directory(options ? options->directory : NULL);
    uint32_t flags = options ? options->flags : 0;
    if (directory == NULL)
        return SHMRING_EBADDIR;
    if ((flags & ~(uint32_t)SHMRING_OPEN_SERIALIZED) != 0)
        return SHMRING_EINVAL;
#ifdef SHMRING_READER_SERIALIZED_ONLY
    if ((flags & SHMRING_OPEN_SERIALIZED) == 0)
        return SHMRING_EINVAL; /* a shared handle needs liburcu-bp (see the top) */
#endif
    pthread_once(&atfork_once, register_atfork);
    shmring_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return SHMRING_ENOMEM;
    strcpy(r->ring, ring);
    strcpy(r->directory, directory);
    r->trusted_extra = shmring__trusted_extra(options);
    r->owner = OWNER_ANY;
    r->serialized = (flags & SHMRING_OPEN_SERIALIZED) != 0;
    pthread_mutex_init(&r->lease_mutex, NULL);
    struct view *first;
    err = view_make(r, NULL, &first, NULL);
    if (err != 0) {
        free(r);
        return err;
    }
    r->owner = first->owner;
    atomic_init(&r->view, first);
    serialized_view_copy(r);
    *out = r;
    return 0;
}

int shmring_open(const char *ring, shmring_t **out)
{
    return shmring_open_with(ring, NULL, out);
}

static void lease_slots_free(shmring_t *r);

void shmring_close(shmring_t *r)
{
    if (r == NULL)
        return;
    /* The caller guarantees no thread uses the handle any more. */
    view_free(atomic_load_explicit(&r->view, memory_order_relaxed));
    lease_slots_free(r);
    pthread_mutex_destroy(&r->lease_mutex);
    free(r);
}

/*
 * The lookups themselves are the snapshot's (lib/snapshot_lookup.c); the reader adds
 * the call's entry and exit and "nothing published yet".
 *
 * Each lookup is three functions: the public one only picks, by a tail jump, between
 * its serialized-handle and its shared-handle twins, so that neither path pays for
 * the other's registers (the read-side section's TLS accesses need several, the
 * serialized path almost none) and each keeps the snapshot's inline lookup inline.
 *
 * LOOKUP_TWINS(NAME, LOOKUP, PARAMS, ARGS) defines the twins shared_NAME(PARAMS) and
 * serialized_NAME(PARAMS): each returns LOOKUP(snapshot, ARGS) on R's current
 * version, SHMRING_EEMPTY when nothing is published, or SHMRING_EINUSE when the
 * handle refuses the call. The twins are flattened: the inline lookups of
 * snapshot_internal.h stay inline in both (only the noinline switches stay calls).
 * The public functions follow, each written out.
 */
#define LOOKUP_TWINS(name, lookup, params, args)                                         \
    static __attribute__((noinline, flatten)) int shared_##name params                   \
    {                                                                                    \
        const struct view *v = view_enter(r);                                            \
        if (caa_unlikely(v == NULL))                                                     \
            return SHMRING_EINUSE;                                                       \
        int result =                                                                     \
            v->snapshot != NULL ? lookup(v->snapshot, UNPAREN args) : SHMRING_EEMPTY;    \
        view_exit(v);                                                                    \
        return result;                                                                   \
    }                                                                                    \
    static __attribute__((noinline, flatten)) int serialized_##name params               \
    {                                                                                    \
        if (caa_unlikely(!serialized_mark(r)))                                           \
            return SHMRING_EINUSE;                                                       \
        serialized_follow(r);                                                            \
        const void *snapshot = r->serialized_view.snapshot;                              \
        int result = snapshot != NULL ? lookup(snapshot, UNPAREN args) : SHMRING_EEMPTY; \
        serialized_unmark(r);                                                            \
        return result;                                                                   \
    }
#define UNPAREN(...) __VA_ARGS__

/* clang-format off */
LOOKUP_TWINS(lookup, shmring__snapshot_lookup,
             (shmring_t *r, const void *key, size_t len, shmring_node_t *out),
             (key, len, out))
LOOKUP_TWINS(lookup_id, shmring__snapshot_lookup_id,
             (shmring_t *r, const void *key, size_t len, uint32_t *id),
             (key, len, id))
LOOKUP_TWINS(lookup_ids, shmring__snapshot_lookup_ids,
             (shmring_t *r, const void *const *keys, const size_t *lens, size_t count,
              uint32_t *ids),
             (keys, lens, count, ids))
LOOKUP_TWINS(lookup_n, shmring__snapshot_lookup_n,
             (shmring_t *r, const void *key, size_t len, shmring_node_t *out, size_t n),
             (key, len, out, n))
/* clang-format on */

int shmring_lookup(shmring_t *r, const void *key, size_t len, shmring_node_t *out)
{
    if (r->serialized)
        return serialized_lookup(r, key, len, out);
    return shared_lookup(r, key, len, out);
}

int shmring_lookup_id(shmring_t *r, const void *key, size_t len, uint32_t *id)
{
    if (r->serialized)
        return serialized_lookup_id(r, key, len, id);
    return shared_lookup_id(r, key, len, id);
}

/* The fingerprint is read from the view the lookup used, inside the same call (a
 * serialized handle's copy of it, a shared handle's read-side section), so the two
 * belong to one version. */
static __attribute__((noinline, flatten)) int
shared_lookup_id_versioned(shmring_t *r, const void *key, size_t len, uint32_t *id,
                           uint64_t *fingerprint)
{
    const struct view *v = view_enter(r);
    int result = v->snapshot != NULL
                     ? shmring__snapshot_lookup_id(v->snapshot, key, len, id)
                     : SHMRING_EEMPTY;
    if (result == 0)
        *fingerprint = v->fingerprint;
    view_exit(v);
    return result;
}

static __attribute__((noinline, flatten)) int
serialized_lookup_id_versioned(shmring_t *r, const void *key, size_t len, uint32_t *id,
                               uint64_t *fingerprint)
{
    if (caa_unlikely(!serialized_mark(r)))
        return SHMRING_EINUSE;
    serialized_follow(r);
    const void *snapshot = r->serialized_view.snapshot;
    int result = snapshot != NULL ? shmring__snapshot_lookup_id(snapshot, key, len, id)
                                  : SHMRING_EEMPTY;
    if (result == 0)
        *fingerprint = r->serialized_view.fingerprint;
    serialized_unmark(r);
    return result;
}

int shmring_lookup_id_versioned(shmring_t *r, const void *key, size_t len, uint32_t *id,
                                uint64_t *fingerprint)
{
    if (r->serialized)
        return serialized_lookup_id_versioned(r, key, len, id, fingerprint);
    return shared_lookup_id_versioned(r, key, len, id, fingerprint);
}

int shmring_lookup_ids(shmring_t *r, const void *const *keys, const size_t *lens,
                       size_t count, uint32_t *ids)
{
    if (r->serialized)
        return serialized_lookup_ids(r, keys, lens, count, ids);
    return shared_lookup_ids(r, keys, lens, count, ids);
}

int shmring_lookup_n(shmring_t *r, const void *key, size_t len, shmring_node_t *out,
                     size_t n)
{
    if (n == 0)
        return SHMRING_EINVAL;
    if (r->serialized)
        return serialized_lookup_n(r, key, len, out, n);
    return shared_lookup_n(r, key, len, out, n);
}

uint64_t shmring_generation(shmring_t *r)
{
    const struct view *v = call_enter(r);
    if (v == NULL)
        return 0;
    uint64_t gen = v->generation;
    call_exit(r, v);
    return gen;
}

int shmring_node(shmring_t *r, uint32_t id, shmring_node_t *out)
{
    const struct view *v = call_enter(r);
    if (v == NULL)
        return SHMRING_EINUSE;
    int err = SHMRING_EEMPTY;
    if (v->snapshot != NULL) {
        int64_t index = shmring__node_id_find(v->id_index, v->node_count, id);
        err = index < 0 ? SHMRING_ENODE : 0;
        if (err == 0)
            shmring__snapshot_node_at(v->snapshot, (uint32_t)index, out);
    }
    call_exit(r, v);
    return err;
}

int shmring_nodes(shmring_t *r, shmring_nodes_t *out)
{
    const struct view *v = call_enter(r);
    if (v == NULL)
        return SHMRING_EINUSE;
    /* Copied inside the read-side critical section, so the generation, the
     * fingerprint and every node come from one version. */
    size_t count = v->snapshot != NULL ? v->node_count : 0;
    shmring_node_t *nodes = NULL;
    int err = 0;
    if (count > 0) {
        nodes = malloc(count * sizeof(*nodes));
        if (nodes == NULL)
            err = SHMRING_ENOMEM;
        for (size_t i = 0; nodes != NULL && i < count; i++)
            shmring__snapshot_node_at(v->snapshot, (uint32_t)i, &nodes[i]);
    }
    if (err == 0) {
        /* Whole, reserved fields included (see shmring.h's rule for public structs). */
        memset(out, 0, sizeof(*out));
        out->generation = v->generation;
        out->fingerprint = v->snapshot != NULL ? v->fingerprint : 0;
        out->count = count;
        out->nodes = nodes;
    }
    call_exit(r, v);
    return err;
}

void shmring_nodes_free(shmring_nodes_t *nodes)
{
    if (nodes == NULL)
        return;
    shmring__array_release((void **)&nodes->nodes, &nodes->count);
}

int shmring_fingerprint(shmring_t *r, uint64_t *fingerprint)
{
    const struct view *v = call_enter(r);
    if (v == NULL)
        return SHMRING_EINUSE;
    int err = v->snapshot != NULL ? 0 : SHMRING_EEMPTY;
    if (err == 0)
        *fingerprint = v->fingerprint;
    call_exit(r, v);
    return err;
}

void shmring_status(shmring_t *r, shmring_status_t *out)
{
    /* Whole, reserved fields included (see shmring.h's rule for public structs). */
    memset(out, 0, sizeof(*out));
    /* The view, without switching: a read-side critical section, or a serialized
     * handle's mark. */
    const struct view *v;
    if (r->serialized) {
        if (!serialized_mark(r)) {
            out->failed_error = SHMRING_EINUSE;
            return;
        }
        v = atomic_load_explicit(&r->view, memory_order_relaxed);
    } else {
        read_section_enter();
        v = atomic_load_explicit(&r->view, memory_order_acquire);
    }
    out->generation = v->generation;
    out->fingerprint = v->snapshot != NULL ? v->fingerprint : 0;
    out->published_generation = load_generation(v->block);
    out->switched_at_ns = v->made_at_ns;
    call_exit(r, v);

    /* Retry while a refresher writes the record; bounded, because a child forked
     * while a parent's thread was writing it would otherwise wait forever (it then
     * reports what it read). */
    const struct switch_failure *failure = &r->last_failure;
    for (int attempt = 0; attempt < 1000; attempt++) {
        unsigned before = atomic_load_explicit(&failure->sequence, memory_order_acquire);
        out->failed_generation =
            atomic_load_explicit(&failure->generation, memory_order_relaxed);
        out->failed_error = atomic_load_explicit(&failure->error, memory_order_relaxed);
        out->failed_at_ns = atomic_load_explicit(&failure->at_ns, memory_order_relaxed);
        out->failed_format = atomic_load_explicit(&failure->format, memory_order_relaxed);
        /* Acquire: the loads above complete before the count is read again. */
        atomic_thread_fence(memory_order_acquire);
        if ((before & 1u) == 0 &&
            atomic_load_explicit(&failure->sequence, memory_order_relaxed) == before)
            break;
    }
}

/*
 * Bounded-load leases (board_internal.h has the board's design).
 *
 * A handle takes one slot of the ring's board, at its first lease, and keeps it
 * until it is closed; a forked child takes its own. Each version gets, at its first
 * lease, the board entries of its nodes (a board_map). A lease reads the control
 * object's board record (which tells the balance factor and which board is
 * current), the ring's total and the counts of the candidates it tries, and counts
 * itself on its node; all that is loads and two compare-and-swaps on the board, no
 * system call but for a sweep, every SWEEP_INTERVAL_NS, at most.
 */

/* A slot of this handle on a board. Immutable once published, and freed at close
 * only: a lease names the slot it was counted on. */
struct lease_slot {
    struct board board;
    /* The board file, whose byte SLOT this handle's open file description locks
     * while the slot is held (-1 once let go). */
    int lock_fd;
    uint32_t slot;
    uint32_t epoch;
    /* The process that holds it: a forked child must take its own. */
    pid_t pid;
    struct lease_slot *older;
};

/* internal[0] of a lease: held and counted, held and not counted, released. */
#define LEASE_COUNTED UINT64_C(0x636e74646c656173)
#define LEASE_PLAIN UINT64_C(0x6e6c70646c656173)
#define LEASE_RELEASED UINT64_C(0x6c6572646c656173)
/* When a handle that could not use a board tries again. */
#define ATTACH_RETRY_NS 1000000000 /* 1 s */

static void lease_slots_free(shmring_t *r)
{
    struct lease_slot *ls = atomic_load_explicit(&r->lease_slot, memory_order_relaxed);
    if (ls != NULL) {
        ls->older = r->retired_slots;
        r->retired_slots = ls;
    }
    pid_t self = atomic_load_explicit(&process_pid, memory_order_relaxed);
    void *detached = NULL;
    for (ls = r->retired_slots; ls != NULL;) {
        struct lease_slot *older = ls->older;
        if (ls->lock_fd >= 0) {
            /* A forked child's copy of its parent's slot is the parent's to let go. */
            if (ls->pid == self)
                shmring__board_slot_release(&ls->board, ls->lock_fd, ls->slot);
            close(ls->lock_fd);
        }
        /* A child's slot shares its parent's attachment. */
        if (ls->board.header != NULL && ls->board.header != detached) {
            detached = ls->board.header;
            shmdt(ls->board.header);
        }
        free(ls);
        ls = older;
    }
    r->retired_slots = NULL;
}

/* Opens V's ring directory again and its board file; the directory must be the one
 * V's control object came from. */
static int lease_lock_open(const shmring_t *r, const struct view *v, gid_t group, int *fd)
{
    int dir_fd;
    struct stat dir_st;
    int err = shmring__ring_dir_open_trusted(r->directory, r->ring, r->trusted_extra,
                                             r->owner, &dir_fd, &dir_st);
    if (err != 0)
        return err;
    if (dir_st.st_dev != v->control->dir_dev || dir_st.st_ino != v->control->dir_ino)
        err = SHMRING_ESTALE;
    else
        err = shmring__board_lock_open(dir_fd, dir_st.st_uid, group, fd);
    close(dir_fd);
    return err;
}

/* Makes this handle's slot on the board RECORD names; under the lease mutex. */
static struct lease_slot *lease_slot_make(shmring_t *r, const struct view *v,
                                          const struct board_record *record)
{
    pid_t self = atomic_load_explicit(&process_pid, memory_order_relaxed);
    struct lease_slot *current =
        atomic_load_explicit(&r->lease_slot, memory_order_relaxed);
    struct lease_slot *ls = calloc(1, sizeof(*ls));
    if (ls == NULL)
        return NULL;
    ls->lock_fd = -1;
    ls->pid = self;
    int err = 0;
    if (current != NULL && current->board.nonce == record->nonce) {
        /* A forked child: the attachment is inherited, the parent's slot is not
         * ours, and our copy of its lock's descriptor would keep that slot held
         * after the parent died. */
        ls->board = current->board;
        if (current->pid != self && current->lock_fd >= 0) {
            close(current->lock_fd);
            current->lock_fd = -1;
        }
    } else {
        err = shmring__board_attach(record, v->owner, &ls->board);
    }
    if (err == 0)
        err = lease_lock_open(r, v, record->group, &ls->lock_fd);
    if (err == 0)
        err = shmring__board_slot_claim(&ls->board, ls->lock_fd, &ls->slot, &ls->epoch);
    if (err != 0) {
        if (ls->lock_fd >= 0)
            close(ls->lock_fd);
        if (ls->board.header != NULL &&
            (current == NULL || current->board.header != ls->board.header))
            shmdt(ls->board.header);
        free(ls);
        return NULL;
    }
    /* A new worker first gives back what dead ones held. */
    shmring__board_sweep(&ls->board, ls->lock_fd, ls->slot, NULL, 0);
    if (current != NULL) {
        /* Replaced by a new board: let go of the old board's slot. */
        if (current->pid == self && current->lock_fd >= 0) {
            shmring__board_slot_release(&current->board, current->lock_fd, current->slot);
            close(current->lock_fd);
            current->lock_fd = -1;
        }
        current->older = r->retired_slots;
        r->retired_slots = current;
    }
    atomic_store_explicit(&r->lease_slot, ls, memory_order_release);
    return ls;
}

/* This handle's slot on the board RECORD names, or NULL for plain lookups. */
static inline struct lease_slot *lease_slot_get(shmring_t *r, const struct view *v,
                                                const struct board_record *record)
{
    struct lease_slot *ls = atomic_load_explicit(&r->lease_slot, memory_order_acquire);
    pid_t self = atomic_load_explicit(&process_pid, memory_order_relaxed);
    if (caa_likely(ls != NULL && ls->board.nonce == record->nonce && ls->pid == self))
        return ls;
    int64_t now = now_ns();
    if (now < atomic_load_explicit(&r->attach_retry_ns, memory_order_relaxed))
        return NULL;
    pthread_mutex_lock(&r->lease_mutex);
    ls = atomic_load_explicit(&r->lease_slot, memory_order_relaxed);
    if (ls == NULL || ls->board.nonce != record->nonce || ls->pid != self) {
        ls = lease_slot_make(r, v, record);
        if (ls == NULL)
            atomic_store_explicit(&r->attach_retry_ns, now + ATTACH_RETRY_NS,
                                  memory_order_relaxed);
    }
    pthread_mutex_unlock(&r->lease_mutex);
    return ls;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* V's nodes on LS's board, made by the first lease on V for that board. */
static const struct board_map *board_map_get(const struct view *v,
                                             const struct lease_slot *ls)
{
    struct view *mutable_view = (struct view *)v;
    struct board_map *m = atomic_load_explicit(&v->board_map, memory_order_acquire);
    if (caa_likely(m != NULL && m->nonce == ls->board.nonce))
        return m;
    uint32_t count = v->node_count;
    struct board_map *made = calloc(1, sizeof(*made) + count * sizeof(made->nodes[0]));
    uint32_t *ids = malloc((count > 0 ? count : 1) * sizeof(*ids));
    if (made == NULL || ids == NULL) {
        free(made);
        free(ids);
        return NULL;
    }
    made->nonce = ls->board.nonce;
    made->node_count = count;
    made->ids = ids;
    const struct snapshot_header *h = snapshot_header(v->snapshot);
    const struct snapshot_node *nodes = snapshot_section_at(v->snapshot, &h->nodes);
    for (uint32_t i = 0; i < count; i++)
        ids[i] = nodes[i].id;
    /* All the nodes' entries in one pass over the board, not one pass a node: a
     * ring of 10,000 nodes on a board of 32,768 entries. */
    uint32_t *entries = malloc((count > 0 ? count : 1) * sizeof(*entries));
    uint64_t *tags = malloc((count > 0 ? count : 1) * sizeof(*tags));
    if (entries == NULL || tags == NULL ||
        shmring__board_entries_find(&ls->board, ids, count, entries, tags) != 0) {
        free(entries);
        free(tags);
        board_maps_free(made);
        return NULL;
    }
    for (uint32_t i = 0; i < count; i++) {
        struct board_node *n = &made->nodes[i];
        n->weight = nodes[i].weight;
        n->up = nodes[i].state == SHMRING_STATE_UP;
        if (n->up)
            made->up_weight += n->weight;
        n->entry = entries[i];
        n->tag = entries[i] != UINT32_MAX ? tags[i] : 0;
    }
    free(entries);
    free(tags);
    qsort(ids, count, sizeof(*ids), compare_u32);
    made->older = m;
    if (atomic_compare_exchange_strong_explicit(&mutable_view->board_map, &m, made,
                                                memory_order_acq_rel,
                                                memory_order_acquire))
        return made;
    /* Another thread made one first. */
    made->older = NULL;
    board_maps_free(made);
    return m;
}

/* Looks for dead workers' slots, and removed nodes' entries when V is the published
 * version, every SWEEP_INTERVAL_NS at most, by one thread of the handle. */
static void lease_sweep(shmring_t *r, const struct view *v, const struct lease_slot *ls,
                        const struct board_map *m)
{
    int64_t now = now_ns();
    if (caa_likely(now < atomic_load_explicit(&r->next_sweep_ns, memory_order_relaxed)))
        return;
    if (pthread_mutex_trylock(&r->lease_mutex) != 0)
        return;
    atomic_store_explicit(&r->next_sweep_ns, now + SWEEP_INTERVAL_NS,
                          memory_order_relaxed);
    bool published = load_generation(v->block) == v->generation;
    if (ls->lock_fd >= 0)
        shmring__board_sweep(&ls->board, ls->lock_fd, ls->slot, published ? m->ids : NULL,
                             m->node_count);
    pthread_mutex_unlock(&r->lease_mutex);
}

/* The in-flight count of node INDEX, or 0 when it has no entry. */
static inline uint64_t node_in_flight(const struct lease_slot *ls,
                                      const struct board_node *n)
{
    if (n->entry == UINT32_MAX)
        return 0;
    return shmring__board_node_count(&ls->board, n->entry,
                                     (uint32_t)(n->tag >> 32) & 0xffu);
}

/* KEY's first candidate, the lookup's answer: flattened, so that the snapshot's
 * inline lookup stays inline here as in the lookups. */
static __attribute__((flatten)) uint32_t first_candidate(const struct view *v,
                                                         const void *key, size_t len)
{
    return shmring__snapshot_key_owner(v->snapshot, key, len);
}

/*
 * Chooses KEY's node under the bound on a view with up nodes; fills the lease's id
 * and candidates, and returns the chosen node's index.
 */
static uint32_t lease_choose(const struct view *v, const struct lease_slot *ls,
                             const struct board_map *m, uint32_t percent, const void *key,
                             size_t len, uint32_t *tried)
{
    uint32_t first = first_candidate(v, key, len);
    *tried = 1;
    if (percent == 0)
        return first;
    uint64_t total = shmring__board_total(&ls->board);
    const struct board_node *n = &m->nodes[first];
    uint64_t load = node_in_flight(ls, n);
    if (load < shmring__board_capacity(percent, total, n->weight, m->up_weight))
        return first;
    if (n->entry != UINT32_MAX)
        atomic_fetch_add_explicit(&ls->board.entries[n->entry].overflow, 1,
                                  memory_order_relaxed);
    uint32_t candidates[SHMRING_LOOKUP_N_MAX];
    int count = shmring__snapshot_candidates(v->snapshot, key, len, candidates,
                                             SHMRING_LOOKUP_N_MAX);
    /* The least loaded so far, by load over weight: LOAD / WEIGHT. */
    uint32_t least = first;
    uint64_t least_load = load, least_weight = n->weight;
    for (int i = 1; i < count; i++) {
        n = &m->nodes[candidates[i]];
        load = node_in_flight(ls, n);
        *tried = (uint32_t)i + 1;
        if (load < shmring__board_capacity(percent, total, n->weight, m->up_weight))
            return candidates[i];
        if (n->entry != UINT32_MAX)
            atomic_fetch_add_explicit(&ls->board.entries[n->entry].overflow, 1,
                                      memory_order_relaxed);
        if ((unsigned __int128)load * least_weight <
            (unsigned __int128)least_load * n->weight) {
            least = candidates[i];
            least_load = load;
            least_weight = n->weight;
        }
    }
    return least;
}

/* Adds a lease that tried TRIED candidates to this handle's slot's statistics. A
 * serialized handle's calls never overlap, so plain stores do; the other handles'
 * threads share the slot and add atomically. Nobody else writes a held slot. */
static inline void slot_statistics(const shmring_t *r, struct board_slot *slot,
                                   uint32_t tried)
{
    if (r->serialized) {
        atomic_store_explicit(
            &slot->acquires,
            atomic_load_explicit(&slot->acquires, memory_order_relaxed) + 1,
            memory_order_relaxed);
        atomic_store_explicit(&slot->tried,
                              atomic_load_explicit(&slot->tried, memory_order_relaxed) +
                                  tried,
                              memory_order_relaxed);
        if (tried == 1)
            atomic_store_explicit(
                &slot->first,
                atomic_load_explicit(&slot->first, memory_order_relaxed) + 1,
                memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&slot->acquires, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&slot->tried, tried, memory_order_relaxed);
    if (tried == 1)
        atomic_fetch_add_explicit(&slot->first, 1, memory_order_relaxed);
}

int shmring_acquire(shmring_t *r, const void *key, size_t len, shmring_lease_t *lease)
{
    memset(lease, 0, sizeof(*lease));
    const struct view *v = call_enter(r);
    if (caa_unlikely(v == NULL))
        return SHMRING_EINUSE;
    int err = v->snapshot != NULL ? shmring__snapshot_state(v->snapshot) : SHMRING_EEMPTY;
    if (err != 0) {
        call_exit(r, v);
        return err;
    }
    struct board_record record;
    struct lease_slot *ls = NULL;
    const struct board_map *m = NULL;
    if (shmring__board_record(v->block, &record) == 0 &&
        (ls = lease_slot_get(r, v, &record)) != NULL)
        m = board_map_get(v, ls);
    const struct snapshot_header *h = snapshot_header(v->snapshot);
    const struct snapshot_node *nodes = snapshot_section_at(v->snapshot, &h->nodes);
    if (m == NULL) {
        lease->id = nodes[first_candidate(v, key, len)].id;
        lease->candidates = 1;
        lease->internal[0] = LEASE_PLAIN;
        call_exit(r, v);
        return 0;
    }
    lease_sweep(r, v, ls, m);
    uint32_t percent = record.balance_percent;
    if (percent != 0 && (percent < BALANCE_PERCENT_MIN || percent > BALANCE_PERCENT_MAX))
        percent = 0; /* only the owner writes the record: never the case */
    uint32_t tried;
    uint32_t chosen = lease_choose(v, ls, m, percent, key, len, &tried);
    const struct board_node *n = &m->nodes[chosen];
    lease->id = nodes[chosen].id;
    lease->candidates = tried;
    slot_statistics(r, &ls->board.slots[ls->slot], tried);
    if (n->entry != UINT32_MAX &&
        shmring__board_count(&ls->board, ls->slot, n->entry, n->tag)) {
        lease->counted = 1;
        lease->internal[0] = LEASE_COUNTED;
        lease->internal[1] = (uint64_t)(uintptr_t)ls;
        lease->internal[2] = n->tag;
        lease->internal[3] = n->entry;
    } else {
        lease->internal[0] = LEASE_PLAIN;
    }
    call_exit(r, v);
    return 0;
}

int shmring_release(shmring_t *r, shmring_lease_t *lease)
{
    uint64_t state = lease->internal[0];
    if (state != LEASE_COUNTED && state != LEASE_PLAIN)
        return SHMRING_ELEASE;
    lease->internal[0] = LEASE_RELEASED;
    if (state == LEASE_PLAIN)
        return 0;
    /* Only a lease of this handle's current slot, in the process that holds it, is
     * counted there: a slot replaced since was let go with all its counts. The
     * pointer is compared, never followed, before it is known to be ours. */
    struct lease_slot *ls = atomic_load_explicit(&r->lease_slot, memory_order_acquire);
    pid_t self = atomic_load_explicit(&process_pid, memory_order_relaxed);
    if (ls == NULL || (uintptr_t)ls != lease->internal[1] || ls->pid != self ||
        lease->internal[3] >= ls->board.entry_count)
        return 0;
    shmring__board_uncount(&ls->board, ls->slot, (uint32_t)lease->internal[3],
                           lease->internal[2]);
    return 0;
}
