/*
 * Writer crashes: a writer killed at every step of creating a ring, opening a writer
 * and publishing a version (through the publisher's test hook), and at random
 * instants of large publications. After each kill, readers old and new answer
 * exactly as the old or the new version does, the next writer gets the lock and
 * publishes, and /dev/shm holds exactly the control object, the current version and
 * whatever the model of the protocol says the killed writer left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "control_internal.h"
#include "publish_internal.h"
#include "test_support.h"

#define KEYS 256
#define SMALL_MODELS 6
#define LARGE_MODELS 3
#define LARGE_NODES 10000
#define MAX_ORPHANS 4

/* A node set with its snapshot and the answers that snapshot gives for the keys: the
 * reference every reader answer is checked against. */
struct model {
    shmring_nodeset_t *set;
    void *snapshot;
    size_t size;
    uint32_t ids[KEYS];
};

/* What the protocol says the ring holds: the current generation and its model, and
 * the version objects a killed writer left behind. */
struct ring_state {
    uint64_t generation;
    const struct model *current;
    uint64_t orphans[MAX_ORPHANS];
    size_t orphan_count;
    /* A reader opened before any kill, kept across all of them. */
    shmring_t *live;
};

/* Written by the writer child, read by the test after the child is gone. */
struct trace {
    /* The last step the writer reached (-1: none). */
    int last_step;
    /* The generation shmring_writer_open() found. */
    uint64_t open_generation;
    /* When the writer started publishing, and reached each step (CLOCK_MONOTONIC). */
    int64_t start_ns;
    int64_t step_ns[PUBLISH_STEP_COUNT];
};

static char ring[SHMRING_RING_NAME_MAX + 1];
static char keys[KEYS][32];
static size_t key_lengths[KEYS];
static struct model small[SMALL_MODELS];
static struct trace *trace;
static uint64_t random_state;

/* The writer child's hook: record the step, and stop or kill itself at one. */
static int kill_step = -1;
static int kill_signal;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void crash_hook(enum publish_step step)
{
    trace->step_ns[step] = now_ns();
    uatomic_set(&trace->last_step, (int)step);
    if ((int)step == kill_step)
        raise(kill_signal);
}

static const char *const step_names[PUBLISH_STEP_COUNT] = {
    "control created", "control before magic", "open locked",       "open cleaned",
    "version created", "version owned",        "version sized",     "half written",
    "written",         "metadata stored",      "generation stored", "old unlinked"};

/* ---- Models --------------------------------------------------------------- */

static void model_init(struct model *m, size_t nodes, shmring_algorithm_t algorithm,
                       shmring_hash_t hash, uint32_t vnodes, uint64_t seed)
{
    m->set = test_nodeset(nodes, algorithm, hash);
    shmring_params_t params;
    shmring_nodeset_params(m->set, &params);
    params.vnodes = vnodes;
    ck_assert_int_eq(shmring_nodeset_set_params(m->set, &params), 0);
    /* A few weights and down nodes, so that models differ in more than size. */
    for (size_t i = 0; i < nodes; i += 7) {
        shmring_node_info_t node;
        ck_assert_int_eq(shmring_nodeset_get(m->set, i, &node), 0);
        uint64_t r = test_random(&seed);
        if (r % 3 == 0 && i != 0)
            ck_assert_int_eq(
                shmring_nodeset_set_state(m->set, node.name, SHMRING_STATE_DOWN), 0);
        else
            ck_assert_int_eq(
                shmring_nodeset_set_weight(m->set, node.name, (uint32_t)(1 + r % 4)), 0);
    }
    m->snapshot = test_build(m->set, &m->size);
    for (size_t k = 0; k < KEYS; k++) {
        shmring_node_t node;
        ck_assert_int_eq(
            shmring_snapshot_lookup(m->snapshot, keys[k], key_lengths[k], &node), 0);
        m->ids[k] = node.id;
    }
}

static void model_free(struct model *m)
{
    shmring_nodeset_free(m->set);
    free(m->snapshot);
    memset(m, 0, sizeof(*m));
}

