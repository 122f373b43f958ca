/*
 * The test support library (tests/support/, libuv's test/runner.c and task.h
 * shape): what more than one test program needs, once. Every test program links it
 * and includes this header. Each section below is one file of tests/support/:
 *
 *   runner.c     running a suite in fork mode, cases, ring names, cleanup
 *   files.c      private directories, listings, files, directories and sockets
 *   rings.c      a ring's paths and entries, its mappings, waiting for a generation
 *   nodesets.c   node sets, snapshots, keys, imports and JSON parsed or failed
 *   processes.c  forking a child with pipes, starting ringctl (or another program)
 *                and capturing its output
 *   users.c      acting as another user
 *   clock.c      sleeping and reading the monotonic clock
 *
 * test_placement.h (placement.c) serves the placement programs, test_expect.h holds
 * the assertions for loops over many keys, and ringctl_fixture.h (ringctl_fixture.c)
 * the rings every check_ringctl_* program works on.
 *
 * The functions fail the current test (a Check assertion) where a step they take
 * fails, unless they say otherwise.
 */
#ifndef SHMRING_TEST_SUPPORT_H
#define SHMRING_TEST_SUPPORT_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shmring.h"
#include "shmring_ctl.h"

/* The number of elements of array A. */
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* TEST_ASAN is 1 in an AddressSanitizer build: gcc defines __SANITIZE_ADDRESS__,
 * clang answers __has_feature(address_sanitizer). */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* TEST_TSAN likewise, for ThreadSanitizer builds (which run several times slower). */
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#ifndef TEST_TSAN
#define TEST_TSAN 0
#endif

/* ---- runner.c: suites and cases -------------------------------------------------- */

/* Runs SUITE in fork mode, removes the rings its tests left behind, and returns the
 * process exit status. */
int test_run_suite(Suite *suite);

/* What each test of a case runs before and after it (Check's checked fixture, either
 * may be NULL), and its timeout in seconds (0: Check's default). */
struct test_fixture {
    SFun setup;
    SFun teardown;
    double timeout;
};

/* Adds to SUITE a case named NAME holding the tests that follow (START_TEST names),
 * in order, so that a program's suite reads as one line a case. TEST_CASE_WITH gives
 * the case FIXTURE (a struct test_fixture pointer). Both return the case, for the
 * loop tests a list cannot hold. */
#define TEST_CASE(suite, name, ...) TEST_CASE_WITH(suite, name, NULL, __VA_ARGS__)
#define TEST_CASE_WITH(suite, name, fixture, ...)                                        \
    test_add_case((suite), (name), (fixture), (const TTest *const[]){__VA_ARGS__},       \
                  sizeof((const TTest *const[]){__VA_ARGS__}) / sizeof(const TTest *))
TCase *test_add_case(Suite *suite, const char *name, const struct test_fixture *fixture,
                     const TTest *const *tests, size_t count);

/* A ring name unique to this run, test process and call:
 * "test-<runner pid>-<pid>-<tag>-<n>". */
const char *test_ring_name(const char *tag);

/* Formats a string with printf's FORMAT into one of eight rotating static buffers
 * (8 KiB each, truncating), so that a test can pass several to one call. */
const char *test_fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* ---- files.c: files and directories --------------------------------------------- */

/* The longest path test_private_directory() writes, with its NUL. */
#define TEST_PATH_MAX 256

/* Makes a private ring directory "/tmp/shmring-check-<runner pid>-<tag>.XXXXXX"
 * (mkdtemp, then mode 0755) and writes its path into PATH.
 * test_run_suite() removes what the tests of its run left behind. */
void test_private_directory(const char *tag, char path[TEST_PATH_MAX]);

/* Removes PATH and, if it is a directory, everything in it (symbolic links are
 * removed, never followed). Never fails the test. */
void test_remove_tree(const char *path);

/* The names in DIRECTORY (without "." and ".."), sorted and joined with commas:
 * "control,lock,version.3"; "" when it is empty or does not exist. A static buffer,
 * valid until the next call of test_listing() or test_ring_listing_in(). */
const char *test_listing(const char *directory);

/* How many entries DIRECTORY has besides "." and ".." (0: none, or no directory). */
int test_count_entries(const char *directory);

