/*
 * Tests of lib/ring_admin.c: what has a ring's path, listing rings, destroying them,
 * and a ring's status, information (from the headers) and snapshot. Everything runs in a
 * private directory under /tmp (options.directory), never in /dev/shm.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring_admin_internal.h"
#include "test_support.h"

static char directory[TEST_PATH_MAX];

static void setup(void)
{
    test_private_directory("ring_admin", directory);
}

static void teardown(void)
{
    test_remove_tree(directory);
}

/* The path of NAME in the private directory: a static buffer. */
static const char *in_directory(const char *name)
{
    static char path[TEST_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", directory, name);
    return path;
}

static shmring_writer_options_t writer_options(void)
{
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = directory;
    return options;
}

/* Creates the ring RING in the private directory and publishes COUNT nodes. */
static void make_ring(const char *ring, size_t count)
{
    shmring_writer_options_t options = writer_options();
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, &options, &w), 0);
    if (count > 0) {
        shmring_nodeset_t *set =
            test_nodeset(count, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
        uint64_t generation = 0;
        ck_assert_int_eq(shmring_writer_publish(w, set, &generation), 0);
        ck_assert_uint_eq(generation, 1);
        shmring_nodeset_free(set);
    }
    shmring_writer_close(w);
}

/* ---- what has a ring's path ---- */

START_TEST(object_kinds_and_owners)
{
    test_make_file(in_directory("shmring.file"), 0640);
    test_make_directory(in_directory("shmring.dir"), 0750);
    test_make_directory(in_directory("shmring.sticky"), 01755);
    ck_assert_int_eq(mkfifo(in_directory("shmring.fifo"), 0600), 0);
    ck_assert_int_eq(chmod(in_directory("shmring.fifo"), 0604), 0);
    ck_assert_int_eq(symlink("shmring.dir", in_directory("shmring.link")), 0);
    test_make_socket(in_directory("shmring.socket"));
    ck_assert_int_eq(chmod(in_directory("shmring.socket"), 0755), 0);

    static const struct {
        const char *ring;
        const char *kind;
        mode_t mode;
    } cases[] = {{"file", "regular file", 0640},  {"dir", "directory", 0750},
                 {"sticky", "directory", 01755},  {"fifo", "FIFO", 0604},
                 {"link", "symbolic link", 0777}, {"socket", "socket", 0755}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        shmring_ring_object_t object;
        memset(&object, 0xa5, sizeof(object));
        ck_assert_int_eq(shmring_ring_object(cases[i].ring, directory, &object), 0);
        char entry[64];
        snprintf(entry, sizeof(entry), "shmring.%s", cases[i].ring);
        ck_assert_str_eq(object.path, in_directory(entry));
        ck_assert(object.exists);
        ck_assert_str_eq(object.kind, cases[i].kind);
        ck_assert_uint_eq(object.owner, geteuid());
        ck_assert_msg(object.mode == cases[i].mode, "%s: mode %04o", cases[i].ring,
                      (unsigned)object.mode);
    }
}
END_TEST

START_TEST(object_of_another_owner)
{
    if (geteuid() != 0)
        return; /* only root can give a file away */
    test_make_file(in_directory("shmring.squat"), 0644);
    ck_assert_int_eq(chown(in_directory("shmring.squat"), 65534, 65534), 0);
    ck_assert_int_eq(mkfifo(in_directory("shmring.fifo"), 0600), 0);
    ck_assert_int_eq(lchown(in_directory("shmring.fifo"), 1, 1), 0);
    shmring_ring_object_t object;
    ck_assert_int_eq(shmring_ring_object("squat", directory, &object), 0);
    ck_assert_str_eq(object.kind, "regular file");
    ck_assert_uint_eq(object.owner, 65534);
    ck_assert_int_eq(shmring_ring_object("fifo", directory, &object), 0);
    ck_assert_str_eq(object.kind, "FIFO");
    ck_assert_uint_eq(object.owner, 1);
}
END_TEST

