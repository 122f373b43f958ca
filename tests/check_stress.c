/*
 * The publication protocol under load: reader processes (some with several threads
 * sharing one handle) look keys up without pause while this process publishes
 * more than a thousand versions of every kind (nodes added and removed, weights,
 * down and up, algorithm and hash switches, 10 to 10,000 nodes). Before it publishes
 * a generation, the writer stores that version's fingerprint and its answers for a
 * fixed key set, computed from its own in-memory snapshot, in memory shared with the
 * readers; a reader checks every answer it gets against them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/uatomic.h>

#include "control_internal.h"
#include "publish_internal.h"
#include "test_support.h"

#define KEYS 256
#define READERS 4
#define MAX_THREADS 3
#define MAX_VERSIONS 1400
#define LARGE_NODES 10000
/* How many lookups each reader thread must complete while the writer is stopped in
 * the middle of a publication. */
#define STALL_LOOKUPS 500

/* What every reader answer is checked against: written before GEN is published. */
struct reference {
    /* Set last, with release ordering: the rest is complete. */
    uint32_t ready;
    uint32_t node_count;
    uint64_t fingerprint;
    uint32_t ids[KEYS];
};

/* One reader thread's results; written by that thread only. */
struct thread_stats {
    uint64_t lookups;
    uint64_t inconsistent;
    uint64_t errors;
    uint64_t backwards;
    uint64_t generation_changes;
    /* The generation of its last completed lookup: the writer waits on it. */
    uint64_t last_generation;
    /* The longest time between two lookups that stayed on one generation (nothing
     * to do but look up), and between any two (a switch maps and validates the new
     * version, a reopen or copy maps it too). */
    int64_t max_gap_ns;
    int64_t max_switch_gap_ns;
    /* The first inconsistent answer, for the failure message. */
    uint64_t bad_before, bad_after, bad_key, bad_id;
};

struct reader_result {
    uint64_t final_generation;
    int mappings_open;
    int mappings_closed;
    uint64_t final_wrong;
    uint64_t reopens;
    uint64_t open_failures;
    int last_open_error;
    uint64_t copies;
    uint64_t copy_mismatches;
};

struct shared {
    /* Set once generation 1 is published. */
    int started;
    int stop;
    uint64_t final_generation;
    struct thread_stats threads[READERS][MAX_THREADS];
    struct reader_result readers[READERS];
    struct reference refs[MAX_VERSIONS + 1];
};

/* What each reader process does. */
struct reader_kind {
    int threads;
    /* Thread 1 uses shmring_lookup_n(). */
    bool lookup_n;
    /* Close and reopen the handle every this many lookups (0: never). */
    uint64_t reopen_every;
    /* Copy the current version with shmring_ring_snapshot() every this many. */
    uint64_t copy_every;
};

static const struct reader_kind reader_kinds[READERS] = {
    {.threads = 3},
    {.threads = 2, .lookup_n = true},
    {.threads = 1, .reopen_every = 3000},
    {.threads = 1, .copy_every = 20000},
};

static char ring[SHMRING_RING_NAME_MAX + 1];
static char keys[KEYS][32];
static size_t key_lengths[KEYS];
static struct shared *shared;

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void node_name(uint32_t id, char *name, size_t size)
{
    snprintf(name, size, "node-%u", id);
}

static void node_address(uint32_t id, char *address, size_t size)
{
    snprintf(address, size, "10.%u.%u.%u:11211", (id >> 16) & 255, (id >> 8) & 255,
             id & 255);
}

static void setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("stress"));
    for (uint64_t k = 0; k < KEYS; k++)
        key_lengths[k] = test_key(keys[k], k * 104729 + 17);
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(shared, MAP_FAILED);
}

static void teardown(void)
{
    int err = shmring_ring_destroy(ring, NULL);
    ck_assert(err == 0 || err == SHMRING_ENOENT);
    ck_assert_int_eq(test_ring_entries(ring), 0);
    munmap(shared, sizeof(*shared));
}

/* ---- Readers -------------------------------------------------------------- */

/* The node strings belong to the node id. */
static bool node_strings_match(const shmring_node_t *node)
{
    char want[64];
    node_name(node->id, want, sizeof(want));
    if (strcmp(node->name, want) != 0)
        return false;
    node_address(node->id, want, sizeof(want));
    return strcmp(node->address, want) == 0;
}

