/* Tests of publication into shared memory: lib/publish.c. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control_internal.h"
#include "publish_internal.h"
#include "ring_dir_internal.h"
#include "test_support.h"

static char ring[SHMRING_RING_NAME_MAX + 1];

/* The flags with which `ringctl load` and `ringctl sync` open a ring: open it, or
 * create it if it does not exist, visible from its first publication. */
#define OPEN_OR_CREATE (SHMRING_WRITER_CREATE | SHMRING_WRITER_ATOMIC_CREATE)

static void setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("publish"));
}

static bool version_exists(uint64_t generation)
{
    struct stat st;
    return stat(test_version_path(ring, generation), &st) == 0;
}

static void teardown(void)
{
    int err = shmring_ring_destroy(ring, NULL);
    ck_assert(err == 0 || err == SHMRING_ENOENT);
    /* Nothing of the ring is left: neither its directory nor a hidden one. */
    ck_assert_int_eq(test_ring_entries(ring), 0);
}

/* Publishes COUNT nodes; returns the new generation. */
static uint64_t publish_nodes(shmring_writer_t *w, size_t count)
{
    shmring_nodeset_t *set =
        test_nodeset(count, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    uint64_t gen = 0;
    ck_assert_int_eq(shmring_writer_publish(w, set, &gen), 0);
    shmring_nodeset_free(set);
    return gen;
}

/* Creates the ring and publishes COUNT nodes as its generation 1; returns the writer. */
static shmring_writer_t *create_with_nodes(size_t count)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, count), 1);
    return w;
}

/* The ring's status says generation 1, and its directory holds that version alone. */
static void assert_generation_1_alone(void)
{
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");
}

START_TEST(test_open_missing_and_exclusive)
{
    shmring_writer_t *w = NULL;
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), SHMRING_ENOENT);
    ck_assert_int_eq(
        shmring_writer_open(ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &w),
        0);
    ck_assert_uint_eq(shmring_writer_generation(w), 0);
    /* A new ring is its directory, holding the control object and the lock. */
    ck_assert_int_eq(test_ring_entries(ring), 1);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock");
    shmring_writer_close(w);
    ck_assert_int_eq(
        shmring_writer_open(ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &w),
        SHMRING_EEXIST);
    ck_assert_int_eq(test_ring_entries(ring), 1);
    ck_assert_int_eq(shmring_writer_open("bad/name", SHMRING_WRITER_CREATE, NULL, &w),
                     SHMRING_EBADRING);
}
END_TEST

START_TEST(test_publish_swaps_versions)
{
    shmring_writer_t *w = create_with_nodes(3);
    ck_assert(version_exists(1));

    /* Map version 1 the way a reader does, then supersede it. */
    int fd = open(test_version_path(ring, 1), O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    void *old = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(old, MAP_FAILED);
    close(fd);

    ck_assert_uint_eq(publish_nodes(w, 4), 2);
    /* The superseded object is unlinked, but a mapping of it stays intact. */
    ck_assert(!version_exists(1));
    ck_assert(version_exists(2));
    shmring_snapshot_t *intact;
    ck_assert_int_eq(shmring_snapshot_new(old, (size_t)st.st_size, &intact), 0);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(intact, &info);
    ck_assert_uint_eq(info.node_count, 3);
    shmring_snapshot_free(intact);
    munmap(old, (size_t)st.st_size);

    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
    ck_assert_uint_eq(status.generation, 2);
    ck_assert_uint_eq(status.publish_count, 2);
    ck_assert_int_eq(status.publisher_pid, getpid());
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.2");
    ck_assert_int_eq(test_ring_entries(ring), 1);
    shmring_writer_close(w);
}
END_TEST

START_TEST(test_failed_publish_changes_nothing)
{
    shmring_writer_t *w = create_with_nodes(3);

    shmring_nodeset_t *huge;
    ck_assert_int_eq(shmring_nodeset_new(&huge), 0);
    shmring_params_t params;
    shmring_params_default(&params);
    params.vnodes = SHMRING_VNODES_MAX;
    ck_assert_int_eq(shmring_nodeset_set_params(huge, &params), 0);
    ck_assert_int_eq(shmring_nodeset_add(huge, "big", NULL, SHMRING_WEIGHT_MAX,
                                         SHMRING_STATE_UP, NULL),
                     0);
    uint64_t gen = 99;
    ck_assert_int_eq(shmring_writer_publish(w, huge, &gen), SHMRING_ELIMIT);
    ck_assert_uint_eq(gen, 99);
    shmring_nodeset_free(huge);

    ck_assert_uint_eq(shmring_writer_generation(w), 1);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert(!version_exists(2));
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");
    shmring_writer_close(w);
}
END_TEST

/*
 * Publishes through W, under a file size limit of 1 MiB and with SIGXFSZ's action
 * ON_SIGXFSZ, 1,000 nodes (a snapshot of about 3.5 MiB): -EFBIG, and no generation.
 * The limit is lifted again afterwards.
 */
static void publish_past_file_size_limit(shmring_writer_t *w, void (*on_sigxfsz)(int))
{
    ck_assert_ptr_ne(signal(SIGXFSZ, on_sigxfsz), SIG_ERR);
    struct rlimit before, limit;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &before), 0);
    limit = (struct rlimit){1u << 20, before.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    shmring_nodeset_t *set =
        test_nodeset(1000, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    uint64_t gen = 99;
    ck_assert_int_eq(shmring_writer_publish(w, set, &gen), -EFBIG);
    ck_assert_uint_eq(gen, 99);
    shmring_nodeset_free(set);
    /* Without Check's fork mode, the tests that follow run in this process. */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &before), 0);
}