static void small_models_init(void)
{
    model_init(&small[0], 10, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 160, 1);
    model_init(&small[1], 37, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 160, 2);
    model_init(&small[2], 23, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 160, 3);
    model_init(&small[3], 64, SHMRING_ALGORITHM_RING, SHMRING_HASH_MURMUR3, 40, 4);
    model_init(&small[4], 12, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_FNV1A, 160, 5);
    model_init(&small[5], 99, SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, 100, 6);
    /* Old and new must be told apart by their answers, not only by generation. */
    for (size_t a = 0; a < SMALL_MODELS; a++)
        for (size_t b = a + 1; b < SMALL_MODELS; b++)
            ck_assert_int_ne(memcmp(small[a].ids, small[b].ids, sizeof(small[a].ids)), 0);
}

/* A small model other than CURRENT. */
static const struct model *next_small(const struct model *current)
{
    for (;;) {
        const struct model *m = &small[test_random(&random_state) % SMALL_MODELS];
        if (m != current)
            return m;
    }
}

/* ---- Fixture -------------------------------------------------------------- */

static void setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("crash"));
    for (uint64_t k = 0; k < KEYS; k++)
        key_lengths[k] = test_key(keys[k], k * 7919);
    trace = mmap(NULL, sizeof(*trace), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
    ck_assert_ptr_ne(trace, MAP_FAILED);
    random_state = 20261130;
    small_models_init();
}

/* Counts RING_NAME's objects in /dev/shm: whether the control object exists, and the
 * version generations, sorted, into GENS (room for MAX). */
static size_t ring_objects(const char *ring_name, bool *control, uint64_t *gens,
                           size_t max)
{
    char control_entry[OBJECT_NAME_MAX];
    int prefix = snprintf(control_entry, sizeof(control_entry), "shmring.%s", ring_name);
    *control = false;
    size_t count = 0;
    DIR *dir = opendir("/dev/shm");
    ck_assert_ptr_nonnull(dir);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, control_entry) == 0) {
            *control = true;
            continue;
        }
        const char *rest = entry->d_name + prefix;
        if (strncmp(entry->d_name, control_entry, (size_t)prefix) != 0 ||
            rest[0] != '.' || rest[1] == '\0' ||
            strspn(rest + 1, "0123456789") != strlen(rest + 1))
            continue;
        ck_assert_uint_lt(count, max);
        uint64_t gen = strtoull(rest + 1, NULL, 10);
        size_t i = count++;
        for (; i > 0 && gens[i - 1] > gen; i--)
            gens[i] = gens[i - 1];
        gens[i] = gen;
    }
    closedir(dir);
    return count;
}

static void teardown(void)
{
    int err = shmring_ring_destroy(ring);
    ck_assert(err == 0 || err == SHMRING_ENOENT);
    bool control;
    uint64_t gens[8];
    ck_assert_uint_eq(ring_objects(ring, &control, gens, 8), 0);
    ck_assert(!control);
    for (size_t i = 0; i < SMALL_MODELS; i++)
        model_free(&small[i]);
    munmap(trace, sizeof(*trace));
}

/* ---- The writer child ----------------------------------------------------- */

enum child_exit {
    CHILD_DONE = 0,
    CHILD_OPEN_FAILED = 10,
    CHILD_PUBLISH_FAILED = 11,
    CHILD_PIPE_FAILED = 12,
};

/*
 * Forks a writer that opens RING_NAME and publishes SET (if not NULL), with the hook
 * armed to raise SIGNAL at STEP (-1: at no step). With READY_FD >= 0 it writes a byte
 * there between opening and publishing, and after publishing waits to be killed.
 */
static pid_t spawn_writer(const char *ring_name, unsigned flags,
                          const shmring_create_options_t *options,
                          const shmring_nodeset_t *set, int step, int signal_number,
                          int ready_fd)
{
    uatomic_set(&trace->last_step, -1);
    trace->open_generation = UINT64_MAX;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid != 0)
        return pid;
    /* A creator's mode then differs from what shm_open() gives it. */
    umask(022);
    kill_step = step;
    kill_signal = signal_number;
    shmring__publish_hook = crash_hook;
    shmring_writer_t *w;
    if (shmring_writer_open(ring_name, flags, options, &w) != 0)
        _exit(CHILD_OPEN_FAILED);
    trace->open_generation = shmring_writer_generation(w);
    trace->start_ns = now_ns();
    if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
        _exit(CHILD_PIPE_FAILED);
    if (set != NULL && shmring_writer_publish(w, set, NULL) != 0)
        _exit(CHILD_PUBLISH_FAILED);
    while (ready_fd >= 0)
        pause();
    shmring_writer_close(w);
    _exit(CHILD_DONE);
}

