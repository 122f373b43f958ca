/*
 * Tests of lib/params.c: algorithm and hash names, the parameter checks, the default
 * hash of each algorithm and the default Maglev table sizes.
 *
 * The Maglev primes are docs/concepts.md's list (each checked prime with coreutils'
 * factor(1) when this test was written); the boundaries are worked out by hand:
 * the default for U up nodes is the first prime P of the list with P >= 100 x U, so
 * floor(P / 100) nodes still get P and one more gets the next prime.
 */
#include <stdint.h>
#include <string.h>

#include "params_internal.h"
#include "test_support.h"

/* ---- names ---- */

START_TEST(algorithm_names_both_ways)
{
    static const struct {
        shmring_algorithm_t algorithm;
        const char *name;
    } names[] = {{SHMRING_ALGORITHM_RING, "ring"},
                 {SHMRING_ALGORITHM_MAGLEV, "maglev"},
                 {SHMRING_ALGORITHM_KETAMA, "ketama"},
                 {SHMRING_ALGORITHM_TWEMPROXY, "twemproxy"},
                 {SHMRING_ALGORITHM_NGINX, "nginx"},
                 {SHMRING_ALGORITHM_LIBKETAMA, "libketama"},
                 {SHMRING_ALGORITHM_ENVOY_MAGLEV, "envoy-maglev"},
                 {SHMRING_ALGORITHM_ENVOY_RING, "envoy-ring"},
                 {SHMRING_ALGORITHM_RENDEZVOUS, "rendezvous"},
                 {SHMRING_ALGORITHM_JUMP, "jump"},

                 {SHMRING_ALGORITHM_HAPROXY, "haproxy"},
                 {SHMRING_ALGORITHM_UHASHRING, "uhashring"},
                 {SHMRING_ALGORITHM_HASHRING, "hashring"},
                 {SHMRING_ALGORITHM_DALLI, "dalli"},
                 {SHMRING_ALGORITHM_SPYMEMCACHED, "spymemcached"},
                 {SHMRING_ALGORITHM_GROUPCACHE, "groupcache"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        ck_assert_str_eq(shmring_algorithm_name(names[i].algorithm), names[i].name);
        shmring_algorithm_t parsed = (shmring_algorithm_t)99;
        ck_assert_int_eq(shmring_algorithm_parse(names[i].name, &parsed), 0);
        ck_assert_int_eq(parsed, names[i].algorithm);
    }
    ck_assert_str_eq(shmring_algorithm_name((shmring_algorithm_t)16), "unknown");
    ck_assert_str_eq(shmring_algorithm_name((shmring_algorithm_t)-1), "unknown");
    static const char *const bad[] = {"",     "RING",     "Ring",   "ring ", " ring",
                                      "rin",  "rings",    "chord",  "md5",   "unknown",
                                      "Jump", "maglev\n", "ketama-"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        shmring_algorithm_t parsed;
        ck_assert_int_eq(shmring_algorithm_parse(bad[i], &parsed), SHMRING_EBADALGORITHM);
    }
}
END_TEST

START_TEST(hash_names_both_ways)
{
    static const struct {
        shmring_hash_t hash;
        const char *name;
    } names[] = {{SHMRING_HASH_XXH3, "xxh3"},
                 {SHMRING_HASH_MD5, "md5"},
                 {SHMRING_HASH_CRC32, "crc32"},
                 {SHMRING_HASH_FNV1A, "fnv1a"},
                 {SHMRING_HASH_MURMUR3, "murmur3"},
                 {SHMRING_HASH_FNV1A_64, "fnv1a_64"},
                 {SHMRING_HASH_CRC16, "crc16"},
                 {SHMRING_HASH_CRC32A, "crc32a"},
                 {SHMRING_HASH_FNV1_32, "fnv1_32"},
                 {SHMRING_HASH_FNV1_64, "fnv1_64"},
                 {SHMRING_HASH_FNV1A_32, "fnv1a_32"},
                 {SHMRING_HASH_HSIEH, "hsieh"},
                 {SHMRING_HASH_JENKINS, "jenkins"},
                 {SHMRING_HASH_MURMUR, "murmur"},
                 {SHMRING_HASH_ONE_AT_A_TIME, "one_at_a_time"},
                 {SHMRING_HASH_XXH64, "xxh64"},
                 {SHMRING_HASH_MURMUR2, "murmur2"},
                 {SHMRING_HASH_MURMUR3_32, "murmur3_32"},
                 {SHMRING_HASH_MURMUR3_128, "murmur3_128"},

                 {SHMRING_HASH_SDBM, "sdbm"},
                 {SHMRING_HASH_DJB2, "djb2"},
                 {SHMRING_HASH_WT6, "wt6"},
                 {SHMRING_HASH_SDBM_AVALANCHE, "sdbm_avalanche"},
                 {SHMRING_HASH_DJB2_AVALANCHE, "djb2_avalanche"},
                 {SHMRING_HASH_WT6_AVALANCHE, "wt6_avalanche"},
                 {SHMRING_HASH_CRC32_AVALANCHE, "crc32_avalanche"},
                 {SHMRING_HASH_KETAMA, "ketama"},
                 {SHMRING_HASH_SHA1, "sha1"},
                 {SHMRING_HASH_SHA256, "sha256"},
                 {SHMRING_HASH_SHA512, "sha512"},
                 {SHMRING_HASH_NATIVE, "native"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        ck_assert_str_eq(shmring_hash_name(names[i].hash), names[i].name);
        shmring_hash_t parsed = (shmring_hash_t)99;
        ck_assert_int_eq(shmring_hash_parse(names[i].name, &parsed), 0);
        ck_assert_int_eq(parsed, names[i].hash);
    }
    ck_assert_str_eq(shmring_hash_name((shmring_hash_t)30), "unknown");
    ck_assert_str_eq(shmring_hash_name((shmring_hash_t)33), "unknown");
    ck_assert_str_eq(shmring_hash_name((shmring_hash_t)-1), "unknown");
    static const char *const bad[] = {"",      "XXH3", "MD5",  "xxh128", "xxhash",
                                      "SHA1",  "md4",  "crc",  "fnv",    "fnv1",
                                      "XXH64", "ring", "md5 ", "unknown"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        shmring_hash_t parsed;
        ck_assert_int_eq(shmring_hash_parse(bad[i], &parsed), SHMRING_EBADHASH);
    }
}
END_TEST

START_TEST(default_hash_per_algorithm)
{
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_RING),
                     SHMRING_HASH_XXH3);
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_MAGLEV),
                     SHMRING_HASH_XXH3);
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_KETAMA),
                     SHMRING_HASH_MD5);
}
END_TEST

