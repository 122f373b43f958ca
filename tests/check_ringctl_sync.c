/*
 * End-to-end tests of ringctl (tools/ringctl/), the sync helper: ringctl finds
 * ringctl-sync (beside it, relocated, or not at all) and runs it in its own process, and
 * only the helper loads sync's libraries. Each test runs the built binary (TEST_RINGCTL)
 * with fork and exec, captures its stdout, stderr and exit status, and checks them
 * exactly, together with what the library then reads from the ring.
 */
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

#include <jansson.h>

#include "ringctl_fixture.h"

/* In a build with sync (SHMRING_SYNC), tests/CMakeLists.txt names the sync helper and
 * a ringctl built to look for it where nothing is. */
#if defined(RINGCTL_SYNC_PATH) &&                                                        \
    (!defined(RINGCTL_SYNC_HELPER_FROM_BINDIR) || !defined(RINGCTL_NOHELPER_PATH) ||     \
     !defined(RINGCTL_NOHELPER_SYNC_HELPER))
#error "tests/CMakeLists.txt names the sync helper but not the ringctl built without one"
#endif

/* ---- The sync helper ------------------------------------------------------------ */

#ifdef RINGCTL_SYNC_PATH

/* Where a test puts copies of ringctl and its helper (empty: nowhere yet). */
static char helper_root[TEST_PATH_MAX];

static void helper_teardown(void)
{
    if (helper_root[0] != '\0')
        test_remove_tree(helper_root);
    helper_root[0] = '\0';
    ringctl_teardown();
}

/* Copies the file FROM to TO (made with MODE, whatever the umask). */
static void copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    ck_assert_msg(in >= 0, "%s: %s", from, strerror(errno));
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_msg(out >= 0, "%s: %s", to, strerror(errno));
    char buffer[65536];
    ssize_t n;
    while ((n = read(in, buffer, sizeof(buffer))) > 0)
        ck_assert_int_eq(write(out, buffer, (size_t)n), n);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(fchmod(out, mode), 0);
    ck_assert_int_eq(close(out), 0);
    close(in);
}

/* Makes helper_root with an empty bin/ and, beside it, the directory that an
 * installed ringctl in bin/ looks for its helper in; returns the path of bin/ringctl,
 * a copy of PROGRAM. */
static const char *install_copy(const char *program)
{
    test_private_directory("helper", helper_root);
    ck_assert_int_eq(mkdir(test_fmt("%s/bin", helper_root), 0755), 0);
    /* The helper's directories, "../libexec/shmring" by default, made one by one. */
    char relocated[PATH_MAX];
    snprintf(relocated, sizeof(relocated), "%s/bin/%s", helper_root,
             RINGCTL_SYNC_HELPER_FROM_BINDIR);
    for (char *slash = relocated + strlen(helper_root) + 5; (slash = strchr(slash, '/'));
         slash++) {
        *slash = '\0';
        ck_assert(mkdir(relocated, 0755) == 0 || errno == EEXIST);
        *slash = '/';
    }
    const char *copy = test_fmt("%s/bin/ringctl", helper_root);
    copy_file(program, copy, 0755);
    return copy;
}

/* Where install_copy()'s ringctl finds its helper: beside it, or as installed. */
static const char *beside_helper(void)
{
    return test_fmt("%s/bin/ringctl-sync", helper_root);
}

static const char *relocated_helper(void)
{
    return test_fmt("%s/bin/%s", helper_root, RINGCTL_SYNC_HELPER_FROM_BINDIR);
}

/* Runs PROGRAM with the arguments that follow and checks its exit status, stdout and
 * stderr exactly. */
