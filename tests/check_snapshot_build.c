/*
 * Tests of the snapshot builder (lib/snapshot_build.c): its limits, checked before
 * anything large is allocated, the largest ring it builds, and the round trip from a
 * snapshot back to its node set. The validator's refusals are
 * check_snapshot_validate's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <xxhash.h>

#include "snapshot_internal.h"
#include "test_support.h"

/* ---- the same bytes as before ---- */

/*
 * XXH3-64 of whole snapshots (checksum field included) as the builder made them
 * before it sorted in place and filled the bucket index by counting (format 3, as
 * built by the commit before that change was merged): the same node
 * set must still give the same bytes, byte for byte. Sets of 3,000 nodes sort
 * hundreds of thousands of points on the in-place path, and ketama's 32-bit points
 * collide there, so the order of equal points is pinned too; every fourth node is
 * down and weights vary from 1 to 3, so down nodes and weights are in the bytes.
 * The header holds the fingerprint, so these were pinned again when its encoding
 * became v4: built with v3's domain string, every digest but nginx's was still the
 * one pinned before (nginx's fingerprint now ranks its down nodes too).
 */
struct pinned_snapshot {
    shmring_algorithm_t algorithm;
    size_t nodes;
    uint64_t digest;
};

static const struct pinned_snapshot pinned[] = {
    {SHMRING_ALGORITHM_RING, 3, UINT64_C(0xaaa339558b906bfc)},
    {SHMRING_ALGORITHM_RING, 3000, UINT64_C(0x8215571523e01eb3)},
    {SHMRING_ALGORITHM_KETAMA, 3, UINT64_C(0x6e41d5d131668991)},
    {SHMRING_ALGORITHM_KETAMA, 3000, UINT64_C(0x01ee0343030848e5)},
    {SHMRING_ALGORITHM_MAGLEV, 3000, UINT64_C(0x5908c92c5cabb3af)},
    {SHMRING_ALGORITHM_TWEMPROXY, 3000, UINT64_C(0x9edcec896a2836f0)},
    {SHMRING_ALGORITHM_LIBKETAMA, 3000, UINT64_C(0xf0eb9211de203aa7)},
    {SHMRING_ALGORITHM_NGINX, 3000, UINT64_C(0x41dc076ba54db753)},
};

START_TEST(same_bytes_as_before)
{
    const struct pinned_snapshot *p = &pinned[_i];
    shmring_nodeset_t *set = test_nodeset(p->nodes, p->algorithm,
                                          shmring_algorithm_default_hash(p->algorithm));
    for (size_t i = 0; i < p->nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%zu", i);
        ck_assert_int_eq(shmring_nodeset_set_weight(set, name, 1 + (uint32_t)(i % 3)), 0);
        if (i % 4 == 3)
            ck_assert_int_eq(shmring_nodeset_set_state(set, name, SHMRING_STATE_DOWN), 0);
    }
    size_t size;
    void *buffer = test_build(set, &size);
    uint64_t digest = XXH3_64bits(buffer, size);
    ck_assert_msg(digest == p->digest, "%s, %zu nodes: digest 0x%016llx",
                  shmring_algorithm_name(p->algorithm), p->nodes,
                  (unsigned long long)digest);
    free(buffer);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- limits ---- */

START_TEST(too_many_points_refused_before_allocating)
{
    /* With at most 1 GiB of address space, building 65535 x 65535 points (64 GiB)
     * could only fail with ENOMEM; the limit must be checked first. (AddressSanitizer
     * reserves terabytes of shadow memory, so a sanitized build skips the rlimit.) */
#if !TEST_ASAN
    struct rlimit limit = {UINT64_C(1) << 30, UINT64_C(1) << 30};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &limit), 0);
