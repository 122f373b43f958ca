/*
 * Tests of `envoy-ring` (lib/placement_envoy_ring.c) against the expectations of
 * Envoy's own tests. Envoy cannot run here, so the expected rings and answers are
 * the ones Envoy's ring_hash_lb_test.cc asserts
 * (test/extensions/load_balancing_policies/ring_hash/: Basic, BasicWithMurmur2,
 * BasicWithHostname, BasicWithMetadataHashKey, UnevenHosts, HostWeightedTinyRing,
 * HostWeightedLargeRing, SmallFractionalScale, LargeFractionalScale,
 * BadRingSizeBounds), and the hashes are checked against
 * test/common/common/hash_test.cc. Where Envoy's test comments list the whole ring
 * (point value and host), every point is compared; elsewhere the hashes handed to
 * the load balancer and the hosts it must pick, and the per-host point counts its
 * stats report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_placement.h"
#include "test_support.h"

static shmring_nodeset_t *envoy_set(shmring_hash_t hash, uint32_t min_ring_size,
                                    uint32_t max_ring_size)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {.algorithm = SHMRING_ALGORITHM_ENVOY_RING,
                               .hash = hash,
                               .vnodes = SHMRING_DEFAULT_VNODES,
                               .min_ring_size = min_ring_size,
                               .max_ring_size = max_ring_size};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    return set;
}

static const void *buffer_of(const shmring_snapshot_t *snapshot)
{
    size_t size;
    return shmring_snapshot_data(snapshot, &size);
}

/* A point of a ring Envoy's test lists: its position and its host's index. */
struct ring_entry {
    uint64_t point;
    uint32_t host;
};

static void check_ring(const shmring_snapshot_t *snapshot, const struct ring_entry *ring,
                       size_t count)
{
    const void *buffer = buffer_of(snapshot);
    const struct snapshot_header *h = snapshot_header(buffer);
    ck_assert_uint_eq(h->point_count, count);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    for (size_t i = 0; i < count; i++) {
        ck_assert_msg(points[i].point == ring[i].point, "point %zu: %llu, Envoy has %llu",
                      i, (unsigned long long)points[i].point,
                      (unsigned long long)ring[i].point);
        ck_assert_msg(points[i].node_index == ring[i].host,
                      "point %zu: host %u, Envoy has host %u", i, points[i].node_index,
                      ring[i].host);
    }
}

/* The host (node-set position) hash HASH picks. */
static uint32_t pick(const shmring_snapshot_t *snapshot, uint64_t hash)
{
    return shmring__snapshot_owner(buffer_of(snapshot), hash);
}

/* Points per host, as Envoy's min_hashes_per_host/max_hashes_per_host count. */
static void point_counts(const shmring_snapshot_t *snapshot, uint32_t *counts,
                         size_t hosts)
{
    const void *buffer = buffer_of(snapshot);
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    memset(counts, 0, hosts * sizeof(*counts));
    for (uint32_t i = 0; i < h->point_count; i++)
        counts[points[i].node_index]++;
}

/* Hosts hit by COUNT hashes i x (2^64 - 1) / COUNT, Envoy's histogram loops. */
static void histogram(const shmring_snapshot_t *snapshot, uint32_t count, uint32_t *hits,
                      size_t hosts)
{
    memset(hits, 0, hosts * sizeof(*hits));
    for (uint32_t i = 0; i < count; i++)
        hits[pick(snapshot, i * (UINT64_MAX / count))]++;
}

/* The snapshot (shmring_snapshot_free()) of an envoy-ring with HASH and the ring
 * size bounds over HOSTS hosts 127.0.0.1:FIRST_PORT and up, without hash keys, with
 * WEIGHTS (NULL: weight 1 each). */
static shmring_snapshot_t *local_ring(shmring_hash_t hash, uint32_t min_ring_size,
                                      uint32_t max_ring_size, unsigned first_port,
                                      size_t hosts, const uint32_t *weights)
{
    shmring_nodeset_t *set = envoy_set(hash, min_ring_size, max_ring_size);
    test_add_local_hosts(set, first_port, hosts, weights);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_nodeset_free(set);
    return snapshot;
}

/* Checks that each hash of PICKS (COUNT of them) picks its host. */
static void check_picks(const shmring_snapshot_t *snapshot,
                        const struct ring_entry *picks, size_t count)
{
    for (size_t i = 0; i < count; i++)
        ck_assert_uint_eq(pick(snapshot, picks[i].point), picks[i].host);
}

