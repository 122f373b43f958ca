/*
 * Unit tests of lib/placement_haproxy.c and lib/hash_haproxy.c, the tree of HAProxy's
 * `hash-type consistent`: the key hashes (pinned by values computed apart in Python
 * from HAProxy 2.6's src/hash.c), the servers' points (full_hash(id x 4096 + j)), the
 * ids HAProxy gives servers without one, the nearest-point rule and its tie, equal
 * points split between the first and the last server, and what is refused.
 * Verification against haproxy itself belongs to tests/peers/test_haproxy.py.
 */
#include <stdbool.h>

#include "hash_internal.h"
#include "test_placement.h"
#include "test_support.h"

/* A haproxy node set of HASH with nodes "a", "b", ... of WEIGHT 1, each given the id
 * IDS[i] as its hash_key (NULL: none) and STATES[i] (NULL: all up). */
static shmring_nodeset_t *haproxy_set(shmring_hash_t hash, const char *const *ids,
                                      size_t count, const shmring_state_t *states)
{
    shmring_nodeset_t *set = test_empty_set(SHMRING_ALGORITHM_HAPROXY, hash, 160);
    for (size_t i = 0; i < count; i++) {
        char name[2] = {(char)('a' + i), '\0'};
        ck_assert_int_eq(shmring_nodeset_add(set, name, "127.0.0.1:80", 1,
                                             states ? states[i] : SHMRING_STATE_UP, NULL),
                         0);
        if (ids[i] != NULL)
            ck_assert_int_eq(shmring_nodeset_set_hash_key(set, name, ids[i]), 0);
    }
    return set;
}

static uint32_t key_hash(shmring_hash_t hash, const char *key)
{
    return (uint32_t)(shmring__key_hash_any(SHMRING_ALGORITHM_HAPROXY, hash, key,
                                            strlen(key)) >>
                      32);
}

START_TEST(haproxy_key_hashes)
{
    static const struct {
        const char *key;
        uint32_t plain[4], avalanche[4];
    } cases[] = {
        {"",
         {0x00000000, 0x00001505, 0xf99a0360, 0x00000000},
         {0xab4ed927, 0xddb17387, 0x8e32b3b9, 0xab4ed927}},
        {"a",
         {0x00000061, 0x0002b606, 0x714bf225, 0xe8b7be43},
         {0x6d1eff97, 0xd385d69f, 0x7669dd2b, 0x4cc86316}},
        {"haproxy",
         {0x0ed519b5, 0x33d7d490, 0x80713d93, 0x53cd3fa0},
         {0xbec9ea5b, 0xc97a60e7, 0xbab9e1da, 0x77a564fd}},
        /* Bytes >= 0x80 count as unsigned. */
        {"\xc3\xa9t\xc3\xa9",
         {0xadee62f4, 0x16265db1, 0x194f1da3, 0x44d16cd4},
         {0x381d8c3c, 0x9adc791c, 0xcc8d7c4a, 0xf89a30eb}},
    };
    static const shmring_hash_t plain[4] = {SHMRING_HASH_SDBM, SHMRING_HASH_DJB2,
                                            SHMRING_HASH_WT6, SHMRING_HASH_CRC32};
    static const shmring_hash_t avalanche[4] = {
        SHMRING_HASH_SDBM_AVALANCHE, SHMRING_HASH_DJB2_AVALANCHE,
        SHMRING_HASH_WT6_AVALANCHE, SHMRING_HASH_CRC32_AVALANCHE};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (size_t f = 0; f < 4; f++) {
            ck_assert_uint_eq(key_hash(plain[f], cases[i].key), cases[i].plain[f]);
            ck_assert_uint_eq(key_hash(avalanche[f], cases[i].key),
                              cases[i].avalanche[f]);
        }
    }
    ck_assert_uint_eq(shmring__haproxy_full_hash(0), 0xab4ed927);
    /* `hash-type consistent` alone is sdbm with avalanche. */
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_HAPROXY),
                     SHMRING_HASH_SDBM_AVALANCHE);
}
END_TEST

START_TEST(haproxy_points_and_nearest_rule)
{
    /* Servers 1 and 2 of weight 1: 16 points each, full_hash(id x 4096 + j), all
     * distinct; each gap holds a second entry, its lower half's owner. */
    static const char *const ids[] = {NULL, NULL};
    shmring_nodeset_t *set = haproxy_set(SHMRING_HASH_SDBM_AVALANCHE, ids, 2, NULL);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 64);
    /* Server 1's point 0 is full_hash(4096). */
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0x49c2008b) << 32), 0);
    /* The lowest point is b's 0x18b66546, the next a's 0x1d804ea4, 80341342 apart:
     * a hash up to half that distance above b's point (the tie included) is b's. */
    const uint64_t low = 0x18b66546, high = 0x1d804ea4, middle = 0x1b1b59f5;
    ck_assert_uint_eq(middle, low + (high - low) / 2);
    ck_assert_uint_eq(test_hash_owner(snapshot, low << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, (low + 1) << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, middle << 32), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, (middle + 1) << 32), 0);
    ck_assert_uint_eq(test_hash_owner(snapshot, high << 32), 0);
    /* The wrap: the last point (b's 0xf212ae04) and the first (b's) hold 0 and the
     * largest hash between them. */
    ck_assert_uint_eq(test_hash_owner(snapshot, 0), 1);
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_C(0xffffffff) << 32), 1);
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* Checks that the node sets of IDS and of EXPLICIT place the same points. */
static void check_same_ids(const char *const *ids, const char *const *explicit,
                           size_t count, const shmring_state_t *states)
{
    shmring_nodeset_t *a = haproxy_set(SHMRING_HASH_SDBM, ids, count, states);
    shmring_nodeset_t *b = haproxy_set(SHMRING_HASH_SDBM, explicit, count, states);
    shmring_snapshot_t *x = test_snapshot(a), *y = test_snapshot(b);
    test_check_same_points(x, y);
    shmring_snapshot_free(x);
    shmring_snapshot_free(y);
    shmring_nodeset_free(a);
    shmring_nodeset_free(b);
}

