/*
 * End-to-end tests of ringctl (tools/ringctl/), the commands that read a ring: show,
 * list, lookup (with --stdin as a co-process that follows publications), dump and check.
 * Each test runs the built binary (TEST_RINGCTL) with fork and exec, captures its stdout,
 * stderr and exit status, and checks them exactly, together with what the library then
 * reads from the ring.
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

START_TEST(test_show)
{
    make_ring();
    EXPECT(0, test_fmt("marked node-b (id 1) down in ring '%s': generation 4\n", ring),
           "", "-r", ring, "down", "node-b");
    EXPECT(0, test_fmt("added node-c (id 2) to ring '%s': generation 5\n", ring), "",
           "-r", ring, "add", "node-c", "10.0.0.3:11211", "--weight", "2");

    struct test_run r;
    RUN(&r, "show", "-r", ring);
    shmring_ring_status_t status = status_of(ring);
    shmring_snapshot_t *buffer = snapshot_of(ring);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(buffer, &info);
    double shares[3];
    ck_assert_int_eq(shmring_snapshot_shares(buffer, shares, 3), 0);
    shmring_snapshot_free(buffer);
    ck_assert_double_eq(shares[1], 0.0);
    ck_assert_double_eq_tol(shares[0] + shares[2], 1.0, 1e-9);
    char when[32];
    time_t published = (time_t)status.published_at;
    struct tm tm;
    ck_assert_ptr_nonnull(gmtime_r(&published, &tm));
    ck_assert_uint_gt(strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm), 0);
    ck_assert_uint_eq(info.point_count, 3 * 160); /* node-a 1 + node-c 2, node-b down */

    char *expected;
    size_t expected_len;
    FILE *text = open_memstream(&expected, &expected_len);
    fprintf(text,
            "ring:          %s\n"
            "generation:    5\n"
            "algorithm:     ring\n"
            "hash:          xxh3\n"
            "vnodes:        160\n"
            "points:        480\n"
            "fingerprint:   %016" PRIx64 "\n"
            "publishes:     5\n"
            "last publish:  %s by pid %" PRId64 "\n"
            "owner:         uid %lu\n"
            "mode:          0644\n"
            "readers:       0 processes, 0 on superseded versions (0 held, 0 B)\n"
            "nodes:         3 (2 up)\n"
            "\n"
            "ID  NAME    ADDRESS         WEIGHT  STATE  SHARE\n"
            "0   node-a  10.0.0.1:11211  1       up     %.2f%%\n"
            "1   node-b  10.0.0.2:11211  3       down   0.00%%\n"
            "2   node-c  10.0.0.3:11211  2       up     %.2f%%\n",
            ring, info.fingerprint, when, status.publisher_pid, (unsigned long)geteuid(),
            shares[0] * 100.0, shares[2] * 100.0);
    fclose(text);
    ck_assert_str_eq(r.err, "");
    /* Processes that nobody may inspect (another container's init, say) are
     * counted at the end of the readers line: how many is the machine's business. */
    char *hidden = strstr(r.out, "; ");
    if (hidden != NULL && strstr(hidden, " not inspectable\n") != NULL)
        memmove(hidden, strstr(hidden, "\n"), strlen(strstr(hidden, "\n")) + 1);
    ck_assert_str_eq(r.out, expected);
    ck_assert_int_eq(r.status, 0);
    free(expected);
    test_run_free(&r);

    /* --json: the same facts as one JSON object. */
    RUN(&r, "show", "-r", ring, "--json");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    json_error_t error;
    json_t *root = json_loads(r.out, 0, &error);
    ck_assert_msg(root != NULL, "%s: %s", error.text, r.out);
    ck_assert_str_eq(json_string_value(json_object_get(root, "ring")), ring);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "generation")), 5);
    ck_assert_str_eq(json_string_value(json_object_get(root, "algorithm")), "ring");
    ck_assert_str_eq(json_string_value(json_object_get(root, "hash")), "xxh3");
    ck_assert_int_eq(json_integer_value(json_object_get(root, "vnodes")), 160);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "points")), 480);
    ck_assert_str_eq(json_string_value(json_object_get(root, "fingerprint")),
                     test_fmt("%016" PRIx64, info.fingerprint));
    ck_assert_int_eq(json_integer_value(json_object_get(root, "publish_count")), 5);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "publisher_pid")),
                     status.publisher_pid);
    ck_assert_str_eq(json_string_value(json_object_get(root, "published_at")), when);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "owner")), geteuid());
    ck_assert_str_eq(json_string_value(json_object_get(root, "mode")), "0644");
    json_t *readers = json_object_get(root, "readers");
    ck_assert_int_eq(json_integer_value(json_object_get(readers, "processes")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(readers, "superseded_processes")),
                     0);
    ck_assert_int_eq(json_integer_value(json_object_get(readers, "superseded_versions")),
                     0);
    ck_assert_int_eq(json_integer_value(json_object_get(readers, "superseded_bytes")), 0);
    ck_assert(json_is_integer(json_object_get(readers, "processes_hidden")));
    json_t *nodes = json_object_get(root, "nodes");
    ck_assert_uint_eq(json_array_size(nodes), 3);
    const char *names[] = {"node-a", "node-b", "node-c"};
    const char *states[] = {"up", "down", "up"};
    const json_int_t weights[] = {1, 3, 2};
    for (size_t i = 0; i < 3; i++) {
        json_t *node = json_array_get(nodes, i);
        ck_assert_int_eq(json_integer_value(json_object_get(node, "id")), (json_int_t)i);
        ck_assert_str_eq(json_string_value(json_object_get(node, "name")), names[i]);
        ck_assert_str_eq(json_string_value(json_object_get(node, "address")),
                         test_fmt("10.0.0.%zu:11211", i + 1));
        ck_assert_int_eq(json_integer_value(json_object_get(node, "weight")), weights[i]);
        ck_assert_str_eq(json_string_value(json_object_get(node, "state")), states[i]);
        ck_assert_double_eq_tol(json_real_value(json_object_get(node, "share")),
                                shares[i], 1e-12);
    }
    json_decref(root);
    test_run_free(&r);
}
END_TEST

