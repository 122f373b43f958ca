/*
 * Tests of lib/snapshot_lookup.c, the lookups every algorithm shares: down nodes
 * take no keys, lookup_n returns distinct nodes starting with the owner, batches
 * answer what single lookups answer, the bucket answers agree with a search of the
 * points, and empty or all-down rings answer with their error codes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "reference_lookup.h"
#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_placement.h"
#include "test_support.h"

START_TEST(down_nodes_take_no_keys)
{
    shmring_algorithm_t algorithm = (shmring_algorithm_t)_i;
    shmring_hash_t hash = test_usual_hash(algorithm);
    shmring_nodeset_t *set = test_nodeset(20, algorithm, hash);
    for (int n = 0; n < 20; n += 3) {
        char name[32];
        snprintf(name, sizeof(name), "node-%d", n);
        ck_assert_int_eq(shmring_nodeset_set_state(set, name, SHMRING_STATE_DOWN), 0);
    }
    shmring_snapshot_t *snapshot = test_snapshot(set);
    double shares[20], total = 0;
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, COUNT_OF(shares)), 0);
    for (int n = 0; n < 20; n++) {
        if (n % 3 == 0)
            ck_assert(shares[n] == 0.0);
        else
            ck_assert_double_gt(shares[n], 0.0);
        total += shares[n];
    }
    ck_assert_double_eq_tol(total, 1.0, 1e-9);
    for (uint64_t k = 0; k < 20000; k++) {
        shmring_node_t found[13];
        char key[32];
        size_t len = test_key(key, k);
        EXPECT_UINT_NE(test_owner_id(snapshot, k) % 3, 0);
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(snapshot, key, len, found, 13), 13);
        for (int i = 0; i < 13; i++)
            EXPECT_UINT_NE(found[i].id % 3, 0);
    }
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST
/*
 * Batches answer key for key what single lookups answer, whatever the batch size
 * (the library resolves keys in groups of 16) and the key length (up to 299 bytes,
 * past xxh3's 240-byte short-input path).
 */
START_TEST(lookup_ids_match_single_lookups)
{
    shmring_algorithm_t algorithm = (shmring_algorithm_t)_i;
    shmring_nodeset_t *set = test_nodeset(37, algorithm, test_usual_hash(algorithm));
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "node-3", 9), 0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    enum { KEYS = 1000 };
    static uint8_t bytes[KEYS][300];
    const void *keys[KEYS];
    size_t lens[KEYS];
    uint32_t want[KEYS];
    uint64_t state = 99;
    for (size_t k = 0; k < KEYS; k++) {
        lens[k] = k % 300;
        for (size_t b = 0; b < lens[k]; b++)
            bytes[k][b] = (uint8_t)test_random(&state);
        keys[k] = bytes[k];
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(snapshot, keys[k], lens[k], &node), 0);
        want[k] = node.id;
        uint32_t id = UINT32_MAX;
        ck_assert_int_eq(shmring_snapshot_lookup_id(snapshot, keys[k], lens[k], &id), 0);
        ck_assert_uint_eq(id, want[k]);
    }
    static const size_t batch_sizes[] = {1, 15, 16, 17, 33, KEYS};
    for (size_t b = 0; b < COUNT_OF(batch_sizes); b++) {
        uint32_t got[KEYS + 1];
        for (size_t first = 0; first < KEYS; first += batch_sizes[b]) {
            size_t count = KEYS - first < batch_sizes[b] ? KEYS - first : batch_sizes[b];
            got[first + count] = UINT32_MAX;
            ck_assert_int_eq(shmring_snapshot_lookup_ids(snapshot, keys + first,
                                                         lens + first, count,
                                                         got + first),
                             0);
            /* Nothing is written past the batch. */
            ck_assert_uint_eq(got[first + count], UINT32_MAX);
        }
        for (size_t k = 0; k < KEYS; k++)
            ck_assert_uint_eq(got[k], want[k]);
    }
    uint32_t untouched = UINT32_MAX;
    ck_assert_int_eq(shmring_snapshot_lookup_ids(snapshot, keys, lens, 0, &untouched), 0);
    ck_assert_uint_eq(untouched, UINT32_MAX);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* Does the owner the answers give HASH match the search of the points (the previous
 * format's search, reference_lookup.h)? Returns 1 when the answers alone gave it (no
 * slow path), so that callers can show the fast path ran. */
