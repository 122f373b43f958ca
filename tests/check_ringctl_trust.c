/*
 * End-to-end tests of ringctl (tools/ringctl/), where rings live and whose rings are
 * read: --dir and SHMRING_DIR, ring directories and their messages, modes, squatted names
 * and other users' rings. Each test runs the built binary (TEST_RINGCTL) with fork and
 * exec, captures its stdout, stderr and exit status, and checks them exactly, together
 * with what the library then reads from the ring.
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

/* ---- where rings live, and whose rings are read ---------------------------------- */

START_TEST(test_ring_directory)
{
    const char *dir = make_ring_directory();
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "--dir", dir, "-r", ring, "init");
    ck_assert_int_eq(access(test_fmt("%s/shmring.%s/control", dir, ring), F_OK), 0);
    ck_assert_int_eq(test_ring_entries(ring), 0); /* nothing in the default directory */
    EXPECT(1, "", test_fmt("ringctl: error: cannot open ring '%s': no such ring\n", ring),
           "-r", ring, "show");

    /* SHMRING_DIR names it too, for every command. */
    ck_assert_int_eq(setenv("SHMRING_DIR", dir, 1), 0);
    EXPECT(0, test_fmt("added a (id 0) to ring '%s': generation 2\n", ring), "", "-r",
           ring, "add", "a", "a:1");
    EXPECT(0, test_fmt("%s\t2\t1\tring\n", ring), "", "list");
    EXPECT(
        0,
        test_fmt(
            "[\n  {\n    \"ring\": \"%s\",\n    \"generation\": 2,\n    \"nodes\": 1,\n"
            "    \"up\": 1,\n    \"algorithm\": \"ring\"\n  }\n]\n",
            ring),
        "", "list", "--json");
    EXPECT(0, "k\ta\ta:1\n", "", "-r", ring, "lookup", "k");
    char *json = json_of(ring);
    EXPECT(0, json, "", "-r", ring, "dump");
    free(json);

    /* --dir wins over SHMRING_DIR. */
    ck_assert_int_eq(setenv("SHMRING_DIR", "/nonexistent-ring-dir", 1), 0);
    EXPECT(0, test_fmt("%s\t2\t1\tring\n", ring), "", "--dir", dir, "list");
    EXPECT(1, "",
           test_fmt(
               "ringctl: error: ring '%s': the ring directory /nonexistent-ring-dir does "
               "not exist\n",
               ring),
           "-r", ring, "show");
    EXPECT(1, "",
           test_fmt(
               "ringctl: error: ring '%s': the ring directory /nonexistent-ring-dir does "
               "not exist\n",
               ring),
           "-r", ring, "add", "b", "b:1");
    EXPECT(1, "",
           "ringctl: error: cannot list rings in /nonexistent-ring-dir: No such file or "
           "directory\n",
           "list");
    ck_assert_int_eq(unsetenv("SHMRING_DIR"), 0);

    /* A directory that others may write, without the sticky bit, lets them rename
     * rings away: refused for reading and writing. */
    ck_assert_int_eq(chmod(dir, 0777), 0);
    const char *unsafe =
        test_fmt("ringctl: error: ring '%s': the ring directory %s is unsafe: "
                 "others can write it and it is not sticky, so anyone could "
                 "rename or remove rings in it\n",
                 ring, dir);
    EXPECT(1, "", unsafe, "--dir", dir, "-r", ring, "show");
    EXPECT(1, "", unsafe, "--dir", dir, "-r", ring, "add", "b", "b:1");
    ck_assert_int_eq(chmod(dir, 0700), 0);
    ck_assert_uint_eq(generation_of(ring), 2);

    EXPECT(0, test_fmt("destroyed ring '%s'\n", ring), "", "--dir", dir, "-r", ring,
           "destroy");
    ck_assert_int_eq(test_count_entries(dir), 0);
}
END_TEST

/* Each message names what is wrong: the directory and why, or the ring when the
 * directory is good. /proc passes every check of owner and mode, so only the
 * library's own code for a kernel filesystem tells it from a missing ring. */