START_TEST(test_show_maglev)
{
    EXPECT(0, test_fmt("created ring '%s' (maglev, xxh3): generation 1\n", ring), "",
           "-r", ring, "init", "--algorithm", "maglev");
    EXPECT(0, test_fmt("added x (id 0) to ring '%s': generation 2\n", ring), "", "-r",
           ring, "add", "x", "y");
    struct test_run r;
    RUN(&r, "-r", ring, "show");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "\nalgorithm:     maglev\nhash:          xxh3\n"
                                "table size:    65537\npoints:        65537\n") != NULL,
                  "%s", r.out);
    ck_assert_msg(strstr(r.out, "\nID  NAME  ADDRESS  WEIGHT  STATE  SHARE\n"
                                "0   x     y        1       up     100.00%\n") != NULL,
                  "%s", r.out);
    test_run_free(&r);
}
END_TEST

START_TEST(test_envoy_and_hash_key)
{
    /* Envoy's ring_hash Basic ring: hosts 127.0.0.1:90 to :95, minimum_ring_size 12;
     * "foo" hashes (xxHash64) to 3728699739546630719, whose next point is :93's. */
    EXPECT(0,
           test_fmt("created ring '%s' (envoy-ring, xxh64, ring size 12 to 8388608): "
                    "generation 1\n",
                    ring),
           "", "-r", ring, "init", "--algorithm", "envoy-ring", "--min-ring-size", "12");
    for (int port = 90; port <= 95; port++)
        EXPECT(0,
               test_fmt("added h%d (id %d) to ring '%s': generation %d\n", port,
                        port - 90, ring, port - 88),
               "", "-r", ring, "add", test_fmt("h%d", port),
               test_fmt("127.0.0.1:%d", port));
    EXPECT(0, "foo\th93\t127.0.0.1:93\n", "", "-r", ring, "lookup", "foo");
    struct test_run r;
    RUN(&r, "-r", ring, "show");
    ck_assert_msg(strstr(r.out,
                         "\nalgorithm:     envoy-ring\nhash:          xxh64\n"
                         "ring size:     12 to 8388608\npoints:        12\n") != NULL,
                  "%s", r.out);
    test_run_free(&r);
    /* --json: the bounds as configured, 0 standing for Envoy's default maximum. */
    RUN(&r, "-r", ring, "show", "--json");
    ck_assert_int_eq(r.status, 0);
    json_error_t error;
    json_t *root = json_loads(r.out, 0, &error);
    ck_assert_msg(root != NULL, "%s: %s", error.text, r.out);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "min_ring_size")), 12);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "max_ring_size")), 0);
    ck_assert(json_is_integer(json_object_get(root, "max_ring_size")));
    ck_assert_int_eq(json_integer_value(json_object_get(root, "points")), 12);
    json_decref(root);
    test_run_free(&r);

    /* --hash-key: the node is stored with it, and hashed by it: a node keyed like
     * h93's address takes over h93's points, so "foo" goes to whichever of the two
     * comes first in node-set order (Envoy keeps equal points unordered; we keep
     * them in host order). */
    EXPECT(0, test_fmt("added k (id 6) to ring '%s': generation 8\n", ring), "", "-r",
           ring, "add", "k", "10.9.9.9:80", "--hash-key", "127.0.0.1:93");
    shmring_nodeset_t *set = nodeset_of(ring);
    shmring_node_info_t k = node_of(set, "k");
    ck_assert_str_eq(k.hash_key, "127.0.0.1:93");
    shmring_nodeset_free(set);
    EXPECT(0, "foo\th93\t127.0.0.1:93\n", "", "-r", ring, "lookup", "foo");
    EXPECT(0, test_fmt("removed h93 (id 3) from ring '%s': generation 9\n", ring), "",
           "-r", ring, "remove", "h93");
    EXPECT(0, "foo\tk\t10.9.9.9:80\n", "", "-r", ring, "lookup", "foo");

    /* Bad values are usage errors that change nothing. */
    EXPECT(2, "",
           "ringctl: error: hash key must be 1-255 bytes of UTF-8 without control "
           "characters: ''\n",
           "-r", ring, "add", "j", "j:1", "--hash-key", "");
    EXPECT(2, "", "ringctl: error: option '--hash-key' does not apply to 'remove'\n",
           "-r", ring, "remove", "k", "--hash-key", "x");
    ck_assert_uint_eq(generation_of(ring), 9);
    EXPECT(2, "", "ringctl: error: --min-ring-size 20 exceeds --max-ring-size 10\n", "-r",
           other, "init", "--algorithm", "envoy-ring", "--min-ring-size", "20",
           "--max-ring-size", "10");
    EXPECT(2, "",
           "ringctl: error: --max-ring-size must be an integer from 1 to 8388608: "
           "'8388609'\n",
           "-r", other, "init", "--algorithm", "envoy-ring", "--max-ring-size",
           "8388609");
    EXPECT(2, "",
           "ringctl: error: table size must be 0 or a prime number up to 5000011 for "
           "envoy-maglev: '5000077'\n",
           "-r", other, "init", "--algorithm", "envoy-maglev", "--table-size", "5000077");
    EXPECT(
        0,
        test_fmt("created ring '%s' (envoy-maglev, xxh64, table size 7): generation 1\n",
                 other),
        "", "-r", other, "init", "--algorithm", "envoy-maglev", "--table-size", "7");
}
END_TEST

