/*
 * Tests of `rendezvous` (lib/placement_rendezvous.c). The expected owners were
 * computed once with Debian's python3-pymemcache 3.5.2: HashClient(SERVERS,
 * allow_unicode_keys=True).hasher.get_node(key.decode("utf-8", "surrogateescape")),
 * and the candidate orders by sorting murmur3_32("%s-%s" % (node, key)) (its
 * pymemcache.client.murmur3), highest first. tests/peers/test_pymemcache.py checks
 * many more against the library itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_placement.h"
#include "test_support.h"

/* pymemcache's servers as strings, and the node string HashClient makes of each. */
static const struct {
    const char *name;
    const char *address;
    const char *node_string;
} servers[] = {
    {"a", "10.0.0.1:11211", "10.0.0.1:11211"},
    {"b", "10.0.0.2:11212", "10.0.0.2:11212"},
    {"v6", "[::1]:11211", "::1:11211"},
    {"sock", "unix:/var/run/mc.sock", "/var/run/mc.sock"},
    {"host", "cache-a", "cache-a:11211"},
    {"v6-bare", "[fe80::2]", "fe80::2:11211"},
    {"zeros", "cache-b:0011213", "cache-b:11213"},
    {"utf8", "cach\xc3\xa9.example:11211", "cach\xc3\xa9.example:11211"},
};

#define SERVER_COUNT (sizeof(servers) / sizeof(servers[0]))

static shmring_nodeset_t *servers_set(void)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_MURMUR3_32, 160);
    for (size_t i = 0; i < SERVER_COUNT; i++)
        ck_assert_int_eq(shmring_nodeset_add(set, servers[i].name, servers[i].address, 1,
                                             SHMRING_STATE_UP, NULL),
                         0);
    return set;
}

/* The name of the node whose node string is STRING. */
static const char *name_of(const char *string)
{
    for (size_t i = 0; i < SERVER_COUNT; i++) {
        if (strcmp(servers[i].node_string, string) == 0)
            return servers[i].name;
    }
    ck_abort_msg("no server %s", string);
    return NULL;
}

/* Keys (bytes, with their lengths) and pymemcache's three best nodes for each. */
static const struct {
    const char *key;
    size_t length;
    const char *best[3];
} expected[] = {
    {"", 0, {"cach\xc3\xa9.example:11211", "cache-b:11213", "cache-a:11211"}},
    {"foo", 3, {"10.0.0.2:11212", "fe80::2:11211", "::1:11211"}},
    {"bar", 3, {"10.0.0.2:11212", "10.0.0.1:11211", "fe80::2:11211"}},
    {"user:1001", 9, {"::1:11211", "cach\xc3\xa9.example:11211", "/var/run/mc.sock"}},
    /* UTF-8: each character hashes as the low byte of its code point. */
    {"\xc3\xa9t\xc3\xa9",
     5,
     {"cache-a:11211", "10.0.0.1:11211", "cach\xc3\xa9.example:11211"}},
    {"\xe2\x82\xac", 3, {"10.0.0.1:11211", "fe80::2:11211", "cache-a:11211"}},
    {"\xf0\x9f\x98\x80x", 5, {"10.0.0.2:11212", "cache-a:11211", "::1:11211"}},
    /* Not UTF-8: each stray byte is a character of its own value. */
    {"x\xff", 2, {"::1:11211", "10.0.0.2:11212", "fe80::2:11211"}},
    {"\xed\xa0\x80",
     3,
     {"10.0.0.2:11212", "cach\xc3\xa9.example:11211", "cache-a:11211"}},
    {"\xe2\x82", 2, {"cache-a:11211", "cache-b:11213", "10.0.0.1:11211"}},
    {"abc\x01"
     "def",
     7,
     {"10.0.0.1:11211", "cache-a:11211", "::1:11211"}},
    {"0123456789abcdef0123456789",
     26,
     {"10.0.0.2:11212", "/var/run/mc.sock", "fe80::2:11211"}},
};

/* A key longer than rank() reads as characters once (512 bytes), which is read again
 * for each node: b"\xc3\xa9\xe2\x82\xacx\xff" * 100, 700 bytes. */