/*
 * A version the file system cannot hold fails while it is sized, before anything is
 * mapped or written, so the writer gets an error rather than SIGBUS on a page it
 * could not get. A full /dev/shm cannot be arranged here, so the file size limit
 * stands in for it: tmpfs's posix_fallocate() refuses past it just the same (EFBIG,
 * with SIGXFSZ, ignored here; this runs in Check's forked child).
 */
START_TEST(test_unallocatable_version_refused)
{
    shmring_writer_t *w = create_with_nodes(3);
    publish_past_file_size_limit(w, SIG_IGN);

    ck_assert_uint_eq(shmring_writer_generation(w), 1);
    assert_generation_1_alone();
    shmring_writer_close(w);
}
END_TEST

/* The same limit with SIGXFSZ at its default action (which kills): the library asks
 * for the limit first, so the caller gets -EFBIG and no signal it did not ask for. A
 * death fails this test (Check's fork mode reports the signal). */
START_TEST(test_file_size_limit_without_signal)
{
    shmring_writer_t *w = create_with_nodes(3);
    publish_past_file_size_limit(w, SIG_DFL);
    ck_assert_uint_eq(shmring_writer_generation(w), 1);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");
    shmring_writer_close(w);
}
END_TEST

START_TEST(test_orphans_removed_by_next_writer)
{
    shmring_writer_t *w = create_with_nodes(2);
    shmring_writer_close(w);

    /* What a writer killed mid-publish leaves: an unpublished next version, and a
     * stale one it had not unlinked yet. */
    for (uint64_t gen = 0; gen <= 2; gen += 2) {
        int fd = open(test_version_path(ring, gen == 0 ? 7 : gen),
                      O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    ck_assert_str_eq(test_ring_listing(ring),
                     "control,lock,version.1,version.2,version.7");

    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), 0);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");
    /* The next publish uses generation 2 even though an orphan had that name. */
    ck_assert_uint_eq(publish_nodes(w, 3), 2);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.2");
    shmring_writer_close(w);
}
END_TEST

START_TEST(test_writer_nodeset_round_trip)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_writer_nodeset(w, &set), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 0);
    uint32_t id;
    ck_assert_int_eq(
        shmring_nodeset_add(set, "a", "10.0.0.1:1", 5, SHMRING_STATE_UP, &id), 0);
    ck_assert_int_eq(shmring_nodeset_add(set, "b", NULL, 1, SHMRING_STATE_DOWN, &id), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "a"), 0);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    shmring_nodeset_free(set);
    shmring_writer_close(w);

    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), 0);
    ck_assert_int_eq(shmring_writer_nodeset(w, &set), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 1);
    shmring_node_info_t node;
    ck_assert_int_eq(shmring_nodeset_get(set, 0, &node), 0);
    ck_assert_str_eq(node.name, "b");
    ck_assert_str_eq(node.address, "b");
    ck_assert_uint_eq(node.id, 1);
    ck_assert_int_eq(node.state, SHMRING_STATE_DOWN);
    /* Ids are never reused: the next node gets 2, not 0. */
    ck_assert_int_eq(shmring_nodeset_add(set, "c", NULL, 1, SHMRING_STATE_UP, &id), 0);
    ck_assert_uint_eq(id, 2);
    shmring_nodeset_free(set);
    shmring_writer_close(w);
}
END_TEST

/* Runs FN in a child process as user and group "nobody". */
static int as_other_user(int (*fn)(void))
{
    return test_as_user(TEST_NOBODY, TEST_NOBODY, fn);
}

static int try_read(void)
{
    shmring_t *r;
    int err = shmring_open(ring, &r);
    shmring_close(err == 0 ? r : NULL);
    return err;
}

static int try_status(void)
{
    shmring_ring_status_t status;
    return shmring_ring_status(ring, NULL, &status);
}

static int try_write(void)
{
    shmring_writer_t *w;
    int err = shmring_writer_open(ring, 0, NULL, &w);
    shmring_writer_close(err == 0 ? w : NULL);
    return err;
}

static int try_create(void)
{
    shmring_writer_t *w;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w);
    shmring_writer_close(err == 0 ? w : NULL);
    return err;
}

static int try_destroy(void)
{
    return shmring_ring_destroy(ring, NULL);
}

