/* What the files of tests/support/ share among themselves, and no test program uses. */
#ifndef SHMRING_TEST_SUPPORT_INTERNAL_H
#define SHMRING_TEST_SUPPORT_INTERNAL_H

#include <stdbool.h>

/* "shmring-check-<runner pid>-": the names of this run's private directories in /tmp
 * start with it (runner.c removes them after the run). A test_fmt() buffer. */
const char *test__private_prefix(void);

/* The names in DIRECTORY for which KEEP(NAME, RING) holds, or all of them (without
 * "." and "..") when KEEP is NULL, sorted and joined with commas: test_listing()'s
 * text, in its buffer. */
const char *test__list(const char *directory, bool (*keep)(const char *, const char *),
                       const char *ring);

#endif