static int check_answer(const void *snapshot, uint64_t hash)
{
    const struct snapshot_header *h = snapshot_header(snapshot);
    const struct snapshot_point *points = snapshot_section_at(snapshot, &h->points);
    EXPECT_UINT_EQ(shmring__snapshot_owner(snapshot, hash),
                   points[reference_first_point(snapshot, hash)].node_index);
    uint32_t owner =
        shmring__answer_owner(h, snapshot_section_at(snapshot, &h->answers), hash);
    return owner != ANSWER_SLOW;
}

/*
 * Format 3 answers most keys from its bucket answers; every owner must be the one
 * the first format's search of the points gives, on many node sets of `ring` and
 * `ketama` (every hash, 1 to 2,000 nodes, weights, down nodes, few and many vnodes),
 * for random hashes, hashes on every point and beside it, and at both ends of
 * answer buckets.
 */
START_TEST(answers_match_point_search)
{
    uint64_t state = 0xa115 + (uint64_t)_i;
    size_t fast = 0, total = 0;
    for (int round = 0; round < 6; round++) {
        bool ketama = (round + _i) % 3 == 2;
        shmring_hash_t hash =
            ketama ? SHMRING_HASH_MD5
                   : test_ring_hashes[test_random(&state) % COUNT_OF(test_ring_hashes)];
        uint32_t vnodes = 1 + (uint32_t)(test_random(&state) % 200);
        size_t nodes = 1 + test_random(&state) % (round == 5 ? 2000 : 300);
        shmring_nodeset_t *set = test_empty_set(
            ketama ? SHMRING_ALGORITHM_KETAMA : SHMRING_ALGORITHM_RING, hash, vnodes);
        char name[32];
        for (size_t n = 0; n < nodes; n++) {
            snprintf(name, sizeof(name), "n%zu-%d", n, _i);
            test_add_node(set, name, 1 + (uint32_t)(test_random(&state) % 5),
                          n > 0 && test_random(&state) % 7 == 0 ? SHMRING_STATE_DOWN
                                                                : SHMRING_STATE_UP);
        }
        size_t size;
        void *snapshot = test_build(set, &size);
        const struct snapshot_header *h = snapshot_header(snapshot);
        const struct snapshot_point *points = snapshot_section_at(snapshot, &h->points);
        ck_assert_uint_eq(h->answer_bits, h->bucket_bits + ANSWER_EXTRA_BITS);
        for (int k = 0; k < 20000; k++) {
            fast += (size_t)check_answer(snapshot, test_random(&state));
            total++;
        }
        for (uint32_t p = 0; p < h->point_count; p++) {
            check_answer(snapshot, points[p].point);
            check_answer(snapshot, points[p].point - 1);
            check_answer(snapshot, points[p].point + 1);
        }
        unsigned shift = 64 - h->answer_bits;
        for (uint64_t a = 0; a < UINT64_C(1) << h->answer_bits;
             a += 1 + (UINT64_C(1) << h->answer_bits) / 4096) {
            check_answer(snapshot, a << shift);
            check_answer(snapshot, (a << shift) - 1);
            check_answer(snapshot, ((a + 1) << shift) - 1);
        }
        free(snapshot);
        shmring_nodeset_free(set);
    }
    /* Most random keys never reach the points (about 1 in 17 does at most). */
    EXPECT_TRUE(fast * 10 > total * 8);
}
END_TEST
START_TEST(lookup_n_distinct_first_is_lookup)
{
    shmring_algorithm_t algorithm = (shmring_algorithm_t)_i;
    shmring_hash_t hash = test_usual_hash(algorithm);
    shmring_nodeset_t *set = test_nodeset(100, algorithm, hash);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    test_check_lookup_n(snapshot, 1, 1);
    test_check_lookup_n(snapshot, 3, 3);
    test_check_lookup_n(snapshot, 64, 64);
    /* More than SHMRING_LOOKUP_N_MAX is treated as the maximum. */
    shmring_node_t found[SHMRING_LOOKUP_N_MAX];
    ck_assert_int_eq(shmring_snapshot_lookup_n(snapshot, "k", 1, found, 1000),
                     SHMRING_LOOKUP_N_MAX);
    ck_assert_int_eq(shmring_snapshot_lookup_n(snapshot, "k", 1, found, 0),
                     SHMRING_EINVAL);
    shmring_snapshot_free(snapshot);

    /* Fewer up nodes than asked for: all of them, and no down node. */
    for (int n = 0; n < 100; n++) {
        if (n % 20 != 0) {
            char name[32];
            snprintf(name, sizeof(name), "node-%d", n);
            ck_assert_int_eq(shmring_nodeset_set_state(set, name, SHMRING_STATE_DOWN), 0);
        }
    }
    snapshot = test_snapshot(set);
    test_check_lookup_n(snapshot, 10, 5);
    for (uint64_t k = 0; k < 1000; k++) {
        char key[32];
        size_t len = test_key(key, k);
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(snapshot, key, len, found, 64), 5);
        for (int i = 0; i < 5; i++)
            EXPECT_UINT_EQ(found[i].id % 20, 0);
    }
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST
START_TEST(empty_and_all_down)
{
    shmring_algorithm_t algorithm = (shmring_algorithm_t)_i;
    shmring_hash_t hash = test_usual_hash(algorithm);
    shmring_nodeset_t *set = test_empty_set(algorithm, hash, 160);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_node_t node[2];
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "k", 1, node), SHMRING_EEMPTY);
    ck_assert_int_eq(shmring_snapshot_lookup_n(snapshot, "k", 1, node, 2),
                     SHMRING_EEMPTY);
    const void *keys[1] = {"k"};
    size_t lens[1] = {1};
    uint32_t id = 7;
    ck_assert_int_eq(shmring_snapshot_lookup_id(snapshot, "k", 1, &id), SHMRING_EEMPTY);
    ck_assert_int_eq(shmring_snapshot_lookup_ids(snapshot, keys, lens, 1, &id),
                     SHMRING_EEMPTY);
    ck_assert_int_eq(shmring_snapshot_lookup_ids(snapshot, keys, lens, 0, &id),
                     SHMRING_EEMPTY);
    ck_assert_uint_eq(id, 7);
    shmring_snapshot_free(snapshot);

    test_add_node(set, "a", 1, SHMRING_STATE_DOWN);
    test_add_node(set, "b", 5, SHMRING_STATE_DOWN);
    snapshot = test_snapshot(set);
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "k", 1, node), SHMRING_EALLDOWN);
    ck_assert_int_eq(shmring_snapshot_lookup_n(snapshot, "k", 1, node, 2),
                     SHMRING_EALLDOWN);
    ck_assert_int_eq(shmring_snapshot_lookup_id(snapshot, "k", 1, &id), SHMRING_EALLDOWN);
    ck_assert_int_eq(shmring_snapshot_lookup_ids(snapshot, keys, lens, 1, &id),
                     SHMRING_EALLDOWN);
    ck_assert_uint_eq(id, 7);
    double shares[2] = {-1, -1};
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, COUNT_OF(shares)), 0);
    ck_assert(shares[0] == 0.0 && shares[1] == 0.0);
    shmring_snapshot_free(snapshot);

    /* One node up again: it answers every key. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "b", SHMRING_STATE_UP), 0);
    snapshot = test_snapshot(set);
    for (uint64_t k = 0; k < 1000; k++) {
        char key[32];
        size_t len = test_key(key, k);
        EXPECT_INT_EQ(shmring_snapshot_lookup(snapshot, key, len, node), 0);
        EXPECT_STR_EQ(node[0].name, "b");
        EXPECT_UINT_EQ(node[0].weight, 5);
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(snapshot, key, len, node, 2), 1);
    }
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, COUNT_OF(shares)), 0);
    ck_assert(shares[0] == 0.0);
    ck_assert_double_eq_tol(shares[1], 1.0, 1e-12);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST
static Suite *snapshot_lookup_suite(void)
{
    Suite *s = suite_create("snapshot_lookup");
    TCase *tc = tcase_create("lookups");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, down_nodes_take_no_keys, 0, 3);
    tcase_add_loop_test(tc, lookup_n_distinct_first_is_lookup, 0, 3);
    tcase_add_loop_test(tc, empty_and_all_down, 0, 3);
    tcase_add_loop_test(tc, lookup_ids_match_single_lookups, 0, 3);
    tcase_add_loop_test(tc, answers_match_point_search, 0, 8);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(snapshot_lookup_suite());
}
