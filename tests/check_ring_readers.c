/*
 * Tests of lib/ring_readers.c: the census of the processes that map a ring's
 * versions. Real reader processes (forked, each with its own command name) hold
 * versions of a ring in a private directory while new ones are published; a pipe
 * tells each when to look up (and so switch) and when to exit, and each answers on
 * another pipe once done, so nothing depends on timing.
 */
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

static char directory[TEST_PATH_MAX];
static char ring[SHMRING_RING_NAME_MAX + 1];
static shmring_writer_t *writer;
static shmring_nodeset_t *set;

/* A reader process: its pid and the two ends of its pipes that we keep. */
struct reader_process {
    pid_t pid;
    int commands; /* we write: 'l' look up, 'q' exit */
    int answers;  /* we read: one byte after each command is done */
};

#define MAX_READERS 4
static struct reader_process readers[MAX_READERS];
static size_t reader_count;

static void setup(void)
{
    test_private_directory("readers", directory);
    snprintf(ring, sizeof(ring), "%s", test_ring_name("readers"));
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = directory;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &writer),
                     0);
    set = test_nodeset(50, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    reader_count = 0;
}

static void teardown(void)
{
    for (size_t i = 0; i < reader_count; i++) {
        /* End of input tells a reader to exit. */
        close(readers[i].commands);
        close(readers[i].answers);
        int status;
        ck_assert_int_eq(waitpid(readers[i].pid, &status, 0), readers[i].pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    shmring_writer_close(writer);
    shmring_nodeset_free(set);
    test_remove_tree(directory);
}

static uint64_t publish(void)
{
    uint64_t generation = 0;
    ck_assert_int_eq(shmring_writer_publish(writer, set, &generation), 0);
    return generation;
}

/* The bytes a mapping of a version of SET occupies: its snapshot's size in whole
 * pages. (Built here: the writer's own shmring_writer_snapshot() would map the
 * version into this process, which the census would then count.) */
static uint64_t version_bytes(void)
{
    size_t size;
    free(test_build(set, &size));
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return (size + page - 1) / page * page;
}

static void answered(const struct reader_process *reader)
{
    char byte;
    ck_assert_int_eq(read(reader->answers, &byte, 1), 1);
    ck_assert_int_eq(byte, 'k');
}

/* The reader process: opens the ring, answers, then obeys commands until end of
 * input. Exits 1 on any failure, which teardown reports. */
static void reader_main(const char *name, int commands, int answers)
{
    prctl(PR_SET_NAME, name);
    shmring_open_options_t options = {.directory = directory};
    shmring_t *r;
    shmring_node_t node;
    if (shmring_open_with(ring, &options, &r) != 0 ||
        shmring_lookup(r, "key", 3, &node) != 0 || write(answers, "k", 1) != 1)
        _exit(1);
    char command;
    while (read(commands, &command, 1) == 1) {
        if (command == 'l' && shmring_lookup(r, "key", 3, &node) != 0)
            _exit(1);
        if (write(answers, "k", 1) != 1)
            _exit(1);
    }
    shmring_close(r);
    _exit(0);
}

/* Starts a reader process named NAME that maps the current version. */
static struct reader_process *start_reader(const char *name)
{
    ck_assert_uint_lt(reader_count, MAX_READERS);
    struct test_piped_child child = test_fork_piped();
    if (child.pid == 0) {
        /* The other readers' pipes are theirs: without this, a reader would keep
         * its siblings' command pipes open and they would never see end of input. */
        for (size_t i = 0; i < reader_count; i++) {
            close(readers[i].commands);
            close(readers[i].answers);
        }
        reader_main(name, child.commands, child.answers);
    }
    struct reader_process *reader = &readers[reader_count++];
    *reader = (struct reader_process){child.pid, child.commands, child.answers};
    answered(reader);
    return reader;
}

/* Has READER look up (and so switch to the current version). */
static void reader_lookup(const struct reader_process *reader)
{
    ck_assert_int_eq(write(reader->commands, "l", 1), 1);
    answered(reader);
}

static void census(shmring_ring_readers_t *out)
{
    shmring_open_options_t options = {.directory = directory};
    memset(out, 0xff, sizeof(*out));
    ck_assert_int_eq(shmring_ring_readers(ring, &options, out), 0);
}

static void assert_reader(const shmring_ring_reader_t *reader, pid_t pid,
                          const char *command, uint64_t generation, bool current,
                          uint64_t bytes)
{
    ck_assert_int_eq(reader->pid, pid);
    ck_assert_str_eq(reader->command, command);
    ck_assert_uint_eq(reader->generation, generation);
    ck_assert_int_eq(reader->current, current);
    ck_assert_uint_eq(reader->mapped_bytes, bytes);
}

/* The entry of process PID in RESULT, which the census sorts by pid (pids may wrap,
 * so the older reader's need not be the smaller). */
static const shmring_ring_reader_t *reader_of(const shmring_ring_readers_t *result,
                                              pid_t pid)
{
    for (size_t i = 0; i < result->reader_count; i++) {
        if (i > 0)
            ck_assert_int_lt(result->readers[i - 1].pid, result->readers[i].pid);
    }
    for (size_t i = 0; i < result->reader_count; i++) {
        if (result->readers[i].pid == pid)
            return &result->readers[i];
    }
    ck_abort_msg("no reader with pid %d", (int)pid);
    return NULL;
}

/* assert_reader() on the entry of process PID in RESULT. */
static void assert_reader_of(const shmring_ring_readers_t *result, pid_t pid,
                             const char *command, uint64_t generation, bool current,
                             uint64_t bytes)
{
    assert_reader(reader_of(result, pid), pid, command, generation, current, bytes);
}

static void assert_version(const shmring_ring_version_use_t *version, uint64_t generation,
                           bool current, size_t processes, uint64_t bytes)
{
    ck_assert_uint_eq(version->generation, generation);
    ck_assert_int_eq(version->current, current);
    ck_assert_uint_eq(version->processes, processes);
    ck_assert_uint_eq(version->bytes, bytes);
}

/* RESULT counts one reader, process PID running COMMAND, of the current version 1,
 * and that version alone. */
static void assert_one_current_reader(const shmring_ring_readers_t *result, pid_t pid,
                                      const char *command)
{
    ck_assert_uint_eq(result->reader_count, 1);
    assert_reader(&result->readers[0], pid, command, 1, true, version_bytes());
    ck_assert_uint_eq(result->version_count, 1);
    assert_version(&result->versions[0], 1, true, 1, version_bytes());
}

/* An entry of the uncounted list, with the fields named. */
static void assert_uncounted(const shmring_ring_reader_t *entry, pid_t pid,
                             const char *command, uint32_t uid, uint32_t kind,
                             uint64_t generation, uint64_t mapped_bytes,
                             uint32_t descriptors)
{
    ck_assert_int_eq(entry->pid, pid);
    ck_assert_str_eq(entry->command, command);
    ck_assert_uint_eq(entry->uid, uid);
    ck_assert_uint_eq(entry->kind, kind);
    ck_assert_uint_eq(entry->generation, generation);
    ck_assert_uint_eq(entry->mapped_bytes, mapped_bytes);
    ck_assert_uint_eq(entry->descriptors, descriptors);
}

/*
 * Two idle readers keep generations 1 and 2 mapped after generation 3 is published:
 * the census names both, marks both superseded and counts the memory they keep in
 * use; once one looks up, it is a reader of the current version.
 */
START_TEST(test_idle_readers_hold_superseded_versions)
{
    ck_assert_uint_eq(publish(), 1);
    /* The node set is the same each time, so every version has the same size. */
    uint64_t bytes = version_bytes();
    struct reader_process *first = start_reader("reader-one");
    ck_assert_uint_eq(publish(), 2);
    struct reader_process *second = start_reader("reader-two");
    ck_assert_uint_eq(publish(), 3);

    shmring_ring_readers_t result;
    census(&result);
    ck_assert_uint_eq(result.generation, 3);
    ck_assert_uint_eq(result.reader_count, 2);
    assert_reader_of(&result, first->pid, "reader-one", 1, false, bytes);
    assert_reader_of(&result, second->pid, "reader-two", 2, false, bytes);
    ck_assert_uint_eq(result.version_count, 2);
    assert_version(&result.versions[0], 1, false, 1, bytes);
    assert_version(&result.versions[1], 2, false, 1, bytes);
    ck_assert_uint_eq(result.superseded_versions, 2);
    ck_assert_uint_eq(result.superseded_bytes, 2 * bytes);
    ck_assert_uint_ge(result.processes_inspected, 3);
    ck_assert_uint_eq(result.uncounted_count, 0);
    ck_assert_ptr_null(result.uncounted);
    /* The test links the library's objects, no libshmring.so: the release is unknown
     * (0), and a reader of unknown release is never called stuck. */
    ck_assert_uint_eq(result.stuck_processes, 0);
    for (size_t i = 0; i < result.reader_count; i++) {
        ck_assert_uint_eq(result.readers[i].stuck_format, 0);
        ck_assert_uint_eq(result.readers[i].reader_release, 0);
    }
    ck_assert_uint_eq(result.reserved[0], 0);
    shmring_ring_readers_free(&result);
    ck_assert_ptr_null(result.readers);
    ck_assert_uint_eq(result.reader_count, 0);

    /* The first reader switches: generation 1 is released, 3 has a reader. */
    reader_lookup(first);
    census(&result);
    ck_assert_uint_eq(result.reader_count, 2);
    assert_reader_of(&result, first->pid, "reader-one", 3, true, bytes);
    assert_reader_of(&result, second->pid, "reader-two", 2, false, bytes);
    ck_assert_uint_eq(result.version_count, 2);
    assert_version(&result.versions[0], 2, false, 1, bytes);
    assert_version(&result.versions[1], 3, true, 1, bytes);
    ck_assert_uint_eq(result.superseded_versions, 1);
    ck_assert_uint_eq(result.superseded_bytes, bytes);
    shmring_ring_readers_free(&result);

    /* Both on the current version: nothing superseded is held. */
    reader_lookup(second);
    census(&result);
    ck_assert_uint_eq(result.reader_count, 2);
    assert_reader_of(&result, second->pid, "reader-two", 3, true, bytes);
    ck_assert_uint_eq(result.version_count, 1);
    assert_version(&result.versions[0], 3, true, 2, bytes);
    ck_assert_uint_eq(result.superseded_versions, 0);
    ck_assert_uint_eq(result.superseded_bytes, 0);
    shmring_ring_readers_free(&result);
}
END_TEST

/* No reader at all: an empty census, not an error. */
START_TEST(test_no_readers)
{
    ck_assert_uint_eq(publish(), 1);
    shmring_ring_readers_t result;
    census(&result);
    ck_assert_uint_eq(result.generation, 1);
    ck_assert_uint_eq(result.reader_count, 0);
    ck_assert_ptr_null(result.readers);
    ck_assert_uint_eq(result.version_count, 0);
    ck_assert_ptr_null(result.versions);
    ck_assert_uint_eq(result.superseded_versions, 0);
    ck_assert_uint_eq(result.superseded_bytes, 0);
    ck_assert_uint_ge(result.processes_inspected, 1);
    shmring_ring_readers_free(&result);
    shmring_ring_readers_free(NULL);
}
END_TEST

/*
 * The ring directory named through a symbolic link: /proc prints resolved paths, and
 * the census still finds the readers.
 */
START_TEST(test_directory_through_symbolic_link)
{
    ck_assert_uint_eq(publish(), 1);
    struct reader_process *reader = start_reader("reader-link");
    char link_path[TEST_PATH_MAX + 16];
    snprintf(link_path, sizeof(link_path), "%s.link", directory);
    ck_assert_int_eq(symlink(directory, link_path), 0);
    shmring_open_options_t options = {.directory = link_path};
    shmring_ring_readers_t result;
    int err = shmring_ring_readers(ring, &options, &result);
    unlink(link_path);
    ck_assert_int_eq(err, 0);
    ck_assert_uint_eq(result.reader_count, 1);
    assert_reader(&result.readers[0], reader->pid, "reader-link", 1, true,
                  version_bytes());
    shmring_ring_readers_free(&result);
}
END_TEST

/* Another ring's readers, and readers of a destroyed ring of the same name, are not
 * this ring's. */
START_TEST(test_other_rings_are_not_counted)
{
    ck_assert_uint_eq(publish(), 1);
    /* A forked reader would share the writer's lock. */
    shmring_writer_close(writer);
    writer = NULL;
    start_reader("reader-old");
    /* Destroy and re-create the ring: the reader keeps the destroyed ring's version
     * 1 mapped, which now has another path. */
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = directory;
    ck_assert_int_eq(shmring_ring_destroy(ring, &options), 0);
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &writer),
                     0);
    ck_assert_uint_eq(publish(), 1);
    shmring_ring_readers_t result;
    census(&result);
    ck_assert_uint_eq(result.generation, 1);
    ck_assert_uint_eq(result.reader_count, 0);
    ck_assert_uint_eq(result.version_count, 0);
    shmring_ring_readers_free(&result);
}
END_TEST

