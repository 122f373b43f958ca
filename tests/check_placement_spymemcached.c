/*
 * Unit tests of lib/placement_spymemcached.c and lib/hash_spymemcached.c, Java
 * spymemcached's KetamaNodeLocator: the seven key hashes (pinned by values that
 * spymemcached 2.12.3's DefaultHashAlgorithm.hash() gives the strings new
 * String(bytes, UTF_8) makes of the same bytes, on OpenJDK 17), the node keys derived
 * from addresses (as String.valueOf(InetSocketAddress) prints the ones
 * AddrUtil.getAddresses() makes), the point counts with and without weights, the last
 * node's equal points, and what is refused. Verification against spymemcached
 * itself belongs to tests/peers/test_spymemcached.py.
 */
#include <stdbool.h>
#include <stdio.h>

#include "hash_internal.h"
#include "test_placement.h"
#include "test_support.h"

static const shmring_hash_t hashes[7] = {SHMRING_HASH_MD5,      SHMRING_HASH_CRC32,
                                         SHMRING_HASH_NATIVE,   SHMRING_HASH_FNV1_64,
                                         SHMRING_HASH_FNV1A_64, SHMRING_HASH_FNV1_32,
                                         SHMRING_HASH_FNV1A_32};

START_TEST(spymemcached_key_hashes)
{
    static const struct {
        const char *key;
        size_t length;
        /* KETAMA, CRC, NATIVE, FNV1_64, FNV1A_64, FNV1_32, FNV1A_32. */
        uint32_t expected[7];
    } cases[] = {
        {"",
         0,
         {0xd98c1dd4, 0x0000, 0x00000000, 0x84222325, 0x84222325, 0x811c9dc5,
          0x811c9dc5}},
        {"a",
         1,
         {0xb975c10c, 0x68b7, 0x00000061, 0x8601b7be, 0x8601ec8c, 0x050c5d7e,
          0xe40c292c}},
        {"spymemcached",
         12,
         {0x5eedf06c, 0x1409, 0x610868fb, 0x6d8333a2, 0xd0003540, 0x20c773c2,
          0x19870fc0}},
        /* é, €, and U+1F600, which Java holds as a surrogate pair. */
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
         9,
         {0x9fa3073b, 0x04d8, 0x00ff9d86, 0xbd6d9d55, 0x9c98b56d, 0x470b6fb5,
          0x0c5e230d}},
        /* An encoded surrogate: one U+FFFD for its three bytes, as the JDK decodes. */
        {"\xed\xa0\x80"
         "A",
         4,
         {0xbf8f4df8, 0x31ea, 0x001effe4, 0xb42d9187, 0xcd19550b, 0xd4e46987,
          0xd0e35f4b}},
        /* An overlong lead (U+FFFD each for E0 and 80), and a lead at the end. */
        {"\xe0\x80"
         "A\xc3",
         4,
         {0x1cfe8916, 0x5ef5, 0x781f9f7c, 0x007a75fd, 0xed7f6175, 0xeecfaa1d,
          0xc1117dd5}},
        /* A surrogate's first two bytes at the end: one U+FFFD. */
        {"\xed\xa2",
         2,
         {0x4090759b, 0x0b72, 0x0000fffd, 0x86014822, 0x873d4308, 0x050ca2e2,
          0x77ae9e28}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (size_t h = 0; h < 7; h++) {
            uint64_t key_hash = shmring__key_hash_any(
                SHMRING_ALGORITHM_SPYMEMCACHED, hashes[h], cases[i].key, cases[i].length);
            ck_assert_msg((uint32_t)(key_hash >> 32) == cases[i].expected[h] &&
                              (uint32_t)key_hash == 0,
                          "case %zu, hash %s: 0x%016llx", i, shmring_hash_name(hashes[h]),
                          (unsigned long long)key_hash);
        }
    }
}
END_TEST

/* A spymemcached node set of HASH and VNODES repetitions. */
static shmring_nodeset_t *spy_set(shmring_hash_t hash, uint32_t vnodes)
{
    return test_empty_set(SHMRING_ALGORITHM_SPYMEMCACHED, hash, vnodes);
}

static void add(shmring_nodeset_t *set, const char *name, const char *address,
                uint32_t weight, const char *hash_key)
{
    ck_assert_int_eq(
        shmring_nodeset_add(set, name, address, weight, SHMRING_STATE_UP, NULL), 0);
    if (hash_key != NULL)
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, name, hash_key), 0);
}