/* ---- checks ---- */

static shmring_params_t params_of(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t vnodes, uint32_t table_size)
{
    shmring_params_t p = {
        .algorithm = algorithm, .hash = hash, .vnodes = vnodes, .table_size = table_size};
    return p;
}

START_TEST(defaults)
{
    shmring_params_t p;
    memset(&p, 0xa5, sizeof(p));
    shmring_params_default(&p);
    ck_assert_int_eq(p.algorithm, SHMRING_ALGORITHM_RING);
    ck_assert_int_eq(p.hash, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(p.vnodes, 160);
    ck_assert_uint_eq(p.table_size, 0);
    ck_assert_int_eq(shmring_params_check(&p), 0);
}
END_TEST

START_TEST(algorithm_and_hash_checks)
{
    static const struct {
        int algorithm;
        int hash;
        int expected;
    } cases[] = {
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 0},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, 0},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_FNV1A, 0},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_MURMUR3, 0},
        {SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 0},
        {SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MURMUR3, 0},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_CRC32, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_FNV1A, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MURMUR3, SHMRING_EBADHASH},
        /* Each peer algorithm takes its peer's hashes only. */
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_FNV1A_64, 0},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_CRC32, 0},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_ONE_AT_A_TIME, 0},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_FNV1A, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_MURMUR3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_NGINX, SHMRING_HASH_CRC32, 0},
        {SHMRING_ALGORITHM_NGINX, SHMRING_HASH_CRC32A, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_NGINX, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_FNV1A_64, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_JENKINS, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_CRC16, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_ENVOY_MAGLEV, SHMRING_HASH_XXH64, 0},
        {SHMRING_ALGORITHM_ENVOY_MAGLEV, SHMRING_HASH_MURMUR2, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_ENVOY_MAGLEV, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_ENVOY_RING, SHMRING_HASH_XXH64, 0},
        {SHMRING_ALGORITHM_ENVOY_RING, SHMRING_HASH_MURMUR2, 0},
        {SHMRING_ALGORITHM_ENVOY_RING, SHMRING_HASH_MURMUR3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH64, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_MURMUR2, SHMRING_EBADHASH},
        /* The node algorithms take their library's hash alone. */
        {SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_MURMUR3_32, 0},
        {SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_MURMUR3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3_128, 0},
        {SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3_32, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_MURMUR3_128, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_HAPROXY, SHMRING_HASH_SDBM_AVALANCHE, 0},
        {SHMRING_ALGORITHM_HAPROXY, SHMRING_HASH_CRC32, 0},
        {SHMRING_ALGORITHM_HAPROXY, SHMRING_HASH_CRC32_AVALANCHE, 0},
        {SHMRING_ALGORITHM_HAPROXY, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_HAPROXY, SHMRING_HASH_CRC32A, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_SDBM, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_NGINX, SHMRING_HASH_CRC32_AVALANCHE, SHMRING_EBADHASH},
        /* spymemcached's seven, native its own. */
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_NATIVE, 0},
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_FNV1A_32, 0},
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_HSIEH, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_NATIVE, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_SPYMEMCACHED, 30, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_SPYMEMCACHED, 33, SHMRING_EBADHASH},
        {16, SHMRING_HASH_XXH3, SHMRING_EBADALGORITHM},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_KETAMA, 0},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_SHA1, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 0},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_SHA1, 0},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_SHA256, 0},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_SHA512, 0},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_KETAMA, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_KETAMA, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_SHA256, SHMRING_EBADHASH},
        {-1, SHMRING_HASH_XXH3, SHMRING_EBADALGORITHM},
        {SHMRING_ALGORITHM_RING, 30, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_RING, -1, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_TWEMPROXY, 30, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_KETAMA, 30, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_HAPROXY, 30, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_HASHRING, 30, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_DALLI, SHMRING_HASH_CRC32, 0},
        {SHMRING_ALGORITHM_DALLI, SHMRING_HASH_XXH3, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_DALLI, SHMRING_HASH_CRC32A, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_GROUPCACHE, SHMRING_HASH_CRC32, 0},
        {SHMRING_ALGORITHM_GROUPCACHE, SHMRING_HASH_MD5, SHMRING_EBADHASH},
        {SHMRING_ALGORITHM_GROUPCACHE, SHMRING_HASH_FNV1A, SHMRING_EBADHASH},
        /* The algorithm is judged first. */
        {16, 30, SHMRING_EBADALGORITHM},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        shmring_params_t p = params_of((shmring_algorithm_t)cases[i].algorithm,
                                       (shmring_hash_t)cases[i].hash, 160, 0);
        ck_assert_msg(shmring_params_check(&p) == cases[i].expected, "case %zu: %d", i,
                      shmring_params_check(&p));
    }
}
END_TEST

