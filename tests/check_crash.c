/*
 * Writer crashes: a writer killed at every step of creating a ring, opening a writer
 * and publishing a version, and a destroyer killed at every step of destroying a
 * ring (through the publisher's test hook), and writers killed at random instants of
 * large publications. After each kill, readers old and new answer exactly as the old
 * or the new version does (or find no ring, when it was being created or destroyed),
 * the next writer gets the lock and publishes, and the ring's directory holds exactly
 * the control object, the lock, the current version and whatever the model of the
 * protocol says the killed writer left behind, with no hidden directory of the ring
 * left once the next writer has opened it.
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
#include "ring_dir_internal.h"
#include "snapshot_internal.h"
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

/* What the protocol says the ring holds: the current generation and its model (NULL
 * at generation 0), and the version objects a killed writer left behind. */
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
    /* What shmring_writer_publish() returned (1: not called). */
    int error;
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

static void crash_hook(enum publish_step step)
{
    trace->step_ns[step] = test_now_ns();
    uatomic_set(&trace->last_step, (int)step);
    if ((int)step == kill_step)
        raise(kill_signal);
}

static const char *const step_names[PUBLISH_STEP_COUNT] = {
    [PUBLISH_STEP_DESTROY_RENAMED] = "destroy renamed",
    [PUBLISH_STEP_DESTROY_MARKED] = "destroy marked",
    [PUBLISH_STEP_RING_DIR_CREATED] = "ring directory created",
    [PUBLISH_STEP_CONTROL_BEFORE_MAGIC] = "control before magic",
    [PUBLISH_STEP_RING_BEFORE_RENAME] = "ring before rename",
    [PUBLISH_STEP_OPEN_LOCKED] = "open locked",
    [PUBLISH_STEP_OPEN_CLEANED] = "open cleaned",
    [PUBLISH_STEP_VERSION_CREATED] = "version created",
    [PUBLISH_STEP_VERSION_OWNED] = "version owned",
    [PUBLISH_STEP_VERSION_SIZED] = "version sized",
    [PUBLISH_STEP_VERSION_SECTIONS_WRITTEN] = "sections written",
    [PUBLISH_STEP_VERSION_WRITTEN] = "written",
    [PUBLISH_STEP_GENERATION_STORED] = "generation stored",
    [PUBLISH_STEP_METADATA_STORED] = "metadata stored",
    [PUBLISH_STEP_OLD_UNLINKED] = "old unlinked"};

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
    shmring_snapshot_t *view;
    ck_assert_int_eq(shmring_snapshot_new(m->snapshot, m->size, &view), 0);
    for (size_t k = 0; k < KEYS; k++) {
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(view, keys[k], key_lengths[k], &node),
                         0);
        m->ids[k] = node.id;
    }
    shmring_snapshot_free(view);
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

/* Lists RING_NAME's directory: whether it holds the control object and the lock,
 * and the version generations, sorted, into GENS (room for MAX). Anything else in it
 * fails the test. */