/* Did some generation in [BEFORE, AFTER] answer ID for key K? */
static bool answer_published(uint64_t before, uint64_t after, size_t k, uint32_t id)
{
    for (uint64_t g = before; g <= after && g <= MAX_VERSIONS; g++) {
        const struct reference *ref = &shared->refs[g];
        /* Acquire: pairs with the writer's release store of `ready`. */
        if (uatomic_read(&ref->ready) == 0)
            continue;
        cmm_smp_rmb();
        if (ref->ids[k] == id)
            return true;
    }
    return false;
}

struct reader_thread {
    shmring_t **handle;
    const struct reader_kind *kind;
    struct reader_result *result;
    struct thread_stats *stats;
    int index;
};

static void *reader_main(void *p)
{
    struct reader_thread *t = p;
    struct thread_stats *st = t->stats;
    uint64_t random_state = (uint64_t)getpid() * 31 + (uint64_t)t->index;
    uint64_t last = 0, lookups = 0;
    int64_t previous = test_now_ns();
    bool use_n = t->kind->lookup_n && t->index == 1;
    /* A copy or a reopen came after the previous lookup. */
    bool busy = true;
    while (!uatomic_read(&shared->stop)) {
        shmring_t *h = *t->handle;
        size_t k = (size_t)(test_random(&random_state) % KEYS);
        /* The lookup answers from the view it enters, which lies between the views
         * the generation calls before and after it enter: views only move forward. */
        uint64_t before = shmring_generation(h);
        shmring_node_t nodes[3];
        int err;
        if (use_n) {
            err = shmring_lookup_n(h, keys[k], key_lengths[k], nodes, 3);
            if (err > 0) {
                bool distinct = err == 1 || (nodes[0].id != nodes[1].id &&
                                             (err == 2 || (nodes[2].id != nodes[0].id &&
                                                           nodes[2].id != nodes[1].id)));
                err = distinct && node_strings_match(&nodes[err - 1]) ? 0 : -EIO;
            }
        } else {
            err = shmring_lookup(h, keys[k], key_lengths[k], &nodes[0]);
        }
        uint64_t after = shmring_generation(h);
        int64_t now = test_now_ns();
        if (before == last && after == last && !busy && now - previous > st->max_gap_ns)
            st->max_gap_ns = now - previous;
        if (now - previous > st->max_switch_gap_ns)
            st->max_switch_gap_ns = now - previous;
        previous = now;
        busy = false;
        if (before < last || after < before)
            st->backwards++;
        if (err != 0) {
            st->errors++;
        } else if (!node_strings_match(&nodes[0]) ||
                   !answer_published(before, after, k, nodes[0].id)) {
            if (st->inconsistent++ == 0) {
                st->bad_before = before;
                st->bad_after = after;
                st->bad_key = k;
                st->bad_id = nodes[0].id;
            }
        }
        if (after != last)
            st->generation_changes++;
        last = after;
        lookups++;
        uatomic_set(&st->lookups, lookups);
        uatomic_set(&st->last_generation, after);

        if (t->kind->copy_every != 0 && lookups % t->kind->copy_every == 0) {
            /* The copy path: the current version's fingerprint is the one the
             * writer recorded for its generation. */
            uint64_t gen;
            shmring_snapshot_t *copy;
            busy = true;
            if (shmring_ring_snapshot(ring, NULL, &gen, &copy) == 0) {
                shmring_snapshot_info_t info;
                shmring_snapshot_info(copy, &info);
                /* Read by the writer while this process runs. */
                uatomic_add(&t->result->copies, 1);
                if (gen > MAX_VERSIONS || uatomic_read(&shared->refs[gen].ready) == 0 ||
                    shared->refs[gen].fingerprint != info.fingerprint ||
                    shared->refs[gen].node_count != info.node_count)
                    t->result->copy_mismatches++;
                shmring_snapshot_free(copy);
            } else {
                t->result->copy_mismatches++;
            }
        }
        if (t->kind->reopen_every != 0 && lookups % t->kind->reopen_every == 0) {
            /* A worker starting while versions are published: only this thread uses
             * the handle. */
            busy = true;
            shmring_close(h);
            int open_err;
            while ((open_err = shmring_open(ring, t->handle)) != 0) {
                t->result->open_failures++;
                t->result->last_open_error = open_err;
            }
            uatomic_add(&t->result->reopens, 1);
        }
    }
    return NULL;
}