/* Each address has the points of the key Java prints for it, given as a hash_key. */
START_TEST(spymemcached_node_keys)
{
    static const char *const pairs[][2] = {
        {"10.0.0.1:11211", "10.0.0.1:11211"},
        {"[2001:DB8::1]:11211", "[2001:db8:0:0:0:0:0:1]:11211"},
        {"2001:db8::1:2:11211", "[2001:db8:0:0:0:0:1:2]:11211"},
        {"::ffff:10.1.2.3:80", "10.1.2.3:80"},
        {"[::ffff:10.1.2.3]:00080", "10.1.2.3:80"},
        {"10.0.0.2:0", "10.0.0.2:0"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        for (size_t h = 0; h < 3; h++) {
            shmring_nodeset_t *derived = spy_set(hashes[h], 160);
            shmring_nodeset_t *keyed = spy_set(hashes[h], 160);
            add(derived, "a", pairs[i][0], 1, NULL);
            add(keyed, "a", "elsewhere:1", 1, pairs[i][1]);
            shmring_snapshot_t *a = test_snapshot(derived);
            shmring_snapshot_t *b = test_snapshot(keyed);
            test_check_same_points(a, b);
            shmring_snapshot_free(a);
            shmring_snapshot_free(b);
            shmring_nodeset_free(derived);
            shmring_nodeset_free(keyed);
        }
    }
    /* The first point of "10.0.0.1:11211-0" under md5: its MD5's first word. */
    shmring_nodeset_t *set = spy_set(SHMRING_HASH_MD5, 160);
    add(set, "a", "10.0.0.1:11211", 1, NULL);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    uint32_t first = shmring__ketama_key_hash("10.0.0.1:11211-0", 16);
    bool found = false;
    for (uint32_t i = 0; i < test_point_count(snapshot); i++)
        found |= test_point(snapshot, i) == (uint64_t)first << 32;
    ck_assert(found);
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(spymemcached_point_counts)
{
    /* 160 repetitions: 40 digests of 4 points under md5, 160 points under the
     * others; 7 repetitions are 1 digest (integer division) or 7 points. */
    static const struct {
        shmring_hash_t hash;
        uint32_t vnodes, points;
    } cases[] = {{SHMRING_HASH_MD5, 160, 160},      {SHMRING_HASH_NATIVE, 160, 160},
                 {SHMRING_HASH_FNV1A_32, 160, 160}, {SHMRING_HASH_MD5, 7, 4},
                 {SHMRING_HASH_NATIVE, 7, 7},       {SHMRING_HASH_FNV1_64, 1000, 1000}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        shmring_nodeset_t *set = spy_set(cases[i].hash, cases[i].vnodes);
        add(set, "a", "10.0.0.1:11211", 1, NULL);
        ck_assert_uint_eq(test_point_count_of(set), cases[i].points);
        shmring_nodeset_free(set);
    }
    /* Weights 1 and 3 (a weights map): 0.25 x 160 / 4 x 2 = 20 digests and 60, MD5
     * points whatever the key hash. */
    for (size_t h = 0; h < 7; h++) {
        shmring_nodeset_t *set = spy_set(hashes[h], 160);
        add(set, "a", "10.0.0.1:11211", 1, NULL);
        add(set, "b", "10.0.0.2:11211", 3, NULL);
        ck_assert_uint_eq(test_point_count_of(set), 4 * (20 + 60));
        shmring_nodeset_free(set);
    }
    /* A down node's weight other than 1 makes the map too: two up nodes then get
     * floor(0.5 x 40 x 2 + 1e-10) = 40 digests of MD5 points under native, not 160
     * native points each. */
    shmring_nodeset_t *set = spy_set(SHMRING_HASH_NATIVE, 160);
    add(set, "a", "10.0.0.1:11211", 1, NULL);
    add(set, "b", "10.0.0.2:11211", 1, NULL);
    ck_assert_uint_eq(test_point_count_of(set), 320);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "c", "10.0.0.3:11211", 2, SHMRING_STATE_DOWN, NULL), 0);
    shmring_nodeset_t *md5 = spy_set(SHMRING_HASH_MD5, 160);
    add(md5, "a", "10.0.0.1:11211", 1, NULL);
    add(md5, "b", "10.0.0.2:11211", 1, NULL);
    shmring_snapshot_t *weighted = test_snapshot(set);
    shmring_snapshot_t *plain = test_snapshot(md5);
    test_check_same_points(weighted, plain);
    shmring_snapshot_free(weighted);
    shmring_snapshot_free(plain);
    shmring_nodeset_free(md5);
    shmring_nodeset_free(set);
}
END_TEST

/* A TreeMap's put() replaces: of two nodes at one address, the last keeps every
 * point; reversed, the other does. */