static void wait_stopped(pid_t pid)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, WUNTRACED), pid);
    ck_assert_msg(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP,
                  "writer not stopped: status %#x", status);
}

static void wait_killed(pid_t pid)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "writer not killed: status %#x", status);
}

static void wait_exited(pid_t pid)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_DONE,
                  "writer failed: status %#x", status);
}

/* ---- Checks --------------------------------------------------------------- */

/* The writer lock is held by someone else (HELD), or free. */
static void check_lock(const char *ring_name, bool held)
{
    char path[OBJECT_NAME_MAX + 16];
    snprintf(path, sizeof(path), "/dev/shm/shmring.%s", ring_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    if (held) {
        ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
        ck_assert_int_eq(errno, EWOULDBLOCK);
    } else {
        ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    }
    close(fd); /* also releases the lock */
}

/* /dev/shm holds exactly S's control object, current version and orphans. */
static void check_objects(const struct ring_state *s)
{
    uint64_t want[MAX_ORPHANS + 1];
    size_t n = 0;
    if (s->generation != 0)
        want[n++] = s->generation;
    for (size_t i = 0; i < s->orphan_count; i++) {
        size_t j = n++;
        for (; j > 0 && want[j - 1] > s->orphans[i]; j--)
            want[j] = want[j - 1];
        want[j] = s->orphans[i];
    }
    bool control;
    uint64_t got[16];
    ck_assert_uint_eq(ring_objects(ring, &control, got, 16), n);
    ck_assert(control);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(got[i], want[i]);
}

/* R answers every key exactly as S's current model does, at S's generation. */
static void check_answers(shmring_t *r, const struct ring_state *s)
{
    ck_assert_uint_eq(shmring_generation(r), s->generation);
    /* Check records every passing assertion with a write(): count, then assert. */
    size_t wrong = 0, first = KEYS;
    for (size_t k = 0; k < KEYS; k++) {
        shmring_node_t node;
        if (shmring_lookup(r, keys[k], key_lengths[k], &node) != 0 ||
            node.id != s->current->ids[k]) {
            first = wrong++ == 0 ? k : first;
        }
    }
    ck_assert_msg(wrong == 0, "%zu of %d keys answered wrong, the first key %zu", wrong,
                  KEYS, first);
}

/* The control object says S's generation, its version object holds exactly S's
 * snapshot, and a fresh and the live reader answer from it. */
static void check_readers(const struct ring_state *s)
{
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, &status), 0);
    ck_assert_uint_eq(status.generation, s->generation);
    uint64_t gen;
    void *buffer;
    size_t size;
    ck_assert_int_eq(shmring_ring_snapshot(ring, &gen, &buffer, &size), 0);
    ck_assert_uint_eq(gen, s->generation);
    ck_assert_uint_eq(size, s->current->size);
    ck_assert_int_eq(memcmp(buffer, s->current->snapshot, size), 0);
    free(buffer);

    shmring_t *fresh;
    ck_assert_int_eq(shmring_open(ring, &fresh), 0);
    check_answers(fresh, s);
    shmring_close(fresh);
    check_answers(s->live, s);
}

static void check_state(const struct ring_state *s)
{
    check_objects(s);
    check_readers(s);
}

/* Publishes M as the first version of a new ring and opens the live reader. */
static void state_init(struct ring_state *s, const struct model *m)
{
    memset(s, 0, sizeof(*s));
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_int_eq(shmring_writer_publish(w, m->set, &s->generation), 0);
    ck_assert_uint_eq(s->generation, 1);
    shmring_writer_close(w);
    s->current = m;
    ck_assert_int_eq(shmring_open(ring, &s->live), 0);
    check_state(s);
}

/* The next writer: gets the lock, finds S's generation, removes the orphans, and
 * publishes NEXT as the next generation. */
static void recover(struct ring_state *s, const struct model *next)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), 0);
    ck_assert_uint_eq(shmring_writer_generation(w), s->generation);
    s->orphan_count = 0;
    check_objects(s);
    uint64_t gen = 0;
    ck_assert_int_eq(shmring_writer_publish(w, next->set, &gen), 0);
    ck_assert_uint_eq(gen, s->generation + 1);
    shmring_writer_close(w);
    s->generation = gen;
    s->current = next;
    check_state(s);
}

