/*
 * End-to-end tests of ringctl (tools/ringctl/): each test runs the built binary
 * (TEST_RINGCTL) with fork and exec, captures its stdout, stderr and exit status,
 * and checks them exactly, together with what the library then reads from the ring.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "test_support.h"

#if !defined(RINGCTL_SYNC_PATH) || !defined(RINGCTL_SYNC_HELPER_FROM_BINDIR) ||          \
    !defined(RINGCTL_NOHELPER_PATH) || !defined(RINGCTL_NOHELPER_SYNC_HELPER)
#error "tests/CMakeLists.txt names the sync helper and the ringctl built without one"
#endif

/* How long a test waits for one answer of `lookup --stdin`. */
#define ANSWER_TIMEOUT_MS 60000

/* ---- Rings of a test ------------------------------------------------------------- */

/* The test's rings: ring is the main one, other the second one some tests need. */
static char ring[SHMRING_RING_NAME_MAX + 1];
static char other[SHMRING_RING_NAME_MAX + 1];
static char temp_file[64];
/* A private ring directory that a test made with make_ring_directory() (empty:
 * none), and the directory that the helpers below read rings from (NULL: the
 * default). */
static char temp_dir[64];
static const char *ring_dir;

static void setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("ctl"));
    snprintf(other, sizeof(other), "%s", test_ring_name("ctl"));
    snprintf(temp_file, sizeof(temp_file), "/tmp/check_ringctl-%ld.json", (long)getpid());
    temp_dir[0] = '\0';
    ring_dir = NULL;
    unsetenv("SHMRING_RING");
    unsetenv("SHMRING_DIR");
}

/* Open options that read rings from ring_dir. */
static const shmring_open_options_t *read_options(void)
{
    static shmring_open_options_t options;
    options = (shmring_open_options_t){.directory = ring_dir};
    return &options;
}

/* Makes temp_dir, a new private ring directory, and points the helpers at it. */
static const char *make_ring_directory(void)
{
    snprintf(temp_dir, sizeof(temp_dir), "/tmp/check_ringctl-%ld-XXXXXX", (long)getpid());
    ck_assert_ptr_nonnull(mkdtemp(temp_dir));
    ring_dir = temp_dir;
    return temp_dir;
}

/* Fails the test if the ring directory in use holds anything of RING_NAME: its
 * directory, or one being created or destroyed. */
static void assert_no_objects(const char *ring_name)
{
    if (ring_dir == NULL)
        ck_assert_msg(test_ring_entries(ring_name) == 0, "left behind: %s",
                      test_ring_path(ring_name));
    else
        ck_assert_int_eq(access(test_fmt("%s/shmring.%s", ring_dir, ring_name), F_OK),
                         -1);
}

static void teardown(void)
{
    unlink(temp_file);
    shmring_writer_options_t options;
    shmring_writer_options_default(&options);
    options.directory = ring_dir;
    const char *rings[] = {ring, other};
    for (size_t i = 0; i < 2; i++) {
        int err = shmring_ring_destroy(rings[i], &options);
        ck_assert_msg(err == 0 || err == SHMRING_ENOENT, "destroy %s: %s", rings[i],
                      shmring_strerror(err));
        assert_no_objects(rings[i]);
    }
    if (temp_dir[0] != '\0') {
        /* Destroyed rings leave nothing behind, not even hidden entries. */
        ck_assert_int_eq(test_count_entries(temp_dir), 0);
        ck_assert_int_eq(rmdir(temp_dir), 0);
    }
}

static shmring_ring_status_t status_of(const char *ring_name)
{
    shmring_ring_status_t status;
    ck_assert_int_eq(shmring_ring_status(ring_name, read_options(), &status), 0);
    return status;
}

/* The library's answer about RING_NAME: 0 or why it cannot be read. */
static int status_error(const char *ring_name)
{
    shmring_ring_status_t status;
    return shmring_ring_status(ring_name, read_options(), &status);
}

static uint64_t generation_of(const char *ring_name)
{
    return status_of(ring_name).generation;
}

/* The current version of RING_NAME as a new snapshot; fails the test if there is none. */
static shmring_snapshot_t *snapshot_of(const char *ring_name)
{
    uint64_t generation;
    shmring_snapshot_t *snapshot;
    ck_assert_int_eq(
        shmring_ring_snapshot(ring_name, read_options(), &generation, &snapshot), 0);
    ck_assert_ptr_nonnull(snapshot);
    return snapshot;
}

static shmring_nodeset_t *nodeset_of(const char *ring_name)
{
    shmring_snapshot_t *buffer = snapshot_of(ring_name);
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_from_snapshot(buffer, &set), 0);
    shmring_snapshot_free(buffer);
    return set;
}

/* The node set of RING_NAME as JSON, written by the library (not by ringctl). */
static char *json_of(const char *ring_name)
{
    shmring_nodeset_t *set = nodeset_of(ring_name);
    char *text;
    ck_assert_int_eq(shmring_nodeset_to_json(set, &text), 0);
    shmring_nodeset_free(set);
    return text;
}

static shmring_node_info_t node_of(const shmring_nodeset_t *set, const char *name)
{
    size_t index;
    shmring_node_info_t node;
    ck_assert_int_eq(shmring_nodeset_find(set, name, &index), 0);
    ck_assert_int_eq(shmring_nodeset_get(set, index, &node), 0);
    return node;
}

/* What must not change when a command fails: the generation and the node set. */
struct saved_ring {
    uint64_t generation;
    uint64_t publish_count;
    char *json;
};

static struct saved_ring save_ring(const char *ring_name)
{
    shmring_ring_status_t status = status_of(ring_name);
    return (struct saved_ring){.generation = status.generation,
                               .publish_count = status.publish_count,
                               .json = json_of(ring_name)};
}

static void assert_ring_unchanged(const char *ring_name, struct saved_ring *saved)
{
    shmring_ring_status_t status = status_of(ring_name);
    ck_assert_uint_eq(status.generation, saved->generation);
    ck_assert_uint_eq(status.publish_count, saved->publish_count);
    char *now = json_of(ring_name);
    ck_assert_str_eq(now, saved->json);
    free(now);
    free(saved->json);
    saved->json = NULL;
}

/* Creates `ring` with ringctl: node-a (10.0.0.1:11211, weight 1) and node-b
 * (10.0.0.2:11211, weight 3), at generation 3. */