/* Errors of the ring come first, as shmring_ring_status() gives them. */
START_TEST(test_errors)
{
    shmring_open_options_t options = {.directory = directory};
    shmring_ring_readers_t result;
    ck_assert_int_eq(shmring_ring_readers("no-such-ring", &options, &result),
                     SHMRING_ENOENT);
    ck_assert_int_eq(shmring_ring_readers("bad/name", &options, &result),
                     SHMRING_EBADRING);
    options.directory = "relative";
    ck_assert_int_eq(shmring_ring_readers(ring, &options, &result), SHMRING_EBADDIR);
}
END_TEST

/*
 * A caller who may not inspect the readers (another user) finds none of them but
 * counts the processes it could not inspect. Runs as root only, which can become
 * nobody.
 */
START_TEST(test_hidden_processes_are_counted)
{
    if (geteuid() != 0)
        return;
    ck_assert_uint_eq(publish(), 1);
    start_reader("reader-root");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!test_become(TEST_NOBODY, TEST_NOBODY))
            _exit(10);
        /* The ring is root's, which everyone trusts. */
        shmring_open_options_t options = {.directory = directory};
        shmring_ring_readers_t result;
        if (shmring_ring_readers(ring, &options, &result) != 0)
            _exit(11);
        /* Neither the reader nor the test process (both root) can be inspected; how
         * many other root processes the machine runs is not ours to know. */
        int status = result.reader_count == 0 && result.processes_hidden >= 2 &&
                             result.processes_inspected >= 1
                         ? 0
                         : 12;
        shmring_ring_readers_free(&result);
        _exit(status);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A helper process that did what HOLD asked and waits for end of input on its
 * command pipe before it exits; its pid and that pipe's end. */