START_TEST(test_lookup)
{
    make_ring();
    shmring_t *reader;
    ck_assert_int_eq(shmring_open(ring, &reader), 0);
    const char *keys[] = {"user:1", "user:2", "user:3", "session/abc", "", "k k"};
    const size_t key_count = sizeof(keys) / sizeof(keys[0]);
    char expected[4096] = "", expected_two[4096] = "";
    for (size_t i = 0; i < key_count; i++) {
        shmring_node_t nodes[2];
        ck_assert_int_eq(shmring_lookup_n(reader, keys[i], strlen(keys[i]), nodes, 2), 2);
        strcat(expected,
               test_fmt("%s\t%s\t%s\n", keys[i], nodes[0].name, nodes[0].address));
        strcat(expected_two, test_fmt("%s\t%s\t%s\t%s\t%s\n", keys[i], nodes[0].name,
                                      nodes[0].address, nodes[1].name, nodes[1].address));
    }
    EXPECT(0, expected, "", "-r", ring, "lookup", keys[0], keys[1], keys[2], keys[3],
           keys[4], keys[5]);
    EXPECT(0, expected_two, "", "-r", ring, "lookup", "-n", "2", keys[0], keys[1],
           keys[2], keys[3], keys[4], keys[5]);
    /* -n larger than the ring gives every up node. */
    struct test_run r;
    RUN(&r, "-r", ring, "lookup", "-n", "64", keys[0], keys[1], keys[2], keys[3], keys[4],
        keys[5]);
    ck_assert_str_eq(r.out, expected_two);
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);

    /* --json: one object per key and line. */
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(reader, "user:1", 6, &node), 0);
    EXPECT(0,
           test_fmt("{\"key\":\"user:1\",\"key_base64\":null,\"nodes\":[{\"id\":%" PRIu32
                    ",\"name\":\"%s\",\"address\":\"%s\",\"weight\":%" PRIu32
                    "}],\"error\":null}\n",
                    node.id, node.name, node.address, node.weight),
           "", "-r", ring, "--json", "lookup", "user:1");
    shmring_close(reader);
}
END_TEST

START_TEST(test_lookup_stdin)
{
    make_ring();
    shmring_t *reader;
    ck_assert_int_eq(shmring_open(ring, &reader), 0);
    /* Lines answered in order; the last one has no newline; an empty line is the
     * empty key; a TAB in a key is printed escaped, as the field separator it is
     * not. */
    const char *keys[] = {"alpha", "beta", "", "gamma\tdelta", "last"};
    const char *printed[] = {"alpha", "beta", "", "gamma\\tdelta", "last"};
    char expected[2048] = "";
    for (size_t i = 0; i < 5; i++) {
        shmring_node_t node;
        ck_assert_int_eq(shmring_lookup(reader, keys[i], strlen(keys[i]), &node), 0);
        strcat(expected, test_fmt("%s\t%s\t%s\n", printed[i], node.name, node.address));
    }
    shmring_close(reader);
    struct test_run r;
    RUN_INPUT(&r, "alpha\nbeta\n\ngamma\tdelta\nlast", "-r", ring, "lookup", "--stdin");
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, expected);
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
}
END_TEST

START_TEST(test_dump)
{
    make_ring();
    EXPECT(0, test_fmt("marked node-a (id 0) down in ring '%s': generation 4\n", ring),
           "", "-r", ring, "down", "node-a");
    char *expected = json_of(ring);
    EXPECT(0, expected, "", "-r", ring, "dump");
    /* dump's output is JSON already; --json changes nothing. */
    EXPECT(0, expected, "", "-r", ring, "dump", "--json");
    free(expected);
}
END_TEST