static size_t ring_files(const char *ring_name, bool *control, bool *lock, uint64_t *gens,
                         size_t max)
{
    *control = false;
    *lock = false;
    size_t count = 0;
    DIR *dir = opendir(test_ring_path(ring_name));
    ck_assert_ptr_nonnull(dir);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        uint64_t gen;
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        if (strcmp(entry->d_name, CONTROL_FILE) == 0) {
            *control = true;
            continue;
        }
        if (strcmp(entry->d_name, LOCK_FILE) == 0) {
            *lock = true;
            continue;
        }
        ck_assert_msg(shmring__is_version_file(entry->d_name, &gen),
                      "unexpected '%s' in the ring's directory", entry->d_name);
        ck_assert_uint_lt(count, max);
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
    int err = shmring_ring_destroy(ring, NULL);
    ck_assert(err == 0 || err == SHMRING_ENOENT);
    /* Neither the ring's directory nor a hidden one is left. */
    ck_assert_int_eq(test_ring_entries(ring), 0);
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

/* Arms the hook in a forked child. */
static void child_arm(int step, int signal_number)
{
    /* A umask that would take the group's and others' read bits: a creator must
     * give its objects their modes explicitly. */
    umask(077);
    kill_step = step;
    kill_signal = signal_number;
    shmring__publish_hook = crash_hook;
}

/*
 * Forks a writer that opens RING_NAME and publishes SET (if not NULL), with the hook
 * armed to raise SIGNAL at STEP (-1: at no step). With READY_FD >= 0 it writes a byte
 * there between opening and publishing, and after publishing waits to be killed. A
 * failed publication is recorded in trace->error, and the writer closed.
 */
static pid_t spawn_writer(const char *ring_name, unsigned flags,
                          const shmring_writer_options_t *options,
                          const shmring_nodeset_t *set, int step, int signal_number,
                          int ready_fd)
{
    uatomic_set(&trace->last_step, -1);
    trace->open_generation = UINT64_MAX;
    trace->error = 1;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid != 0)
        return pid;
    child_arm(step, signal_number);
    shmring_writer_t *w;
    if (shmring_writer_open(ring_name, flags, options, &w) != 0)
        _exit(CHILD_OPEN_FAILED);
    trace->open_generation = shmring_writer_generation(w);
    trace->start_ns = test_now_ns();
    if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
        _exit(CHILD_PIPE_FAILED);
    if (set != NULL) {
        trace->error = shmring_writer_publish(w, set, NULL);
        if (trace->error != 0) {
            shmring_writer_close(w);
            _exit(CHILD_PUBLISH_FAILED);
        }
    }
    while (ready_fd >= 0)
        pause();
    shmring_writer_close(w);
    _exit(CHILD_DONE);
}

/* Forks a process that destroys RING_NAME, with the hook armed as above. */
static pid_t spawn_destroyer(const char *ring_name, int step, int signal_number)
{
    uatomic_set(&trace->last_step, -1);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid != 0)
        return pid;
    child_arm(step, signal_number);
    _exit(shmring_ring_destroy(ring_name, NULL) == 0 ? CHILD_DONE : CHILD_OPEN_FAILED);
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

static void wait_exited(pid_t pid, enum child_exit code)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == (int)code,
                  "writer: status %#x, not exit %d", status, (int)code);
}

/* ---- Checks --------------------------------------------------------------- */

/* The lock file in the ring directory DIRECTORY is held by someone else (HELD), or
 * free. */
static void check_lock_in(const char *directory, bool held)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/" LOCK_FILE, directory);
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

/* The writer lock of RING_NAME is held by someone else (HELD), or free. */
static void check_lock(const char *ring_name, bool held)
{
    char path[600];
    snprintf(path, sizeof(path), "%s", test_ring_path(ring_name));
    check_lock_in(path, held);
}

/* The control object of the ring directory DIRECTORY, mapped read-only (munmap() its
 * CONTROL_SIZE bytes). */
static const struct control_block *map_control_in(const char *directory)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/" CONTROL_FILE, directory);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    const struct control_block *control =
        mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(control, MAP_FAILED);
    close(fd);
    return control;
}

/* The generation in the control object of the ring directory DIRECTORY, which must
 * have its magic (a complete ring, visible or not). */
static uint64_t control_generation_in(const char *directory)
{
    const struct control_block *control = map_control_in(directory);
    ck_assert_int_eq(shmring__control_check(control), 0);
    uint64_t gen = uatomic_read(&control->generation);
    munmap((void *)control, CONTROL_SIZE);
    return gen;
}

/* The ring's directory holds exactly its control object, its lock, S's current
 * version and orphans, and the ring has no hidden directory. */
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
    bool control, lock;
    uint64_t got[16];
    ck_assert_uint_eq(ring_files(ring, &control, &lock, got, 16), n);
    ck_assert(control);
    ck_assert(lock);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(got[i], want[i]);
    ck_assert_int_eq(test_ring_entries(ring), 1);
}

