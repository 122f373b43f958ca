/*
 * The security model against a hostile local user (docs/security.md; the
 * attacks of issue 9). The attacker is user nobody (uid 65534): each attack runs in a
 * child process that drops to that user. The ring's owner is this process's user
 * (root in CI) or, for another user's ring, daemon (uid 1).
 *
 * For every attack the tests check that the owner's ring still answers as before (a
 * reader opened before the attack gives the same generation and the same node for
 * every test key, and a new reader opens the same generation), that the owner's next
 * publication succeeds or fails with the documented code, that readers never follow
 * a ring another user made, and that no process crashes or hangs: every step runs in
 * a child under alarm() and must exit normally, with status 0. Parent and children
 * synchronize through pipes only.
 *
 * Acting as another user, chown() and mounting a private tmpfs need root. Run as
 * another user, the tests that need them print that they are skipped, and pass.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

/* Keys whose owners are compared to tell whether a ring answers as before. */
#define KEY_COUNT 256
/* A step that takes longer than this hung: its alarm kills it and its test fails. */
#define STEP_TIMEOUT_S 60
/* The same for the processes that live through a test (readers, lock holders). */
#define AGENT_TIMEOUT_S 300
#define TEST_TIMEOUT_S 300
/* Exit statuses of a child that could not do its part. */
#define EXIT_NO_USER 120
#define EXIT_ORPHAN 121
#define EXIT_NO_PIPE 122
/* Most results one step reports. */
#define CODES_MAX 40

#define CREATE SHMRING_WRITER_CREATE
#define EXCL SHMRING_WRITER_EXCL
#define ATOMIC SHMRING_WRITER_ATOMIC_CREATE

/* Compares two SHMRING_E* codes (or negated errno values), naming both. */
#define assert_code(x, y)                                                                \
    do {                                                                                 \
        int code_x = (x), code_y = (y);                                                  \
        ck_assert_msg(code_x == code_y, "%s: %d (%s), expected %d (%s)", #x, code_x,     \
                      shmring_strerror(code_x), code_y, shmring_strerror(code_y));       \
    } while (0)

struct user {
    uid_t uid;
    gid_t gid;
};

static const struct user root_user = {0, 0};
static const struct user attacker = {65534, 65534};
static const struct user daemon_user = {1, 1};

/* What one test works on: the owner's ring, a ring of the attacker's, another ring of
 * the owner's, where they live, and the node sets published. */
static struct scene {
    char ring[SHMRING_RING_NAME_MAX + 1];
    char foreign[SHMRING_RING_NAME_MAX + 1];
    char other[SHMRING_RING_NAME_MAX + 1];
    /* NULL: SHMRING_DEFAULT_DIRECTORY. */
    const char *directory;
    struct user owner;
    shmring_nodeset_t *first, *second, *evil;
    /* What each node set answers for the test keys (see digest_handle()). */
    uint32_t first_digest, second_digest, evil_digest;
} scene;

/* A directory for the base-directory tests, made and removed by the runner. */
static char work_directory[64];

/* ---- Skipping ------------------------------------------------------------------ */

/* Says on stdout that iteration ITERATION of TEST (Check's function name, "..._fn")
 * is skipped, and why; returns true. */
static bool skip(const char *test, int iteration, const char *why)
{
    size_t len = strlen(test);
    printf("check_security: %.*s (iteration %d) SKIPPED: %s\n",
           (int)(len > 3 ? len - 3 : len), test, iteration, why);
    fflush(stdout);
    return true;
}

#define SKIP_UNLESS_ROOT(why)                                                            \
    do {                                                                                 \
        if (geteuid() != 0 && skip(__func__, _i, (why)))                                 \
            return;                                                                      \
    } while (0)

/* The owner of loop iteration INDEX's ring: this process's user (0) or daemon (1),
 * which only root can act as. Returns false (after saying so) to skip. */
static bool use_owner(int index, const char *test, int iteration)
{
    if (index == 0)
        return true;
    if (geteuid() != 0) {
        skip(test, iteration, "acting as daemon (uid 1) needs root");
        return false;
    }
    scene.owner = daemon_user;
    return true;
}

#define USE_OWNER(index)                                                                 \
    do {                                                                                 \
        if (!use_owner((index), __func__, _i))                                           \
            return;                                                                      \
    } while (0)

/* ---- Paths and listings -------------------------------------------------------- */

struct path {
    char text[PATH_MAX];
};

static const char *scene_directory(void)
{
    return scene.directory != NULL ? scene.directory : SHMRING_DEFAULT_DIRECTORY;
}

/* The path of an entry of the scene's directory, named by FORMAT. */
static struct path entry_path(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

static struct path entry_path(const char *format, ...)
{
    struct path path;
    int len = snprintf(path.text, sizeof(path.text), "%s/", scene_directory());
    va_list ap;
    va_start(ap, format);
    vsnprintf(path.text + len, sizeof(path.text) - (size_t)len, format, ap);
    va_end(ap);
    return path;
}

/* "shmring.RING": RING's entry in a directory of rings (a static buffer). */
static const char *ring_entry(const char *ring)
{
    static char entry[SHMRING_RING_NAME_MAX + 16];
    snprintf(entry, sizeof(entry), "shmring.%s", ring);
    return entry;
}

static struct path ring_path(const char *ring)
{
    return entry_path("shmring.%s", ring);
}

static struct path object_path(const char *ring, const char *name)
{
    return entry_path("shmring.%s/%s", ring, name);
}

static struct path version_path(const char *ring, uint64_t generation)
{
    return entry_path("shmring.%s/version.%llu", ring, (unsigned long long)generation);
}

/* The entries of the scene's directory that belong to RING. */
static const char *ring_entries(const char *ring)
{
    return test_ring_listing_in(scene_directory(), ring);
}

/* The files in RING's directory. */
static const char *ring_files(const char *ring)
{
    return test_listing(ring_path(ring).text);
}

/* Removes everything of the scene's rings from its directory, the attacker's objects
 * included (root can). */
static void scene_clean(void)
{
    DIR *dir = opendir(scene_directory());
    if (dir == NULL)
        return;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (test_entry_of(entry->d_name, scene.ring) ||
            test_entry_of(entry->d_name, scene.foreign) ||
            test_entry_of(entry->d_name, scene.other))
            test_remove_tree(entry_path("%s", entry->d_name).text);
    closedir(dir);
}

static uint64_t mix(uint64_t hash, uint64_t value)
{
    return (hash ^ value) * UINT64_C(0x100000001b3);
}

static uint64_t mix_text(uint64_t hash, const char *text)
{
    for (; *text != '\0'; text++)
        hash = mix(hash, (unsigned char)*text);
    return mix(hash, 0);
}

/*
 * Everything about PATH that a change would change (without following a link): its
 * inode, type, mode, owners, links, size, modification and change times, a link's
 * target, and a directory's entries, recursively. 0 when nothing is there.
 */
static uint64_t fingerprint(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    uint64_t hash = UINT64_C(0xcbf29ce484222325);
    const uint64_t fields[] = {st.st_dev,
                               st.st_ino,
                               st.st_mode,
                               st.st_uid,
                               st.st_gid,
                               st.st_nlink,
                               (uint64_t)st.st_size,
                               (uint64_t)st.st_mtim.tv_sec,
                               (uint64_t)st.st_mtim.tv_nsec,
                               (uint64_t)st.st_ctim.tv_sec,
                               (uint64_t)st.st_ctim.tv_nsec};
    for (size_t i = 0; i < COUNT_OF(fields); i++)
        hash = mix(hash, fields[i]);
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t len = readlink(path, target, sizeof(target) - 1);
        target[len > 0 ? len : 0] = '\0';
        hash = mix_text(hash, target);
    } else if (S_ISDIR(st.st_mode)) {
        /* A sum, so that the order of the entries does not matter. */
        uint64_t entries = 0;
        DIR *dir = opendir(path);
        struct dirent *entry;
        while (dir != NULL && (entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            char child[PATH_MAX];
            snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
            entries += mix_text(fingerprint(child), entry->d_name);
        }
        if (dir != NULL)
            closedir(dir);
        hash = mix(hash, entries);
    }
    return hash;
}

/* ---- Answers ------------------------------------------------------------------- */

static uint32_t fnv1a(uint32_t hash, const char *text)
{
    for (const char *p = text;; p++) {
        hash = (hash ^ (unsigned char)*p) * 16777619u;
        if (*p == '\0')
            return hash;
    }
}

#define DIGEST_START 2166136261u

/* What a handle answers for the test keys, as one number: the names of the owners of
 * keys 0..KEY_COUNT-1, hashed. Failed lookups are counted in *ERRORS. */
static uint32_t digest_handle(shmring_t *r, uint64_t *errors)
{
    uint32_t digest = DIGEST_START;
    for (uint64_t i = 0; i < KEY_COUNT; i++) {
        char key[32];
        size_t len = test_key(key, i);
        shmring_node_t node;
        if (shmring_lookup(r, key, len, &node) != 0) {
            (*errors)++;
            continue;
        }
        digest = fnv1a(digest, node.name);
    }
    return digest;
}

/* What a ring publishing SET answers, computed from its snapshot alone. */
static uint32_t digest_set(const shmring_nodeset_t *set)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    uint32_t digest = DIGEST_START;
    for (uint64_t i = 0; i < KEY_COUNT; i++) {
        char key[32];
        size_t len = test_key(key, i);
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(snapshot, key, len, &node), 0);
        digest = fnv1a(digest, node.name);
    }
    shmring_snapshot_free(snapshot);
    return digest;
}

/* ---- Processes ----------------------------------------------------------------- */

/* Reads SIZE bytes into INTO, or when INTO is NULL writes SIZE bytes from FROM, across
 * short transfers and interruptions; false at end of file or on an error. */
