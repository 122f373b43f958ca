/*
 * Tests of lib/ring_dir.c: names of entries and version objects, whom a reader trusts,
 * and the checks of every open in a shared directory. Everything runs in a private
 * directory under /tmp.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ring_dir_internal.h"
#include "test_support.h"

/* ---- names ---- */

START_TEST(directory_paths)
{
    ck_assert_str_eq(shmring__directory(NULL), "/dev/shm");
    const char *tmp = "/tmp";
    ck_assert_ptr_eq(shmring__directory(tmp), tmp);
    ck_assert_ptr_null(shmring__directory(""));
    ck_assert_ptr_null(shmring__directory("tmp"));
    ck_assert_ptr_null(shmring__directory("./tmp"));
    char path[SHMRING_DIRECTORY_MAX + 2];
    memset(path, 'd', sizeof(path) - 1);
    path[0] = '/';
    path[SHMRING_DIRECTORY_MAX] = '\0';
    ck_assert_ptr_eq(shmring__directory(path), path);
    path[SHMRING_DIRECTORY_MAX] = 'd';
    path[SHMRING_DIRECTORY_MAX + 1] = '\0';
    ck_assert_ptr_null(shmring__directory(path));
}
END_TEST

START_TEST(entry_and_version_names)
{
    char entry[ENTRY_NAME_MAX];
    shmring__ring_entry("web", entry);
    ck_assert_str_eq(entry, "shmring.web");
    char name[FILE_NAME_MAX];
    shmring__version_file(0, name);
    ck_assert_str_eq(name, "version.0");
    shmring__version_file(7, name);
    ck_assert_str_eq(name, "version.7");
    shmring__version_file(UINT64_MAX, name);
    ck_assert_str_eq(name, "version.18446744073709551615");
}
END_TEST

