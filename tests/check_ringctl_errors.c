/*
 * End-to-end tests of ringctl (tools/ringctl/), exact refusals: each command's errors
 * with the ring unchanged, the bad-input matrices (every command, every kind of bad value
 * and document), and hygiene (closed standard descriptors, failing output, waiting for
 * the lock). Each test runs the built binary (TEST_RINGCTL) with fork and exec, captures
 * its stdout, stderr and exit status, and checks them exactly, together with what the
 * library then reads from the ring.
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

/* ---- errors: exact status and message, and the ring unchanged ------------------- */

START_TEST(test_error_unknown_node)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    const char *message =
        test_fmt("ringctl: error: no node named 'nope' in ring '%s'\n", ring);
    EXPECT(1, "", message, "-r", ring, "remove", "nope");
    EXPECT(1, "", message, "-r", ring, "weight", "nope", "3");
    EXPECT(1, "", message, "-r", ring, "down", "nope");
    EXPECT(1, "", message, "-r", ring, "up", "nope");
    EXPECT(1, "", message, "-r", ring, "--dry-run", "remove", "nope");
    assert_ring_unchanged(ring, &saved);
}
END_TEST

START_TEST(test_error_duplicate)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    EXPECT(1, "",
           test_fmt("ringctl: error: node 'node-a' already exists in ring '%s'\n", ring),
           "-r", ring, "add", "node-a", "10.9.9.9:1");
    EXPECT(1, "",
           test_fmt("ringctl: error: node 'node-b' already exists in ring '%s'\n", ring),
           "-r", ring, "add", "node-b", "10.9.9.9:1", "--dry-run");
    assert_ring_unchanged(ring, &saved);
}
END_TEST

START_TEST(test_error_numbers)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    const char *weights[] = {"0",  "65536", "abc",         "",
                             "-1", "1e3",   "+5",          " 5",
                             "5 ", "0x10",  "99999999999", "18446744073709551617"};
    for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++) {
        const char *message =
            test_fmt("ringctl: error: weight must be an integer from 1 to 65535: '%s'\n",
                     weights[i]);
        EXPECT(2, "", message, "-r", ring, "weight", "--", "node-a", weights[i]);
        EXPECT(2, "", message, "-r", ring, "add", "node-c", "c:1", "--weight",
               weights[i]);
        EXPECT(2, "", message, "-r", ring, test_fmt("--weight=%s", weights[i]), "add",
               "node-c", "c:1");
    }
    /* Without "--", a negative number is an option. */
    EXPECT(2, "", "ringctl: error: unknown option '-1'\n", "-r", ring, "weight", "node-a",
           "-1");
    EXPECT(2, "", "ringctl: error: -n must be an integer from 1 to 64: '0'\n", "-r", ring,
           "lookup", "-n", "0", "k");
    EXPECT(2, "", "ringctl: error: -n must be an integer from 1 to 64: '65'\n", "-r",
           ring, "lookup", "-n65", "k");
    EXPECT(2, "", "ringctl: error: vnodes must be an integer from 1 to 65535: '0'\n",
           "-r", other, "init", "--vnodes", "0");
    EXPECT(2, "", "ringctl: error: vnodes must be an integer from 1 to 65535: '1.5'\n",
           "-r", other, "init", "--vnodes", "1.5");
    EXPECT(
        2, "",
        "ringctl: error: table size must be 0 or a prime number up to 16777216: '100'\n",
        "-r", other, "init", "--algorithm", "maglev", "--table-size", "100");
    EXPECT(2, "",
           "ringctl: error: table size must be 0 or a prime number up to 16777216: "
           "'-7'\n",
           "-r", other, "init", "--table-size", "-7");
    /* Only the four modes that keep the owner's read and write and give others at
     * most read; the rest would let others write or lock the owner out. */
    const char *const bad_modes[] = {"0",     "0660", "0666", "0400", "0648",
                                     "4644",  "0755", "0700", "0622", "0200",
                                     "10000", "-644", "rw",   "",     "0x1a4"};
    for (size_t i = 0; i < sizeof(bad_modes) / sizeof(bad_modes[0]); i++)
        EXPECT(2, "",
               test_fmt("ringctl: error: mode must be 0600, 0640, 0604 or 0644: '%s'\n",
                        bad_modes[i]),
               "-r", other, "init", "--mode", bad_modes[i]);
    EXPECT(2, "", "ringctl: error: unknown group 'no-such-group-here'\n", "-r", other,
           "init", "--group", "no-such-group-here");
    EXPECT(2, "",
           "ringctl: error: unknown algorithm 'chord' (use ring, maglev, ketama, "
           "twemproxy, nginx, libketama, "
           "envoy-maglev, envoy-ring, rendezvous, jump, haproxy, uhashring, hashring, "
           "dalli, spymemcached or groupcache)\n",
           "-r", other, "init", "--algorithm", "chord");
    EXPECT(2, "",
           "ringctl: error: unknown hash 'sha3' (use xxh3, md5, crc32, fnv1a or murmur3, "
           "one of twemproxy's hash: names, Envoy's xxh64 or murmur2, HAProxy's sdbm, "
           "djb2, wt6 "
           "or crc32, each also with _avalanche, pymemcache's murmur3_32, Guava's "
           "murmur3_128, uhashring's ketama, hashring's sha1, sha256 or sha512, or "
           "spymemcached's native)\n",
           "-r", other, "init", "--hash", "sha3");
    EXPECT(2, "", "ringctl: error: hash 'xxh3' cannot be used with algorithm 'ketama'\n",
           "-r", other, "init", "--algorithm", "ketama", "--hash", "xxh3");
    assert_ring_unchanged(ring, &saved);
    ck_assert_int_eq(status_error(other), SHMRING_ENOENT);
}
END_TEST

START_TEST(test_error_bad_json)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);

    /* A syntax error: the message is the library's, after the file name. */
    const char *syntax = "{\"nodes\": [\n  {\"name\": \"x\",}\n]}\n";
    test_write_file(temp_file, syntax);
    shmring_params_t base;
    shmring_params_default(&base);
    shmring_nodeset_t *set = NULL;
    shmring_json_error_t error;
    ck_assert_int_eq(
        shmring_nodeset_from_json(syntax, strlen(syntax), &base, &set, &error),
        SHMRING_EJSON);
    ck_assert_int_eq(error.line, 2);
    EXPECT(1, "", test_fmt("ringctl: error: %s: %s\n", temp_file, error.text), "-r", ring,
           "load", temp_file);

    /* A bad value, with its path. */
    test_write_file(
        temp_file,
        "{\"nodes\": [{\"name\": \"a\", \"address\": \"a:1\"},\n"
        "            {\"name\": \"b\", \"address\": \"b:1\", \"weight\": 0}]}");
    EXPECT(
        1, "",
        test_fmt(
            "ringctl: error: %s: nodes[1].weight: must be an integer from 1 to 65535\n",
            temp_file),
        "-r", ring, "load", temp_file);
    /* Through stdin. */
    struct test_run r;
    RUN_INPUT(&r,
              "{\"nodes\": [{\"name\": \"a\", \"address\": \"a:1\"},"
              " {\"name\": \"a\", \"address\": \"b:1\"}]}",
              "-r", ring, "load", "-");
    ck_assert_str_eq(
        r.err, "ringctl: error: <stdin>: nodes[1].name: duplicate node name \"a\"\n");
    ck_assert_str_eq(r.out, "");
    ck_assert_int_eq(r.status, 1);
    test_run_free(&r);

    EXPECT(1, "",
           "ringctl: error: cannot read '/nonexistent/nodes.json': No such file or "
           "directory\n",
           "-r", ring, "load", "/nonexistent/nodes.json");
    assert_ring_unchanged(ring, &saved);

    /* A load that fails leaves no ring behind that it would have created. */
    EXPECT(
        1, "",
        test_fmt(
            "ringctl: error: %s: nodes[1].weight: must be an integer from 1 to 65535\n",
            temp_file),
        "-r", other, "load", temp_file);
    assert_ring_absent(other);
}
END_TEST