static void make_ring(void)
{
    EXPECT(0,
           test_fmt("created ring '%s' (ring, xxh3, 160 vnodes): generation 1\n", ring),
           "", "-r", ring, "init");
    EXPECT(0, test_fmt("added node-a (id 0) to ring '%s': generation 2\n", ring), "",
           "-r", ring, "add", "node-a", "10.0.0.1:11211");
    EXPECT(0, test_fmt("added node-b (id 1) to ring '%s': generation 3\n", ring), "",
           "-r", ring, "add", "node-b", "10.0.0.2:11211", "--weight", "3");
    ck_assert_uint_eq(generation_of(ring), 3);
}

/* ---- core: each command's happy path ------------------------------------------ */

START_TEST(test_version_and_help)
{
    EXPECT(0, "ringctl " SHMRING_VERSION_STRING "\n", "", "--version");
    EXPECT(0, "ringctl " SHMRING_VERSION_STRING "\n", "", "-V");
    const char *const spellings[][2] = {{"--help", NULL}, {"-h", NULL}, {"help", NULL}};
    for (size_t i = 0; i < 3; i++) {
        struct test_run r;
        RUN(&r, spellings[i][0], spellings[i][1]);
        ck_assert_int_eq(r.status, 0);
        ck_assert_str_eq(r.err, "");
        ck_assert_msg(strncmp(r.out, "Usage: ringctl [OPTIONS] COMMAND [ARGS]\n", 40) ==
                          0,
                      "%s", r.out);
        const char *documented[] = {
            "  init [--algorithm A] [--hash H] [--vnodes N] [--table-size P]",
            "  load FILE|-",
            "  add NAME ADDRESS [--weight W]",
            "  remove NAME",
            "  weight NAME W",
            "  down NAME",
            "  up NAME",
            "  show",
            "  lookup [-n N] [-z] KEY...",
            "  lookup [-n N] [-z] --stdin",
            "  help [COMMAND]",
            "  dump",
            "  list",
            "  destroy",
            "--ring RING",
            "--dir DIR",
            "$SHMRING_DIR",
            "--wait SECONDS",
            "--owner USER",
            "--json",
            "--dry-run",
            "--help",
            "--version",
            "--algorithm A",
            "--hash H",
            "--vnodes N",
            "--table-size P",
            "--mode M",
            "--group G",
            "--weight W",
            "-n N",
            "--stdin",
            "\n  -z  ",
            "0644 (default: everyone),\n"
            "                           0640 (its group), 0604 (others, not the group) "
            "or\n"
            "                           0600 (you only)",
            "a backslash is printed as \\\\, TAB, LF and CR as \\t, \\n\nand \\r",
            "\\xHH (two lowercase hex digits)",
            "\"key_base64\"",
            "Exit status: 0 success, 1 the operation failed, 2 usage error."};
        for (size_t j = 0; j < sizeof(documented) / sizeof(documented[0]); j++)
            ck_assert_msg(strstr(r.out, documented[j]) != NULL, "help lacks '%s'",
                          documented[j]);
        test_run_free(&r);
    }
}
END_TEST

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
    struct test_run r;
    RUN(&r, "-r", ring, "lookup", keys[0], keys[1], keys[2], keys[3], keys[4], keys[5]);
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, expected);
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    RUN(&r, "-r", ring, "lookup", "-n", "2", keys[0], keys[1], keys[2], keys[3], keys[4],
        keys[5]);
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, expected_two);
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    /* -n larger than the ring gives every up node. */
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

/* import prints the node set of a peer's file, which load takes as it is; a file it
 * cannot reproduce is an error naming FILE:LINE, a misused option a usage error. */
START_TEST(test_import)
{
    test_write_file(temp_file, "http {\n"
                               "  upstream u {\n"
                               "    hash $arg_key consistent;\n"
                               "    server 10.0.0.1:80 weight=2;\n"
                               "    server 10.0.0.2:80 down;\n"
                               "  }\n"
                               "}\n");
    struct test_run r;
    RUN(&r, "import", "nginx", temp_file, "--upstream", "u");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "{\n"
                            "  \"algorithm\": \"nginx\",\n"
                            "  \"hash\": \"crc32\",\n"
                            "  \"vnodes\": 160,\n"
                            "  \"nodes\": [\n"
                            "    {\n"
                            "      \"name\": \"10.0.0.1:80\",\n"
                            "      \"id\": 0,\n"
                            "      \"address\": \"10.0.0.1:80\",\n"
                            "      \"weight\": 2,\n"
                            "      \"state\": \"up\"\n"
                            "    },\n"
                            "    {\n"
                            "      \"name\": \"10.0.0.2:80\",\n"
                            "      \"id\": 1,\n"
                            "      \"address\": \"10.0.0.2:80\",\n"
                            "      \"weight\": 1,\n"
                            "      \"state\": \"down\"\n"
                            "    }\n"
                            "  ]\n"
                            "}\n");
    /* load takes it whole: the ring answers as the file says. */
    struct test_run loaded;
    RUN_INPUT(&loaded, r.out, "-r", ring, "load", "-");
    ck_assert_int_eq(loaded.status, 0);
    test_run_free(&loaded);
    test_run_free(&r);
    EXPECT(0, "key\t10.0.0.1:80\t10.0.0.1:80\n", "", "-r", ring, "lookup", "key");

    RUN_INPUT(&r, "k1 1\nk2 3\n", "import", "libketama", "-");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"algorithm\": \"libketama\""));
    test_run_free(&r);

    test_write_file(temp_file,
                    "upstream u {\n  hash $k consistent;\n  server a:1 backup;\n}\n");
    EXPECT(
        1, "",
        test_fmt("ringctl: error: %s:3: 'backup' is not supported: nginx refuses it with "
                 "'hash'\n",
                 temp_file),
        "import", "nginx", temp_file);
    EXPECT(1, "", test_fmt("ringctl: error: %s: no upstream 'v'\n", temp_file), "import",
           "nginx", temp_file, "--upstream", "v");
    EXPECT(2, "", "ringctl: error: option '--pool' is for twemproxy files\n", "import",
           "nginx", temp_file, "--pool", "u");
    EXPECT(2, "", "ringctl: error: option '--upstream' is for nginx files\n", "import",
           "libketama", temp_file, "--upstream", "u");
    EXPECT(2, "",
           "ringctl: error: unknown format 'haproxy' (use nginx, twemproxy or "
           "libketama)\n",
           "import", "haproxy", temp_file);
    EXPECT(1, "",
           "ringctl: error: cannot read '/nonexistent/x.conf': No such file or "
           "directory\n",
           "import", "nginx", "/nonexistent/x.conf");
}
END_TEST

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