/* R answers every key exactly as S's current model does, at S's generation. */
static void check_answers(shmring_t *r, const struct ring_state *s)
{
    ck_assert_uint_eq(shmring_generation(r), s->generation);
    if (s->generation == 0) {
        shmring_node_t node;
        ck_assert_int_eq(shmring_lookup(r, keys[0], key_lengths[0], &node),
                         SHMRING_EEMPTY);
        return;
    }
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
 * snapshot, and a fresh and the live reader (if any) answer from it. */
static void check_readers(const struct ring_state *s)
{
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
    ck_assert_uint_eq(status.generation, s->generation);
    uint64_t gen;
    shmring_snapshot_t *copy;
    ck_assert_int_eq(shmring_ring_snapshot(ring, NULL, &gen, &copy), 0);
    ck_assert_uint_eq(gen, s->generation);
    if (s->generation == 0) {
        ck_assert_ptr_null(copy);
    } else {
        size_t size;
        const void *bytes = shmring_snapshot_data(copy, &size);
        ck_assert_uint_eq(size, s->current->size);
        ck_assert_int_eq(memcmp(bytes, s->current->snapshot, size), 0);
    }
    shmring_snapshot_free(copy);

    shmring_t *fresh;
    ck_assert_int_eq(shmring_open(ring, &fresh), 0);
    check_answers(fresh, s);
    shmring_close(fresh);
    if (s->live != NULL)
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
    char name[FILE_NAME_MAX];
    shmring__version_file(gen, name);
    int fd = open(test_object_path(ring, name), O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    /* Created 0600, then given the read bits of the ring's mode (0644). */
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
    /* Sized: all zeros. Sections written: the snapshot's bytes but for its header,
     * still zero, so that no reader could take it for a snapshot. Written: all of
     * the snapshot. */
    const unsigned char *want = m->snapshot;
    size_t header = sizeof(struct snapshot_header);
    size_t zeros = 0;
    while (zeros < m->size && bytes[zeros] == 0)
        zeros++;
    if (step == PUBLISH_STEP_VERSION_SIZED) {
        ck_assert_uint_eq(zeros, m->size);
    } else if (step == PUBLISH_STEP_VERSION_SECTIONS_WRITTEN) {
        ck_assert_uint_ge(zeros, header);
        ck_assert_int_eq(memcmp(bytes + header, want + header, m->size - header), 0);
    } else {
        ck_assert_int_eq(memcmp(bytes, want, m->size), 0);
    }
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
    printf("crash: %d kills at %d steps of opening and publishing (%d stopped and "
           "inspected first), ring at generation %llu, no orphans\n",
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
    } while (test_now_ns() < deadline && uatomic_read(&trace->last_step) < step);
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
     * version object written whole (the snapshot built into it), and of the rest. */
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
        lookups += lookups_until(&s, next, test_now_ns() + delay, PUBLISH_STEP_COUNT);
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        wait_killed(pid);
        ck_assert_uint_eq(trace->open_generation, s.generation);

        int last = uatomic_read(&trace->last_step);
        ck_assert_int_ge(last, PUBLISH_STEP_OPEN_CLEANED);
        reached[last]++;
        if (last >= PUBLISH_STEP_VERSION_WRITTEN) {
            int64_t build =
                trace->step_ns[PUBLISH_STEP_VERSION_WRITTEN] - trace->start_ns;
            build_ns[0] = build < build_ns[0] ? build : build_ns[0];
            build_ns[1] = build > build_ns[1] ? build : build_ns[1];
        }
        if (last == PUBLISH_STEP_OLD_UNLINKED) {
            int64_t rest = trace->step_ns[PUBLISH_STEP_OLD_UNLINKED] -
                           trace->step_ns[PUBLISH_STEP_VERSION_WRITTEN];
            rest_ns[0] = rest < rest_ns[0] ? rest : rest_ns[0];
            rest_ns[1] = rest > rest_ns[1] ? rest : rest_ns[1];
        }
        shmring_ring_status_t status;
        ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
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
        bool control, lock;
        uint64_t gens[8];
        size_t n = ring_files(ring, &control, &lock, gens, 8);
        ck_assert(control);
        ck_assert(lock);
        ck_assert_int_eq(test_ring_entries(ring), 1);
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

/* ---- Kills while a ring is being created or destroyed -------------------- */

/* Nothing has the ring's name: readers, status, copies, writers that do not create
 * and destroy all find no ring, and listings do not show it. */
static void check_no_ring(void)
{
    struct stat st;
    ck_assert_int_eq(lstat(test_ring_path(ring), &st), -1);
    ck_assert_int_eq(errno, ENOENT);
    shmring_t *r = NULL;
    ck_assert_int_eq(shmring_open(ring, &r), SHMRING_ENOENT);
    ck_assert_ptr_null(r);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), SHMRING_ENOENT);
    uint64_t gen;
    shmring_snapshot_t *copy;
    ck_assert_int_eq(shmring_ring_snapshot(ring, NULL, &gen, &copy), SHMRING_ENOENT);
    shmring_writer_t *w = NULL;
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), SHMRING_ENOENT);
    ck_assert_ptr_null(w);
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), SHMRING_ENOENT);
    char **names;
    size_t count;
    ck_assert_int_eq(shmring_ring_list(NULL, &names, &count), 0);
    for (size_t i = 0; i < count; i++)
        ck_assert_str_ne(names[i], ring);
    shmring_ring_list_free(names);
}