START_TEST(test_error_usage)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    EXPECT(2, "", "ringctl: error: unknown command 'frobnicate' (see 'ringctl --help')\n",
           "-r", ring, "frobnicate");
    EXPECT(2, "", "ringctl: error: no command given (see 'ringctl --help')\n", "-r",
           ring);
    EXPECT(2, "", "ringctl: error: unknown option '--frob'\n", "-r", ring, "show",
           "--frob");
    EXPECT(2, "", "ringctl: error: unknown option '--frob'\n", "--frob=1", "-r", ring,
           "show");
    EXPECT(2, "", "ringctl: error: unknown option '-x'\n", "-r", ring, "-x", "show");
    EXPECT(2, "", "ringctl: error: option '--json' takes no argument\n", "-r", ring,
           "--json=yes", "show");
    EXPECT(2, "",
           "ringctl: error: missing arguments for 'add' (usage: ringctl add NAME ADDRESS "
           "[--weight W] [--hash-key K])\n",
           "-r", ring, "add", "node-c");
    EXPECT(2, "",
           "ringctl: error: missing arguments for 'weight' (usage: ringctl weight NAME "
           "W)\n",
           "-r", ring, "weight", "node-a");
    EXPECT(
        2, "",
        "ringctl: error: too many arguments for 'remove' (usage: ringctl remove NAME)\n",
        "-r", ring, "remove", "node-a", "node-b");
    EXPECT(2, "", "ringctl: error: too many arguments for 'show' (usage: ringctl show)\n",
           "-r", ring, "show", "extra");
    EXPECT(2, "", "ringctl: error: option '--weight' needs an argument\n", "-r", ring,
           "add", "node-c", "c:1", "--weight");
    EXPECT(2, "", "ringctl: error: option '-r' needs an argument\n", "show", "-r");
    EXPECT(2, "", "ringctl: error: option '--weight' does not apply to 'remove'\n", "-r",
           ring, "remove", "node-a", "--weight", "3");
    EXPECT(2, "", "ringctl: error: option '--dry-run' does not apply to 'show'\n", "-r",
           ring, "show", "--dry-run");
    EXPECT(2, "", "ringctl: error: option '--algorithm' does not apply to 'load'\n", "-r",
           ring, "load", "-", "--algorithm", "ring");
    EXPECT(2, "", "ringctl: error: option '--stdin' does not apply to 'dump'\n", "-r",
           ring, "dump", "--stdin");
    EXPECT(2, "",
           "ringctl: error: missing arguments for 'lookup' (usage: ringctl lookup [-n N] "
           "[-z] KEY... or ringctl lookup [-n N] [-z] --stdin)\n",
           "-r", ring, "lookup");
    EXPECT(2, "", "ringctl: error: lookup takes either keys or --stdin, not both\n", "-r",
           ring, "lookup", "--stdin", "k");
    EXPECT(2, "",
           "ringctl: error: invalid node name 'a?b': it must have 1 to 255 bytes of "
           "UTF-8 and no control characters\n",
           "-r", ring, "add", "a\nb", "x:1");
    EXPECT(2, "",
           "ringctl: error: invalid address '': it must have 1 to 255 bytes of UTF-8 "
           "and no control characters\n",
           "-r", ring, "add", "node-c", "");
    /* Arguments that begin with '-' follow "--". */
    EXPECT(1, "", test_fmt("ringctl: error: no node named '-x' in ring '%s'\n", ring),
           "-r", ring, "remove", "--", "-x");
    assert_ring_unchanged(ring, &saved);
}
END_TEST

START_TEST(test_error_ring_names)
{
    char long_name[SHMRING_RING_NAME_MAX + 2];
    memset(long_name, 'a', SHMRING_RING_NAME_MAX + 1);
    long_name[SHMRING_RING_NAME_MAX + 1] = '\0';
    const char *names[] = {"a/b", long_name, "x.5", "", "..", "a b"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *message = test_fmt(
            "ringctl: error: invalid ring name '%s' (1-200 characters of A-Z a-z 0-9 _ "
            ". -, not ending in a dot and digits)\n",
            names[i]);
        EXPECT(2, "", message, "-r", names[i], "init");
        EXPECT(2, "", message, "-r", names[i], "show");
        EXPECT(2, "", message, "-r", names[i], "add", "n", "n:1");
        EXPECT(2, "", message, "-r", names[i], "lookup", "k");
        EXPECT(2, "", message, "-r", names[i], "destroy");
    }
    /* Nothing was created under any of them. */
    struct stat st;
    ck_assert_int_eq(lstat(test_ring_path("x.5"), &st), -1);
    ck_assert_int_eq(lstat(test_ring_path(long_name), &st), -1);
    ck_assert_int_eq(lstat(test_ring_path("a b"), &st), -1);
    ck_assert_int_eq(test_ring_entries("x.5"), 0);
    /* The longest valid name is fine (made unique to this test like the others). */
    size_t len = strlen(other);
    memset(other + len, 'z', SHMRING_RING_NAME_MAX - len);
    other[SHMRING_RING_NAME_MAX] = '\0';
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", other),
           "", "-r", other, "init");
}
END_TEST

START_TEST(test_error_missing_ring)
{
    const char *message =
        test_fmt("ringctl: error: cannot open ring '%s': no such ring\n", ring);
    EXPECT(1, "", message, "-r", ring, "show");
    EXPECT(1, "", message, "-r", ring, "lookup", "k");
    EXPECT(1, "", message, "-r", ring, "lookup", "--stdin");
    EXPECT(1, "", message, "-r", ring, "dump");
    EXPECT(1, "", message, "-r", ring, "add", "n", "n:1");
    EXPECT(1, "", message, "-r", ring, "add", "n", "n:1", "--dry-run");
    EXPECT(1, "", message, "-r", ring, "remove", "n");
    EXPECT(1, "", message, "-r", ring, "down", "n");
    EXPECT(1, "", message, "-r", ring, "destroy", "--dry-run");
    EXPECT(1, "",
           test_fmt("ringctl: error: cannot destroy ring '%s': no such ring\n", ring),
           "-r", ring, "destroy");
    assert_ring_absent(ring);
}
END_TEST

START_TEST(test_error_init_exists)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    const char *message = test_fmt("ringctl: error: ring '%s' already exists\n", ring);
    EXPECT(1, "", message, "-r", ring, "init");
    EXPECT(1, "", message, "-r", ring, "init", "--algorithm", "maglev", "--mode", "0600");
    EXPECT(1, "", message, "-r", ring, "init", "--dry-run");
    assert_ring_unchanged(ring, &saved);
    ck_assert_uint_eq(status_of(ring).mode, 0644);
}
END_TEST

/* A version larger than the file size limit (ulimit -f) is an error line, exit 1,
 * the ring unchanged; never a death by SIGXFSZ (child_wait fails on a signal). */
START_TEST(test_error_file_size_limit)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    /* 100 nodes of 160 points each: a version of several hundred KiB. */
    char *json = calloc(1, 100 * 64 + 64);
    ck_assert_ptr_nonnull(json);
    strcpy(json, "{\"nodes\": [");
    for (int i = 0; i < 100; i++)
        strcat(json, test_fmt("%s{\"name\": \"n%d\", \"address\": \"10.1.0.%d:1\"}",
                              i > 0 ? ", " : "", i, i));
    strcat(json, "]}");
    test_write_file(temp_file, json);
    free(json);
    struct test_spawn how = test_spawn_default;
    how.file_size = 64 << 10;
    struct test_run r;
    test_run_with(&r, &how, NULL,
                  (const char *const[]){"-r", ring, "load", temp_file, NULL});
    ck_assert_str_eq(r.err,
                     test_fmt("ringctl: error: cannot publish ring '%s': file too large "
                              "for this process's file size limit (ulimit -f); ring "
                              "unchanged\n",
                              ring));
    ck_assert_str_eq(r.out, "");
    ck_assert_int_eq(r.status, 1);
    test_run_free(&r);
    assert_ring_unchanged(ring, &saved);
}
END_TEST

/* load, check and import read at most 256 MiB: a link to /dev/zero is refused. */
START_TEST(test_error_input_too_large)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    unlink(temp_file);
    ck_assert_int_eq(symlink("/dev/zero", temp_file), 0);
    EXPECT(1, "",
           test_fmt(
               "ringctl: error: cannot read '%s': larger than 268435456 bytes, the limit "
               "for a node set\n",
               temp_file),
           "-r", ring, "load", temp_file);
    assert_ring_unchanged(ring, &saved);
}
END_TEST

/* `lookup k` in ring, all of whose nodes are down, fails with its one line. */
static void expect_lookup_all_down(void)
{
    EXPECT(
        1, "",
        test_fmt(
            "ringctl: error: cannot look up keys in ring '%s': all nodes of the ring are "
            "down\n",
            ring),
        "-r", ring, "lookup", "k");
}
START_TEST(test_error_lookup_no_answer)
{
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    EXPECT(
        1, "",
        test_fmt("ringctl: error: cannot look up keys in ring '%s': ring has no nodes\n",
                 ring),
        "-r", ring, "lookup", "k");
    EXPECT(0, test_fmt("added n (id 0) to ring '%s': generation 2\n", ring), "", "-r",
           ring, "add", "n", "n:1");
    EXPECT(0, test_fmt("marked n (id 0) down in ring '%s': generation 3\n", ring), "",
           "-r", ring, "down", "n");
    expect_lookup_all_down();
    /* --stdin answers such a key in its documented error form, and goes on. */
    struct test_run r;
    RUN_INPUT(&r, "k\nj\n", "-r", ring, "lookup", "--stdin");
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, "k\t\tall nodes of the ring are down\n"
                            "j\t\tall nodes of the ring are down\n");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
}
END_TEST