START_TEST(object_absent_and_refused)
{
    shmring_ring_object_t object;
    memset(&object, 0xa5, sizeof(object));
    ck_assert_int_eq(shmring_ring_object("none", directory, &object), 0);
    ck_assert_str_eq(object.path, in_directory("shmring.none"));
    ck_assert(!object.exists);
    ck_assert_ptr_null(object.kind);
    ck_assert_uint_eq(object.owner, 0);
    ck_assert_uint_eq(object.mode, 0);

    ck_assert_int_eq(shmring_ring_object("x.5", directory, &object), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_object("", directory, &object), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_object("a/b", directory, &object), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_object("ok", "relative", &object), SHMRING_EBADDIR);
    ck_assert_int_eq(shmring_ring_object("ok", "", &object), SHMRING_EBADDIR);
    /* A missing directory holds nothing either. */
    ck_assert_int_eq(shmring_ring_object("ok", in_directory("missing"), &object), 0);
    ck_assert(!object.exists);
    test_make_file(in_directory("file"), 0644);
    ck_assert_int_eq(shmring_ring_object("ok", in_directory("file"), &object), -ENOTDIR);
    /* The default directory. */
    ck_assert_int_eq(shmring_ring_object("none-here", NULL, &object), 0);
    ck_assert_str_eq(object.path, "/dev/shm/shmring.none-here");
}
END_TEST

/* ---- listing ---- */

/* Lists the private directory and joins the names with commas (static buffer). */
static const char *listed(void)
{
    static char joined[4096];
    char **names = NULL;
    size_t count = 12345;
    ck_assert_int_eq(shmring_ring_list(directory, &names, &count), 0);
    ck_assert_ptr_nonnull(names);
    ck_assert_ptr_null(names[count]);
    joined[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        ck_assert_ptr_nonnull(names[i]);
        if (i > 0)
            strcat(joined, ",");
        strcat(joined, names[i]);
    }
    shmring_ring_list_free(names);
    return joined;
}

START_TEST(list_sorts_and_filters)
{
    ck_assert_str_eq(listed(), "");
    /* Rings of every kind of object are listed; what only looks like one is not. */
    test_make_directory(in_directory("shmring.web"), 0755);
    test_make_directory(in_directory("shmring.Web"), 0755);
    test_make_directory(in_directory("shmring.api-2"), 0755);
    test_make_directory(in_directory("shmring._x"), 0755);
    test_make_file(in_directory("shmring.file"), 0644);
    ck_assert_int_eq(mkfifo(in_directory("shmring.fifo"), 0600), 0);
    ck_assert_int_eq(symlink("shmring.web", in_directory("shmring.link")), 0);
    test_make_directory(in_directory(".shmring-new.web.123.0000000000000000"), 0700);
    test_make_directory(in_directory(".shmring-gone.api-2.9.0123456789abcdef"), 0700);
    test_make_directory(in_directory("shmring.x.5"), 0755); /* a bad ring name */
    test_make_directory(in_directory("shmring.."), 0755);   /* ring "." */
    test_make_directory(in_directory("shmring..."), 0755);  /* ring "..": bad */
    test_make_file(in_directory("shmring."), 0644);         /* ring "" */
    test_make_file(in_directory("shmring.a b"), 0644);      /* a space */
    test_make_file(in_directory("shmringweb"), 0644);       /* no dot */
    test_make_file(in_directory("SHMRING.web"), 0644);      /* another prefix */
    test_make_file(in_directory("other"), 0644);
    test_make_file(in_directory(".hidden"), 0644);
    /* strcmp order: digits, then upper case, then '_', then lower case. */
    ck_assert_str_eq(listed(), "Web,_x,api-2,fifo,file,link,web");
}
END_TEST

