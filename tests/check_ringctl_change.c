/*
 * End-to-end tests of ringctl (tools/ringctl/), the commands that change a ring: init,
 * load, add, remove, weight, down, up and destroy, with their --json reports and
 * --dry-run. Each test runs the built binary (TEST_RINGCTL) with fork and exec, captures
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

START_TEST(test_init_defaults)
{
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    shmring_ring_status_t status = status_of(ring);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_uint_eq(status.publish_count, 1);
    ck_assert_uint_eq(status.mode, 0644);
    ck_assert_uint_eq(status.owner, geteuid());
    shmring_snapshot_t *buffer = snapshot_of(ring);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(buffer, &info);
    ck_assert_int_eq(info.params.algorithm, SHMRING_ALGORITHM_RING);
    ck_assert_int_eq(info.params.hash, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(info.params.vnodes, SHMRING_DEFAULT_VNODES);
    ck_assert_uint_eq(info.node_count, 0);
    shmring_snapshot_free(buffer);
}
END_TEST

START_TEST(test_init_parameters)
{
    char group[32];
    snprintf(group, sizeof(group), "%lu", (unsigned long)getegid());
    EXPECT(
        0,
        test_fmt("created ring '%s' (maglev, murmur3, table size 65537): generation 1\n",
                 ring),
        "", "-r", ring, "init", "--algorithm", "maglev", "--hash", "murmur3",
        "--table-size", "65537", "--mode", "0640", "--group", group);
    shmring_ring_status_t status = status_of(ring);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_uint_eq(status.mode, 0640);
    ck_assert_uint_eq(status.group, getegid());
    struct stat st;
    ck_assert_int_eq(stat(test_object_path(ring, "control"), &st), 0);
    ck_assert_uint_eq(st.st_gid, getegid());
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    /* The group may enter the ring's directory and read; nobody else may. */
    ck_assert_int_eq(stat(test_ring_path(ring), &st), 0);
    ck_assert_uint_eq(st.st_gid, getegid());
    ck_assert_uint_eq(st.st_mode & 07777, 0750);
    shmring_snapshot_t *buffer = snapshot_of(ring);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(buffer, &info);
    ck_assert_int_eq(info.params.algorithm, SHMRING_ALGORITHM_MAGLEV);
    ck_assert_int_eq(info.params.hash, SHMRING_HASH_MURMUR3);
    shmring_snapshot_free(buffer);
    /* The table size is kept although the ring has no nodes to fill a table yet. */
    shmring_nodeset_t *set = nodeset_of(ring);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    ck_assert_uint_eq(params.table_size, 65537);
    shmring_nodeset_free(set);

    /* Ketama without --hash takes MD5, its only hash; --vnodes is kept. */
    EXPECT(0, test_fmt("created ring '%s' (ketama, md5): generation 1\n", other), "",
           "init", "--vnodes", "40", "-r", other, "--algorithm", "ketama");
    buffer = snapshot_of(other);
    shmring_snapshot_info(buffer, &info);
    ck_assert_int_eq(info.params.algorithm, SHMRING_ALGORITHM_KETAMA);
    ck_assert_int_eq(info.params.hash, SHMRING_HASH_MD5);
    ck_assert_uint_eq(info.params.vnodes, 40);
    shmring_snapshot_free(buffer);
}
END_TEST

