/*
 * Unit tests of lib/placement_libketama.c, last.fm's libketama continuum: point
 * counts from its mixed float and double arithmetic, point strings that keep the
 * address whole (pinned by MD5 words computed apart with Python's hashlib), equal
 * points in server order, the wrap of ketama_get_server(), and a node's hash key in
 * place of its address. Verification against libketama itself belongs to its own
 * test.
 */
#include "test_placement.h"
#include "test_support.h"

START_TEST(libketama_point_counts)
{
    shmring_nodeset_t *set =
        test_nodeset(10, SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_MD5);
    ck_assert_uint_eq(test_point_count_of(set), 1600);
    shmring_nodeset_free(set);
    /* pct is a float, 40.0 a double: for 25 equal servers (float)(0.04f x 40.0 x 25)
     * rounds up to 40.0 where libmemcached's all-float ketama gets 39.999996 and 39
     * digests: 40 digests, 160 points each. */
    set = test_nodeset(25, SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_MD5);
    ck_assert_uint_eq(test_point_count_of(set), 25 * 160);
    shmring_nodeset_free(set);

    /* Memory 1 and 3: floor(0.25 x 40 x 2) = 20 and floor(0.75 x 40 x 2) = 60 digests;
     * a down server is not in the server file at all. */
    set = test_one_three_and_down(SHMRING_ALGORITHM_LIBKETAMA);
    ck_assert_uint_eq(test_point_count_of(set), 80 + 240);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(libketama_point_strings)
{
    /* "10.0.0.1:11211-0".."-39": the address as the server file gives it, port 11211
     * included (libmemcached's ketama leaves that port out). */
    shmring_snapshot_t *snapshot =
        test_one_node_snapshot(SHMRING_ALGORITHM_LIBKETAMA, "10.0.0.1:11211", NULL);
    ck_assert_uint_eq(test_point_count(snapshot), 160);
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x06ef5726) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xffb5891d) << 32);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(libketama_equal_points_keep_server_order)
{
    /* Two servers of one address have equal points; qsort() (a stable merge sort in
     * glibc) keeps them in server order, so the earlier owns every key. */
    for (int order = 0; order < 2; order++) {
        shmring_nodeset_t *set =
            test_empty_set(SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_MD5, 160);
        ck_assert_int_eq(shmring_nodeset_add(set, order == 0 ? "a" : "b",
                                             "10.0.0.9:11211", 1, SHMRING_STATE_UP, NULL),
                         0);
        ck_assert_int_eq(shmring_nodeset_add(set, order == 0 ? "b" : "a",
                                             "10.0.0.9:11211", 1, SHMRING_STATE_UP, NULL),
                         0);
        shmring_snapshot_t *snapshot = test_snapshot(set);
        ck_assert_uint_eq(test_point_count(snapshot), 320);
        for (uint32_t p = 0; p < 320; p += 2) {
            ck_assert_uint_eq(test_point(snapshot, p), test_point(snapshot, p + 1));
            ck_assert_uint_eq(test_point_owner(snapshot, p), 0);
        }
        test_check_sole_owner(snapshot, order == 0 ? "a" : "b");
        shmring_snapshot_free(snapshot);
        shmring_nodeset_free(set);
    }
}
END_TEST

START_TEST(libketama_lookup_wraps)
{
    /* ketama_get_server() returns the first point when no point is >= the hash, and
     * for a hash of 0 (it reads the point before the first as 0). */
    shmring_nodeset_t *set =
        test_nodeset(5, SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_MD5);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    test_check_wrap(snapshot);
    ck_assert_uint_eq(test_hash_owner(snapshot, 0), test_point_owner(snapshot, 0));
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(libketama_hash_key_replaces_address)
{
    /* A node at another address whose hash key is "10.0.0.1:11211" has the points of
     * a server "10.0.0.1:11211": the three pinned here are hashlib's MD5 words of
     * "10.0.0.1:11211-0".."-39", sorted (the first, the 81st and the last). */
    static const struct {
        uint32_t index;
        uint32_t value;
    } pinned[] = {{0, 0x06ef5726}, {80, 0x7fb26179}, {159, 0xffb5891d}};
    shmring_snapshot_t *keyed = test_one_node_snapshot(SHMRING_ALGORITHM_LIBKETAMA,
                                                       "10.9.9.9:80", "10.0.0.1:11211");
    ck_assert_uint_eq(test_point_count(keyed), 160);
    for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++)
        ck_assert_uint_eq(test_point(keyed, pinned[i].index) >> 32, pinned[i].value);
    shmring_snapshot_t *plain =
        test_one_node_snapshot(SHMRING_ALGORITHM_LIBKETAMA, "10.0.0.1:11211", NULL);
    test_check_same_points(keyed, plain);
    shmring_snapshot_free(plain);
    shmring_snapshot_free(keyed);
}
END_TEST

START_TEST(libketama_hash_key_answers_as_the_server_string)
{
    /* python_ketama/tests.py's servers, 127.0.0.1:11211 (memory 600) and
     * 127.0.0.1:11212 (400), given as hash keys of nodes at other addresses: the ring
     * libketama publishes for them, 48 + 32 digests and get_server("test") at point
     * 3454255383 of the first server (hashi("test") = 3446378249). */
    static const struct {
        const char *name, *address, *hash_key;
        uint32_t memory;
    } servers[] = {{"x", "10.1.1.1:1", "127.0.0.1:11211", 600},
                   {"y", "10.1.1.2:2", "127.0.0.1:11212", 400}};
    uint32_t ids[2];
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_MD5, 160);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(shmring_nodeset_add(set, servers[i].name, servers[i].address,
                                             servers[i].memory, SHMRING_STATE_UP,
                                             &ids[i]),
                         0);
        ck_assert_int_eq(
            shmring_nodeset_set_hash_key(set, servers[i].name, servers[i].hash_key), 0);
    }
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 320);
    uint32_t chosen = 0;
    while (chosen < 320 && test_point(snapshot, chosen) >> 32 < 3446378249u)
        chosen++;
    ck_assert_uint_lt(chosen, 320);
    ck_assert_uint_eq(test_point(snapshot, chosen) >> 32, 3454255383u);
    ck_assert_uint_eq(test_point_owner(snapshot, chosen), 0);
    uint32_t id;
    ck_assert_int_eq(shmring_snapshot_lookup_id(snapshot, "test", 4, &id), 0);
    ck_assert_uint_eq(id, ids[0]);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *placement_libketama_suite(void)
{
    Suite *s = suite_create("placement_libketama");
    TEST_CASE(s, "libketama", libketama_point_counts, libketama_point_strings,
              libketama_equal_points_keep_server_order, libketama_lookup_wraps,
              libketama_hash_key_replaces_address,
              libketama_hash_key_answers_as_the_server_string);
    return s;
}

int main(void)
{
    return test_run_suite(placement_libketama_suite());
}