/* A reader process: opens the ring, runs its threads until told to stop, then
 * checks where it ended. Returns its exit status. */
static int reader_process(int index)
{
    const struct reader_kind *kind = &reader_kinds[index];
    struct reader_result *result = &shared->readers[index];
    /* Readers run at a lower priority than the writer, so that on a machine with
     * few cores the writer's thousand publications still finish in bounded time;
     * they still look keys up all the time the writer does not need the CPU. */
    errno = 0;
    if (nice(10) == -1 && errno != 0)
        return 5;
    while (!uatomic_read(&shared->started))
        sleep_us(1000);
    shmring_t *handle;
    if (shmring_open(ring, &handle) != 0)
        return 2;
    pthread_t threads[MAX_THREADS];
    struct reader_thread args[MAX_THREADS];
    for (int i = 0; i < kind->threads; i++) {
        args[i] =
            (struct reader_thread){&handle, kind, result, &shared->threads[index][i], i};
        if (pthread_create(&threads[i], NULL, reader_main, &args[i]) != 0)
            return 3;
    }
    for (int i = 0; i < kind->threads; i++)
        if (pthread_join(threads[i], NULL) != 0)
            return 4;
    /* The writer is done: the handle reaches the last generation, answers exactly
     * as it does, and maps nothing older. */
    result->final_generation = shmring_generation(handle);
    uint64_t final = uatomic_read(&shared->final_generation);
    for (size_t k = 0; k < KEYS && final <= MAX_VERSIONS; k++) {
        shmring_node_t node;
        if (shmring_lookup(handle, keys[k], key_lengths[k], &node) != 0 ||
            node.id != shared->refs[final].ids[k])
            result->final_wrong++;
    }
    result->mappings_open = test_ring_mappings(ring);
    shmring_close(handle);
    result->mappings_closed = test_ring_mappings(ring);
    return 0;
}

/* ---- The writer ----------------------------------------------------------- */

struct writer {
    shmring_writer_t *writer;
    shmring_nodeset_t *set;
    uint32_t next_id;
    uint64_t random_state;
    uint64_t generation;
    /* Versions by node count, and by what changed. */
    unsigned large_versions;
    unsigned max_nodes, min_nodes;
    unsigned adds, removes, weights, downs, ups, switches;
    uint32_t algorithms_seen;
};

static uint64_t writer_random(struct writer *w, uint64_t bound)
{
    return test_random(&w->random_state) % bound;
}

static void add_nodes(struct writer *w, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        char name[32], address[32];
        node_name(w->next_id, name, sizeof(name));
        node_address(w->next_id, address, sizeof(address));
        uint32_t id;
        ck_assert_int_eq(shmring_nodeset_add(w->set, name, address,
                                             (uint32_t)(1 + writer_random(w, 2)),
                                             SHMRING_STATE_UP, &id),
                         0);
        ck_assert_uint_eq(id, w->next_id);
        w->next_id++;
    }
    w->adds++;
}

/* The name of a random node. */
static const char *random_node(struct writer *w)
{
    shmring_node_info_t node;
    ck_assert_int_eq(shmring_nodeset_get(
                         w->set, writer_random(w, shmring_nodeset_count(w->set)), &node),
                     0);
    return node.name;
}

static size_t up_count(const shmring_nodeset_t *set)
{
    size_t up = 0;
    for (size_t i = 0; i < shmring_nodeset_count(set); i++) {
        shmring_node_info_t node;
        ck_assert_int_eq(shmring_nodeset_get(set, i, &node), 0);
        up += node.state == SHMRING_STATE_UP;
    }
    return up;
}

/* Keeps KEEP nodes (a random run of them), as a whole node set replaced by
 * `ringctl load` would: the survivors keep their ids. */