/* A new ring is created under the name while the hidden directory of a stopped
 * creator or destroyer stays: generation 0, and the ring now has two entries. */
static void create_beside_hidden(void)
{
    shmring_writer_t *other;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &other), 0);
    ck_assert_uint_eq(shmring_writer_generation(other), 0);
    shmring_writer_close(other);
    ck_assert_int_eq(test_ring_entries(ring), 2);
}

/* Checks that no ring is visible under its name and that the ring's one entry is a
 * hidden directory named with PREFIX; copies that directory's path into HIDDEN. */
static void only_hidden_directory(const char *prefix, char hidden[600])
{
    check_no_ring();
    ck_assert_int_eq(test_ring_entries(ring), 1);
    const char *found = test_hidden_path(ring, prefix);
    ck_assert_ptr_nonnull(found);
    snprintf(hidden, 600, "%s", found);
}

/* Whether a writer creating a ring (ATOMIC: with SHMRING_WRITER_ATOMIC_CREATE) has
 * given it its name once it passed STEP. */
static bool created_visible(int step, bool atomic)
{
    return step >= (atomic ? PUBLISH_STEP_METADATA_STORED : PUBLISH_STEP_OPEN_CLEANED);
}

/* Whether a writer that creates a ring passes STEP (opening a ring that exists and
 * destroying one have steps of their own). */
static bool creating_step(int step)
{
    return step >= PUBLISH_STEP_RING_DIR_CREATED && step != PUBLISH_STEP_OPEN_LOCKED;
}

/*
 * The hidden directory HIDDEN of a creator stopped at STEP, publishing its first
 * version, before its ring has its name: what it holds so far, with the modes of a
 * ring of mode 0640, and its lock held from when it exists.
 */
static void check_creating(const char *hidden, int step)
{
    const char *files = "control,lock,version.1";
    if (step == PUBLISH_STEP_RING_DIR_CREATED)
        files = "";
    else if (step < PUBLISH_STEP_VERSION_CREATED)
        files = "control,lock";
    ck_assert_str_eq(test_listing(hidden), files);
    struct stat st;
    ck_assert_int_eq(lstat(hidden, &st), 0);
    ck_assert_uint_eq(st.st_uid, geteuid());
    /* The directory gets its search bits for readers last, once it is complete. */
    ck_assert_uint_eq(st.st_mode & 07777,
                      step <= PUBLISH_STEP_CONTROL_BEFORE_MAGIC ? 0700 : 0750);
    if (step == PUBLISH_STEP_RING_DIR_CREATED)
        return;
    check_lock_in(hidden, true);
    char path[700];
    snprintf(path, sizeof(path), "%s/" CONTROL_FILE, hidden);
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    /* Allocated in full before anything else is written into it. */
    ck_assert_int_eq(st.st_size, CONTROL_SIZE);
    if (step == PUBLISH_STEP_CONTROL_BEFORE_MAGIC) {
        const struct control_block *control = map_control_in(hidden);
        ck_assert_uint_eq(control->magic, 0);
        ck_assert_int_eq(shmring__control_check(control), SHMRING_ECONTROL);
        munmap((void *)control, CONTROL_SIZE);
        return;
    }
    ck_assert_uint_eq(control_generation_in(hidden),
                      step >= PUBLISH_STEP_GENERATION_STORED ? 1 : 0);
}