START_TEST(test_destroy)
{
    make_ring();
    EXPECT(0, test_fmt("would destroy ring '%s' (generation 3)\n", ring), "", "-r", ring,
           "destroy", "--dry-run");
    ck_assert_uint_eq(generation_of(ring), 3);
    EXPECT(0, test_fmt("destroyed ring '%s'\n", ring), "", "-r", ring, "destroy");
    ck_assert_int_eq(status_error(ring), SHMRING_ENOENT);
    assert_no_objects(ring);
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
    ck_assert_int_eq(status_error(other), SHMRING_ENOENT);
    assert_no_objects(other);
}
END_TEST

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
           "ringctl: error: unknown algorithm 'jump' (use ring, maglev, ketama, "
           "twemproxy, nginx, libketama, "
           "envoy-maglev or envoy-ring)\n",
           "-r", other, "init", "--algorithm", "jump");
    EXPECT(2, "",
           "ringctl: error: unknown hash 'sha1' (use xxh3, md5, crc32, fnv1a or murmur3, "
           "one of twemproxy's hash: names, or Envoy's xxh64 or murmur2)\n",
           "-r", other, "init", "--hash", "sha1");
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
    ck_assert_int_eq(status_error(other), SHMRING_ENOENT);
    assert_no_objects(other);
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
    ck_assert_int_eq(status_error(ring), SHMRING_ENOENT);
    assert_no_objects(ring);
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
    EXPECT(
        1, "",
        test_fmt(
            "ringctl: error: cannot look up keys in ring '%s': all nodes of the ring are "
            "down\n",
            ring),
        "-r", ring, "lookup", "k");
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
    EXPECT(
        1, "",
        test_fmt(
            "ringctl: error: cannot look up keys in ring '%s': all nodes of the ring are "
            "down\n",
            ring),
        "-r", ring, "lookup", "k");
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

/* "uid UID (NAME)" as ringctl names a user, or "uid UID" for a uid without a name. */
static const char *owner_text(uid_t uid)
{
    const struct passwd *user = getpwuid(uid);
    if (user != NULL)
        return test_fmt("uid %lu (%s)", (unsigned long)uid, user->pw_name);
    return test_fmt("uid %lu", (unsigned long)uid);
}

/* What ringctl says when RING_NAME's directory belongs to OWNER and we change it. */
static const char *belongs_message(const char *ring_name, uid_t owner)
{
    return test_fmt("ringctl: error: ring '%s': %s is a directory owned by %s: the ring "
                    "belongs to that user, and only its owner can change or destroy it\n",
                    ring_name, test_ring_path(ring_name), owner_text(owner));
}

/* Runs ringctl as TEST_NOBODY and checks its exit status, stdout and stderr exactly. */
#define EXPECT_NOBODY(status_, out_, err_, ...)                                          \
    do {                                                                                 \
        struct test_run r_;                                                              \
        test_run_as(&r_, TEST_NOBODY, NULL, (const char *const[]){__VA_ARGS__, NULL});   \
        ck_assert_str_eq(r_.err, (err_));                                                \
        ck_assert_str_eq(r_.out, (out_));                                                \
        ck_assert_int_eq(r_.status, (status_));                                          \
        test_run_free(&r_);                                                              \
    } while (0)

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

/* ---- live: lookup --stdin follows publications ---------------------------------- */

/* Writes KEY and a newline to the child and reads its one-line answer. */
static const char *ask(struct test_child *c, const char *key)
{
    static char answer[1024];
    const char *line = test_fmt("%s\n", key);
    ck_assert_int_eq(write(c->in, line, strlen(line)), (ssize_t)strlen(line));
    size_t len = 0;
    while (len == 0 || answer[len - 1] != '\n') {
        struct pollfd fd = {.fd = c->out, .events = POLLIN};
        int ready = poll(&fd, 1, ANSWER_TIMEOUT_MS);
        ck_assert_msg(ready == 1, "no answer for '%s' after %d ms", key,
                      ANSWER_TIMEOUT_MS);
        ssize_t n = read(c->out, answer + len, sizeof(answer) - 1 - len);
        ck_assert_int_gt(n, 0);
        len += (size_t)n;
    }
    answer[len] = '\0';
    return answer;
}

static const char *owner_line(const char *key)
{
    shmring_t *reader;
    ck_assert_int_eq(shmring_open(ring, &reader), 0);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(reader, key, strlen(key), &node), 0);
    shmring_close(reader);
    return test_fmt("%s\t%s\t%s\n", key, node.name, node.address);
}

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

/* The number of bad inputs tried, printed for the README's reliability figures. */
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
    REFUSED(2, ERR "missing arguments for 'load' (usage: ringctl load FILE|-)\n", "-r",
            ring, "load");
    REFUSED(2, ERR "too many arguments for 'load' (usage: ringctl load FILE|-)\n", "-r",
            ring, "load", "a", "b");
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
    INIT_REFUSED(ERR "unknown algorithm 'chord' (use ring, maglev, ketama, twemproxy, "
                     "nginx, libketama, "
                     "envoy-maglev or envoy-ring)\n",
                 "--algorithm", "chord");
    INIT_REFUSED(ERR "unknown hash 'sha1' (use xxh3, md5, crc32, fnv1a or murmur3, "
                     "one of twemproxy's hash: names, or Envoy's xxh64 or murmur2)\n",
                 "--hash", "sha1");
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
         "twemproxy, nginx, libketama, envoy-maglev or envoy-ring)"},
        {"{\"algorithm\": 1, \"nodes\": [{\"name\": \"a\"}]}", 1,
         "algorithm: must be a string"},
        {"{\"hash\": \"sha1\", \"nodes\": [{\"name\": \"a\"}]}", 1,
         "hash: unknown hash \"sha1\" (expected xxh3, md5, crc32, fnv1a, murmur3, one of "
         "twemproxy's: fnv1a_64, crc16, crc32a, fnv1_32, fnv1_64, fnv1a_32, hsieh, "
         "jenkins, murmur, one_at_a_time, or one of Envoy's: xxh64, murmur2)"},
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

