#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The pid of the process that runs the suite; each test runs in a child of it. */
static pid_t runner_pid;

/* Removes every object of the rings this run's tests created: a test that fails
 * stops before its teardown, and must not leave /dev/shm dirty. */
static void remove_leftover_rings(void)
{
    char prefix[64];
    int len = snprintf(prefix, sizeof(prefix), "shmring.test-%ld-", (long)runner_pid);
    DIR *dir = opendir("/dev/shm");
    if (dir == NULL)
        return;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, prefix, (size_t)len) == 0) {
            char name[300];
            snprintf(name, sizeof(name), "/%s", entry->d_name);
            shm_unlink(name);
        }
    }
    closedir(dir);
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
    ck_assert_int_eq(shmring_snapshot_validate(buffer, *size), 0);
    return buffer;
}