struct holder {
    pid_t pid;
    int commands;
};

/* Forks a process that runs HOLD(ARG) and then answers 'k' (or exits with HOLD's
 * non-zero status) and waits for end of input. */
static struct holder holder_start(int (*hold)(const void *arg), const void *arg)
{
    struct test_piped_child child = test_fork_piped();
    if (child.pid == 0) {
        int status = hold(arg);
        if (status != 0)
            _exit(status);
        if (write(child.answers, "k", 1) != 1)
            _exit(1);
        char byte;
        while (read(child.commands, &byte, 1) == 1)
            ;
        _exit(0);
    }
    char byte = 0;
    ssize_t got = read(child.answers, &byte, 1);
    close(child.answers);
    if (got != 1) {
        int status;
        waitpid(child.pid, &status, 0);
        ck_abort_msg("holder failed: status %d", WEXITSTATUS(status));
    }
    return (struct holder){child.pid, child.commands};
}

static void holder_stop(struct holder *h)
{
    close(h->commands);
    int status;
    ck_assert_int_eq(waitpid(h->pid, &status, 0), h->pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}

static char held_path[TEST_PATH_MAX + 2 * (SHMRING_RING_NAME_MAX + 32)];

/* Opens HELD_PATH and keeps the descriptor, mapping nothing. */
static int hold_descriptor(const void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "fd-holder");
    return open(held_path, O_RDONLY | O_CLOEXEC) >= 0 ? 0 : 2;
}