START_TEST(spymemcached_equal_points_go_to_the_last_node)
{
    for (size_t h = 0; h < 7; h++) {
        shmring_nodeset_t *set = spy_set(hashes[h], 160);
        add(set, "a", "10.0.0.1:11211", 1, NULL);
        add(set, "b", "10.0.0.1:11211", 1, NULL);
        shmring_snapshot_t *snapshot = test_snapshot(set);
        uint32_t count = test_point_count(snapshot);
        ck_assert_uint_gt(count, 0);
        ck_assert_uint_le(count, 160);
        for (uint32_t i = 0; i < count; i++)
            ck_assert_uint_eq(test_point_owner(snapshot, i), 1);
        shmring_snapshot_free(snapshot);
        shmring_nodeset_free(set);
    }
    /* crc32's fifteen-bit points: 160 strings of one node fall on fewer values. */
    shmring_nodeset_t *set = spy_set(SHMRING_HASH_CRC32, 160);
    add(set, "a", "10.0.0.1:11211", 1, NULL);
    uint32_t count = test_point_count_of(set);
    ck_assert_uint_le(count, 160);
    for (uint32_t i = 0; i < 160; i++) {
        char text[32];
        int length = snprintf(text, sizeof(text), "10.0.0.1:11211-%u", i);
        uint32_t point =
            shmring__spymemcached_hash(SHMRING_HASH_CRC32, text, (size_t)length);
        ck_assert_uint_lt(point, 0x8000);
    }
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(spymemcached_refusals)
{
    static const struct {
        const char *address;
        int expected;
    } cases[] = {
        /* A host name: the JDK would resolve it. */
        {"cache.example:11211", SHMRING_EUNRESOLVED},
        {"localhost:11211", SHMRING_EUNRESOLVED},
        /* Forms of IPv4 that the JDK reads its own way. */
        {"10.1:11211", SHMRING_EUNRESOLVED},
        {"010.0.0.1:11211", SHMRING_EUNRESOLVED},
        /* What AddrUtil or InetSocketAddress refuse. */
        {"10.0.0.1", SHMRING_EBADADDRESS},
        {":11211", SHMRING_EBADADDRESS},
        {"10.0.0.1:", SHMRING_EBADADDRESS},
        {"10.0.0.1:65536", SHMRING_EBADADDRESS},
        {"10.0.0.1:+1", SHMRING_EBADADDRESS},
        {"unix:/run/memcached.sock", SHMRING_EBADADDRESS},
        /* Brackets around no IPv6 address, a zone, no IPv6 address at all. */
        {"[10.0.0.1]:11211", SHMRING_EBADADDRESS},
        {"[fe80::1%eth0]:11211", SHMRING_EBADADDRESS},
        {"1::2::3:11211", SHMRING_EBADADDRESS},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        shmring_nodeset_t *set = spy_set(SHMRING_HASH_MD5, 160);
        add(set, "a", "10.0.0.1:11211", 1, NULL);
        /* Refused down as well as up. */
        ck_assert_int_eq(
            shmring_nodeset_add(set, "b", cases[i].address, 1, SHMRING_STATE_DOWN, NULL),
            0);
        ck_assert_msg(test_build_error(set) == cases[i].expected, "%s", cases[i].address);
        /* A hash_key says what the JDK would have printed. */
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "b", "cache/10.0.0.9:11211"),
                         0);
        ck_assert_int_eq(shmring_nodeset_set_state(set, "b", SHMRING_STATE_UP), 0);
        ck_assert_uint_eq(test_point_count_of(set), 320);
        shmring_nodeset_free(set);
    }
    /* Fewer than 4 repetitions give md5 no digest: a continuum without points. */
    shmring_nodeset_t *set = spy_set(SHMRING_HASH_MD5, 3);
    add(set, "a", "10.0.0.1:11211", 1, NULL);
    ck_assert_int_eq(test_build_error(set), SHMRING_EINVAL);
    shmring_nodeset_free(set);
    /* Only DefaultHashAlgorithm's seven, and native for spymemcached alone. */
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = SHMRING_ALGORITHM_SPYMEMCACHED;
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_SPYMEMCACHED),
                     SHMRING_HASH_MD5);
    for (size_t h = 0; h < 7; h++) {
        params.hash = hashes[h];
        ck_assert_int_eq(shmring_params_check(&params), 0);
    }
    params.hash = SHMRING_HASH_CRC32A;
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
    params.algorithm = SHMRING_ALGORITHM_RING;
    params.hash = SHMRING_HASH_NATIVE;
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
    ck_assert_str_eq(shmring_hash_name(SHMRING_HASH_NATIVE), "native");
    ck_assert_str_eq(shmring_strerror(SHMRING_EUNRESOLVED),
                     "the algorithm hashes resolved addresses: give a host name's node a "
                     "hash_key");
}
END_TEST

static Suite *placement_spymemcached_suite(void)
{
    Suite *s = suite_create("placement_spymemcached");
    TCase *tc = tcase_create("spymemcached");
    tcase_add_test(tc, spymemcached_key_hashes);
    tcase_add_test(tc, spymemcached_node_keys);
    tcase_add_test(tc, spymemcached_point_counts);
    tcase_add_test(tc, spymemcached_equal_points_go_to_the_last_node);
    tcase_add_test(tc, spymemcached_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_spymemcached_suite());
}
