/* Tests of publication into shared memory: lib/publish.c and lib/ring_admin.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control_internal.h"
#include "test_support.h"

static char ring[SHMRING_RING_NAME_MAX + 1];

static void setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("publish"));
}

static bool object_exists(const char *name)
{
    char path[OBJECT_NAME_MAX + 16];
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    struct stat st;
    return stat(path, &st) == 0;
}

static bool version_exists(uint64_t generation)
{
    char name[OBJECT_NAME_MAX];
    shmring__version_name(ring, generation, name);
    return object_exists(name);
}

/* Counts /dev/shm objects that belong to RING (control and versions). */
static int ring_object_count(void)
{
    char command[512];
    snprintf(command, sizeof(command),
             "ls /dev/shm | grep -cE '^shmring\\.%s(\\.[0-9]+)?$'", ring);
    FILE *p = popen(command, "r");
    int count = -1;
    ck_assert_int_eq(fscanf(p, "%d", &count), 1);
    pclose(p);
    return count;
}

static void teardown(void)
{
    int err = shmring_ring_destroy(ring);
    ck_assert(err == 0 || err == SHMRING_ENOENT);
    ck_assert_int_eq(ring_object_count(), 0);
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

START_TEST(test_ring_names)
{
    ck_assert_int_eq(shmring_ring_name_check("cache"), 0);
    ck_assert_int_eq(shmring_ring_name_check("a.b-c_D9"), 0);
    ck_assert_int_eq(shmring_ring_name_check("x.5a"), 0);
    ck_assert_int_eq(shmring_ring_name_check("5"), 0);
    ck_assert_int_eq(shmring_ring_name_check(""), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_name_check("a/b"), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_name_check("a b"), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_name_check("x.5"), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_name_check("."), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_name_check(".."), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_name_check(NULL), SHMRING_EBADRING);
    char name[SHMRING_RING_NAME_MAX + 2];
    memset(name, 'a', sizeof(name));
    name[SHMRING_RING_NAME_MAX] = '\0';
    ck_assert_int_eq(shmring_ring_name_check(name), 0);
    name[SHMRING_RING_NAME_MAX] = 'a';
    name[SHMRING_RING_NAME_MAX + 1] = '\0';
    ck_assert_int_eq(shmring_ring_name_check(name), SHMRING_EBADRING);
}
END_TEST

START_TEST(test_open_missing_and_exclusive)
{
    shmring_writer_t *w = NULL;
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), SHMRING_ENOENT);
    ck_assert_int_eq(
        shmring_writer_open(ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &w),
        0);
    ck_assert_uint_eq(shmring_writer_generation(w), 0);
    shmring_writer_close(w);
    ck_assert_int_eq(
        shmring_writer_open(ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &w),
        SHMRING_EEXIST);
    ck_assert_int_eq(shmring_writer_open("bad/name", SHMRING_WRITER_CREATE, NULL, &w),
                     SHMRING_EBADRING);
}
END_TEST

START_TEST(test_publish_swaps_versions)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);
    ck_assert(version_exists(1));

    /* Map version 1 the way a reader does, then supersede it. */
    int fd;
    char name[OBJECT_NAME_MAX];
    shmring__version_name(ring, 1, name);
    fd = shm_open(name, O_RDONLY, 0);
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
    ck_assert_int_eq(shmring_snapshot_validate(old, (size_t)st.st_size), 0);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(old, &info);
    ck_assert_uint_eq(info.node_count, 3);
    munmap(old, (size_t)st.st_size);

    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, &status), 0);
    ck_assert_uint_eq(status.generation, 2);
    ck_assert_uint_eq(status.publish_count, 2);
    ck_assert_int_eq(status.publisher_pid, getpid());
    ck_assert_int_eq(ring_object_count(), 2);
    shmring_writer_close(w);
}
END_TEST

START_TEST(test_failed_publish_changes_nothing)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);

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
    ck_assert_int_eq(shmring_ring_status(ring, &status), 0);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert(!version_exists(2));
    ck_assert_int_eq(ring_object_count(), 2);
    shmring_writer_close(w);
}
END_TEST