START_TEST(list_many)
{
    /* More than the list's first allocation (8). */
    for (int i = 99; i >= 0; i--) {
        char entry[64];
        snprintf(entry, sizeof(entry), "shmring.ring-%03d", i);
        test_make_directory(in_directory(entry), 0755);
    }
    char **names = NULL;
    size_t count = 0;
    ck_assert_int_eq(shmring_ring_list(directory, &names, &count), 0);
    ck_assert_uint_eq(count, 100);
    for (size_t i = 0; i < count; i++) {
        char expected[32];
        snprintf(expected, sizeof(expected), "ring-%03zu", i);
        ck_assert_str_eq(names[i], expected);
    }
    ck_assert_ptr_null(names[100]);
    shmring_ring_list_free(names);
    shmring_ring_list_free(NULL);
}
END_TEST

START_TEST(list_errors)
{
    char **names = NULL;
    size_t count = 0;
    ck_assert_int_eq(shmring_ring_list("relative", &names, &count), SHMRING_EBADDIR);
    ck_assert_int_eq(shmring_ring_list("", &names, &count), SHMRING_EBADDIR);
    ck_assert_int_eq(shmring_ring_list(in_directory("missing"), &names, &count),
                     SHMRING_ENOENT);
    test_make_file(in_directory("file"), 0644);
    ck_assert_int_eq(shmring_ring_list(in_directory("file"), &names, &count), -ENOTDIR);
    ck_assert_ptr_null(names);
}
END_TEST

/* ---- destroying ---- */

START_TEST(destroy_a_ring)
{
    make_ring("web", 3);
    make_ring("other", 2);
    ck_assert_str_eq(test_listing(in_directory("shmring.web")), "control,lock,version.1");
    shmring_writer_options_t options = writer_options();
    ck_assert_int_eq(shmring_ring_destroy("web", &options), 0);
    /* Nothing of it is left, hidden or not; the other ring is untouched. */
    ck_assert_str_eq(test_listing(directory), "shmring.other");
    ck_assert_int_eq(shmring_ring_destroy("web", &options), SHMRING_ENOENT);
    ck_assert_int_eq(shmring_ring_destroy("other", &options), 0);
    ck_assert_str_eq(test_listing(directory), "");
}
END_TEST

START_TEST(destroy_an_empty_ring)
{
    make_ring("empty", 0);
    ck_assert_str_eq(test_listing(in_directory("shmring.empty")), "control,lock");
    shmring_writer_options_t options = writer_options();
    ck_assert_int_eq(shmring_ring_destroy("empty", &options), 0);
    ck_assert_str_eq(test_listing(directory), "");
}
END_TEST

/* Only the owner can put anything in a ring's directory, and that includes
 * directories; destroy removes them too, instead of leaving the ring half removed
 * under its hidden name, and enters no symbolic link. */
START_TEST(destroy_removes_subdirectories)
{
    make_ring("deep", 2);
    test_make_directory(in_directory("shmring.deep/a"), 0700);
    test_make_directory(in_directory("shmring.deep/a/b"), 0700);
    test_make_file(in_directory("shmring.deep/a/b/file"), 0600);
    test_make_directory(in_directory("target"), 0755);
    test_make_file(in_directory("target/kept"), 0600);
    char target[TEST_PATH_MAX + 64];
    snprintf(target, sizeof(target), "%s", in_directory("target"));
    ck_assert_int_eq(symlink(target, in_directory("shmring.deep/a/link")), 0);
    shmring_writer_options_t options = writer_options();
    ck_assert_int_eq(shmring_ring_destroy("deep", &options), 0);
    ck_assert_str_eq(test_listing(directory), "target");
    ck_assert_str_eq(test_listing(in_directory("target")), "kept");
}
END_TEST