/*
 * A process that keeps a descriptor on a version, mapping nothing, pins it as a
 * mapping does: the census names it, with its uid and descriptor, and counts the
 * superseded version's bytes.
 */
START_TEST(test_descriptor_holds_version)
{
    ck_assert_uint_eq(publish(), 1);
    uint64_t bytes = version_bytes();
    snprintf(held_path, sizeof(held_path), "%s/shmring.%s/version.1", directory, ring);
    struct holder h = holder_start(hold_descriptor, NULL);
    ck_assert_uint_eq(publish(), 2);
    shmring_ring_readers_t result;
    census(&result);
    ck_assert_uint_eq(result.generation, 2);
    ck_assert_uint_eq(result.reader_count, 1);
    assert_reader(&result.readers[0], h.pid, "fd-holder", 1, false, 0);
    ck_assert_uint_eq(result.readers[0].descriptors, 1);
    ck_assert_uint_eq(result.readers[0].uid, geteuid());
    ck_assert_uint_eq(result.readers[0].kind, SHMRING_READER_COUNTED);
    ck_assert_uint_eq(result.version_count, 1);
    assert_version(&result.versions[0], 1, false, 1, bytes);
    ck_assert_uint_eq(result.superseded_versions, 1);
    ck_assert_uint_eq(result.superseded_bytes, bytes);
    ck_assert_uint_eq(result.uncounted_count, 0);
    shmring_ring_readers_free(&result);
    holder_stop(&h);
}
END_TEST