/* Reads FD to its end. */
static char *read_all(int fd)
{
    char *text = calloc(1, 1);
    size_t len = 0;
    while (test_drain(fd, &text, &len))
        continue;
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

/* A lookup's text answer as ringctl prints it: the key escaped, then the node. */
static const char *answer_line(const char *key, const char *printed)
{
    shmring_t *reader;
    ck_assert_int_eq(shmring_open(ring, &reader), 0);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(reader, key, strlen(key), &node), 0);
    shmring_close(reader);
    return test_fmt("%s\t%s\t%s\n", printed, node.name, node.address);
}

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

/* Writes KEY (LEN bytes) and TERMINATOR to the child and reads its one answer, which
 * ends in TERMINATOR too. */
static const char *ask_record(struct test_child *c, const char *key, size_t len,
                              char terminator)
{
    static char answer[1024];
    char line[256];
    ck_assert_uint_lt(len, sizeof(line));
    memcpy(line, key, len);
    line[len] = terminator;
    ck_assert_int_eq(write(c->in, line, len + 1), (ssize_t)(len + 1));
    size_t got = 0;
    while (got == 0 || answer[got - 1] != terminator) {
        struct pollfd fd = {.fd = c->out, .events = POLLIN};
        ck_assert_msg(poll(&fd, 1, ANSWER_TIMEOUT_MS) == 1, "no answer after %d ms",
                      ANSWER_TIMEOUT_MS);
        ssize_t n = read(c->out, answer + got, sizeof(answer) - 1 - got);
        ck_assert_int_gt(n, 0);
        got += (size_t)n;
    }
    answer[got] = '\0';
    return answer;
}

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

/* A read error ends the stream with its own line and exit status 1, never 0. */
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

/* Fails unless OBJECT's keys are exactly the comma-separated EXPECTED, in order. */
static void assert_keys(const json_t *object, const char *expected)
{
    ck_assert_msg(json_is_object(object), "not an object");
    char keys[1024] = "";
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)object, key, value)
    {
        if (keys[0] != '\0')
            strcat(keys, ",");
        strcat(keys, key);
    }
    ck_assert_str_eq(keys, expected);
}

/* Runs ringctl with the arguments that follow (--json among them), expecting exit 0
 * and one JSON document, and returns it. */
#define JSON_OF(...) json_output((const char *const[]){__VA_ARGS__, NULL})

static json_t *json_output(const char *const *args)
{
    struct test_run r;
    test_run_as(&r, (uid_t)-1, NULL, args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    json_error_t error;
    json_t *root = json_loads(r.out, 0, &error);
    ck_assert_msg(root != NULL, "%s: %s", error.text, r.out);
    test_run_free(&r);
    return root;
}

#define CHANGE_KEYS "ring,generation,action,dry_run,changed"
#define READERS_LINE_KEYS                                                                \
    "processes,superseded_processes,superseded_versions,superseded_bytes,"               \
    "processes_hidden,processes_unverified,processes_too_large"
#define READERS_KEYS                                                                     \
    "ring,generation,readers,uncounted,versions,superseded_versions,superseded_bytes,"   \
    "processes_inspected,processes_hidden"
#define READER_KEYS "pid,command,generation,current,mapped_bytes,descriptors,uid"
#define UNCOUNTED_KEYS "pid,command,uid,reason,generation,mapped_bytes,descriptors"
#define SAMPLE_KEYS "moved_fraction"

/* Each command's --json keys are the same in every case (the README's schema). */
START_TEST(test_json_key_sets)
{
    ck_assert_int_eq(setenv("SHMRING_DIR", make_ring_directory(), 1), 0);
    const char *init_keys = CHANGE_KEYS ",algorithm,hash,vnodes,table_size," SAMPLE_KEYS;
    const char *node_keys = CHANGE_KEYS ",node," SAMPLE_KEYS;
    const char *weight_keys = CHANGE_KEYS ",node,previous_weight," SAMPLE_KEYS;
    const char *load_keys =
        CHANGE_KEYS ",nodes,added,removed,changed_nodes,params_changed," SAMPLE_KEYS;
    const char *show_keys =
        "ring,generation,algorithm,hash,vnodes,table_size,min_ring_size,"
        "max_ring_size,points,"
        "fingerprint,size,up,publish_count,publisher_pid,"
        "published_at,owner,mode,nodes,readers";
    const char *lookup_keys = "key,key_base64,nodes,error";
    json_t *j;

    j = JSON_OF("--json", "-r", ring, "init", "--dry-run");
    assert_keys(j, init_keys);
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "init");
    assert_keys(j, init_keys);
    json_decref(j);
    /* show of a ring with nothing but an empty version, then with nodes. */
    j = JSON_OF("--json", "-r", ring, "show");
    assert_keys(j, show_keys);
    json_decref(j);
    const char *add[] = {"--json", "-r", ring, "add", "a", "a:1", "--dry-run", NULL};
    j = json_output(add);
    assert_keys(j, node_keys);
    ck_assert(json_is_real(json_object_get(j, "moved_fraction")));
    json_decref(j);
    add[6] = NULL;
    j = json_output(add);
    assert_keys(j, node_keys);
    ck_assert(json_is_null(json_object_get(j, "moved_fraction")));
    assert_keys(json_object_get(j, "node"), "id,name,address,weight,state");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "add", "b", "b:1");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "show");
    assert_keys(j, show_keys);
    assert_keys(json_array_get(json_object_get(j, "nodes"), 0),
                "id,name,address,weight,state,share");
    assert_keys(json_object_get(j, "readers"), READERS_LINE_KEYS);
    json_decref(j);
    /* readers: the census (its entries' keys: test_readers_census_output). */
    j = JSON_OF("--json", "-r", ring, "readers");
    assert_keys(j, READERS_KEYS);
    json_decref(j);
    /* weight: changed, unchanged, dry run. */
    const char *const weights[][2] = {{"2", NULL}, {"2", NULL}, {"3", "--dry-run"}};
    for (size_t i = 0; i < 3; i++) {
        j = JSON_OF("--json", "-r", ring, "weight", "a", weights[i][0], weights[i][1]);
        assert_keys(j, weight_keys);
        ck_assert_int_eq(json_is_true(json_object_get(j, "changed")), i != 1);
        json_decref(j);
    }
    const char *const states[] = {"down", "down", "up", "up"};
    for (size_t i = 0; i < 4; i++) {
        j = JSON_OF("--json", "-r", ring, states[i], "a");
        assert_keys(j, node_keys);
        json_decref(j);
    }
    test_write_file(temp_file, "{\"nodes\": [{\"name\": \"a\"}]}");
    for (int i = 0; i < 3; i++) {
        j = JSON_OF("--json", "-r", ring, "load", temp_file, i == 0 ? "--dry-run" : NULL);
        assert_keys(j, load_keys);
        json_decref(j);
    }
    j = JSON_OF("--json", "-r", ring, "remove", "a", "--dry-run");
    assert_keys(j, node_keys);
    json_decref(j);
    /* A moved share is printed with the fewest digits that read back as the same
     * double (0.35642, never 0.35642000000000001). */
    struct test_run r;
    RUN(&r, "--json", "-r", ring, "add", "c", "c:1", "--dry-run");
    const char *number = strstr(r.out, "\"moved_fraction\":");
    ck_assert_ptr_nonnull(number);
    number += strlen("\"moved_fraction\":");
    char *end;
    double share = strtod(number, &end);
    ck_assert_msg(*end == '}' && share > 0.0 && share < 1.0, "%s", r.out);
    int significant = (int)strspn(number + 2, "0123456789"); /* after "0." */
    char shorter[400];
    snprintf(shorter, sizeof(shorter), "%.*g", significant - 1, share);
    ck_assert_msg(strtod(shorter, NULL) != share, "%s: %s also reads back", r.out,
                  shorter);
    test_run_free(&r);
    /* check: {same, differences}, each difference {kind, what, ring, file}. */
    RUN(&r, "-r", ring, "dump");
    test_write_file(temp_file, r.out);
    test_run_free(&r);
    j = JSON_OF("--json", "-r", ring, "check", temp_file);
    assert_keys(j, "same,differences");
    ck_assert(json_is_true(json_object_get(j, "same")));
    ck_assert_uint_eq(json_array_size(json_object_get(j, "differences")), 0);
    json_decref(j);
    test_write_file(temp_file,
                    "{\"nodes\": [{\"name\": \"zz\", \"address\": \"zz:1\"}]}");
    RUN(&r, "--json", "-r", ring, "check", temp_file);
    ck_assert_int_eq(r.status, 1);
    j = json_loads(r.out, 0, NULL);
    ck_assert_msg(j != NULL, "%s", r.out);
    test_run_free(&r);
    assert_keys(j, "same,differences");
    json_t *differences = json_object_get(j, "differences");
    ck_assert_uint_ge(json_array_size(differences), 2); /* zz added, the others gone */
    for (size_t i = 0; i < json_array_size(differences); i++)
        assert_keys(json_array_get(differences, i), "kind,what,ring,file");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "lookup", "k");
    assert_keys(j, lookup_keys);
    assert_keys(json_array_get(json_object_get(j, "nodes"), 0), "id,name,address,weight");
    json_decref(j);
    j = JSON_OF("--json", "list");
    assert_keys(json_array_get(j, 0), "ring,generation,nodes,up,algorithm");
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "destroy", "--dry-run");
    assert_keys(j, CHANGE_KEYS "," SAMPLE_KEYS);
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "destroy");
    assert_keys(j, CHANGE_KEYS "," SAMPLE_KEYS);
    ck_assert(json_is_null(json_object_get(j, "generation")));
    json_decref(j);
}
END_TEST