/* Creates the regular file PATH (which must not exist) with exactly MODE. */
void test_make_file(const char *path, mode_t mode);

/* Creates the directory PATH (which must not exist) with exactly MODE. */
void test_make_directory(const char *path, mode_t mode);

/* Binds a socket at PATH and closes it, leaving the socket file. */
void test_make_socket(const char *path);

/* The same, for a process that cannot fail a test (a child acting as another user):
 * 0, or the failed call's -errno. */
int test_try_make_file(const char *path, mode_t mode);
int test_try_make_directory(const char *path, mode_t mode);
int test_try_make_socket(const char *path);

/* Writes TEXT to PATH, replacing what it held. */
void test_write_file(const char *path, const char *text);

/* ---- rings.c: rings and generations ---------------------------------------------- */

/* The path of RING's directory in the default ring directory, and of the object
 * NAME ("control", "lock", "version.GEN") in it: a static buffer each, valid until the
 * next call of the same function. */
const char *test_ring_path(const char *ring);
const char *test_object_path(const char *ring, const char *name);

/* The path of RING's version GENERATION in the default ring directory (a static
 * buffer, valid until the next call of test_object_path()). */
const char *test_version_path(const char *ring, uint64_t generation);

/* Whether NAME, an entry of a directory of rings, belongs to RING: its directory
 * "shmring.RING", a hidden directory ".shmring-new.RING.*" or ".shmring-gone.RING.*",
 * or a name made from its directory's ("shmring.RING.*", which no ring has: ring
 * names have no dot). */
bool test_entry_of(const char *name, const char *ring);

/* Counts the entries of the default ring directory that belong to RING: its directory
 * and hidden (being created or destroyed) directories. Entries of RING's directory
 * are counted by test_ring_files(). */
int test_ring_entries(const char *ring);

/* Counts the files in RING's directory (0 if it has none, or no directory). */
int test_ring_files(const char *ring);

/* test_listing() of RING's directory. */
const char *test_ring_listing(const char *ring);

/* Like test_listing() of DIRECTORY, a directory of rings, with only the entries that
 * belong to RING (test_entry_of()). */
const char *test_ring_listing_in(const char *directory, const char *ring);

/* The path of RING's hidden directory whose name starts with PREFIX
 * (".shmring-new." or ".shmring-gone."), or NULL when there is none; fails the test
 * when there are several. A static buffer, valid until the next call. */
const char *test_hidden_path(const char *ring, const char *prefix);

/* Counts this process's mappings of RING's objects (files in its directory in the
 * default ring directory); -1 when /proc/self/maps cannot be read. */
int test_ring_mappings(const char *ring);

/*
 * Looks up through R until it answers from generation GENERATION. A handle retries
 * a generation it could not use (or a ring it could not find) only after 100 ms, so
 * this polls; the bound (at least 10 s, as each sleep lasts at least 10 ms) only turns
 * a handle that never gets there into a failure rather than a timeout.
 */
void test_wait_for_generation(shmring_t *r, uint64_t generation);

/* ---- nodesets.c: node sets, snapshots, keys and JSON ------------------------------ */

/* A deterministic pseudo-random generator (splitmix64), for reproducible inputs. */
uint64_t test_random(uint64_t *state);

/* Writes the key number I as text into BUF (at least 32 bytes); returns its length. */
size_t test_key(char *buf, uint64_t i);

/* The hash a test gives ALGORITHM where the hash is not what it tests: MD5 for ketama
 * (the only hash ketama takes), xxh3 for the others. */
shmring_hash_t test_usual_hash(shmring_algorithm_t algorithm);

/*
 * A node set of COUNT up nodes "node-0".. with addresses "10.0.<i/256>.<i%256>:11211"
 * and weight 1, with the given parameters.
 */
shmring_nodeset_t *test_nodeset(size_t count, shmring_algorithm_t algorithm,
                                shmring_hash_t hash);

/* Checks that node sets A and B are equal: parameters, and every node's id, name,
 * address, hash key, weight and state, in order. */
void test_check_same_nodeset(const shmring_nodeset_t *a, const shmring_nodeset_t *b);

/* Builds SET's snapshot bytes (free()) and checks that they validate. */
void *test_build(const shmring_nodeset_t *set, size_t *size);