static bool transfer_full(int fd, char *into, const char *from, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t n = into != NULL ? read(fd, into + done, size - done)
                                 : write(fd, from + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

static bool write_full(int fd, const void *buffer, size_t size)
{
    return transfer_full(fd, NULL, buffer, size);
}

/* Reads exactly SIZE bytes; false at end of file or on an error. */
static bool read_full(int fd, void *buffer, size_t size)
{
    return transfer_full(fd, buffer, NULL, size);
}

static int compare_fds(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor from 3 up but the COUNT in KEEP: a child must not hold
 * another child's pipe open, or that child never sees its end of file. */
static void close_other_fds(const int *keep, size_t count)
{
    int sorted[4];
    memcpy(sorted, keep, count * sizeof(*keep));
    qsort(sorted, count, sizeof(*sorted), compare_fds);
    unsigned from = 3;
    for (size_t i = 0; i < count; i++) {
        if ((unsigned)sorted[i] < from)
            continue;
        if ((unsigned)sorted[i] > from)
            close_range(from, (unsigned)sorted[i] - 1, 0);
        from = (unsigned)sorted[i] + 1;
    }
    close_range(from, ~0u, 0);
}

/*
 * Forks a child that runs as USER (its group, no supplementary groups; NULL or this
 * process's user: as this process), keeps only descriptors 0-2 and the COUNT in KEEP,
 * dies with this process, and is killed by SIGALRM after SECONDS, so that a child
 * that hangs fails its test instead of hanging it. Returns the child's pid in the
 * parent and 0 in the child.
 */
static pid_t fork_as(const struct user *user, unsigned seconds, const int *keep,
                     size_t count)
{
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid != 0)
        return pid;
    signal(SIGPIPE, SIG_DFL);
    close_other_fds(keep, count);
    if (user != NULL && user->uid != geteuid() && !test_become(user->uid, user->gid))
        _exit(EXIT_NO_USER);
    /* After setuid(), which clears it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(EXIT_ORPHAN);
    alarm(seconds);
    return 0;
}

/* Waits for the child PID (WHAT, for messages) and returns its exit status; fails the
 * test if a signal ended it (SIGALRM: it hung). */
static int reap_status(pid_t pid, const char *what)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        ck_abort_msg("%s hung: its alarm killed it", what);
    ck_assert_msg(WIFEXITED(status), "%s was killed by signal %d (%s)", what,
                  WTERMSIG(status), strsignal(WTERMSIG(status)));
    ck_assert_msg(WEXITSTATUS(status) != EXIT_NO_USER, "%s could not change its user",
                  what);
    return WEXITSTATUS(status);
}

/* Waits for the child PID, which must exit with status 0. */
static void reap(pid_t pid, const char *what)
{
    int status = reap_status(pid, what);
    ck_assert_msg(status == 0, "%s exited with status %d", what, status);
}

/* What a step reports: the fields it uses. */
struct outcome {
    /* What the step's first call returned: 0, a SHMRING_E* code or -errno. */
    int code;
    /* A writer step's publication. */
    int publish;
    /* The generation a writer published or a reader answers from. */
    uint64_t generation;
    /* What a reader answered for the test keys, and how many lookups failed. */
    uint32_t digest;
    uint64_t errors;
    /* How many times the library called on_wait. */
    int waits;
    /* More results, one per attempt. */
    int codes[CODES_MAX];
};

typedef void step_fn(const void *arg, struct outcome *out);

/* Runs FN(ARG) in a child as USER under an alarm, and returns what it reported. */
static struct outcome run_step(const struct user *user, step_fn *fn, const void *arg,
                               const char *what)
{
    int fds[2];
    ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
    pid_t pid = fork_as(user, STEP_TIMEOUT_S, &fds[1], 1);
    if (pid == 0) {
        struct outcome out;
        memset(&out, 0, sizeof(out));
        fn(arg, &out);
        _exit(write_full(fds[1], &out, sizeof(out)) ? 0 : EXIT_NO_PIPE);
    }
    close(fds[1]);
    struct outcome out;
    bool complete = read_full(fds[0], &out, sizeof(out));
    close(fds[0]);
    reap(pid, what);
    ck_assert_msg(complete, "%s reported nothing", what);
    return out;
}

/* A child that lives through part of a test, talking with the parent over pipes. It
 * ends when the parent closes its end (agent_stop()). */
struct agent {
    pid_t pid;
    int to;
    int from;
    const char *what;
};

typedef void agent_fn(const void *arg, int from_parent, int to_parent);

static void agent_start(struct agent *a, const struct user *user, agent_fn *fn,
                        const void *arg, const char *what)
{
    int down[2], up[2];
    ck_assert_int_eq(pipe2(down, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(up, O_CLOEXEC), 0);
    const int keep[] = {down[0], up[1]};
    pid_t pid = fork_as(user, AGENT_TIMEOUT_S, keep, COUNT_OF(keep));
    if (pid == 0) {
        fn(arg, down[0], up[1]);
        _exit(0);
    }
    close(down[0]);
    close(up[1]);
    *a = (struct agent){.pid = pid, .to = down[1], .from = up[0], .what = what};
}

static void agent_send(struct agent *a, const void *buffer, size_t size)
{
    ck_assert_msg(write_full(a->to, buffer, size), "%s does not listen", a->what);
}

/* Receives SIZE bytes from the agent; if it ended instead, says how. */
static void agent_receive(struct agent *a, void *buffer, size_t size)
{
    if (read_full(a->from, buffer, size))
        return;
    reap(a->pid, a->what);
    ck_abort_msg("%s ended without answering", a->what);
}

/* In an agent: reads FD until its end, which comes when the parent closes its end. */
static void wait_for_end(int fd)
{
    char byte;
    ssize_t n;
    do
        n = read(fd, &byte, 1);
    while (n > 0 || (n < 0 && errno == EINTR));
}

/* Tells the agent to end, and checks that it exited with status 0. */
static void agent_stop(struct agent *a)
{
    close(a->to);
    close(a->from);
    reap(a->pid, a->what);
}

/* ---- Steps: the library's calls, as one user ---------------------------------- */

static int code_of(int result)
{
    return result < 0 ? -errno : 0;
}

/* Counts the library's on_wait calls. */
static void count_wait(const char *ring, void *data)
{
    (void)ring;
    (*(int *)data)++;
}

static void writer_options(shmring_writer_options_t *options, int wait_ms, int *waits)
{
    shmring_writer_options_default(options);
    options->directory = scene.directory;
    options->wait_ms = wait_ms;
    options->on_wait = count_wait;
    options->on_wait_data = waits;
}

struct write_args {
    const char *ring;
    unsigned flags;
    int wait_ms;
    /* Published after opening, unless NULL. */
    const shmring_nodeset_t *set;
    /* The mode to create the ring with, when set_mode. */
    bool set_mode;
    mode_t mode;
};

/* Opens a writer (code, waits) and publishes (publish, generation). */
static void write_step(const void *arg, struct outcome *out)
{
    const struct write_args *args = arg;
    shmring_writer_options_t options;
    writer_options(&options, args->wait_ms, &out->waits);
    if (args->set_mode)
        options.mode = args->mode;
    shmring_writer_t *w = NULL;
    out->code = shmring_writer_open(args->ring, args->flags, &options, &w);
    if (out->code != 0)
        return;
    out->generation = shmring_writer_generation(w);
    if (args->set != NULL)
        out->publish = shmring_writer_publish(w, args->set, &out->generation);
    shmring_writer_close(w);
}

struct destroy_args {
    const char *ring;
    int wait_ms;
};

static void destroy_step(const void *arg, struct outcome *out)
{
    const struct destroy_args *args = arg;
    shmring_writer_options_t options;
    writer_options(&options, args->wait_ms, &out->waits);
    out->code = shmring_ring_destroy(args->ring, &options);
}

struct open_args {
    const char *ring;
    uid_t trusted_owner;
};

/* Opens a reader (code, generation, digest, errors), then asks for the ring's status
 * (codes[0]) and snapshot (codes[1]). */
static void open_step(const void *arg, struct outcome *out)
{
    const struct open_args *args = arg;
    shmring_open_options_t options = {.directory = scene.directory,
                                      .trusted_owner = args->trusted_owner};
    shmring_t *r = NULL;
    out->code = shmring_open_with(args->ring, &options, &r);
    if (out->code == 0) {
        out->generation = shmring_generation(r);
        out->digest = digest_handle(r, &out->errors);
        shmring_close(r);
    }
    shmring_ring_status_t status;
    out->codes[0] = shmring_ring_status(args->ring, &options, &status);
    uint64_t generation;
    shmring_snapshot_t *copy = NULL;
    out->codes[1] = shmring_ring_snapshot(args->ring, &options, &generation, &copy);
    shmring_snapshot_free(copy);
}

/* Lists the rings (code) and says whether the scene's ring is among them (codes[0]). */
static void list_step(const void *arg, struct outcome *out)
{
    (void)arg;
    char **names = NULL;
    size_t count = 0;
    out->code = shmring_ring_list(scene.directory, &names, &count);
    for (size_t i = 0; out->code == 0 && i < count; i++)
        if (strcmp(names[i], scene.ring) == 0)
            out->codes[0] = 1;
    shmring_ring_list_free(names);
}

/* ---- Steps of the test (in the parent) ----------------------------------------- */

/* USER's writer opens RING with FLAGS, waiting at most WAIT_MS, and publishes SET. */
static struct outcome write_as(const struct user *user, const char *ring, unsigned flags,
                               int wait_ms, const shmring_nodeset_t *set)
{
    struct write_args args = {
        .ring = ring, .flags = flags, .wait_ms = wait_ms, .set = set};
    return run_step(user, write_step, &args, "a writer");
}

/* The owner publishes SET on RING (not waiting for any lock: nobody but the owner's
 * own writers may hold it); returns the generation published. */
static uint64_t owner_publish(const char *ring, unsigned flags,
                              const shmring_nodeset_t *set)
{
    struct outcome out = write_as(&scene.owner, ring, flags, 0, set);
    assert_code(out.code, 0);
    assert_code(out.publish, 0);
    return out.generation;
}

static int destroy_as(const struct user *user, const char *ring, int wait_ms)
{
    struct destroy_args args = {.ring = ring, .wait_ms = wait_ms};
    return run_step(user, destroy_step, &args, "a destroyer").code;
}

static struct outcome open_as(const struct user *user, const char *ring, uid_t trusted)
{
    struct open_args args = {.ring = ring, .trusted_owner = trusted};
    return run_step(user, open_step, &args, "a reader");
}

/* A new reader of USER's (trusting TRUSTED too) opens RING: it answers from
 * GENERATION what a ring of DIGEST answers, and the ring's status and snapshot can be
 * read. */
static void expect_answers(const struct user *user, const char *ring, uid_t trusted,
                           uint64_t generation, uint32_t digest)
{
    struct outcome out = open_as(user, ring, trusted);
    assert_code(out.code, 0);
    ck_assert_uint_eq(out.generation, generation);
    ck_assert_uint_eq(out.errors, 0);
    ck_assert_uint_eq(out.digest, digest);
    assert_code(out.codes[0], 0);
    assert_code(out.codes[1], 0);
}

/* A new reader of USER's (trusting TRUSTED too) cannot open RING, nor read its status
 * or snapshot: each fails with CODE. */
static void expect_refused(const struct user *user, const char *ring, uid_t trusted,
                           int code)
{
    struct outcome out = open_as(user, ring, trusted);
    assert_code(out.code, code);
    assert_code(out.codes[0], code);
    assert_code(out.codes[1], code);
}

/* ---- Readers that run through a test ------------------------------------------- */

struct reader_args {
    const char *ring;
    uid_t trusted_owner;
    /* Look keys up all the time (else only when asked). */
    bool looping;
};

struct reader_report {
    /* shmring_open_with()'s result. */
    int code;
    uint64_t generation;
    /* The answers of the last round of lookups. */
    uint32_t digest;
    uint64_t rounds;
    /* Failed lookups, and rounds that answered otherwise than the round before, since
     * the reader opened or last reached a generation it was told to wait for. */
    uint64_t errors;
    uint64_t changes;
};

struct reader_command {
    /* 'c': report; 'w': look keys up until the handle answers from GENERATION, then
     * report. */
    char what;
    uint64_t generation;
};

static void reader_round(shmring_t *r, struct reader_report *report)
{
    uint32_t digest = digest_handle(r, &report->errors);
    if (report->rounds > 0 && digest != report->digest)
        report->changes++;
    report->digest = digest;
    report->rounds++;
    report->generation = shmring_generation(r);
}

static void reader_agent(const void *arg, int from_parent, int to_parent)
{
    const struct reader_args *args = arg;
    shmring_open_options_t options = {.directory = scene.directory,
                                      .trusted_owner = args->trusted_owner};
    struct reader_report report;
    memset(&report, 0, sizeof(report));
    shmring_t *r = NULL;
    report.code = shmring_open_with(args->ring, &options, &r);
    if (report.code == 0)
        reader_round(r, &report);
    if (!write_full(to_parent, &report, sizeof(report)) || report.code != 0)
        return;
    for (;;) {
        if (args->looping) {
            struct pollfd ready = {.fd = from_parent, .events = POLLIN};
            if (poll(&ready, 1, 0) == 0) {
                reader_round(r, &report);
                continue;
            }
        }
        struct reader_command command;
        if (!read_full(from_parent, &command, sizeof(command)))
            break;
        if (command.what == 'w') {
            while (shmring_generation(r) != command.generation)
                reader_round(r, &report);
            /* The rounds so far may have straddled the switch: count from a round
             * that began on the new generation. */
            reader_round(r, &report);
            report.errors = 0;
            report.changes = 0;
        }
        reader_round(r, &report);
        if (!write_full(to_parent, &report, sizeof(report)))
            break;
    }
    shmring_close(r);
}

struct reader {
    struct agent agent;
    struct reader_args args;
};

/* Starts a reader of USER's (trusting TRUSTED too) on RING, which must answer from
 * GENERATION what a ring of DIGEST answers. */
static void reader_start(struct reader *rd, const struct user *user, const char *ring,
                         uid_t trusted, bool looping, uint64_t generation,
                         uint32_t digest)
{
    rd->args =
        (struct reader_args){.ring = ring, .trusted_owner = trusted, .looping = looping};
    agent_start(&rd->agent, user, reader_agent, &rd->args, "a running reader");
    struct reader_report report;
    agent_receive(&rd->agent, &report, sizeof(report));
    assert_code(report.code, 0);
    ck_assert_uint_eq(report.generation, generation);
    ck_assert_uint_eq(report.errors, 0);
    ck_assert_uint_eq(report.digest, digest);
}

static struct reader_report reader_ask(struct reader *rd, char what, uint64_t generation)
{
    struct reader_command command = {.what = what, .generation = generation};
    agent_send(&rd->agent, &command, sizeof(command));
    struct reader_report report;
    agent_receive(&rd->agent, &report, sizeof(report));
    return report;
}

/* The running reader still answers from GENERATION what a ring of DIGEST answers, and
 * has all along: no failed lookup, no other answer. */
static void expect_unmoved(struct reader *rd, uint64_t generation, uint32_t digest)
{
    struct reader_report report = reader_ask(rd, 'c', 0);
    ck_assert_uint_eq(report.generation, generation);
    ck_assert_uint_eq(report.digest, digest);
    ck_assert_uint_eq(report.errors, 0);
    ck_assert_uint_eq(report.changes, 0);
}

/* The running reader follows the ring to GENERATION and answers DIGEST's answers. */
static void expect_follows(struct reader *rd, uint64_t generation, uint32_t digest)
{
    struct reader_report report = reader_ask(rd, 'w', generation);
    ck_assert_uint_eq(report.generation, generation);
    ck_assert_uint_eq(report.digest, digest);
    ck_assert_uint_eq(report.errors, 0);
}

/* ---- A writer of the owner's, stopped while it holds the lock ------------------- */

static void stopped_writer_agent(const void *arg, int from_parent, int to_parent)
{
    const char *ring = arg;
    shmring_writer_options_t options;
    int waits = 0;
    writer_options(&options, 0, &waits);
    shmring_writer_t *w = NULL;
    int code = shmring_writer_open(ring, 0, &options, &w);
    if (!write_full(to_parent, &code, sizeof(code)) || code != 0)
        return;
    kill(getpid(), SIGSTOP);
    wait_for_end(from_parent);
    shmring_writer_close(w);
}

/* Starts a writer of RING as the owner and returns once it is stopped (SIGSTOP) with
 * the ring's lock held. */
static void stopped_writer_start(struct agent *writer, const char *ring)
{
    agent_start(writer, &scene.owner, stopped_writer_agent, ring, "the stopped writer");
    int code;
    agent_receive(writer, &code, sizeof(code));
    assert_code(code, 0);
    int status;
    ck_assert_int_eq(waitpid(writer->pid, &status, WUNTRACED), writer->pid);
    ck_assert(WIFSTOPPED(status));
}

/* Lets the stopped writer go on: it closes its writer and exits. */
static void stopped_writer_resume(struct agent *writer)
{
    ck_assert_int_eq(kill(writer->pid, SIGCONT), 0);
    agent_stop(writer);
}

static int make_socket(const char *path)
{
    int code = test_try_make_socket(path);
    return code != 0 ? code : code_of(chmod(path, 0777));
}

static int make_fifo(const char *path)
{
    return mkfifo(path, 0666) != 0 ? -errno : code_of(chmod(path, 0666));
}

/* What the attacker puts at the ring's path. */
enum squat {
    SQUAT_FILE,
    SQUAT_DIRECTORY_OPEN,
    SQUAT_DIRECTORY,
    SQUAT_RING,
    SQUAT_LINK_FOREIGN,
    SQUAT_LINK_OWNER,
    SQUAT_LINK_DANGLING,
    SQUAT_FIFO,
    SQUAT_SOCKET,
    SQUAT_COUNT
};

static const struct squat_info {
    const char *what;
    /* What shmring_ring_object() calls it. */
    const char *kind;
    /* What the owner's writers and readers get. */
    int code;
    /* What a reader that trusts the attacker's uid gets. */
    int trusting_code;
} squats[SQUAT_COUNT] = {
    [SQUAT_FILE] = {"an empty file, mode 0666", "regular file", SHMRING_ENOTRING,
                    SHMRING_ENOTRING},
    [SQUAT_DIRECTORY_OPEN] = {"an empty directory, mode 0777", "directory",
                              SHMRING_EOWNER, SHMRING_EOWNER},
    [SQUAT_DIRECTORY] = {"an empty directory, mode 0755", "directory", SHMRING_EOWNER,
                         SHMRING_ENOENT},
    [SQUAT_RING] = {"the attacker's own ring", "directory", SHMRING_EOWNER, 0},
    [SQUAT_LINK_FOREIGN] = {"a symbolic link to a ring of the attacker's",
                            "symbolic link", SHMRING_ENOTRING, SHMRING_ENOTRING},
    [SQUAT_LINK_OWNER] = {"a symbolic link to another ring of the owner's",
                          "symbolic link", SHMRING_ENOTRING, SHMRING_ENOTRING},
    [SQUAT_LINK_DANGLING] = {"a dangling symbolic link", "symbolic link",
                             SHMRING_ENOTRING, SHMRING_ENOTRING},
    [SQUAT_FIFO] = {"a FIFO, mode 0666", "FIFO", SHMRING_ENOTRING, SHMRING_ENOTRING},
    [SQUAT_SOCKET] = {"a bound UNIX socket", "socket", SHMRING_ENOTRING,
                      SHMRING_ENOTRING},
};

/* The attacker puts a squat at the ring's path (code; publish for his rings). */
static void squat_step(const void *arg, struct outcome *out)
{
    enum squat kind = *(const enum squat *)arg;
    struct path squat = ring_path(scene.ring);
    const char *path = squat.text;
    char target[PATH_MAX];
    switch (kind) {
    case SQUAT_FILE:
        out->code = test_try_make_file(path, 0666);
        break;
    case SQUAT_DIRECTORY_OPEN:
        out->code = test_try_make_directory(path, 0777);
        break;
    case SQUAT_DIRECTORY:
        out->code = test_try_make_directory(path, 0755);
        break;
    case SQUAT_RING: {
        struct write_args args = {.ring = scene.ring, .flags = CREATE, .set = scene.evil};
        write_step(&args, out);
        break;
    }
    case SQUAT_LINK_FOREIGN: {
        struct write_args args = {
            .ring = scene.foreign, .flags = CREATE, .set = scene.evil};
        write_step(&args, out);
        snprintf(target, sizeof(target), "shmring.%s", scene.foreign);
        if (out->code == 0)
            out->code = code_of(symlink(target, path));
        break;
    }
    case SQUAT_LINK_OWNER:
        snprintf(target, sizeof(target), "shmring.%s", scene.other);
        out->code = code_of(symlink(target, path));
        break;
    case SQUAT_LINK_DANGLING:
        out->code = code_of(symlink("/nonexistent/shmring", path));
        break;
    case SQUAT_FIFO:
        out->code = make_fifo(path);
        break;
    case SQUAT_SOCKET:
        out->code = make_socket(path);
        break;
    case SQUAT_COUNT:
        break;
    }
}

/* The attacker squats the ring's path with KIND; returns the fingerprint of what he
 * put there. */
static uint64_t attacker_squat(enum squat kind)
{
    struct outcome out = run_step(&attacker, squat_step, &kind, "the attacker's squat");
    assert_code(out.code, 0);
    assert_code(out.publish, 0);
    uint64_t print = fingerprint(ring_path(scene.ring).text);
    ck_assert_uint_ne(print, 0);
    return print;
}

/* ---- Fixture ------------------------------------------------------------------- */

static shmring_nodeset_t *evil_nodeset(void)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "evil", "6.6.6.6:11211", 1, SHMRING_STATE_UP, NULL), 0);
    return set;
}