/* What the node algorithms cannot reproduce is refused with one line that says why,
 * and the ring stays as it was. */
START_TEST(test_error_node_algorithms)
{
    EXPECT(0, test_fmt("created ring '%s' (jump, murmur3_128): generation 1\n", ring), "",
           "-r", ring, "init", "--algorithm", "jump");
    EXPECT(0, test_fmt("added a (id 0) to ring '%s': generation 2\n", ring), "", "-r",
           ring, "add", "a", "10.0.0.1:11211");
    EXPECT(0, test_fmt("added b (id 1) to ring '%s': generation 3\n", ring), "", "-r",
           ring, "add", "b", "10.0.0.2:11211");
    EXPECT(1, "",
           test_fmt("ringctl: error: cannot publish ring '%s': this algorithm takes no "
                    "weights (every weight must be 1)\n",
                    ring),
           "-r", ring, "weight", "a", "2");
    EXPECT(1, "",
           test_fmt("ringctl: error: cannot publish ring '%s': jump takes no down nodes "
                    "(remove the last node instead)\n",
                    ring),
           "-r", ring, "down", "b");
    EXPECT(1, "",
           test_fmt("ringctl: error: cannot publish ring '%s': jump would renumber its "
                    "buckets (remove only the last nodes)\n",
                    ring),
           "-r", ring, "remove", "a");
    ck_assert_uint_eq(generation_of(ring), 3);
    EXPECT(0, test_fmt("removed b (id 1) from ring '%s': generation 4\n", ring), "", "-r",
           ring, "remove", "b");
    EXPECT(0,
           test_fmt("created ring '%s' (rendezvous, murmur3_32): generation 1\n", other),
           "", "-r", other, "init", "--algorithm", "rendezvous");
    EXPECT(1, "",
           test_fmt("ringctl: error: cannot publish ring '%s': invalid node address\n",
                    other),
           "-r", other, "add", "a", "cache:+1");
    ck_assert_uint_eq(generation_of(other), 1);
}
END_TEST

/*
 * Every node down, in a version whose size is exactly one page (ten nodes with
 * 255-byte names and 100-byte addresses): such a version has no points and no
 * bucket index, and must still be readable, and repairable with `up`.
 */
START_TEST(test_all_nodes_down)
{
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    char names[10][SHMRING_NAME_MAX + 1];
    char address[101];
    memset(address, 'a', 100);
    address[100] = '\0';
    for (int i = 0; i < 10; i++) {
        int len = snprintf(names[i], sizeof(names[i]), "n%d", i);
        memset(names[i] + len, 'x', SHMRING_NAME_MAX - (size_t)len);
        names[i][SHMRING_NAME_MAX] = '\0';
        EXPECT(0,
               test_fmt("added %s (id %d) to ring '%s': generation %d\n", names[i], i,
                        ring, i + 2),
               "", "-r", ring, "add", names[i], address);
    }
    for (int i = 0; i < 10; i++)
        EXPECT(0,
               test_fmt("marked %s (id %d) down in ring '%s': generation %d\n", names[i],
                        i, ring, i + 12),
               "", "-r", ring, "down", names[i]);
    expect_lookup_all_down();
    struct test_run r;
    RUN(&r, "-r", ring, "show");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "\npoints:        0\n") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "\nnodes:         10 (0 up)\n") != NULL, "%s", r.out);
    test_run_free(&r);
    EXPECT(0,
           test_fmt("marked %s (id 3) up in ring '%s': generation 22\n", names[3], ring),
           "", "-r", ring, "up", names[3]);
    EXPECT(0, test_fmt("k\t%s\t%s\n", names[3], address), "", "-r", ring, "lookup", "k");
}
END_TEST

START_TEST(test_error_permission)
{
    make_ring();
    struct saved_ring saved = save_ring(ring);
    if (geteuid() != 0) {
        /* Another user needs root; the owner itself is refused a lock it cannot
         * open. */
        char lock[600];
        snprintf(lock, sizeof(lock), "%s", test_object_path(ring, "lock"));
        ck_assert_int_eq(chmod(lock, 0400), 0);
        struct test_run r;
        RUN(&r, "-r", ring, "add", "n", "n:1");
        ck_assert_int_eq(chmod(lock, 0600), 0);
        ck_assert_str_eq(
            r.err,
            test_fmt("ringctl: error: cannot open ring '%s': permission denied\n", ring));
        ck_assert_str_eq(r.out, "");
        ck_assert_int_eq(r.status, 1);
        test_run_free(&r);
        assert_ring_unchanged(ring, &saved);
        return;
    }
    /* Another user can read a 0644 ring, and change nothing of it: not even root's
     * writers' lock is open to it. */
    const char *belongs = belongs_message(ring, 0);
    test_write_file(temp_file,
                    "{\"nodes\": [{\"name\": \"evil\", \"address\": \"6.6.6.6\"}]}");
    EXPECT_NOBODY(1, "", belongs, "-r", ring, "add", "n", "n:1");
    EXPECT_NOBODY(1, "", belongs, "-r", ring, "remove", "node-a");
    EXPECT_NOBODY(1, "", belongs, "-r", ring, "load", temp_file);
    EXPECT_NOBODY(1, "", belongs, "-r", ring, "init");
    EXPECT_NOBODY(1, "", belongs, "-r", ring, "destroy");
    EXPECT_NOBODY(1, "", belongs, "-r", ring, "destroy", "--dry-run");
    EXPECT_NOBODY(1, "", belongs, "-r", ring, "add", "n", "n:1", "--dry-run");
    EXPECT_NOBODY(0, saved.json, "", "-r", ring, "dump");
    assert_ring_unchanged(ring, &saved);

    /* A 0640 ring of root's group: another user can neither read nor change it. */
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", other),
           "", "-r", other, "init", "--mode", "0640", "--group", "0");
    EXPECT(0, test_fmt("added n (id 0) to ring '%s': generation 2\n", other), "", "-r",
           other, "add", "n", "n:1");
    saved = save_ring(other);
    const char *denied =
        test_fmt("ringctl: error: cannot open ring '%s': permission denied\n", other);
    EXPECT_NOBODY(1, "", denied, "-r", other, "show");
    EXPECT_NOBODY(1, "", denied, "-r", other, "dump");
    EXPECT_NOBODY(1, "", denied, "-r", other, "lookup", "k");
    /* Changing it is refused as changing any ring of another user is, even though
     * its directory cannot be entered. */
    const char *other_belongs = belongs_message(other, 0);
    EXPECT_NOBODY(1, "", other_belongs, "-r", other, "add", "m", "m:1");
    EXPECT_NOBODY(1, "", other_belongs, "-r", other, "down", "n");
    EXPECT_NOBODY(1, "", other_belongs, "-r", other, "destroy");
    assert_ring_unchanged(other, &saved);
    ck_assert_uint_eq(status_of(other).mode, 0640);
}
END_TEST

/* ---- bad input: every command, every kind of bad value ----------------------- */

/*
 * Runs ringctl with ARGS and INPUT (NULL: none) on its stdin and checks a refusal
 * exactly: exit STATUS, nothing on stdout, the one line ERR on stderr, and `ring`
 * unchanged (generation, publish count and node set). When ECHO_END is not NULL, ERR
 * is only the line's start and ECHO_END its end: what ringctl echoes between them is
 * not asserted (see the rows that use it).
 */
static void assert_refused_exactly(int status, const char *err, const char *echo_end,
                                   const char *input, const char *const *args)
{
    struct saved_ring saved = save_ring(ring);
    struct test_run r;
    test_run_as(&r, (uid_t)-1, input, args);
    ck_assert_msg(r.status == status, "%s %s: exit %d, expected %d", args[1],
                  args[2] != NULL ? args[2] : "", r.status, status);
    ck_assert_str_eq(r.out, "");
    if (echo_end == NULL) {
        ck_assert_str_eq(r.err, err);
    } else {
        size_t len = strlen(r.err), end_len = strlen(echo_end);
        ck_assert_msg(strncmp(r.err, err, strlen(err)) == 0 && len >= end_len &&
                          strcmp(r.err + len - end_len, echo_end) == 0,
                      "'%s' is not '%s...%s'", r.err, err, echo_end);
        ck_assert_msg(strchr(r.err, '\n') == r.err + len - 1, "not one line: '%s'",
                      r.err);
    }
    test_run_free(&r);
    assert_ring_unchanged(ring, &saved);
}