static void shrink_to(struct writer *w, size_t keep)
{
    size_t count = shmring_nodeset_count(w->set);
    size_t first = writer_random(w, count - keep + 1);
    shmring_nodeset_t *kept;
    ck_assert_int_eq(shmring_nodeset_new(&kept), 0);
    shmring_params_t params;
    shmring_nodeset_params(w->set, &params);
    ck_assert_int_eq(shmring_nodeset_set_params(kept, &params), 0);
    for (size_t i = first; i < first + keep; i++) {
        shmring_node_info_t node;
        ck_assert_int_eq(shmring_nodeset_get(w->set, i, &node), 0);
        ck_assert_int_eq(shmring_nodeset_add(kept, node.name, node.address, node.weight,
                                             node.state, NULL),
                         0);
    }
    ck_assert_int_eq(shmring_nodeset_inherit_ids(kept, w->set), 0);
    shmring_nodeset_free(w->set);
    w->set = kept;
    w->removes++;
    /* At least two nodes up. */
    for (size_t i = 0; up_count(w->set) < 2 && i < keep; i++) {
        shmring_node_info_t node;
        ck_assert_int_eq(shmring_nodeset_get(w->set, i, &node), 0);
        ck_assert_int_eq(shmring_nodeset_set_state(w->set, node.name, SHMRING_STATE_UP),
                         0);
    }
}

static void switch_algorithm(struct writer *w)
{
    static const uint32_t vnodes[] = {40, 100, 160};
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = (shmring_algorithm_t)writer_random(w, 3);
    params.hash = params.algorithm == SHMRING_ALGORITHM_KETAMA
                      ? SHMRING_HASH_MD5
                      : (shmring_hash_t)writer_random(w, 5);
    /* Large versions keep ring points (and so build time) bounded. */
    params.vnodes =
        shmring_nodeset_count(w->set) > 1000 ? 40 : vnodes[writer_random(w, 3)];
    ck_assert_int_eq(shmring_nodeset_set_params(w->set, &params), 0);
    w->switches++;
}

/* The name of a random node in STATE, or NULL if there is none. */
static const char *random_node_in(struct writer *w, shmring_state_t state)
{
    size_t count = shmring_nodeset_count(w->set);
    size_t first = writer_random(w, count);
    for (size_t i = 0; i < count; i++) {
        shmring_node_info_t node;
        ck_assert_int_eq(shmring_nodeset_get(w->set, (first + i) % count, &node), 0);
        if (node.state == state)
            return node.name;
    }
    return NULL;
}

/* One random change to a small node set, which keeps 10-300 nodes, two of them up. */
static void change_small(struct writer *w)
{
    size_t count = shmring_nodeset_count(w->set);
    uint64_t op = writer_random(w, 6);
    if (op == 0 && count >= 300)
        op = 1;
    if (op == 1 && count <= 10)
        op = 0;
    if (op == 3 && up_count(w->set) <= 2)
        op = 4;
    const char *down = op == 4 ? random_node_in(w, SHMRING_STATE_DOWN) : NULL;
    if (op == 4 && down == NULL)
        op = 2;

    if (op == 0) {
        add_nodes(w, 1 + writer_random(w, 5));
    } else if (op == 1) {
        size_t n = 1 + writer_random(w, count - 10 < 5 ? count - 10 : 5);
        for (size_t i = 0; i < n; i++)
            ck_assert_int_eq(shmring_nodeset_remove(w->set, random_node(w)), 0);
        /* Removing up nodes only could leave fewer than two up. */
        if (up_count(w->set) < 2)
            shrink_to(w, shmring_nodeset_count(w->set));
        w->removes++;
    } else if (op == 2) {
        ck_assert_int_eq(shmring_nodeset_set_weight(w->set, random_node(w),
                                                    (uint32_t)(1 + writer_random(w, 4))),
                         0);
        w->weights++;
    } else if (op == 3) {
        ck_assert_int_eq(shmring_nodeset_set_state(w->set,
                                                   random_node_in(w, SHMRING_STATE_UP),
                                                   SHMRING_STATE_DOWN),
                         0);
        w->downs++;
    } else if (op == 4) {
        ck_assert_int_eq(shmring_nodeset_set_state(w->set, down, SHMRING_STATE_UP), 0);
        w->ups++;
    } else {
        switch_algorithm(w);
    }
}