START_TEST(test_dump_load_round_trip)
{
    EXPECT(
        0,
        test_fmt("created ring '%s' (maglev, crc32, table size 131071): generation 1\n",
                 ring),
        "", "-r", ring, "init", "--algorithm", "maglev", "--hash", "crc32",
        "--table-size", "131071");
    EXPECT(0, test_fmt("added a (id 0) to ring '%s': generation 2\n", ring), "", "-r",
           ring, "add", "a", "10.1.1.1:80", "--weight", "5");
    EXPECT(0, test_fmt("added b (id 1) to ring '%s': generation 3\n", ring), "", "-r",
           ring, "add", "b", "[::1]:80");
    EXPECT(0, test_fmt("added c (id 2) to ring '%s': generation 4\n", ring), "", "-r",
           ring, "add", "c", "c.example:80");
    EXPECT(0, test_fmt("removed a (id 0) from ring '%s': generation 5\n", ring), "", "-r",
           ring, "remove", "a");
    EXPECT(0, test_fmt("marked c (id 2) down in ring '%s': generation 6\n", ring), "",
           "-r", ring, "down", "c");
    struct test_run dump;
    RUN(&dump, "-r", ring, "dump");
    ck_assert_str_eq(dump.err, "");
    ck_assert_int_eq(dump.status, 0);

    /* Into a new ring (created by load, with the dump's parameters rather than the
     * defaults), from stdin: the same dump, byte for byte. */
    struct test_run r;
    RUN_INPUT(&r, dump.out, "-r", other, "load", "-");
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out,
                     test_fmt("loaded 2 nodes into ring '%s' (2 added, 0 removed, 0 "
                              "changed, new parameters): generation 1\n",
                              other));
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    ck_assert_uint_eq(status_of(other).mode, 0644);
    EXPECT(0, dump.out, "", "-r", other, "dump");

    /* Into the same ring, from a file: the dump is exactly what the ring has, so
     * nothing is published; the node set and ids stay. */
    test_write_file(temp_file, dump.out);
    shmring_nodeset_t *before = nodeset_of(ring);
    EXPECT(0, test_fmt("ring '%s' already has this node set (2 nodes)\n", ring), "", "-r",
           ring, "load", temp_file);
    ck_assert_uint_eq(generation_of(ring), 6);
    EXPECT(0, dump.out, "", "-r", ring, "dump");
    shmring_nodeset_t *after = nodeset_of(ring);
    ck_assert_uint_eq(node_of(after, "b").id, node_of(before, "b").id);
    ck_assert_uint_eq(node_of(after, "c").id, node_of(before, "c").id);
    shmring_snapshot_t *old = snapshot_of(other), *now = snapshot_of(ring);
    shmring_snapshot_info_t old_info, now_info;
    shmring_snapshot_info(old, &old_info);
    shmring_snapshot_info(now, &now_info);
    ck_assert_int_eq(now_info.params.algorithm, SHMRING_ALGORITHM_MAGLEV);
    ck_assert_uint_eq(now_info.params.table_size, 131071);
    ck_assert_msg(strstr(dump.out, "\"table_size\": 131071") != NULL, "%s", dump.out);
    ck_assert_int_eq(now_info.params.hash, SHMRING_HASH_CRC32);
    ck_assert_mem_eq(&old_info.params, &now_info.params, sizeof(old_info.params));
    ck_assert_uint_eq(old_info.node_count, 2);
    ck_assert_uint_eq(old_info.up_count, 1);
    shmring_snapshot_free(old);
    shmring_snapshot_free(now);
    shmring_nodeset_free(before);
    shmring_nodeset_free(after);
    test_run_free(&dump);
}
END_TEST

/* check: 0 when the ring holds exactly the file's node set (as load would leave
 * it), 1 with one line per difference, 2 on error; it never changes the ring. */