/*
 * A bad init of a ring that does not exist: a usage error (exit 2, the one line ERR)
 * that creates nothing. Run against an existing ring, a broken parameter check would
 * hide behind "already exists".
 */
static void assert_init_refused(const char *err, const char *const *args)
{
    struct test_run r;
    test_run_as(&r, (uid_t)-1, NULL, args);
    ck_assert_msg(r.status == 2, "init %s: exit %d", args[3], r.status);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, err);
    test_run_free(&r);
    assert_no_objects(other);
}

/* The number of bad inputs tried, printed for the reliability figures of
 * docs/concepts.md. */
static int bad_inputs_tried;

/* A refusal with exit STATUS_ and exactly the stderr line ERR_. */
#define REFUSED(status_, err_, ...)                                                      \
    do {                                                                                 \
        assert_refused_exactly((status_), (err_), NULL, NULL,                            \
                               (const char *const[]){__VA_ARGS__, NULL});                \
        bad_inputs_tried++;                                                              \
    } while (0)

/* A refusal whose stderr line starts with START_ and ends with END_. */
#define REFUSED_ECHO(status_, start_, end_, ...)                                         \
    do {                                                                                 \
        assert_refused_exactly((status_), (start_), (end_), NULL,                        \
                               (const char *const[]){__VA_ARGS__, NULL});                \
        bad_inputs_tried++;                                                              \
    } while (0)

#define INIT_REFUSED(err_, ...)                                                          \
    do {                                                                                 \
        assert_init_refused(                                                             \
            (err_), (const char *const[]){"-r", other, "init", __VA_ARGS__, NULL});      \
        bad_inputs_tried++;                                                              \
    } while (0)

/* The messages of the rows below. */
#define ERR "ringctl: error: "
#define TEXT_RULE "': it must have 1 to 255 bytes of UTF-8 and no control characters\n"
#define RING_RULE                                                                        \
    "' (1-200 characters of A-Z a-z 0-9 _ . -, not ending in a dot and digits)\n"
#define NUMBER_RULE(what, max) ERR what " must be an integer from 1 to " max ": '%s'\n"
#define TABLE_RULE ERR "table size must be 0 or a prime number up to 16777216: '%s'\n"
#define MODE_RULE ERR "mode must be 0600, 0640, 0604 or 0644: '%s'\n"
#define WAIT_RULE ERR "--wait must be a whole number of seconds from 0 to 2147483: '%s'\n"

START_TEST(test_bad_arguments_matrix)
{
    make_ring();
    char long_name[SHMRING_NAME_MAX + 2];
    memset(long_name, 'n', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    char long_ring[SHMRING_RING_NAME_MAX + 2];
    memset(long_ring, 'r', sizeof(long_ring) - 1);
    long_ring[sizeof(long_ring) - 1] = '\0';
    static const char *const bad_numbers[] = {"0",
                                              "65536",
                                              "-1",
                                              "abc",
                                              "",
                                              "1.5",
                                              "1e3",
                                              " 7",
                                              "7 ",
                                              "0x10",
                                              "99999999999999999999",
                                              "+3",
                                              "4294967297"};
    /* Bad names and addresses, and how the message shows them: control characters
     * as '?'. ECHO NULL: ringctl echoes the bytes as they came, which for text that
     * is not UTF-8 (or holds a C1 control, which is UTF-8) puts them raw on the
     * terminal; that echo is reported as a bug, not asserted. */
    static const struct {
        const char *text;
        const char *echo;
    } bad_texts[] = {{"", ""},
                     {"a\tb", "a?b"},
                     {"a\nb", "a?b"},
                     {"\x01", "?"},
                     {"a\x7f", "a?"},
                     {"caf\xe9", NULL},
                     {"\xed\xa0\x80", NULL},
                     {"\xc3", NULL},
                     {"a\xc2\x9b"
                      "31m",
                      NULL}};

    /* Missing and extra arguments, unknown commands and options. */
    REFUSED(2, ERR "no command given (see 'ringctl --help')\n", "-r", ring);
    REFUSED(2, ERR "unknown command 'frobnicate' (see 'ringctl --help')\n", "-r", ring,
            "frobnicate");
    REFUSED(2, ERR "unknown option '--bogus'\n", "-r", ring, "--bogus", "show");
    REFUSED(2, ERR "option '--weight' does not apply to 'show'\n", "-r", ring, "show",
            "--weight", "3");
    REFUSED(2, ERR "too many arguments for 'show' (usage: ringctl show)\n", "-r", ring,
            "show", "extra");
    REFUSED(2, ERR "too many arguments for 'list' (usage: ringctl list)\n", "-r", ring,
            "list", "extra");
    REFUSED(2, ERR "too many arguments for 'dump' (usage: ringctl dump)\n", "-r", ring,
            "dump", "extra");
    REFUSED(2, ERR "too many arguments for 'destroy' (usage: ringctl destroy)\n", "-r",
            ring, "destroy", "extra");
    const char *add_usage =
        "(usage: ringctl add NAME ADDRESS [--weight W] [--hash-key K])\n";
    REFUSED(2, test_fmt(ERR "missing arguments for 'add' %s", add_usage), "-r", ring,
            "add");
    REFUSED(2, test_fmt(ERR "missing arguments for 'add' %s", add_usage), "-r", ring,
            "add", "x");
    REFUSED(2, test_fmt(ERR "too many arguments for 'add' %s", add_usage), "-r", ring,
            "add", "x", "y", "z");
    REFUSED(2, ERR "option '--weight' needs an argument\n", "-r", ring, "add", "x", "y",
            "--weight");
    REFUSED(2, ERR "missing arguments for 'remove' (usage: ringctl remove NAME)\n", "-r",
            ring, "remove");
    REFUSED(2, ERR "too many arguments for 'remove' (usage: ringctl remove NAME)\n", "-r",
            ring, "remove", "a", "b");
    REFUSED(2, ERR "missing arguments for 'weight' (usage: ringctl weight NAME W)\n",
            "-r", ring, "weight");
    REFUSED(2, ERR "missing arguments for 'weight' (usage: ringctl weight NAME W)\n",
            "-r", ring, "weight", "node-a");
    REFUSED(2, ERR "missing arguments for 'down' (usage: ringctl down NAME)\n", "-r",
            ring, "down");
    REFUSED(2, ERR "too many arguments for 'up' (usage: ringctl up NAME)\n", "-r", ring,
            "up", "node-a", "node-b");
    REFUSED(
        2,
        ERR
        "missing arguments for 'load' (usage: ringctl load FILE|- [--min-reader V])\n",
        "-r", ring, "load");
    REFUSED(
        2,
        ERR
        "too many arguments for 'load' (usage: ringctl load FILE|- [--min-reader V])\n",
        "-r", ring, "load", "a", "b");
    REFUSED(2,
            ERR
            "missing arguments for 'lookup' (usage: ringctl lookup [-n N] [-z] KEY... "
            "or ringctl lookup [-n N] [-z] --stdin)\n",
            "-r", ring, "lookup");
    REFUSED(2, ERR "lookup takes either keys or --stdin, not both\n", "-r", ring,
            "lookup", "--stdin", "k");

    /* Unknown nodes and duplicates: the operation fails (exit 1). */
    char no_node[SHMRING_RING_NAME_MAX + 64];
    snprintf(no_node, sizeof(no_node), ERR "no node named 'nope' in ring '%s'\n", ring);
    REFUSED(1, no_node, "-r", ring, "remove", "nope");
    REFUSED(1, no_node, "-r", ring, "weight", "nope", "3");
    REFUSED(1, no_node, "-r", ring, "down", "nope");
    REFUSED(1, no_node, "-r", ring, "up", "nope");
    REFUSED(1, test_fmt(ERR "node 'node-a' already exists in ring '%s'\n", ring), "-r",
            ring, "add", "node-a", "10.9.9.9:1");

    /* Every bad number wherever a number goes: a usage error that quotes it. */
    for (size_t i = 0; i < sizeof(bad_numbers) / sizeof(bad_numbers[0]); i++) {
        const char *n = bad_numbers[i];
        REFUSED(2, test_fmt(NUMBER_RULE("weight", "65535"), n), "-r", ring, "weight",
                "node-a", "--", n);
        REFUSED(2, test_fmt(NUMBER_RULE("weight", "65535"), n), "-r", ring, "add",
                "new-node", "10.9.9.9:1", "--weight", n);
        REFUSED(2, test_fmt(NUMBER_RULE("-n", "64"), n), "-r", ring, "lookup", "-n", n,
                "k");
        INIT_REFUSED(test_fmt(NUMBER_RULE("vnodes", "65535"), n), "--vnodes", n);
        if (strcmp(n, "0") != 0) /* table size 0 asks for the default */
            INIT_REFUSED(test_fmt(TABLE_RULE, n), "--table-size", n);
    }
    REFUSED(2, test_fmt(NUMBER_RULE("-n", "64"), "65"), "-r", ring, "lookup", "-n", "65",
            "k");
    REFUSED(2, ERR "unknown user 'no-such-user-here'\n", "-r", ring, "show", "--owner",
            "no-such-user-here");
    REFUSED(2, ERR "option '--wait' does not apply to 'show'\n", "-r", ring, "show",
            "--wait", "1");
    REFUSED(2, ERR "option '--owner' does not apply to 'add'\n", "-r", ring, "add", "n",
            "a", "--owner", "0");
    REFUSED(
        1,
        test_fmt(ERR "ring '%s': the ring directory /nonexistent does not exist\n", ring),
        "-r", ring, "--dir", "/nonexistent", "add", "n", "a");

    /* Every bad name and address, and overlong ones. */
    for (size_t i = 0; i < sizeof(bad_texts) / sizeof(bad_texts[0]); i++) {
        const char *text = bad_texts[i].text, *echo = bad_texts[i].echo;
        if (echo != NULL) {
            REFUSED(2, test_fmt(ERR "invalid node name '%s" TEXT_RULE, echo), "-r", ring,
                    "add", text, "10.9.9.9:1");
            REFUSED(2, test_fmt(ERR "invalid address '%s" TEXT_RULE, echo), "-r", ring,
                    "add", "new-node", text);
        } else {
            REFUSED_ECHO(2, ERR "invalid node name '", TEXT_RULE, "-r", ring, "add", text,
                         "10.9.9.9:1");
            REFUSED_ECHO(2, ERR "invalid address '", TEXT_RULE, "-r", ring, "add",
                         "new-node", text);
        }
    }
    REFUSED(2, test_fmt(ERR "invalid node name '%s" TEXT_RULE, long_name), "-r", ring,
            "add", long_name, "10.9.9.9:1");
    REFUSED(2, test_fmt(ERR "invalid address '%s" TEXT_RULE, long_name), "-r", ring,
            "add", "new-node", long_name);

    /* init of an existing ring, and bad parameters. */
    REFUSED(1, test_fmt(ERR "ring '%s' already exists\n", ring), "-r", ring, "init");
    INIT_REFUSED(
        ERR "unknown algorithm 'chord' (use ring, maglev, ketama, twemproxy, "
            "nginx, libketama, "
            "envoy-maglev, envoy-ring, rendezvous, jump, haproxy, uhashring, hashring, "
            "dalli, spymemcached or groupcache)\n",
        "--algorithm", "chord");
    INIT_REFUSED(
        ERR "unknown hash 'sha3' (use xxh3, md5, crc32, fnv1a or murmur3, "
            "one of twemproxy's hash: names, Envoy's xxh64 or murmur2, HAProxy's sdbm, "
            "djb2, wt6 "
            "or crc32, each also with _avalanche, pymemcache's murmur3_32, Guava's "
            "murmur3_128, uhashring's ketama, hashring's sha1, sha256 or sha512, or "
            "spymemcached's native)\n",
        "--hash", "sha3");
    INIT_REFUSED(ERR "hash 'xxh3' cannot be used with algorithm 'ketama'\n",
                 "--algorithm", "ketama", "--hash", "xxh3");
    INIT_REFUSED(test_fmt(TABLE_RULE, "65536"), "--table-size", "65536");
    static const char *const bad_modes[] = {"999",  "rw",   "4644", "0",
                                            "0660", "0666", "0400"};
    for (size_t i = 0; i < sizeof(bad_modes) / sizeof(bad_modes[0]); i++)
        INIT_REFUSED(test_fmt(MODE_RULE, bad_modes[i]), "--mode", bad_modes[i]);
    static const char *const bad_waits[] = {"-1", "1.5", "2147484"};
    for (size_t i = 0; i < sizeof(bad_waits) / sizeof(bad_waits[0]); i++)
        INIT_REFUSED(test_fmt(WAIT_RULE, bad_waits[i]), "--wait", bad_waits[i]);
    INIT_REFUSED(ERR "option '--owner' does not apply to 'init'\n", "--owner", "0");
    INIT_REFUSED(ERR "option '--dir' needs a directory, not ''\n", "--dir", "");
    INIT_REFUSED(ERR "unknown group 'no-such-group-here'\n", "--group",
                 "no-such-group-here");

    /* Invalid ring names (a usage error) and missing rings (the operation fails), for
     * every command that names one; VERB is what the missing ring's message says
     * ringctl could not do (NULL: the command creates rings). */
    static const struct {
        const char *args[4];
        const char *verb;
    } commands[] = {{{"show"}, "open"},
                    {{"dump"}, "open"},
                    {{"destroy"}, "destroy"},
                    {{"lookup", "k"}, "open"},
                    {{"remove", "node-a"}, "open"},
                    {{"add", "n", "a"}, "open"},
                    {{"weight", "node-a", "2"}, "open"},
                    {{"down", "node-a"}, "open"},
                    {{"up", "node-a"}, "open"},
                    {{"init"}, NULL},
                    {{"load", "-"}, NULL}};
    const char *const bad_rings[] = {"", "a/b", "x.5", "..", "a b", long_ring};
    for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
        const char *const *cmd = commands[c].args;
        for (size_t b = 0; b < sizeof(bad_rings) / sizeof(bad_rings[0]); b++)
            REFUSED(2, test_fmt(ERR "invalid ring name '%s" RING_RULE, bad_rings[b]),
                    "-r", bad_rings[b], cmd[0], cmd[1], cmd[2], cmd[3]);
        if (commands[c].verb != NULL)
            REFUSED(1,
                    test_fmt(ERR "cannot %s ring '%s': no such ring\n", commands[c].verb,
                             other),
                    "-r", other, cmd[0], cmd[1], cmd[2], cmd[3]);
    }
    printf("ringctl bad arguments: %d refused, each with its exact exit status and "
           "message, ring unchanged\n",
           bad_inputs_tried);
}
END_TEST