/* The stall hook: stops the writer in the middle of a publication, holding its
 * lock, until every reader thread has made progress. */
static int stall_armed;
static pid_t reader_pids[READERS];
static int stalls_done;
static uint64_t stall_generation;

static bool all_threads(bool (*done)(const struct thread_stats *, uint64_t),
                        const uint64_t *marks)
{
    for (int r = 0; r < READERS; r++)
        for (int i = 0; i < reader_kinds[r].threads; i++)
            if (!done(&shared->threads[r][i], marks[r * MAX_THREADS + i]))
                return false;
    return true;
}

static bool made_lookups(const struct thread_stats *st, uint64_t mark)
{
    return uatomic_read(&st->lookups) >= mark + STALL_LOOKUPS;
}

static bool reached_generation(const struct thread_stats *st, uint64_t generation)
{
    return uatomic_read(&st->last_generation) >= generation;
}

/* A reader that died will make no progress: fail now, not after the timeout.
 * WNOWAIT leaves it to be reaped. */
static void check_readers_alive(void)
{
    for (int r = 0; r < READERS; r++) {
        siginfo_t info = {0};
        ck_assert_int_eq(
            waitid(P_PID, (id_t)reader_pids[r], &info, WEXITED | WNOHANG | WNOWAIT), 0);
        ck_assert_msg(info.si_pid == 0, "reader %d ended (code %d, status %d)", r,
                      info.si_code, info.si_status);
    }
}

/*
 * Waits, with the writer stopped, until every reader thread is DONE. No deadline of
 * our own (timings do not belong in tests): a reader that blocked on the writer
 * would never get there, and the test case's timeout fails the test.
 */
static void wait_for_threads(bool (*done)(const struct thread_stats *, uint64_t),
                             const uint64_t *marks)
{
    while (!all_threads(done, marks)) {
        check_readers_alive();
        sleep_us(200);
    }
    stalls_done++;
}

/*
 * Waits until every reader that reopens its handle or copies the current version
 * has done so at least once. They do every few thousand lookups, and the stalls
 * guarantee only so many lookups; on a slow or loaded machine the last ones may come
 * after the last publication. No deadline, as above.
 */
static void wait_for_reopens_and_copies(void)
{
    for (;;) {
        bool done = true;
        for (int r = 0; r < READERS; r++) {
            const struct reader_result *result = &shared->readers[r];
            if ((reader_kinds[r].reopen_every != 0 &&
                 uatomic_read(&result->reopens) == 0) ||
                (reader_kinds[r].copy_every != 0 && uatomic_read(&result->copies) == 0))
                done = false;
        }
        if (done)
            return;
        check_readers_alive();
        sleep_us(200);
    }
}

static void stall_hook(enum publish_step step)
{
    uint64_t marks[READERS * MAX_THREADS];
    if (!stall_armed)
        return;
    if (step == PUBLISH_STEP_VERSION_SECTIONS_WRITTEN) {
        /* The new version is half written: readers answer from the old one. */
        for (int r = 0; r < READERS; r++)
            for (int i = 0; i < MAX_THREADS; i++)
                marks[r * MAX_THREADS + i] = uatomic_read(&shared->threads[r][i].lookups);
        wait_for_threads(made_lookups, marks);
    } else if (step == PUBLISH_STEP_GENERATION_STORED) {
        /* Published, but the writer is not done: readers switch to it. */
        for (int i = 0; i < READERS * MAX_THREADS; i++)
            marks[i] = stall_generation;
        wait_for_threads(reached_generation, marks);
    }
}

/* Publishes W's node set as the next generation, its reference stored first, and
 * checks that the published object holds exactly the snapshot built here. */
