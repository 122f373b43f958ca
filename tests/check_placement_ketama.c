/*
 * Tests of lib/placement_ketama.c, libmemcached's weighted ketama: point counts as
 * libmemcached's float arithmetic gives them, and the point strings, pinned by the
 * MD5 words of "host-i" (port 11211 left out) and "host:port-i" computed apart with
 * Python's hashlib. The whole continuum is compared with libmemcached itself by
 * check_ketama_libmemcached.
 */
#include "test_placement.h"
#include "test_support.h"

START_TEST(ketama_point_counts)
{
    /* 160 points a server when all weigh the same... */
    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5);
    ck_assert_uint_eq(test_point_count_of(set), 1600);
    shmring_nodeset_free(set);

    /* ... but libmemcached computes in float: for 25 equal servers, 1/25 x 160 / 4 x 25
     * is 39.999996, so each server gets 39 digests (156 points), not 40. */
    set = test_nodeset(25, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5);
    ck_assert_uint_eq(test_point_count_of(set), 25 * 156);
    shmring_nodeset_free(set);

    /* Weights 1 and 3 of two live servers: floor(0.25 x 40 x 2) x 4 = 80 and
     * floor(0.75 x 40 x 2) x 4 = 240; a down server's weight does not count. */
    set = test_one_three_and_down(SHMRING_ALGORITHM_KETAMA);
    ck_assert_uint_eq(test_point_count_of(set), 80 + 240);
    shmring_nodeset_free(set);
}
END_TEST
START_TEST(ketama_point_strings)
{
    /* "10.0.0.1-0" to "10.0.0.1-39": the default port is left out of the string. */
    shmring_snapshot_t *snapshot =
        test_one_node_snapshot(SHMRING_ALGORITHM_KETAMA, "10.0.0.1:11211", NULL);
    ck_assert_uint_eq(test_point_count(snapshot), 160);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x049295e4) << 32);
    ck_assert_uint_eq(test_point(snapshot, 1), UINT64_C(0x05c54922) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xfe10c40b) << 32);
    shmring_snapshot_free(snapshot);

    /* A bare host is on the default port: the same strings. */
    snapshot = test_one_node_snapshot(SHMRING_ALGORITHM_KETAMA, "10.0.0.1", NULL);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x049295e4) << 32);
    shmring_snapshot_free(snapshot);

    /* "10.0.0.1:22122-0" to "10.0.0.1:22122-39" on another port. */
    snapshot = test_one_node_snapshot(SHMRING_ALGORITHM_KETAMA, "10.0.0.1:22122", NULL);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x019a242d) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xff9f95d1) << 32);
    shmring_snapshot_free(snapshot);
}
END_TEST

static Suite *placement_ketama_suite(void)
{
    Suite *s = suite_create("placement_ketama");
    TEST_CASE(s, "ketama", ketama_point_counts, ketama_point_strings);
    return s;
}

int main(void)
{
    return test_run_suite(placement_ketama_suite());
}