#define EXPECT_PROGRAM(program_, status_, out_, err_, ...)                               \
    do {                                                                                 \
        struct test_spawn how_ = test_spawn_default;                                     \
        how_.program = (program_);                                                       \
        struct test_run r_;                                                              \
        test_run_with(&r_, &how_, NULL, (const char *const[]){__VA_ARGS__, NULL});       \
        ck_assert_str_eq(r_.err, (err_));                                                \
        ck_assert_str_eq(r_.out, (out_));                                                \
        ck_assert_int_eq(r_.status, (status_));                                          \
        test_run_free(&r_);                                                              \
    } while (0)

/*
 * The DT_NEEDED entries of the ELF file at PATH (the shared libraries the dynamic
 * loader loads for it), each as "\nNAME", read from its section headers: the
 * dynamic section, and the string table that its sh_link names. Freed by the caller.
 */
static char *elf_needed(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    size_t size = (size_t)st.st_size;
    unsigned char *file = malloc(size);
    ck_assert_ptr_nonnull(file);
    ck_assert_int_eq(read(fd, file, size), (ssize_t)size);
    close(fd);
    /* Each structure is copied out of the file, which gives no alignment. */
    Elf64_Ehdr header;
    ck_assert_uint_ge(size, sizeof(header));
    memcpy(&header, file, sizeof(header));
    ck_assert_int_eq(memcmp(header.e_ident, ELFMAG, SELFMAG), 0);
    ck_assert_int_eq(header.e_ident[EI_CLASS], ELFCLASS64);
    ck_assert_uint_eq(header.e_shentsize, sizeof(Elf64_Shdr));
    ck_assert_uint_le(header.e_shoff + (uint64_t)header.e_shnum * sizeof(Elf64_Shdr),
                      size);
    char *needed = calloc(1, 1);
    size_t len = 0;
    int dynamic_sections = 0;
    for (size_t i = 0; i < header.e_shnum; i++) {
        Elf64_Shdr dynamic, strings;
        memcpy(&dynamic, file + header.e_shoff + i * sizeof(dynamic), sizeof(dynamic));
        if (dynamic.sh_type != SHT_DYNAMIC)
            continue;
        dynamic_sections++;
        ck_assert_uint_lt(dynamic.sh_link, header.e_shnum);
        memcpy(&strings, file + header.e_shoff + dynamic.sh_link * sizeof(strings),
               sizeof(strings));
        ck_assert_uint_le(dynamic.sh_offset + dynamic.sh_size, size);
        ck_assert_uint_le(strings.sh_offset + strings.sh_size, size);
        for (size_t e = 0; e < dynamic.sh_size / sizeof(Elf64_Dyn); e++) {
            Elf64_Dyn entry;
            memcpy(&entry, file + dynamic.sh_offset + e * sizeof(entry), sizeof(entry));
            if (entry.d_tag != DT_NEEDED)
                continue;
            ck_assert_uint_lt(entry.d_un.d_val, strings.sh_size);
            const char *name = (const char *)file + strings.sh_offset + entry.d_un.d_val;
            size_t name_len = strnlen(name, strings.sh_size - entry.d_un.d_val);
            needed = realloc(needed, len + name_len + 2);
            ck_assert_ptr_nonnull(needed);
            needed[len++] = '\n';
            memcpy(needed + len, name, name_len);
            len += name_len;
            needed[len] = '\0';
        }
    }
    ck_assert_int_eq(dynamic_sections, 1);
    free(file);
    return needed;
}

/* The libraries only sync needs, as the start of their file names. */
static const char *const sync_libraries[] = {"\nlibcurl.so", "\nlibssl.so",
                                             "\nlibcrypto.so", "\nlibsystemd.so"};

/* ringctl loads none of sync's libraries; the helper loads each of them directly,
 * which shows that reading the entries finds them where they are. */