/*
 * A writer creating a ring of mode 0640 (ATOMIC: with SHMRING_WRITER_ATOMIC_CREATE)
 * and publishing its first version is stopped (STOP) or killed at STEP. Before its
 * ring has its name, nobody sees a ring: readers, status and writers that do not
 * create find none, and another creator meanwhile gets a ring of its own without
 * touching the living creator's directory. Once it is killed, the next creator makes
 * the ring afresh and sweeps what the killed one left. After the name is taken, the
 * ring is whole, at generation 0 or 1 as the step says, and the next writer goes on
 * from there. Returns whether a leftover was swept.
 */
static bool kill_creator(int step, bool atomic, bool stop)
{
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.mode = 0640;
    unsigned flags = SHMRING_WRITER_CREATE | (atomic ? SHMRING_WRITER_ATOMIC_CREATE : 0);
    bool visible = created_visible(step, atomic);
    /* The ring once visible: generation 0 until the first publication is stored,
     * with version 1 left behind from its creation until then. */
    struct ring_state after = {0};
    if (step >= PUBLISH_STEP_GENERATION_STORED) {
        after.generation = 1;
        after.current = &small[1];
    } else if (step >= PUBLISH_STEP_VERSION_CREATED) {
        add_orphan(&after, 1);
    }
    pid_t pid = spawn_writer(ring, flags, &options, small[1].set, step,
                             stop ? SIGSTOP : SIGKILL, -1);
    if (stop) {
        wait_stopped(pid);
        ck_assert_int_eq(uatomic_read(&trace->last_step), step);
        if (visible) {
            check_lock(ring, true);
            check_state(&after);
        } else {
            char hidden[600];
            only_hidden_directory(CREATING_PREFIX, hidden);
            check_creating(hidden, step);
            create_beside_hidden();
            ck_assert_str_eq(test_hidden_path(ring, CREATING_PREFIX), hidden);
            ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
            ck_assert_int_eq(test_ring_entries(ring), 1);
        }
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
    }
    wait_killed(pid);
    ck_assert_int_eq(uatomic_read(&trace->last_step), step);

    shmring_writer_t *w;
    if (visible) {
        check_state(&after);
        ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w),
                         0);
        ck_assert_uint_eq(shmring_writer_generation(w), after.generation);
        after.orphan_count = 0;
        check_objects(&after);
    } else {
        /* Not a ring, only a creator's leftover (check_no_ring() showed that a
         * writer that does not create leaves it alone). */
        check_no_ring();
        ck_assert_int_eq(test_ring_entries(ring), 1);
        ck_assert_ptr_nonnull(test_hidden_path(ring, CREATING_PREFIX));
        ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w),
                         0);
        ck_assert_uint_eq(shmring_writer_generation(w), 0);
        ck_assert_ptr_null(test_hidden_path(ring, CREATING_PREFIX));
        ck_assert_int_eq(test_ring_entries(ring), 1);
        ck_assert_str_eq(test_ring_listing(ring), "control,lock");
        /* A ring made afresh, at generation 0. */
        memset(&after, 0, sizeof(after));
    }
    struct ring_state s = {.generation = after.generation, .current = after.current};
    ck_assert_int_eq(shmring_open(ring, &s.live), 0);
    check_state(&s);
    uint64_t gen = 0;
    ck_assert_int_eq(shmring_writer_publish(w, small[2].set, &gen), 0);
    ck_assert_uint_eq(gen, after.generation + 1);
    shmring_writer_close(w);
    s.generation = gen;
    s.current = &small[2];
    check_state(&s);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
    /* The mode asked for, whatever the creator's umask. */
    ck_assert_uint_eq(status.mode, 0640);
    ck_assert_uint_eq(status.owner, geteuid());
    shmring_close(s.live);
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
    ck_assert_int_eq(test_ring_entries(ring), 0);
    return !visible;
}

