/* Helpers shared by the test programs. */
#ifndef SHMRING_TEST_SUPPORT_H
#define SHMRING_TEST_SUPPORT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

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

/* Runs SUITE in fork mode, removes the rings its tests left behind, and returns the
 * process exit status. */
int test_run_suite(Suite *suite);

/* Adds to SUITE a case named NAME holding the tests that follow (START_TEST names),
 * in order, so that a program's suite reads as one line a case. */
#define TEST_CASE(suite, name, ...)                                                      \
    test_add_case((suite), (name), (const TTest *const[]){__VA_ARGS__},                  \
                  sizeof((const TTest *const[]){__VA_ARGS__}) / sizeof(const TTest *))
void test_add_case(Suite *suite, const char *name, const TTest *const *tests,
                   size_t count);

/* A ring name unique to this run, test process and call:
 * "test-<runner pid>-<pid>-<tag>-<n>". */
const char *test_ring_name(const char *tag);

/* The path of RING's directory in the default ring directory, and of the object
 * NAME ("control", "lock", "version.GEN") in it: a static buffer each, valid until the
 * next call of the same function. */
const char *test_ring_path(const char *ring);
const char *test_object_path(const char *ring, const char *name);

/* Counts the entries of the default ring directory that belong to RING: its directory
 * and hidden (being created or destroyed) directories. Entries of RING's directory
 * are counted by test_ring_files(). */
int test_ring_entries(const char *ring);

/* Counts the files in RING's directory (0 if it has none, or no directory). */
int test_ring_files(const char *ring);

/* The names in DIRECTORY (without "." and ".."), sorted and joined with commas:
 * "control,lock,version.3"; "" when it is empty or does not exist. A static buffer,
 * valid until the next call. */
const char *test_listing(const char *directory);

/* test_listing() of RING's directory. */
const char *test_ring_listing(const char *ring);

/* The path of RING's hidden directory whose name starts with PREFIX
 * (".shmring-new." or ".shmring-gone."), or NULL when there is none; fails the test
 * when there are several. A static buffer, valid until the next call. */
const char *test_hidden_path(const char *ring, const char *prefix);

/* The longest path test_private_directory() writes, with its NUL. */
#define TEST_PATH_MAX 256

/* Makes a private ring directory "/tmp/shmring-check-<runner pid>-<tag>.XXXXXX"
 * (mkdtemp, then mode 0755) and writes its path into PATH; fails the test on error.
 * test_run_suite() removes what the tests of its run left behind. */
void test_private_directory(const char *tag, char path[TEST_PATH_MAX]);

/* Removes PATH and, if it is a directory, everything in it (symbolic links are
 * removed, never followed). */
void test_remove_tree(const char *path);

/* A deterministic pseudo-random generator (splitmix64), for reproducible inputs. */
uint64_t test_random(uint64_t *state);

/* Writes the key number I as text into BUF (at least 32 bytes); returns its length. */
size_t test_key(char *buf, uint64_t i);

/*
 * A node set of COUNT up nodes "node-0".. with addresses "10.0.<i/256>.<i%256>:11211"
 * and weight 1, with the given parameters. Fails the test on error.
 */
shmring_nodeset_t *test_nodeset(size_t count, shmring_algorithm_t algorithm,
                                shmring_hash_t hash);

/* Builds SET's snapshot bytes (free()) and checks that they validate; fails the test
 * on error. */
void *test_build(const shmring_nodeset_t *set, size_t *size);

/* Builds SET's snapshot and makes it a validated snapshot (shmring_snapshot_free());
 * fails the test on error. */
shmring_snapshot_t *test_snapshot(const shmring_nodeset_t *set);

/*
 * The small node set the snapshot tests tamper with: vnodes 4 and nodes alpha (weight
 * 1), beta (2), gamma (1, down), delta (1): 4 nodes, 3 up, 16 ring points.
 */
shmring_nodeset_t *test_small_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t table_size);

/* Imports TEXT (FORMAT, SECTION or NULL) and returns the node set's JSON (free());
 * fails the test on error. */
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

#endif