static void publish(struct writer *w, bool stall)
{
    uint64_t gen = w->generation + 1;
    ck_assert_uint_le(gen, MAX_VERSIONS);
    shmring_snapshot_t *snapshot = test_snapshot(w->set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    struct reference *ref = &shared->refs[gen];
    ref->node_count = info.node_count;
    ref->fingerprint = info.fingerprint;
    for (size_t k = 0; k < KEYS; k++) {
        shmring_node_t node;
        ck_assert_int_eq(
            shmring_snapshot_lookup(snapshot, keys[k], key_lengths[k], &node), 0);
        ref->ids[k] = node.id;
    }
    /* Release: a reader that sees `ready` sees the answers. */
    cmm_smp_wmb();
    uatomic_set(&ref->ready, 1);

    stall_armed = stall;
    stall_generation = gen;
    uint64_t published = 0;
    ck_assert_int_eq(shmring_writer_publish(w->writer, w->set, &published), 0);
    stall_armed = 0;
    ck_assert_uint_eq(published, gen);
    w->generation = gen;

    const shmring_snapshot_t *mapped;
    ck_assert_int_eq(shmring_writer_snapshot(w->writer, &mapped), 0);
    size_t size, mapped_size;
    const void *built = shmring_snapshot_data(snapshot, &size);
    const void *published_bytes = shmring_snapshot_data(mapped, &mapped_size);
    ck_assert_uint_eq(mapped_size, size);
    ck_assert_int_eq(memcmp(published_bytes, built, size), 0);
    shmring_snapshot_free(snapshot);

    unsigned count = info.node_count;
    w->max_nodes = count > w->max_nodes ? count : w->max_nodes;
    w->min_nodes = count < w->min_nodes ? count : w->min_nodes;
    w->large_versions += count >= LARGE_NODES;
    w->algorithms_seen |= 1u << (info.params.algorithm * 8 + info.params.hash);
}

START_TEST(test_consistent_under_load)
{
    /* The writer competes with seven reader threads for the processor: in the ASan
     * build each version costs it about half a second, and the TSan build (156.6 s
     * for 1,200 versions in CI, 36.8 s for ASan's 200) is slower still. 200 versions
     * still go through every phase: three large ones, switches, stalls. */
    const uint64_t versions = TEST_ASAN || TEST_TSAN ? 200 : 1200;
    struct writer w = {.random_state = 42, .min_nodes = UINT32_MAX};
    /* The readers are forked first, so that they share neither the writer's lock
     * nor its mappings. */
    pid_t readers[READERS];
    for (int r = 0; r < READERS; r++) {
        readers[r] = fork();
        ck_assert_int_ge(readers[r], 0);
        if (readers[r] == 0)
            _exit(reader_process(r));
        reader_pids[r] = readers[r];
    }
    shmring__publish_hook = stall_hook;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w.writer),
                     0);
    ck_assert_int_eq(shmring_nodeset_new(&w.set), 0);
    add_nodes(&w, 50);
    publish(&w, false);
    uatomic_set(&shared->started, 1);
    /* Let every reader thread start looking keys up. */
    uint64_t zero[READERS * MAX_THREADS] = {0};
    wait_for_threads(made_lookups, zero);
    ck_assert_int_eq(stalls_done, 1);
    stalls_done = 0;

    int64_t start = test_now_ns();
    int stalls = 0;
    /* Large phases: grow to 10,000 nodes, change them, switch algorithm, shrink. */
    const uint64_t large_at[] = {versions / 4, versions / 2, versions * 3 / 4};
    while (w.generation < versions) {
        uint64_t v = w.generation + 1, phase = UINT64_MAX;
        size_t large_index = 0;
        for (size_t i = 0; i < sizeof(large_at) / sizeof(large_at[0]); i++) {
            if (v >= large_at[i] && v < large_at[i] + 4) {
                phase = v - large_at[i];
                large_index = i;
            }
        }
        if (phase == 0) {
            add_nodes(&w, LARGE_NODES - shmring_nodeset_count(w.set));
            if (shmring_nodeset_count(w.set) > 0) {
                shmring_params_t params;
                shmring_nodeset_params(w.set, &params);
                params.vnodes = 40;
                ck_assert_int_eq(shmring_nodeset_set_params(w.set, &params), 0);
            }
        } else if (phase == 1) {
            for (int i = 0; i < 20; i++)
                ck_assert_int_eq(shmring_nodeset_set_weight(w.set, random_node(&w), 3),
                                 0);
            for (int i = 0; i < 20; i++)
                ck_assert_int_eq(
                    shmring_nodeset_set_state(w.set, random_node(&w), SHMRING_STATE_DOWN),
                    0);
            w.weights++;
            w.downs++;
        } else if (phase == 2) {
            switch_algorithm(&w);
        } else if (phase == 3) {
            shrink_to(&w, large_index == 0 ? 10 : 10 + writer_random(&w, 200));
        } else {
            int changes = 1 + (int)writer_random(&w, 3);
            for (int i = 0; i < changes; i++)
                change_small(&w);
        }
        /* Now and then (and in a large phase), stop the writer mid-publication. */
        bool stall = v % 97 == 0 || phase == 1;
        stalls += stall;
        publish(&w, stall);
        /* A short breath now and then, so that readers see most generations. */
        if (v % 8 == 0)
            sleep_us(500);
    }
    int64_t elapsed = test_now_ns() - start;
    /* The writer still holds its lock: copies need none. */
    wait_for_reopens_and_copies();
    shmring_writer_close(w.writer);
    shmring_nodeset_free(w.set);

    uatomic_set(&shared->final_generation, w.generation);
    cmm_smp_mb();
    uatomic_set(&shared->stop, 1);
    for (int r = 0; r < READERS; r++) {
        int status;
        ck_assert_int_eq(waitpid(readers[r], &status, 0), readers[r]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "reader %d: status %#x", r, status);
    }

    uint64_t lookups = 0, inconsistent = 0, changes = 0, reopens = 0, copies = 0;
    int64_t max_gap = 0, max_switch_gap = 0;
    int threads = 0;
    for (int r = 0; r < READERS; r++) {
        const struct reader_result *result = &shared->readers[r];
        for (int i = 0; i < reader_kinds[r].threads; i++) {
            const struct thread_stats *st = &shared->threads[r][i];
            ck_assert_msg(st->inconsistent == 0,
                          "reader %d thread %d: %llu inconsistent answers, the first "
                          "node %llu for key %llu between generations %llu and %llu",
                          r, i, (unsigned long long)st->inconsistent,
                          (unsigned long long)st->bad_id, (unsigned long long)st->bad_key,
                          (unsigned long long)st->bad_before,
                          (unsigned long long)st->bad_after);
            ck_assert_uint_eq(st->errors, 0);
            ck_assert_uint_eq(st->backwards, 0);
            ck_assert_uint_gt(st->lookups, 0);
            lookups += st->lookups;
            inconsistent += st->inconsistent;
            changes += st->generation_changes;
            max_gap = st->max_gap_ns > max_gap ? st->max_gap_ns : max_gap;
            if (st->max_switch_gap_ns > max_switch_gap)
                max_switch_gap = st->max_switch_gap_ns;
            threads++;
        }
        ck_assert_uint_eq(result->final_generation, w.generation);
        ck_assert_uint_eq(result->final_wrong, 0);
        /* The control object and the current version; nothing once closed. */
        ck_assert_int_eq(result->mappings_open, 2);
        ck_assert_int_eq(result->mappings_closed, 0);
        ck_assert_msg(result->open_failures == 0,
                      "reader %d: shmring_open() failed %llu times under load (last: %s)",
                      r, (unsigned long long)result->open_failures,
                      shmring_strerror(result->last_open_error));
        ck_assert_uint_eq(result->copy_mismatches, 0);
        reopens += result->reopens;
        copies += result->copies;
    }
    ck_assert_uint_gt(reopens, 0);
    ck_assert_uint_gt(copies, 0);
    /* Every stall saw every reader thread make progress while the writer, holding
     * its lock, was stopped half-way through writing, and switch to the new
     * generation before the writer finished publishing it. */
    ck_assert_int_eq(stalls_done, 2 * stalls);
    ck_assert_uint_eq(w.large_versions, 9);
    ck_assert_uint_eq(w.max_nodes, LARGE_NODES);
    ck_assert_uint_eq(w.min_nodes, 10);
    ck_assert_uint_gt(w.switches, 10);
    ck_assert_uint_gt(w.downs, 10);
    ck_assert_uint_gt(w.ups, 10);
    /* Every algorithm, and ring and maglev with more than one hash. */
    ck_assert_uint_ne(w.algorithms_seen & 0xff, 0);
    ck_assert_uint_ne(w.algorithms_seen & 0xff00, 0);
    ck_assert_uint_ne(w.algorithms_seen & 0xff0000, 0);
    ck_assert_int_ge(__builtin_popcount(w.algorithms_seen), 6);

    printf("stress: %d readers (%d threads), %llu versions (%u-%u nodes, %u with %d; %u "
           "algorithm switches, %d algorithm-hash pairs) in %.1f s, %llu lookups "
           "checked, %llu inconsistent, "
           "%llu generation changes seen, %llu reopens, %llu copies; %d stalls of "
           "the writer mid-publication passed; longest gap between two lookups of a "
           "thread %.1f ms (%.1f ms with a version switch, reopen or copy between)\n",
           READERS, threads, (unsigned long long)w.generation, w.min_nodes, w.max_nodes,
           w.large_versions, LARGE_NODES, w.switches,
           __builtin_popcount(w.algorithms_seen), (double)elapsed / 1e9,
           (unsigned long long)lookups, (unsigned long long)inconsistent,
           (unsigned long long)changes, (unsigned long long)reopens,
           (unsigned long long)copies, stalls, (double)max_gap / 1e6,
           (double)max_switch_gap / 1e6);
}
END_TEST

