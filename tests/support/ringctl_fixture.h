/*
 * The fixture of the check_ringctl_* programs, ringctl's end-to-end tests by command
 * group: the rings a test works on (ring, other, and a private ring directory when
 * it makes one), what the library reads from them, and the helpers more than one
 * group uses. Each program gives its cases ringctl_fixture (ringctl_setup and
 * ringctl_teardown).
 */
#ifndef SHMRING_TEST_RINGCTL_FIXTURE_H
#define SHMRING_TEST_RINGCTL_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "test_support.h"

/* How long a test waits for one answer of `lookup --stdin`. */
#define ANSWER_TIMEOUT_MS 60000

/* The test's rings: ring is the main one, other the second one some tests need. */
extern char ring[SHMRING_RING_NAME_MAX + 1];
extern char other[SHMRING_RING_NAME_MAX + 1];
extern char temp_file[64];
extern char temp_dir[64];
extern const char *ring_dir;

/* Check fixtures of the check_ringctl_* programs: setup names the rings and clears
 * SHMRING_RING and SHMRING_DIR; teardown destroys the rings, checks that nothing of
 * them is left, and removes temp_dir and temp_file. ringctl_fixture gives a case
 * both, with the 300 s timeout the programs' cases take. */
void ringctl_setup(void);
extern const struct test_fixture ringctl_fixture;

/* Open options that read rings from ring_dir. */
const shmring_open_options_t *read_options(void);

/* Makes temp_dir, a new private ring directory, and points the helpers at it. */
const char *make_ring_directory(void);

/* Fails the test if the ring directory in use holds anything of RING_NAME: its
 * directory, or one being created or destroyed. */
void assert_no_objects(const char *ring_name);

/* Fails the test unless RING_NAME is absent: no status (SHMRING_ENOENT) and no
 * objects (assert_no_objects()). */
void assert_ring_absent(const char *ring_name);

void ringctl_teardown(void);

/* The library's status of RING_NAME (read from ring_dir); fails the test if it has
 * none. */
shmring_ring_status_t status_of(const char *ring_name);

/* The library's answer about RING_NAME: 0 or why it cannot be read. */
int status_error(const char *ring_name);

/* The generation status_of() reports. */
uint64_t generation_of(const char *ring_name);

/* The current version of RING_NAME as a new snapshot; fails the test if there is none. */
shmring_snapshot_t *snapshot_of(const char *ring_name);

/* The node set of RING_NAME's current version. */
shmring_nodeset_t *nodeset_of(const char *ring_name);

/* The node set of RING_NAME as JSON, written by the library (not by ringctl). */
char *json_of(const char *ring_name);

/* The node NAME of SET; fails the test if SET has none. */
shmring_node_info_t node_of(const shmring_nodeset_t *set, const char *name);

/* What must not change when a command fails: the generation and the node set. */
struct saved_ring {
    uint64_t generation;
    uint64_t publish_count;
    char *json;
};

/* Saves RING_NAME's generation, publication count and node set; the check that
 * none of them changed frees what it saved. */
struct saved_ring save_ring(const char *ring_name);

void assert_ring_unchanged(const char *ring_name, struct saved_ring *saved);

/* Creates `ring` with ringctl: node-a (10.0.0.1:11211, weight 1) and node-b
 * (10.0.0.2:11211, weight 3), at generation 3. */
void make_ring(void);

/* "uid UID (NAME)" as ringctl names a user, or "uid UID" for a uid without a name. */
const char *owner_text(uid_t uid);

/* What ringctl says when RING_NAME's directory belongs to OWNER and we change it. */
const char *belongs_message(const char *ring_name, uid_t owner);

/* Runs ringctl as TEST_NOBODY and checks its exit status, stdout and stderr exactly. */
#define EXPECT_NOBODY(status_, out_, err_, ...)                                          \
    do {                                                                                 \
        struct test_run r_;                                                              \
        test_run_as(&r_, TEST_NOBODY, NULL, (const char *const[]){__VA_ARGS__, NULL});   \
        ck_assert_str_eq(r_.err, (err_));                                                \
        ck_assert_str_eq(r_.out, (out_));                                                \
        ck_assert_int_eq(r_.status, (status_));                                          \
        test_run_free(&r_);                                                              \
    } while (0)

/* Writes KEY (LEN bytes) and TERMINATOR to the child and reads its one answer, which
 * ends in TERMINATOR too. The answer stays valid until the next call. */
const char *ask_record(struct test_child *c, const char *key, size_t len,
                       char terminator);

/* ask_record() of KEY and a newline: the child's one-line answer. */
const char *ask(struct test_child *c, const char *key);

/* A lookup's text answer for KEY in ring as ringctl prints it: PRINTED (the key as
 * ringctl escapes it), then the node (in test_fmt()'s buffers). */
const char *answer_line(const char *key, const char *printed);

/* What lookup --stdin answers for KEY on the ring make_ring() made: answer_line() of
 * KEY printed as it is. */
const char *owner_line(const char *key);

/* Reads FD to its end. */
char *read_all(int fd);

#endif
