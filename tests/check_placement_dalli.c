/*
 * Unit tests of lib/placement_dalli.c, the continuum of Ruby's Dalli (3.0.6): the
 * points of a server (SHA-1 of "NAME:i"), their weight-scaled count, the name Dalli
 * derives from a server string, the last-point-at-or-below lookup stored as
 * first-at-or-after points, its wrap, equal points going to the last server, and what
 * is refused. Values are computed apart in Python (hashlib, zlib). Verification
 * against Dalli itself belongs to tests/peers/test_dalli.py.
 */
#include "test_placement.h"
#include "test_support.h"

/* A dalli node set of the nodes ADDRESSES[i] named "a", "b", ..., weight 1, up. */
static shmring_nodeset_t *dalli_set(const char *const *addresses, size_t count)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_DALLI, SHMRING_HASH_CRC32, 160);
    for (size_t i = 0; i < count; i++) {
        char name[2] = {(char)('a' + i), '\0'};
        ck_assert_int_eq(
            shmring_nodeset_add(set, name, addresses[i], 1, SHMRING_STATE_UP, NULL), 0);
    }
    return set;
}

START_TEST(dalli_points_and_lookup)
{
    /* "10.0.0.1:11211" (a) and "cache.example" (b, named "cache.example:11211"). */
    static const char *const addresses[] = {"10.0.0.1:11211", "cache.example"};
    shmring_nodeset_t *set = dalli_set(addresses, 2);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 320);
    /* a's point 0 is SHA-1("10.0.0.1:11211:0") = ef5152ad...: a hash there is a's,
     * one below it b's, whose point 0xeea3d077 is the last below. */
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xef5152ad) << 32), 0);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xeea3d077) << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xef5152ac) << 32), 1);
    /* The wrap: below the lowest point (b's 0x00ae95b9) is the highest's (a's
     * 0xffc33863), as is everything from it up; below it, b's 0xfee5c1e5 is followed
     * by a's 0xff8c73df. */
    ck_assert_uint_eq(test_hash_owner(snapshot, 0), 0);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0x00ae95b8) << 32), 0);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0x00ae95b9) << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xff8c73de) << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xff8c73df) << 32), 0);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xffc33863) << 32), 0);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xffffffff) << 32), 0);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(dalli_weights)
{
    /* floor(3 x 160 x w / 7.0) for weights 1, 2 and 4: 68 + 137 + 274. */
    static const char *const addresses[] = {"h1", "h2", "h3"};
    shmring_nodeset_t *set = dalli_set(addresses, 3);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "b", 2), 0);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "c", 4), 0);
    ck_assert_uint_eq(test_point_count_of(set), 479);
    shmring_nodeset_free(set);
}
END_TEST

/* Checks that a node at ADDRESS places the points of one whose hash_key is NAME. */
static void check_name(const char *address, const char *name)
{
    const char *const other[] = {"other:1"};
    shmring_nodeset_t *x = dalli_set(other, 1), *y = dalli_set(other, 1);
    ck_assert_int_eq(shmring_nodeset_add(x, "n", address, 1, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(y, "n", "placeholder", 1, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(shmring_nodeset_set_hash_key(y, "n", name), 0);
    shmring_snapshot_t *a = test_snapshot(x), *b = test_snapshot(y);
    test_check_same_points(a, b);
    shmring_snapshot_free(a);
    shmring_snapshot_free(b);
    shmring_nodeset_free(x);
    shmring_nodeset_free(y);
}

START_TEST(dalli_server_names)
{
    check_name("cache.example", "cache.example:11211");
    check_name("10.0.0.1:11300", "10.0.0.1:11300");
    check_name("[2001:db8::1]", "2001:db8::1:11211");
    check_name("[::1]:11300", "::1:11300");
    /* Ruby's Integer() reads a leading 0 as octal. */
    check_name("h:010", "h:8");
    check_name("h:0", "h:0");
    check_name("/run/memcached.sock", "/run/memcached.sock");
    /* Not hexadecimal between the brackets: the host runs to the first colon. */
    check_name("[x]:1", "[x]:1");
}
END_TEST

START_TEST(dalli_equal_points)
{
    /* "h" and "h:11211" are one name: every point is both servers', and a key at or
     * past one goes to the later server. */
    static const char *const addresses[] = {"h", "h:11211"};
    shmring_nodeset_t *set = dalli_set(addresses, 2);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 320);
    for (uint64_t hash = 0; hash < 4096; hash++)
        ck_assert_uint_eq(test_hash_owner(snapshot, (hash * 1048573) << 32), 1);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(dalli_refusals)
{
    /* Weights belong to the node, URIs to the hash_key; what Dalli cannot parse. */
    static const char *const bad[] = {
        "h:11211:2", "/run/s.sock:2", "memcached://h:1", "[]", ":11211", "[]:1",
        "h:08",      "fe80::1",       "h:1:2:3",         "h:", "h:x",    "[::1]x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *const one[] = {bad[i]};
        shmring_nodeset_t *set = dalli_set(one, 1);
        ck_assert_msg(test_build_error(set) == SHMRING_EBADADDRESS, "%s", bad[i]);
        shmring_nodeset_free(set);
    }
    /* Dalli has no down servers. */
    static const char *const two[] = {"a:1", "b:1"};
    shmring_nodeset_t *set = dalli_set(two, 2);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "b", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_ENODOWN);
    shmring_nodeset_free(set);
    /* Only CRC-32, Dalli's key hash. */
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = SHMRING_ALGORITHM_DALLI;
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
    params.hash = SHMRING_HASH_CRC32;
    ck_assert_int_eq(shmring_params_check(&params), 0);
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_DALLI),
                     SHMRING_HASH_CRC32);
}
END_TEST

static Suite *placement_dalli_suite(void)
{
    Suite *s = suite_create("placement_dalli");
    TCase *tc = tcase_create("dalli");
    tcase_add_test(tc, dalli_points_and_lookup);
    tcase_add_test(tc, dalli_weights);
    tcase_add_test(tc, dalli_server_names);
    tcase_add_test(tc, dalli_equal_points);
    tcase_add_test(tc, dalli_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_dalli_suite());
}
