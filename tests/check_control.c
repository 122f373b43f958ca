/*
 * Tests of lib/control.c: the ring name rule, and reading a ring's control object
 * and version objects with the checks every reader makes (mapping and validating a
 * version, or reading its header alone), and removing stale versions. Everything
 * runs in a private directory under /tmp.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_internal.h"
#include "test_support.h"

static char directory[TEST_PATH_MAX];

static void setup(void)
{
    test_private_directory("control", directory);
}

static void teardown(void)
{
    test_remove_tree(directory);
}

/* The path of NAME in the ring "r"'s directory: a static buffer. */
static const char *in_ring(const char *name)
{
    static char path[TEST_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/shmring.r/%s", directory, name);
    return path;
}

/* Creates ring "r" in the private directory, publishes 3 nodes, and opens its
 * directory as a reader: *dir_fd and *dir_st. */
static void make_ring(int *dir_fd, struct stat *dir_st)
{
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = directory;
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open("r", SHMRING_WRITER_CREATE, &options, &w), 0);
    shmring_nodeset_t *set = test_nodeset(3, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    shmring_nodeset_free(set);
    shmring_writer_close(w);
    ck_assert_int_eq(shmring__ring_dir_open_trusted(directory, "r", OWNER_ANY, OWNER_ANY,
                                                    dir_fd, dir_st),
                     0);
}

/* Makes FILE in the ring's directory writable (0644), or gives it MODE back. */
static void set_mode(const char *file, mode_t mode)
{
    ck_assert_int_eq(chmod(in_ring(file), mode), 0);
}

/* ---- names ---- */

START_TEST(ring_name_rule)
{
    static const char *const good[] = {
        "a",   "web", "A-Z_0.9-x", "v1.2a", "x.5a", "a.1.b", "a-5", "a5",    "5",
        "123", ".a",  "...",       "a.",    "a..",  "_",     "-",   "a.b-1", "a.b_2",
    };
    static const char *const bad[] = {
        "",    ".",         "..",          "x.5",  "x.05", "a.0",  ".5",
        "..5", "a.b.12345", "a/b",         "a b",  "a\n",  "a:b",  "a+b",
        "a@b", "~",         "caf\xc3\xa9", "a\\b", "*",    "a\tb",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ck_assert_msg(shmring_ring_name_check(good[i]) == 0, "'%s' refused", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(shmring_ring_name_check(bad[i]) == SHMRING_EBADRING,
                      "'%s' accepted", bad[i]);
    ck_assert_int_eq(shmring_ring_name_check(NULL), SHMRING_EBADRING);
    char name[SHMRING_RING_NAME_MAX + 2];
    memset(name, 'r', SHMRING_RING_NAME_MAX);
    name[SHMRING_RING_NAME_MAX] = '\0';
    ck_assert_int_eq(shmring_ring_name_check(name), 0);
    name[SHMRING_RING_NAME_MAX] = 'r';
    name[SHMRING_RING_NAME_MAX + 1] = '\0';
    ck_assert_int_eq(shmring_ring_name_check(name), SHMRING_EBADRING);
    ck_assert_uint_eq(SHMRING_RING_NAME_MAX, 200);
}
END_TEST

/* ---- version objects ---- */

START_TEST(version_mapped_and_header_read)
{
    int dir_fd;
    struct stat dir_st, st;
    make_ring(&dir_fd, &dir_st);
    const void *map;
    size_t size;
    ck_assert_int_eq(shmring__version_map(dir_fd, &dir_st, 1, &map, &size), 0);
    ck_assert_int_eq(stat(in_ring("version.1"), &st), 0);
    ck_assert_uint_eq(size, (uint64_t)st.st_size);
    struct snapshot_header header;
    ck_assert_int_eq(shmring__version_header_read(dir_fd, &dir_st, 1, &header), 0);
    ck_assert_mem_eq(&header, map, sizeof(header));
    ck_assert_uint_eq(header.node_count, 3);
    munmap((void *)map, size);

    ck_assert_int_eq(shmring__version_map(dir_fd, &dir_st, 2, &map, &size),
                     SHMRING_ENOENT);
    ck_assert_int_eq(shmring__version_header_read(dir_fd, &dir_st, 2, &header),
                     SHMRING_ENOENT);
    close(dir_fd);
}
END_TEST

/* Both ways in refuse what a reader must not trust; only the whole mapping sees
 * damage past the header. */
START_TEST(version_refusals)
{
    int dir_fd;
    struct stat dir_st;
    make_ring(&dir_fd, &dir_st);
    const void *map;
    size_t size;
    struct snapshot_header header;

    set_mode("version.1", 0644);
    ck_assert_int_eq(shmring__version_map(dir_fd, &dir_st, 1, &map, &size),
                     SHMRING_EOWNER);
    ck_assert_int_eq(shmring__version_header_read(dir_fd, &dir_st, 1, &header),
                     SHMRING_EOWNER);
    struct stat st;
    ck_assert_int_eq(stat(in_ring("version.1"), &st), 0);
    int fd = open(in_ring("version.1"), O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, "\xff", 1, st.st_size - 1), 1);
    close(fd);
    set_mode("version.1", 0444);
    ck_assert_int_eq(shmring__version_map(dir_fd, &dir_st, 1, &map, &size),
                     SHMRING_ECHECKSUM);
    ck_assert_int_eq(shmring__version_header_read(dir_fd, &dir_st, 1, &header), 0);

    set_mode("version.1", 0644);
    ck_assert_int_eq(truncate(in_ring("version.1"), 255), 0);
    set_mode("version.1", 0444);
    ck_assert_int_eq(shmring__version_map(dir_fd, &dir_st, 1, &map, &size),
                     SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring__version_header_read(dir_fd, &dir_st, 1, &header),
                     SHMRING_ETRUNCATED);
    close(dir_fd);
}
END_TEST

/* ---- control objects ---- */

START_TEST(control_refusals)
{
    int dir_fd;
    struct stat dir_st, st;
    make_ring(&dir_fd, &dir_st);
    const struct control_block *control;
    ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st), 0);
    ck_assert_int_eq(shmring__control_check(control), 0);
    ck_assert_uint_eq(control->generation, 1);
    munmap((void *)control, CONTROL_SIZE);

    int fd = open(in_ring("control"), O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, "x", 1, 0), 1); /* the magic */
    ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st),
                     SHMRING_ECONTROL);
    ck_assert_int_eq(ftruncate(fd, CONTROL_SIZE - 1), 0);
    ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st),
                     SHMRING_ECONTROL);
    close(fd);
    set_mode("control", 0666);
    ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st),
                     SHMRING_EOWNER);
    close(dir_fd);
}
END_TEST