/* Opens the ring's lock file read-only: 0, or the errno value. */
static int try_lock_file(void)
{
    int fd = open(test_object_path(ring, LOCK_FILE), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

/* Publishes one node "n1" through W, without Check (it runs in a child): 0 or the
 * first error. */
static int publish_one_node(shmring_writer_t *w)
{
    shmring_nodeset_t *set;
    int err = shmring_nodeset_new(&set);
    if (err == 0)
        err = shmring_nodeset_add(set, "n1", NULL, 1, SHMRING_STATE_UP, NULL);
    if (err == 0)
        err = shmring_writer_publish(w, set, NULL);
    shmring_nodeset_free(set);
    return err;
}

/* Creates the ring and publishes one node, without Check (it runs in a child). */
static int create_and_publish(void)
{
    shmring_writer_t *w;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w);
    if (err != 0)
        return err;
    err = publish_one_node(w);
    shmring_writer_close(w);
    return err;
}

/*
 * Only 0600, 0640, 0604 and 0644 are modes of a ring (the owner reads and writes;
 * group and others at most read): every other mode is refused before anything is
 * created. A valid mode is given exactly, whatever the creator's umask, to the
 * control object; the directory gets the matching search bits, the lock stays the
 * owner's alone and versions get the read bits only.
 */
START_TEST(test_only_four_modes)
{
    static const mode_t refused[] = {0666, 0660, 0606,  0664,  0646,  0620,
                                     0602, 0622, 0400,  0200,  0,     0700,
                                     0755, 0100, 04644, 02644, 01644, 07777};
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    ck_assert_uint_eq(options.mode, 0644);
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        options.mode = refused[i];
        shmring_writer_t *w = NULL;
        ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w),
                         SHMRING_EINVAL);
        ck_assert_ptr_null(w);
        ck_assert_int_eq(test_ring_entries(ring), 0);
    }
    static const struct {
        mode_t mode, directory;
    } valid[] = {{0600, 0700}, {0640, 0750}, {0604, 0705}, {0644, 0755}};
    umask(077);
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
        options.mode = valid[i].mode;
        shmring_writer_t *w;
        ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w),
                         0);
        ck_assert_uint_eq(publish_nodes(w, 3), 1);
        shmring_ring_status_t status;
        ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
        ck_assert_uint_eq(status.mode, valid[i].mode);
        ck_assert_uint_eq(status.owner, geteuid());
        ck_assert_uint_eq(status.group, getegid());
        struct stat st;
        ck_assert_int_eq(lstat(test_ring_path(ring), &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_uint_eq(st.st_mode & 07777, valid[i].directory);
        ck_assert_int_eq(lstat(test_object_path(ring, CONTROL_FILE), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, valid[i].mode);
        ck_assert_int_eq(st.st_size, CONTROL_SIZE);
        ck_assert_int_eq(lstat(test_object_path(ring, LOCK_FILE), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_int_eq(lstat(test_version_path(ring, 1), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, valid[i].mode & 0444);
        shmring_writer_close(w);
        ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
    }
}
END_TEST

/* An on_wait for child processes (no Check there): writes a byte to the descriptor
 * DATA points to. */
static void say_waiting(const char *ring_name, void *data)
{
    if (strcmp(ring_name, ring) != 0 || write(*(const int *)data, "w", 1) != 1)
        _exit(3);
}

/*
 * A destroy that waited for the lock while another destroy removed the ring, and a
 * new ring of the same name was created, leaves the new ring alone.
 */
START_TEST(test_late_destroy_spares_new_ring)
{
    shmring_writer_t *w = create_with_nodes(3);
    shmring_writer_close(w);
    /* The late destroy runs in a child forked before the writer below opens, so that
     * it inherits no descriptor of the ring: it waits for that writer's lock, and
     * says so (on_wait) once it holds the ring's directory and lock open. */
    int go[2], waiting[2];
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(waiting), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char byte;
        close(go[1]);
        close(waiting[0]);
        if (read(go[0], &byte, 1) != 1)
            _exit(2);
        shmring_writer_options_t options;
        shmring_writer_options_default(&options);
        options.on_wait = say_waiting;
        options.on_wait_data = &waiting[1];
        _exit(shmring_ring_destroy(ring, &options) == SHMRING_ENOENT ? 0 : 1);
    }
    close(go[0]);
    close(waiting[1]);
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), 0);
    ck_assert_int_eq(write(go[1], "x", 1), 1);
    close(go[1]);
    char byte;
    ck_assert_int_eq(read(waiting[0], &byte, 1), 1);
    close(waiting[0]);

    /* The first destroy, as the writer that holds the lock could do it: the ring's
     * directory goes away; then a new ring takes the name. */
    static const char *const files[] = {CONTROL_FILE, LOCK_FILE, "version.1"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        ck_assert_int_eq(unlink(test_object_path(ring, files[i])), 0);
    ck_assert_int_eq(rmdir(test_ring_path(ring)), 0);
    shmring_writer_t *fresh;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &fresh), 0);
    ck_assert_uint_eq(publish_nodes(fresh, 2), 1);
    shmring_writer_close(fresh);
    shmring_writer_close(w); /* the late destroy gets the old lock now */

    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    assert_generation_1_alone();
    ck_assert_int_eq(test_ring_entries(ring), 1);
}
END_TEST

/*
 * The calls of a creating `ringctl load` (tools/ringctl/change.c,
 * session_open_writer()): open the ring, or create it with
 * SHMRING_WRITER_ATOMIC_CREATE if it does not exist; read its node set.
 */