#define TEBIBYTE (UINT64_C(1) << 40)

/* As user nobody in a user and mount namespace of its own (unshare -Urm), mounts a
 * directory of its own over the ring's path, with a sparse 1 TiB version.7, and
 * maps and holds it. */
static int hold_foreign_version(const void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "squatter");
    if (!test_become(TEST_NOBODY, TEST_NOBODY))
        return 2;
    char own[] = "/tmp/census-squat.XXXXXX";
    if (mkdtemp(own) == NULL || unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return 3;
    char path[TEST_PATH_MAX + 2 * (SHMRING_RING_NAME_MAX + 32)];
    snprintf(path, sizeof(path), "%s/version.7", own);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    /* The name stays in this namespace's view only: unlinking it would mark the
     * object "(deleted)", which is not what is tried here. */
    if (fd < 0 || ftruncate(fd, (off_t)TEBIBYTE) != 0)
        return 4;
    close(fd);
    snprintf(path, sizeof(path), "%s/shmring.%s", directory, ring);
    if (mount(own, path, NULL, MS_BIND, NULL) != 0)
        return 5;
    snprintf(path, sizeof(path), "%s/shmring.%s/version.7", directory, ring);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || mmap(NULL, TEBIBYTE, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
        return 6;
    return 0;
}

/*
 * Issue 23's attack: a user who mounts a directory of their own over the ring's path
 * in their own namespaces shows root's census a 1 TiB "version 7". It is listed apart
 * as unverified, and none of its bytes are in the ring's figures.
 */
START_TEST(test_foreign_mount_not_counted)
{
    if (geteuid() != 0)
        return;
    ck_assert_uint_eq(publish(), 1);
    struct reader_process *reader = start_reader("reader-real");
    struct holder h = holder_start(hold_foreign_version, NULL);
    shmring_ring_readers_t result;
    census(&result);
    assert_one_current_reader(&result, reader->pid, "reader-real");
    ck_assert_uint_eq(result.superseded_versions, 0);
    ck_assert_uint_eq(result.superseded_bytes, 0);
    ck_assert_uint_eq(result.uncounted_count, 1);
    assert_uncounted(&result.uncounted[0], h.pid, "squatter", 65534,
                     SHMRING_READER_UNVERIFIED, 7, TEBIBYTE, 1);
    ck_assert_int_eq(result.uncounted[0].current, false);
    shmring_ring_readers_free(&result);
    holder_stop(&h);
}
END_TEST

#define MANY_MAPPINGS 60000

/* Maps the current version MANY_MAPPINGS times, one byte each (offset 0 every time,
 * so that the kernel cannot merge them). */
static int hold_many_mappings(const void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "many-maps");
    int fd = open(held_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 2;
    for (int i = 0; i < MANY_MAPPINGS; i++) {
        if (mmap(NULL, 1, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
            return 3;
    }
    close(fd);
    return 0;
}

/*
 * A process with 60,000 mappings costs the census SHMRING_READERS_PROCESS_MAX lines
 * and is reported as too large to inspect, whatever it maps; the other readers are
 * counted as before.
 */
START_TEST(test_process_too_large)
{
    ck_assert_uint_eq(publish(), 1);
    snprintf(held_path, sizeof(held_path), "%s/shmring.%s/version.1", directory, ring);
    struct reader_process *reader = start_reader("reader-small");
    struct holder h = holder_start(hold_many_mappings, NULL);
    shmring_ring_readers_t result;
    census(&result);
    assert_one_current_reader(&result, reader->pid, "reader-small");
    ck_assert_uint_eq(result.uncounted_count, 1);
    assert_uncounted(&result.uncounted[0], h.pid, "many-maps", geteuid(),
                     SHMRING_READER_TOO_LARGE, 0, 0, 0);
    shmring_ring_readers_free(&result);
    holder_stop(&h);
}
END_TEST

static const struct test_fixture fixture = {setup, teardown, 0};

static Suite *ring_readers_suite(void)
{
    Suite *s = suite_create("ring_readers");
    TEST_CASE_WITH(s, "core", &fixture, test_idle_readers_hold_superseded_versions,
                   test_no_readers, test_directory_through_symbolic_link,
                   test_other_rings_are_not_counted, test_descriptor_holds_version,
                   test_foreign_mount_not_counted, test_process_too_large);
    TEST_CASE_WITH(s, "errors", &fixture, test_errors, test_hidden_processes_are_counted);
    return s;
}

int main(void)
{
    return test_run_suite(ring_readers_suite());
}