START_TEST(version_file_names)
{
    static const struct {
        const char *entry;
        bool accepted;
        uint64_t generation;
    } cases[] = {
        {"version.0", true, 0},
        {"version.1", true, 1},
        {"version.10", true, 10},
        {"version.4294967296", true, UINT64_C(4294967296)},
        {"version.18446744073709551615", true, UINT64_MAX},
        {"version.18446744073709551616", false, 0}, /* 2^64 */
        {"version.99999999999999999999", false, 0},
        {"version.100000000000000000000", false, 0},
        {"version.01", false, 0},
        {"version.00", false, 0},
        {"version.007", false, 0},
        {"version.", false, 0},
        {"version", false, 0},
        {"version.-1", false, 0},
        {"version.+1", false, 0},
        {"version. 1", false, 0},
        {"version.1 ", false, 0},
        {"version.1a", false, 0},
        {"version.0x1", false, 0},
        {"version.1.2", false, 0},
        {"Version.1", false, 0},
        {"xversion.1", false, 0},
        {"versions.1", false, 0},
        {"control", false, 0},
        {"lock", false, 0},
        {"", false, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t generation = UINT64_C(12345);
        bool accepted = shmring__is_version_file(cases[i].entry, &generation);
        ck_assert_msg(accepted == cases[i].accepted, "'%s'", cases[i].entry);
        if (accepted)
            ck_assert_uint_eq(generation, cases[i].generation);
    }
}
END_TEST

START_TEST(hidden_entry_names)
{
    char entry[ENTRY_NAME_MAX];
    ck_assert_int_eq(shmring__hidden_entry(CREATING_PREFIX, "web", entry), 0);
    char start[64];
    int n = snprintf(start, sizeof(start), ".shmring-new.web.%ld.", (long)getpid());
    ck_assert_int_eq(strncmp(entry, start, (size_t)n), 0);
    ck_assert_uint_eq(strlen(entry + n), 16);
    ck_assert_uint_eq(strspn(entry + n, "0123456789abcdef"), 16);
    ck_assert_int_eq(shmring__hidden_entry(REMOVING_PREFIX, "web", entry), 0);
    ck_assert_int_eq(strncmp(entry, ".shmring-gone.web.", 18), 0);
}
END_TEST

START_TEST(owners_trusted)
{
    uid_t self = geteuid();
    uid_t stranger = self == 12345 ? 12346 : 12345;
    ck_assert(shmring__owner_trusted(0, OWNER_ANY));
    ck_assert(shmring__owner_trusted(self, OWNER_ANY));
    ck_assert(!shmring__owner_trusted(stranger, OWNER_ANY));
    ck_assert(shmring__owner_trusted(stranger, stranger));
    ck_assert(!shmring__owner_trusted(stranger, stranger + 1));
}
END_TEST

/* ---- opening in a shared directory ---- */

static char directory[TEST_PATH_MAX];

/* The path of NAME in the private directory: a static buffer. */
static const char *in_directory(const char *name)
{
    static char path[TEST_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", directory, name);
    return path;
}

static void setup(void)
{
    test_private_directory("ring_dir", directory);
}

static void teardown(void)
{
    test_remove_tree(directory);
}

START_TEST(base_directory_checks)
{
    int fd = -1;
    ck_assert_int_eq(shmring__base_open(directory, OWNER_ANY, &fd), 0);
    ck_assert_int_ge(fd, 0);
    close(fd);
    /* Writable by others without the sticky bit: they could remove our rings. */
    static const struct {
        mode_t mode;
        int expected;
    } modes[] = {{0700, 0},
                 {0755, 0},
                 {0775, SHMRING_EBASEDIR},
                 {0757, SHMRING_EBASEDIR},
                 {0777, SHMRING_EBASEDIR},
                 {01777, 0},
                 {01775, 0}};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        ck_assert_int_eq(chmod(directory, modes[i].mode), 0);
        fd = -1;
        ck_assert_msg(shmring__base_open(directory, OWNER_ANY, &fd) == modes[i].expected,
                      "mode %04o", (unsigned)modes[i].mode);
        if (modes[i].expected == 0)
            close(fd);
        else
            ck_assert_int_eq(fd, -1);
    }
    ck_assert_int_eq(chmod(directory, 0755), 0);
    ck_assert_int_eq(shmring__base_open("relative", OWNER_ANY, &fd), SHMRING_EBADDIR);
    /* Each check has its own code, so that a caller can say what is wrong with the
     * directory instead of blaming the ring. */
    ck_assert_int_eq(shmring__base_open(in_directory("missing"), OWNER_ANY, &fd),
                     SHMRING_ENODIR);
    test_make_file(in_directory("file"), 0644);
    ck_assert_int_eq(shmring__base_open(in_directory("file"), OWNER_ANY, &fd), -ENOTDIR);
    /* Root's, mode 0555, not writable by others: only its filesystem tells. */
    ck_assert_int_eq(shmring__base_open("/proc", OWNER_ANY, &fd), SHMRING_ENOTRINGDIR);
    ck_assert_int_eq(shmring__base_open("/sys", OWNER_ANY, &fd), SHMRING_ENOTRINGDIR);
    ck_assert_int_eq(shmring__base_open("/dev/shm", OWNER_ANY, &fd), 0);
    close(fd);
    if (geteuid() == 0) {
        /* Another user's directory, even one only its owner can write. */
        ck_assert_int_eq(chown(directory, 65534, 65534), 0);
        fd = -1;
        ck_assert_int_eq(shmring__base_open(directory, OWNER_ANY, &fd),
                         SHMRING_EBASEOWNER);
        ck_assert_int_eq(fd, -1);
        ck_assert_int_eq(shmring__base_open(directory, 65534, &fd), 0);
        close(fd);
        ck_assert_int_eq(chown(directory, 0, 0), 0);
    }
}
END_TEST

START_TEST(ring_directory_kinds)
{
    int base_fd;
    ck_assert_int_eq(shmring__base_open(directory, OWNER_ANY, &base_fd), 0);
    int fd = -1;
    struct stat st;
    ck_assert_int_eq(shmring__ring_dir_open(base_fd, "none", &fd, &st), SHMRING_ENOENT);

    test_make_file(in_directory("shmring.file"), 0644);
    ck_assert_int_eq(shmring__ring_dir_open(base_fd, "file", &fd, &st), SHMRING_ENOTRING);
    ck_assert_int_eq(mkfifo(in_directory("shmring.fifo"), 0644), 0);
    ck_assert_int_eq(shmring__ring_dir_open(base_fd, "fifo", &fd, &st), SHMRING_ENOTRING);
    test_make_socket(in_directory("shmring.socket"));
    ck_assert_int_eq(shmring__ring_dir_open(base_fd, "socket", &fd, &st),
                     SHMRING_ENOTRING);
    /* A link to a good directory is still not a ring. */
    test_make_directory(in_directory("target"), 0755);
    ck_assert_int_eq(symlink("target", in_directory("shmring.link")), 0);
    ck_assert_int_eq(shmring__ring_dir_open(base_fd, "link", &fd, &st), SHMRING_ENOTRING);
    ck_assert_int_eq(fd, -1);

    static const struct {
        const char *ring;
        mode_t mode;
        int expected;
    } dirs[] = {{"d700", 0700, 0},
                {"d755", 0755, 0},
                {"d750", 0750, 0},
                {"d775", 0775, SHMRING_EOWNER},
                {"d757", 0757, SHMRING_EOWNER},
                {"d1777", 01777, SHMRING_EOWNER}};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        char entry[64];
        snprintf(entry, sizeof(entry), "shmring.%s", dirs[i].ring);
        test_make_directory(in_directory(entry), dirs[i].mode);
        fd = -1;
        ck_assert_msg(shmring__ring_dir_open(base_fd, dirs[i].ring, &fd, &st) ==
                          dirs[i].expected,
                      "%s", dirs[i].ring);
        if (dirs[i].expected == 0) {
            ck_assert_int_ge(fd, 0);
            ck_assert_uint_eq(st.st_mode & 07777, dirs[i].mode);
            ck_assert_uint_eq(st.st_uid, geteuid());
            close(fd);
        } else {
            ck_assert_int_eq(fd, -1);
        }
    }
    close(base_fd);
}
END_TEST