static shmring_writer_t *open_as_creating_load(void)
{
    shmring_writer_t *w = NULL;
    int err = shmring_writer_open(ring, OPEN_OR_CREATE, NULL, &w);
    ck_assert_int_eq(err, 0);
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_writer_nodeset(w, &set), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 0);
    shmring_nodeset_free(set);
    return w;
}

/* Checks that W holds generation GENERATION, of COUNT nodes. */
static void assert_writer_holds(shmring_writer_t *w, uint64_t generation, size_t count)
{
    ck_assert_uint_eq(shmring_writer_generation(w), generation);
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_writer_nodeset(w, &set), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), count);
    shmring_nodeset_free(set);
}

/* Publishes COUNT nodes through W as generation 2 and closes W: one ring is left,
 * holding that version alone. */
static void publish_second_and_close(shmring_writer_t *w, size_t count)
{
    ck_assert_uint_eq(publish_nodes(w, count), 2);
    shmring_writer_close(w);
    ck_assert_int_eq(test_ring_entries(ring), 1);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.2");
}

/* Open or create in one call: a ring that does not exist is created, one that
 * exists is opened. */
START_TEST(test_open_or_create)
{
    shmring_writer_t *w = NULL;
    ck_assert_int_eq(shmring_writer_open(ring, OPEN_OR_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(shmring_writer_generation(w), 0);
    /* Created, but not visible before its first publication. */
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), SHMRING_ENOENT);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);
    shmring_writer_close(w);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");

    ck_assert_int_eq(shmring_writer_open(ring, OPEN_OR_CREATE, NULL, &w), 0);
    assert_writer_holds(w, 1, 3);
    publish_second_and_close(w, 4);
}
END_TEST

/* A rival creator in another process: on a byte from REQUEST it opens the ring with
 * OPEN_OR_CREATE, publishes 5 nodes, and answers with the first failing call's code
 * (0: published generation 1) on REPLY. */
struct rival {
    pid_t pid;
    int request;
    int reply;
};

static struct rival rival;
static int rival_calls;