START_TEST(test_add_and_remove)
{
    make_ring();
    shmring_nodeset_t *set = nodeset_of(ring);
    ck_assert_uint_eq(shmring_nodeset_count(set), 2);
    shmring_node_info_t a = node_of(set, "node-a"), b = node_of(set, "node-b");
    ck_assert_uint_eq(a.id, 0);
    ck_assert_str_eq(a.address, "10.0.0.1:11211");
    ck_assert_uint_eq(a.weight, 1);
    ck_assert_int_eq(a.state, SHMRING_STATE_UP);
    ck_assert_uint_eq(b.id, 1);
    ck_assert_uint_eq(b.weight, 3);
    shmring_nodeset_free(set);

    EXPECT(0, test_fmt("removed node-a (id 0) from ring '%s': generation 4\n", ring), "",
           "-r", ring, "remove", "node-a");
    ck_assert_uint_eq(generation_of(ring), 4);
    set = nodeset_of(ring);
    ck_assert_uint_eq(shmring_nodeset_count(set), 1);
    size_t index;
    ck_assert_int_eq(shmring_nodeset_find(set, "node-a", &index), SHMRING_ENODE);
    shmring_nodeset_free(set);

    /* Ids are never reused: node-a comes back with a new one. */
    EXPECT(0, test_fmt("added node-a (id 2) to ring '%s': generation 5\n", ring), "",
           "-r", ring, "add", "--weight", "65535", "node-a", "10.0.0.9:1");
    ck_assert_uint_eq(generation_of(ring), 5);
    set = nodeset_of(ring);
    a = node_of(set, "node-a");
    ck_assert_uint_eq(a.id, 2);
    ck_assert_uint_eq(a.weight, 65535);
    ck_assert_str_eq(a.address, "10.0.0.9:1");
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_weight_down_up)
{
    make_ring();
    EXPECT(0,
           test_fmt(
               "changed weight of node-a (id 0) from 1 to 7 in ring '%s': generation 4\n",
               ring),
           "", "-r", ring, "weight", "node-a", "7");
    ck_assert_uint_eq(generation_of(ring), 4);
    EXPECT(0, test_fmt("marked node-a (id 0) down in ring '%s': generation 5\n", ring),
           "", "-r", ring, "down", "node-a");
    ck_assert_uint_eq(generation_of(ring), 5);
    shmring_nodeset_t *set = nodeset_of(ring);
    shmring_node_info_t a = node_of(set, "node-a");
    ck_assert_uint_eq(a.weight, 7);
    ck_assert_int_eq(a.state, SHMRING_STATE_DOWN);
    shmring_nodeset_free(set);

    /* Asking for what already is changes nothing and publishes nothing. */
    struct saved_ring saved = save_ring(ring);
    EXPECT(0, "node 'node-a' is already down\n", "", "-r", ring, "down", "node-a");
    EXPECT(0, "node 'node-a' already has weight 7\n", "", "-r", ring, "weight", "node-a",
           "7");
    assert_ring_unchanged(ring, &saved);

    EXPECT(0, test_fmt("marked node-a (id 0) up in ring '%s': generation 6\n", ring), "",
           "-r", ring, "up", "node-a");
    ck_assert_uint_eq(generation_of(ring), 6);
    saved = save_ring(ring);
    EXPECT(0, "node 'node-a' is already up\n", "", "-r", ring, "up", "node-a");
    assert_ring_unchanged(ring, &saved);
    set = nodeset_of(ring);
    ck_assert_int_eq(node_of(set, "node-a").state, SHMRING_STATE_UP);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_change_json)
{
    EXPECT(0,
           test_fmt(
               "{\"ring\":\"%s\",\"generation\":1,\"action\":\"init\",\"dry_run\":false,"
               "\"changed\":true,\"algorithm\":\"ring\",\"hash\":\"xxh3\",\"vnodes\":160,"
               "\"table_size\":0,\"moved_fraction\":null}\n",
               ring),
           "", "--json", "-r", ring, "init");
    EXPECT(
        0,
        test_fmt("{\"ring\":\"%s\",\"generation\":2,\"action\":\"add\",\"dry_run\":false,"
                 "\"changed\":true,\"node\":{\"id\":0,\"name\":\"n\xc3\xa9\",\"address\":"
                 "\"a:1\",\"weight\":2,\"state\":\"up\"},\"moved_fraction\":null}\n",
                 ring),
        "", "-r", ring, "add", "n\xc3\xa9", "a:1", "--weight", "2", "--json");
    EXPECT(
        0,
        test_fmt("{\"ring\":\"%s\",\"generation\":2,\"action\":\"down\",\"dry_run\":true,"
                 "\"changed\":true,\"node\":{\"id\":0,\"name\":\"n\xc3\xa9\",\"address\":"
                 "\"a:1\","
                 "\"weight\":2,\"state\":\"down\"},\"moved_fraction\":1.0}"
                 "\n",
                 ring),
        "", "-r", ring, "down", "n\xc3\xa9", "--json", "--dry-run");
    EXPECT(0,
           test_fmt(
               "{\"ring\":\"%s\",\"generation\":3,\"action\":\"down\",\"dry_run\":false,"
               "\"changed\":true,\"node\":{\"id\":0,\"name\":\"n\xc3\xa9\",\"address\":"
               "\"a:1\",\"weight\":2,\"state\":\"down\"},\"moved_fraction\":null}\n",
               ring),
           "", "-r", ring, "down", "n\xc3\xa9", "--json");
    EXPECT(0,
           test_fmt(
               "{\"ring\":\"%s\",\"generation\":3,\"action\":\"down\",\"dry_run\":false,"
               "\"changed\":false,\"node\":{\"id\":0,\"name\":\"n\xc3\xa9\",\"address\":"
               "\"a:1\",\"weight\":2,\"state\":\"down\"},\"moved_fraction\":null}\n",
               ring),
           "", "-r", ring, "down", "n\xc3\xa9", "--json");
    /* A name that is not UTF-8 is refused (JSON could not carry it), and echoed with
     * '?' for the byte a terminal could misread. */
    EXPECT(2, "",
           "ringctl: error: invalid node name 'x?': it must have 1 to 255 bytes of "
           "UTF-8 and no control characters\n",
           "-r", ring, "add", "x\xff", "b:1", "--json");
    /* A C1 control (CSI, U+009B) is valid UTF-8 but no printable text either. */
    EXPECT(2, "",
           "ringctl: error: invalid node name 'a??31m': it must have 1 to 255 bytes of "
           "UTF-8 and no control characters\n",
           "-r", ring, "add",
           "a\xc2\x9b"
           "31m",
           "b:1");
}
END_TEST