START_TEST(test_sync_libraries_in_helper_only)
{
    char *ringctl_needed = elf_needed(TEST_RINGCTL);
    char *helper_needed = elf_needed(RINGCTL_SYNC_PATH);
    ck_assert_ptr_nonnull(strstr(ringctl_needed, "\nlibshmringctl.so."));
    ck_assert_ptr_nonnull(strstr(ringctl_needed, "\nlibjansson.so."));
    for (size_t i = 0; i < COUNT_OF(sync_libraries); i++) {
        ck_assert_msg(strstr(ringctl_needed, sync_libraries[i]) == NULL,
                      "ringctl needs %s:%s", sync_libraries[i] + 1, ringctl_needed);
        ck_assert_msg(strstr(helper_needed, sync_libraries[i]) != NULL,
                      "ringctl-sync does not need %s:%s", sync_libraries[i] + 1,
                      helper_needed);
    }
    free(ringctl_needed);
    free(helper_needed);
}
END_TEST

/* Without a helper anywhere, `ringctl sync` says where it looked last (the
 * configured path) in one line and exits 1: a ringctl built with an absent path,
 * copied where nothing is beside it either. */
START_TEST(test_sync_helper_missing)
{
    ck_assert_int_eq(access(RINGCTL_NOHELPER_SYNC_HELPER, F_OK), -1);
    ck_assert_int_eq(errno, ENOENT);
    const char *copy = install_copy(RINGCTL_NOHELPER_PATH);
    static const char missing[] =
        "ringctl: error: cannot run the sync helper '" RINGCTL_NOHELPER_SYNC_HELPER
        "': No such file or directory\n";
    EXPECT_PROGRAM(copy, 1, "", missing, "-r", ring, "sync", "--file", temp_file);
    EXPECT_PROGRAM(copy, 1, "", missing, "sync");
    /* The other commands do not need it, nor does sync's help (the command table's). */
    struct test_spawn how = test_spawn_default;
    how.program = copy;
    struct test_run r;
    test_run_with(&r, &how, NULL, (const char *const[]){"sync", "--help", NULL});
    ck_assert_str_eq(r.err, "");
    static const char usage[] =
        "Usage: ringctl [OPTIONS] sync --etcd URL[,URL...] --key KEY [OPTIONS]\n";
    ck_assert_msg(strncmp(r.out, usage, strlen(usage)) == 0, "%s", r.out);
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    EXPECT_PROGRAM(copy, 0, test_fmt("ringctl %s\n", shmring_version()), "", "--version");
}
END_TEST

/* A helper found relative to ringctl runs only if it is a regular file of root or
 * ours that others cannot write; one that cannot run is named, not skipped. */
START_TEST(test_sync_helper_refused)
{
    const char *copy = install_copy(TEST_RINGCTL);
    const char *beside = beside_helper(), *relocated = relocated_helper();

    copy_file(RINGCTL_SYNC_PATH, beside, 0644);
    EXPECT_PROGRAM(copy, 1, "",
                   test_fmt("ringctl: error: cannot run the sync helper '%s': Permission "
                            "denied\n",
                            beside),
                   "sync", "--file", temp_file);
    ck_assert_int_eq(unlink(beside), 0);

    ck_assert_int_eq(symlink(RINGCTL_SYNC_PATH, beside), 0);
    EXPECT_PROGRAM(
        copy, 1, "",
        test_fmt("ringctl: error: cannot run the sync helper '%s': not a regular "
                 "file\n",
                 beside),
        "sync", "--file", temp_file);
    ck_assert_int_eq(unlink(beside), 0);

    copy_file(RINGCTL_SYNC_PATH, relocated, 0757);
    EXPECT_PROGRAM(copy, 1, "",
                   test_fmt("ringctl: error: cannot run the sync helper '%s': others can "
                            "write it (mode 0757)\n",
                            relocated),
                   "sync", "--file", temp_file);
    if (geteuid() == 0) {
        ck_assert_int_eq(chmod(relocated, 0755), 0);
        ck_assert_int_eq(chown(relocated, TEST_NOBODY, TEST_NOBODY), 0);
        EXPECT_PROGRAM(
            copy, 1, "",
            test_fmt("ringctl: error: cannot run the sync helper '%s': it belongs "
                     "to uid %lu, neither root nor you\n",
                     relocated, (unsigned long)TEST_NOBODY),
            "sync", "--file", temp_file);
    }
}
END_TEST