/* The code that building SET's snapshot returns: 0 when it builds (the bytes are
 * freed), else the error, with no bytes left (checked). */
int test_build_error(const shmring_nodeset_t *set);

/* Builds SET's snapshot and makes it a validated snapshot (shmring_snapshot_free()). */
shmring_snapshot_t *test_snapshot(const shmring_nodeset_t *set);

/*
 * The small node set the snapshot tests tamper with: vnodes 4 and nodes alpha (weight
 * 1), beta (2), gamma (1, down), delta (1): 4 nodes, 3 up, 16 ring points.
 */
shmring_nodeset_t *test_small_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t table_size);

/* Parses the node-set JSON TEXT (over BASE's parameters, or NULL) into a new node set
 * (shmring_nodeset_free()); fails the test with the parser's message if it refuses,
 * or if it succeeds without filling its result. */
shmring_nodeset_t *test_parse_json(const char *text, const shmring_params_t *base);

/* A node as shmring_nodeset_to_json() writes it; ADDRESS and HASH_KEY are left out
 * when NULL. */
struct test_json_node {
    const char *name;
    unsigned id;
    const char *address;
    const char *hash_key;
    unsigned weight;
    const char *state;
};

/* A node set's whole JSON text: its parameters (TABLE_SIZE is written unless it is
 * TEST_JSON_NO_TABLE_SIZE) and its COUNT NODES in order. */
struct test_json_text {
    const char *algorithm;
    const char *hash;
    unsigned vnodes;
    long table_size;
    const struct test_json_node *nodes;
    size_t count;
};
#define TEST_JSON_NO_TABLE_SIZE (-1L)

/* A struct test_json_text of the nodes that follow (struct test_json_node
 * initializers), for a test's expected text. */
#define TEST_JSON_TEXT(algorithm, hash, vnodes, table_size, ...)                         \
    ((const struct test_json_text){                                                      \
        (algorithm), (hash), (vnodes), (table_size),                                     \
        (const struct test_json_node[]){__VA_ARGS__},                                    \
        sizeof((const struct test_json_node[]){__VA_ARGS__}) /                           \
            sizeof(struct test_json_node)})

/* Checks that TEXT is exactly the text WANT describes, byte for byte. */
void test_check_json_text(const char *text, const struct test_json_text *want);

/* Imports TEXT (FORMAT, SECTION or NULL) and checks that the node set's JSON is
 * exactly WANT. */
void test_check_import(shmring_import_format_t format, const char *text,
                       const char *section, const struct test_json_text *want);

/* Imports TEXT (FORMAT, SECTION or NULL) and returns the node set's JSON (free()). */
char *test_import_json(shmring_import_format_t format, const char *text,
                       const char *section);

/* One configuration an import must refuse: TEXT (its SECTION, or NULL) and the
 * exact LINE and MESSAGE of the refusal; each import test has a table of them. */
struct test_import_failure {
    const char *text;
    const char *section;
    int line;
    const char *message;
};

/* Imports TEXT expecting SHMRING_EINVAL with exactly LINE and MESSAGE. */
void test_import_fails(shmring_import_format_t format, const char *text,
                       const char *section, int line, const char *message);

/* ---- processes.c: running ringctl ----------------------------------------------- */

/* A child forked with a pipe each way: the child reads COMMANDS and writes ANSWERS,
 * the parent writes COMMANDS and reads ANSWERS. */
struct test_piped_child {
    pid_t pid;
    int commands;
    int answers;
};

/* Forks with the two pipes (close-on-exec); PID is 0 in the child. Each side holds
 * only the ends it uses, so that a read sees end of file once the other side closes
 * its end. */
struct test_piped_child test_fork_piped(void);

/* A started program. */
struct test_child {
    pid_t pid;
    int in;  /* the child's stdin, for writing (-1: none) */
    int out; /* its stdout, for reading (-1: not captured) */
    int err; /* its stderr, for reading (-1: not captured) */
};

