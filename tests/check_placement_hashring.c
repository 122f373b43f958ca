/*
 * Tests of `hashring` (lib/placement_hashring.c). The expected points and owners
 * were computed once with npm's memcached 2.2.2 and hashring 3.2.0 on Node 20: new
 * Memcached(["10.0.0.1:11211", "10.0.0.2:11212", "[::1]:11211"]).HashRing (its ring
 * and get(key)), and new HashRing({"a:1": 1, "b:2": 3}, "sha256"). The string a
 * server's points hash follows connection-parse's split of its address, compared
 * here through hash keys. tests/peers/test_hashring.py checks many more against the
 * library itself.
 */
#include <string.h>

#include "test_placement.h"
#include "test_support.h"

static void check_owner(const shmring_snapshot_t *snapshot, const char *key,
                        const char *expected)
{
    shmring_node_t node;
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, key, strlen(key), &node), 0);
    ck_assert_msg(strcmp(node.address, expected) == 0, "key '%s': %s, not %s", key,
                  node.address, expected);
}

START_TEST(memcached_client_ring)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 160);
    test_add_node(set, "10.0.0.1:11211", 1, SHMRING_STATE_UP);
    test_add_node(set, "10.0.0.2:11212", 1, SHMRING_STATE_UP);
    test_add_node(set, "[::1]:11211", 1, SHMRING_STATE_UP);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    /* floor(1/3 x 40 x 3) = 40 digests a server, 4 points each. */
    ck_assert_uint_eq(test_point_count(snapshot), 480);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x006a75cc) << 32);
    ck_assert_uint_eq(test_point_owner(snapshot, 0), 2);
    ck_assert_uint_eq(test_point(snapshot, 479), UINT64_C(0xff31f500) << 32);
    ck_assert_uint_eq(test_point_owner(snapshot, 479), 1);
    check_owner(snapshot, "user:1", "10.0.0.1:11211");
    check_owner(snapshot, "user:2", "10.0.0.2:11212");
    check_owner(snapshot, "user:3", "10.0.0.2:11212");
    check_owner(snapshot, "", "10.0.0.2:11212");
    check_owner(snapshot, "caf\xc3\xa9", "[::1]:11211");
    /* Port 11211 leaves the port out: "10.0.0.1-0" is one of its point strings. */
    check_owner(snapshot, "10.0.0.1-0", "10.0.0.1:11211");
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(sha256_and_weights)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_SHA256, 160);
    test_add_node(set, "a:1", 1, SHMRING_STATE_UP);
    test_add_node(set, "b:2", 3, SHMRING_STATE_UP);
    test_add_node(set, "c:3", 5, SHMRING_STATE_DOWN);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    /* floor(0.25 x 40 x 2) = 20 and floor(0.75 x 40 x 2) = 60 digests. */
    ck_assert_uint_eq(test_point_count(snapshot), 320);
    check_owner(snapshot, "user:1", "b:2");
    check_owner(snapshot, "user:2", "a:1");
    check_owner(snapshot, "x", "b:2");
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* A snapshot of one up node at ADDRESS, or NULL when the build refuses it with
 * EXPECTED_ERROR. */
static shmring_snapshot_t *one_server(const char *address, const char *hash_key,
                                      int expected_error)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 160);
    ck_assert_int_eq(shmring_nodeset_add(set, "s", address, 1, SHMRING_STATE_UP, NULL),
                     0);
    if (hash_key != NULL)
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "s", hash_key), 0);
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_nodeset_snapshot(set, &snapshot), expected_error);
    shmring_nodeset_free(set);
    return snapshot;
}

START_TEST(default_port_strings)
{
    /* The address, and the string its points hash: connection-parse's host (before
     * the first colon) when Number() of the text up to the next colon is 11211. */
    static const struct {
        const char *address;
        const char *hashed;
    } cases[] = {
        {"10.0.0.1:11211", "10.0.0.1"},
        {"10.0.0.1:11212", "10.0.0.1:11212"},
        {"host:011211", "host"},
        {"host:0x2BCB", "host"},
        {"host:0x2BAB", "host:0x2BAB"},
        {"host", "host"},
        {"/run/memcached.sock", "/run/memcached.sock"},
        {"[::1]:11211", "[::1]:11211"},
        {"[1:11211::]:80", "[1"},
        {"[1:2e3::]:11211", "[1:2e3::]:11211"},
        {"[2001:db8::1]:11211", "[2001:db8::1]:11211"},
        {"host:2e3", "host:2e3"},
        /* Number() trims JavaScript's white space, U+3000 among it. */
        {"host: 11211", "host"},
        {"host:11211\xe3\x80\x80", "host"},
        {"host:", "host:"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        shmring_snapshot_t *by_address = one_server(cases[i].address, NULL, 0);
        shmring_snapshot_t *by_key = one_server(cases[i].address, cases[i].hashed, 0);
        test_check_same_points(by_address, by_key);
        shmring_snapshot_free(by_address);
        shmring_snapshot_free(by_key);
    }
    /* JavaScript reads these as 11211 too, by rules we do not follow: refused. */
    static const char *const refused[] = {"host:+11211", "host:11211.0", "host:1.1211e4",
                                          "host:112110e-1"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        ck_assert_ptr_null(one_server(refused[i], NULL, SHMRING_EBADADDRESS));
    /* A hash key is hashed as it is, whatever the address. */
    shmring_snapshot_t *keyed = one_server("host:+11211", "host", 0);
    shmring_snapshot_t *plain = one_server("host:11211", NULL, 0);
    test_check_same_points(keyed, plain);
    shmring_snapshot_free(keyed);
    shmring_snapshot_free(plain);
}
END_TEST

START_TEST(equal_points_keep_server_order)
{
    /* A server given twice: every point is shared, and the first keeps it. */
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 160);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "first", "10.0.0.9:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "second", "10.0.0.9:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 320);
    test_check_sole_owner(snapshot, "first");
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(vnodes_are_four_times_the_vnode_count)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_SHA1, 40);
    test_add_node(set, "a:1", 1, SHMRING_STATE_UP);
    test_add_node(set, "b:2", 2, SHMRING_STATE_UP);
    /* 'vnode count' 10: floor(1/3 x 10 x 2) = 6 and floor(2/3 x 10 x 2) = 13. */
    ck_assert_uint_eq(test_point_count_of(set), 4 * (6 + 13));
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.vnodes = 41;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), SHMRING_EBADVNODES);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *placement_hashring_suite(void)
{
    Suite *s = suite_create("placement_hashring");
    TEST_CASE(s, "hashring", memcached_client_ring, sha256_and_weights,
              default_port_strings, equal_points_keep_server_order,
              vnodes_are_four_times_the_vnode_count);
    return s;
}

int main(void)
{
    return test_run_suite(placement_hashring_suite());
}