/* Basic: 127.0.0.1:90 to :95, minimum_ring_size 12 (hosts 0-5 are ports 90-95). */
static const struct ring_entry basic_ring[] = {
    {UINT64_C(833437586790550860), 4},   {UINT64_C(928266305478181108), 2},
    {UINT64_C(1033482794131418490), 0},  {UINT64_C(3551244743356806947), 5},
    {UINT64_C(3851675632748031481), 3},  {UINT64_C(5583722120771150861), 1},
    {UINT64_C(6311230543546372928), 1},  {UINT64_C(7700377290971790572), 3},
    {UINT64_C(13144177310400110813), 5}, {UINT64_C(13444792449719432967), 2},
    {UINT64_C(15516499411664133160), 4}, {UINT64_C(16117243373044804889), 0}};

START_TEST(basic)
{
    static const struct ring_entry picks[] = {
        {0, 4},
        /* Past the last point: the wrap to the first. */
        {UINT64_MAX, 4},
        /* Exactly on a point, and one past it. */
        {UINT64_C(3551244743356806947), 5},
        {UINT64_C(3551244743356806948), 3},
        {UINT64_C(16117243373044804880), 0}};
    shmring_snapshot_t *snapshot = local_ring(SHMRING_HASH_XXH64, 12, 0, 90, 6, NULL);
    check_ring(snapshot, basic_ring, COUNT_OF(basic_ring));
    check_picks(snapshot, picks, COUNT_OF(picks));
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(basic_with_murmur2)
{
    /* BasicWithMurmur2: 127.0.0.1:80 to :85, hash_function MURMUR_HASH_2. */
    static const struct ring_entry ring[] = {
        {UINT64_C(1358027074129602068), 5},  {UINT64_C(4361834613929391114), 3},
        {UINT64_C(7224494972555149682), 4},  {UINT64_C(7701421856454313576), 1},
        {UINT64_C(8649315368077433379), 2},  {UINT64_C(8739448859063030639), 4},
        {UINT64_C(9887544217113020895), 1},  {UINT64_C(10150910876324007731), 2},
        {UINT64_C(15168472011420622455), 3}, {UINT64_C(15427156902705414897), 0},
        {UINT64_C(16375050414328759093), 5}, {UINT64_C(17613279263364193813), 0}};
    static const struct ring_entry picks[] = {{0, 5},
                                              {UINT64_MAX, 5},
                                              {UINT64_C(1358027074129602068), 5},
                                              {UINT64_C(1358027074129602069), 3},
                                              {UINT64_C(10150910876324007730), 2}};
    shmring_snapshot_t *snapshot = local_ring(SHMRING_HASH_MURMUR2, 12, 0, 80, 6, NULL);
    check_ring(snapshot, ring, COUNT_OF(ring));
    check_picks(snapshot, picks, COUNT_OF(picks));
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(hash_key)
{
    /* BasicWithHostname and BasicWithMetadataHashKey: the keys "90" to "95". */
    static const struct ring_entry ring[] = {
        {UINT64_C(1975508444536362413), 5},  {UINT64_C(2376063919839173711), 5},
        {UINT64_C(2386806903309390596), 3},  {UINT64_C(6749904478991551885), 4},
        {UINT64_C(6803900775736438537), 3},  {UINT64_C(7225015537174310577), 2},
        {UINT64_C(8787465352164086522), 0},  {UINT64_C(11282020843382717940), 2},
        {UINT64_C(13723418369486627818), 1}, {UINT64_C(13776502110861797421), 0},
        {UINT64_C(14338313586354474791), 1}, {UINT64_C(15364271037087512980), 4}};
    shmring_nodeset_t *set = envoy_set(SHMRING_HASH_XXH64, 12, 0);
    test_add_keyed_hosts(set, 90, 6, NULL, NULL);
    static const struct ring_entry picks[] = {{0, 5},
                                              {UINT64_MAX, 5},
                                              {UINT64_C(7225015537174310577), 2},
                                              {UINT64_C(6803900775736438537), 3}};
    shmring_snapshot_t *snapshot = test_snapshot(set);
    check_ring(snapshot, ring, COUNT_OF(ring));
    check_picks(snapshot, picks, COUNT_OF(picks));
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);

    /* Re-addressed hosts with the same hash keys: the same ring. */
    set = envoy_set(SHMRING_HASH_XXH64, 12, 0);
    test_add_keyed_hosts(set, 90, 6, "[2001:db8::", "]:443");
    snapshot = test_snapshot(set);
    check_ring(snapshot, ring, COUNT_OF(ring));
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(uneven_hosts)
{
    /* UnevenHosts: 2 hosts, minimum_ring_size 3: 2 points each, a ring of 4. */
    static const struct ring_entry first[] = {{UINT64_C(5454692015285649509), 0},
                                              {UINT64_C(7859399908942313493), 1},
                                              {UINT64_C(13838424394637650569), 0},
                                              {UINT64_C(16064866803292627174), 1}};
    static const struct ring_entry second[] = {{UINT64_C(7859399908942313493), 0},
                                               {UINT64_C(8241336090459785962), 1},
                                               {UINT64_C(12882406409176325258), 1},
                                               {UINT64_C(16064866803292627174), 0}};
    shmring_snapshot_t *snapshot = local_ring(SHMRING_HASH_XXH64, 3, 0, 80, 2, NULL);
    check_ring(snapshot, first, COUNT_OF(first));
    ck_assert_uint_eq(pick(snapshot, 0), 0);
    shmring_snapshot_free(snapshot);

    snapshot = local_ring(SHMRING_HASH_XXH64, 3, 0, 81, 2, NULL);
    check_ring(snapshot, second, COUNT_OF(second));
    ck_assert_uint_eq(pick(snapshot, 0), 0);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(host_weighted_tiny_ring)
{
    /* HostWeightedTinyRing: weights 1, 2, 3 and a ring of exactly 6. */
    static const struct ring_entry picks[] = {
        {UINT64_C(928266305478181108), 2},   {UINT64_C(4443673547860492590), 2},
        {UINT64_C(5583722120771150861), 1},  {UINT64_C(6311230543546372928), 1},
        {UINT64_C(13444792449719432967), 2}, {UINT64_C(16117243373044804889), 0}};
    static const uint32_t weights[] = {1, 2, 3};
    shmring_snapshot_t *snapshot = local_ring(SHMRING_HASH_XXH64, 6, 6, 90, 3, weights);
    uint32_t counts[3];
    point_counts(snapshot, counts, 3);
    ck_assert_uint_eq(counts[0], 1);
    ck_assert_uint_eq(counts[1], 2);
    ck_assert_uint_eq(counts[2], 3);
    /* With six points, these are the ring itself, sorted. */
    check_ring(snapshot, picks, COUNT_OF(picks));
    check_picks(snapshot, picks, COUNT_OF(picks));
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(host_weighted_large_ring)
{
    /* HostWeightedLargeRing: weights 1, 2, 3, minimum_ring_size 6144. */
    static const uint32_t weights[] = {1, 2, 3};
    shmring_snapshot_t *snapshot =
        local_ring(SHMRING_HASH_XXH64, 6144, 0, 90, 3, weights);
    uint32_t counts[3];
    point_counts(snapshot, counts, 3);
    ck_assert_uint_eq(counts[0] + counts[1] + counts[2], 6144);
    ck_assert_uint_eq(counts[0], 1024);
    ck_assert_uint_eq(counts[2], 3072);
    uint32_t hits[3];
    histogram(snapshot, 6000, hits, 3);
    ck_assert_uint_eq(hits[0], 987);
    ck_assert_uint_eq(hits[1], 1932);
    ck_assert_uint_eq(hits[2], 3081);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(small_fractional_scale)
{
    /* SmallFractionalScale: 4 hosts and a ring of exactly 2; two hosts get none. */
    shmring_snapshot_t *snapshot = local_ring(SHMRING_HASH_XXH64, 2, 2, 90, 4, NULL);
    uint32_t counts[4];
    point_counts(snapshot, counts, 4);
    uint32_t least = UINT32_MAX, most = 0;
    for (size_t i = 0; i < 4; i++) {
        least = counts[i] < least ? counts[i] : least;
        most = counts[i] > most ? counts[i] : most;
    }
    ck_assert_uint_eq(least, 0);
    ck_assert_uint_eq(most, 1);
    uint32_t hits[4], zeroes = 0, sum = 0;
    histogram(snapshot, 1024, hits, 4);
    for (size_t i = 0; i < 4; i++) {
        zeroes += hits[i] == 0;
        sum += hits[i];
    }
    ck_assert_uint_eq(zeroes, 2);
    ck_assert_uint_eq(sum, 1024);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(large_fractional_scale)
{
    /* LargeFractionalScale: 2 hosts and a ring of exactly 1023: 511 and 512. */
    shmring_snapshot_t *snapshot =
        local_ring(SHMRING_HASH_XXH64, 1023, 1023, 90, 2, NULL);
    uint32_t counts[2];
    point_counts(snapshot, counts, 2);
    ck_assert_uint_eq(counts[0] + counts[1], 1023);
    ck_assert_uint_eq(counts[0] < counts[1] ? counts[0] : counts[1], 511);
    uint32_t hits[2];
    histogram(snapshot, 1023, hits, 2);
    ck_assert_uint_eq(hits[0], 526);
    ck_assert_uint_eq(hits[1], 497);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(hashes_are_envoys)
{
    /* Envoy's hash_test.cc: Hash.xxHash and Hash.murmurHash2. */
    static const struct {
        const char *key;
        uint64_t xxhash64;
        uint64_t murmur2;
    } vectors[] = {
        {"foo", UINT64_C(3728699739546630719), UINT64_C(9631199822919835226)},
        {"bar", UINT64_C(5234164152756840025), UINT64_C(11474628671133349555)},
        {"foo\nbar", UINT64_C(8917841378505826757), UINT64_C(16306510975912980159)},
        {"lyft", UINT64_C(4400747396090729504), UINT64_C(12847078931730529320)},
        {"", UINT64_C(17241709254077376921), UINT64_C(6142509188972423790)}};
    for (size_t i = 0; i < COUNT_OF(vectors); i++) {
        size_t len = strlen(vectors[i].key);
        ck_assert_uint_eq(shmring__hash64(SHMRING_HASH_XXH64, vectors[i].key, len),
                          vectors[i].xxhash64);
        ck_assert_uint_eq(shmring__hash64(SHMRING_HASH_MURMUR2, vectors[i].key, len),
                          vectors[i].murmur2);
        /* The key hash is xxHash64 whatever the point hash. */
        ck_assert_uint_eq(shmring__key_hash_any(SHMRING_ALGORITHM_ENVOY_RING,
                                                SHMRING_HASH_MURMUR2, vectors[i].key,
                                                len),
                          vectors[i].xxhash64);
    }
}
END_TEST

START_TEST(lookup_by_key)
{
    /* A key's lookup is the pick of its xxHash64: "foo" hashes to
     * 3728699739546630719, between :95's 3551244743356806947 and :93's
     * 3851675632748031481 on the Basic ring. */
    shmring_snapshot_t *snapshot = local_ring(SHMRING_HASH_XXH64, 12, 0, 90, 6, NULL);
    shmring_node_t node;
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "foo", 3, &node), 0);
    ck_assert_str_eq(node.name, "h93");
    ck_assert_str_eq(node.address, "127.0.0.1:93");
    shmring_snapshot_free(snapshot);
}
END_TEST

/* ALGORITHM's parameters with HASH and envoy-ring's minimum and maximum ring sizes. */
#define RING_SIZES(algorithm, hash, min_ring_size, max_ring_size)                        \
    {                                                                                    \
        SHMRING_ALGORITHM_##algorithm, SHMRING_HASH_##hash, SHMRING_DEFAULT_VNODES, 0,   \
            min_ring_size, max_ring_size                                                 \
    }

START_TEST(bad_params)
{
    static const struct test_params_case cases[] = {
        {"the defaults", RING_SIZES(ENVOY_RING, XXH64, 0, 0), 0},
        {"BadRingSizeBounds: minimum 20 above maximum 10",
         RING_SIZES(ENVOY_RING, XXH64, 20, 10), SHMRING_EINVAL},
        {"a minimum above the default maximum", RING_SIZES(ENVOY_RING, XXH64, 8388608, 0),
         0},
        {"a minimum past Envoy's 8M limit", RING_SIZES(ENVOY_RING, XXH64, 8388609, 0),
         SHMRING_EINVAL},
        {"a maximum past Envoy's 8M limit", RING_SIZES(ENVOY_RING, XXH64, 0, 8388609),
         SHMRING_EINVAL},
        {"a maximum below the default minimum of 1024",
         RING_SIZES(ENVOY_RING, XXH64, 0, 1000), SHMRING_EINVAL},
        {"murmur2", RING_SIZES(ENVOY_RING, MURMUR2, 0, 0), 0},
        {"xxh3", RING_SIZES(ENVOY_RING, XXH3, 0, 0), SHMRING_EBADHASH},
        {"ring does not take Envoy's hashes", RING_SIZES(RING, MURMUR2, 0, 0),
         SHMRING_EBADHASH},
    };
    test_check_params_cases(cases, COUNT_OF(cases));
}
END_TEST

START_TEST(default_ring_size)
{
    /* Six equal hosts and Envoy's defaults: scale = ceil(1024 / 6) x 6 = 1026, up to
     * floating point, so 171 points each. */
    shmring_snapshot_t *snapshot = local_ring(SHMRING_HASH_XXH64, 0, 0, 90, 6, NULL);
    uint32_t counts[6];
    point_counts(snapshot, counts, 6);
    uint32_t total = 0;
    for (size_t i = 0; i < 6; i++)
        total += counts[i];
    ck_assert_uint_eq(total, 1026);
    shmring_snapshot_free(snapshot);
}
END_TEST

static Suite *envoy_ring_suite(void)
{
    Suite *s = suite_create("placement_envoy_ring");
    TEST_CASE(s, "envoy_tests", basic, basic_with_murmur2, hash_key, uneven_hosts,
              host_weighted_tiny_ring, host_weighted_large_ring, small_fractional_scale,
              large_fractional_scale, hashes_are_envoys);
    TEST_CASE(s, "core", lookup_by_key, default_ring_size);
    TEST_CASE(s, "errors", bad_params);
    return s;
}

int main(void)
{
    return test_run_suite(envoy_ring_suite());
}