#endif
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 65535, 0};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "huge", NULL, 65535, SHMRING_STATE_UP, NULL), 0);
    void *buffer = NULL;
    size_t size = 0;
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, &size), SHMRING_ELIMIT);
    ck_assert_ptr_null(buffer);

    /* One point over the limit: 24929 x 673 = 2^24 + 1. */
    params.vnodes = 673;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "huge", 24929), 0);
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, &size), SHMRING_ELIMIT);

    /* Down nodes have no points. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "huge", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, &size), 0);
    shmring_snapshot_t *valid = NULL;
    ck_assert_int_eq(shmring_snapshot_new(buffer, size, &valid), 0);
    shmring_snapshot_free(valid);
    free(buffer);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(maglev_table_limit)
{
    /* 167,773 up nodes want a table over the largest prime below 2^24. */
    shmring_nodeset_t *set =
        test_nodeset(167773, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    void *buffer = NULL;
    size_t size;
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, &size), SHMRING_ELIMIT);
    ck_assert_ptr_null(buffer);
    shmring_nodeset_free(set);
}
END_TEST

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

START_TEST(sixteen_million_points)
{
    shmring_nodeset_t *set =
        test_nodeset(100000, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_snapshot_t *buffer = test_snapshot(set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(buffer, &info);
    ck_assert_uint_eq(info.node_count, 100000);
    ck_assert_uint_eq(info.point_count, 16000000);
    ck_assert_uint_eq(snapshot_header(shmring_snapshot_data(buffer, NULL))->bucket_bits,
                      24);
    uint32_t seen[64] = {0};
    for (uint64_t k = 0; k < 64; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t found[3];
        ck_assert_int_eq(shmring_snapshot_lookup_n(buffer, key, len, found, 3), 3);
        seen[k] = found[0].id;
    }
    /* Keys spread: 64 keys over 100,000 nodes land on 64 nodes, or nearly. */
    qsort(seen, 64, sizeof(seen[0]), compare_u32);
    int distinct = 1;
    for (int i = 1; i < 64; i++)
        distinct += seen[i] != seen[i - 1];
    ck_assert_int_ge(distinct, 60);
    shmring_snapshot_free(buffer);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- round trip ---- */

/* Recreates SET from its snapshot and checks nodes, ids, parameters, the next id and
 * that the recreated set builds the same bytes. */
static void check_round_trip(shmring_nodeset_t *set)
{
    size_t size, size_again;
    shmring_snapshot_t *buffer = test_snapshot(set);
    shmring_nodeset_t *copy = NULL;
    ck_assert_int_eq(shmring_nodeset_from_snapshot(buffer, &copy), 0);
    test_check_same_nodeset(set, copy);
    shmring_snapshot_t *again = test_snapshot(copy);
    const void *bytes = shmring_snapshot_data(buffer, &size);
    const void *bytes_again = shmring_snapshot_data(again, &size_again);
    ck_assert_uint_eq(size, size_again);
    ck_assert_int_eq(memcmp(bytes, bytes_again, size), 0);
    uint32_t id1, id2;
    ck_assert_int_eq(shmring_nodeset_add(set, "next", NULL, 1, SHMRING_STATE_UP, &id1),
                     0);
    ck_assert_int_eq(shmring_nodeset_add(copy, "next", NULL, 1, SHMRING_STATE_UP, &id2),
                     0);
    ck_assert_uint_eq(id1, id2);
    ck_assert_int_eq(shmring_nodeset_remove(set, "next"), 0);
    shmring_snapshot_free(buffer);
    shmring_snapshot_free(again);
    shmring_nodeset_free(copy);
}

START_TEST(round_trip_ring)
{
    shmring_nodeset_t *set =
        test_small_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_FNV1A, 0);
    shmring_params_t params = {SHMRING_ALGORITHM_RING, SHMRING_HASH_FNV1A, 7, 0};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "beta"), 0);
    ck_assert_int_eq(shmring_nodeset_add(set, "n\xc3\xa4me with spaces",
                                         "[2001:db8::1]:7", 65535, SHMRING_STATE_UP,
                                         NULL),
                     0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "n\xc3\xa4me with spaces"), 0);
    ck_assert_int_eq(shmring_nodeset_add(set, "epsilon", NULL, 3, SHMRING_STATE_UP, NULL),
                     0);
    check_round_trip(set); /* ids 0, 2, 3, 5; next id 6 */
    shmring_nodeset_free(set);

    shmring_nodeset_t *empty;
    ck_assert_int_eq(shmring_nodeset_new(&empty), 0);
    check_round_trip(empty);
    shmring_nodeset_free(empty);
}
END_TEST