static void setup(void)
{
    /* A child that died must fail its test, not kill the test process with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    snprintf(scene.ring, sizeof(scene.ring), "%s", test_ring_name("ring"));
    snprintf(scene.foreign, sizeof(scene.foreign), "%s", test_ring_name("foreign"));
    snprintf(scene.other, sizeof(scene.other), "%s", test_ring_name("other"));
    scene.directory = NULL;
    scene.owner = (struct user){geteuid(), getegid()};
    scene.first = test_nodeset(5, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    scene.second = test_nodeset(7, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    scene.evil = evil_nodeset();
    scene.first_digest = digest_set(scene.first);
    scene.second_digest = digest_set(scene.second);
    scene.evil_digest = digest_set(scene.evil);
    /* Otherwise "answers as before" would prove nothing. */
    ck_assert_uint_ne(scene.first_digest, scene.second_digest);
    ck_assert_uint_ne(scene.first_digest, scene.evil_digest);
    ck_assert_uint_ne(scene.second_digest, scene.evil_digest);
}

static void teardown(void)
{
    scene_clean();
    shmring_nodeset_free(scene.first);
    shmring_nodeset_free(scene.second);
    shmring_nodeset_free(scene.evil);
}

static void work_directory_create(void)
{
    snprintf(work_directory, sizeof(work_directory),
             "/tmp/shmring-check-security-XXXXXX");
    if (mkdtemp(work_directory) == NULL || chmod(work_directory, 0755) != 0) {
        perror("check_security: cannot make a work directory");
        exit(EXIT_FAILURE);
    }
}

static void work_directory_remove(void)
{
    test_remove_tree(work_directory);
}

/* ---- 1. Hijack: squatting the ring's name --------------------------------------- */

/* The owner's writers (whichever flags), destroy and readers all refuse what the
 * attacker put at the ring's path, and leave it as it is. */
static void expect_squat_refused(enum squat kind, uint64_t print)
{
    const struct squat_info *info = &squats[kind];
    static const unsigned flag_sets[] = {0, CREATE, CREATE | EXCL, CREATE | ATOMIC};
    for (size_t i = 0; i < COUNT_OF(flag_sets); i++) {
        struct outcome out =
            write_as(&scene.owner, scene.ring, flag_sets[i], 0, scene.first);
        ck_assert_msg(out.code == info->code, "writer with flags %u on %s: %d (%s)",
                      flag_sets[i], info->what, out.code, shmring_strerror(out.code));
    }
    assert_code(destroy_as(&scene.owner, scene.ring, 0), info->code);
    expect_refused(&scene.owner, scene.ring, 0, info->code);
    /* Root's readers of the owner's ring, trusting the owner. */
    if (scene.owner.uid != 0)
        expect_refused(&root_user, scene.ring, scene.owner.uid, info->code);
    shmring_ring_object_t object;
    assert_code(shmring_ring_object(scene.ring, scene.directory, &object), 0);
    ck_assert(object.exists);
    ck_assert_str_eq(object.kind, info->kind);
    ck_assert_uint_eq(object.owner, attacker.uid);
    ck_assert_uint_eq(fingerprint(ring_path(scene.ring).text), print);
}

/* A squat before the owner's init: the name is denied, with the exact code, and the
 * squat is never adopted, followed or changed; opting in to the attacker's uid
 * follows his ring (and nothing else); once root removes the squat, the name works. */
