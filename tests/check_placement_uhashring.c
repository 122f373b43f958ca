/*
 * Tests of `uhashring` (lib/placement_uhashring.c). The expected points and owners
 * were computed once with Debian's python3-uhashring 2.1: HashRing(["a", "b", "c"])
 * and HashRing({"a": 1, "b": 3}, hash_fn="ketama"), their get_points() and
 * get_node(key). tests/peers/test_uhashring.py checks many more against the library
 * itself.
 */
#include <string.h>

#include "test_placement.h"
#include "test_support.h"

static shmring_nodeset_t *abc(shmring_hash_t hash, uint32_t vnodes)
{
    shmring_nodeset_t *set = test_empty_set(SHMRING_ALGORITHM_UHASHRING, hash, vnodes);
    test_add_node(set, "a", 1, SHMRING_STATE_UP);
    test_add_node(set, "b", 1, SHMRING_STATE_UP);
    test_add_node(set, "c", 1, SHMRING_STATE_UP);
    return set;
}

static void check_owner(const shmring_snapshot_t *snapshot, const char *key,
                        const char *expected)
{
    shmring_node_t node;
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, key, strlen(key), &node), 0);
    ck_assert_msg(strcmp(node.name, expected) == 0, "key '%s': %s, not %s", key,
                  node.name, expected);
}

START_TEST(default_ring_points_and_owners)
{
    shmring_nodeset_t *set = abc(SHMRING_HASH_MD5, 160);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    /* 160 points a node; the top 64 bits of int(md5("NAME-i").hexdigest(), 16). */
    ck_assert_uint_eq(test_point_count(snapshot), 480);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x002d259e1fc532bf));
    ck_assert_uint_eq(test_point_owner(snapshot, 0), 0);
    ck_assert_uint_eq(test_point(snapshot, 479), UINT64_C(0xfe7bc3e6fe7b2a2b));
    ck_assert_uint_eq(test_point_owner(snapshot, 479), 1);
    check_owner(snapshot, "user:1", "a");
    check_owner(snapshot, "user:2", "b");
    check_owner(snapshot, "user:3", "a");
    check_owner(snapshot, "", "b");
    check_owner(snapshot, "caf\xc3\xa9", "b");
    /* "a-0" hashes to a's point 0; bisect() takes the point after it, c's. */
    check_owner(snapshot, "a-0", "c");
    check_owner(snapshot, "b-159", "b");
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(ketama_ring_points_and_owners)
{
    /* (40 x 2 x 1) // 4 = 20 and (40 x 2 x 3) // 4 = 60 digests, 4 points each; the
     * down node is not in the ring and counts in neither N nor W. */
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_KETAMA, 160);
    test_add_node(set, "a", 1, SHMRING_STATE_UP);
    test_add_node(set, "b", 3, SHMRING_STATE_UP);
    test_add_node(set, "c", 9, SHMRING_STATE_DOWN);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 320);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x00392f41) << 32);
    ck_assert_uint_eq(test_point_owner(snapshot, 0), 0);
    ck_assert_uint_eq(test_point(snapshot, 319), UINT64_C(0xffe35438) << 32);
    ck_assert_uint_eq(test_point_owner(snapshot, 319), 0);
    check_owner(snapshot, "user:1", "b");
    check_owner(snapshot, "user:2", "a");
    check_owner(snapshot, "user:3", "b");
    check_owner(snapshot, "", "b");
    check_owner(snapshot, "a-0", "a");
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(equal_points_go_to_the_last_written)
{
    /* Two nodes of one hash key have every point in common: uhashring's dict keeps
     * the second written, in both rings. */
    for (int ketama = 0; ketama < 2; ketama++) {
        shmring_nodeset_t *set =
            test_empty_set(SHMRING_ALGORITHM_UHASHRING,
                           ketama ? SHMRING_HASH_KETAMA : SHMRING_HASH_MD5, 160);
        test_add_node(set, "first", 1, SHMRING_STATE_UP);
        test_add_node(set, "second", 1, SHMRING_STATE_UP);
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "first", "same"), 0);
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "second", "same"), 0);
        shmring_snapshot_t *snapshot = test_snapshot(set);
        ck_assert_uint_eq(test_point_count(snapshot), 320);
        for (uint32_t p = 0; p < 320; p++)
            ck_assert_uint_eq(test_point_owner(snapshot, p), 1);
        check_owner(snapshot, "any key", "second");
        shmring_snapshot_free(snapshot);
        shmring_nodeset_free(set);
    }
}
END_TEST

START_TEST(hash_key_replaces_the_name)
{
    /* uhashring hashes its node name: a node renamed with that name as hash key
     * keeps every point. */
    shmring_nodeset_t *named = abc(SHMRING_HASH_KETAMA, 160);
    shmring_nodeset_t *keyed =
        test_empty_set(SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_KETAMA, 160);
    static const char *const names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char renamed[8] = {'x', names[i][0], '\0'};
        test_add_node(keyed, renamed, 1, SHMRING_STATE_UP);
        ck_assert_int_eq(shmring_nodeset_set_hash_key(keyed, renamed, names[i]), 0);
    }
    shmring_snapshot_t *a = test_snapshot(named);
    shmring_snapshot_t *b = test_snapshot(keyed);
    test_check_same_points(a, b);
    shmring_snapshot_free(a);
    shmring_snapshot_free(b);
    shmring_nodeset_free(named);
    shmring_nodeset_free(keyed);
}
END_TEST

START_TEST(vnodes_and_weights)
{
    /* The default ring: vnodes x weight points; the ketama ring: 4 x ((vnodes / 4) x
     * N x w // W), here (1 x 3 x 1) // 5 = 0 digests for a and (1 x 3 x 3) // 5 = 1
     * for b. */
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_MD5, 7);
    test_add_node(set, "a", 1, SHMRING_STATE_UP);
    test_add_node(set, "b", 3, SHMRING_STATE_UP);
    test_add_node(set, "c", 1, SHMRING_STATE_UP);
    ck_assert_uint_eq(test_point_count_of(set), 35);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.hash = SHMRING_HASH_KETAMA;
    params.vnodes = 4;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_uint_eq(test_point_count_of(set), 4 * (0 + 1 + 0));
    params.vnodes = 6;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), SHMRING_EBADVNODES);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *placement_uhashring_suite(void)
{
    Suite *s = suite_create("placement_uhashring");
    TEST_CASE(s, "uhashring", default_ring_points_and_owners,
              ketama_ring_points_and_owners, equal_points_go_to_the_last_written,
              hash_key_replaces_the_name, vnodes_and_weights);
    return s;
}

int main(void)
{
    return test_run_suite(placement_uhashring_suite());
}