/* help COMMAND and COMMAND --help print that command's usage only; a mistyped
 * command gets a suggestion. */
START_TEST(test_command_help)
{
    struct test_run r;
    RUN(&r, "add", "--help");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    static const char usage[] =
        "Usage: ringctl [OPTIONS] add NAME ADDRESS [--weight W] [--hash-key K]\n\n"
        "  add an up node with weight W (default 1) and hash key K (default none)\n";
    ck_assert_msg(strncmp(r.out, usage, strlen(usage)) == 0, "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "      --weight W "));
    ck_assert_ptr_nonnull(strstr(r.out, "      --hash-key K "));
    ck_assert_ptr_nonnull(strstr(r.out, "      --dry-run "));
    ck_assert_ptr_null(strstr(r.out, "--algorithm"));
    ck_assert_ptr_null(strstr(r.out, "  remove NAME"));
    struct test_run h;
    RUN(&h, "help", "add");
    ck_assert_int_eq(h.status, 0);
    ck_assert_str_eq(h.out, r.out);
    test_run_free(&h);
    RUN(&h, "-h", "add", "x");
    ck_assert_str_eq(h.out, r.out);
    test_run_free(&h);
    test_run_free(&r);
    EXPECT(2, "",
           "ringctl: error: too many arguments for 'help' (usage: ringctl help "
           "[COMMAND])\n",
           "help", "add", "remove");
    EXPECT(2, "", "ringctl: error: unknown command 'frob' (see 'ringctl --help')\n",
           "help", "frob");
    EXPECT(2, "",
           "ringctl: error: unknown command 'shwo' (did you mean 'show'? see 'ringctl "
           "--help')\n",
           "shwo");
    EXPECT(2, "",
           "ringctl: error: unknown command 'dwon' (did you mean 'down'? see 'ringctl "
           "--help')\n",
           "-r", ring, "dwon", "n");
    EXPECT(2, "",
           "ringctl: error: unknown command 'dest' (did you mean 'destroy'? see 'ringctl "
           "--help')\n",
           "dest");
    EXPECT(2, "",
           "ringctl: error: unknown command 'lokup' (did you mean 'lookup'? see 'ringctl "
           "--help')\n",
           "lokup", "--help");
}
END_TEST

/*
 * Readers map everything read-only, the owner's readers as another user's: nothing
 * a reader maps could be written through its mapping. Checked in /proc/PID/maps of a
 * running `lookup --stdin`.
 */
static void assert_maps_read_only(uid_t user)
{
    struct test_child c = test_child_start(
        (const char *const[]){"-r", ring, "lookup", "--stdin", NULL}, user);
    ck_assert_str_eq(ask(&c, "k"), owner_line("k"));
    FILE *maps = fopen(test_fmt("/proc/%ld/maps", (long)c.pid), "r");
    ck_assert_ptr_nonnull(maps);
    char line[1024];
    char directory[600];
    snprintf(directory, sizeof(directory), "%s/", test_ring_path(ring));
    int mapped = 0;
    while (fgets(line, sizeof(line), maps) != NULL) {
        if (strstr(line, directory) == NULL)
            continue;
        mapped++;
        /* "START-END PERMS ...": shared and readable, never writable. */
        const char *perms = strchr(line, ' ');
        ck_assert_ptr_nonnull(perms);
        ck_assert_msg(strncmp(perms + 1, "r--s", 4) == 0, "%s", line);
    }
    fclose(maps);
    ck_assert_int_ge(mapped, 1); /* at least the current version */
    close(c.in);
    close(c.out);
    close(c.err);
    ck_assert_int_eq(test_child_wait(&c), 0);
}

START_TEST(test_readers_map_read_only)
{
    make_ring();
    assert_maps_read_only((uid_t)-1);
    if (geteuid() == 0)
        assert_maps_read_only(TEST_NOBODY);
}
END_TEST

/* ---- The readers census in readers, show and metrics ------------------------------ */

/* A process of this test's that holds something open until the test ends it. */
struct holder {
    pid_t pid;
    int to; /* closing it ends the holder */
};

/*
 * Forks a holder that opens PATH (with FAKE_DIR, a directory of its own, bind-mounted
 * over RING_DIR_PATH first in a mount namespace of its own, as issue 23's squatter
 * does), maps it whole when MAP, keeps the descriptor when KEEP_FD, says so on a pipe
 * and waits until holder_stop().
 */
static struct holder holder_start(const char *path, bool map, bool keep_fd,
                                  const char *fake_dir, const char *ring_dir_path)
{
    int ready[2], hold[2];
    ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(ready[0]);
        close(hold[1]);
        if (fake_dir != NULL &&
            (unshare(CLONE_NEWNS) != 0 ||
             mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
             mount(fake_dir, ring_dir_path, NULL, MS_BIND, NULL) != 0))
            _exit(1);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 ||
            (map &&
             mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED))
            _exit(1);
        if (!keep_fd)
            close(fd);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        char byte;
        while (read(hold[0], &byte, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    char byte;
    ck_assert_int_eq(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    return (struct holder){.pid = pid, .to = hold[1]};
}

static void holder_stop(struct holder *h)
{
    close(h->to);
    int status;
    ck_assert_int_eq(waitpid(h->pid, &status, 0), h->pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Removes from TEXT what processes outside this test may add to a census: lines of
 * the "Not counted" list with another pid than PIDS' (a process of another test with
 * more mappings than a census reads), the paragraph on processes that could not be
 * inspected, and their parts of a readers line. */
static void census_only_mine(char *text, const pid_t *pids, size_t count)
{
    char *out = text;
    bool uncounted = false;
    for (char *line = text; *line != '\0';) {
        char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) + 1 : strlen(line);
        bool keep = true;
        if (strncmp(line, "Not counted", 11) == 0)
            uncounted = true;
        else if (len == 1)
            uncounted = false;
        else if (uncounted) {
            keep = false;
            for (size_t i = 0; i < count; i++)
                keep = keep || strtol(line, NULL, 10) == (long)pids[i];
        }
        char after = line[len];
        line[len] = '\0';
        bool hidden = strstr(line, " could not be inspected: ") != NULL;
        line[len] = after;
        /* That paragraph and its blank line. */
        if (hidden && out - text >= 2 && out[-1] == '\n' && out[-2] == '\n') {
            out--;
            keep = false;
        }
        if (keep) {
            memmove(out, line, len);
            out += len;
        }
        line += len;
    }
    *out = '\0';
    /* "; 2 processes not inspectable", "; 1 process too large to inspect" */
    static const char *const tails[] = {" not inspectable", " too large to inspect"};
    for (size_t t = 0; t < COUNT_OF(tails); t++) {
        for (char *tail = text; (tail = strstr(tail, tails[t])) != NULL;) {
            /* Only "; N processes ..." of a readers line, nothing of a heading. */
            char *start = tail;
            while (start > text && strchr(";\n(", start[-1]) == NULL)
                start--;
            if (start == text || start[-1] != ';') {
                tail++;
                continue;
            }
            start--;
            memmove(start, tail + strlen(tails[t]), strlen(tail + strlen(tails[t])) + 1);
            tail = start;
        }
    }
}

/*
 * readers, show and metrics, text and JSON, with three processes of this test: one
 * that maps superseded version 3 and holds a descriptor on it (counted, with its uid
 * and descriptors), one that only holds a descriptor on it (pins it while mapping
 * nothing: issue 23), and, as root, one that maps a version.1 of its own bind-mounted
 * over the ring's path (listed apart as unverified, its bytes in no figure).
 */
START_TEST(test_readers_census_output)
{
    make_ring();
    const char *version = test_object_path(ring, "version.3");
    struct stat st;
    ck_assert_int_eq(stat(version, &st), 0);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t held = ((uint64_t)st.st_size + page - 1) / page * page;
    struct holder mapper = holder_start(version, true, true, NULL, NULL);
    struct holder opener = holder_start(version, false, true, NULL, NULL);
    char fake[TEST_PATH_MAX] = "";
    struct holder squatter = {.pid = 0};
    bool as_root = geteuid() == 0;
    if (as_root) {
        snprintf(fake, sizeof(fake), "%s/check_ringctl-fake-%ld",
                 SHMRING_DEFAULT_DIRECTORY, (long)getpid());
        ck_assert_int_eq(mkdir(fake, 0700), 0);
        test_write_file(test_fmt("%s/version.1", fake), "planted");
        squatter = holder_start(test_object_path(ring, "version.1"), true, false, fake,
                                test_ring_path(ring));
    }
    EXPECT(0, test_fmt("added node-c (id 2) to ring '%s': generation 4\n", ring), "",
           "-r", ring, "add", "node-c", "10.0.0.3:11211");
    const pid_t pids[] = {mapper.pid, opener.pid, squatter.pid};
    char held_text[32];
    snprintf(held_text, sizeof(held_text), "%.1f KiB", (double)held / 1024.0);
    const char *command = "check_ringctl";

    struct test_run r;
    RUN(&r, "-r", ring, "readers");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    census_only_mine(r.out, pids, COUNT_OF(pids));
    const char *rows = test_fmt("%-8ld  %-16s  %-6lu  %-10d  %-10s  %-10s  %d\n"
                                "%-8ld  %-16s  %-6lu  %-10d  %-10s  %-10s  %d\n",
                                (long)(mapper.pid < opener.pid ? mapper.pid : opener.pid),
                                command, (unsigned long)geteuid(), 3, "superseded",
                                mapper.pid < opener.pid ? held_text : "0 B", 1,
                                (long)(mapper.pid < opener.pid ? opener.pid : mapper.pid),
                                command, (unsigned long)geteuid(), 3, "superseded",
                                mapper.pid < opener.pid ? "0 B" : held_text, 1);
    const char *apart =
        as_root
            ? test_fmt("\nNot counted (not provably this ring's, or too large to "
                       "inspect):\n%-8ld  %-16s  %-6d  unverified: generation 1, 4.0 KiB "
                       "mapped, 0 descriptors\n",
                       (long)squatter.pid, command, 0)
            : "";
    ck_assert_str_eq(
        r.out, test_fmt("ring '%s', generation 4: 2 processes map it; 1 superseded "
                        "version held (%s)\n\n"
                        "PID       COMMAND           UID     GENERATION  VERSION     "
                        "MAPPED      DESCRIPTORS\n%s%s",
                        ring, held_text, rows, apart));
    test_run_free(&r);

    RUN(&r, "-r", ring, "show");
    ck_assert_int_eq(r.status, 0);
    census_only_mine(r.out, pids, COUNT_OF(pids));
    ck_assert_ptr_nonnull(strstr(
        r.out,
        test_fmt(
            "\nreaders:       2 processes, 2 on superseded versions (1 held, %s)%s\n",
            held_text, as_root ? "; 1 unverified process not counted" : "")));
    test_run_free(&r);

    RUN(&r, "-r", ring, "metrics");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(
        r.out,
        test_fmt(
            "# HELP shmring_ring_uncounted_processes Processes left out of the "
            "reader counts: holding objects named like the ring's versions that "
            "are not provably the ring's, or too large to inspect.\n"
            "# TYPE shmring_ring_uncounted_processes gauge\n"
            "shmring_ring_uncounted_processes{ring=\"%s\",reason=\"unverified\"} "
            "%d\nshmring_ring_uncounted_processes{ring=\"%s\",reason=\"too_large\"} ",
            ring, as_root, ring)));
    ck_assert_ptr_nonnull(
        strstr(r.out, test_fmt("shmring_ring_superseded_bytes{ring=\"%s\"} %" PRIu64 "\n",
                               ring, held)));
    ck_assert_ptr_nonnull(strstr(
        r.out, test_fmt("shmring_ring_reader_processes{ring=\"%s\",generation=\"3\","
                        "current=\"false\"} 2\n",
                        ring)));
    test_run_free(&r);

    json_t *j = JSON_OF("--json", "-r", ring, "readers");
    assert_keys(j, READERS_KEYS);
    json_t *readers = json_object_get(j, "readers");
    ck_assert_uint_eq(json_array_size(readers), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *reader = json_array_get(readers, i);
        assert_keys(reader, READER_KEYS);
        bool maps = json_integer_value(json_object_get(reader, "pid")) == mapper.pid;
        ck_assert_int_eq(json_integer_value(json_object_get(reader, "mapped_bytes")),
                         maps ? (json_int_t)held : 0);
        ck_assert_int_eq(json_integer_value(json_object_get(reader, "descriptors")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(reader, "uid")), geteuid());
    }
    json_t *uncounted = json_object_get(j, "uncounted");
    size_t mine = 0;
    for (size_t i = 0; i < json_array_size(uncounted); i++) {
        json_t *entry = json_array_get(uncounted, i);
        assert_keys(entry, UNCOUNTED_KEYS);
        if (json_integer_value(json_object_get(entry, "pid")) != squatter.pid)
            continue;
        mine++;
        ck_assert_str_eq(json_string_value(json_object_get(entry, "reason")),
                         "unverified");
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "generation")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "mapped_bytes")),
                         (json_int_t)page);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "descriptors")), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(entry, "uid")), 0);
    }
    ck_assert_uint_eq(mine, as_root);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "superseded_bytes")),
                     (json_int_t)held);
    json_decref(j);
    j = JSON_OF("--json", "-r", ring, "show");
    json_t *line = json_object_get(j, "readers");
    ck_assert_int_eq(json_integer_value(json_object_get(line, "processes_unverified")),
                     as_root);
    ck_assert(json_is_integer(json_object_get(line, "processes_too_large")));
    json_decref(j);

    /* Last started first: a holder keeps the pipes of those started before it. */
    if (as_root) {
        holder_stop(&squatter);
        test_remove_tree(fake);
    }
    holder_stop(&opener);
    holder_stop(&mapper);
}
END_TEST