/* The moved share that --dry-run must report: the library's (tested in check_keyspace)
 * between the current version and EXPECTED_SET's snapshot. */
static double expected_moved(const shmring_snapshot_t *before,
                             const shmring_nodeset_t *after_set)
{
    shmring_snapshot_t *after = test_snapshot(after_set);
    double share = -1.0;
    ck_assert_int_eq(shmring_snapshot_moved_share(before, after, &share), 0);
    shmring_snapshot_free(after);
    return share;
}

/* Ids a file gives are what load publishes, and dump writes them back. */
START_TEST(test_load_given_ids)
{
    make_ring();
    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"node-a\", \"id\": 40, "
                               "\"address\": \"10.0.0.1:11211\"}, {\"name\": \"node-b\", "
                               "\"address\": \"10.0.0.2:11211\", \"weight\": 3}, "
                               "{\"name\": \"node-c\"}]}");
    EXPECT(0,
           test_fmt("loaded 3 nodes into ring '%s' (1 added, 0 removed, 1 changed): "
                    "generation 4\n",
                    ring),
           "", "-r", ring, "load", temp_file);
    shmring_nodeset_t *set = nodeset_of(ring);
    ck_assert_uint_eq(node_of(set, "node-a").id, 40);
    ck_assert_uint_eq(node_of(set, "node-b").id, 1);
    ck_assert_uint_eq(node_of(set, "node-c").id, 41);
    shmring_nodeset_free(set);
    EXPECT(0, "", "", "-r", ring, "check", temp_file);
    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"node-a\", \"id\": 3}, "
                               "{\"name\": \"node-b\", \"id\": 3}]}");
    EXPECT(1, "",
           test_fmt("ringctl: error: %s: nodes[1].id: duplicate id 3 (nodes[0] has it)\n",
                    temp_file),
           "-r", ring, "load", temp_file);
    ck_assert_uint_eq(generation_of(ring), 4);
}
END_TEST