/* A newer release's control object (docs/upgrading.md): a later format is
 * SHMRING_ENEWFORMAT, a feature bit this release does not know SHMRING_EFEATURE, an
 * earlier format (1, flat objects) SHMRING_ECONTROL; the writer refuses them too. */
START_TEST(control_of_a_newer_release)
{
    int dir_fd;
    struct stat dir_st, st;
    make_ring(&dir_fd, &dir_st);
    const struct control_block *control;
    int fd = open(in_ring("control"), O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    uint32_t value = CONTROL_FORMAT_VERSION + 1;
    off_t format_at = offsetof(struct control_block, format_version);
    ck_assert_int_eq(pwrite(fd, &value, 4, format_at), 4);
    ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st),
                     SHMRING_ENEWFORMAT);
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = directory;
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open("r", 0, &options, &w), SHMRING_ENEWFORMAT);
    value = 1;
    ck_assert_int_eq(pwrite(fd, &value, 4, format_at), 4);
    ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st),
                     SHMRING_ECONTROL);
    value = CONTROL_FORMAT_VERSION;
    ck_assert_int_eq(pwrite(fd, &value, 4, format_at), 4);
    for (unsigned bit = 0; bit < 32; bit++) {
        value = UINT32_C(1) << bit;
        ck_assert_int_eq(pwrite(fd, &value, 4, offsetof(struct control_block, features)),
                         4);
        ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st),
                         (CONTROL_FEATURES_KNOWN & value) ? 0 : SHMRING_EFEATURE);
    }
    ck_assert_int_eq(shmring_writer_open("r", 0, &options, &w), SHMRING_EFEATURE);
    value = 0;
    ck_assert_int_eq(pwrite(fd, &value, 4, offsetof(struct control_block, features)), 4);
    ck_assert_int_eq(shmring__control_map(dir_fd, &dir_st, &control, &st), 0);
    munmap((void *)control, CONTROL_SIZE);
    close(fd);
    close(dir_fd);
}
END_TEST

/* Stale versions go; the kept one and anything that is not a version stay. */
START_TEST(stale_versions_unlinked)
{
    int dir_fd;
    struct stat dir_st;
    make_ring(&dir_fd, &dir_st);
    static const char *const made[] = {"version.5", "version.07", "version.x"};
    for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
        int fd = open(in_ring(made[i]), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    ck_assert_int_eq(shmring__unlink_versions(dir_fd, 1), 0);
    ck_assert_str_eq(test_listing(in_ring("")),
                     "control,lock,version.07,version.1,version.x");
    ck_assert_int_eq(shmring__unlink_versions(dir_fd, 0), 0);
    ck_assert_str_eq(test_listing(in_ring("")), "control,lock,version.07,version.x");
    close(dir_fd);
}
END_TEST

static const struct test_fixture fixture = {setup, teardown, 0};

static Suite *control_suite(void)
{
    Suite *s = suite_create("control");
    TEST_CASE(s, "names", ring_name_rule);
    TEST_CASE_WITH(s, "objects", &fixture, version_mapped_and_header_read,
                   version_refusals, control_refusals, control_of_a_newer_release,
                   stale_versions_unlinked);
    return s;
}

int main(void)
{
    return test_run_suite(control_suite());
}