START_TEST(ring_directory_trusted_open)
{
    test_make_directory(in_directory("shmring.mine"), 0755);
    int fd = -1;
    struct stat st;
    ck_assert_int_eq(
        shmring__ring_dir_open_trusted(directory, "mine", OWNER_ANY, OWNER_ANY, &fd, &st),
        0);
    close(fd);
    ck_assert_int_eq(
        shmring__ring_dir_open_trusted(directory, "mine", OWNER_ANY, geteuid(), &fd, &st),
        0);
    close(fd);
    /* A ring that must belong to someone else. */
    uid_t stranger = geteuid() == 12345 ? 12346 : 12345;
    fd = -1;
    ck_assert_int_eq(
        shmring__ring_dir_open_trusted(directory, "mine", OWNER_ANY, stranger, &fd, &st),
        SHMRING_EOWNER);
    ck_assert_int_eq(fd, -1);
    ck_assert_int_eq(
        shmring__ring_dir_open_trusted(directory, "none", OWNER_ANY, OWNER_ANY, &fd, &st),
        SHMRING_ENOENT);
    ck_assert_int_eq(shmring__ring_dir_open_trusted("relative", "mine", OWNER_ANY,
                                                    OWNER_ANY, &fd, &st),
                     SHMRING_EBADDIR);
    if (geteuid() == 0) {
        /* Root can hand the directory to another user: then it is not trusted. */
        ck_assert_int_eq(chown(in_directory("shmring.mine"), 65534, 65534), 0);
        ck_assert_int_eq(shmring__ring_dir_open_trusted(directory, "mine", OWNER_ANY,
                                                        OWNER_ANY, &fd, &st),
                         SHMRING_EOWNER);
        ck_assert_int_eq(
            shmring__ring_dir_open_trusted(directory, "mine", 65534, OWNER_ANY, &fd, &st),
            0);
        close(fd);
    }
}
END_TEST

START_TEST(object_kinds)
{
    test_make_directory(in_directory("ring"), 0755);
    int dir_fd = open(in_directory("ring"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(dir_fd, 0);
    struct stat dir_st;
    ck_assert_int_eq(fstat(dir_fd, &dir_st), 0);

    test_make_file(in_directory("ring/file644"), 0644);
    test_make_file(in_directory("ring/file444"), 0444);
    test_make_file(in_directory("ring/file600"), 0600);
    test_make_file(in_directory("ring/file664"), 0664);
    test_make_file(in_directory("ring/file646"), 0646);
    test_make_directory(in_directory("ring/dir"), 0755);
    ck_assert_int_eq(mkfifo(in_directory("ring/fifo"), 0644), 0);
    ck_assert_int_eq(symlink("file644", in_directory("ring/link")), 0);

    static const struct {
        const char *name;
        int expected;
    } cases[] = {{"file644", 0},
                 {"file444", 0},
                 {"file600", 0},
                 {"file664", SHMRING_EOWNER},
                 {"file646", SHMRING_EOWNER},
                 {"dir", SHMRING_ENOTRING},
                 {"fifo", SHMRING_ENOTRING},
                 {"link", SHMRING_ENOTRING},
                 {"missing", SHMRING_ENOENT}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int fd = -1;
        struct stat st;
        ck_assert_msg(shmring__object_open(dir_fd, &dir_st, cases[i].name, O_RDONLY, &fd,
                                           &st) == cases[i].expected,
                      "%s", cases[i].name);
        if (cases[i].expected == 0) {
            ck_assert_int_ge(fd, 0);
            ck_assert(S_ISREG(st.st_mode));
            close(fd);
        } else {
            ck_assert_int_eq(fd, -1);
        }
    }
    /* A file of another owner than the directory's. */
    struct stat other = dir_st;
    other.st_uid = dir_st.st_uid + 1;
    int fd = -1;
    struct stat st;
    ck_assert_int_eq(shmring__object_open(dir_fd, &other, "file644", O_RDONLY, &fd, &st),
                     SHMRING_EOWNER);
    ck_assert_int_eq(fd, -1);
    close(dir_fd);
}
END_TEST

START_TEST(entry_identity)
{
    test_make_directory(in_directory("shmring.one"), 0755);
    test_make_directory(in_directory("shmring.two"), 0755);
    int base_fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(base_fd, 0);
    struct stat one;
    ck_assert_int_eq(stat(in_directory("shmring.one"), &one), 0);
    ck_assert(shmring__entry_is(base_fd, "shmring.one", &one));
    ck_assert(!shmring__entry_is(base_fd, "shmring.two", &one));
    ck_assert(!shmring__entry_is(base_fd, "shmring.none", &one));
    close(base_fd);
}
END_TEST

static const struct test_fixture fixture = {setup, teardown, 0};

static Suite *ring_dir_suite(void)
{
    Suite *s = suite_create("ring_dir");
    TEST_CASE(s, "names", directory_paths, entry_and_version_names, version_file_names,
              hidden_entry_names, owners_trusted);
    TEST_CASE_WITH(s, "opening", &fixture, base_directory_checks, ring_directory_kinds,
                   ring_directory_trusted_open, object_kinds, entry_identity);
    return s;
}

int main(void)
{
    return test_run_suite(ring_dir_suite());
}