START_TEST(test_load_replaces_node_set)
{
    make_ring();
    /* node-a goes, node-b changes its weight, node-c is new and down. */
    test_write_file(temp_file,
                    "{\"nodes\": [\n"
                    "  {\"name\": \"node-c\", \"address\": \"10.0.0.3:1\", "
                    "\"state\": \"down\"},\n"
                    "  {\"name\": \"node-b\", \"address\": \"10.0.0.2:11211\", "
                    "\"weight\": 4}\n"
                    "]}\n");
    EXPECT(0,
           test_fmt("loaded 2 nodes into ring '%s' (1 added, 1 removed, 1 changed): "
                    "generation 4\n",
                    ring),
           "", "-r", ring, "load", temp_file);
    shmring_nodeset_t *set = nodeset_of(ring);
    ck_assert_uint_eq(shmring_nodeset_count(set), 2);
    shmring_node_info_t c = node_of(set, "node-c"), b = node_of(set, "node-b");
    ck_assert_uint_eq(b.id, 1); /* kept */
    ck_assert_uint_eq(b.weight, 4);
    ck_assert_uint_eq(c.id, 2); /* new: after every id the ring has used */
    ck_assert_int_eq(c.state, SHMRING_STATE_DOWN);
    shmring_node_info_t first;
    ck_assert_int_eq(shmring_nodeset_get(set, 0, &first), 0);
    ck_assert_str_eq(first.name, "node-c"); /* the file's order */
    shmring_nodeset_free(set);
    /* Parameters the file leaves out are the ring's. */
    shmring_snapshot_t *buffer = snapshot_of(ring);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(buffer, &info);
    ck_assert_int_eq(info.params.algorithm, SHMRING_ALGORITHM_RING);
    ck_assert_uint_eq(info.params.vnodes, 160);
    shmring_snapshot_free(buffer);

    /* --json */
    test_write_file(temp_file, "{\"vnodes\": 10, \"nodes\": [{\"name\": \"node-z\"}]}");
    EXPECT(
        0,
        test_fmt(
            "{\"ring\":\"%s\",\"generation\":5,\"action\":\"load\",\"dry_run\":false,"
            "\"changed\":true,\"nodes\":1,\"added\":1,\"removed\":2,\"changed_nodes\":0,"
            "\"params_changed\":true,\"moved_fraction\":null}\n",
            ring),
        "", "-r", ring, "load", temp_file, "--json");

    /* The same node set again publishes nothing, and so does the same node set in
     * another order under `ring`, whose answers never depend on node order. */
    EXPECT(0, test_fmt("ring '%s' already has this node set (1 node)\n", ring), "", "-r",
           ring, "load", temp_file);
    EXPECT(
        0,
        test_fmt(
            "{\"ring\":\"%s\",\"generation\":5,\"action\":\"load\",\"dry_run\":false,"
            "\"changed\":false,\"nodes\":1,\"added\":0,\"removed\":0,\"changed_nodes\":0,"
            "\"params_changed\":false,\"moved_fraction\":null}\n",
            ring),
        "", "-r", ring, "load", temp_file, "--json");
    ck_assert_uint_eq(generation_of(ring), 5);
    test_write_file(temp_file, "{\"vnodes\": 10, \"nodes\": [{\"name\": \"node-z\"}, "
                               "{\"name\": \"node-y\"}]}");
    EXPECT(0,
           test_fmt("loaded 2 nodes into ring '%s' (1 added, 0 removed, 0 changed): "
                    "generation 6\n",
                    ring),
           "", "-r", ring, "load", temp_file);
    test_write_file(temp_file, "{\"vnodes\": 10, \"nodes\": [{\"name\": \"node-y\"}, "
                               "{\"name\": \"node-z\"}]}");
    EXPECT(0, test_fmt("ring '%s' already has this node set (2 nodes)\n", ring), "", "-r",
           ring, "load", temp_file);
    ck_assert_uint_eq(generation_of(ring), 6);

    /* An empty node set is refused: it would route no key. */
    struct saved_ring saved = save_ring(ring);
    test_write_file(temp_file, "{\"nodes\": []}");
    EXPECT(
        1, "",
        test_fmt("ringctl: error: %s: nodes: the node set is empty; a ring without nodes "
                 "routes no key (to start over, use destroy and init)\n",
                 temp_file),
        "-r", ring, "load", temp_file);
    assert_ring_unchanged(ring, &saved);
}
END_TEST

START_TEST(test_destroy)
{
    make_ring();
    EXPECT(0, test_fmt("would destroy ring '%s' (generation 3)\n", ring), "", "-r", ring,
           "destroy", "--dry-run");
    ck_assert_uint_eq(generation_of(ring), 3);
    EXPECT(0, test_fmt("destroyed ring '%s'\n", ring), "", "-r", ring, "destroy");
    assert_ring_absent(ring);
    EXPECT(1, "",
           test_fmt("ringctl: error: cannot destroy ring '%s': no such ring\n", ring),
           "-r", ring, "destroy");
}
END_TEST