START_TEST(destroy_refusals)
{
    shmring_writer_options_t options = writer_options();
    ck_assert_int_eq(shmring_ring_destroy("none", &options), SHMRING_ENOENT);
    ck_assert_int_eq(shmring_ring_destroy("x.5", &options), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_destroy("", &options), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_destroy(NULL, &options), SHMRING_EBADRING);

    /* Something that is not a ring has the name: it is left alone. */
    test_make_file(in_directory("shmring.file"), 0644);
    ck_assert_int_eq(mkfifo(in_directory("shmring.fifo"), 0644), 0);
    test_make_directory(in_directory("target"), 0755);
    ck_assert_int_eq(symlink("target", in_directory("shmring.link")), 0);
    ck_assert_int_eq(shmring_ring_destroy("file", &options), SHMRING_ENOTRING);
    ck_assert_int_eq(shmring_ring_destroy("fifo", &options), SHMRING_ENOTRING);
    ck_assert_int_eq(shmring_ring_destroy("link", &options), SHMRING_ENOTRING);

    /* A directory others may write is not a ring we may trust, even our own. */
    test_make_directory(in_directory("shmring.open"), 0775);
    ck_assert_int_eq(shmring_ring_destroy("open", &options), SHMRING_EOWNER);
    /* A directory of ours without a lock file is not a ring either. */
    test_make_directory(in_directory("shmring.bare"), 0755);
    ck_assert_int_eq(shmring_ring_destroy("bare", &options), SHMRING_ENOENT);
    ck_assert_str_eq(test_listing(directory),
                     "shmring.bare,shmring.fifo,shmring.file,shmring.link,shmring.open,"
                     "target");

    /* The options' directory is checked. */
    options.directory = "relative";
    ck_assert_int_eq(shmring_ring_destroy("none", &options), SHMRING_EBADDIR);
    options.directory = directory;
    ck_assert_int_eq(chmod(directory, 0777), 0);
    ck_assert_int_eq(shmring_ring_destroy("bare", &options), SHMRING_EBASEDIR);
    ck_assert_int_eq(chmod(directory, 0755), 0);
}
END_TEST

START_TEST(destroy_another_owners_ring)
{
    if (geteuid() != 0)
        return; /* only root can make a ring of another owner */
    make_ring("theirs", 1);
    ck_assert_int_eq(chown(in_directory("shmring.theirs"), 65534, 65534), 0);
    shmring_writer_options_t options = writer_options();
    ck_assert_int_eq(shmring_ring_destroy("theirs", &options), SHMRING_EOWNER);
    /* Not even root destroys a ring of another owner; nothing was touched. */
    ck_assert_str_eq(test_listing(directory), "shmring.theirs");
    ck_assert_str_eq(test_listing(in_directory("shmring.theirs")),
                     "control,lock,version.1");
    ck_assert_int_eq(chmod(in_directory("shmring.theirs"), 0), 0);
    ck_assert_int_eq(shmring_ring_destroy("theirs", &options), SHMRING_EOWNER);
    ck_assert_int_eq(chmod(in_directory("shmring.theirs"), 0755), 0);
}
END_TEST

START_TEST(destroy_waits_for_no_busy_writer)
{
    make_ring("busy", 1);
    shmring_writer_options_t options = writer_options();
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open("busy", 0, &options, &w), 0);
    options.wait_ms = 0;
    ck_assert_int_eq(shmring_ring_destroy("busy", &options), SHMRING_EBUSY);
    ck_assert_str_eq(test_listing(in_directory("shmring.busy")),
                     "control,lock,version.1");
    shmring_writer_close(w);
    ck_assert_int_eq(shmring_ring_destroy("busy", &options), 0);
    ck_assert_str_eq(test_listing(directory), "");
}
END_TEST

/* ---- status and snapshot ---- */