#undef ERR
#undef TEXT_RULE
#undef RING_RULE
#undef NUMBER_RULE
#undef TABLE_RULE
#undef MODE_RULE
#undef WAIT_RULE

/*
 * Loads DOCUMENT from the file temp_file and from stdin (`load -`) and checks each
 * refusal exactly: exit STATUS and the one line "ringctl: error: LABEL: ERROR", where
 * LABEL is how ringctl names the input, the file's path or "<stdin>".
 */
static void assert_document_refused(const char *document, int status, const char *error)
{
    test_write_file(temp_file, document);
    assert_refused_exactly(status, test_fmt("ringctl: error: %s: %s\n", temp_file, error),
                           NULL, NULL,
                           (const char *const[]){"-r", ring, "load", temp_file, NULL});
    assert_refused_exactly(status, test_fmt("ringctl: error: <stdin>: %s\n", error), NULL,
                           document,
                           (const char *const[]){"-r", ring, "load", "-", NULL});
}

/* The messages of the rows below, after "ringctl: error: LABEL: ". */
#define WEIGHT_RULE "nodes[0].weight: must be an integer from 1 to 65535"
#define VNODES_RULE "vnodes: must be an integer from 1 to 65535"
#define TABLE_RULE                                                                       \
    "table_size: must be a prime number up to 16777216, or 0 for the default"
#define TEXT_RULE ": must be 1-255 bytes without control characters"
#define EMPTY_FILE "line 1, column 1: unexpected token near end of file"
#define NOT_OBJECT "(root): must be an object"

