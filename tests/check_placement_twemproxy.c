/*
 * Tests of lib/placement_twemproxy.c, nutcracker's `distribution: ketama`: point
 * counts as nutcracker's float arithmetic gives them, the server names its point
 * strings start with (derived from "host:port", or the node's hash_key), pinned by
 * the MD5 words of those strings computed apart with Python's hashlib, and equal
 * points kept in server order. The continuum is compared with nutcracker itself by
 * tests/peers/test_twemproxy.py.
 */
#include "test_placement.h"
#include "test_support.h"

START_TEST(twemproxy_point_counts)
{
    /* 160 points a server when all weigh the same... */
    shmring_nodeset_t *set =
        test_nodeset(10, SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_FNV1A_64);
    ck_assert_uint_eq(test_point_count_of(set), 1600);
    shmring_nodeset_free(set);
    /* ... but for 25 servers 1/25 x 160 / 4 x 25 is 39.999996 in float, and the 1e-10
     * nutcracker adds does not reach the next float: 39 digests, 156 points each. */
    set = test_nodeset(25, SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_FNV1A_64);
    ck_assert_uint_eq(test_point_count_of(set), 25 * 156);
    shmring_nodeset_free(set);

    /* Weights 1 and 3 of two live servers: 0.25 x 40 x 2 = 20 and 0.75 x 40 x 2 = 60
     * digests; an ejected (down) server's weight does not count. */
    set = test_one_three_and_down(SHMRING_ALGORITHM_TWEMPROXY);
    ck_assert_uint_eq(test_point_count_of(set), 80 + 240);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(twemproxy_point_strings)
{
    /* nutcracker names "10.0.0.1:11211" "10.0.0.1": strings "10.0.0.1-0".."-39". */
    shmring_snapshot_t *snapshot =
        test_one_node_snapshot(SHMRING_ALGORITHM_TWEMPROXY, "10.0.0.1:11211", NULL);
    ck_assert_uint_eq(test_point_count(snapshot), 160);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x049295e4) << 32);
    ck_assert_uint_eq(test_point(snapshot, 1), UINT64_C(0x05c54922) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xfe10c40b) << 32);
    shmring_snapshot_free(snapshot);

    /* Another port stays in the name: "10.0.0.1:22122-0".. */
    snapshot =
        test_one_node_snapshot(SHMRING_ALGORITHM_TWEMPROXY, "10.0.0.1:22122", NULL);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x019a242d) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xff9f95d1) << 32);
    shmring_snapshot_free(snapshot);

    /* A Unix socket's name keeps the colon that followed its path: "/tmp/mc.sock:-0". */
    snapshot = test_one_node_snapshot(SHMRING_ALGORITHM_TWEMPROXY, "/tmp/mc.sock", NULL);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x00304034) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xff4ece2e) << 32);
    shmring_snapshot_free(snapshot);

    /* A server named in the configuration (our hash_key) is hashed by that name. */
    snapshot =
        test_one_node_snapshot(SHMRING_ALGORITHM_TWEMPROXY, "10.0.0.1:11211", "cache-a");
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x00fba912) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xfdb2f4a4) << 32);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(twemproxy_equal_names_go_by_node_name)
{
    /* Two servers of one name have equal points: every point comes twice. nutcracker
     * refuses such a pair, so the tie-break is ours: the node named first ("a") owns
     * every key and the other comes next, in either node-set order, so that node
     * order never changes an answer (lib/placement.c, shmring__placement_order()). */
    for (int order = 0; order < 2; order++) {
        shmring_nodeset_t *set =
            test_empty_set(SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_FNV1A_64, 160);
        test_add_node(set, order == 0 ? "a" : "b", 1, SHMRING_STATE_UP);
        test_add_node(set, order == 0 ? "b" : "a", 1, SHMRING_STATE_UP);
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "a", "shared"), 0);
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "b", "shared"), 0);
        shmring_snapshot_t *snapshot = test_snapshot(set);
        ck_assert_uint_eq(test_point_count(snapshot), 320);
        uint32_t a_index = order == 0 ? 0 : 1;
        for (uint32_t p = 0; p < 320; p += 2) {
            ck_assert_uint_eq(test_point(snapshot, p), test_point(snapshot, p + 1));
            ck_assert_uint_eq(test_point_owner(snapshot, p), a_index);
            ck_assert_uint_eq(test_point_owner(snapshot, p + 1), 1 - a_index);
        }
        for (uint64_t k = 0; k < 100; k++) {
            char key[32];
            size_t len = test_key(key, k);
            shmring_node_t found[2];
            ck_assert_int_eq(shmring_snapshot_lookup_n(snapshot, key, len, found, 2), 2);
            ck_assert_str_eq(found[0].name, "a");
            ck_assert_str_eq(found[1].name, "b");
        }
        shmring_snapshot_free(snapshot);
        shmring_nodeset_free(set);
    }
}
END_TEST

START_TEST(twemproxy_lookup_wraps)
{
    /* ketama_dispatch(): the first point >= the key's hash, wrapping to the first. */
    shmring_nodeset_t *set =
        test_nodeset(5, SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_FNV1A_64);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *placement_twemproxy_suite(void)
{
    Suite *s = suite_create("placement_twemproxy");
    TEST_CASE(s, "twemproxy", twemproxy_point_counts, twemproxy_point_strings,
              twemproxy_equal_names_go_by_node_name, twemproxy_lookup_wraps);
    return s;
}

int main(void)
{
    return test_run_suite(placement_twemproxy_suite());
}