/*
 * A worker that starts while versions are being published: shmring_open() reads the
 * generation, then opens that version, which a writer may have superseded and
 * unlinked in between. The ring exists all along, so every open must succeed. The
 * opens start once the writer has published (it says so through a pipe), and go on
 * past their number until one saw a newer generation than the first, however the
 * scheduler shares the machine between the two processes.
 */
START_TEST(test_open_while_publishing)
{
    /* The sanitizer builds open several times slower. */
    const int opens = TEST_ASAN || TEST_TSAN ? 5000 : 20000;
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.vnodes = 4;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    shmring_writer_close(w);

    int publishing[2];
    ck_assert_int_eq(pipe(publishing), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* Publish tiny versions as fast as possible until told to stop. */
        close(publishing[0]);
        if (shmring_writer_open(ring, 0, NULL, &w) != 0)
            _exit(2);
        if (shmring_writer_publish(w, set, NULL) != 0 ||
            write(publishing[1], "p", 1) != 1)
            _exit(3);
        close(publishing[1]);
        while (!uatomic_read(&shared->stop))
            if (shmring_writer_publish(w, set, NULL) != 0)
                _exit(3);
        uatomic_set(&shared->final_generation, shmring_writer_generation(w));
        shmring_writer_close(w);
        _exit(0);
    }
    close(publishing[1]);
    char byte;
    ck_assert_int_eq(read(publishing[0], &byte, 1), 1);
    close(publishing[0]);
    int failures = 0, last_error = 0, done = 0;
    uint64_t first = 0, last = 0;
    for (; done < opens || last <= first; done++) {
        if (done >= opens && done % 1000 == 0) {
            /* A writer that died will publish no more: fail now. */
            siginfo_t info = {0};
            ck_assert_int_eq(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT),
                             0);
            ck_assert_msg(info.si_pid == 0, "the writer ended (code %d, status %d)",
                          info.si_code, info.si_status);
        }
        shmring_t *r;
        int err = shmring_open(ring, &r);
        if (err != 0) {
            failures++;
            last_error = err;
            continue;
        }
        uint64_t gen = shmring_generation(r);
        first = first == 0 ? gen : first;
        last = gen;
        shmring_close(r);
    }
    uatomic_set(&shared->stop, 1);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("stress: %d opens while %llu versions were published, %d failed\n", done,
           (unsigned long long)uatomic_read(&shared->final_generation), failures);
    fflush(stdout);
    ck_assert_msg(failures == 0, "%d of %d opens failed, the last with %s", failures,
                  done, shmring_strerror(last_error));
    /* The writer really published meanwhile. */
    ck_assert_uint_gt(last, first);
    shmring_nodeset_free(set);
}
END_TEST

static const struct test_fixture fixture_900 = {setup, teardown, 900};
static const struct test_fixture fixture_300 = {setup, teardown, 300};

static Suite *stress_suite(void)
{
    Suite *s = suite_create("stress");
    TEST_CASE_WITH(s, "load", &fixture_900, test_consistent_under_load);
    TEST_CASE_WITH(s, "open", &fixture_300, test_open_while_publishing);
    return s;
}

int main(void)
{
    return test_run_suite(stress_suite());
}