START_TEST(test_check)
{
    make_ring();
    /* Ids and parameters the file leaves out are the ring's, as for load. */
    test_write_file(temp_file,
                    "{\"nodes\": [\n"
                    "  {\"name\": \"node-a\", \"address\": \"10.0.0.1:11211\"},\n"
                    "  {\"name\": \"node-b\", \"address\": \"10.0.0.2:11211\", "
                    "\"weight\": 3}\n"
                    "]}\n");
    EXPECT(0, "", "", "-r", ring, "check", temp_file);
    test_write_file(temp_file, "{\"algorithm\": \"maglev\", \"nodes\": [\n"
                               "  {\"name\": \"node-c\", \"address\": \"10.0.0.3:1\"},\n"
                               "  {\"name\": \"node-b\", \"id\": 7, \"address\": "
                               "\"10.0.0.2:11211\", \"state\": \"down\"}\n"
                               "]}\n");
    EXPECT(1,
           "params: algorithm ring -> maglev\n"
           "missing node-c: address 10.0.0.3:1, weight 1, state up, id 8\n"
           "changed node-b: weight 3 -> 1, state up -> down, id 1 -> 7\n"
           "extra node-a: address 10.0.0.1:11211, weight 1, state up, id 0\n",
           "", "-r", ring, "check", temp_file);
    /* `ring` orders its nodes by key and name, never by node-set order: the same
     * nodes in another order are the same ring (and show the same fingerprint). */
    struct test_run r;
    RUN_INPUT(&r,
              "{\"nodes\": [{\"name\": \"node-b\", \"address\": \"10.0.0.2:11211\", "
              "\"weight\": 3}, {\"name\": \"node-a\", \"address\": "
              "\"10.0.0.1:11211\"}]}",
              "-r", ring, "check", "-");
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, "");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    ck_assert_uint_eq(generation_of(ring), 3);

    /* A hash key and envoy-ring's ring sizes are differences too. */
    test_write_file(
        temp_file,
        "{\"algorithm\": \"envoy-ring\", \"min_ring_size\": 12, \"nodes\": [\n"
        "  {\"name\": \"node-a\", \"address\": \"10.0.0.1:11211\", \"hash_key\": "
        "\"k\"},\n"
        "  {\"name\": \"node-b\", \"address\": \"10.0.0.2:11211\", \"weight\": 3}\n"
        "]}\n");
    EXPECT(1,
           "params: algorithm ring -> envoy-ring, hash xxh3 -> xxh64, min_ring_size 0 -> "
           "12\n"
           "changed node-a: hash_key (none) -> k\n",
           "", "-r", ring, "check", temp_file);

    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"x\", \"weight\": 0}]}");
    EXPECT(
        2, "",
        test_fmt(
            "ringctl: error: %s: nodes[0].weight: must be an integer from 1 to 65535\n",
            temp_file),
        "-r", ring, "check", temp_file);
    EXPECT(2, "",
           test_fmt("ringctl: error: cannot read ring '%s': no such ring\n", other), "-r",
           other, "check", temp_file);
    EXPECT(2, "",
           "ringctl: error: cannot read '/nonexistent/x.json': No such file or "
           "directory\n",
           "-r", ring, "check", "/nonexistent/x.json");

    /* Under ketama, whose equal points go to the earlier up server, the up nodes'
     * order is a difference; where a down node stands is not. */
    test_write_file(temp_file,
                    "{\"algorithm\": \"ketama\", \"nodes\": [\n"
                    "  {\"name\": \"node-a\", \"address\": \"10.0.0.1:11211\"},\n"
                    "  {\"name\": \"node-b\", \"address\": \"10.0.0.2:11211\"},\n"
                    "  {\"name\": \"node-c\", \"address\": \"10.0.0.3:11211\", "
                    "\"state\": \"down\"}\n"
                    "]}\n");
    RUN(&r, "-r", ring, "load", temp_file);
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    ck_assert_uint_eq(generation_of(ring), 4);
    test_write_file(temp_file,
                    "{\"algorithm\": \"ketama\", \"nodes\": [\n"
                    "  {\"name\": \"node-b\", \"address\": \"10.0.0.2:11211\"},\n"
                    "  {\"name\": \"node-a\", \"address\": \"10.0.0.1:11211\"},\n"
                    "  {\"name\": \"node-c\", \"address\": \"10.0.0.3:11211\", "
                    "\"state\": \"down\"}\n"
                    "]}\n");
    EXPECT(1, "order: the ring holds the nodes in another order\n", "", "-r", ring,
           "check", temp_file);
    test_write_file(temp_file,
                    "{\"algorithm\": \"ketama\", \"nodes\": [\n"
                    "  {\"name\": \"node-a\", \"address\": \"10.0.0.1:11211\"},\n"
                    "  {\"name\": \"node-c\", \"address\": \"10.0.0.3:11211\", "
                    "\"state\": \"down\"},\n"
                    "  {\"name\": \"node-b\", \"address\": \"10.0.0.2:11211\"}\n"
                    "]}\n");
    EXPECT(0, "", "", "-r", ring, "check", temp_file);
    EXPECT(0, test_fmt("ring '%s' already has this node set (3 nodes)\n", ring), "", "-r",
           ring, "load", temp_file);
    ck_assert_uint_eq(generation_of(ring), 4);
}
END_TEST

START_TEST(test_list)
{
    /* A private ring directory: other tests running meanwhile make rings in /dev/shm
     * that this user may not read, and list would warn about them. */
    ck_assert_int_eq(setenv("SHMRING_DIR", make_ring_directory(), 1), 0);
    make_ring();
    EXPECT(0, test_fmt("created ring '%s' (ketama, md5): generation 1\n", other), "",
           "-r", other, "init", "--algorithm", "ketama");
    struct test_run r;
    RUN(&r, "list");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    /* Ours each once, as a whole line. */
    char *line = strstr(r.out, test_fmt("%s\t3\t2\tring\n", ring));
    ck_assert_msg(line != NULL && (line == r.out || line[-1] == '\n'), "%s", r.out);
    line = strstr(r.out, test_fmt("%s\t1\t0\tketama\n", other));
    ck_assert_msg(line != NULL && (line == r.out || line[-1] == '\n'), "%s", r.out);
    test_run_free(&r);

    RUN(&r, "list", "--json");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    json_t *root = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(root);
    bool found = false;
    for (size_t i = 0; i < json_array_size(root); i++) {
        json_t *entry = json_array_get(root, i);
        if (strcmp(json_string_value(json_object_get(entry, "ring")), ring) != 0)
            continue;
        ck_assert(!found);
        found = true;
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "generation")), 3);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "nodes")), 2);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "up")), 2);
        ck_assert_str_eq(json_string_value(json_object_get(entry, "algorithm")), "ring");
    }
    ck_assert(found);
    json_decref(root);
    test_run_free(&r);
}
END_TEST