/* Creators, atomic and not, stopped or killed at every step they pass. */
START_TEST(test_kill_while_creating)
{
    const int rounds = TEST_ASAN ? 1 : 2;
    int trial = 0, swept = 0;
    for (int round = 0; round < rounds; round++) {
        for (int atomic = 0; atomic <= 1; atomic++) {
            for (int step = 0; step < PUBLISH_STEP_COUNT; step++) {
                if (!creating_step(step))
                    continue;
                /* A new ring each time; the fixture's name is the last one. */
                if (trial > 0)
                    snprintf(ring, sizeof(ring), "%s", test_ring_name("crash"));
                swept += kill_creator(step, atomic, (trial + round) % 2 == 0);
                trial++;
            }
        }
    }
    printf("crash: %d creators killed at every step of creating a ring, %d before it "
           "had its name (their leftovers swept)\n",
           trial, swept);
}
END_TEST

/*
 * What a destroyer of S's ring stopped or killed at STEP leaves: no ring under its
 * name, and the ring's directory whole under a hidden name, its control object
 * marked destroyed from DESTROY_MARKED on, its lock held while the destroyer lives.
 * The live reader keeps answering from what it mapped.
 */
static void check_destroyed(const struct ring_state *s, int step, bool destroyer_lives)
{
    char hidden[600];
    only_hidden_directory(REMOVING_PREFIX, hidden);
    char want[64];
    snprintf(want, sizeof(want), "control,lock,version.%llu",
             (unsigned long long)s->generation);
    ck_assert_str_eq(test_listing(hidden), want);
    ck_assert_uint_eq(control_generation_in(hidden), step == PUBLISH_STEP_DESTROY_MARKED
                                                         ? CONTROL_GENERATION_DESTROYED
                                                         : s->generation);
    check_lock_in(hidden, destroyer_lives);
    check_answers(s->live, s);
}

/*
 * A destroyer stopped or killed at each step of destroying a ring: the ring is gone
 * for everyone who looks it up by name from the first step on, a reader that holds
 * it keeps answering, a creator meanwhile gets a new ring without touching the
 * living destroyer's directory, and once the destroyer is dead the next creator
 * makes a fresh ring, sweeps the leftover, and the reader follows the fresh ring.
 */
START_TEST(test_kill_while_destroying)
{
    const int trials = TEST_ASAN ? 4 : 8;
    for (int trial = 0; trial < trials; trial++) {
        /* A new ring each time; the fixture's name is the last one. */
        if (trial > 0)
            snprintf(ring, sizeof(ring), "%s", test_ring_name("crash"));
        int step = trial % 2 ? PUBLISH_STEP_DESTROY_MARKED : PUBLISH_STEP_DESTROY_RENAMED;
        bool stop = trial % 4 >= 2;
        struct ring_state s;
        state_init(&s, &small[trial % SMALL_MODELS]);
        recover(&s, next_small(s.current));
        pid_t pid = spawn_destroyer(ring, step, stop ? SIGSTOP : SIGKILL);
        if (stop) {
            wait_stopped(pid);
            ck_assert_int_eq(uatomic_read(&trace->last_step), step);
            check_destroyed(&s, step, true);
            create_beside_hidden();
            ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
            check_destroyed(&s, step, true);
            ck_assert_int_eq(kill(pid, SIGKILL), 0);
        }
        wait_killed(pid);
        ck_assert_int_eq(uatomic_read(&trace->last_step), step);
        check_destroyed(&s, step, false);

        shmring_writer_t *w;
        ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
        ck_assert_uint_eq(shmring_writer_generation(w), 0);
        ck_assert_ptr_null(test_hidden_path(ring, REMOVING_PREFIX));
        ck_assert_int_eq(test_ring_entries(ring), 1);
        ck_assert_str_eq(test_ring_listing(ring), "control,lock");
        const struct model *next = next_small(s.current);
        uint64_t gen = 0;
        ck_assert_int_eq(shmring_writer_publish(w, next->set, &gen), 0);
        ck_assert_uint_eq(gen, 1);
        shmring_writer_close(w);
        s.generation = 1;
        s.current = next;
        /* The old control object is marked destroyed now (by the destroyer, or by
         * the sweep), so the live reader looks the ring up again. */
        test_wait_for_generation(s.live, 1);
        check_state(&s);
        shmring_close(s.live);
        ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
        ck_assert_int_eq(test_ring_entries(ring), 0);
    }
}
END_TEST