/* ---- The sync helper ------------------------------------------------------------ */

/* Where a test puts copies of ringctl and its helper (empty: nowhere yet). */
static char helper_root[TEST_PATH_MAX];

static void helper_teardown(void)
{
    if (helper_root[0] != '\0')
        test_remove_tree(helper_root);
    helper_root[0] = '\0';
    teardown();
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
    EXPECT_PROGRAM(copy, 1, "", missing, "sync", "--help");
    /* The other commands do not need it. */
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
                   "sync", "--help");
    ck_assert_int_eq(unlink(beside), 0);

    ck_assert_int_eq(symlink(RINGCTL_SYNC_PATH, beside), 0);
    EXPECT_PROGRAM(
        copy, 1, "",
        test_fmt("ringctl: error: cannot run the sync helper '%s': not a regular "
                 "file\n",
                 beside),
        "sync", "--help");
    ck_assert_int_eq(unlink(beside), 0);

    copy_file(RINGCTL_SYNC_PATH, relocated, 0757);
    EXPECT_PROGRAM(copy, 1, "",
                   test_fmt("ringctl: error: cannot run the sync helper '%s': others can "
                            "write it (mode 0757)\n",
                            relocated),
                   "sync", "--help");
    if (geteuid() == 0) {
        ck_assert_int_eq(chmod(relocated, 0755), 0);
        ck_assert_int_eq(chown(relocated, TEST_NOBODY, TEST_NOBODY), 0);
        EXPECT_PROGRAM(
            copy, 1, "",
            test_fmt("ringctl: error: cannot run the sync helper '%s': it belongs "
                     "to uid %lu, neither root nor you\n",
                     relocated, (unsigned long)TEST_NOBODY),
            "sync", "--help");
    }
}
END_TEST