START_TEST(status_and_snapshot)
{
    make_ring("fresh", 0);
    shmring_open_options_t options = {.directory = directory};
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status("fresh", &options, &status), 0);
    ck_assert_uint_eq(status.generation, 0);
    ck_assert_uint_eq(status.publish_count, 0);
    ck_assert_uint_eq(status.owner, geteuid());
    ck_assert_uint_eq(status.mode, 0644);
    uint64_t generation = 99;
    shmring_snapshot_t *copy = (shmring_snapshot_t *)&generation;
    ck_assert_int_eq(shmring_ring_snapshot("fresh", &options, &generation, &copy), 0);
    ck_assert_uint_eq(generation, 0);
    ck_assert_ptr_null(copy);

    make_ring("full", 4);
    ck_assert_int_eq(shmring_ring_status("full", &options, &status), 0);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_uint_eq(status.publish_count, 1);
    ck_assert_int_eq(status.publisher_pid, getpid());
    ck_assert_int_eq(shmring_ring_snapshot("full", &options, &generation, &copy), 0);
    ck_assert_uint_eq(generation, 1);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(copy, &info);
    ck_assert_uint_eq(info.node_count, 4);
    shmring_snapshot_free(copy);

    ck_assert_int_eq(shmring_ring_status("none", &options, &status), SHMRING_ENOENT);
    ck_assert_int_eq(shmring_ring_status("x.5", &options, &status), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_ring_snapshot("none", &options, &generation, &copy),
                     SHMRING_ENOENT);
    test_make_file(in_directory("shmring.file"), 0644);
    ck_assert_int_eq(shmring_ring_status("file", &options, &status), SHMRING_ENOTRING);
    options.directory = "relative";
    ck_assert_int_eq(shmring_ring_status("full", &options, &status), SHMRING_EBADDIR);
}
END_TEST

/* ---- information from the headers ---- */

/* Overwrites LEN bytes at OFFSET of the read-only file PATH (as its owner may, after
 * giving itself write permission back). */
static void overwrite(const char *path, off_t offset, const void *bytes, size_t len)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(chmod(path, 0600), 0);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, bytes, len, offset), (ssize_t)len);
    close(fd);
    ck_assert_int_eq(chmod(path, st.st_mode & 07777), 0);
}

START_TEST(info_matches_status_and_snapshot)
{
    shmring_open_options_t options = {.directory = directory};
    make_ring("fresh", 0);
    shmring_ring_info_t info;
    memset(&info, 0xff, sizeof(info));
    ck_assert_int_eq(shmring_ring_info("fresh", &options, &info), 0);
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status("fresh", &options, &status), 0);
    ck_assert_mem_eq(&info.status, &status, sizeof(status));
    static const shmring_snapshot_info_t nothing;
    ck_assert_mem_eq(&info.version, &nothing, sizeof(nothing));
    static const uint64_t zero[4];
    ck_assert_mem_eq(info.reserved, zero, sizeof(zero));

    make_ring("full", 4);
    ck_assert_int_eq(shmring_ring_info("full", &options, &info), 0);
    ck_assert_int_eq(shmring_ring_status("full", &options, &status), 0);
    ck_assert_mem_eq(&info.status, &status, sizeof(status));
    uint64_t generation;
    shmring_snapshot_t *copy;
    ck_assert_int_eq(shmring_ring_snapshot("full", &options, &generation, &copy), 0);
    shmring_snapshot_info_t whole;
    shmring_snapshot_info(copy, &whole);
    shmring_snapshot_free(copy);
    ck_assert_mem_eq(&info.version, &whole, sizeof(whole));
    ck_assert_uint_eq(info.version.node_count, 4);
    ck_assert_uint_eq(info.version.point_count, 4 * SHMRING_DEFAULT_VNODES);
    struct stat st;
    ck_assert_int_eq(stat(in_directory("shmring.full/version.1"), &st), 0);
    ck_assert_uint_eq(info.version.size, (uint64_t)st.st_size);
}
END_TEST