START_TEST(haproxy_default_ids)
{
    /* In order from 1; a free id at or above the counter, which every server moves
     * on by one, its own id or not. */
    static const char *const plain[] = {NULL, NULL, NULL};
    static const char *const plain_ids[] = {"1", "2", "3"};
    check_same_ids(plain, plain_ids, 3, NULL);
    static const char *const taken[] = {NULL, "1", NULL};
    static const char *const taken_ids[] = {"2", "1", "4"};
    check_same_ids(taken, taken_ids, 3, NULL);
    static const char *const ahead[] = {"3", NULL, NULL, NULL};
    static const char *const ahead_ids[] = {"3", "2", "4", "5"};
    check_same_ids(ahead, ahead_ids, 4, NULL);
    static const char *const far[] = {"100", NULL};
    static const char *const far_ids[] = {"100", "2"};
    check_same_ids(far, far_ids, 2, NULL);
    /* A down server holds its id. */
    static const shmring_state_t first_down[] = {SHMRING_STATE_DOWN, SHMRING_STATE_UP};
    static const char *const after_down[] = {NULL, NULL};
    static const char *const after_down_ids[] = {"1", "2"};
    check_same_ids(after_down, after_down_ids, 2, first_down);
}
END_TEST

START_TEST(haproxy_equal_points_split)
{
    /* Ids 2^20 apart give the same points (id x 4096 wraps at 2^32): a hash at or
     * below a shared value, down to the middle of the gap below it, takes the first
     * server; above it, up to the middle of the gap above, the last. */
    static const char *const ids[] = {"1", "1048577"};
    shmring_nodeset_t *set = haproxy_set(SHMRING_HASH_SDBM, ids, 2, NULL);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 32);
    uint32_t owned[2] = {0, 0};
    for (uint32_t p = 0; p < 32; p++)
        owned[test_point_owner(snapshot, p)]++;
    ck_assert_uint_eq(owned[0], 16);
    ck_assert_uint_eq(owned[1], 16);
    for (uint32_t j = 0; j < 16; j++) {
        uint64_t value = shmring__haproxy_full_hash(4096 + j);
        ck_assert_uint_eq(test_hash_owner(snapshot, value << 32), 0);
        ck_assert_uint_eq(test_hash_owner(snapshot, ((value + 1) & 0xffffffffu) << 32),
                          1);
    }
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(haproxy_refusals)
{
    /* Ids are decimal from 1 to 2147483647, each once. */
    static const char *const bad_ids[] = {"0", "01", "x1", "2147483648", "1 ", "-1"};
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
        const char *ids[] = {bad_ids[i]};
        shmring_nodeset_t *set = haproxy_set(SHMRING_HASH_SDBM, ids, 1, NULL);
        ck_assert_int_eq(test_build_error(set), SHMRING_EBADADDRESS);
        shmring_nodeset_free(set);
    }
    static const char *const largest[] = {"2147483647"};
    shmring_nodeset_t *set = haproxy_set(SHMRING_HASH_SDBM, largest, 1, NULL);
    shmring_snapshot_free(test_snapshot(set));
    shmring_nodeset_free(set);
    /* Two servers with one id, even a down one. */
    static const char *const twice[] = {"7", "7"};
    static const shmring_state_t down[] = {SHMRING_STATE_UP, SHMRING_STATE_DOWN};
    set = haproxy_set(SHMRING_HASH_SDBM, twice, 2, down);
    ck_assert_int_eq(test_build_error(set), SHMRING_EBADADDRESS);
    shmring_nodeset_free(set);
    /* Weights up to HAProxy's 256. */
    static const char *const one[] = {NULL};
    set = haproxy_set(SHMRING_HASH_SDBM, one, 1, NULL);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "a", 256), 0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 2 * 256 * 16);
    shmring_snapshot_free(snapshot);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "a", 257), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_EBADWEIGHT);
    shmring_nodeset_free(set);
    /* Only HAProxy's hashes. */
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = SHMRING_ALGORITHM_HAPROXY;
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
    params.hash = SHMRING_HASH_CRC32;
    ck_assert_int_eq(shmring_params_check(&params), 0);
    params.hash = SHMRING_HASH_WT6_AVALANCHE;
    ck_assert_int_eq(shmring_params_check(&params), 0);
    params.algorithm = SHMRING_ALGORITHM_RING;
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
}
END_TEST

static Suite *placement_haproxy_suite(void)
{
    Suite *s = suite_create("placement_haproxy");
    TCase *tc = tcase_create("haproxy");
    tcase_add_test(tc, haproxy_key_hashes);
    tcase_add_test(tc, haproxy_points_and_nearest_rule);
    tcase_add_test(tc, haproxy_default_ids);
    tcase_add_test(tc, haproxy_equal_points_split);
    tcase_add_test(tc, haproxy_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_haproxy_suite());
}