START_TEST(test_squat_before_init)
{
    enum squat kind = (enum squat)(_i % SQUAT_COUNT);
    SKIP_UNLESS_ROOT("acting as nobody (uid 65534) needs root");
    USE_OWNER(_i / SQUAT_COUNT);
    if (kind == SQUAT_LINK_OWNER)
        ck_assert_uint_eq(owner_publish(scene.other, CREATE, scene.first), 1);
    uint64_t print = attacker_squat(kind);

    expect_squat_refused(kind, print);
    if (kind == SQUAT_RING)
        expect_answers(&scene.owner, scene.ring, attacker.uid, 1, scene.evil_digest);
    else
        expect_refused(&scene.owner, scene.ring, attacker.uid,
                       squats[kind].trusting_code);
    ck_assert_uint_eq(fingerprint(ring_path(scene.ring).text), print);
    /* The owner's failed attempts left nothing behind. */
    ck_assert_str_eq(ring_entries(scene.ring), ring_entry(scene.ring));

    test_remove_tree(ring_path(scene.ring).text);
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
}
END_TEST

/* Readers of the ring through an attack: one looking keys up all the time (its lookups
 * run through the attack), and two idle ones, whose first lookup after the attack is
 * sure to try the ring's name again (a reader that failed to follow the ring retries
 * only every 100 ms): one of the owner's, and one of root's that trusts one more
 * uid (TRUSTED). */
struct readers {
    struct reader looping;
    struct reader idle;
    struct reader trusting;
};

static void readers_start(struct readers *rs, uid_t trusted, uint64_t generation,
                          uint32_t digest)
{
    reader_start(&rs->looping, &scene.owner, scene.ring, 0, true, generation, digest);
    reader_start(&rs->idle, &scene.owner, scene.ring, 0, false, generation, digest);
    reader_start(&rs->trusting, &root_user, scene.ring, trusted, false, generation,
                 digest);
}

static void readers_unmoved(struct readers *rs, uint64_t generation, uint32_t digest)
{
    expect_unmoved(&rs->idle, generation, digest);
    expect_unmoved(&rs->trusting, generation, digest);
    expect_unmoved(&rs->looping, generation, digest);
}

static void readers_follow(struct readers *rs, uint64_t generation, uint32_t digest)
{
    expect_follows(&rs->idle, generation, digest);
    expect_follows(&rs->trusting, generation, digest);
    expect_follows(&rs->looping, generation, digest);
}

static void readers_stop(struct readers *rs)
{
    agent_stop(&rs->looping.agent);
    agent_stop(&rs->idle.agent);
    agent_stop(&rs->trusting.agent);
}

/* A squat after the owner's destroy, while readers look keys up: they keep answering
 * from the last version and never follow the squat, even readers that trust the
 * attacker's uid (a handle trusts only the owner it first accepted); list, status and
 * open do not hang; the owner's init gets the exact code. Once the owner's ring is
 * back under the name, its readers follow it. */
START_TEST(test_squat_after_destroy)
{
    enum squat kind = (enum squat)(_i % SQUAT_COUNT);
    SKIP_UNLESS_ROOT("acting as nobody (uid 65534) needs root");
    USE_OWNER(_i / SQUAT_COUNT);
    const struct squat_info *info = &squats[kind];
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    if (kind == SQUAT_LINK_OWNER)
        ck_assert_uint_eq(owner_publish(scene.other, CREATE, scene.first), 1);
    /* Root's reader trusts the attacker for root's ring, else the owner. */
    struct readers rs;
    readers_start(&rs, scene.owner.uid == 0 ? attacker.uid : scene.owner.uid, 2,
                  scene.second_digest);

    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    uint64_t print = attacker_squat(kind);
    readers_unmoved(&rs, 2, scene.second_digest);

    expect_squat_refused(kind, print);
    if (kind == SQUAT_RING)
        expect_answers(&scene.owner, scene.ring, attacker.uid, 1, scene.evil_digest);
    else
        expect_refused(&scene.owner, scene.ring, attacker.uid, info->trusting_code);
    struct outcome listed = run_step(&scene.owner, list_step, NULL, "a listing");
    assert_code(listed.code, 0);
    ck_assert_int_eq(listed.codes[0], 1);
    readers_unmoved(&rs, 2, scene.second_digest);
    ck_assert_uint_eq(fingerprint(ring_path(scene.ring).text), print);

    test_remove_tree(ring_path(scene.ring).text);
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    readers_follow(&rs, 1, scene.first_digest);
    readers_stop(&rs);
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
}
END_TEST

/* A handle trusts only the owner it first accepted: daemon's ring destroyed and
 * re-created by root (whom every reader trusts) is not followed by daemon's readers
 * nor by root's reader that trusts daemon, though new readers open it; daemon's own
 * ring under the name again is followed. */
START_TEST(test_handle_pins_first_owner)
{
    SKIP_UNLESS_ROOT("acting as daemon (uid 1) needs root");
    scene.owner = daemon_user;
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    struct readers rs;
    readers_start(&rs, daemon_user.uid, 2, scene.second_digest);

    assert_code(destroy_as(&daemon_user, scene.ring, 0), 0);
    struct outcome out = write_as(&root_user, scene.ring, CREATE, 0, scene.evil);
    assert_code(out.code, 0);
    assert_code(out.publish, 0);
    readers_unmoved(&rs, 2, scene.second_digest);
    expect_answers(&daemon_user, scene.ring, 0, 1, scene.evil_digest);
    expect_answers(&root_user, scene.ring, 0, 1, scene.evil_digest);
    readers_unmoved(&rs, 2, scene.second_digest);

    assert_code(destroy_as(&root_user, scene.ring, 0), 0);
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    readers_follow(&rs, 1, scene.first_digest);
    readers_stop(&rs);
    assert_code(destroy_as(&daemon_user, scene.ring, 0), 0);
}
END_TEST

/* ---- 2. Blocking --------------------------------------------------------------- */

/* What the attacker flocks: everything of the ring he can open, and the directory of
 * rings. */
enum flocked { FLOCK_BASE, FLOCK_RING, FLOCK_CONTROL, FLOCK_VERSION, FLOCK_COUNT };
static const char *const flocked_names[FLOCK_COUNT] = {
    "the directory of rings", "the ring's directory", "control", "version.1"};

/* Flocks everything he can open (codes[FLOCK_*]), tries to open the lock
 * (codes[FLOCK_COUNT], read-only; codes[FLOCK_COUNT + 1], read-write), reports, and
 * holds the locks until told to end. */