/* Only the header is read: damage past it is for shmring_ring_snapshot() to find. */
START_TEST(info_reads_the_header_alone)
{
    shmring_open_options_t options = {.directory = directory};
    make_ring("full", 4);
    const char *version = in_directory("shmring.full/version.1");
    struct stat st;
    ck_assert_int_eq(stat(version, &st), 0);
    overwrite(version, st.st_size - 1, "\x5a", 1);
    shmring_ring_info_t info;
    ck_assert_int_eq(shmring_ring_info("full", &options, &info), 0);
    ck_assert_uint_eq(info.version.node_count, 4);
    uint64_t generation;
    shmring_snapshot_t *copy = NULL;
    ck_assert_int_eq(shmring_ring_snapshot("full", &options, &generation, &copy),
                     SHMRING_ECHECKSUM);
    ck_assert_ptr_null(copy);
}
END_TEST

/* The header itself is checked, and the version object as the reader checks it. */
START_TEST(info_refusals)
{
    shmring_open_options_t options = {.directory = directory};
    shmring_ring_info_t info;
    make_ring("magic", 2);
    overwrite(in_directory("shmring.magic/version.1"), 0, "x", 1);
    ck_assert_int_eq(shmring_ring_info("magic", &options, &info), SHMRING_EBADMAGIC);

    make_ring("short", 2);
    ck_assert_int_eq(truncate(in_directory("shmring.short/version.1"), 300), 0);
    ck_assert_int_eq(shmring_ring_info("short", &options, &info), SHMRING_ETRUNCATED);

    make_ring("writable", 2);
    ck_assert_int_eq(chmod(in_directory("shmring.writable/version.1"), 0644), 0);
    ck_assert_int_eq(shmring_ring_info("writable", &options, &info), SHMRING_EOWNER);

    ck_assert_int_eq(shmring_ring_info("none", &options, &info), SHMRING_ENOENT);
    ck_assert_int_eq(shmring_ring_info("x.5", &options, &info), SHMRING_EBADRING);
    test_make_file(in_directory("shmring.file"), 0644);
    ck_assert_int_eq(shmring_ring_info("file", &options, &info), SHMRING_ENOTRING);
    if (geteuid() == 0) {
        /* A ring of an owner the caller does not trust, as for the reader. */
        make_ring("theirs", 1);
        ck_assert_int_eq(chown(in_directory("shmring.theirs"), 65534, 65534), 0);
        ck_assert_int_eq(shmring_ring_info("theirs", &options, &info), SHMRING_EOWNER);
        options.trusted_owner = 65534;
        ck_assert_int_eq(shmring_ring_info("theirs", &options, &info),
                         shmring_ring_status("theirs", &options, &info.status));
    }
}
END_TEST

/* ---- a snapshot and the status of its generation ---- */

/* Publishes generation GENERATION of RING, holding GENERATION + 1 nodes so that a
 * snapshot tells which generation it is. Returns 0 or the failing call's code. */