START_TEST(test_orphans_removed_by_next_writer)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 2), 1);
    shmring_writer_close(w);

    /* What a writer killed mid-publish leaves: an unpublished next version, and a
     * stale one it had not unlinked yet. */
    char name[OBJECT_NAME_MAX];
    for (uint64_t gen = 0; gen <= 2; gen += 2) {
        shmring__version_name(ring, gen == 0 ? 7 : gen, name);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    ck_assert_int_eq(ring_object_count(), 4);

    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), 0);
    ck_assert_int_eq(ring_object_count(), 2);
    ck_assert(version_exists(1));
    /* The next publish uses generation 2 even though an orphan had that name. */
    ck_assert_uint_eq(publish_nodes(w, 3), 2);
    ck_assert_int_eq(ring_object_count(), 2);
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

START_TEST(test_destroy_and_list)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 2), 1);
    shmring_writer_close(w);

    char **names;
    size_t count;
    ck_assert_int_eq(shmring_ring_list(&names, &count), 0);
    bool listed = false;
    for (size_t i = 0; i < count; i++) {
        listed |= strcmp(names[i], ring) == 0;
        /* Version objects are never listed as rings. */
        ck_assert_int_eq(shmring_ring_name_check(names[i]), 0);
    }
    ck_assert_ptr_null(names[count]);
    ck_assert(listed);
    shmring_ring_list_free(names);

    ck_assert_int_eq(shmring_ring_destroy(ring), 0);
    ck_assert_int_eq(ring_object_count(), 0);
    ck_assert_int_eq(shmring_ring_destroy(ring), SHMRING_ENOENT);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, &status), SHMRING_ENOENT);
}
END_TEST

START_TEST(test_ring_snapshot_copy)
{
    uint64_t gen = 5;
    void *buffer = (void *)1;
    size_t size;
    ck_assert_int_eq(shmring_ring_snapshot(ring, &gen, &buffer, &size), SHMRING_ENOENT);
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_int_eq(shmring_ring_snapshot(ring, &gen, &buffer, &size), 0);
    ck_assert_uint_eq(gen, 0);
    ck_assert_ptr_null(buffer);
    ck_assert_uint_eq(publish_nodes(w, 7), 1);
    ck_assert_int_eq(shmring_ring_snapshot(ring, &gen, &buffer, &size), 0);
    ck_assert_uint_eq(gen, 1);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(buffer, &info);
    ck_assert_uint_eq(info.node_count, 7);
    ck_assert_uint_eq(info.size, size);
    free(buffer);
    shmring_writer_close(w);
}
END_TEST

/* Runs FN in a child process as user "nobody" and returns its exit status. */
static int as_other_user(int (*fn)(void))
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(100);
        _exit(fn());
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int try_read(void)
{
    shmring_t *r;
    int err = shmring_open(ring, &r);
    shmring_close(err == 0 ? r : NULL);
    return err == 0 ? 0 : err == SHMRING_EACCES ? 1 : 2;
}

static int try_write(void)
{
    shmring_writer_t *w;
    int err = shmring_writer_open(ring, 0, NULL, &w);
    shmring_writer_close(err == 0 ? w : NULL);
    return err == 0 ? 0 : err == SHMRING_EACCES ? 1 : 2;
}

/* Modes beyond read and write bits are refused before anything is created. */
START_TEST(test_mode_beyond_read_write_refused)
{
    static const mode_t refused[] = {0755, 04666, 02644, 01666, 0100, 07777};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        shmring_create_options_t options = {.mode = refused[i], .group = (gid_t)-1};
        shmring_writer_t *w = NULL;
        ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w),
                         SHMRING_EINVAL);
        ck_assert_ptr_null(w);
        ck_assert_int_eq(ring_object_count(), 0);
    }
    shmring_create_options_t options = {.mode = 0666, .group = (gid_t)-1};
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w), 0);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, &status), 0);
    ck_assert_uint_eq(status.mode, 0666);
    shmring_writer_close(w);
}
END_TEST

/* Does process PID hold a descriptor of the shared-memory object NAME? */
static bool holds_object(pid_t pid, const char *name)
{
    char want[OBJECT_NAME_MAX + 16];
    snprintf(want, sizeof(want), "/dev/shm%s", name);
    for (int fd = 0; fd < 64; fd++) {
        char link[64], target[OBJECT_NAME_MAX + 32];
        snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, fd);
        ssize_t len = readlink(link, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (strcmp(target, want) == 0)
            return true;
    }
    return false;
}

/*
 * A destroy that waited for the lock while another destroy removed the ring, and a
 * new ring of the same name was created, leaves the new ring alone.
 */