static void rival_start(void)
{
    int request[2], reply[2];
    ck_assert_int_eq(pipe(request), 0);
    ck_assert_int_eq(pipe(reply), 0);
    rival.pid = fork();
    ck_assert_int_ge(rival.pid, 0);
    if (rival.pid == 0) {
        shmring__publish_hook = NULL; /* the rival creates without pausing */
        close(request[1]);
        close(reply[0]);
        char byte;
        if (read(request[0], &byte, 1) != 1)
            _exit(1);
        shmring_writer_t *w;
        int err = shmring_writer_open(ring, OPEN_OR_CREATE, NULL, &w);
        if (err == 0) {
            shmring_nodeset_t *set =
                test_nodeset(5, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
            uint64_t generation = 0;
            err = shmring_writer_publish(w, set, &generation);
            if (err == 0 && generation != 1)
                err = SHMRING_EINVAL;
            shmring_nodeset_free(set);
            shmring_writer_close(w);
        }
        _exit(write(reply[1], &err, sizeof(err)) == sizeof(err) ? 0 : 1);
    }
    close(request[0]);
    close(reply[1]);
    rival.request = request[1];
    rival.reply = reply[0];
    rival_calls = 0;
}

static void rival_stop(void)
{
    close(rival.request);
    close(rival.reply);
    int status;
    ck_assert_int_eq(waitpid(rival.pid, &status, 0), rival.pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

/* The publish hook: once this process has found no ring and made the directory of
 * its own, the rival creates and publishes the ring, and this process goes on only
 * when it has. */
static void rival_creates_meanwhile(enum publish_step step)
{
    if (step != PUBLISH_STEP_RING_DIR_CREATED || rival_calls++ > 0)
        return;
    int err = -1;
    ck_assert_int_eq(write(rival.request, "c", 1), 1);
    ck_assert_int_eq(read(rival.reply, &err, sizeof(err)), sizeof(err));
    ck_assert_int_eq(err, 0);
}

/* Opens the ring with FLAGS while the rival creates it (see
 * rival_creates_meanwhile()); the open must succeed. */
static shmring_writer_t *open_while_rival_creates(unsigned flags)
{
    rival_start();
    shmring__publish_hook = rival_creates_meanwhile;
    shmring_writer_t *w = NULL;
    int err = shmring_writer_open(ring, flags, NULL, &w);
    shmring__publish_hook = NULL;
    rival_stop();
    ck_assert_int_eq(err, 0);
    ck_assert_int_eq(rival_calls, 1);
    return w;
}

/* Racing creators, with a real second process: without ATOMIC_CREATE, the call that
 * loses the race to put its ring in place opens the winner's. */
START_TEST(test_open_or_create_race_opens_the_winners)
{
    shmring_writer_t *w = open_while_rival_creates(SHMRING_WRITER_CREATE);
    assert_writer_holds(w, 1, 5);
    /* One ring, the winner's, and no directory of the loser's. */
    publish_second_and_close(w, 2);
}
END_TEST

/* The same race with ATOMIC_CREATE, as load and sync open a ring: the loser's ring
 * is not in place before its first publication, so the race shows there, which fails
 * with SHMRING_EEXIST and leaves the winner's ring alone; opening again (what a later
 * load, or sync's next apply, does) opens the winner's. */
START_TEST(test_open_or_create_race_atomic)
{
    shmring_writer_t *w = open_while_rival_creates(OPEN_OR_CREATE);
    ck_assert_uint_eq(shmring_writer_generation(w), 0);
    shmring_nodeset_t *set = test_nodeset(2, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), SHMRING_EEXIST);
    shmring_nodeset_free(set);
    shmring_writer_close(w);
    ck_assert_int_eq(test_ring_entries(ring), 1);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");

    ck_assert_int_eq(shmring_writer_open(ring, OPEN_OR_CREATE, NULL, &w), 0);
    assert_writer_holds(w, 1, 5);
    shmring_writer_close(w);
}
END_TEST

/* A node set too large to build: its publication fails with SHMRING_ELIMIT. */
static shmring_nodeset_t *unbuildable_set(void)
{
    shmring_nodeset_t *set = test_nodeset(1, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.vnodes = SHMRING_VNODES_MAX;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "node-0", SHMRING_WEIGHT_MAX), 0);
    return set;
}

/*
 * Two creating loads race, replayed through the public API as ringctl makes its
 * calls: A creates, B creates and publishes, then A's first publication fails (with
 * SHMRING_EEXIST, the name being B's; or SHMRING_ELIMIT, its own node set) and A
 * closes. A failing creating publish leaves nothing, so there is nothing to roll
 * back, and B's ring stays whole. (ringctl used to close, then destroy the ring by
 * name: B's ring.)
 */
START_TEST(test_failed_creating_load_spares_another)
{
    for (int own_failure = 0; own_failure <= 1; own_failure++) {
        if (own_failure)
            snprintf(ring, sizeof(ring), "%s", test_ring_name("publish"));
        shmring_writer_t *a = open_as_creating_load();
        shmring_nodeset_t *a_set =
            own_failure ? unbuildable_set()
                        : test_nodeset(2, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
        if (own_failure)
            ck_assert_int_eq(shmring_writer_publish(a, a_set, NULL), SHMRING_ELIMIT);

        shmring_writer_t *b = open_as_creating_load();
        ck_assert_uint_eq(publish_nodes(b, 5), 1);
        shmring_writer_close(b);

        ck_assert_int_eq(shmring_writer_publish(a, a_set, NULL),
                         own_failure ? SHMRING_ELIMIT : SHMRING_EEXIST);
        ck_assert_uint_eq(shmring_writer_generation(a), 0);
        shmring_writer_close(a);
        shmring_nodeset_free(a_set);

        /* B's ring, and nothing else: no hidden directory of A's is left. */
        ck_assert_int_eq(test_ring_entries(ring), 1);
        ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");
        shmring_ring_info_t info;
        ck_assert_int_eq(shmring_ring_info(ring, NULL, &info), 0);
        ck_assert_uint_eq(info.status.generation, 1);
        ck_assert_uint_eq(info.status.publish_count, 1);
        ck_assert_uint_eq(info.version.node_count, 5);
        ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
    }

    /* Alone, a failing creating load leaves no trace either. */
    shmring_writer_t *a = open_as_creating_load();
    shmring_nodeset_t *a_set = unbuildable_set();
    ck_assert_int_eq(shmring_writer_publish(a, a_set, NULL), SHMRING_ELIMIT);
    shmring_writer_close(a);
    shmring_nodeset_free(a_set);
    ck_assert_int_eq(test_ring_entries(ring), 0);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), SHMRING_ENOENT);
}
END_TEST

/* Counts the calls of on_wait in the int DATA points to. */
static void count_waits(const char *ring_name, void *data)
{
    ck_assert_str_eq(ring_name, ring);
    (*(int *)data)++;
}

/*
 * A writer or destroy that finds another writer's lock taken waits as its options
 * say: not at all (wait_ms 0: SHMRING_EBUSY at once, on_wait not called), a bounded
 * time (SHMRING_EBUSY, having called on_wait once), or until the lock is free
 * (on_wait once, then success). A refused writer or destroy changes nothing.
 */