/* An installation moved to another prefix: ringctl finds the helper where it is
 * installed relative to ringctl, and the helper answers. */
START_TEST(test_sync_helper_relocated)
{
    const char *copy = install_copy(TEST_RINGCTL);
    copy_file(RINGCTL_SYNC_PATH, relocated_helper(), 0755);
    EXPECT_PROGRAM(copy, 2, "",
                   "ringctl: error: give one source: --etcd URL --key KEY, --etcd URL "
                   "--prefix PREFIX, or --file PATH\n",
                   "-r", ring, "sync");
}
END_TEST

/* The helper runs in ringctl's process (what systemd's Type=notify unit, which
 * starts ringctl, needs): once sync logs, the process ringctl started is the helper,
 * and it stops on SIGTERM with status 0. */
START_TEST(test_sync_same_process)
{
    char helper[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(RINGCTL_SYNC_PATH, helper));
    struct test_child c = test_child_start(
        (const char *const[]){"-r", ring, "sync", "--file", temp_file, NULL}, (uid_t)-1);
    close(c.in);
    /* sync says that it cannot read the missing file, then that it follows it. */
    char *text = calloc(1, 1);
    size_t len = 0;
    while (strstr(text, "following ") == NULL) {
        struct pollfd pfd = {.fd = c.err, .events = POLLIN};
        ck_assert_msg(poll(&pfd, 1, ANSWER_TIMEOUT_MS) == 1, "no log line: %s", text);
        ck_assert_msg(test_drain(c.err, &text, &len), "sync exited: %s", text);
    }
    char exe[PATH_MAX];
    ssize_t exe_len =
        readlink(test_fmt("/proc/%ld/exe", (long)c.pid), exe, sizeof(exe) - 1);
    ck_assert_int_gt(exe_len, 0);
    exe[exe_len] = '\0';
    ck_assert_str_eq(exe, helper);
    ck_assert_int_eq(kill(c.pid, SIGTERM), 0);
    free(read_all(c.err));
    char *out = read_all(c.out);
    ck_assert_str_eq(out, "");
    free(out);
    free(text);
    close(c.out);
    close(c.err);
    ck_assert_int_eq(test_child_wait(&c), 0);
}
END_TEST

#else

/* A build without sync (SHMRING_SYNC=OFF) says so, whatever the command line gives
 * sync. */
START_TEST(test_sync_absent)
{
    EXPECT(1, "",
           "ringctl: error: this ringctl was built without sync (SHMRING_SYNC=OFF)\n",
           "-r", ring, "sync", "--file", temp_file);
}
END_TEST

#endif

static Suite *ringctl_sync_suite(void)
{
    Suite *suite = suite_create("ringctl_sync");

    TCase *sync_helper = tcase_create("sync-helper");
#ifdef RINGCTL_SYNC_PATH
    tcase_add_checked_fixture(sync_helper, ringctl_setup, helper_teardown);
    tcase_add_test(sync_helper, test_sync_libraries_in_helper_only);
    tcase_add_test(sync_helper, test_sync_helper_missing);
    tcase_add_test(sync_helper, test_sync_helper_refused);
    tcase_add_test(sync_helper, test_sync_helper_relocated);
    tcase_add_test(sync_helper, test_sync_same_process);
#else
    tcase_add_checked_fixture(sync_helper, ringctl_setup, ringctl_teardown);
    tcase_add_test(sync_helper, test_sync_absent);
#endif
    suite_add_tcase(suite, sync_helper);
    return suite;
}

int main(void)
{
    /* A broken pipe to a ringctl that exited is reported by write(), not fatal. */
    signal(SIGPIPE, SIG_IGN);
    return test_run_suite(ringctl_sync_suite());
}