START_TEST(test_ring_directory_messages)
{
    const char *proc =
        test_fmt("ringctl: error: ring '%s': directory '/proc' is not a ring "
                 "directory: it is on a kernel filesystem (like /proc or /sys) "
                 "that cannot hold rings\n",
                 ring);
    EXPECT(1, "", proc, "--dir", "/proc", "-r", ring, "show");
    EXPECT(1, "", proc, "--dir", "/proc", "-r", ring, "init");
    EXPECT(1, "", proc, "--dir", "/proc", "-r", ring, "destroy");

    EXPECT(2, "",
           "ringctl: error: --dir 'rel/x': the ring directory must be an absolute path\n",
           "--dir", "rel/x", "-r", ring, "show");
    ck_assert_int_eq(setenv("SHMRING_DIR", "rel/x", 1), 0);
    EXPECT(2, "",
           "ringctl: error: SHMRING_DIR 'rel/x': the ring directory must be an absolute "
           "path\n",
           "-r", ring, "init");
    ck_assert_int_eq(unsetenv("SHMRING_DIR"), 0);

    const char *dir = make_ring_directory();
    const char *file = test_fmt("%s/file", dir);
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    close(fd);
    EXPECT(1, "",
           test_fmt(
               "ringctl: error: ring '%s': directory '%s' is not a ring directory: it is "
               "not a directory\n",
               ring, file),
           "--dir", file, "-r", ring, "show");
    ck_assert_int_eq(unlink(file), 0);

    /* A good directory without the ring: the ring is what is missing. */
    EXPECT(1, "", test_fmt("ringctl: error: cannot open ring '%s': no such ring\n", ring),
           "--dir", dir, "-r", ring, "show");
    ck_assert_int_eq(test_count_entries(dir), 0);
}
END_TEST

/* SHMRING_RING= and SHMRING_DIR= (set but empty) are errors, not the defaults. */
START_TEST(test_environment_empty)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    ck_assert_int_eq(setenv("SHMRING_RING", "", 1), 0);
    const char *ring_empty = "ringctl: error: SHMRING_RING is set but empty: unset it "
                             "(for the ring 'default') or name a ring\n";
    EXPECT(2, "", ring_empty, "show");
    EXPECT(2, "", ring_empty, "init");
    EXPECT(2, "", ring_empty, "add", "n", "n:1");
    EXPECT(2, "", ring_empty, "lookup", "k");
    EXPECT(2, "", ring_empty, "destroy");
    /* -r wins, and list names no ring. */
    char *json = json_of(ring);
    EXPECT(0, json, "", "-r", ring, "dump");
    struct test_run r;
    RUN(&r, "list");
    ck_assert_int_eq(r.status, 0);
    const char *line = strstr(r.out, test_fmt("%s\t3\t2\tring\n", ring));
    ck_assert_msg(line != NULL && (line == r.out || line[-1] == '\n'), "%s", r.out);
    test_run_free(&r);
    ck_assert_int_eq(unsetenv("SHMRING_RING"), 0);

    ck_assert_int_eq(setenv("SHMRING_DIR", "", 1), 0);
    const char *dir_empty = "ringctl: error: SHMRING_DIR is set but empty: unset it (for "
                            "/dev/shm) or name a directory\n";
    EXPECT(2, "", dir_empty, "-r", ring, "show");
    EXPECT(2, "", dir_empty, "-r", ring, "add", "n", "n:1");
    EXPECT(2, "", dir_empty, "-r", ring, "destroy");
    EXPECT(2, "", dir_empty, "list");
    EXPECT(0, json, "", "-r", ring, "--dir", SHMRING_DEFAULT_DIRECTORY, "dump");
    free(json);
    assert_ring_unchanged(ring, &saved);
}
END_TEST

