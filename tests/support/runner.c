/* Running a suite in fork mode, its cases, ring names, and cleaning up after a run. */
#include "test_support.h"
#include "support_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The pid of the process that runs the suite; each test runs in a child of it. */
static pid_t runner_pid;

/* Removes each entry of DIRECTORY whose name starts with PREFIX (and if it is a
 * directory, what it holds). */
static void remove_prefixed(const char *directory, const char *prefix)
{
    DIR *dir = opendir(directory);
    if (dir == NULL)
        return;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (strncmp(entry->d_name, prefix, strlen(prefix)) == 0)
            test_remove_tree(test_fmt("%s/%s", directory, entry->d_name));
    closedir(dir);
}

/* Removes every object of the rings this run's tests created ("shmring.test-PID-*",
 * ".shmring-new.test-PID-*", ".shmring-gone.test-PID-*") and the private directories
 * they made in /tmp: a test that fails stops before its teardown, and must not leave
 * /dev/shm dirty. */
static void remove_leftovers(void)
{
    static const char *const kinds[] = {"shmring.", ".shmring-new.", ".shmring-gone."};
    for (size_t i = 0; i < COUNT_OF(kinds); i++)
        remove_prefixed(SHMRING_DEFAULT_DIRECTORY,
                        test_fmt("%stest-%ld-", kinds[i], (long)runner_pid));
    remove_prefixed("/tmp", test_fmt("shmring-check-%ld-", (long)runner_pid));
}

TCase *test_add_case(Suite *suite, const char *name, const struct test_fixture *fixture,
                     const TTest *const *tests, size_t count)
{
    TCase *tcase = tcase_create(name);
    if (fixture != NULL && (fixture->setup != NULL || fixture->teardown != NULL))
        tcase_add_checked_fixture(tcase, fixture->setup, fixture->teardown);
    if (fixture != NULL && fixture->timeout > 0)
        tcase_set_timeout(tcase, fixture->timeout);
    for (size_t i = 0; i < count; i++)
        tcase_add_test(tcase, tests[i]);
    suite_add_tcase(suite, tcase);
    return tcase;
}

int test_run_suite(Suite *suite)
{
    runner_pid = getpid();
    SRunner *runner = srunner_create(suite);
    srunner_set_fork_status(runner, CK_FORK);
    /* CK_ENV: CK_NORMAL unless CK_VERBOSITY says otherwise ("verbose" lists each
     * test). */
    srunner_run_all(runner, CK_ENV);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    remove_leftovers();
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

const char *test__private_prefix(void)
{
    return test_fmt("shmring-check-%ld-", (long)runner_pid);
}

const char *test_fmt(const char *format, ...)
{
    static char buffers[8][8192];
    static unsigned next;
    char *buffer = buffers[next++ % 8];
    va_list ap;
    va_start(ap, format);
    vsnprintf(buffer, sizeof(buffers[0]), format, ap);
    va_end(ap);
    return buffer;
}