START_TEST(long_keys_are_pymemcaches)
{
    shmring_nodeset_t *set = servers_set();
    shmring_snapshot_t *snapshot = test_snapshot(set);
    char key[700];
    for (size_t i = 0; i < sizeof(key); i += 7)
        memcpy(key + i, "\xc3\xa9\xe2\x82\xacx\xff", 7);
    shmring_node_t ranked[3];
    ck_assert_int_eq(shmring_snapshot_lookup_n(snapshot, key, sizeof(key), ranked, 3), 3);
    ck_assert_str_eq(ranked[0].name, "a");
    ck_assert_str_eq(ranked[1].name, "sock");
    ck_assert_str_eq(ranked[2].name, "host");
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(owners_are_pymemcaches)
{
    shmring_nodeset_t *set = servers_set();
    shmring_snapshot_t *snapshot = test_snapshot(set);
    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
        shmring_node_t node;
        ck_assert_int_eq(
            shmring_snapshot_lookup(snapshot, expected[i].key, expected[i].length, &node),
            0);
        ck_assert_msg(strcmp(node.name, name_of(expected[i].best[0])) == 0,
                      "key %zu: %s, pymemcache has %s", i, node.name,
                      expected[i].best[0]);
        shmring_node_t ranked[3];
        ck_assert_int_eq(shmring_snapshot_lookup_n(snapshot, expected[i].key,
                                                   expected[i].length, ranked, 3),
                         3);
        for (size_t r = 0; r < 3; r++)
            ck_assert_msg(strcmp(ranked[r].name, name_of(expected[i].best[r])) == 0,
                          "key %zu, candidate %zu: %s, pymemcache's order has %s", i, r,
                          ranked[r].name, expected[i].best[r]);
    }
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* murmur3_32("10.2.61.245:11211-tie") == murmur3_32("10.0.98.96:11211-tie") ==
 * 2339812650: pymemcache gives the key to the greater string, whichever comes
 * first. */
START_TEST(ties_go_to_the_greater_node_string)
{
    for (int order = 0; order < 2; order++) {
        shmring_nodeset_t *set =
            test_empty_set(SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_MURMUR3_32, 160);
        const char *first = order == 0 ? "10.2.61.245:11211" : "10.0.98.96:11211";
        const char *second = order == 0 ? "10.0.98.96:11211" : "10.2.61.245:11211";
        ck_assert_int_eq(
            shmring_nodeset_add(set, "first", first, 1, SHMRING_STATE_UP, NULL), 0);
        ck_assert_int_eq(
            shmring_nodeset_add(set, "second", second, 1, SHMRING_STATE_UP, NULL), 0);
        shmring_snapshot_t *snapshot = test_snapshot(set);
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "tie", 3, &node), 0);
        ck_assert_str_eq(node.address, "10.2.61.245:11211");
        shmring_snapshot_free(snapshot);
        shmring_nodeset_free(set);
    }
}
END_TEST

/* A hash key is the node string as it is: a node "x" keyed "10.0.0.2:11212" takes
 * b's keys. Down nodes take none. */
START_TEST(hash_keys_and_down_nodes)
{
    shmring_nodeset_t *set = servers_set();
    ck_assert_int_eq(shmring_nodeset_remove(set, "b"), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "x", "elsewhere:1", 1, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "x", "10.0.0.2:11212"), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "off", "10.9.9.9:1", 1, SHMRING_STATE_DOWN, NULL), 0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_node_t node;
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "foo", 3, &node), 0);
    ck_assert_str_eq(node.name, "x");
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "user:1001", 9, &node), 0);
    ck_assert_str_eq(node.name, "v6");
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* Each up node's share is 1 / up nodes; a down node's is 0. */
START_TEST(shares_are_equal)
{
    shmring_nodeset_t *set = servers_set();
    ck_assert_int_eq(shmring_nodeset_set_state(set, "a", SHMRING_STATE_DOWN), 0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    double shares[SERVER_COUNT];
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, SERVER_COUNT), 0);
    ck_assert_double_eq(shares[0], 0.0);
    for (size_t i = 1; i < SERVER_COUNT; i++)
        ck_assert_double_eq(shares[i], 1.0 / 7);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(refusals)
{
    /* pymemcache has no weights. */
    shmring_nodeset_t *set = servers_set();
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "a", 2), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_EUNWEIGHTED);
    shmring_nodeset_free(set);
    /* A port that int() would read but we do not, or no port after the colon. */
    static const char *const bad[] = {"h:+1", "h:1_1", "h: 1", "h:", "h:1x", "unix:"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        set = test_empty_set(SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_MURMUR3_32, 160);
        ck_assert_int_eq(shmring_nodeset_add(set, "n", bad[i], 1, SHMRING_STATE_UP, NULL),
                         0);
        ck_assert_msg(test_build_error(set) == SHMRING_EBADADDRESS, "%s", bad[i]);
        shmring_nodeset_free(set);
    }
    /* Two up nodes with one node string: "h" is "h:11211". A down one may share it. */
    set = test_empty_set(SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_MURMUR3_32, 160);
    ck_assert_int_eq(shmring_nodeset_add(set, "n1", "h", 1, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "n2", "h:11211", 1, SHMRING_STATE_DOWN, NULL), 0);
    ck_assert_int_eq(test_build_error(set), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "n2", SHMRING_STATE_UP), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_EDUPLICATE);
    shmring_nodeset_free(set);
    /* Only murmur3_32. */
    set = test_empty_set(SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_MURMUR3_32, 160);
    shmring_params_t params = {.algorithm = SHMRING_ALGORITHM_RENDEZVOUS,
                               .hash = SHMRING_HASH_MURMUR3,
                               .vnodes = 160};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), SHMRING_EBADHASH);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *rendezvous_suite(void)
{
    Suite *s = suite_create("placement_rendezvous");
    TEST_CASE(s, "pymemcache", owners_are_pymemcaches, long_keys_are_pymemcaches,
              ties_go_to_the_greater_node_string);
    TEST_CASE(s, "core", hash_keys_and_down_nodes, shares_are_equal);
    TEST_CASE(s, "errors", refusals);
    return s;
}

int main(void)
{
    return test_run_suite(rendezvous_suite());
}