START_TEST(test_bad_json_matrix)
{
    make_ring();
    char long_name[SHMRING_NAME_MAX + 2];
    memset(long_name, 'n', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    char overlong_name[512], overlong_address[512];
    snprintf(overlong_name, sizeof(overlong_name), "{\"nodes\": [{\"name\": \"%s\"}]}",
             long_name);
    snprintf(overlong_address, sizeof(overlong_address),
             "{\"nodes\": [{\"name\": \"a\", \"address\": \"%s\"}]}", long_name);
    /* Jansson parses arrays nested 2048 deep (its JSON_PARSER_MAX_DEPTH), so that
     * document fails only as not an object, and refuses one level more. */
    char deep[2 * 2048 + 1], deeper[2 * 2049 + 1];
    memset(deep, '[', 2048);
    memset(deep + 2048, ']', 2048);
    deep[2 * 2048] = '\0';
    memset(deeper, '[', 2049);
    memset(deeper + 2049, ']', 2049);
    deeper[2 * 2049] = '\0';

    /* Syntax errors are Jansson's words after "line L, column C: "; every other
     * message names the offending value by its path in the document. */
    const struct {
        const char *document;
        int status;
        const char *error;
    } documents[] = {
        {"", 1, EMPTY_FILE},
        {" ", 1, EMPTY_FILE},
        {"{", 1, "line 1, column 1: string or '}' expected near end of file"},
        {"}", 1, "line 1, column 1: unexpected token near '}'"},
        {"{\"nodes\": [{\"name\": \"a\"}]} trailing", 1,
         "line 1, column 35: end of file expected near 'trailing'"},
        {"{\"nodes\": [{\"name\": \"a\"},]}", 1,
         "line 1, column 26: unexpected token near ']'"},
        {"{'nodes': []}", 1, "line 1, column 2: string or '}' expected near '''"},
        {"{\"nodes\": []}", 1,
         "nodes: the node set is empty; a ring without nodes routes no key (to start "
         "over, use destroy and init)"},
        {"{}", 1, "nodes: required array is missing"},
        {"{\"nodes\": 5}", 1, "nodes: must be an array"},
        {"{\"nodes\": {}}", 1, "nodes: must be an array"},
        {"{\"nodes\": [5]}", 1, "nodes[0]: must be an object"},
        {"{\"nodes\": [{}]}", 1, "nodes[0].name: required string is missing"},
        {"{\"nodes\": [{\"name\": 5}]}", 1, "nodes[0].name: must be a string"},
        {"{\"nodes\": [{\"name\": null}]}", 1, "nodes[0].name: must be a string"},
        {"{\"nodes\": [{\"name\": \"\"}]}", 1, "nodes[0].name" TEXT_RULE},
        {"{\"nodes\": [{\"name\": \"a\\u0001b\"}]}", 1, "nodes[0].name" TEXT_RULE},
        {"{\"nodes\": [{\"name\": \"a\\u0000b\"}]}", 1,
         "line 1, column 30: \\u0000 is not allowed without JSON_ALLOW_NUL near "
         "'\"a\\u0000b\"'"},
        {"{\"nodes\": [{\"name\": \"caf\xe9\"}]}", 1,
         "line 1, column 24: unable to decode byte 0xe9 near '\"caf'"},
        {"{\"nodes\": [{\"name\": \"a\", \"address\": \"\"}]}", 1,
         "nodes[0].address" TEXT_RULE},
        {"{\"nodes\": [{\"name\": \"a\", \"address\": 7}]}", 1,
         "nodes[0].address: must be a string"},
        {"{\"nodes\": [{\"name\": \"a\", \"weight\": 99999999999999999999999}]}", 1,
         "line 1, column 58: too big integer"},
        {"{\"nodes\": [{\"name\": \"a\", \"state\": \"sideways\"}]}", 1,
         "nodes[0].state: must be \"up\" or \"down\""},
        {"{\"nodes\": [{\"name\": \"a\", \"state\": 1}]}", 1,
         "nodes[0].state: must be \"up\" or \"down\""},
        {"{\"nodes\": [{\"name\": \"a\", \"port\": 11211}]}", 1,
         "nodes[0].port: unknown field"},
        {"{\"nodes\": [{\"name\": \"a\", \"name\": \"b\"}]}", 1,
         "line 1, column 31: duplicate object key near '\"name\"'"},
        {"{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}", 1,
         "nodes[1].name: duplicate node name \"a\""},
        {"{\"colour\": \"blue\", \"nodes\": [{\"name\": \"a\"}]}", 1,
         "colour: unknown field"},
        {"{\"nodes\": [{\"name\": \"a\"}], \"nodes\": []}", 1,
         "line 1, column 34: duplicate object key near '\"nodes\"'"},
        {"{\"algorithm\": \"chord\", \"nodes\": [{\"name\": \"a\"}]}", 1,
         "algorithm: unknown algorithm \"chord\" (expected ring, maglev, ketama, "
         "twemproxy, nginx, libketama, envoy-maglev, envoy-ring, rendezvous, jump, "
         "haproxy, uhashring, hashring, dalli, "
         "spymemcached or groupcache)"},
        {"{\"algorithm\": 1, \"nodes\": [{\"name\": \"a\"}]}", 1,
         "algorithm: must be a string"},
        {"{\"hash\": \"sha3\", \"nodes\": [{\"name\": \"a\"}]}", 1,
         "hash: unknown hash \"sha3\" (expected xxh3, md5, crc32, fnv1a, murmur3, "
         "twemproxy's hash: names, "
         "xxh64, murmur2, murmur3_32, murmur3_128, sdbm, djb2, wt6, *_avalanche, "
         "ketama, sha1, sha256, sha512, native)"},
        {"{\"algorithm\": \"ketama\", \"hash\": \"xxh3\", \"nodes\": [{\"name\": "
         "\"a\"}]}",
         1, "hash: \"xxh3\" cannot be used with algorithm \"ketama\" (expected md5)"},
        {"{\"table_size\": 65536, \"nodes\": [{\"name\": \"a\"}]}", 1, TABLE_RULE},
        {"{\"table_size\": -7, \"nodes\": [{\"name\": \"a\"}]}", 1, TABLE_RULE},
        {deep, 1, NOT_OBJECT},
        {deeper, 1, "line 1, column 2049: maximum parsing depth reached near '['"},
        {overlong_name, 1, "nodes[0].name" TEXT_RULE},
        {overlong_address, 1, "nodes[0].address" TEXT_RULE},
    };
    size_t count = sizeof(documents) / sizeof(documents[0]);
    for (size_t i = 0; i < count; i++)
        assert_document_refused(documents[i].document, documents[i].status,
                                documents[i].error);
    /* Valid JSON that is not an object, and bad values of the numbers: out of range,
     * not an integer, not a number. */
    static const char *const roots[] = {"[]", "null", "42", "\"nodes\""};
    static const char *const weights[] = {"0",   "-1",    "65536", "4294967297", "1.5",
                                          "1e3", "\"3\"", "true",  "null"};
    static const char *const vnodes[] = {"0", "65536", "\"160\""};
    for (size_t i = 0; i < COUNT_OF(roots); i++)
        assert_document_refused(roots[i], 1, NOT_OBJECT);
    for (size_t i = 0; i < COUNT_OF(weights); i++)
        assert_document_refused(
            test_fmt("{\"nodes\": [{\"name\": \"a\", \"weight\": %s}]}", weights[i]), 1,
            WEIGHT_RULE);
    for (size_t i = 0; i < COUNT_OF(vnodes); i++)
        assert_document_refused(
            test_fmt("{\"vnodes\": %s, \"nodes\": [{\"name\": \"a\"}]}", vnodes[i]), 1,
            VNODES_RULE);
    count += COUNT_OF(roots) + COUNT_OF(weights) + COUNT_OF(vnodes);

    /* A document that reads well but whose ring (65535 points for each of its 65535
     * units of weight) is too large to publish: the message names the ring, not the
     * input, whichever way the document came. */
    const char *too_large =
        "{\"vnodes\": 65535, \"nodes\": [{\"name\": \"a\", \"weight\": 65535}]}";
    const char *not_published =
        test_fmt("ringctl: error: cannot publish ring '%s': size limit exceeded\n", ring);
    test_write_file(temp_file, too_large);
    assert_refused_exactly(1, not_published, NULL, NULL,
                           (const char *const[]){"-r", ring, "load", temp_file, NULL});
    assert_refused_exactly(1, not_published, NULL, too_large,
                           (const char *const[]){"-r", ring, "load", "-", NULL});

    /* Files that cannot be read. */
    assert_refused_exactly(
        1, "ringctl: error: cannot read '/nonexistent/x': No such file or directory\n",
        NULL, NULL, (const char *const[]){"-r", ring, "load", "/nonexistent/x", NULL});
    assert_refused_exactly(1, "ringctl: error: cannot read '/tmp': Is a directory\n",
                           NULL, NULL,
                           (const char *const[]){"-r", ring, "load", "/tmp", NULL});
    printf(
        "ringctl bad JSON: %zu documents refused from a file and from stdin, each with "
        "its exact exit status and message, ring unchanged\n",
        count + 1);
}
END_TEST

#undef WEIGHT_RULE
#undef VNODES_RULE
#undef TABLE_RULE
#undef TEXT_RULE
#undef EMPTY_FILE
#undef NOT_OBJECT

/* ---- hygiene: closed descriptors, failing output, waiting ---------------------- */

/* Runs ringctl with descriptor CLOSED_FD closed (or stdout on STDOUT_PATH) and checks
 * its exit status, and stdout and stderr where they are captured, exactly. */
static void expect_spawned(const struct test_spawn *how, const char *input, int status,
                           const char *out, const char *err, const char *const *args)
{
    struct test_run r;
    test_run_with(&r, how, input, args);
    ck_assert_msg(r.status == status, "%s %s (fd %d closed): exit %d, stderr '%s'",
                  args[2], args[3] != NULL ? args[3] : "", how->closed_fd, r.status,
                  r.err);
    if (how->closed_fd != 1 && how->stdout_path == NULL)
        ck_assert_str_eq(r.out, out);
    if (how->closed_fd != 2)
        ck_assert_str_eq(r.err, err);
    test_run_free(&r);
}

#define EXPECT_CLOSED(fd_, input_, status_, out_, err_, ...)                             \
    do {                                                                                 \
        struct test_spawn how_ = test_spawn_default;                                     \
        how_.closed_fd = (fd_);                                                          \
        expect_spawned(&how_, (input_), (status_), (out_), (err_),                       \
                       (const char *const[]){__VA_ARGS__, NULL});                        \
    } while (0)

/* Runs a reading command once with every descriptor open, then with FD closed, and
 * checks that both runs give the same exit status and output. */
static void expect_closed_like_open(int fd, const char *input, const char *const *args)
{
    struct test_run open;
    test_run_as(&open, (uid_t)-1, input, args);
    ck_assert_int_eq(open.status, 0);
    ck_assert_str_eq(open.err, "");
    struct test_spawn how = test_spawn_default;
    how.closed_fd = fd;
    expect_spawned(&how, input, open.status, open.out, open.err, args);
    test_run_free(&open);
}

/* The number of entries of RING_NAME's directory in temp_dir, and its lock file's
 * size: what a message written into a ring's descriptor would change. */
static int temp_ring_files(const char *ring_name)
{
    return test_count_entries(test_fmt("%s/shmring.%s", temp_dir, ring_name));
}

static off_t temp_lock_size(const char *ring_name)
{
    struct stat st;
    ck_assert_int_eq(stat(test_fmt("%s/shmring.%s/lock", temp_dir, ring_name), &st), 0);
    return st.st_size;
}

/*
 * Every command with descriptor 0, 1 or 2 closed: ringctl must first put /dev/null
 * there, so that no ring object it opens takes the number and receives its output or
 * its messages. Without that, stdout closed makes every report fail ("Bad file
 * descriptor") and a message could land in a ring's file.
 */
START_TEST(test_closed_standard_descriptors)
{
    /* A private ring directory, named through the environment, keeps `list`
     * deterministic. */
    const char *dir = make_ring_directory();
    ck_assert_int_eq(setenv("SHMRING_DIR", dir, 1), 0);
    const char *nodes = "{\"nodes\": [{\"name\": \"node-a\", \"address\": \"a:1\"}, "
                        "{\"name\": \"node-b\", \"address\": \"b:1\"}]}";
    test_write_file(temp_file, nodes);
    shmring_params_t base;
    shmring_params_default(&base);
    shmring_nodeset_t *set = NULL;
    shmring_json_error_t error;
    ck_assert_int_eq(shmring_nodeset_from_json("", 0, &base, &set, &error),
                     SHMRING_EJSON);
    const char *empty_input = test_fmt("ringctl: error: <stdin>: %s\n", error.text);

    for (int fd = 0; fd <= 2; fd++) {
        EXPECT_CLOSED(
            fd, NULL, 0,
            test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
            "", "-r", ring, "init");
        EXPECT_CLOSED(fd, NULL, 0,
                      test_fmt("loaded 2 nodes into ring '%s' (2 added, 0 removed, 0 "
                               "changed): generation 2\n",
                               ring),
                      "", "-r", ring, "load", temp_file);
        /* Standard input closed reads as empty: a refused node set, not a hang. */
        if (fd == 0)
            EXPECT_CLOSED(fd, nodes, 1, "", empty_input, "-r", ring, "load", "-");
        else
            EXPECT_CLOSED(
                fd, nodes, 0,
                test_fmt("ring '%s' already has this node set (2 nodes)\n", ring), "",
                "-r", ring, "load", "-");
        EXPECT_CLOSED(fd, NULL, 0,
                      test_fmt("added node-c (id 2) to ring '%s': generation 3\n", ring),
                      "", "-r", ring, "add", "node-c", "c:1");
        EXPECT_CLOSED(
            fd, NULL, 0,
            test_fmt("changed weight of node-c (id 2) from 1 to 2 in ring '%s': "
                     "generation 4\n",
                     ring),
            "", "-r", ring, "weight", "node-c", "2");
        EXPECT_CLOSED(
            fd, NULL, 0,
            test_fmt("marked node-c (id 2) down in ring '%s': generation 5\n", ring), "",
            "-r", ring, "down", "node-c");
        EXPECT_CLOSED(
            fd, NULL, 0,
            test_fmt("marked node-c (id 2) up in ring '%s': generation 6\n", ring), "",
            "-r", ring, "up", "node-c");
        EXPECT_CLOSED(
            fd, NULL, 0,
            test_fmt("removed node-c (id 2) from ring '%s': generation 7\n", ring), "",
            "-r", ring, "remove", "node-c");
        expect_closed_like_open(fd, NULL,
                                (const char *const[]){"-r", ring, "show", NULL});
        expect_closed_like_open(
            fd, NULL, (const char *const[]){"-r", ring, "--json", "show", NULL});
        expect_closed_like_open(
            fd, NULL, (const char *const[]){"-r", ring, "lookup", "k1", "k2", NULL});
        expect_closed_like_open(fd, NULL,
                                (const char *const[]){"-r", ring, "dump", NULL});
        expect_closed_like_open(fd, NULL, (const char *const[]){"list", NULL});
        expect_closed_like_open(fd, NULL, (const char *const[]){"list", "--json", NULL});
        if (fd == 0)
            EXPECT_CLOSED(fd, NULL, 0, "", "", "-r", ring, "lookup", "--stdin");
        else
            expect_closed_like_open(
                fd, "k1\nk2\n",
                (const char *const[]){"-r", ring, "lookup", "--stdin", NULL});

        /* Failing commands change nothing, and their message goes nowhere but to
         * stderr (or /dev/null): the ring's files are as they were. */
        struct saved_ring saved = save_ring(ring);
        ck_assert_int_eq(temp_ring_files(ring), 3); /* control, lock, version.7 */
        EXPECT_CLOSED(
            fd, NULL, 1, "",
            test_fmt("ringctl: error: node 'node-a' already exists in ring '%s'\n", ring),
            "-r", ring, "add", "node-a", "dup");
        EXPECT_CLOSED(
            fd, NULL, 1, "",
            test_fmt("ringctl: error: no node named 'nope' in ring '%s'\n", ring), "-r",
            ring, "down", "nope");
        EXPECT_CLOSED(fd, NULL, 2, "",
                      "ringctl: error: weight must be an integer from 1 to 65535: '0'\n",
                      "-r", ring, "weight", "node-a", "0");
        EXPECT_CLOSED(fd, NULL, 1, "",
                      test_fmt("ringctl: error: ring '%s' already exists\n", ring), "-r",
                      ring, "init");
        assert_ring_unchanged(ring, &saved);
        ck_assert_uint_eq(generation_of(ring), 7);
        ck_assert_int_eq(temp_ring_files(ring), 3);
        ck_assert_int_eq(temp_lock_size(ring), 0);

        EXPECT_CLOSED(fd, NULL, 0, test_fmt("destroyed ring '%s'\n", ring), "", "-r",
                      ring, "destroy");
        ck_assert_int_eq(status_error(ring), SHMRING_ENOENT);
        ck_assert_int_eq(test_count_entries(dir), 0);
    }
}
END_TEST

#define EXPECT_FULL(status_, err_, ...)                                                  \
    do {                                                                                 \
        struct test_spawn how_ = test_spawn_default;                                     \
        how_.stdout_path = "/dev/full";                                                  \
        expect_spawned(&how_, NULL, (status_), "", (err_),                               \
                       (const char *const[]){__VA_ARGS__, NULL});                        \
    } while (0)
#define EXPECT_FULL_INPUT(input_, status_, err_, ...)                                    \
    do {                                                                                 \
        struct test_spawn how_ = test_spawn_default;                                     \
        how_.stdout_path = "/dev/full";                                                  \
        expect_spawned(&how_, (input_), (status_), "", (err_),                           \
                       (const char *const[]){__VA_ARGS__, NULL});                        \
    } while (0)

/*
 * Every command with its stdout on /dev/full: the report cannot be written, and the
 * error must say whether the ring changed all the same (a retried `init` would
 * otherwise meet "already exists", a retried `add` a duplicate). A command that
 * changed nothing fails with a plain error.
 */
/* What ringctl says when it published GENERATION of RING_NAME but its report could
 * not be written to /dev/full. */
static const char *published(const char *ring_name, int generation)
{
    return test_fmt(
        "ringctl: error: ring '%s': generation %d was published, but its report "
        "could not be written: No space left on device\n",
        ring_name, generation);
}

START_TEST(test_output_full)
{
    /* A private ring directory keeps list's stderr free of other tests' rings. */
    ck_assert_int_eq(setenv("SHMRING_DIR", make_ring_directory(), 1), 0);
    const char *plain = "ringctl: error: cannot write output: No space left on device\n";
    EXPECT_FULL(1, published(ring, 1), "-r", ring, "init");
    ck_assert_uint_eq(generation_of(ring), 1); /* published, so not removed again */
    EXPECT_FULL(1, published(ring, 2), "-r", ring, "add", "node-a", "a:1");
    EXPECT_FULL(1, published(ring, 3), "-r", ring, "--json", "add", "node-b", "b:1");
    EXPECT_FULL(1, published(ring, 4), "-r", ring, "weight", "node-b", "3");
    EXPECT_FULL(1, published(ring, 5), "-r", ring, "down", "node-b");
    EXPECT_FULL(1, published(ring, 6), "-r", ring, "up", "node-b");
    EXPECT_FULL(1, published(ring, 7), "-r", ring, "remove", "node-b");
    test_write_file(temp_file,
                    "{\"nodes\": [{\"name\": \"node-z\", \"address\": \"z:1\"}]}");
    EXPECT_FULL(1, published(ring, 8), "-r", ring, "load", temp_file);
    ck_assert_uint_eq(generation_of(ring), 8);

    /* Nothing published: a plain error. */
    struct saved_ring saved = save_ring(ring);
    EXPECT_FULL(1, plain, "-r", ring, "load", temp_file);
    EXPECT_FULL(1, plain, "-r", ring, "up", "node-z");
    EXPECT_FULL(1, plain, "-r", ring, "add", "node-y", "y:1", "--dry-run");
    EXPECT_FULL(1, plain, "-r", ring, "destroy", "--dry-run");
    EXPECT_FULL(1, plain, "-r", ring, "show");
    EXPECT_FULL(1, plain, "-r", ring, "show", "--json");
    EXPECT_FULL(1, plain, "-r", ring, "lookup", "k");
    EXPECT_FULL(1, plain, "-r", ring, "lookup", "k", "--json");
    EXPECT_FULL_INPUT("k\n", 1, plain, "-r", ring, "lookup", "--stdin");
    EXPECT_FULL(1, plain, "-r", ring, "dump");
    EXPECT_FULL(1, plain, "list");
    EXPECT_FULL(1, plain, "list", "--json");
    EXPECT_FULL(1, plain, "--help");
    EXPECT_FULL(1, plain, "--version");
    /* A command that fails says why, and only that. */
    EXPECT_FULL(
        1, test_fmt("ringctl: error: node 'node-z' already exists in ring '%s'\n", ring),
        "-r", ring, "add", "node-z", "dup");
    assert_ring_unchanged(ring, &saved);

    /* Output larger than stdio's buffer fails while it is written, not at the end. */
    char *big = malloc(64 * 1024);
    ck_assert_ptr_nonnull(big);
    size_t len = (size_t)sprintf(big, "{\"nodes\": [");
    for (int i = 0; i < 500; i++)
        len += (size_t)sprintf(big + len,
                               "%s{\"name\": \"node-%03d\", \"address\": "
                               "\"10.0.%d.%d:11211\"}",
                               i > 0 ? ", " : "", i, i / 256, i % 256);
    sprintf(big + len, "]}");
    test_write_file(temp_file, big);
    free(big);
    /* load creates `other` and publishes it: it stays although the report failed. */
    EXPECT_FULL(1, published(other, 1), "-r", other, "load", temp_file);
    ck_assert_uint_eq(generation_of(other), 1);
    EXPECT_FULL(1, plain, "-r", other, "dump");
    EXPECT_FULL(1, plain, "-r", other, "show");

    EXPECT_FULL(
        1,
        test_fmt("ringctl: error: ring '%s' was destroyed, but its report could not be "
                 "written: No space left on device\n",
                 ring),
        "-r", ring, "destroy");
    ck_assert_int_eq(status_error(ring), SHMRING_ENOENT);
}
END_TEST

/* A process that holds RING_NAME's writers' lock, as another writer would. */
struct lock_holder {
    pid_t pid;
    int release; /* closing it releases the lock */
};

static struct lock_holder hold_lock(const char *ring_name)
{
    char path[600];
    snprintf(path, sizeof(path), "%s", test_object_path(ring_name, "lock"));
    int ready[2], release[2];
    ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(release, O_CLOEXEC), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(path, O_RDWR | O_CLOEXEC);
        char byte = 1;
        if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(ready[1], &byte, 1) != 1)
            _exit(1);
        close(release[1]);
        while (read(release[0], &byte, 1) < 0 && errno == EINTR)
            continue;
        _exit(0);
    }
    close(ready[1]);
    close(release[0]);
    char byte;
    ck_assert_int_eq(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    return (struct lock_holder){.pid = pid, .release = release[1]};
}

