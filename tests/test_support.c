#include "test_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pid of the process that runs the suite; each test runs in a child of it. */
static pid_t runner_pid;

/* Removes DIRECTORY's entry NAME and, if it is a directory, what it holds (a ring's
 * directory holds files, unless a test planted something else). */
static void remove_entry(int directory, const char *name)
{
    int fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        DIR *dir = fdopendir(fd);
        struct dirent *entry;
        while (dir != NULL && (entry = readdir(dir)) != NULL)
            if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
                remove_entry(fd, entry->d_name);
        if (dir != NULL)
            closedir(dir);
        else
            close(fd);
        unlinkat(directory, name, AT_REMOVEDIR);
    } else {
        unlinkat(directory, name, 0);
    }
}

/* Whether the default ring directory's entry NAME belongs to a ring whose name starts
 * with PREFIX: "shmring.RING", ".shmring-new.RING.*" or ".shmring-gone.RING.*". */
static bool entry_of(const char *name, const char *prefix)
{
    static const char *const kinds[] = {"shmring.", ".shmring-new.", ".shmring-gone."};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t len = strlen(kinds[i]);
        if (strncmp(name, kinds[i], len) == 0 &&
            strncmp(name + len, prefix, strlen(prefix)) == 0)
            return true;
    }
    return false;
}

/* Removes every object of the rings this run's tests created: a test that fails
 * stops before its teardown, and must not leave /dev/shm dirty. */
static void remove_leftover_rings(void)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "test-%ld-", (long)runner_pid);
    int fd = open(SHMRING_DEFAULT_DIRECTORY, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    if (dir == NULL)
        return;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (entry_of(entry->d_name, prefix))
            remove_entry(fd, entry->d_name);
    closedir(dir);
}

/* The prefix of the private directories of this run in /tmp. */
static void private_prefix(char prefix[64])
{
    snprintf(prefix, 64, "shmring-check-%ld-", (long)runner_pid);
}

/* Removes the private directories this run's tests left in /tmp. */
static void remove_private_directories(void)
{
    char prefix[64];
    private_prefix(prefix);
    int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    if (dir == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (strncmp(entry->d_name, prefix, strlen(prefix)) == 0)
            remove_entry(fd, entry->d_name);
    closedir(dir);
}

void test_private_directory(const char *tag, char path[TEST_PATH_MAX])
{
    char prefix[64];
    private_prefix(prefix);
    int n = snprintf(path, TEST_PATH_MAX, "/tmp/%s%s.XXXXXX", prefix, tag);
    ck_assert(n > 0 && n < TEST_PATH_MAX);
    ck_assert_ptr_nonnull(mkdtemp(path));
    ck_assert_int_eq(chmod(path, 0755), 0);
}

void test_remove_tree(const char *path)
{
    remove_entry(AT_FDCWD, path);
}

const char *test_ring_path(const char *ring)
{
    static char path[512];
    snprintf(path, sizeof(path), SHMRING_DEFAULT_DIRECTORY "/shmring.%s", ring);
    return path;
}

const char *test_object_path(const char *ring, const char *name)
{
    static char path[600];
    snprintf(path, sizeof(path), SHMRING_DEFAULT_DIRECTORY "/shmring.%s/%s", ring, name);
    return path;
}

/* Counts the entries of DIRECTORY for which KEEP(NAME, RING) holds. */
static int count_entries(const char *directory, bool (*keep)(const char *, const char *),
                         const char *ring)
{
    DIR *dir = opendir(directory);
    if (dir == NULL)
        return 0;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (keep(entry->d_name, ring))
            count++;
    closedir(dir);
    return count;
}

/* Whether NAME is RING's directory or one of its hidden directories (exactly RING,
 * not a ring whose name merely starts with it). */
static bool entry_of_ring(const char *name, const char *ring)
{
    char exact[300];
    snprintf(exact, sizeof(exact), "shmring.%s", ring);
    if (strcmp(name, exact) == 0)
        return true;
    char hidden[300];
    snprintf(hidden, sizeof(hidden), "%s.", ring);
    return (strncmp(name, ".shmring-new.", 13) == 0 &&
            strncmp(name + 13, hidden, strlen(hidden)) == 0) ||
           (strncmp(name, ".shmring-gone.", 14) == 0 &&
            strncmp(name + 14, hidden, strlen(hidden)) == 0);
}

static bool is_file(const char *name, const char *ring)
{
    (void)ring;
    return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

int test_ring_entries(const char *ring)
{
    return count_entries(SHMRING_DEFAULT_DIRECTORY, entry_of_ring, ring);
}

int test_ring_files(const char *ring)
{
    char path[512];
    snprintf(path, sizeof(path), "%s", test_ring_path(ring));
    return count_entries(path, is_file, ring);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

const char *test_listing(const char *directory)
{
    static char listing[4096];
    listing[0] = '\0';
    DIR *dir = opendir(directory);
    if (dir == NULL)
        return listing;
    char *names[64] = {0};
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        ck_assert_uint_lt(count, sizeof(names) / sizeof(names[0]));
        names[count] = strdup(entry->d_name);
        ck_assert_ptr_nonnull(names[count]);
        count++;
    }
    closedir(dir);
    qsort(names, count, sizeof(names[0]), compare_names);
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        int n = snprintf(listing + used, sizeof(listing) - used, "%s%s", i ? "," : "",
                         names[i]);
        ck_assert(n > 0 && (size_t)n < sizeof(listing) - used);
        used += (size_t)n;
        free(names[i]);
    }
    return listing;
}

const char *test_ring_listing(const char *ring)
{
    char path[512];
    snprintf(path, sizeof(path), "%s", test_ring_path(ring));
    return test_listing(path);
}

const char *test_hidden_path(const char *ring, const char *prefix)
{
    static char path[600];
    char start[300];
    int len = snprintf(start, sizeof(start), "%s%s.", prefix, ring);
    DIR *dir = opendir(SHMRING_DEFAULT_DIRECTORY);
    ck_assert_ptr_nonnull(dir);
    int found = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, start, (size_t)len) != 0)
            continue;
        found++;
        snprintf(path, sizeof(path), SHMRING_DEFAULT_DIRECTORY "/%s", entry->d_name);
    }
    closedir(dir);
    ck_assert_msg(found <= 1, "%d entries start with %s", found, start);
    return found == 1 ? path : NULL;
}