/* An installation moved to another prefix: ringctl finds the helper where it is
 * installed relative to ringctl, and the helper answers. */
START_TEST(test_sync_helper_relocated)
{
    const char *copy = install_copy(TEST_RINGCTL);
    copy_file(RINGCTL_SYNC_PATH, relocated_helper(), 0755);
    struct test_spawn how = test_spawn_default;
    how.program = copy;
    struct test_run r;
    test_run_with(&r, &how, NULL, (const char *const[]){"sync", "--help", NULL});
    ck_assert_str_eq(r.err, "");
    static const char usage[] =
        "Usage: ringctl [-r RING] [--dir DIR] sync SOURCE [OPTIONS]\n";
    ck_assert_msg(strncmp(r.out, usage, strlen(usage)) == 0, "%s", r.out);
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
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

static Suite *ringctl_suite(void)
{
    Suite *suite = suite_create("ringctl");

    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_version_and_help);
    tcase_add_test(core, test_check);
    tcase_add_test(core, test_import);
    tcase_add_test(core, test_load_given_ids);
    tcase_add_test(core, test_init_defaults);
    tcase_add_test(core, test_init_parameters);
    tcase_add_test(core, test_add_and_remove);
    tcase_add_test(core, test_weight_down_up);
    tcase_add_test(core, test_change_json);
    tcase_add_test(core, test_show);
    tcase_add_test(core, test_show_maglev);
    tcase_add_test(core, test_envoy_and_hash_key);
    tcase_add_test(core, test_lookup);
    tcase_add_test(core, test_lookup_stdin);
    tcase_add_test(core, test_dump);
    tcase_add_test(core, test_dump_load_round_trip);
    tcase_add_test(core, test_load_replaces_node_set);
    tcase_add_test(core, test_list);
    tcase_add_test(core, test_destroy);
    tcase_add_test(core, test_ring_from_environment);
    tcase_add_test(core, test_json_key_sets);
    tcase_add_test(core, test_command_help);
    suite_add_tcase(suite, core);

    TCase *dry_run = tcase_create("dry-run");
    tcase_add_checked_fixture(dry_run, setup, teardown);
    tcase_set_timeout(dry_run, 300);
    tcase_add_test(dry_run, test_dry_run);
    suite_add_tcase(suite, dry_run);

    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_set_timeout(errors, 300);
    tcase_add_test(errors, test_error_unknown_node);
    tcase_add_test(errors, test_error_duplicate);
    tcase_add_test(errors, test_error_numbers);
    tcase_add_test(errors, test_error_bad_json);
    tcase_add_test(errors, test_error_usage);
    tcase_add_test(errors, test_error_ring_names);
    tcase_add_test(errors, test_error_missing_ring);
    tcase_add_test(errors, test_error_init_exists);
    tcase_add_test(errors, test_error_lookup_no_answer);
    tcase_add_test(errors, test_error_file_size_limit);
    tcase_add_test(errors, test_error_input_too_large);
    tcase_add_test(errors, test_all_nodes_down);
    tcase_add_test(errors, test_error_permission);
    suite_add_tcase(suite, errors);

    TCase *bad_input = tcase_create("bad-input");
    tcase_add_checked_fixture(bad_input, setup, teardown);
    tcase_set_timeout(bad_input, 300);
    tcase_add_test(bad_input, test_bad_arguments_matrix);
    tcase_add_test(bad_input, test_bad_json_matrix);
    suite_add_tcase(suite, bad_input);

    TCase *live = tcase_create("live");
    tcase_add_checked_fixture(live, setup, teardown);
    tcase_set_timeout(live, 300);
    tcase_add_test(live, test_lookup_stdin_follows_changes);
    tcase_add_test(live, test_lookup_stdin_json);
    tcase_add_test(live, test_lookup_stdin_never_quits);
    tcase_add_test(live, test_lookup_nul_delimited);
    tcase_add_test(live, test_lookup_stdin_long_key);
    tcase_add_test(live, test_lookup_stdin_read_error);
    suite_add_tcase(suite, live);

    TCase *hygiene = tcase_create("hygiene");
    tcase_add_checked_fixture(hygiene, setup, teardown);
    tcase_set_timeout(hygiene, 300);
    tcase_add_test(hygiene, test_closed_standard_descriptors);
    tcase_add_test(hygiene, test_output_full);
    tcase_add_test(hygiene, test_wait_for_lock);
    tcase_add_test(hygiene, test_lookup_escaping);
    suite_add_tcase(suite, hygiene);

    TCase *trust = tcase_create("trust");
    tcase_add_checked_fixture(trust, setup, teardown);
    tcase_set_timeout(trust, 300);
    tcase_add_test(trust, test_ring_directory);
    tcase_add_test(trust, test_ring_directory_messages);
    tcase_add_test(trust, test_environment_empty);
    tcase_add_test(trust, test_init_modes);
    tcase_add_test(trust, test_squatted_names);
    tcase_add_test(trust, test_foreign_ring);
    tcase_add_test(trust, test_list_skips_unreadable);
    tcase_add_test(trust, test_readers_map_read_only);
    tcase_add_test(trust, test_readers_census_output);
    suite_add_tcase(suite, trust);

    TCase *sync_helper = tcase_create("sync-helper");
    tcase_add_checked_fixture(sync_helper, setup, helper_teardown);
    tcase_add_test(sync_helper, test_sync_libraries_in_helper_only);
    tcase_add_test(sync_helper, test_sync_helper_missing);
    tcase_add_test(sync_helper, test_sync_helper_refused);
    tcase_add_test(sync_helper, test_sync_helper_relocated);
    tcase_add_test(sync_helper, test_sync_same_process);
    suite_add_tcase(suite, sync_helper);
    return suite;
}

int main(void)
{
    /* A broken pipe to a ringctl that exited is reported by write(), not fatal. */
    signal(SIGPIPE, SIG_IGN);
    return test_run_suite(ringctl_suite());
}