START_TEST(test_lock_wait_bounded)
{
    /* The writer that waits without a bound runs in a child forked before the lock
     * is taken, so that it inherits no descriptor of the lock: it starts on GO, and
     * says that it waits on WAITING. */
    int go[2], waiting[2];
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(waiting), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(go[1]);
        close(waiting[0]);
        char byte;
        if (read(go[0], &byte, 1) != 1)
            _exit(4);
        shmring_writer_options_t forever;
        shmring_writer_options_default(&forever);
        forever.on_wait = say_waiting;
        forever.on_wait_data = &waiting[1];
        shmring_writer_t *late;
        if (shmring_writer_open(ring, 0, &forever, &late) != 0)
            _exit(1);
        uint64_t gen = shmring_writer_generation(late);
        shmring_writer_close(late);
        _exit(gen == 2 ? 0 : 2);
    }
    close(go[0]);
    close(waiting[1]);

    shmring_writer_t *holder;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &holder), 0);
    ck_assert_uint_eq(publish_nodes(holder, 3), 1);

    int waits = 0;
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    ck_assert_int_eq(options.wait_ms, -1);
    options.on_wait = count_waits;
    options.on_wait_data = &waits;
    options.wait_ms = 0;
    shmring_writer_t *w = NULL;
    ck_assert_int_eq(shmring_writer_open(ring, 0, &options, &w), SHMRING_EBUSY);
    ck_assert_ptr_null(w);
    ck_assert_int_eq(shmring_ring_destroy(ring, &options), SHMRING_EBUSY);
    ck_assert_int_eq(waits, 0);
    options.wait_ms = 30;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w),
                     SHMRING_EBUSY);
    ck_assert_ptr_null(w);
    ck_assert_int_eq(waits, 1);
    ck_assert_int_eq(shmring_ring_destroy(ring, &options), SHMRING_EBUSY);
    ck_assert_int_eq(waits, 2);
    assert_generation_1_alone();
    ck_assert_int_eq(test_ring_entries(ring), 1);

    /* Without a bound: the child says it waits, we publish and let go, and it gets
     * the lock and finds our publication. */
    ck_assert_int_eq(write(go[1], "g", 1), 1);
    close(go[1]);
    char byte;
    ck_assert_int_eq(read(waiting[0], &byte, 1), 1);
    ck_assert_uint_eq(publish_nodes(holder, 4), 2);
    shmring_writer_close(holder);
    int child;
    ck_assert_int_eq(waitpid(pid, &child, 0), pid);
    ck_assert_msg(WIFEXITED(child) && WEXITSTATUS(child) == 0, "status %#x", child);
    /* It said so once only. */
    ck_assert_int_eq(read(waiting[0], &byte, 1), 0);
    close(waiting[0]);
}
END_TEST

/*
 * Racing exclusive creators: in every round exactly one of them gets the ring, the
 * other SHMRING_EEXIST, also when it loses the race between its existence check and
 * the rename of its new ring into place; the loser leaves nothing behind.
 */
START_TEST(test_exclusive_creators_race)
{
    enum { ROUNDS = 300, RACERS = 2 };
    int both = 0;
    for (int round = 0; round < ROUNDS; round++) {
        pid_t pids[RACERS];
        for (int i = 0; i < RACERS; i++) {
            pids[i] = fork();
            ck_assert_int_ge(pids[i], 0);
            if (pids[i] == 0) {
                shmring_writer_t *w;
                int err = shmring_writer_open(
                    ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &w);
                shmring_writer_close(err == 0 ? w : NULL);
                _exit(err == 0 ? 0 : err == SHMRING_EEXIST ? 1 : 2);
            }
        }
        int winners = 0;
        for (int i = 0; i < RACERS; i++) {
            int status;
            ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
            ck_assert(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
            winners += WEXITSTATUS(status) == 0;
        }
        both += winners == RACERS;
        ck_assert_int_eq(winners >= 1, 1);
        ck_assert_int_eq(test_ring_entries(ring), 1);
        ck_assert_str_eq(test_ring_listing(ring), "control,lock");
        ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
    }
    ck_assert_int_eq(both, 0);
}
END_TEST

static int try_exclusive_create(void)
{
    shmring_writer_t *w;
    int err =
        shmring_writer_open(ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &w);
    shmring_writer_close(err == 0 ? w : NULL);
    return err;
}

/*
 * Another user's private directory (mode 0700) at a ring's name: a non-root owner
 * cannot even enter it, and is told it is another user's (SHMRING_EOWNER), not
 * "permission denied" as if it were a ring of a trusted owner.
 */
START_TEST(test_private_squat_is_foreign)
{
    if (geteuid() != 0)
        return; /* needs root to act as two other users */
    ck_assert_int_eq(mkdir(test_ring_path(ring), 0700), 0);
    ck_assert_int_eq(chown(test_ring_path(ring), 65534, 65534), 0);
    /* uid 1 (daemon) is the would-be owner; nobody squats. */
    ck_assert_int_eq(test_as_user(1, 1, try_create), SHMRING_EOWNER);
    ck_assert_int_eq(test_as_user(1, 1, try_exclusive_create), SHMRING_EOWNER);
    ck_assert_int_eq(test_as_user(1, 1, try_write), SHMRING_EOWNER);
    ck_assert_int_eq(test_as_user(1, 1, try_destroy), SHMRING_EOWNER);
    ck_assert_int_eq(test_as_user(1, 1, try_read), SHMRING_EOWNER);
    ck_assert_int_eq(test_as_user(1, 1, try_status), SHMRING_EOWNER);
    /* Root enters it, and does not trust nobody either. */
    ck_assert_int_eq(try_read(), SHMRING_EOWNER);
    struct stat st;
    ck_assert_int_eq(lstat(test_ring_path(ring), &st), 0);
    ck_assert_uint_eq(st.st_uid, 65534);
    ck_assert_int_eq(rmdir(test_ring_path(ring)), 0);
}
END_TEST

/* A directory of rings is named by an absolute path: a relative one would follow
 * the caller's working directory from one refresh to the next. */
START_TEST(test_relative_directory_refused)
{
    shmring_open_options_t open_options = {.directory = "dev/shm"};
    shmring_t *r = NULL;
    ck_assert_int_eq(shmring_open_with(ring, &open_options, &r), SHMRING_EBADDIR);
    ck_assert_ptr_null(r);
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = ".";
    shmring_writer_t *w = NULL;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w),
                     SHMRING_EBADDIR);
    ck_assert_ptr_null(w);
    ck_assert_int_eq(shmring_ring_destroy(ring, &options), SHMRING_EBADDIR);
    char **names;
    size_t count;
    ck_assert_int_eq(shmring_ring_list("", &names, &count), SHMRING_EBADDIR);
    ck_assert_int_eq(test_ring_entries(ring), 0);
}
END_TEST