START_TEST(round_trip_ketama_and_maglev)
{
    shmring_nodeset_t *set =
        test_small_set(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 0);
    check_round_trip(set);
    shmring_nodeset_free(set);

    /* Maglev: default size, explicit sizes (one equal to the default), all down. */
    static const uint32_t sizes[] = {0, 7, 65537, 131071};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        set = test_small_set(SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MURMUR3, sizes[i]);
        check_round_trip(set);
        ck_assert_int_eq(shmring_nodeset_set_state(set, "alpha", SHMRING_STATE_DOWN), 0);
        ck_assert_int_eq(shmring_nodeset_set_state(set, "beta", SHMRING_STATE_DOWN), 0);
        ck_assert_int_eq(shmring_nodeset_set_state(set, "delta", SHMRING_STATE_DOWN), 0);
        check_round_trip(set);
        shmring_nodeset_free(set);
    }
}
END_TEST

START_TEST(round_trip_keeps_id_limit)
{
    /* A snapshot whose id counter is exhausted: the recreated set refuses new nodes
     * rather than wrapping around to ids in use. */
    shmring_nodeset_t *small =
        test_small_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 0);
    size_t size;
    unsigned char *bytes = test_build(small, &size);
    shmring_nodeset_free(small);
    struct snapshot_header *h = (struct snapshot_header *)(void *)bytes;
    struct snapshot_node *nodes = (void *)(bytes + h->nodes.offset);
    h->next_node_id = UINT32_MAX;
    nodes[3].id = UINT32_MAX - 1;
    h->checksum = 0;
    h->checksum = XXH3_64bits(bytes, size);
    shmring_snapshot_t *snapshot;
    ck_assert_int_eq(shmring_snapshot_new(bytes, size, &snapshot), 0);
    free(bytes);
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_from_snapshot(snapshot, &set), 0);
    shmring_node_info_t info;
    ck_assert_int_eq(shmring_nodeset_get(set, 3, &info), 0);
    ck_assert_uint_eq(info.id, UINT32_MAX - 1);
    ck_assert_int_eq(shmring_nodeset_add(set, "more", NULL, 1, SHMRING_STATE_UP, NULL),
                     SHMRING_ELIMIT);
    ck_assert_uint_eq(shmring_nodeset_count(set), 4);
    shmring_nodeset_free(set);
    shmring_snapshot_free(snapshot);
}
END_TEST

static Suite *snapshot_build_suite(void)
{
    Suite *s = suite_create("snapshot_build");
    TCase *tc = tcase_create("limits");
    /* sixteen_million_points builds and validates a snapshot of 256 MB: 50 s in
     * the ASan build, several minutes on a busy machine. */
    tcase_set_timeout(tc, 900);
    tcase_add_loop_test(tc, same_bytes_as_before, 0, sizeof(pinned) / sizeof(pinned[0]));
    tcase_add_test(tc, too_many_points_refused_before_allocating);
    tcase_add_test(tc, maglev_table_limit);
    tcase_add_test(tc, sixteen_million_points);
    suite_add_tcase(s, tc);

    TEST_CASE(s, "round_trip", round_trip_ring, round_trip_ketama_and_maglev,
              round_trip_keeps_id_limit);
    return s;
}

int main(void)
{
    return test_run_suite(snapshot_build_suite());
}
