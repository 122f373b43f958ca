/*
 * Tests of `envoy-maglev` (lib/placement_envoy_maglev.c) against the expectations of
 * Envoy's own tests. Envoy cannot run here, so the expected tables are the ones
 * Envoy's maglev_lb_test.cc asserts (test/extensions/load_balancing_policies/maglev/,
 * tests Basic, BasicWithHostName, BasicWithMetadataHashKey, BasicStability,
 * BasicWithRetryHostPredicate, Weighted, WeightedSingleHost, SingleHost,
 * NoPrimeNumber, DefaultMaglevTableSize), and the key hash is checked against
 * test/common/common/hash_test.cc (HashUtil::xxHash64). Envoy's tests hand the load
 * balancer a hash, not a key: hash h picks table[h mod size], so each expected
 * host list is the whole table, asserted slot by slot and through lookups by hash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_placement.h"
#include "test_support.h"

static shmring_nodeset_t *envoy_set(uint32_t table_size)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {.algorithm = SHMRING_ALGORITHM_ENVOY_MAGLEV,
                               .hash = SHMRING_HASH_XXH64,
                               .vnodes = SHMRING_DEFAULT_VNODES,
                               .table_size = table_size};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    return set;
}

/* A node set of Envoy's Basic hosts, 127.0.0.1:90 to :95, and TABLE_SIZE. */
static shmring_nodeset_t *basic_set(uint32_t table_size)
{
    shmring_nodeset_t *set = envoy_set(table_size);
    test_add_local_hosts(set, 90, 6, NULL);
    return set;
}

/* The table of SNAPSHOT, slot by slot, is EXPECTED (node-set positions, which are
 * Envoy's host indexes), and hash h picks EXPECTED[h mod size] for three turns of
 * the table, as Envoy's tests ask. */
static void check_table(const shmring_snapshot_t *snapshot, const uint32_t *expected,
                        uint32_t size)
{
    size_t buffer_size;
    const void *buffer = shmring_snapshot_data(snapshot, &buffer_size);
    const struct snapshot_header *h = snapshot_header(buffer);
    ck_assert_uint_eq(h->table_size, size);
    const uint32_t *table = snapshot_section_at(buffer, &h->table);
    for (uint32_t s = 0; s < size; s++)
        ck_assert_msg(table[s] == expected[s], "slot %u: host %u, Envoy has host %u", s,
                      table[s], expected[s]);
    for (uint64_t hash = 0; hash < 3 * (uint64_t)size; hash++)
        EXPECT_UINT_EQ(shmring__snapshot_owner(buffer, hash), expected[hash % size]);
}

/* check_table() on the snapshot of SET. */
static void check_set_table(const shmring_nodeset_t *set, const uint32_t *expected,
                            uint32_t size)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    check_table(snapshot, expected, size);
    shmring_snapshot_free(snapshot);
}

/* Entries per host, as Envoy's min_entries_per_host/max_entries_per_host count. */
static void entry_counts(const shmring_snapshot_t *snapshot, uint32_t *counts,
                         size_t hosts)
{
    size_t buffer_size;
    const void *buffer = shmring_snapshot_data(snapshot, &buffer_size);
    const struct snapshot_header *h = snapshot_header(buffer);
    const uint32_t *table = snapshot_section_at(buffer, &h->table);
    memset(counts, 0, hosts * sizeof(*counts));
    for (uint32_t s = 0; s < h->table_size; s++)
        counts[table[s]]++;
}

/* Envoy's Basic (and BasicStability) hosts: 127.0.0.1:90 to :95, table size 7. */
static const uint32_t basic_table[] = {2, 4, 0, 1, 5, 0, 3};
/* BasicWithHostName and BasicWithMetadataHashKey: the keys "90" to "95". */
static const uint32_t hash_key_table[] = {2, 5, 0, 3, 4, 1, 0};