START_TEST(test_lookup_stdin_follows_changes)
{
    make_ring();
    struct test_child c = test_child_start(
        (const char *const[]){"-r", ring, "lookup", "--stdin", NULL}, (uid_t)-1);
    const char *key = "user:4711";

    char first[512];
    snprintf(first, sizeof(first), "%s", ask(&c, key));
    ck_assert_str_eq(first, owner_line(key));
    bool on_a = strncmp(first, "user:4711\tnode-a\t", 17) == 0;
    const char *owner = on_a ? "node-a" : "node-b";
    const char *survivor = on_a ? "node-b" : "node-a";

    /* The owner goes down: the key must move to the other node. */
    EXPECT(0,
           test_fmt("marked %s (id %d) down in ring '%s': generation 4\n", owner,
                    on_a ? 0 : 1, ring),
           "", "-r", ring, "down", owner);
    ck_assert_str_eq(ask(&c, key),
                     test_fmt("%s\t%s\t10.0.0.%d:11211\n", key, survivor, on_a ? 2 : 1));

    /* A new node is added and the survivor goes down: the new node is the only one. */
    EXPECT(0, test_fmt("added node-c (id 2) to ring '%s': generation 5\n", ring), "",
           "-r", ring, "add", "node-c", "10.0.0.3:11211");
    EXPECT(0,
           test_fmt("marked %s (id %d) down in ring '%s': generation 6\n", survivor,
                    on_a ? 1 : 0, ring),
           "", "-r", ring, "down", survivor);
    ck_assert_str_eq(ask(&c, key), test_fmt("%s\tnode-c\t10.0.0.3:11211\n", key));
    ck_assert_str_eq(ask(&c, "another"), "another\tnode-c\t10.0.0.3:11211\n");

    /* The original owner comes back up. */
    EXPECT(0,
           test_fmt("marked %s (id %d) up in ring '%s': generation 7\n", owner,
                    on_a ? 0 : 1, ring),
           "", "-r", ring, "up", owner);
    ck_assert_str_eq(ask(&c, key), owner_line(key));

    /* End of input ends the command successfully, having said nothing on stderr. */
    close(c.in);
    char rest[256];
    ck_assert_int_eq(read(c.out, rest, sizeof(rest)), 0);
    ck_assert_int_eq(read(c.err, rest, sizeof(rest)), 0);
    close(c.out);
    close(c.err);
    ck_assert_int_eq(test_child_wait(&c), 0);
}
END_TEST

START_TEST(test_lookup_stdin_json)
{
    make_ring();
    struct test_child c = test_child_start(
        (const char *const[]){"--json", "lookup", "-r", ring, "-n", "2", "--stdin", NULL},
        (uid_t)-1);
    shmring_t *reader;
    ck_assert_int_eq(shmring_open(ring, &reader), 0);
    shmring_node_t nodes[2];
    ck_assert_int_eq(shmring_lookup_n(reader, "q", 1, nodes, 2), 2);
    shmring_close(reader);
    ck_assert_str_eq(
        ask(&c, "q"),
        test_fmt("{\"key\":\"q\",\"key_base64\":null,\"nodes\":[{\"id\":%" PRIu32
                 ",\"name\":\"%s\",\"address\":\"%s\",\"weight\":%" PRIu32
                 "},{\"id\":%" PRIu32 ",\"name\":\"%s\",\"address\":\"%s\","
                 "\"weight\":%" PRIu32 "}],\"error\":null}\n",
                 nodes[0].id, nodes[0].name, nodes[0].address, nodes[0].weight,
                 nodes[1].id, nodes[1].name, nodes[1].address, nodes[1].weight));
    close(c.in);
    close(c.out);
    close(c.err);
    ck_assert_int_eq(test_child_wait(&c), 0);
}
END_TEST

/*
 * Keys with control bytes, backslashes and bytes that are not UTF-8 are printed
 * escaped as --help documents, so that an answer is always one line of three
 * fields; --json carries them exactly (as a string, or in base64 when not UTF-8).
 */
START_TEST(test_lookup_escaping)
{
    make_ring();
    static const char *const keys[][3] = {
        /* key, as printed, and in JSON as "key" (NULL) or "key_base64" */
        {"tab\there", "tab\\there", NULL},
        {"cr\rhere", "cr\\rhere", NULL},
        {"lf\nhere", "lf\\nhere", NULL},
        {"back\\slash", "back\\\\slash", NULL},
        {"\\t", "\\\\t", NULL},
        {"\x01start", "\\x01start", NULL},
        {"del\x7f", "del\\x7f", NULL},
        {"esc\x1b[31m", "esc\\x1b[31m", NULL},
        {"caf\xc3\xa9", "caf\xc3\xa9", NULL},
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", NULL},
        {"c1\xc2\x85", "c1\\xc2\\x85", NULL},
        {"bad\xe9", "bad\\xe9", "YmFk6Q=="},
        {"\xed\xa0\x80", "\\xed\\xa0\\x80", "7aCA"},
        {"\xc0\xaf", "\\xc0\\xaf", "wK8="},
        {"\xe2\x82", "\\xe2\\x82", "4oI="},
    };
    const size_t count = sizeof(keys) / sizeof(keys[0]);
    for (size_t i = 0; i < count; i++) {
        EXPECT(0, answer_line(keys[i][0], keys[i][1]), "", "-r", ring, "lookup", "--",
               keys[i][0]);
        struct test_run r;
        RUN(&r, "-r", ring, "--json", "lookup", "--", keys[i][0]);
        ck_assert_str_eq(r.err, "");
        ck_assert_int_eq(r.status, 0);
        json_error_t error;
        json_t *root = json_loads(r.out, 0, &error);
        ck_assert_msg(root != NULL, "%s: %s", error.text, r.out);
        if (keys[i][2] == NULL) {
            json_t *key = json_object_get(root, "key");
            ck_assert_uint_eq(json_string_length(key), strlen(keys[i][0]));
            ck_assert_mem_eq(json_string_value(key), keys[i][0], strlen(keys[i][0]));
            ck_assert(json_is_null(json_object_get(root, "key_base64")));
        } else {
            ck_assert_str_eq(json_string_value(json_object_get(root, "key_base64")),
                             keys[i][2]);
            ck_assert(json_is_null(json_object_get(root, "key")));
        }
        json_decref(root);
        test_run_free(&r);
    }
    /* The same through --stdin, one line each (a line cannot hold a LF). */
    char input[256] = "", expected[2048] = "";
    for (size_t i = 0; i < count; i++) {
        if (strchr(keys[i][0], '\n') != NULL)
            continue;
        strcat(input, test_fmt("%s\n", keys[i][0]));
        strcat(expected, answer_line(keys[i][0], keys[i][1]));
    }
    struct test_run r;
    RUN_INPUT(&r, input, "-r", ring, "lookup", "--stdin");
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, expected);
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
}
END_TEST