/*
 * Two creators race: A is stopped at a step of creating the ring, before the ring
 * has its name; B creates it (leaving A's directory alone, as A lives) and
 * publishes generation 1; then A goes on. A's ring cannot take the name: without
 * SHMRING_WRITER_ATOMIC_CREATE, A opens B's ring and publishes generation 2 over it,
 * never resetting it to 0 or removing B's version; with it, A's first publication
 * fails with SHMRING_EEXIST and changes nothing. Either way A leaves nothing behind.
 */
START_TEST(test_creators_race)
{
    static const int steps[] = {PUBLISH_STEP_RING_DIR_CREATED,
                                PUBLISH_STEP_CONTROL_BEFORE_MAGIC,
                                PUBLISH_STEP_RING_BEFORE_RENAME};
    bool first = true;
    for (int atomic = 0; atomic <= 1; atomic++) {
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
            if (!first)
                snprintf(ring, sizeof(ring), "%s", test_ring_name("crash"));
            first = false;
            unsigned flags =
                SHMRING_WRITER_CREATE | (atomic ? SHMRING_WRITER_ATOMIC_CREATE : 0);
            pid_t a =
                spawn_writer(ring, flags, NULL, small[3].set, steps[i], SIGSTOP, -1);
            wait_stopped(a);
            shmring_writer_t *b;
            ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &b),
                             0);
            uint64_t gen = 0;
            ck_assert_int_eq(shmring_writer_publish(b, small[4].set, &gen), 0);
            ck_assert_uint_eq(gen, 1);
            shmring_writer_close(b);
            ck_assert_int_eq(test_ring_entries(ring), 2);
            ck_assert_ptr_nonnull(test_hidden_path(ring, CREATING_PREFIX));
            ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");
            struct ring_state s = {.generation = 1, .current = &small[4]};
            ck_assert_int_eq(shmring_open(ring, &s.live), 0);
            check_readers(&s);

            ck_assert_int_eq(kill(a, SIGCONT), 0);
            if (atomic) {
                wait_exited(a, CHILD_PUBLISH_FAILED);
                ck_assert_uint_eq(trace->open_generation, 0);
                ck_assert_int_eq(trace->error, SHMRING_EEXIST);
            } else {
                wait_exited(a, CHILD_DONE);
                ck_assert_uint_eq(trace->open_generation, 1);
                ck_assert_int_eq(trace->error, 0);
                s.generation = 2;
                s.current = &small[3];
            }
            check_state(&s);
            shmring_close(s.live);
            ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
            ck_assert_int_eq(test_ring_entries(ring), 0);
        }
    }
}
END_TEST

static const struct test_fixture fixture_300 = {setup, teardown, 300};
static const struct test_fixture fixture_600 = {setup, teardown, 600};

static Suite *crash_suite(void)
{
    Suite *s = suite_create("crash");
    TEST_CASE_WITH(s, "steps", &fixture_300, test_kill_at_each_step,
                   test_kill_while_creating, test_kill_while_destroying,
                   test_creators_race);
    TEST_CASE_WITH(s, "random", &fixture_600, test_kill_at_random_instants);
    return s;
}

int main(void)
{
    return test_run_suite(crash_suite());
}