static void add_orphan(struct ring_state *s, uint64_t gen)
{
    for (size_t i = 0; i < s->orphan_count; i++)
        if (s->orphans[i] == gen)
            return;
    ck_assert_uint_lt(s->orphan_count, MAX_ORPHANS);
    s->orphans[s->orphan_count++] = gen;
}

/* What a writer publishing NEXT leaves when killed right after LAST_STEP. */
static void apply_kill(struct ring_state *s, int last_step, const struct model *next)
{
    uint64_t old = s->generation;
    if (last_step >= PUBLISH_STEP_OPEN_CLEANED)
        s->orphan_count = 0;
    if (last_step >= PUBLISH_STEP_VERSION_CREATED &&
        last_step < PUBLISH_STEP_GENERATION_STORED)
        add_orphan(s, old + 1);
    if (last_step >= PUBLISH_STEP_GENERATION_STORED) {
        s->generation = old + 1;
        s->current = next;
        if (last_step < PUBLISH_STEP_OLD_UNLINKED)
            add_orphan(s, old);
    }
}

/* The unpublished version GEN of a writer stopped at STEP, publishing M: its size,
 * mode and bytes so far. */
static void check_unpublished(uint64_t gen, int step, const struct model *m)
{
    char name[OBJECT_NAME_MAX], path[OBJECT_NAME_MAX + 16];
    shmring__version_name(ring, gen, name);
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    /* Created 0600, then given the read bits of the control object's mode (0644). */
    ck_assert_uint_eq(st.st_mode & 07777,
                      step == PUBLISH_STEP_VERSION_CREATED ? 0600 : 0444);
    if (step <= PUBLISH_STEP_VERSION_OWNED) {
        ck_assert_int_eq(st.st_size, 0);
        close(fd);
        return;
    }
    ck_assert_int_eq(st.st_size, (off_t)m->size);
    const unsigned char *bytes = mmap(NULL, m->size, PROT_READ, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(bytes, MAP_FAILED);
    close(fd);
    size_t written = step == PUBLISH_STEP_VERSION_SIZED          ? 0
                     : step == PUBLISH_STEP_VERSION_HALF_WRITTEN ? m->size / 2
                                                                 : m->size;
    const unsigned char *want = m->snapshot;
    ck_assert_int_eq(memcmp(bytes, want, written), 0);
    size_t zeros = 0;
    while (written + zeros < m->size && bytes[written + zeros] == 0)
        zeros++;
    ck_assert_uint_eq(written + zeros, m->size);
    munmap((void *)bytes, m->size);
}

/* ---- Kills at each step of opening a writer and publishing ---------------- */

START_TEST(test_kill_at_each_step)
{
    const int trials = TEST_ASAN ? 10 : 24;
    struct ring_state s;
    state_init(&s, &small[0]);
    int kills = 0, stops = 0;
    for (int trial = 0; trial < trials; trial++) {
        for (int step = PUBLISH_STEP_OPEN_LOCKED; step < PUBLISH_STEP_COUNT; step++) {
            const struct model *next = next_small(s.current);
            bool stop = (trial + step) % 2 == 0;
            pid_t pid = spawn_writer(ring, 0, NULL, next->set, step,
                                     stop ? SIGSTOP : SIGKILL, -1);
            struct ring_state after = s;
            apply_kill(&after, step, next);
            if (stop) {
                /* The writer is frozen at STEP with the lock held: readers answer
                 * and the ring is exactly in the state the kill will leave. */
                wait_stopped(pid);
                ck_assert_int_eq(uatomic_read(&trace->last_step), step);
                check_lock(ring, true);
                check_state(&after);
                if (step >= PUBLISH_STEP_VERSION_CREATED &&
                    step < PUBLISH_STEP_GENERATION_STORED)
                    check_unpublished(s.generation + 1, step, next);
                ck_assert_int_eq(kill(pid, SIGKILL), 0);
                stops++;
            }
            wait_killed(pid);
            kills++;
            ck_assert_int_eq(uatomic_read(&trace->last_step), step);
            ck_assert_uint_eq(trace->open_generation, step > PUBLISH_STEP_OPEN_CLEANED
                                                          ? s.generation
                                                          : UINT64_MAX);
            s = after;
            check_state(&s);
            /* Half the time the next writer comes at once; otherwise the next kill
             * meets what this one left behind. */
            if (test_random(&random_state) % 2 == 0 || step == PUBLISH_STEP_COUNT - 1)
                recover(&s, next_small(s.current));
        }
    }
    recover(&s, next_small(s.current));
    printf("crash: %d kills at %d steps (%d stopped and inspected first), ring at "
           "generation %llu, no orphans\n",
           kills, PUBLISH_STEP_COUNT - PUBLISH_STEP_OPEN_LOCKED, stops,
           (unsigned long long)s.generation);
    shmring_close(s.live);
}
END_TEST

/* ---- Kills at random instants of large publications ----------------------- */

/* Looks keys up with the live reader until DEADLINE, or until the writer has
 * reached STEP, while it publishes NEXT over S: every answer is the old or the new
 * version's, and the generation never goes backwards. Returns the number of lookups. */
static long lookups_until(const struct ring_state *s, const struct model *next,
                          int64_t deadline, int step)
{
    long count = 0, wrong = 0, backwards = 0;
    uint64_t last = s->generation;
    do {
        size_t k = (size_t)count % KEYS;
        uint64_t before = shmring_generation(s->live);
        shmring_node_t node;
        int err = shmring_lookup(s->live, keys[k], key_lengths[k], &node);
        uint64_t after = shmring_generation(s->live);
        backwards += before < last || after < before;
        /* The lookup answered from a generation in [before, after]. */
        if (err != 0 || after > s->generation + 1 ||
            (node.id != (before == s->generation ? s->current : next)->ids[k] &&
             node.id != (after == s->generation ? s->current : next)->ids[k]))
            wrong++;
        last = after;
        count++;
    } while (now_ns() < deadline && uatomic_read(&trace->last_step) < step);
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_eq(backwards, 0);
    return count;
}

START_TEST(test_kill_at_random_instants)
{
    const int trials = TEST_ASAN ? 18 : 48;
    struct model large[LARGE_MODELS];
    model_init(&large[0], LARGE_NODES, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 40, 7);
    model_init(&large[1], LARGE_NODES, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 160,
               8);
    /* Ketama always has 160 points per node: fewer nodes keep its build short. */
    model_init(&large[2], LARGE_NODES / 4, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5,
               160, 9);

    struct ring_state s;
    state_init(&s, &small[0]);
    int reached[PUBLISH_STEP_COUNT] = {0};
    int published = 0;
    long lookups = 0;
    /* The shortest and longest time from the start of a publication to its
     * version object's creation (the snapshot build), and of the rest. */
    int64_t build_ns[2] = {INT64_MAX, 0}, rest_ns[2] = {INT64_MAX, 0};
    for (int trial = 0; trial < trials; trial++) {
        int model = trial % LARGE_MODELS;
        const struct model *next = &large[model];
        int ready[2];
        ck_assert_int_eq(pipe(ready), 0);
        pid_t pid = spawn_writer(ring, 0, NULL, next->set, -1, 0, ready[1]);
        char byte;
        ck_assert_int_eq(read(ready[0], &byte, 1), 1);
        close(ready[0]);
        close(ready[1]);
        /* Wait (looking keys up) until the writer has passed a random step, from
         * the start of the build to the version written whole, then kill it after a
         * random delay (0-300 ms from the start, else 0-3 ms): instants inside the
         * build, the system calls and between steps, where no hook can stop. */
        uint64_t r = test_random(&random_state);
        int anchor =
            PUBLISH_STEP_OPEN_CLEANED +
            (int)(r % (PUBLISH_STEP_VERSION_WRITTEN - PUBLISH_STEP_OPEN_CLEANED + 1));
        int64_t delay =
            (int64_t)((r >> 32) %
                      (anchor == PUBLISH_STEP_OPEN_CLEANED ? 300000000 : 3000000));
        lookups += lookups_until(&s, next, INT64_MAX, anchor);
        lookups += lookups_until(&s, next, now_ns() + delay, PUBLISH_STEP_COUNT);
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        wait_killed(pid);
        ck_assert_uint_eq(trace->open_generation, s.generation);

        int last = uatomic_read(&trace->last_step);
        ck_assert_int_ge(last, PUBLISH_STEP_OPEN_CLEANED);
        reached[last]++;
        if (last >= PUBLISH_STEP_VERSION_CREATED) {
            int64_t build =
                trace->step_ns[PUBLISH_STEP_VERSION_CREATED] - trace->start_ns;
            build_ns[0] = build < build_ns[0] ? build : build_ns[0];
            build_ns[1] = build > build_ns[1] ? build : build_ns[1];
        }
        if (last == PUBLISH_STEP_OLD_UNLINKED) {
            int64_t rest = trace->step_ns[PUBLISH_STEP_OLD_UNLINKED] -
                           trace->step_ns[PUBLISH_STEP_VERSION_CREATED];
            rest_ns[0] = rest < rest_ns[0] ? rest : rest_ns[0];
            rest_ns[1] = rest > rest_ns[1] ? rest : rest_ns[1];
        }
        shmring_ring_status_t status;
        ck_assert_int_eq(shmring_ring_status(ring, &status), 0);
        /* Killed after the version was written, the generation store may or may
         * not have happened; everywhere else the step says which. */
        if (last < PUBLISH_STEP_VERSION_WRITTEN)
            ck_assert_uint_eq(status.generation, s.generation);
        else if (last > PUBLISH_STEP_VERSION_WRITTEN)
            ck_assert_uint_eq(status.generation, s.generation + 1);
        else
            ck_assert(status.generation == s.generation ||
                      status.generation == s.generation + 1);
        uint64_t old = s.generation;
        if (status.generation == old + 1) {
            s.generation = old + 1;
            s.current = next;
            published++;
        }
        /* The old version until the unlink, the new one from its creation; a kill
         * between a step and its hook leaves either. */
        bool control;
        uint64_t gens[8];
        size_t n = ring_objects(ring, &control, gens, 8);
        ck_assert(control);
        ck_assert_uint_ge(n, 1);
        ck_assert_uint_le(n, 2);
        bool has_old = gens[0] == old;
        bool has_new = gens[n - 1] == old + 1;
        ck_assert_uint_eq(n, (size_t)has_old + (size_t)has_new);
        if (s.generation == old)
            ck_assert(has_old);
        else
            ck_assert(has_new);
        if (last >= PUBLISH_STEP_VERSION_CREATED)
            ck_assert(has_new);
        if (last < PUBLISH_STEP_GENERATION_STORED)
            ck_assert(has_old);
        if (last == PUBLISH_STEP_OLD_UNLINKED)
            ck_assert(!has_old);
        s.orphan_count = 0;
        if (has_old && s.generation != old)
            add_orphan(&s, old);
        if (has_new && s.generation == old)
            add_orphan(&s, old + 1);
        check_state(&s);
        recover(&s, next_small(s.current));
    }
    printf("crash: %d kills at random instants of %d- and %d-node publications (build "
           "%.0f-%.0f ms, the rest %.0f-%.0f ms), %d published, %ld live lookups checked "
           "meanwhile; killed after",
           trials, LARGE_NODES / 4, LARGE_NODES, (double)build_ns[0] / 1e6,
           (double)build_ns[1] / 1e6, (double)rest_ns[0] / 1e6, (double)rest_ns[1] / 1e6,
           published, lookups);
    for (int i = 0; i < PUBLISH_STEP_COUNT; i++)
        if (reached[i] > 0)
            printf("%s %s: %d", i == PUBLISH_STEP_OPEN_CLEANED ? "" : ",", step_names[i],
                   reached[i]);
    printf("\n");
    shmring_close(s.live);
    for (int i = 0; i < LARGE_MODELS; i++)
        model_free(&large[i]);
}
END_TEST

/* ---- Kills while the control object is being created ---------------------- */

START_TEST(test_kill_while_creating)
{
    const int trials = TEST_ASAN ? 6 : 16;
    /* 0660 is not what the creator's umask of 022 lets shm_open() create. */
    shmring_create_options_t options = {.mode = 0660, .group = (gid_t)-1};
    for (int trial = 0; trial < trials; trial++) {
        /* A new ring each time; the fixture's name is the last one. */
        if (trial > 0) {
            ck_assert_int_eq(shmring_ring_destroy(ring), 0);
            snprintf(ring, sizeof(ring), "%s", test_ring_name("crash"));
        }
        int step =
            trial % 2 ? PUBLISH_STEP_CONTROL_BEFORE_MAGIC : PUBLISH_STEP_CONTROL_CREATED;
        bool stop = trial % 4 >= 2;
        pid_t pid = spawn_writer(ring, SHMRING_WRITER_CREATE, &options, small[1].set,
                                 step, stop ? SIGSTOP : SIGKILL, -1);
        if (stop) {
            wait_stopped(pid);
            /* Before the lock is taken nobody holds it; after, the creator does. */
            check_lock(ring, step == PUBLISH_STEP_CONTROL_BEFORE_MAGIC);
            ck_assert_int_eq(kill(pid, SIGKILL), 0);
        }
        wait_killed(pid);
        ck_assert_int_eq(uatomic_read(&trace->last_step), step);

        /* The object exists, empty or without its magic: not yet a ring. */
        char path[OBJECT_NAME_MAX + 16];
        snprintf(path, sizeof(path), "/dev/shm/shmring.%s", ring);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_int_eq(st.st_size,
                         step == PUBLISH_STEP_CONTROL_CREATED ? 0 : CONTROL_SIZE);
        shmring_t *r;
        ck_assert_int_eq(shmring_open(ring, &r), SHMRING_ENOENT);

        /* The next writer completes it, whether or not it asks to create. */
        shmring_writer_t *w;
        ck_assert_int_eq(shmring_writer_open(ring, trial % 3 ? SHMRING_WRITER_CREATE : 0,
                                             &options, &w),
                         0);
        ck_assert_uint_eq(shmring_writer_generation(w), 0);
        ck_assert_int_eq(shmring_open(ring, &r), 0);
        ck_assert_uint_eq(shmring_generation(r), 0);
        shmring_node_t node;
        ck_assert_int_eq(shmring_lookup(r, keys[0], key_lengths[0], &node),
                         SHMRING_EEMPTY);
        uint64_t gen = 0;
        ck_assert_int_eq(shmring_writer_publish(w, small[2].set, &gen), 0);
        ck_assert_uint_eq(gen, 1);
        shmring_writer_close(w);
        struct ring_state s = {.generation = 1, .current = &small[2], .live = r};
        check_state(&s);
        shmring_ring_status_t status;
        ck_assert_int_eq(shmring_ring_status(ring, &status), 0);
        /* Whoever sizes the object as a creator gives it the mode asked for; a
         * writer that does not create keeps what shm_open() made. */
        bool sized_by_creator = step == PUBLISH_STEP_CONTROL_BEFORE_MAGIC || trial % 3;
        ck_assert_uint_eq(status.mode, sized_by_creator ? 0660 : 0640);
        shmring_close(r);
    }
}
END_TEST

/*
 * Two creators race: A creates the control object and is stopped before it takes the
 * lock; B opens the object A created, completes it and publishes generation 1; then
 * A goes on. A must find generation 1, not reset the ring to 0 and remove B's version.
 */
START_TEST(test_creators_race)
{
    pid_t a = spawn_writer(ring, SHMRING_WRITER_CREATE, NULL, small[3].set,
                           PUBLISH_STEP_CONTROL_CREATED, SIGSTOP, -1);
    wait_stopped(a);
    shmring_writer_t *b;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &b), 0);
    uint64_t gen = 0;
    ck_assert_int_eq(shmring_writer_publish(b, small[4].set, &gen), 0);
    ck_assert_uint_eq(gen, 1);
    shmring_writer_close(b);
    struct ring_state s = {.generation = 1, .current = &small[4]};
    ck_assert_int_eq(shmring_open(ring, &s.live), 0);
    check_state(&s);

    ck_assert_int_eq(kill(a, SIGCONT), 0);
    wait_exited(a);
    ck_assert_uint_eq(trace->open_generation, 1);
    s.generation = 2;
    s.current = &small[3];
    check_state(&s);
    shmring_close(s.live);
}
END_TEST

static Suite *crash_suite(void)
{
    Suite *s = suite_create("crash");
    TCase *steps = tcase_create("steps");
    tcase_add_checked_fixture(steps, setup, teardown);
    tcase_add_test(steps, test_kill_at_each_step);
    tcase_add_test(steps, test_kill_while_creating);
    tcase_add_test(steps, test_creators_race);
    tcase_set_timeout(steps, 120);
    suite_add_tcase(s, steps);

    TCase *random = tcase_create("random");
    tcase_add_checked_fixture(random, setup, teardown);
    tcase_add_test(random, test_kill_at_random_instants);
    tcase_set_timeout(random, 180);
    suite_add_tcase(s, random);
    return s;
}

int main(void)
{
    return test_run_suite(crash_suite());
}