static int publish_generation(const char *ring, uint64_t generation)
{
    shmring_writer_options_t options = writer_options();
    shmring_writer_t *w;
    int err = shmring_writer_open(ring, 0, &options, &w);
    if (err != 0)
        return err;
    shmring_nodeset_t *set =
        test_nodeset(generation + 1, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    uint64_t published = 0;
    err = shmring_writer_publish(w, set, &published);
    shmring_nodeset_free(set);
    shmring_writer_close(w);
    if (err == 0 && published != generation)
        err = SHMRING_EINVAL;
    return err;
}

static size_t node_count_of(const shmring_snapshot_t *snapshot)
{
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    return info.node_count;
}

START_TEST(snapshot_with_status_same_generation)
{
    shmring_open_options_t options = {.directory = directory};
    shmring_ring_status_t status;
    shmring_snapshot_t *copy = (shmring_snapshot_t *)&status;
    make_ring("fresh", 0);
    memset(&status, 0xa5, sizeof(status));
    ck_assert_int_eq(shmring_ring_snapshot_with_status("fresh", &options, &status, &copy),
                     0);
    ck_assert_ptr_null(copy);
    ck_assert_uint_eq(status.generation, 0);
    ck_assert_uint_eq(status.publish_count, 0);
    ck_assert_int_eq(status.publisher_pid, 0);
    ck_assert_uint_eq(status.mode, 0644);
    static const uint64_t zero[4];
    ck_assert_mem_eq(status.reserved, zero, sizeof(zero));

    make_ring("full", 0);
    for (uint64_t generation = 1; generation <= 3; generation++)
        ck_assert_int_eq(publish_generation("full", generation), 0);
    ck_assert_int_eq(shmring_ring_snapshot_with_status("full", &options, &status, &copy),
                     0);
    ck_assert_uint_eq(status.generation, 3);
    ck_assert_uint_eq(status.publish_count, 3);
    ck_assert_int_eq(status.publisher_pid, getpid());
    ck_assert_uint_eq(status.owner, geteuid());
    ck_assert_uint_eq(node_count_of(copy), 4);
    shmring_ring_status_t alone;
    ck_assert_int_eq(shmring_ring_status("full", &options, &alone), 0);
    ck_assert_mem_eq(&status, &alone, sizeof(alone));
    shmring_snapshot_free(copy);

    /* On an error, neither output is touched. */
    shmring_ring_status_t before = status;
    copy = (shmring_snapshot_t *)&before;
    ck_assert_int_eq(shmring_ring_snapshot_with_status("none", &options, &status, &copy),
                     SHMRING_ENOENT);
    ck_assert_int_eq(shmring_ring_snapshot_with_status("x.5", &options, &status, &copy),
                     SHMRING_EBADRING);
    test_make_file(in_directory("shmring.file"), 0644);
    ck_assert_int_eq(shmring_ring_snapshot_with_status("file", &options, &status, &copy),
                     SHMRING_ENOTRING);
    ck_assert_ptr_eq(copy, &before);
    ck_assert_mem_eq(&status, &before, sizeof(before));
}
END_TEST

/* A publisher in another process, driven through two pipes: for each byte it reads
 * from REQUEST it publishes the ring's next generation, then answers with the
 * publication's code on REPLY; it exits at the end of REQUEST. */
struct publisher {
    pid_t pid;
    int request;
    int reply;
    const char *ring;
    uint64_t generation; /* the last one published */
};

static void publisher_start(struct publisher *p, const char *ring, uint64_t generation)
{
    int request[2], reply[2];
    ck_assert_int_eq(pipe(request), 0);
    ck_assert_int_eq(pipe(reply), 0);
    p->pid = fork();
    ck_assert_int_ge(p->pid, 0);
    if (p->pid == 0) {
        close(request[1]);
        close(reply[0]);
        char byte;
        while (read(request[0], &byte, 1) == 1) {
            int err = publish_generation(ring, ++generation);
            if (write(reply[1], &err, sizeof(err)) != sizeof(err))
                _exit(1);
        }
        _exit(0);
    }
    close(request[0]);
    close(reply[1]);
    p->request = request[1];
    p->reply = reply[0];
    p->ring = ring;
    p->generation = generation;
}

/* Has the publisher publish one generation and waits until it has. */
static void publisher_publish(struct publisher *p)
{
    int err = -1;
    ck_assert_int_eq(write(p->request, "p", 1), 1);
    ck_assert_int_eq(read(p->reply, &err, sizeof(err)), sizeof(err));
    ck_assert_int_eq(err, 0);
    p->generation++;
}

static void publisher_stop(struct publisher *p)
{
    close(p->request);
    int status;
    ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    close(p->reply);
}

/* What the read hook of the tests below does: the generations it was called with,
 * and on how many of its first calls the publisher publishes. */
static struct publisher hook_publisher;
static uint64_t hook_generations[RING_READ_ATTEMPTS + 1];
static int hook_calls;
static int hook_publishes;

static void publish_between_reads(uint64_t generation)
{
    if (hook_calls < RING_READ_ATTEMPTS + 1)
        hook_generations[hook_calls] = generation;
    if (hook_calls++ < hook_publishes)
        publisher_publish(&hook_publisher);
}

/* A publication between the status read and the version read: the version that the
 * status named is gone, so both are read again, and they name the new generation. */
START_TEST(snapshot_with_status_retries_a_publication)
{
    shmring_open_options_t options = {.directory = directory};
    make_ring("busy", 1);
    publisher_start(&hook_publisher, "busy", 1);
    hook_calls = 0;
    hook_publishes = 1;
    shmring__ring_read_hook = publish_between_reads;
    shmring_ring_status_t status;
    shmring_snapshot_t *copy = NULL;
    int err = shmring_ring_snapshot_with_status("busy", &options, &status, &copy);
    shmring__ring_read_hook = NULL;
    publisher_stop(&hook_publisher);
    ck_assert_int_eq(err, 0);
    ck_assert_int_eq(hook_calls, 2);
    ck_assert_uint_eq(hook_generations[0], 1);
    ck_assert_uint_eq(hook_generations[1], 2);
    ck_assert_uint_eq(status.generation, 2);
    ck_assert_uint_eq(status.publish_count, 2);
    ck_assert_int_eq(status.publisher_pid, hook_publisher.pid);
    ck_assert_uint_eq(node_count_of(copy), 3);
    shmring_snapshot_free(copy);
}
END_TEST

/* A publication between every pair of reads: the call gives up with SHMRING_ESTALE
 * after RING_READ_ATTEMPTS pairs rather than return a status and a version of two
 * generations, and leaves its outputs alone. */
START_TEST(snapshot_with_status_gives_up)
{
    shmring_open_options_t options = {.directory = directory};
    make_ring("restless", 1);
    publisher_start(&hook_publisher, "restless", 1);
    hook_calls = 0;
    hook_publishes = RING_READ_ATTEMPTS;
    shmring__ring_read_hook = publish_between_reads;
    shmring_ring_status_t status;
    memset(&status, 0xa5, sizeof(status));
    shmring_ring_status_t before = status;
    shmring_snapshot_t *copy = (shmring_snapshot_t *)&before;
    int err = shmring_ring_snapshot_with_status("restless", &options, &status, &copy);
    shmring__ring_read_hook = NULL;
    publisher_stop(&hook_publisher);
    ck_assert_int_eq(err, SHMRING_ESTALE);
    ck_assert_int_eq(hook_calls, RING_READ_ATTEMPTS);
    for (int i = 0; i < RING_READ_ATTEMPTS; i++)
        ck_assert_uint_eq(hook_generations[i], (uint64_t)i + 1);
    ck_assert_ptr_eq(copy, &before);
    ck_assert_mem_eq(&status, &before, sizeof(before));
    ck_assert_int_eq(shmring_ring_status("restless", &options, &status), 0);
    ck_assert_uint_eq(status.generation, RING_READ_ATTEMPTS + 1);
}
END_TEST

static const struct test_fixture fixture = {setup, teardown, 0};
static const struct test_fixture slow = {setup, teardown, 300};

static Suite *ring_admin_suite(void)
{
    Suite *s = suite_create("ring_admin");
    TEST_CASE_WITH(s, "object", &fixture, object_kinds_and_owners,
                   object_of_another_owner, object_absent_and_refused);
    TEST_CASE_WITH(s, "list", &fixture, list_sorts_and_filters, list_many, list_errors);
    TEST_CASE_WITH(s, "destroy", &fixture, destroy_a_ring, destroy_an_empty_ring,
                   destroy_removes_subdirectories, destroy_refusals,
                   destroy_another_owners_ring, destroy_waits_for_no_busy_writer);
    TEST_CASE_WITH(s, "status", &fixture, status_and_snapshot,
                   info_matches_status_and_snapshot, info_reads_the_header_alone,
                   info_refusals, snapshot_with_status_same_generation);
    /* A publisher in a second process, driven step by step through pipes. */
    TEST_CASE_WITH(s, "concurrent", &slow, snapshot_with_status_retries_a_publication,
                   snapshot_with_status_gives_up);
    return s;
}

int main(void)
{
    return test_run_suite(ring_admin_suite());
}
