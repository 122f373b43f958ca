/*
 * Unit tests of lib/placement_groupcache.c, the ring of Go's groupcache
 * consistenthash with its default hash: the points (CRC-32 of the replica number in
 * decimal and the peer), their count, the first-point-at-or-after lookup and its
 * wrap, equal points going to the last peer added, and what is refused. Values are
 * computed apart in Python (zlib). Verification against groupcache itself belongs to
 * tests/peers/test_groupcache.py.
 */
#include "test_placement.h"
#include "test_support.h"

/* A groupcache node set of REPLICAS with the peers ADDRESSES[i] named "a", "b", ... */
static shmring_nodeset_t *groupcache_set(const char *const *addresses, size_t count,
                                         uint32_t replicas)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_GROUPCACHE, SHMRING_HASH_CRC32, replicas);
    for (size_t i = 0; i < count; i++) {
        char name[2] = {(char)('a' + i), '\0'};
        ck_assert_int_eq(
            shmring_nodeset_add(set, name, addresses[i], 1, SHMRING_STATE_UP, NULL), 0);
    }
    return set;
}

START_TEST(groupcache_points_and_lookup)
{
    /* Peers "a" and "b", 3 replicas: CRC-32 of "0b", "1b", "2b" are 0x0f1546fa,
     * 0x24381539 and 0x3d232478; of "0a", "1a", "2a" 0x961c1740, 0xa42a75c2 and
     * 0xbd314483. */
    static const char *const peers[] = {"a", "b"};
    shmring_nodeset_t *set = groupcache_set(peers, 2, 3);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 6);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x0f1546fa) << 32);
    ck_assert_uint_eq(test_point(snapshot, 5), UINT64_C(0xbd314483) << 32);
    ck_assert_uint_eq(test_hash_owner(snapshot, 0), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0x3d232478) << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0x3d232479) << 32), 0);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xbd314483) << 32), 0);
    /* Past the last point, the first. */
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xbd314484) << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xffffffff) << 32), 1);
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
    /* vnodes is the number of replicas of every peer. */
    static const char *const three[] = {"http://10.0.0.1:8080", "http://10.0.0.2:8080",
                                        "http://10.0.0.3:8080"};
    set = groupcache_set(three, 3, 50);
    ck_assert_uint_eq(test_point_count_of(set), 150);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(groupcache_equal_points)
{
    /* Two peers of one string: hashMap holds the last one Add wrote, for every point;
     * a hash_key is hashed in place of the address. */
    static const char *const peers[] = {"p", "q", "r"};
    shmring_nodeset_t *set = groupcache_set(peers, 3, 50);
    ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "a", "r"), 0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    for (uint64_t hash = 0; hash < 4096; hash++)
        ck_assert_uint_ne(test_hash_owner(snapshot, (hash * 1048573) << 32), 0);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(groupcache_refusals)
{
    static const char *const peers[] = {"a", "b"};
    shmring_nodeset_t *set = groupcache_set(peers, 2, 50);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "b", 2), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_EUNWEIGHTED);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "b", 1), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "b", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_ENODOWN);
    shmring_nodeset_free(set);
    /* Only CRC-32, New()'s default: a function given instead has no name. */
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = SHMRING_ALGORITHM_GROUPCACHE;
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
    params.hash = SHMRING_HASH_CRC32;
    ck_assert_int_eq(shmring_params_check(&params), 0);
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_GROUPCACHE),
                     SHMRING_HASH_CRC32);
}
END_TEST

static Suite *placement_groupcache_suite(void)
{
    Suite *s = suite_create("placement_groupcache");
    TCase *tc = tcase_create("groupcache");
    tcase_add_test(tc, groupcache_points_and_lookup);
    tcase_add_test(tc, groupcache_equal_points);
    tcase_add_test(tc, groupcache_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_groupcache_suite());
}