/* Each valid mode gives the ring, and its directory, exactly the access it says. */
START_TEST(test_init_modes)
{
    const unsigned modes[] = {0600, 0640, 0604, 0644};
    const unsigned directory_modes[] = {0700, 0750, 0705, 0755};
    for (size_t i = 0; i < 4; i++) {
        EXPECT(
            0,
            test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
            "", "-r", ring, "init", "--mode", test_fmt("%04o", modes[i]));
        ck_assert_uint_eq(status_of(ring).mode, modes[i]);
        struct stat st;
        ck_assert_int_eq(stat(test_ring_path(ring), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, directory_modes[i]);
        ck_assert_int_eq(stat(test_object_path(ring, "lock"), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        /* Versions are read-only, even for the owner. */
        ck_assert_int_eq(stat(test_object_path(ring, "version.1"), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, modes[i] & 0444);
        EXPECT(0, test_fmt("destroyed ring '%s'\n", ring), "", "-r", ring, "destroy");
    }
    /* Without --mode: 0644. */
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    ck_assert_uint_eq(status_of(ring).mode, 0644);
}
END_TEST

/* Checks that COMMAND on RING_NAME, squatted by what MESSAGE describes, fails with
 * MESSAGE (exit 1) for every command. */
static void expect_squatted(const char *ring_name, const char *message)
{
    EXPECT(1, "", message, "-r", ring_name, "init");
    EXPECT(1, "", message, "-r", ring_name, "init", "--dry-run");
    EXPECT(1, "", message, "-r", ring_name, "load", temp_file);
    EXPECT(1, "", message, "-r", ring_name, "add", "n", "n:1");
    EXPECT(1, "", message, "-r", ring_name, "add", "n", "n:1", "--dry-run");
    EXPECT(1, "", message, "-r", ring_name, "down", "n");
    EXPECT(1, "", message, "-r", ring_name, "show");
    EXPECT(1, "", message, "-r", ring_name, "dump");
    EXPECT(1, "", message, "-r", ring_name, "lookup", "k");
    EXPECT(1, "", message, "-r", ring_name, "lookup", "--stdin");
    EXPECT(1, "", message, "-r", ring_name, "destroy");
    EXPECT(1, "", message, "-r", ring_name, "destroy", "--dry-run");
    /* list names it, and goes on. */
    struct test_run r;
    RUN(&r, "list");
    ck_assert_int_eq(r.status, 0);
    char warning[8192];
    snprintf(warning, sizeof(warning), "ringctl: warning: ring '%s': skipped: %s",
             ring_name,
             message + strlen("ringctl: error: ring '': ") + strlen(ring_name));
    const char *found = strstr(r.err, warning);
    ck_assert_msg(found != NULL && (found == r.err || found[-1] == '\n'), "%s", r.err);
    ck_assert_ptr_null(strstr(r.out, ring_name));
    test_run_free(&r);
}

/* What ringctl says of RING_NAME when PATH is a KIND of OWNER. */
static const char *not_ring(const char *ring_name, const char *path, const char *kind,
                            uid_t owner)
{
    return test_fmt(
        "ringctl: error: ring '%s': %s is a %s owned by %s, not a ring of yours; "
        "remove it or use another ring name\n",
        ring_name, path, kind, owner_text(owner));
}

/*
 * Something that is not a ring has a ring's name: a FIFO, a file, a socket, a
 * symbolic link (even to a real ring), a directory that others can write. Every
 * command refuses it, naming the path, its kind and its owner, and leaves it alone.
 */
START_TEST(test_squatted_names)
{
    uid_t squatter = geteuid() == 0 ? TEST_NOBODY : geteuid();
    const char *path = test_ring_path(ring);
    char saved_path[600];
    snprintf(saved_path, sizeof(saved_path), "%s", path);
    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"n\"}]}");
    struct stat st;

    ck_assert_int_eq(mkfifo(saved_path, 0666), 0);
    ck_assert_int_eq(lchown(saved_path, squatter, squatter), 0);
    expect_squatted(ring, not_ring(ring, saved_path, "FIFO", squatter));
    ck_assert_int_eq(lstat(saved_path, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert_int_eq(unlink(saved_path), 0);

    int fd = open(saved_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fchown(fd, squatter, squatter), 0);
    close(fd);
    expect_squatted(ring, not_ring(ring, saved_path, "regular file", squatter));
    ck_assert_int_eq(lstat(saved_path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(unlink(saved_path), 0);

    /* A symbolic link is never followed, even to a ring of ours. */
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", other),
           "", "-r", other, "init");
    ck_assert_int_eq(symlink(test_ring_path(other), saved_path), 0);
    ck_assert_int_eq(lchown(saved_path, squatter, squatter), 0);
    expect_squatted(ring, not_ring(ring, saved_path, "symbolic link", squatter));
    ck_assert_int_eq(unlink(saved_path), 0);
    ck_assert_uint_eq(generation_of(other), 1);

    /* A directory that others may write: its owner's or not, its contents could be
     * anyone's. */
    ck_assert_int_eq(mkdir(saved_path, 0700), 0);
    ck_assert_int_eq(chmod(saved_path, 0777), 0);
    expect_squatted(
        ring, test_fmt("ringctl: error: ring '%s': %s is a directory owned by %s that "
                       "others can write (mode 0777), not a ring; remove it or use "
                       "another ring name\n",
                       ring, saved_path, owner_text(geteuid())));
    ck_assert_int_eq(rmdir(saved_path), 0);
    assert_no_objects(ring);
}
END_TEST

/*
 * Root and another user's ring: root may read it only when told to trust that user
 * (--owner), and can never change or destroy it; nor can it take the name.
 */
START_TEST(test_foreign_ring)
{
    if (geteuid() != 0) {
        printf("test_foreign_ring: skipped (needs root to act as another user)\n");
        return;
    }
    EXPECT_NOBODY(
        0, test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
        "", "-r", ring, "init");
    EXPECT_NOBODY(0, test_fmt("added a (id 0) to ring '%s': generation 2\n", ring), "",
                  "-r", ring, "add", "a", "a:1");
    ck_assert_int_eq(status_error(ring), SHMRING_EOWNER);
    const char *untrusted = test_fmt(
        "ringctl: error: ring '%s': %s is a directory owned by %s, a user whose rings "
        "are not accepted (to read it anyway, add --owner nobody)\n",
        ring, test_ring_path(ring), owner_text(TEST_NOBODY));
    EXPECT(1, "", untrusted, "-r", ring, "show");
    EXPECT(1, "", untrusted, "-r", ring, "dump");
    EXPECT(1, "", untrusted, "-r", ring, "lookup", "k");
    EXPECT(0, "k\ta\ta:1\n", "", "-r", ring, "--owner", "nobody", "lookup", "k");
    EXPECT(0, "k\ta\ta:1\n", "", "-r", ring, "--owner", "65534", "lookup", "k");
    struct test_run r;
    RUN(&r, "-r", ring, "show", "--owner", "nobody");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(
        strncmp(r.out, test_fmt("ring:          %s\ngeneration:    2\n", ring),
                strlen(test_fmt("ring:          %s\ngeneration:    2\n", ring))) == 0,
        "%s", r.out);
    ck_assert_msg(strstr(r.out, "\nowner:         uid 65534\n") != NULL, "%s", r.out);
    test_run_free(&r);

    const char *belongs = belongs_message(ring, TEST_NOBODY);
    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"n\"}]}");
    EXPECT(1, "", belongs, "-r", ring, "add", "b", "b:1");
    EXPECT(1, "", belongs, "-r", ring, "load", temp_file);
    EXPECT(1, "", belongs, "-r", ring, "init");
    EXPECT(1, "", belongs, "-r", ring, "destroy");
    EXPECT(1, "", belongs, "-r", ring, "down", "a", "--dry-run");
    EXPECT_NOBODY(0, "k\ta\ta:1\n", "", "-r", ring, "lookup", "k");
    EXPECT_NOBODY(0, test_fmt("destroyed ring '%s'\n", ring), "", "-r", ring, "destroy");
    assert_no_objects(ring);
}
END_TEST

/*
 * `list` goes on past rings it cannot read, naming each on stderr: a dangling
 * symbolic link, another user's directory, a private ring of root's. It used to
 * abort ("double free or corruption") as soon as one sorted after a readable ring.
 */
START_TEST(test_list_skips_unreadable)
{
    make_ring(); /* sorts first: the others' names come later from the same counter */
    char third[SHMRING_RING_NAME_MAX + 1], fourth[SHMRING_RING_NAME_MAX + 1];
    snprintf(third, sizeof(third), "%s", test_ring_name("ctl"));
    snprintf(fourth, sizeof(fourth), "%s", test_ring_name("ctl"));
    ck_assert_int_lt(strcmp(ring, other), 0);
    char link_path[600], third_path[600];
    snprintf(link_path, sizeof(link_path), "%s", test_ring_path(other));
    snprintf(third_path, sizeof(third_path), "%s", test_ring_path(third));
    ck_assert_int_eq(symlink("/nonexistent-ring-target", link_path), 0);
    const char *link_warning = test_fmt("ringctl: warning: ring '%s': skipped: %s is a "
                                        "symbolic link owned by %s, not a ring of yours; "
                                        "remove it or use another ring name\n",
                                        other, link_path, owner_text(geteuid()));
    const char *listed = test_fmt("%s\t3\t2\tring\n", ring);
    struct test_run r;
    for (int json = 0; json < 2; json++) {
        if (json)
            RUN(&r, "list", "--json");
        else
            RUN(&r, "list");
        ck_assert_int_eq(r.status, 0);
        const char *found = strstr(r.err, link_warning);
        ck_assert_msg(found != NULL && (found == r.err || found[-1] == '\n'), "%s",
                      r.err);
        if (!json) {
            found = strstr(r.out, listed);
            ck_assert_msg(found != NULL && (found == r.out || found[-1] == '\n'), "%s",
                          r.out);
        } else {
            ck_assert_msg(strstr(r.out, test_fmt("\"ring\": \"%s\"", ring)) != NULL, "%s",
                          r.out);
        }
        ck_assert_ptr_null(strstr(r.out, other));
        test_run_free(&r);
    }
    if (geteuid() == 0) {
        /* Another user's directory, which root does not trust... */
        ck_assert_int_eq(mkdir(third_path, 0755), 0);
        ck_assert_int_eq(chown(third_path, TEST_NOBODY, TEST_NOBODY), 0);
        /* ...and a private ring of root's, which that user cannot read. */
        EXPECT(0,
               test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n",
                        fourth),
               "", "-r", fourth, "init", "--mode", "0600");
        RUN(&r, "list");
        ck_assert_int_eq(r.status, 0);
        const char *warning = test_fmt(
            "ringctl: warning: ring '%s': skipped: %s is a directory owned by %s, a "
            "user whose rings are not accepted (to read it anyway, add --owner "
            "nobody)\n",
            third, third_path, owner_text(TEST_NOBODY));
        ck_assert_msg(strstr(r.err, warning) != NULL, "%s", r.err);
        ck_assert_msg(strstr(r.out, listed) != NULL, "%s", r.out);
        ck_assert_msg(strstr(r.out, test_fmt("%s\t1\t0\tring\n", fourth)) != NULL, "%s",
                      r.out);
        test_run_free(&r);

        test_run_as(&r, TEST_NOBODY, NULL, (const char *const[]){"list", NULL});
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, listed) != NULL, "%s", r.out);
        ck_assert_ptr_null(strstr(r.out, fourth));
        ck_assert_ptr_null(strstr(r.out, third));
        ck_assert_msg(
            strstr(r.err, test_fmt("ringctl: warning: ring '%s': skipped: permission "
                                   "denied\n",
                                   fourth)) != NULL,
            "%s", r.err);
        ck_assert_msg(
            strstr(r.err, test_fmt("ringctl: warning: ring '%s': skipped: %s is a "
                                   "directory owned by %s that holds no ring; remove "
                                   "it or use another ring name\n",
                                   third, third_path, owner_text(TEST_NOBODY))) != NULL,
            "%s", r.err);
        test_run_free(&r);
        ck_assert_int_eq(rmdir(third_path), 0);
        ck_assert_int_eq(shmring_ring_destroy(fourth, NULL), 0);
    }
    ck_assert_int_eq(unlink(link_path), 0);
}
END_TEST

static Suite *ringctl_trust_suite(void)
{
    Suite *suite = suite_create("ringctl_trust");

    TEST_CASE_WITH(suite, "trust", &ringctl_fixture, test_ring_directory,
                   test_ring_directory_messages, test_environment_empty, test_init_modes,
                   test_squatted_names, test_foreign_ring, test_list_skips_unreadable);
    return suite;
}

int main(void)
{
    /* A broken pipe to a ringctl that exited is reported by write(), not fatal. */
    signal(SIGPIPE, SIG_IGN);
    return test_run_suite(ringctl_trust_suite());
}
