/* The fixture of the check_ringctl_* programs (ringctl_fixture.h). */
#include "ringctl_fixture.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char ring[SHMRING_RING_NAME_MAX + 1];
char other[SHMRING_RING_NAME_MAX + 1];
char temp_file[64];
/* A private ring directory that a test made with make_ring_directory() (empty:
 * none), and the directory that the helpers below read rings from (NULL: the
 * default). */
char temp_dir[64];
const char *ring_dir;

void ringctl_setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("ctl"));
    snprintf(other, sizeof(other), "%s", test_ring_name("ctl"));
    snprintf(temp_file, sizeof(temp_file), "/tmp/check_ringctl-%ld.json", (long)getpid());
    temp_dir[0] = '\0';
    ring_dir = NULL;
    unsetenv("SHMRING_RING");
    unsetenv("SHMRING_DIR");
}

const shmring_open_options_t *read_options(void)
{
    static shmring_open_options_t options;
    options = (shmring_open_options_t){.directory = ring_dir};
    return &options;
}

const char *make_ring_directory(void)
{
    snprintf(temp_dir, sizeof(temp_dir), "/tmp/check_ringctl-%ld-XXXXXX", (long)getpid());
    ck_assert_ptr_nonnull(mkdtemp(temp_dir));
    ring_dir = temp_dir;
    return temp_dir;
}

void assert_no_objects(const char *ring_name)
{
    if (ring_dir == NULL)
        ck_assert_msg(test_ring_entries(ring_name) == 0, "left behind: %s",
                      test_ring_path(ring_name));
    else
        ck_assert_int_eq(access(test_fmt("%s/shmring.%s", ring_dir, ring_name), F_OK),
                         -1);
}

const struct test_fixture ringctl_fixture = {ringctl_setup, ringctl_teardown, 300};

void assert_ring_absent(const char *ring_name)
{
    ck_assert_int_eq(status_error(ring_name), SHMRING_ENOENT);
    assert_no_objects(ring_name);
}

void ringctl_teardown(void)
{
    unlink(temp_file);
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = ring_dir;
    const char *rings[] = {ring, other};
    for (size_t i = 0; i < 2; i++) {
        int err = shmring_ring_destroy(rings[i], &options);
        ck_assert_msg(err == 0 || err == SHMRING_ENOENT, "destroy %s: %s", rings[i],
                      shmring_strerror(err));
        assert_no_objects(rings[i]);
    }
    if (temp_dir[0] != '\0') {
        /* Destroyed rings leave nothing behind, not even hidden entries. */
        ck_assert_int_eq(test_count_entries(temp_dir), 0);
        ck_assert_int_eq(rmdir(temp_dir), 0);
    }
}

shmring_ring_status_t status_of(const char *ring_name)
{
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring_name, read_options(), &status), 0);
    return status;
}

int status_error(const char *ring_name)
{
    shmring_ring_status_t status;
    return shmring_ring_status(ring_name, read_options(), &status);
}

uint64_t generation_of(const char *ring_name)
{
    return status_of(ring_name).generation;
}

shmring_snapshot_t *snapshot_of(const char *ring_name)
{
    uint64_t generation;
    shmring_snapshot_t *snapshot;
    ck_assert_int_eq(
        shmring_ring_snapshot(ring_name, read_options(), &generation, &snapshot), 0);
    ck_assert_ptr_nonnull(snapshot);
    return snapshot;
}

shmring_nodeset_t *nodeset_of(const char *ring_name)
{
    shmring_snapshot_t *buffer = snapshot_of(ring_name);
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_from_snapshot(buffer, &set), 0);
    shmring_snapshot_free(buffer);
    return set;
}

char *json_of(const char *ring_name)
{
    shmring_nodeset_t *set = nodeset_of(ring_name);
    char *text;
    ck_assert_int_eq(shmring_nodeset_to_json(set, &text), 0);
    shmring_nodeset_free(set);
    return text;
}

shmring_node_info_t node_of(const shmring_nodeset_t *set, const char *name)
{
    size_t index;
    shmring_node_info_t node;
    ck_assert_int_eq(shmring_nodeset_find(set, name, &index), 0);
    ck_assert_int_eq(shmring_nodeset_get(set, index, &node), 0);
    return node;
}

struct saved_ring save_ring(const char *ring_name)
{
    shmring_ring_status_t status = status_of(ring_name);
    return (struct saved_ring){.generation = status.generation,
                               .publish_count = status.publish_count,
                               .json = json_of(ring_name)};
}

void assert_ring_unchanged(const char *ring_name, struct saved_ring *saved)
{
    shmring_ring_status_t status = status_of(ring_name);
    ck_assert_uint_eq(status.generation, saved->generation);
    ck_assert_uint_eq(status.publish_count, saved->publish_count);
    char *now = json_of(ring_name);
    ck_assert_str_eq(now, saved->json);
    free(now);
    free(saved->json);
    saved->json = NULL;
}

void make_ring(void)
{
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    EXPECT(0, test_fmt("added node-a (id 0) to ring '%s': generation 2\n", ring), "",
           "-r", ring, "add", "node-a", "10.0.0.1:11211");
    EXPECT(0, test_fmt("added node-b (id 1) to ring '%s': generation 3\n", ring), "",
           "-r", ring, "add", "node-b", "10.0.0.2:11211", "--weight", "3");
    ck_assert_uint_eq(generation_of(ring), 3);
}

const char *owner_text(uid_t uid)
{
    const struct passwd *user = getpwuid(uid);
    if (user != NULL)
        return test_fmt("uid %lu (%s)", (unsigned long)uid, user->pw_name);
    return test_fmt("uid %lu", (unsigned long)uid);
}

const char *belongs_message(const char *ring_name, uid_t owner)
{
    return test_fmt("ringctl: error: ring '%s': %s is a directory owned by %s: the ring "
                    "belongs to that user, and only its owner can change or destroy it\n",
                    ring_name, test_ring_path(ring_name), owner_text(owner));
}

const char *ask_record(struct test_child *c, const char *key, size_t len, char terminator)
{
    static char answer[1024];
    static char line[8192];
    ck_assert_uint_lt(len, sizeof(line));
    memcpy(line, key, len);
    line[len] = terminator;
    ck_assert_int_eq(write(c->in, line, len + 1), (ssize_t)(len + 1));
    size_t got = 0;
    while (got == 0 || answer[got - 1] != terminator) {
        struct pollfd fd = {.fd = c->out, .events = POLLIN};
        ck_assert_msg(poll(&fd, 1, ANSWER_TIMEOUT_MS) == 1,
                      "no answer for '%.*s' after %d ms", (int)len, key,
                      ANSWER_TIMEOUT_MS);
        ssize_t n = read(c->out, answer + got, sizeof(answer) - 1 - got);
        ck_assert_int_gt(n, 0);
        got += (size_t)n;
    }
    answer[got] = '\0';
    return answer;
}

const char *ask(struct test_child *c, const char *key)
{
    return ask_record(c, key, strlen(key), '\n');
}

const char *answer_line(const char *key, const char *printed)
{
    shmring_t *reader;
    ck_assert_int_eq(shmring_open(ring, &reader), 0);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(reader, key, strlen(key), &node), 0);
    shmring_close(reader);
    return test_fmt("%s\t%s\t%s\n", printed, node.name, node.address);
}

const char *owner_line(const char *key)
{
    return answer_line(key, key);
}

char *read_all(int fd)
{
    char *text = calloc(1, 1);
    size_t len = 0;
    while (test_drain(fd, &text, &len))
        continue;
    return text;
}