/* The umask of the child that as_other_user() runs create_under_umask() in. */
static mode_t creator_umask;

/* Creates the ring (atomically when ATOMIC), publishes, opens it again as a writer
 * and destroys it, under creator_umask: 0 or the first error. */
static int create_under_umask_with(unsigned atomic)
{
    umask(creator_umask);
    shmring_writer_t *w;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE | atomic, NULL, &w);
    if (err != 0)
        return err;
    err = publish_one_node(w);
    shmring_writer_close(w);
    struct stat st;
    if (err == 0 &&
        (stat(test_object_path(ring, LOCK_FILE), &st) != 0 ||
         (st.st_mode & 07777) != 0600 ||
         stat(test_object_path(ring, CONTROL_FILE), &st) != 0 ||
         (st.st_mode & 07777) != 0644 || stat(test_ring_path(ring), &st) != 0 ||
         (st.st_mode & 07777) != 0755))
        err = SHMRING_EIO;
    if (err == 0)
        err = shmring_writer_open(ring, 0, NULL, &w);
    if (err == 0)
        shmring_writer_close(w);
    int destroyed = shmring_ring_destroy(ring, NULL);
    return err != 0 ? err : destroyed;
}

static int create_under_umask(void)
{
    int err = create_under_umask_with(0);
    return err != 0 ? err : create_under_umask_with(SHMRING_WRITER_ATOMIC_CREATE);
}

/*
 * A creator's umask filters the modes of what it creates; the ring's modes must not
 * depend on it. As a user other than root (root ignores permissions), a umask that
 * takes the owner's own read or write bits once left a directory the creator could
 * not open, or a lock file its owner could not open again.
 */
START_TEST(test_restrictive_umask)
{
    if (geteuid() != 0)
        return; /* needs root to act as another user */
    static const mode_t masks[] = {0400, 0200, 0277, 0777};
    for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
        creator_umask = masks[i];
        ck_assert_msg(as_other_user(create_under_umask) == 0, "umask %04o",
                      (unsigned)masks[i]);
        ck_assert_int_eq(test_ring_entries(ring), 0);
    }
}
END_TEST

/* What another user's attempt (one of the try_* functions) must return. */
struct other_user_try {
    const char *what;
    int (*attempt)(void);
    int expected;
};

/* Makes each of the COUNT TRIES as the other user; a failure names SCENE and the
 * attempt. */
static void check_other_user_gets(const char *scene, const struct other_user_try *tries,
                                  size_t count)
{
    for (size_t i = 0; i < count; i++) {
        int got = as_other_user(tries[i].attempt);
        ck_assert_msg(got == tries[i].expected,
                      "%s: %s as another user returned %d, not %d", scene, tries[i].what,
                      got, tries[i].expected);
    }
}

/* check_other_user_gets() of the tries that follow. */
#define OTHER_USER_GETS(scene, ...)                                                      \
    check_other_user_gets((scene), (const struct other_user_try[]){__VA_ARGS__},         \
                          sizeof((const struct other_user_try[]){__VA_ARGS__}) /         \
                              sizeof(struct other_user_try))

/* Creates the ring with OPTIONS and publishes 3 nodes as its generation 1. */
static shmring_writer_t *create_with_options(const shmring_writer_options_t *options)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, options, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);
    return w;
}