START_TEST(test_ring_from_environment)
{
    ck_assert_int_eq(setenv("SHMRING_RING", ring, 1), 0);
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "init");
    ck_assert_uint_eq(generation_of(ring), 1);
    /* -r wins over the environment. */
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", other),
           "", "init", "-r", other);
    ck_assert_uint_eq(generation_of(other), 1);
    EXPECT(0, test_fmt("added n (id 0) to ring '%s': generation 2\n", ring), "", "add",
           "n", "n:1");
    ck_assert_uint_eq(generation_of(ring), 2);
    ck_assert_uint_eq(generation_of(other), 1);
}
END_TEST

/* ---- dry-run ------------------------------------------------------------------------
 */

/* Runs a --dry-run command and checks it reports EXPECTED_SET's moved fraction. */
static void check_dry_run(const char *would, const shmring_nodeset_t *expected_set,
                          const char *const *args)
{
    struct saved_ring saved = save_ring(ring);
    shmring_snapshot_t *before = snapshot_of(ring);
    double fraction = expected_moved(before, expected_set);
    shmring_snapshot_free(before);
    ck_assert_double_gt(fraction, 0.0); /* a change that can tell moved from not */
    struct test_run r;
    test_run_as(&r, (uid_t)-1, NULL, args);
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, test_fmt("%s: %.2f%% of the keyspace would move\n", would,
                                     fraction * 100.0));
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    assert_ring_unchanged(ring, &saved);
}

START_TEST(test_dry_run)
{
    make_ring();
    shmring_nodeset_t *set = nodeset_of(ring);
    ck_assert_int_eq(shmring_nodeset_add(set, "node-c", "c:1", 1, SHMRING_STATE_UP, NULL),
                     0);
    check_dry_run(
        "would add node-c (id 2)", set,
        (const char *const[]){"--dry-run", "-r", ring, "add", "node-c", "c:1", NULL});
    shmring_nodeset_free(set);

    set = nodeset_of(ring);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-b", SHMRING_STATE_DOWN), 0);
    check_dry_run("would mark node-b (id 1) down", set,
                  (const char *const[]){"-r", ring, "down", "node-b", "--dry-run", NULL});
    shmring_nodeset_free(set);

    set = nodeset_of(ring);
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-a"), 0);
    check_dry_run(
        "would remove node-a (id 0)", set,
        (const char *const[]){"-r", ring, "--dry-run", "remove", "node-a", NULL});
    shmring_nodeset_free(set);

    set = nodeset_of(ring);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "node-a", 9), 0);
    check_dry_run(
        "would change weight of node-a (id 0) from 1 to 9", set,
        (const char *const[]){"-r", ring, "--dry-run", "weight", "node-a", "9", NULL});
    shmring_nodeset_free(set);

    test_write_file(
        temp_file,
        "{\"nodes\": [{\"name\": \"node-a\", \"address\": \"10.0.0.1:11211\"}]}");
    set = nodeset_of(ring);
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-b"), 0);
    check_dry_run(
        "would load 1 node (0 added, 1 removed, 0 changed)", set,
        (const char *const[]){"-r", ring, "--dry-run", "load", temp_file, NULL});
    shmring_nodeset_free(set);

    /* Nothing to do is said as without --dry-run. */
    EXPECT(0, "node 'node-a' is already up\n", "", "-r", ring, "up", "node-a",
           "--dry-run");

    /* init and load --dry-run create no ring. */
    EXPECT(0, test_fmt("would create ring '%s' (ring, xxh3, 160 vnodes)\n", other), "",
           "-r", other, "init", "--dry-run");
    EXPECT(0,
           "would load 1 node (1 added, 0 removed, 0 changed): 100.00% of the keyspace "
           "would move\n",
           "", "-r", other, "load", temp_file, "--dry-run");
    assert_ring_absent(other);
}
END_TEST

static Suite *ringctl_change_suite(void)
{
    Suite *suite = suite_create("ringctl_change");

    TEST_CASE_WITH(suite, "core", &ringctl_fixture, test_init_defaults,
                   test_init_parameters, test_add_and_remove, test_weight_down_up,
                   test_change_json, test_load_given_ids, test_load_replaces_node_set,
                   test_destroy, test_ring_from_environment);
    TEST_CASE_WITH(suite, "dry-run", &ringctl_fixture, test_dry_run);
    return suite;
}

int main(void)
{
    /* A broken pipe to a ringctl that exited is reported by write(), not fatal. */
    signal(SIGPIPE, SIG_IGN);
    return test_run_suite(ringctl_change_suite());
}