void test_add_case(Suite *suite, const char *name, const TTest *const *tests,
                   size_t count)
{
    TCase *tcase = tcase_create(name);
    for (size_t i = 0; i < count; i++)
        tcase_add_test(tcase, tests[i]);
    suite_add_tcase(suite, tcase);
}

int test_run_suite(Suite *suite)
{
    runner_pid = getpid();
    SRunner *runner = srunner_create(suite);
    srunner_set_fork_status(runner, CK_FORK);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    remove_leftover_rings();
    remove_private_directories();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

const char *test_ring_name(const char *tag)
{
    static char name[SHMRING_RING_NAME_MAX + 1];
    static unsigned counter;
    snprintf(name, sizeof(name), "test-%ld-%ld-%s-%u", (long)runner_pid, (long)getpid(),
             tag, counter++);
    return name;
}

uint64_t test_random(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

size_t test_key(char *buf, uint64_t i)
{
    return (size_t)snprintf(buf, 32, "key:%llu", (unsigned long long)i);
}

shmring_nodeset_t *test_nodeset(size_t count, shmring_algorithm_t algorithm,
                                shmring_hash_t hash)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = algorithm;
    params.hash = hash;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    for (size_t i = 0; i < count; i++) {
        char name[32], address[48];
        snprintf(name, sizeof(name), "node-%zu", i);
        snprintf(address, sizeof(address), "10.0.%zu.%zu:11211", i / 256, i % 256);
        ck_assert_int_eq(
            shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL), 0);
    }
    return set;
}

void *test_build(const shmring_nodeset_t *set, size_t *size)
{
    void *buffer = NULL;
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, size), 0);
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_snapshot_new(buffer, *size, &snapshot), 0);
    shmring_snapshot_free(snapshot);
    return buffer;
}

shmring_snapshot_t *test_snapshot(const shmring_nodeset_t *set)
{
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_nodeset_snapshot(set, &snapshot), 0);
    return snapshot;
}

shmring_nodeset_t *test_small_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t table_size)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {algorithm, hash, 4, table_size};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "alpha", "10.0.0.1:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "beta", "10.0.0.2:11212", 2, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "gamma", "10.0.0.3:11211", 1, SHMRING_STATE_DOWN, NULL),
        0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "delta", "10.0.0.4:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    return set;
}

char *test_import_json(shmring_import_format_t format, const char *text,
                       const char *section)
{
    shmring_nodeset_t *set = NULL;
    shmring_import_error_t error;
    memset(&error, 0, sizeof(error));
    int rc = shmring_nodeset_import(format, text, strlen(text), section, &set, &error);
    ck_assert_msg(rc == 0, "import failed (%d): line %d: %s", rc, error.line, error.text);
    char *json = NULL;
    ck_assert_int_eq(shmring_nodeset_to_json(set, &json), 0);
    shmring_nodeset_free(set);
    return json;
}

void test_import_fails(shmring_import_format_t format, const char *text,
                       const char *section, int line, const char *message)
{
    /* A failed import leaves *out as it was. */
    shmring_nodeset_t *untouched = (shmring_nodeset_t *)(void *)&untouched;
    shmring_nodeset_t *set = untouched;
    shmring_import_error_t error;
    memset(&error, 0, sizeof(error));
    ck_assert_int_eq(
        shmring_nodeset_import(format, text, strlen(text), section, &set, &error),
        SHMRING_EINVAL);
    ck_assert_ptr_eq(set, untouched);
    ck_assert_msg(error.line == line && strcmp(error.text, message) == 0,
                  "got line %d: \"%s\"\nwant line %d: \"%s\"", error.line, error.text,
                  line, message);
}