START_TEST(vnodes_checks)
{
    static const struct {
        uint32_t vnodes;
        int expected;
    } cases[] = {{0, SHMRING_EBADVNODES},
                 {1, 0},
                 {160, 0},
                 {65535, 0},
                 {65536, SHMRING_EBADVNODES},
                 {UINT32_MAX, SHMRING_EBADVNODES}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int a = SHMRING_ALGORITHM_RING; a <= SHMRING_ALGORITHM_KETAMA; a++) {
            shmring_algorithm_t algorithm = (shmring_algorithm_t)a;
            shmring_params_t p = params_of(
                algorithm, shmring_algorithm_default_hash(algorithm), cases[i].vnodes, 0);
            ck_assert_int_eq(shmring_params_check(&p), cases[i].expected);
        }
    }
    /* Four points a digest: uhashring's ketama ring and hashring take vnodes that 4
     * divides (their vnodes x 4), uhashring's default ring any. */
    static const struct {
        shmring_algorithm_t algorithm;
        shmring_hash_t hash;
        uint32_t vnodes;
        int expected;
    } divided[] = {
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_MD5, 7, 0},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_KETAMA, 160, 0},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_KETAMA, 4, 0},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_KETAMA, 162, SHMRING_EBADVNODES},
        {SHMRING_ALGORITHM_UHASHRING, SHMRING_HASH_KETAMA, 1, SHMRING_EBADVNODES},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_SHA1, 160, 0},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 65532, 0},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 65535, SHMRING_EBADVNODES},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 2, SHMRING_EBADVNODES},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, 0, SHMRING_EBADVNODES},
    };
    for (size_t i = 0; i < sizeof(divided) / sizeof(divided[0]); i++) {
        shmring_params_t p =
            params_of(divided[i].algorithm, divided[i].hash, divided[i].vnodes, 0);
        ck_assert_msg(shmring_params_check(&p) == divided[i].expected, "case %zu: %d", i,
                      shmring_params_check(&p));
    }
}
END_TEST