/* How to start ringctl, beyond its arguments. */
struct test_spawn {
    /* Run with this uid and gid (which needs root), unless (uid_t)-1. */
    uid_t user;
    /* A standard descriptor (0, 1 or 2) to close before exec, or -1. */
    int closed_fd;
    /* A file to open as stdout instead of a pipe (such as /dev/full), or NULL. */
    const char *stdout_path;
    /* A file (or directory) to open as stdin instead of a pipe, or NULL. */
    const char *stdin_path;
    /* The program to run (NULL: TEST_RINGCTL, the ringctl built). */
    const char *program;
    /* An address-space limit (RLIMIT_AS) for it, in bytes (0: none). */
    size_t address_space;
    /* A file size limit (RLIMIT_FSIZE, ulimit -f) for it, in bytes (0: none). */
    size_t file_size;
    /* Seconds after which SIGALRM kills it, so that a hang fails (0: none). */
    unsigned alarm_seconds;
};

/* The ringctl that CMake built, which the tests run. */
extern const char *const TEST_RINGCTL;

/* The default: ringctl as this process's user, its standard streams on pipes. */
extern const struct test_spawn test_spawn_default;

/*
 * Starts ringctl with ARGS (NULL-terminated, without argv[0]), its standard streams
 * on pipes unless HOW says otherwise. The parent's pipe ends are close-on-exec, so
 * that another child never holds them.
 */
struct test_child test_child_start_with(const char *const *args,
                                        const struct test_spawn *how);

/* Starts ringctl with ARGS as USER ((uid_t)-1: ourselves), its streams on pipes. */
struct test_child test_child_start(const char *const *args, uid_t user);

/* Waits for CHILD to exit and returns its exit status; a signal, or a child that
 * could not be started (125 and up), fails the test. */
int test_child_wait(struct test_child *c);

/* Appends what is readable on FD to *TEXT (of *LEN bytes, NUL-terminated, realloc());
 * returns false at end of file. */
bool test_drain(int fd, char **text, size_t *len);

/* What a program that ran to completion did. */
struct test_run {
    int status; /* exit status */
    char *out;  /* its stdout (free with test_run_free()) */
    char *err;  /* its stderr */
};

/* Runs ringctl as HOW says with ARGS and INPUT (NULL: none) on its stdin, to
 * completion; a stream that is not captured reads as "". */
void test_run_with(struct test_run *r, const struct test_spawn *how, const char *input,
                   const char *const *args);

/* Runs ringctl with ARGS and INPUT (NULL: none) on its stdin as USER ((uid_t)-1:
 * ourselves), to completion. */
void test_run_as(struct test_run *r, uid_t user, const char *input,
                 const char *const *args);

/* Frees R's output (and leaves R without any: it may be freed again). */
void test_run_free(struct test_run *r);

/* Runs ringctl with the arguments that follow and keeps the result in a run. */
#define RUN(result, ...)                                                                 \
    test_run_as((result), (uid_t)-1, NULL, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_INPUT(result, input, ...)                                                    \
    test_run_as((result), (uid_t)-1, (input), (const char *const[]){__VA_ARGS__, NULL})

/* Runs ringctl and checks its exit status, stdout and stderr exactly. */
#define EXPECT(status_, out_, err_, ...)                                                 \
    do {                                                                                 \
        struct test_run r_;                                                              \
        RUN(&r_, __VA_ARGS__);                                                           \
        ck_assert_str_eq(r_.err, (err_));                                                \
        ck_assert_str_eq(r_.out, (out_));                                                \
        ck_assert_int_eq(r_.status, (status_));                                          \
        test_run_free(&r_);                                                              \
    } while (0)

/* ---- users.c: privileges -------------------------------------------------------- */

/* The unprivileged user (and group) that tests running as root act as. */
#define TEST_NOBODY ((uid_t)65534)

/* Makes this process (a test's child) user UID and group GID, in no other group:
 * false if it cannot (it is not root). */
bool test_become(uid_t uid, gid_t gid);

/* Runs FN in a child process as user UID and group GID, in no other group, and
 * returns what FN returned. */
int test_as_user(uid_t uid, gid_t gid, int (*fn)(void));

/* ---- clock.c: waiting -------------------------------------------------------------- */

/* Sleeps MS milliseconds (at least). */
void test_sleep_ms(long ms);

/* Nanoseconds, and milliseconds, on the monotonic clock. */
int64_t test_now_ns(void);
int64_t test_now_ms(void);

#endif