START_TEST(basic)
{
    shmring_nodeset_t *set = basic_set(7);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    check_table(snapshot, basic_table, 7);
    uint32_t counts[6];
    entry_counts(snapshot, counts, 6);
    uint32_t least = 7, most = 0;
    for (size_t i = 0; i < 6; i++) {
        least = counts[i] < least ? counts[i] : least;
        most = counts[i] > most ? counts[i] : most;
    }
    ck_assert_uint_eq(least, 1);
    ck_assert_uint_eq(most, 2);
    /* BasicWithRetryHostPredicate: hash 10 is slot 3, host 1. */
    size_t size;
    ck_assert_uint_eq(shmring__snapshot_owner(shmring_snapshot_data(snapshot, &size), 10),
                      1);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(basic_stability)
{
    /* BasicStability shuffles the hosts: the table keeps its hosts. Here the node set
     * lists them backwards, so host p is at position 5 - p. */
    shmring_nodeset_t *set = envoy_set(7);
    for (unsigned port = 95; port >= 90; port--)
        test_add_local_host(set, port, 1, NULL);
    uint32_t reversed[7];
    for (size_t s = 0; s < 7; s++)
        reversed[s] = 5 - basic_table[s];
    check_set_table(set, reversed, 7);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(hash_key)
{
    /* The hash key "90".."95" replaces the address, whatever the address is. */
    shmring_nodeset_t *set = envoy_set(7);
    test_add_keyed_hosts(set, 90, 6, NULL, NULL);
    check_set_table(set, hash_key_table, 7);
    shmring_nodeset_free(set);

    /* Re-addressing every host keeps the table: the hash keys decide. */
    set = envoy_set(7);
    test_add_keyed_hosts(set, 90, 6, "10.9.8.", ":8080");
    check_set_table(set, hash_key_table, 7);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(weighted)
{
    /* Weighted: 127.0.0.1:90 of weight 1, :91 of weight 2, table size 17. */
    static const uint32_t expected[] = {1, 0, 0, 1, 0, 1, 1, 0, 1,
                                        1, 1, 1, 1, 0, 1, 0, 1};
    shmring_nodeset_t *set = envoy_set(17);
    static const uint32_t weights[] = {1, 2};
    test_add_local_hosts(set, 90, 2, weights);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    check_table(snapshot, expected, 17);
    uint32_t counts[2];
    entry_counts(snapshot, counts, 2);
    ck_assert_uint_eq(counts[0], 6);
    ck_assert_uint_eq(counts[1], 11);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(weighted_single_host)
{
    /* WeightedSingleHost and SingleHost: one host takes every slot. */
    static const uint32_t expected[17] = {0};
    shmring_nodeset_t *set = envoy_set(17);
    test_add_local_host(set, 90, 7, NULL);
    check_set_table(set, expected, 17);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(down_hosts_are_left_out)
{
    /* A down node is an unhealthy host: the table is built from the others, as if
     * the down node were not configured (Envoy outside panic mode). */
    shmring_nodeset_t *set = basic_set(7);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "h99", "127.0.0.1:99", 1, SHMRING_STATE_DOWN, NULL), 0);
    check_set_table(set, basic_table, 7);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(default_table_size)
{
    /* DefaultMaglevTableSize: 65537, whatever the host count. */
    shmring_nodeset_t *set = basic_set(0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 65537);
    ck_assert_uint_eq(info.params.table_size, 65537);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(table_smaller_than_hosts)
{
    /* Envoy fills a table of 5 from 6 hosts; the one left out owns no slot. */
    shmring_nodeset_t *set = basic_set(5);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    uint32_t counts[6];
    entry_counts(snapshot, counts, 6);
    uint32_t empty = 0, total = 0;
    for (size_t i = 0; i < 6; i++) {
        empty += counts[i] == 0;
        total += counts[i];
    }
    ck_assert_uint_eq(empty, 1);
    ck_assert_uint_eq(total, 5);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(key_hash_is_envoys_xxhash64)
{
    /* Envoy's hash_test.cc, Hash.xxHash. */
    static const struct {
        const char *key;
        uint64_t hash;
    } vectors[] = {{"foo", UINT64_C(3728699739546630719)},
                   {"bar", UINT64_C(5234164152756840025)},
                   {"foo\nbar", UINT64_C(8917841378505826757)},
                   {"lyft", UINT64_C(4400747396090729504)},
                   {"", UINT64_C(17241709254077376921)}};
    shmring_nodeset_t *set = basic_set(7);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    for (size_t i = 0; i < COUNT_OF(vectors); i++) {
        size_t len = strlen(vectors[i].key);
        ck_assert_uint_eq(shmring__key_hash_any(SHMRING_ALGORITHM_ENVOY_MAGLEV,
                                                SHMRING_HASH_XXH64, vectors[i].key, len),
                          vectors[i].hash);
        /* The lookup of the key answers the host of slot hash mod 7. */
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(snapshot, vectors[i].key, len, &node),
                         0);
        char name[8];
        snprintf(name, sizeof(name), "h%u", 90 + basic_table[vectors[i].hash % 7]);
        ck_assert_str_eq(node.name, name);
    }
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* envoy-maglev's parameters: xxh64, and a prime table size up to Envoy's largest. */
#define ENVOY_MAGLEV(hash, table_size)                                                   \
    {                                                                                    \
        SHMRING_ALGORITHM_ENVOY_MAGLEV, SHMRING_HASH_##hash, SHMRING_DEFAULT_VNODES,     \
            table_size                                                                   \
    }

START_TEST(bad_params)
{
    static const struct test_params_case cases[] = {
        {"the defaults", ENVOY_MAGLEV(XXH64, 0), 0},
        {"NoPrimeNumber: Envoy refuses 8", ENVOY_MAGLEV(XXH64, 8), SHMRING_EINVAL},
        {"the largest size Envoy takes, a prime", ENVOY_MAGLEV(XXH64, 5000011), 0},
        {"the next prime", ENVOY_MAGLEV(XXH64, 5000077), SHMRING_EINVAL},
        {"xxh3", ENVOY_MAGLEV(XXH3, 7), SHMRING_EBADHASH},
        {"murmur2", ENVOY_MAGLEV(MURMUR2, 7), SHMRING_EBADHASH},
    };
    test_check_params_cases(cases, COUNT_OF(cases));
    ck_assert_int_eq(shmring_algorithm_default_hash(SHMRING_ALGORITHM_ENVOY_MAGLEV),
                     SHMRING_HASH_XXH64);
    shmring_algorithm_t algorithm;
    ck_assert_int_eq(shmring_algorithm_parse("envoy-maglev", &algorithm), 0);
    ck_assert_int_eq(algorithm, SHMRING_ALGORITHM_ENVOY_MAGLEV);
}
END_TEST

static Suite *envoy_maglev_suite(void)
{
    Suite *s = suite_create("placement_envoy_maglev");
    TEST_CASE(s, "envoy_tests", basic, basic_stability, hash_key, weighted,
              weighted_single_host, default_table_size, key_hash_is_envoys_xxhash64);
    TEST_CASE(s, "core", down_hosts_are_left_out, table_smaller_than_hosts);
    TEST_CASE(s, "errors", bad_params);
    return s;
}

int main(void)
{
    return test_run_suite(envoy_maglev_suite());
}