START_TEST(test_permissions)
{
    if (geteuid() != 0)
        return; /* needs root to act as another user */
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.mode = 0640;
    shmring_writer_t *w = create_with_options(&options);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
    ck_assert_uint_eq(status.mode, 0640);
    ck_assert_uint_eq(status.group, 0);
    struct stat st;
    ck_assert_int_eq(stat(test_version_path(ring, 1), &st), 0);
    /* Versions are read-only, even for the owner: readers trust what they validated. */
    ck_assert_uint_eq(st.st_mode & 07777, 0440);

    /* Mode 0640, group root: another user can neither read nor write the ring, nor
     * reach its lock. Reading a ring of a trusted owner is denied by its mode;
     * writing or destroying is refused as for any ring of another user, though its
     * directory cannot even be entered. */
    OTHER_USER_GETS("mode 0640, group root", {"read", try_read, SHMRING_EACCES},
                    {"status", try_status, SHMRING_EACCES},
                    {"write", try_write, SHMRING_EOWNER},
                    {"destroy", try_destroy, SHMRING_EOWNER},
                    {"open the lock", try_lock_file, EACCES});
    shmring_writer_close(w);
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);

    /* Mode 0640, the other user's group: it reads, and still cannot write, destroy
     * or reach the lock. */
    options.group = 65534;
    w = create_with_options(&options);
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), 0);
    ck_assert_uint_eq(status.group, 65534);
    ck_assert_int_eq(stat(test_version_path(ring, 1), &st), 0);
    ck_assert_uint_eq(st.st_gid, 65534);
    OTHER_USER_GETS("mode 0640, the other user's group", {"read", try_read, 0},
                    {"status", try_status, 0}, {"write", try_write, SHMRING_EOWNER},
                    {"create", try_create, SHMRING_EOWNER},
                    {"destroy", try_destroy, SHMRING_EOWNER},
                    {"open the lock", try_lock_file, EACCES});
    shmring_writer_close(w);
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);

    /* Mode 0644: another user can read, but still not write. */
    options.mode = 0644;
    options.group = (gid_t)-1;
    w = create_with_options(&options);
    OTHER_USER_GETS("mode 0644", {"read", try_read, 0},
                    {"write", try_write, SHMRING_EOWNER},
                    {"destroy", try_destroy, SHMRING_EOWNER},
                    {"open the lock", try_lock_file, EACCES});
    assert_generation_1_alone();
    shmring_writer_close(w);
}
END_TEST

/*
 * Another user's ring: even root can neither write, lock nor destroy it, and root's
 * readers accept it only when told to trust its owner.
 */
START_TEST(test_other_users_ring)
{
    if (geteuid() != 0)
        return;
    ck_assert_int_eq(as_other_user(create_and_publish), 0);
    shmring_writer_t *w = NULL;
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), SHMRING_EOWNER);
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w),
                     SHMRING_EOWNER);
    ck_assert_int_eq(
        shmring_writer_open(ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &w),
        SHMRING_EOWNER);
    ck_assert_ptr_null(w);
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), SHMRING_EOWNER);
    shmring_t *r = NULL;
    ck_assert_int_eq(shmring_open(ring, &r), SHMRING_EOWNER);
    ck_assert_ptr_null(r);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, NULL, &status), SHMRING_EOWNER);

    shmring_open_options_t trust = {.trusted_owner = 65534};
    ck_assert_int_eq(shmring_open_with(ring, &trust, &r), 0);
    ck_assert_uint_eq(shmring_generation(r), 1);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, "k", 1, &node), 0);
    ck_assert_str_eq(node.name, "n1");
    shmring_close(r);
    ck_assert_int_eq(shmring_ring_status(ring, &trust, &status), 0);
    ck_assert_uint_eq(status.owner, 65534);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_uint_eq(status.publish_count, 1);
    ck_assert_str_eq(test_ring_listing(ring), "control,lock,version.1");
    ck_assert_int_eq(test_ring_entries(ring), 1);

    ck_assert_int_eq(as_other_user(try_destroy), 0);
    ck_assert_int_eq(test_ring_entries(ring), 0);
}
END_TEST

START_TEST(test_version_with_another_owner_refused)
{
    if (geteuid() != 0)
        return;
    shmring_writer_t *w = create_with_nodes(3);
    ck_assert_int_eq(chown(test_version_path(ring, 1), 65534, 65534), 0);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), SHMRING_EOWNER);
    shmring_writer_close(w);
}
END_TEST

static const struct test_fixture fixture = {setup, teardown, 0};

static Suite *publish_suite(void)
{
    Suite *s = suite_create("publish");
    TEST_CASE_WITH(s, "core", &fixture, test_open_missing_and_exclusive,
                   test_publish_swaps_versions, test_writer_nodeset_round_trip,
                   test_open_or_create);
    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_add_test(errors, test_failed_publish_changes_nothing);
    tcase_add_test(errors, test_unallocatable_version_refused);
    tcase_add_test(errors, test_file_size_limit_without_signal);
    tcase_add_test(errors, test_only_four_modes);
    tcase_add_test(errors, test_late_destroy_spares_new_ring);
    tcase_add_test(errors, test_lock_wait_bounded);
    tcase_add_test(errors, test_exclusive_creators_race);
    tcase_add_test(errors, test_failed_creating_load_spares_another);
    tcase_add_test(errors, test_open_or_create_race_opens_the_winners);
    tcase_add_test(errors, test_open_or_create_race_atomic);
    tcase_add_test(errors, test_orphans_removed_by_next_writer);
    /* Racing creators fork hundreds of processes: on a loaded machine that takes
     * longer than Check's default of 4 s (ctest sets 300 s for every test anyway). */
    tcase_set_timeout(errors, 300);
    suite_add_tcase(s, errors);

    TEST_CASE_WITH(s, "permissions", &fixture, test_permissions, test_restrictive_umask,
                   test_private_squat_is_foreign, test_relative_directory_refused,
                   test_other_users_ring, test_version_with_another_owner_refused);
    return s;
}

int main(void)
{
    return test_run_suite(publish_suite());
}