/* Ends a co-process: end of input, then nothing more on stdout or stderr, exit 0. */
static void finish_coprocess(struct test_child *c)
{
    close(c->in);
    char *out = read_all(c->out), *err = read_all(c->err);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
    close(c->out);
    close(c->err);
    ck_assert_int_eq(test_child_wait(c), 0);
}

/*
 * lookup --stdin as a co-process never quits on a key it cannot route: fed an empty
 * ring, an all-down ring and a ring destroyed under it, it answers every line (the
 * documented error form "KEY, empty field, reason"), follows each new generation, and
 * follows the ring re-created under the same name by the same owner.
 */
START_TEST(test_lookup_stdin_never_quits)
{
    const char *no_nodes = "k\t\tring has no nodes\n";
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    struct test_child c = test_child_start(
        (const char *const[]){"-r", ring, "lookup", "--stdin", NULL}, (uid_t)-1);
    ck_assert_str_eq(ask(&c, "k"), no_nodes);
    ck_assert_str_eq(ask(&c, "k"), no_nodes);
    EXPECT(0, test_fmt("added n (id 0) to ring '%s': generation 2\n", ring), "", "-r",
           ring, "add", "n", "n:1");
    ck_assert_str_eq(ask(&c, "k"), "k\tn\tn:1\n");
    EXPECT(0, test_fmt("marked n (id 0) down in ring '%s': generation 3\n", ring), "",
           "-r", ring, "down", "n");
    ck_assert_str_eq(ask(&c, "k"), "k\t\tall nodes of the ring are down\n");
    EXPECT(0, test_fmt("marked n (id 0) up in ring '%s': generation 4\n", ring), "", "-r",
           ring, "up", "n");
    ck_assert_str_eq(ask(&c, "k"), "k\tn\tn:1\n");

    /* Destroyed: the last version keeps answering, as every reader's does. */
    EXPECT(0, test_fmt("destroyed ring '%s'\n", ring), "", "-r", ring, "destroy");
    ck_assert_str_eq(ask(&c, "k"), "k\tn\tn:1\n");
    ck_assert_str_eq(ask(&c, "j"), "j\tn\tn:1\n");

    /* Re-created by the same owner: followed. The library retries a ring it could not
     * open at most every 100 ms, so the first answers may still be the old version:
     * ask until the new one answers (each question a full round trip, no sleep). */
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    int64_t deadline = test_now_ms() + ANSWER_TIMEOUT_MS;
    const char *answer;
    while (strcmp(answer = ask(&c, "k"), no_nodes) != 0) {
        ck_assert_str_eq(answer, "k\tn\tn:1\n");
        ck_assert_msg(test_now_ms() < deadline, "the re-created ring was not followed");
    }
    EXPECT(0, test_fmt("added m (id 0) to ring '%s': generation 2\n", ring), "", "-r",
           ring, "add", "m", "m:1");
    ck_assert_str_eq(ask(&c, "k"), "k\tm\tm:1\n");

    /* With --json the error form is the same object with "error" set. */
    finish_coprocess(&c);
    EXPECT(0, test_fmt("marked m (id 0) down in ring '%s': generation 3\n", ring), "",
           "-r", ring, "down", "m");
    c = test_child_start(
        (const char *const[]){"-r", ring, "--json", "lookup", "--stdin", NULL},
        (uid_t)-1);
    ck_assert_str_eq(ask(&c, "k"), "{\"key\":\"k\",\"key_base64\":null,\"nodes\":[],"
                                   "\"error\":\"all nodes of the ring are down\"}\n");
    finish_coprocess(&c);
}
END_TEST

/* -z: keys end in NUL, so a key may hold a newline; answers end in NUL, escaped as
 * in line mode. */
/* Writes LEN bytes of BYTE to FD (a pipe), reading what comes back on OUT meanwhile
 * into *TEXT so that neither side blocks. */