static void release_lock(struct lock_holder *holder)
{
    close(holder->release);
    int status;
    ck_assert_int_eq(waitpid(holder->pid, &status, 0), holder->pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Reads from FD until TEXT holds a whole line (or end of file); returns it. */
static char *read_line(int fd)
{
    char *text = calloc(1, 1);
    size_t len = 0;
    while (strchr(text, '\n') == NULL) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        ck_assert_msg(poll(&pfd, 1, ANSWER_TIMEOUT_MS) == 1, "no line after %d ms",
                      ANSWER_TIMEOUT_MS);
        if (!test_drain(fd, &text, &len))
            break;
    }
    return text;
}

/*
 * Another writer holds the ring's lock: --wait 0 fails at once, --wait N after
 * saying once that it waits, and both leave the ring as it was; without --wait the
 * writer says that it waits, then goes on when the lock is free.
 */
START_TEST(test_wait_for_lock)
{
    make_ring();
    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"n\"}]}");
    struct saved_ring saved = save_ring(ring);
    struct lock_holder holder = hold_lock(ring);
    const char *busy0 =
        test_fmt("ringctl: error: ring '%s': another writer holds the ring's "
                 "lock (waited 0 s)\n",
                 ring);
    EXPECT(1, "", busy0, "--wait", "0", "-r", ring, "add", "n", "n:1");
    EXPECT(1, "", busy0, "-r", ring, "remove", "node-a", "--wait", "0");
    EXPECT(1, "", busy0, "-r", ring, "load", temp_file, "--wait=0");
    EXPECT(1, "", busy0, "-r", ring, "destroy", "--wait", "0");
    EXPECT(
        1, "",
        test_fmt(
            "ringctl: waiting up to 1 s for another writer of ring '%s' to finish\n"
            "ringctl: error: ring '%s': another writer holds the ring's lock (waited 1 "
            "s)\n",
            ring, ring),
        "-r", ring, "--wait", "1", "add", "n", "n:1");
    /* Reading takes no lock. */
    EXPECT(0, saved.json, "", "-r", ring, "dump");
    assert_ring_unchanged(ring, &saved);

    struct test_child c = test_child_start(
        (const char *const[]){"-r", ring, "add", "n", "n:1", NULL}, (uid_t)-1);
    close(c.in);
    char *line = read_line(c.err);
    ck_assert_str_eq(line, test_fmt("ringctl: waiting for another writer of ring '%s' to "
                                    "finish (--wait SECONDS bounds this)\n",
                                    ring));
    free(line);
    release_lock(&holder);
    char *out = read_all(c.out), *err = read_all(c.err);
    ck_assert_str_eq(err, "");
    ck_assert_str_eq(out, test_fmt("added n (id 2) to ring '%s': generation 4\n", ring));
    free(out);
    free(err);
    close(c.out);
    close(c.err);
    ck_assert_int_eq(test_child_wait(&c), 0);
    ck_assert_uint_eq(generation_of(ring), 4);
}
END_TEST

static Suite *ringctl_errors_suite(void)
{
    Suite *suite = suite_create("ringctl_errors");

    TEST_CASE_WITH(
        suite, "errors", &ringctl_fixture, test_error_unknown_node, test_error_duplicate,
        test_error_numbers, test_error_bad_json, test_error_usage, test_error_ring_names,
        test_error_missing_ring, test_error_init_exists, test_error_lookup_no_answer,
        test_error_node_algorithms, test_error_file_size_limit,
        test_error_input_too_large, test_all_nodes_down, test_error_permission);
    TEST_CASE_WITH(suite, "bad-input", &ringctl_fixture, test_bad_arguments_matrix,
                   test_bad_json_matrix);
    TEST_CASE_WITH(suite, "hygiene", &ringctl_fixture, test_closed_standard_descriptors,
                   test_output_full, test_wait_for_lock);
    return suite;
}

int main(void)
{
    /* A broken pipe to a ringctl that exited is reported by write(), not fatal. */
    signal(SIGPIPE, SIG_IGN);
    return test_run_suite(ringctl_errors_suite());
}