static void flock_agent(const void *arg, int from_parent, int to_parent)
{
    int operation = *(const int *)arg;
    struct path paths[FLOCK_COUNT] = {entry_path("."), ring_path(scene.ring),
                                      object_path(scene.ring, "control"),
                                      version_path(scene.ring, 1)};
    struct outcome out;
    memset(&out, 0, sizeof(out));
    for (int i = 0; i < FLOCK_COUNT; i++) {
        int fd = open(paths[i].text, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        out.codes[i] = fd < 0 ? -errno : code_of(flock(fd, operation | LOCK_NB));
    }
    struct path lock = object_path(scene.ring, "lock");
    int fd = open(lock.text, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    out.codes[FLOCK_COUNT] = fd < 0 ? -errno : 0;
    fd = open(lock.text, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    out.codes[FLOCK_COUNT + 1] = fd < 0 ? -errno : 0;
    if (write_full(to_parent, &out, sizeof(out)))
        wait_for_end(from_parent);
}

/* flock() works on any descriptor, read-only ones too: the attacker locks (LOCK_EX,
 * then LOCK_SH) everything of the ring he can open, but the writers' lock is a file he
 * cannot open, so the owner publishes and destroys without waiting. */
START_TEST(test_flock_cannot_block_owner)
{
    SKIP_UNLESS_ROOT("acting as nobody (uid 65534) needs root");
    USE_OWNER(_i / 2);
    int operation = _i % 2 == 0 ? LOCK_EX : LOCK_SH;
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    struct reader rd;
    reader_start(&rd, &scene.owner, scene.ring, 0, true, 1, scene.first_digest);
    struct agent holder;
    agent_start(&holder, &attacker, flock_agent, &operation, "the attacker's flocks");
    struct outcome held;
    agent_receive(&holder, &held, sizeof(held));
    for (int i = 0; i < FLOCK_COUNT; i++)
        ck_assert_msg(held.codes[i] == 0, "the attacker could not flock %s: %s",
                      flocked_names[i], strerror(-held.codes[i]));
    assert_code(held.codes[FLOCK_COUNT], -EACCES);
    assert_code(held.codes[FLOCK_COUNT + 1], -EACCES);

    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    expect_follows(&rd, 2, scene.second_digest);
    expect_answers(&scene.owner, scene.ring, 0, 2, scene.second_digest);
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    ck_assert_str_eq(ring_entries(scene.ring), "");
    expect_unmoved(&rd, 2, scene.second_digest);
    agent_stop(&holder);
    agent_stop(&rd.agent);
}
END_TEST

/* Runs a destroy that waits as long as it takes; tells the parent (one byte) when
 * the library calls on_wait, then sends its outcome. */
struct waiting_destroy {
    int to_parent;
    int waits;
};

static void notify_wait(const char *ring, void *data)
{
    (void)ring;
    struct waiting_destroy *state = data;
    state->waits++;
    char byte = 'w';
    write_full(state->to_parent, &byte, 1);
}

static void waiting_destroy_agent(const void *arg, int from_parent, int to_parent)
{
    (void)from_parent;
    struct waiting_destroy state = {.to_parent = to_parent};
    shmring_writer_options_t options;
    int unused = 0;
    writer_options(&options, -1, &unused);
    options.on_wait = notify_wait;
    options.on_wait_data = &state;
    struct outcome out;
    memset(&out, 0, sizeof(out));
    out.code = shmring_ring_destroy(arg, &options);
    out.waits = state.waits;
    write_full(to_parent, &out, sizeof(out));
}

/* A writer of the owner's stopped (SIGSTOP) with the lock held: another writer with
 * wait_ms 0 gets SHMRING_EBUSY at once without waiting, with wait_ms 300 gets
 * SHMRING_EBUSY after saying once that it waits; destroy likewise; readers are not
 * held up; a destroy that waits as long as it takes says so once and finishes when
 * the writer goes on. */
START_TEST(test_stopped_writer_bounds_wait)
{
    USE_OWNER(_i);
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    struct agent writer;
    stopped_writer_start(&writer, scene.ring);

    struct outcome out = write_as(&scene.owner, scene.ring, 0, 0, scene.second);
    assert_code(out.code, SHMRING_EBUSY);
    ck_assert_int_eq(out.waits, 0);
    out = write_as(&scene.owner, scene.ring, 0, 300, scene.second);
    assert_code(out.code, SHMRING_EBUSY);
    ck_assert_int_eq(out.waits, 1);
    struct destroy_args args = {.ring = scene.ring, .wait_ms = 0};
    out = run_step(&scene.owner, destroy_step, &args, "a destroyer");
    assert_code(out.code, SHMRING_EBUSY);
    ck_assert_int_eq(out.waits, 0);
    args.wait_ms = 300;
    out = run_step(&scene.owner, destroy_step, &args, "a destroyer");
    assert_code(out.code, SHMRING_EBUSY);
    ck_assert_int_eq(out.waits, 1);
    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.1");

    struct agent destroyer;
    agent_start(&destroyer, &scene.owner, waiting_destroy_agent, scene.ring,
                "the waiting destroyer");
    char byte;
    agent_receive(&destroyer, &byte, 1);
    ck_assert_int_eq(byte, 'w');
    stopped_writer_resume(&writer);
    agent_receive(&destroyer, &out, sizeof(out));
    assert_code(out.code, 0);
    ck_assert_int_eq(out.waits, 1);
    agent_stop(&destroyer);
    ck_assert_str_eq(ring_entries(scene.ring), "");
}
END_TEST

/* ---- 3 and 5. Nothing of the ring can be written, replaced or added to --------- */

/* What the attacker tries on the owner's ring. */
enum attempt {
    TRY_CONTROL_OPEN_WRITE,
    TRY_CONTROL_OPEN_RDWR,
    TRY_CONTROL_OPEN_TRUNCATE,
    TRY_CONTROL_TRUNCATE,
    TRY_CONTROL_FTRUNCATE,
    TRY_CONTROL_MAP_WRITE,
    TRY_CONTROL_PUNCH_HOLE,
    TRY_CONTROL_CHMOD,
    TRY_CONTROL_UNLINK,
    TRY_CONTROL_RENAME,
    TRY_CONTROL_REPLACE,
    TRY_VERSION_OPEN_WRITE,
    TRY_VERSION_TRUNCATE,
    TRY_VERSION_FTRUNCATE,
    TRY_VERSION_CHMOD,
    TRY_VERSION_UNLINK,
    TRY_LOCK_OPEN_READ,
    TRY_LOCK_OPEN_RDWR,
    TRY_NEXT_CREATE,
    TRY_NEXT_MKDIR,
    TRY_NEXT_MKFIFO,
    TRY_NEXT_SYMLINK,
    TRY_NEXT_LINK,
    TRY_NEXT_RENAME,
    TRY_RING_CHMOD,
    TRY_RING_RMDIR,
    TRY_RING_RENAME,
    TRY_RING_REPLACE_BY_FILE,
    TRY_RING_REPLACE_BY_DIRECTORY,
    TRY_RING_EXCHANGE,
    TRY_COUNT
};

static const struct attempt_info {
    const char *what;
    /* The result on a ring he may read (mode 0644), and on one he may not (0600). */
    int readable;
    int unreadable;
} attempts[TRY_COUNT] = {
    [TRY_CONTROL_OPEN_WRITE] = {"open control write-only", -EACCES, -EACCES},
    [TRY_CONTROL_OPEN_RDWR] = {"open control read-write", -EACCES, -EACCES},
    [TRY_CONTROL_OPEN_TRUNCATE] = {"open control with O_TRUNC", -EACCES, -EACCES},
    [TRY_CONTROL_TRUNCATE] = {"truncate control", -EACCES, -EACCES},
    [TRY_CONTROL_FTRUNCATE] = {"ftruncate control read-only", -EINVAL, -EACCES},
    [TRY_CONTROL_MAP_WRITE] = {"map control shared and writable", -EACCES, -EACCES},
    [TRY_CONTROL_PUNCH_HOLE] = {"punch a hole in control", -EBADF, -EACCES},
    [TRY_CONTROL_CHMOD] = {"chmod control 0666", -EPERM, -EACCES},
    [TRY_CONTROL_UNLINK] = {"unlink control", -EACCES, -EACCES},
    [TRY_CONTROL_RENAME] = {"rename control", -EACCES, -EACCES},
    [TRY_CONTROL_REPLACE] = {"rename his file over control", -EACCES, -EACCES},
    [TRY_VERSION_OPEN_WRITE] = {"open version.1 write-only", -EACCES, -EACCES},
    [TRY_VERSION_TRUNCATE] = {"truncate version.1", -EACCES, -EACCES},
    [TRY_VERSION_FTRUNCATE] = {"ftruncate version.1 read-only", -EINVAL, -EACCES},
    [TRY_VERSION_CHMOD] = {"chmod version.1 0666", -EPERM, -EACCES},
    [TRY_VERSION_UNLINK] = {"unlink version.1", -EACCES, -EACCES},
    [TRY_LOCK_OPEN_READ] = {"open lock read-only", -EACCES, -EACCES},
    [TRY_LOCK_OPEN_RDWR] = {"open lock read-write", -EACCES, -EACCES},
    [TRY_NEXT_CREATE] = {"create version.2", -EACCES, -EACCES},
    [TRY_NEXT_MKDIR] = {"mkdir version.2", -EACCES, -EACCES},
    [TRY_NEXT_MKFIFO] = {"mkfifo version.2", -EACCES, -EACCES},
    [TRY_NEXT_SYMLINK] = {"symlink version.2", -EACCES, -EACCES},
    [TRY_NEXT_LINK] = {"hard-link his file as version.2", -EACCES, -EACCES},
    [TRY_NEXT_RENAME] = {"rename his file to version.2", -EACCES, -EACCES},
    [TRY_RING_CHMOD] = {"chmod the ring's directory 0777", -EPERM, -EPERM},
    [TRY_RING_RMDIR] = {"rmdir the ring's directory", -EPERM, -EPERM},
    [TRY_RING_RENAME] = {"rename the ring's directory away", -EPERM, -EPERM},
    [TRY_RING_REPLACE_BY_FILE] = {"rename his file over the ring", -EPERM, -EPERM},
    [TRY_RING_REPLACE_BY_DIRECTORY] = {"rename his directory over the ring", -EPERM,
                                       -EPERM},
    [TRY_RING_EXCHANGE] = {"exchange his directory with the ring", -EPERM, -EPERM},
};

static int open_code(const char *path, int flags)
{
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

/* Opens PATH read-only (as any reader may) and tries OPERATION on the descriptor. */
static int on_descriptor(const char *path, int (*operation)(int fd))
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int code = operation(fd);
    close(fd);
    return code;
}

static int truncate_fd(int fd)
{
    return code_of(ftruncate(fd, 0));
}

static int map_writable(int fd)
{
    void *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return -errno;
    munmap(map, 4096);
    return 0;
}

static int punch_hole(int fd)
{
    return code_of(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
}

static int attempt(enum attempt which)
{
    struct path control = object_path(scene.ring, "control");
    struct path version = version_path(scene.ring, 1);
    struct path lock = object_path(scene.ring, "lock");
    struct path next = version_path(scene.ring, 2);
    struct path ring = ring_path(scene.ring);
    struct path own_file = entry_path("shmring.%s.999", scene.ring);
    struct path own_directory = entry_path("shmring.%s.1000", scene.ring);
    struct path moved = entry_path("shmring.%s.1001", scene.ring);
    switch (which) {
    case TRY_CONTROL_OPEN_WRITE:
        return open_code(control.text, O_WRONLY);
    case TRY_CONTROL_OPEN_RDWR:
        return open_code(control.text, O_RDWR);
    case TRY_CONTROL_OPEN_TRUNCATE:
        return open_code(control.text, O_RDONLY | O_TRUNC);
    case TRY_CONTROL_TRUNCATE:
        return code_of(truncate(control.text, 0));
    case TRY_CONTROL_FTRUNCATE:
        return on_descriptor(control.text, truncate_fd);
    case TRY_CONTROL_MAP_WRITE:
        return on_descriptor(control.text, map_writable);
    case TRY_CONTROL_PUNCH_HOLE:
        return on_descriptor(control.text, punch_hole);
    case TRY_CONTROL_CHMOD:
        return code_of(chmod(control.text, 0666));
    case TRY_CONTROL_UNLINK:
        return code_of(unlink(control.text));
    case TRY_CONTROL_RENAME:
        return code_of(rename(control.text, next.text));
    case TRY_CONTROL_REPLACE:
        return code_of(rename(own_file.text, control.text));
    case TRY_VERSION_OPEN_WRITE:
        return open_code(version.text, O_WRONLY);
    case TRY_VERSION_TRUNCATE:
        return code_of(truncate(version.text, 0));
    case TRY_VERSION_FTRUNCATE:
        return on_descriptor(version.text, truncate_fd);
    case TRY_VERSION_CHMOD:
        return code_of(chmod(version.text, 0666));
    case TRY_VERSION_UNLINK:
        return code_of(unlink(version.text));
    case TRY_LOCK_OPEN_READ:
        return open_code(lock.text, O_RDONLY);
    case TRY_LOCK_OPEN_RDWR:
        return open_code(lock.text, O_RDWR);
    case TRY_NEXT_CREATE:
        return open_code(next.text, O_WRONLY | O_CREAT | O_EXCL);
    case TRY_NEXT_MKDIR:
        return code_of(mkdir(next.text, 0755));
    case TRY_NEXT_MKFIFO:
        return code_of(mkfifo(next.text, 0644));
    case TRY_NEXT_SYMLINK:
        return code_of(symlink(own_file.text, next.text));
    case TRY_NEXT_LINK:
        return code_of(link(own_file.text, next.text));
    case TRY_NEXT_RENAME:
        return code_of(rename(own_file.text, next.text));
    case TRY_RING_CHMOD:
        return code_of(chmod(ring.text, 0777));
    case TRY_RING_RMDIR:
        return code_of(rmdir(ring.text));
    case TRY_RING_RENAME:
        return code_of(rename(ring.text, moved.text));
    case TRY_RING_REPLACE_BY_FILE:
        return code_of(rename(own_file.text, ring.text));
    case TRY_RING_REPLACE_BY_DIRECTORY:
        return code_of(rename(own_directory.text, ring.text));
    case TRY_RING_EXCHANGE:
        return code_of(renameat2(AT_FDCWD, own_directory.text, AT_FDCWD, ring.text,
                                 RENAME_EXCHANGE));
    case TRY_COUNT:
        break;
    }
    return 0;
}

/* The attacker makes his own file and directory next to the ring (code), then makes
 * every attempt (codes[TRY_*]). */
static void attempts_step(const void *arg, struct outcome *out)
{
    (void)arg;
    out->code = test_try_make_file(entry_path("shmring.%s.999", scene.ring).text, 0644);
    if (out->code == 0)
        out->code =
            test_try_make_directory(entry_path("shmring.%s.1000", scene.ring).text, 0755);
    for (int i = 0; i < TRY_COUNT; i++)
        out->codes[i] = attempt((enum attempt)i);
}

/* Whatever the attacker tries on the owner's ring (mode 0644, so he may read it, or
 * 0600) fails exactly as the permissions say: he can neither write, truncate, map
 * for writing, chmod, remove, rename or replace anything of the ring, nor add
 * anything to its directory (no version name can be squatted), nor open its lock.
 * The ring answers as before and the owner's next publication succeeds. */
START_TEST(test_attacker_cannot_change_ring)
{
    SKIP_UNLESS_ROOT("acting as nobody (uid 65534) needs root");
    USE_OWNER(_i / 2);
    bool readable = _i % 2 == 0;
    struct write_args args = {.ring = scene.ring,
                              .flags = CREATE,
                              .set = scene.first,
                              .set_mode = true,
                              .mode = readable ? 0644 : 0600};
    struct outcome out = run_step(&scene.owner, write_step, &args, "the owner's init");
    assert_code(out.code, 0);
    assert_code(out.publish, 0);
    uint64_t print = fingerprint(ring_path(scene.ring).text);
    struct reader rd;
    reader_start(&rd, &scene.owner, scene.ring, 0, true, 1, scene.first_digest);

    out = run_step(&attacker, attempts_step, NULL, "the attacker's attempts");
    assert_code(out.code, 0);
    for (int i = 0; i < TRY_COUNT; i++) {
        int expected = readable ? attempts[i].readable : attempts[i].unreadable;
        ck_assert_msg(out.codes[i] == expected,
                      "the attacker's \"%s\": %d (%s), expected %s", attempts[i].what,
                      out.codes[i], strerror(-out.codes[i]), strerror(-expected));
    }
    ck_assert_uint_eq(fingerprint(ring_path(scene.ring).text), print);
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.1");
    expect_unmoved(&rd, 1, scene.first_digest);
    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);

    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.2");
    expect_follows(&rd, 2, scene.second_digest);
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    agent_stop(&rd.agent);
}
END_TEST

/* What the attacker names like the hidden directories of the ring (a creation or a
 * destruction in progress, of a live process (pid 1) or a dead one (no pid can be
 * 2147483647 or 2147483646)) and like a ring's old version object. */
enum hidden_kind {
    HIDDEN_FILE,
    HIDDEN_DIRECTORY,
    HIDDEN_RING_LIKE,
    HIDDEN_FIFO,
    HIDDEN_LINK
};

static const struct hidden_squat {
    /* The name is PREFIX RING SUFFIX. */
    const char *prefix;
    const char *suffix;
    enum hidden_kind kind;
} hidden_squats[] = {
    {".shmring-new.", ".1.0123456789abcdef", HIDDEN_DIRECTORY},
    {".shmring-new.", ".2147483647.0123456789abcdef", HIDDEN_RING_LIKE},
    {".shmring-new.", ".2147483646.0123456789abcdef", HIDDEN_FIFO},
    {".shmring-gone.", ".1.0123456789abcdef", HIDDEN_FILE},
    {".shmring-gone.", ".2147483647.0123456789abcdef", HIDDEN_RING_LIKE},
    /* Named like a destruction that died, pointing at the live ring. */
    {".shmring-gone.", ".2147483646.fedcba9876543210", HIDDEN_LINK},
    {"shmring.", ".999", HIDDEN_DIRECTORY},
    {"shmring.", ".1000", HIDDEN_FILE},
};

/* What the owner's killed creators and destroyers left, named by pids of this pid
 * namespace that do not exist: the sweep must remove these. Their suffixes carry
 * this namespace's tag (set_leftover_suffixes()), as a creator here writes it. */
static char leftover_suffixes[2][48];
static struct hidden_squat owner_leftovers[] = {
    {".shmring-new.", leftover_suffixes[0], HIDDEN_DIRECTORY},
    {".shmring-gone.", leftover_suffixes[1], HIDDEN_RING_LIKE},
};

/* A creator's leftover from another pid namespace, changed just now: its pid means
 * nothing here, so the sweep must leave it for the grace period. */
static const struct hidden_squat foreign_leftover = {
    ".shmring-new.", ".2147483647.00000000cccccccc", HIDDEN_DIRECTORY};

/* Writes the owner's leftover suffixes: a dead pid, this pid namespace's tag (the
 * low 32 bits of its inode, as lib/ring_dir.c writes it) and a random part. */
static void set_leftover_suffixes(void)
{
    struct stat st;
    ck_assert_int_eq(stat("/proc/self/ns/pid", &st), 0);
    unsigned tag = (unsigned)(uint32_t)st.st_ino;
    ck_assert_uint_ne(tag, 0);
    snprintf(leftover_suffixes[0], sizeof(leftover_suffixes[0]),
             ".2147483647.%08xaaaaaaaa", tag);
    snprintf(leftover_suffixes[1], sizeof(leftover_suffixes[1]),
             ".2147483647.%08xbbbbbbbb", tag);
}

/* The path of SQUAT, and of NAME in it (NULL: none). */
static struct path hidden_path(const struct hidden_squat *squat, const char *name)
{
    return entry_path("%s%s%s%s%s", squat->prefix, scene.ring, squat->suffix,
                      name != NULL ? "/" : "", name != NULL ? name : "");
}

static int make_hidden(const struct hidden_squat *squat)
{
    struct path path = hidden_path(squat, NULL);
    int code;
    switch (squat->kind) {
    case HIDDEN_FILE:
        return test_try_make_file(path.text, 0644);
    case HIDDEN_DIRECTORY:
        return test_try_make_directory(path.text, 0755);
    case HIDDEN_RING_LIKE:
        /* Like a ring's directory, with a free lock and a control object. */
        code = test_try_make_directory(path.text, 0755);
        if (code == 0)
            code = test_try_make_file(hidden_path(squat, "lock").text, 0600);
        return code != 0 ? code
                         : test_try_make_file(hidden_path(squat, "control").text, 0644);
    case HIDDEN_FIFO:
        return make_fifo(path.text);
    case HIDDEN_LINK:
        return code_of(symlink(ring_entry(scene.ring), path.text));
    }
    return 0;
}

/* Makes each of ARG's hidden squats (codes[i]). */
static void hidden_step(const void *arg, struct outcome *out)
{
    const struct hidden_squat *list = arg;
    size_t count = list == hidden_squats     ? COUNT_OF(hidden_squats)
                   : list == owner_leftovers ? COUNT_OF(owner_leftovers)
                                             : 1;
    for (size_t i = 0; i < count; i++)
        out->codes[i] = make_hidden(&list[i]);
}

/* Objects of the attacker's named like the ring's hidden directories (creation or
 * destruction in progress, by live or dead pids) and like old version objects: the
 * owner's init, publication and destroy succeed, and neither they nor the writer's
 * sweep of killed writers' leftovers touch the attacker's objects, while the sweep
 * does remove the owner's own leftovers. */
START_TEST(test_hidden_names_squatted)
{
    SKIP_UNLESS_ROOT("acting as nobody (uid 65534) needs root");
    USE_OWNER(_i);
    struct outcome out =
        run_step(&attacker, hidden_step, hidden_squats, "the attacker's squats");
    uint64_t prints[COUNT_OF(hidden_squats)];
    for (size_t i = 0; i < COUNT_OF(hidden_squats); i++) {
        assert_code(out.codes[i], 0);
        prints[i] = fingerprint(hidden_path(&hidden_squats[i], NULL).text);
    }
    set_leftover_suffixes();
    out = run_step(&scene.owner, hidden_step, owner_leftovers, "the owner's leftovers");
    for (size_t i = 0; i < COUNT_OF(owner_leftovers); i++)
        assert_code(out.codes[i], 0);
    out = run_step(&scene.owner, hidden_step, &foreign_leftover, "a foreign leftover");
    assert_code(out.codes[0], 0);
    uint64_t foreign_print = fingerprint(hidden_path(&foreign_leftover, NULL).text);

    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    for (size_t i = 0; i < COUNT_OF(owner_leftovers); i++)
        ck_assert_uint_eq(fingerprint(hidden_path(&owner_leftovers[i], NULL).text), 0);
    ck_assert_uint_eq(fingerprint(hidden_path(&foreign_leftover, NULL).text),
                      foreign_print);
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.1");
    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    expect_answers(&scene.owner, scene.ring, 0, 2, scene.second_digest);
    /* Another writer's open sweeps again. */
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.first), 3);
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    ck_assert_uint_eq(fingerprint(ring_path(scene.ring).text), 0);
    for (size_t i = 0; i < COUNT_OF(hidden_squats); i++)
        ck_assert_msg(fingerprint(hidden_path(&hidden_squats[i], NULL).text) == prints[i],
                      "the attacker's %s was changed",
                      hidden_path(&hidden_squats[i], NULL).text);
}
END_TEST

/* ---- 5. Modes that would let others write -------------------------------------- */

/* Modes that give anyone but the owner write access, or take the owner's read or
 * write away, or add other bits, are refused (whichever way the ring is created),
 * and nothing is created; the four valid modes give exactly the documented modes. */
START_TEST(test_invalid_modes_refused)
{
    static const mode_t invalid[] = {0666, 0660, 0646, 0664, 0662,  0622,  0,    0400,
                                     0200, 0700, 0755, 0444, 04644, 02644, 01644};
    static const unsigned flag_sets[] = {CREATE, CREATE | EXCL, CREATE | ATOMIC};
    for (size_t i = 0; i < COUNT_OF(invalid); i++) {
        for (size_t f = 0; f < COUNT_OF(flag_sets); f++) {
            struct write_args args = {.ring = scene.ring,
                                      .flags = flag_sets[f],
                                      .set = scene.first,
                                      .set_mode = true,
                                      .mode = invalid[i]};
            struct outcome out = run_step(&scene.owner, write_step, &args, "a writer");
            ck_assert_msg(out.code == SHMRING_EINVAL, "mode 0%o, flags %u: %d (%s)",
                          (unsigned)invalid[i], flag_sets[f], out.code,
                          shmring_strerror(out.code));
        }
        ck_assert_str_eq(ring_entries(scene.ring), "");
    }
    static const struct {
        mode_t mode;
        mode_t directory;
    } valid[] = {{0600, 0700}, {0640, 0750}, {0604, 0705}, {0644, 0755}};
    for (size_t i = 0; i < COUNT_OF(valid); i++) {
        struct write_args args = {.ring = scene.ring,
                                  .flags = CREATE | ATOMIC,
                                  .set = scene.first,
                                  .set_mode = true,
                                  .mode = valid[i].mode};
        struct outcome out = run_step(&scene.owner, write_step, &args, "a writer");
        assert_code(out.code, 0);
        assert_code(out.publish, 0);
        struct stat st;
        ck_assert_int_eq(stat(ring_path(scene.ring).text, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, valid[i].directory);
        ck_assert_int_eq(stat(object_path(scene.ring, "control").text, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, valid[i].mode);
        ck_assert_int_eq(stat(object_path(scene.ring, "lock").text, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_int_eq(stat(version_path(scene.ring, 1).text, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, valid[i].mode & 0444);
        assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    }
}
END_TEST

/* The owner's misconfiguration: the control object or the ring's directory made
 * writable by group or others. */
static const struct writable_case {
    /* NULL: the ring's directory. */
    const char *object;
    mode_t mode;
} writable_cases[] = {
    {"control", 0664}, {"control", 0646}, {"control", 0666},
    {NULL, 0775},      {NULL, 0757},      {NULL, 0777},
};

/* A ring whose control object or directory the owner made writable by others is
 * refused by new readers and by writers (SHMRING_EOWNER); running readers keep
 * answering; once the mode is fixed, everything works again. */
START_TEST(test_writable_ring_refused)
{
    const struct writable_case *c = &writable_cases[_i];
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    struct reader rd;
    reader_start(&rd, &scene.owner, scene.ring, 0, false, 1, scene.first_digest);
    struct path path =
        c->object != NULL ? object_path(scene.ring, c->object) : ring_path(scene.ring);
    struct stat st;
    ck_assert_int_eq(stat(path.text, &st), 0);
    ck_assert_int_eq(chmod(path.text, c->mode), 0);

    expect_refused(&scene.owner, scene.ring, 0, SHMRING_EOWNER);
    struct outcome out = write_as(&scene.owner, scene.ring, 0, 0, scene.second);
    assert_code(out.code, SHMRING_EOWNER);
    out = write_as(&scene.owner, scene.ring, CREATE, 0, scene.second);
    assert_code(out.code, SHMRING_EOWNER);
    expect_unmoved(&rd, 1, scene.first_digest);

    ck_assert_int_eq(chmod(path.text, st.st_mode & 07777), 0);
    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    expect_follows(&rd, 2, scene.second_digest);
    agent_stop(&rd.agent);
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
}
END_TEST

/* A version made writable (by anyone, the owner included), or given to another user. */
static const struct version_case {
    mode_t mode;
    bool attackers;
} version_cases[] = {
    {0644, false}, {0464, false}, {0446, false}, {0666, false}, {0444, true},
};

/* A published version that someone could still write, or that is not the owner's,
 * is refused: a new reader gets SHMRING_EOWNER (the ring's status, which reads only
 * the control object, still works), and a running reader keeps answering from the
 * last version it validated; once fixed, the reader follows. */
START_TEST(test_writable_version_refused)
{
    const struct version_case *c = &version_cases[_i];
    if (c->attackers)
        SKIP_UNLESS_ROOT("chown() to nobody (uid 65534) needs root");
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    struct reader rd;
    reader_start(&rd, &scene.owner, scene.ring, 0, false, 1, scene.first_digest);
    /* The idle reader has not seen generation 2 before the version is spoiled. */
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    struct path path = version_path(scene.ring, 2);
    if (c->attackers)
        ck_assert_int_eq(chown(path.text, attacker.uid, attacker.gid), 0);
    ck_assert_int_eq(chmod(path.text, c->mode), 0);

    expect_unmoved(&rd, 1, scene.first_digest);
    struct outcome out = open_as(&scene.owner, scene.ring, 0);
    assert_code(out.code, SHMRING_EOWNER);
    assert_code(out.codes[0], 0);
    assert_code(out.codes[1], SHMRING_EOWNER);
    expect_unmoved(&rd, 1, scene.first_digest);

    if (c->attackers)
        ck_assert_int_eq(chown(path.text, scene.owner.uid, scene.owner.gid), 0);
    ck_assert_int_eq(chmod(path.text, 0444), 0);
    expect_follows(&rd, 2, scene.second_digest);
    expect_answers(&scene.owner, scene.ring, 0, 2, scene.second_digest);
    agent_stop(&rd.agent);
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
}
END_TEST

/* ---- 6. The directory of rings ------------------------------------------------- */

static const struct base_case {
    mode_t mode;
    /* Owned by daemon (uid 1), not by the ring's owner. */
    bool daemons;
    int code;
} base_cases[] = {
    {0777, false, SHMRING_EBASEDIR},
    {0775, false, SHMRING_EBASEDIR},
    {0757, false, SHMRING_EBASEDIR},
    {0770, false, SHMRING_EBASEDIR},
    {01777, false, 0},
    {0755, false, 0},
    {0700, false, 0},
    {0755, true, SHMRING_EBASEOWNER},
    {01777, true, SHMRING_EBASEOWNER},
};

/* A directory of rings that others may write without the sticky bit is refused by
 * readers, writers and destroy (SHMRING_EBASEDIR); 1777 (like /dev/shm) and 0755 are
 * fine. One owned by another non-root user is refused (SHMRING_EBASEOWNER, whatever
 * its mode), except by that user and by readers that trust that user. */
START_TEST(test_base_directory)
{
    const struct base_case *c = &base_cases[_i];
    if (c->daemons)
        SKIP_UNLESS_ROOT("chown() to daemon (uid 1) needs root");
    char name[SHMRING_RING_NAME_MAX + 1];
    snprintf(name, sizeof(name), "%s", test_ring_name("base"));
    char base[sizeof(work_directory) + sizeof(name)];
    snprintf(base, sizeof(base), "%s/%s", work_directory, name);
    ck_assert_int_eq(mkdir(base, 0755), 0);
    ck_assert_int_eq(chmod(base, 0755), 0);
    scene.directory = base;
    const struct user *creator = &scene.owner;
    if (c->daemons) {
        creator = &daemon_user;
        ck_assert_int_eq(chown(base, daemon_user.uid, daemon_user.gid), 0);
    }
    struct outcome out = write_as(creator, scene.ring, CREATE, 0, scene.first);
    assert_code(out.code, 0);
    assert_code(out.publish, 0);
    ck_assert_int_eq(chmod(base, c->mode), 0);

    if (c->daemons) {
        expect_refused(&root_user, scene.ring, 0, c->code);
        expect_refused(&attacker, scene.ring, 0, c->code);
        expect_answers(&root_user, scene.ring, daemon_user.uid, 1, scene.first_digest);
        out = write_as(&root_user, scene.other, CREATE, 0, scene.first);
        assert_code(out.code, c->code);
        assert_code(destroy_as(&root_user, scene.ring, 0), c->code);
        out = write_as(&daemon_user, scene.ring, 0, 0, scene.second);
        assert_code(out.code, 0);
        assert_code(out.publish, 0);
        expect_answers(&daemon_user, scene.ring, 0, 2, scene.second_digest);
        assert_code(destroy_as(&daemon_user, scene.ring, 0), 0);
    } else if (c->code != 0) {
        expect_refused(&scene.owner, scene.ring, 0, c->code);
        out = write_as(&scene.owner, scene.ring, 0, 0, scene.second);
        assert_code(out.code, c->code);
        out = write_as(&scene.owner, scene.other, CREATE | ATOMIC, 0, scene.first);
        assert_code(out.code, c->code);
        assert_code(destroy_as(&scene.owner, scene.ring, 0), c->code);
        ck_assert_str_eq(test_listing(base), ring_entry(scene.ring));
        ck_assert_int_eq(chmod(base, 0755), 0);
        expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
        assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    } else {
        expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
        ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
        expect_answers(&scene.owner, scene.ring, 0, 2, scene.second_digest);
        assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    }
    ck_assert_str_eq(test_listing(base), "");
    test_remove_tree(base);
    scene.directory = NULL;
}
END_TEST

/* ---- 7. Full shared memory ----------------------------------------------------- */

/* What runs out in the tiny tmpfs. */
enum shortage {
    NO_SPACE,
    /* One page left: room for a control object, not for a version. */
    ONE_PAGE,
    NO_INODE,
    SHORTAGE_COUNT
};

#define FULL_DIRECTORY SHMRING_DEFAULT_DIRECTORY "/rings"
#define FILLER SHMRING_DEFAULT_DIRECTORY "/filler"

/* Moves this test process into a private mount namespace (it dies with the process)
 * with a tiny tmpfs on /dev/shm, and makes its directory FULL_DIRECTORY (1777) the
 * scene's directory. */
static void enter_tiny_shm(enum shortage shortage)
{
    ck_assert_msg(unshare(CLONE_NEWNS) == 0, "unshare: %s", strerror(errno));
    ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
    const char *options =
        shortage == NO_INODE ? "size=1m,nr_inodes=64,mode=1777" : "size=256k,mode=1777";
    ck_assert_msg(mount("shmring-check", SHMRING_DEFAULT_DIRECTORY, "tmpfs",
                        MS_NOSUID | MS_NODEV | MS_NOEXEC, options) == 0,
                  "mount: %s", strerror(errno));
    ck_assert_int_eq(mkdir(FULL_DIRECTORY, 01777), 0);
    ck_assert_int_eq(chmod(FULL_DIRECTORY, 01777), 0);
    scene.directory = FULL_DIRECTORY;
}

/* Fills the tmpfs: every page, every page but one, or every inode. */
static void fill_shm(enum shortage shortage)
{
    struct statvfs fs;
    if (shortage == NO_INODE) {
        for (unsigned i = 0;; i++) {
            char path[64];
            snprintf(path, sizeof(path), FILLER ".%u", i);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0) {
                ck_assert_int_eq(errno, ENOSPC);
                break;
            }
            close(fd);
        }
        ck_assert_int_eq(statvfs(SHMRING_DEFAULT_DIRECTORY, &fs), 0);
        ck_assert_uint_eq(fs.f_ffree, 0);
        return;
    }
    int fd = open(FILLER, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    static const char chunk[65536];
    off_t size = 0;
    for (;;) {
        ssize_t n = write(fd, chunk, sizeof(chunk));
        if (n < 0) {
            ck_assert_int_eq(errno, ENOSPC);
            break;
        }
        size += n;
    }
    if (shortage == ONE_PAGE)
        ck_assert_int_eq(ftruncate(fd, size - sysconf(_SC_PAGESIZE)), 0);
    close(fd);
    ck_assert_int_eq(statvfs(SHMRING_DEFAULT_DIRECTORY, &fs), 0);
    ck_assert_uint_eq(fs.f_bfree, shortage == ONE_PAGE ? 1 : 0);
}

/* Frees what fill_shm() took. */
static void empty_shm(void)
{
    DIR *dir = opendir(SHMRING_DEFAULT_DIRECTORY);
    ck_assert_ptr_nonnull(dir);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (strncmp(entry->d_name, "filler", 6) == 0)
            ck_assert_int_eq(unlinkat(dirfd(dir), entry->d_name, 0), 0);
    closedir(dir);
}

/* Ring RING at generation 1 in the tiny tmpfs, a reader looking keys up all the time,
 * and the tmpfs full. */
static void full_shm_start(enum shortage shortage, struct reader *rd)
{
    enter_tiny_shm(shortage);
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    reader_start(rd, &scene.owner, scene.ring, 0, true, 1, scene.first_digest);
    fill_shm(shortage);
}

/* Ring RING is intact: generation 1, its directory as the last publication left it,
 * its readers answering as before. */
static void expect_intact(struct reader *rd)
{
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.1");
    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
    expect_unmoved(rd, 1, scene.first_digest);
}

/* In a tmpfs with no page, one page or no inode left: creating a ring (atomically or
 * not) fails with SHMRING_ENOSPC and leaves nothing, not even a hidden directory (or,
 * with one page, a whole empty ring when not atomic); a publication that does not fit
 * fails with SHMRING_ENOSPC and leaves the ring at its generation with exactly its
 * objects; a reader looking keys up meanwhile keeps answering; nothing dies of
 * SIGBUS. With room again, the same calls succeed. */
START_TEST(test_full_shm)
{
    SKIP_UNLESS_ROOT("mounting a private tmpfs needs root");
    enum shortage shortage = (enum shortage)_i;
    struct reader rd;
    full_shm_start(shortage, &rd);

    struct outcome out = write_as(&scene.owner, scene.other, CREATE, 0, scene.first);
    if (shortage == ONE_PAGE) {
        assert_code(out.code, 0);
        assert_code(out.publish, SHMRING_ENOSPC);
        ck_assert_str_eq(ring_files(scene.other), "control,lock");
        struct outcome opened = open_as(&scene.owner, scene.other, 0);
        assert_code(opened.code, 0);
        ck_assert_uint_eq(opened.generation, 0);
        assert_code(destroy_as(&scene.owner, scene.other, 0), 0);
    } else {
        assert_code(out.code, SHMRING_ENOSPC);
    }
    ck_assert_str_eq(ring_entries(scene.other), "");
    out = write_as(&scene.owner, scene.other, CREATE | ATOMIC, 0, scene.first);
    if (shortage == ONE_PAGE) {
        assert_code(out.code, 0);
        assert_code(out.publish, SHMRING_ENOSPC);
    } else {
        assert_code(out.code, SHMRING_ENOSPC);
    }
    ck_assert_str_eq(ring_entries(scene.other), "");
    expect_refused(&scene.owner, scene.other, 0, SHMRING_ENOENT);

    out = write_as(&scene.owner, scene.ring, 0, 0, scene.second);
    assert_code(out.code, 0);
    assert_code(out.publish, SHMRING_ENOSPC);
    expect_intact(&rd);
    struct statvfs fs;
    ck_assert_int_eq(statvfs(SHMRING_DEFAULT_DIRECTORY, &fs), 0);
    if (shortage == NO_INODE)
        ck_assert_uint_eq(fs.f_ffree, 0);
    else
        ck_assert_uint_eq(fs.f_bfree, shortage == ONE_PAGE ? 1 : 0);

    empty_shm();
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    expect_follows(&rd, 2, scene.second_digest);
    ck_assert_uint_eq(owner_publish(scene.other, CREATE | ATOMIC, scene.first), 1);
    assert_code(destroy_as(&scene.owner, scene.other, 0), 0);
    agent_stop(&rd.agent);
}
END_TEST

/* ---- ringctl ------------------------------------------------------------------- */

/* Runs ringctl with ARGS (NULL-terminated) and INPUT (NULL: none) on its standard
 * input, as this process's user, under an alarm; RUN (zeroed at first) holds the
 * previous run's output, which this frees. */
static void ringctl(struct test_run *run, const char *input, const char *const *args)
{
    struct test_spawn how = test_spawn_default;
    how.alarm_seconds = STEP_TIMEOUT_S;
    test_run_free(run);
    test_run_with(run, &how, input, args);
}

static int count_lines(const char *text)
{
    int lines = 0;
    for (; *text != '\0'; text++)
        lines += *text == '\n';
    return lines;
}

/* RUN failed (exit 1) with LINES lines on stderr, the last "ringctl: error: ..."
 * holding NEEDLE (case-insensitive). */
static void expect_failed(const struct test_run *run, int lines, const char *needle)
{
    ck_assert_msg(run->status == 1, "ringctl exited with %d; stderr: %s", run->status,
                  run->err);
    ck_assert_msg(count_lines(run->err) == lines &&
                      run->err[strlen(run->err) - 1] == '\n',
                  "ringctl wrote %d lines to stderr, expected %d: %s",
                  count_lines(run->err), lines, run->err);
    const char *last = run->err;
    for (const char *p = run->err; p[1] != '\0'; p++)
        if (*p == '\n')
            last = p + 1;
    ck_assert_msg(strncmp(last, "ringctl: error: ", 16) == 0 && strcasestr(last, needle),
                  "ringctl's error does not say \"%s\": %s", needle, last);
}

/* ringctl's changing commands in a full tmpfs, with --dir naming a directory in it:
 * init, a creating load, load and add on the existing ring all exit 1 with one line
 * saying there is no space left, leave nothing of a new ring and the existing ring
 * intact, its reader answering as before. With room again, add succeeds. */
START_TEST(test_full_shm_ringctl)
{
    SKIP_UNLESS_ROOT("mounting a private tmpfs needs root");
    enum shortage shortage = (enum shortage)_i;
    struct reader rd;
    full_shm_start(shortage, &rd);
    char *json;
    ck_assert_int_eq(shmring_nodeset_to_json(scene.second, &json), 0);
    struct test_run run = {0};

    ringctl(
        &run, NULL,
        (const char *const[]){"--dir", FULL_DIRECTORY, "-r", scene.other, "init", NULL});
    expect_failed(&run, 1, "no space left");
    ck_assert_str_eq(ring_entries(scene.other), "");
    ringctl(&run, json,
            (const char *const[]){"--dir", FULL_DIRECTORY, "-r", scene.other, "load", "-",
                                  NULL});
    expect_failed(&run, 1, "no space left");
    ck_assert_str_eq(ring_entries(scene.other), "");
    ringctl(&run, json,
            (const char *const[]){"--dir", FULL_DIRECTORY, "-r", scene.ring, "load", "-",
                                  NULL});
    expect_failed(&run, 1, "no space left");
    expect_intact(&rd);
    ringctl(&run, NULL,
            (const char *const[]){"--dir", FULL_DIRECTORY, "-r", scene.ring, "add",
                                  "node-9", "10.0.0.9:11211", NULL});
    expect_failed(&run, 1, "no space left");
    expect_intact(&rd);

    empty_shm();
    ringctl(&run, NULL,
            (const char *const[]){"--dir", FULL_DIRECTORY, "-r", scene.ring, "add",
                                  "node-9", "10.0.0.9:11211", NULL});
    ck_assert_msg(run.status == 0, "ringctl add exited with %d: %s", run.status, run.err);
    shmring_nodeset_t *grown = test_nodeset(5, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_int_eq(
        shmring_nodeset_add(grown, "node-9", "10.0.0.9:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    uint32_t grown_digest = digest_set(grown);
    shmring_nodeset_free(grown);
    expect_follows(&rd, 2, grown_digest);
    expect_answers(&scene.owner, scene.ring, 0, 2, grown_digest);
    free(json);
    agent_stop(&rd.agent);
    test_run_free(&run);
}
END_TEST

/* The holder: keeps a descriptor open on each version of the scene's ring that the
 * parent names (a uint64_t), answering each with the errno of its open() (0: held). */
static void holder_agent(const void *arg, int from_parent, int to_parent)
{
    (void)arg;
    uint64_t generation;
    while (read_full(from_parent, &generation, sizeof(generation))) {
        int fd = open(version_path(scene.ring, generation).text, O_RDONLY | O_CLOEXEC);
        int code = fd < 0 ? errno : 0;
        if (!write_full(to_parent, &code, sizeof(code)))
            _exit(EXIT_NO_PIPE);
    }
    wait_for_end(from_parent);
}

/* The holder opens version GENERATION, which the owner has just published; returns
 * the bytes (whole pages) it keeps in use once superseded. */
static uint64_t hold_version(struct agent *holder, uint64_t generation)
{
    struct stat st;
    ck_assert_int_eq(stat(version_path(scene.ring, generation).text, &st), 0);
    agent_send(holder, &generation, sizeof(generation));
    int code;
    agent_receive(holder, &code, sizeof(code));
    ck_assert_msg(code == 0, "the holder cannot open version %llu: %s",
                  (unsigned long long)generation, strerror(code));
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return ((uint64_t)st.st_size + page - 1) / page * page;
}

/*
 * Issue 23: another user who may read the ring keeps descriptors on versions 1 and 2
 * (unlinked once superseded, so ls shows nothing) until the tmpfs is full. ringctl's
 * publication, and sync's, then fail saying who holds what: ringctl exits 1 with one
 * line, "cannot publish ring 'R': no space left in shared memory; 2 superseded
 * versions (B) are held by pid P (uid 65534)", and sync --once logs the same and
 * exits 1; the ring stays at generation 3, answering as before.
 */
START_TEST(test_full_shm_names_holders)
{
    SKIP_UNLESS_ROOT("mounting a private tmpfs and acting as nobody need root");
    enter_tiny_shm(NO_SPACE);
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    struct agent holder;
    agent_start(&holder, &attacker, holder_agent, NULL, "the holder");
    uint64_t held = hold_version(&holder, 1);
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.second), 2);
    held += hold_version(&holder, 2);
    ck_assert_uint_eq(owner_publish(scene.ring, 0, scene.first), 3);
    char *json;
    ck_assert_int_eq(shmring_nodeset_to_json(scene.second, &json), 0);
    /* In the tiny tmpfs, which goes with this test's mount namespace. */
    const char *source = FULL_DIRECTORY "/source.json";
    int fd = open(source, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert(write_full(fd, json, strlen(json)));
    close(fd);
    free(json);
    fill_shm(NO_SPACE);
    char held_text[64];
    snprintf(held_text, sizeof(held_text), "%.1f KiB", (double)held / 1024.0);
    char holders[256];
    snprintf(holders, sizeof(holders),
             "no space left in shared memory; 2 superseded versions (%s) are held by "
             "pid %d (uid 65534)",
             held_text, (int)holder.pid);

    struct test_run run = {0};
    ringctl(&run, NULL,
            (const char *const[]){"--dir", FULL_DIRECTORY, "-r", scene.ring, "add",
                                  "node-9", "10.0.0.9:11211", NULL});
    char expected[1024];
    snprintf(expected, sizeof(expected), "ringctl: error: cannot publish ring '%s': %s\n",
             scene.ring, holders);
    ck_assert_int_eq(run.status, 1);
    ck_assert_str_eq(run.err, expected);
    ck_assert_str_eq(run.out, "");
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.3");
    expect_answers(&scene.owner, scene.ring, 0, 3, scene.first_digest);

    ringctl(&run, NULL,
            (const char *const[]){"--dir", FULL_DIRECTORY, "-r", scene.ring, "sync",
                                  "--file", source, "--once", NULL});
    snprintf(expected, sizeof(expected),
             "ringctl: sync: ring '%s': cannot publish file %s: %s; ring unchanged\n",
             scene.ring, source, holders);
    ck_assert_int_eq(run.status, 1);
    ck_assert_str_eq(run.err, expected);
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.3");
    expect_answers(&scene.owner, scene.ring, 0, 3, scene.first_digest);
    agent_stop(&holder);
    test_run_free(&run);
}
END_TEST

/* ringctl --wait bounds the wait for a writer of the owner's that holds the lock
 * (stopped): --wait 0 fails at once with one error line, --wait 1 says once that it
 * waits and then fails, exit 1 and the ring unchanged either way; destroy likewise.
 * Once the writer goes on, --wait 0 succeeds. */
START_TEST(test_ringctl_wait)
{
    ck_assert_uint_eq(owner_publish(scene.ring, CREATE, scene.first), 1);
    struct agent writer;
    stopped_writer_start(&writer, scene.ring);
    const char *busy = shmring_strerror(SHMRING_EBUSY);
    struct test_run run = {0};

    ringctl(&run, NULL,
            (const char *const[]){"--wait", "0", "-r", scene.ring, "add", "node-9",
                                  "10.0.0.9:11211", NULL});
    expect_failed(&run, 1, busy);
    ringctl(&run, NULL,
            (const char *const[]){"--wait", "1", "-r", scene.ring, "add", "node-9",
                                  "10.0.0.9:11211", NULL});
    expect_failed(&run, 2, busy);
    ringctl(&run, NULL,
            (const char *const[]){"--wait", "0", "-r", scene.ring, "destroy", NULL});
    expect_failed(&run, 1, busy);
    expect_answers(&scene.owner, scene.ring, 0, 1, scene.first_digest);
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.1");

    stopped_writer_resume(&writer);
    ringctl(&run, NULL,
            (const char *const[]){"--wait", "0", "-r", scene.ring, "add", "node-9",
                                  "10.0.0.9:11211", NULL});
    ck_assert_msg(run.status == 0, "ringctl add exited with %d: %s", run.status, run.err);
    ck_assert_str_eq(ring_files(scene.ring), "control,lock,version.2");
    assert_code(destroy_as(&scene.owner, scene.ring, 0), 0);
    test_run_free(&run);
}
END_TEST

/* ringctl init on a squatted name fails with one line naming the path, what is there
 * and who owns it (docs/security.md: "/dev/shm/shmring.web is a FIFO owned by uid 65534
 * (nobody)"), and leaves the squat as it is. */
START_TEST(test_ringctl_names_squatter)
{
    SKIP_UNLESS_ROOT("acting as nobody (uid 65534) needs root");
    enum squat kind = (enum squat)_i;
    if (kind == SQUAT_LINK_OWNER)
        ck_assert_uint_eq(owner_publish(scene.other, CREATE, scene.first), 1);
    uint64_t print = attacker_squat(kind);
    struct test_run run = {0};
    ringctl(&run, NULL, (const char *const[]){"-r", scene.ring, "init", NULL});
    char expected[PATH_MAX + 64];
    snprintf(expected, sizeof(expected), "%s is a %s owned by uid 65534 (nobody)",
             ring_path(scene.ring).text, squats[kind].kind);
    expect_failed(&run, 1, expected);
    ck_assert_uint_eq(fingerprint(ring_path(scene.ring).text), print);
    test_run_free(&run);
}
END_TEST

/* ---- Suite --------------------------------------------------------------------- */

static TCase *tcase(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, TEST_TIMEOUT_S);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *security_suite(void)
{
    Suite *s = suite_create("security");
    TCase *hijack = tcase(s, "hijack");
    tcase_add_loop_test(hijack, test_squat_before_init, 0, 2 * SQUAT_COUNT);
    tcase_add_loop_test(hijack, test_squat_after_destroy, 0, 2 * SQUAT_COUNT);
    tcase_add_test(hijack, test_handle_pins_first_owner);

    TCase *blocking = tcase(s, "blocking");
    tcase_add_loop_test(blocking, test_flock_cannot_block_owner, 0, 4);
    tcase_add_loop_test(blocking, test_stopped_writer_bounds_wait, 0, 2);

    TCase *squatting = tcase(s, "squatting");
    tcase_add_loop_test(squatting, test_attacker_cannot_change_ring, 0, 4);
    tcase_add_loop_test(squatting, test_hidden_names_squatted, 0, 2);

    TCase *writable = tcase(s, "writable");
    tcase_add_test(writable, test_invalid_modes_refused);
    tcase_add_loop_test(writable, test_writable_ring_refused, 0,
                        (int)COUNT_OF(writable_cases));
    tcase_add_loop_test(writable, test_writable_version_refused, 0,
                        (int)COUNT_OF(version_cases));

    TCase *base = tcase(s, "base directory");
    tcase_add_unchecked_fixture(base, work_directory_create, work_directory_remove);
    tcase_add_loop_test(base, test_base_directory, 0, (int)COUNT_OF(base_cases));

    TCase *full = tcase(s, "full shared memory");
    tcase_add_loop_test(full, test_full_shm, 0, SHORTAGE_COUNT);

    TCase *tool = tcase(s, "ringctl");
    tcase_add_loop_test(tool, test_full_shm_ringctl, 0, SHORTAGE_COUNT);
    tcase_add_test(tool, test_full_shm_names_holders);
    tcase_add_test(tool, test_ringctl_wait);
    tcase_add_loop_test(tool, test_ringctl_names_squatter, 0, SQUAT_COUNT);
    return s;
}

int main(void)
{
    return test_run_suite(security_suite());
}