START_TEST(test_late_destroy_spares_new_ring)
{
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);
    shmring_writer_close(w);
    char name[OBJECT_NAME_MAX];
    shmring__control_name(ring, name);
    /* The late destroy runs in a child forked before the writer below opens, so that
     * it inherits no descriptor of the ring: it waits for that writer's lock. */
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char byte;
        close(go[1]);
        if (read(go[0], &byte, 1) != 1)
            _exit(2);
        _exit(shmring_ring_destroy(ring) == SHMRING_ENOENT ? 0 : 1);
    }
    close(go[0]);
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &w), 0);
    ck_assert_int_eq(write(go[1], "x", 1), 1);
    close(go[1]);
    while (!holds_object(pid, name))
        usleep(1000);

    /* The first destroy, as the writer that holds the lock could do it: remove the
     * objects by name; then a new ring takes the name. */
    ck_assert_int_eq(shm_unlink(name), 0);
    char version[OBJECT_NAME_MAX];
    shmring__version_name(ring, 1, version);
    ck_assert_int_eq(shm_unlink(version), 0);
    shmring_writer_t *fresh;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &fresh), 0);
    ck_assert_uint_eq(publish_nodes(fresh, 2), 1);
    shmring_writer_close(fresh);
    shmring_writer_close(w); /* the late destroy gets the old lock now */

    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    shmring_ring_status_t st;
    ck_assert_int_eq(shmring_ring_status(ring, &st), 0);
    ck_assert_uint_eq(st.generation, 1);
    ck_assert_int_eq(ring_object_count(), 2);
}
END_TEST

/*
 * Racing exclusive creators: in every round exactly one of them gets the ring, the
 * other SHMRING_EEXIST, also when it loses the race between its existence check and
 * its O_EXCL create.
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
        ck_assert_int_eq(shmring_ring_destroy(ring), 0);
    }
    ck_assert_int_eq(both, 0);
}
END_TEST

START_TEST(test_permissions)
{
    if (geteuid() != 0)
        return; /* needs root to act as another user */
    shmring_create_options_t options = {.mode = 0640, .group = (gid_t)-1};
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring, &status), 0);
    ck_assert_uint_eq(status.mode, 0640);
    char name[OBJECT_NAME_MAX], path[OBJECT_NAME_MAX + 16];
    shmring__version_name(ring, 1, name);
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    /* Versions are read-only, even for the owner: readers trust what they validated. */
    ck_assert_uint_eq(st.st_mode & 07777, 0440);

    /* Mode 0640: another user can neither read nor write the ring. */
    ck_assert_int_eq(as_other_user(try_read), 1);
    ck_assert_int_eq(as_other_user(try_write), 1);

    /* Mode 0644: another user can read, but still not write. */
    shmring_writer_close(w);
    ck_assert_int_eq(shmring_ring_destroy(ring), 0);
    options.mode = 0644;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);
    ck_assert_int_eq(as_other_user(try_read), 0);
    ck_assert_int_eq(as_other_user(try_write), 1);
    shmring_writer_close(w);
}
END_TEST

START_TEST(test_version_with_another_owner_refused)
{
    if (geteuid() != 0)
        return;
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    ck_assert_uint_eq(publish_nodes(w, 3), 1);
    char name[OBJECT_NAME_MAX];
    shmring__version_name(ring, 1, name);
    int fd = shm_open(name, O_RDWR, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
    close(fd);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), SHMRING_EOWNER);
    shmring_writer_close(w);
}
END_TEST

static Suite *publish_suite(void)
{
    Suite *s = suite_create("publish");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_ring_names);
    tcase_add_test(core, test_open_missing_and_exclusive);
    tcase_add_test(core, test_publish_swaps_versions);
    tcase_add_test(core, test_writer_nodeset_round_trip);
    tcase_add_test(core, test_destroy_and_list);
    tcase_add_test(core, test_ring_snapshot_copy);
    suite_add_tcase(s, core);

    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_add_test(errors, test_failed_publish_changes_nothing);
    tcase_add_test(errors, test_mode_beyond_read_write_refused);
    tcase_add_test(errors, test_late_destroy_spares_new_ring);
    tcase_add_test(errors, test_exclusive_creators_race);
    tcase_add_test(errors, test_orphans_removed_by_next_writer);
    suite_add_tcase(s, errors);

    TCase *permissions = tcase_create("permissions");
    tcase_add_checked_fixture(permissions, setup, teardown);
    tcase_add_test(permissions, test_permissions);
    tcase_add_test(permissions, test_version_with_another_owner_refused);
    suite_add_tcase(s, permissions);
    return s;
}

int main(void)
{
    return test_run_suite(publish_suite());
}