START_TEST(table_size_checks)
{
    static const struct {
        uint32_t table_size;
        int expected;
    } cases[] = {
        {0, 0}, /* the default */
        {1, SHMRING_EINVAL},
        {2, 0},
        {3, 0},
        {4, SHMRING_EINVAL},
        {9, SHMRING_EINVAL},
        {561, SHMRING_EINVAL}, /* a Carmichael number */
        {65536, SHMRING_EINVAL},
        {65537, 0},
        {131071, 0},
        {16777213, 0},              /* the largest prime up to 2^24 */
        {16777215, SHMRING_EINVAL}, /* 3 x 5 x 17 x 257 x 241 */
        {16777216, SHMRING_EINVAL}, /* 2^24 */
        {16777259, SHMRING_EINVAL}, /* the first prime above 2^24 */
        {4294967291u, SHMRING_EINVAL},
        {UINT32_MAX, SHMRING_EINVAL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        shmring_params_t p = params_of(SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 160,
                                       cases[i].table_size);
        ck_assert_msg(shmring_params_check(&p) == cases[i].expected, "table size %u: %d",
                      (unsigned)cases[i].table_size, shmring_params_check(&p));
    }
}
END_TEST

START_TEST(is_prime)
{
    static const uint32_t primes[] = {
        2,      3,       5,       7,       65521,   65537,    131071,   262139,
        524287, 1048573, 2097143, 4194301, 8388593, 16777213, 16777259, 4294967291u};
    static const uint32_t composites[] = {
        0,           1,          4,        9,        25,          561,
        65535,       65536,      16777215, 16777216, 4293001441u, /* 65521^2 */
        4294967295u, 4294836225u /* 65535^2 */};
    for (size_t i = 0; i < sizeof(primes) / sizeof(primes[0]); i++)
        ck_assert_msg(shmring__is_prime(primes[i]), "%u", (unsigned)primes[i]);
    for (size_t i = 0; i < sizeof(composites) / sizeof(composites[0]); i++)
        ck_assert_msg(!shmring__is_prime(composites[i]), "%u", (unsigned)composites[i]);
}
END_TEST

/* ---- Maglev table sizes ---- */

START_TEST(maglev_default_sizes)
{
    static const struct {
        uint32_t up;
        uint32_t size;
    } cases[] = {
        {0, 65537},       {1, 65537},       {100, 65537},      {655, 65537},
        {656, 131071},    {1310, 131071},   {1311, 262139},    {2621, 262139},
        {2622, 524287},   {5242, 524287},   {5243, 1048573},   {10485, 1048573},
        {10486, 2097143}, {20971, 2097143}, {20972, 4194301},  {41943, 4194301},
        {41944, 8388593}, {83885, 8388593}, {83886, 16777213}, {167772, 16777213},
        {167773, 0},      {1000000, 0},     {UINT32_MAX, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(shmring__maglev_default_size(cases[i].up) == cases[i].size,
                      "%u up nodes: %u, expected %u", (unsigned)cases[i].up,
                      (unsigned)shmring__maglev_default_size(cases[i].up),
                      (unsigned)cases[i].size);
}
END_TEST

START_TEST(maglev_default_sizes_pass_the_check)
{
    static const uint32_t sizes[] = {65537,   131071,  262139,  524287,  1048573,
                                     2097143, 4194301, 8388593, 16777213};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        shmring_params_t p =
            params_of(SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 160, sizes[i]);
        ck_assert_int_eq(shmring_params_check(&p), 0);
    }
}
END_TEST

static Suite *params_suite(void)
{
    Suite *s = suite_create("params");
    TEST_CASE(s, "names", algorithm_names_both_ways, hash_names_both_ways,
              default_hash_per_algorithm);
    TEST_CASE(s, "checks", defaults, algorithm_and_hash_checks, vnodes_checks,
              table_size_checks, is_prime);
    TEST_CASE(s, "maglev", maglev_default_sizes, maglev_default_sizes_pass_the_check);
    return s;
}

int main(void)
{
    return test_run_suite(params_suite());
}