static void feed(int fd, char byte, size_t len, int out, char **text, size_t *text_len)
{
    char chunk[65536];
    memset(chunk, byte, sizeof(chunk));
    while (len > 0) {
        struct pollfd fds[2] = {{.fd = fd, .events = POLLOUT},
                                {.fd = out, .events = POLLIN}};
        int ready = poll(fds, 2, -1);
        if (ready < 0 && errno == EINTR)
            continue;
        ck_assert_int_gt(ready, 0);
        if (fds[1].revents != 0)
            ck_assert_msg(test_drain(out, text, text_len), "lookup --stdin exited early");
        if (fds[0].revents == 0)
            continue;
        ssize_t n = write(fd, chunk, len < sizeof(chunk) ? len : sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_int_gt(n, 0);
        len -= (size_t)n;
    }
}

/* A key longer than 64 KiB is answered with an error record quoting its first 64
 * bytes, and the keys after it are answered: a 600 MB line under a 500,000 KiB
 * address-space limit (as `ulimit -v 500000`), which getdelim() could not hold. The
 * test is the generator: it writes the line through the pipe, never to disk. */
START_TEST(test_lookup_stdin_long_key)
{
    make_ring();
    struct test_spawn how = test_spawn_default;
    /* AddressSanitizer reserves terabytes of shadow memory: no limit then. */
    how.address_space = TEST_ASAN ? 0 : (size_t)500000 * 1024;
    struct test_child c = test_child_start_with(
        (const char *const[]){"-r", ring, "lookup", "--stdin", NULL}, &how);
    char *out = calloc(1, 1);
    size_t out_len = 0;
    const struct {
        char byte;
        size_t len;
    } lines[] = {{'x', (size_t)600 * 1000 * 1000}, {'y', 65536}, {'z', 65537}};
    static char expected[2 * 65536];
    strcpy(expected, owner_line("first"));
    ck_assert_int_eq(write(c.in, "first\n", 6), 6);
    for (size_t i = 0; i < COUNT_OF(lines); i++) {
        feed(c.in, lines[i].byte, lines[i].len, c.out, &out, &out_len);
        feed(c.in, '\n', 1, c.out, &out, &out_len);
        static char key[65536 + 1];
        size_t quoted = lines[i].len > 65536 ? 64 : lines[i].len;
        memset(key, lines[i].byte, quoted);
        key[quoted] = '\0';
        if (lines[i].len > 65536) {
            strcat(expected, key);
            strcat(expected, "\t\tkey longer than 65536 bytes\n");
            continue;
        }
        /* The longest key allowed is looked up like any other. */
        shmring_t *reader;
        ck_assert_int_eq(shmring_open(ring, &reader), 0);
        shmring_node_t node;
        ck_assert_int_eq(shmring_lookup(reader, key, quoted, &node), 0);
        shmring_close(reader);
        strcat(expected, key);
        strcat(expected, test_fmt("\t%s\t%s\n", node.name, node.address));
    }
    ck_assert_int_eq(write(c.in, "after\nlast", 10), 10);
    strcat(expected, owner_line("after"));
    strcat(expected, owner_line("last"));
    close(c.in);
    while (test_drain(c.out, &out, &out_len))
        ;
    char *err = read_all(c.err);
    ck_assert_str_eq(err, "");
    ck_assert_str_eq(out, expected);
    ck_assert_int_eq(test_child_wait(&c), 0);
    free(err);
    free(out);
    close(c.out);
    close(c.err);
}
END_TEST

/* A read error ends the stream with its own line and exit status 1, never 0. The
 * stdio reader reported read() errors too (ferror()); what it took for the end of
 * input, exit 0, was getdelim()'s ENOMEM on a long line, which
 * test_lookup_stdin_long_key feeds. */
START_TEST(test_lookup_stdin_read_error)
{
    make_ring();
    /* read() on a directory fails with EISDIR. */
    struct test_spawn how = test_spawn_default;
    how.stdin_path = "/";
    struct test_child c = test_child_start_with(
        (const char *const[]){"-r", ring, "lookup", "--stdin", NULL}, &how);
    char *out = read_all(c.out), *err = read_all(c.err);
    ck_assert_str_eq(err, "ringctl: error: cannot read standard input: Is a directory\n");
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(test_child_wait(&c), 1);
    free(out);
    free(err);
    close(c.out);
    close(c.err);
}
END_TEST

START_TEST(test_lookup_nul_delimited)
{
    make_ring();
    struct test_child c = test_child_start(
        (const char *const[]){"-r", ring, "lookup", "-z", "--stdin", NULL}, (uid_t)-1);
    const char *key = "two\nlines";
    const char *line = answer_line(key, "two\\nlines");
    char expected[512];
    snprintf(expected, sizeof(expected), "%.*s", (int)strlen(line) - 1, line);
    const char *answer = ask_record(&c, key, strlen(key), '\0');
    ck_assert_str_eq(answer, expected);
    /* One NUL ends the record, no newline. */
    line = answer_line("plain", "plain");
    snprintf(expected, sizeof(expected), "%.*s", (int)strlen(line) - 1, line);
    ck_assert_str_eq(ask_record(&c, "plain", 5, '\0'), expected);
    finish_coprocess(&c);

    /* Keys on the command line: answers end in NUL too. */
    struct test_run r;
    RUN(&r, "-r", ring, "lookup", "-z", "plain");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, expected); /* the NUL ends the captured string */
    test_run_free(&r);
}
END_TEST

static Suite *ringctl_read_suite(void)
{
    Suite *suite = suite_create("ringctl_read");

    TEST_CASE_WITH(suite, "core", &ringctl_fixture, test_show, test_show_maglev,
                   test_envoy_and_hash_key, test_lookup, test_lookup_stdin, test_dump,
                   test_dump_load_round_trip, test_check, test_list);
    TEST_CASE_WITH(suite, "live", &ringctl_fixture, test_lookup_stdin_follows_changes,
                   test_lookup_stdin_json, test_lookup_stdin_never_quits,
                   test_lookup_nul_delimited, test_lookup_stdin_long_key,
                   test_lookup_stdin_read_error);
    TEST_CASE_WITH(suite, "hygiene", &ringctl_fixture, test_lookup_escaping);
    return suite;
}

int main(void)
{
    /* A broken pipe to a ringctl that exited is reported by write(), not fatal. */
    signal(SIGPIPE, SIG_IGN);
    return test_run_suite(ringctl_read_suite());
}
