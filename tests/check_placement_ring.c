/*
 * Tests of lib/placement_ring.c, the `ring` algorithm, through snapshots and their
 * lookups: against a brute-force reference built here from its documented definition
 * (point i of a node is hash(name || le32(i)), ties broken by name), point counts,
 * disruption when a node comes or goes, weights, down nodes passing their keys
 * clockwise, and addresses that play no part.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_placement.h"
#include "test_support.h"

/* ---- the brute-force reference of `ring` ---- */

struct ref_point {
    uint64_t point;
    const char *name;
};

struct ref_ring {
    shmring_hash_t hash;
    struct ref_point *points;
    size_t count;
};

static int ref_point_compare(const void *a, const void *b)
{
    const struct ref_point *x = a, *y = b;
    if (x->point != y->point)
        return x->point < y->point ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Point i of node N is hash(name || le32(i)); points sort by value, ties by name. */
static struct ref_ring ref_ring_build(const shmring_nodeset_t *set)
{
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    struct ref_ring ring = {params.hash, NULL, 0};
    size_t capacity = 0;
    for (size_t n = 0; n < shmring_nodeset_count(set); n++) {
        shmring_node_info_t info;
        ck_assert_int_eq(shmring_nodeset_get(set, n, &info), 0);
        if (info.state == SHMRING_STATE_UP)
            capacity += (size_t)info.weight * params.vnodes;
    }
    ring.points = malloc((capacity ? capacity : 1) * sizeof(*ring.points));
    ck_assert_ptr_nonnull(ring.points);
    for (size_t n = 0; n < shmring_nodeset_count(set); n++) {
        shmring_node_info_t info;
        ck_assert_int_eq(shmring_nodeset_get(set, n, &info), 0);
        if (info.state != SHMRING_STATE_UP)
            continue;
        size_t len = strlen(info.name);
        uint8_t input[SHMRING_NAME_MAX + 4];
        memcpy(input, info.name, len);
        for (uint32_t i = 0; i < info.weight * params.vnodes; i++) {
            for (int b = 0; b < 4; b++)
                input[len + (size_t)b] = (uint8_t)(i >> (8 * b));
            ring.points[ring.count++] = (struct ref_point){
                shmring__hash64(params.hash, input, len + 4), info.name};
        }
    }
    qsort(ring.points, ring.count, sizeof(*ring.points), ref_point_compare);
    return ring;
}

/* Index of the first point >= HASH, wrapping to 0 past the last one. */
static size_t ref_ring_first(const struct ref_ring *ring, uint64_t hash)
{
    size_t low = 0, high = ring->count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (ring->points[mid].point < hash)
            low = mid + 1;
        else
            high = mid;
    }
    return low == ring->count ? 0 : low;
}

/* The first N distinct node names clockwise from KEY; returns how many. */
static size_t ref_ring_lookup_n(const struct ref_ring *ring, const void *key, size_t len,
                                const char **names, size_t n)
{
    size_t i = ref_ring_first(ring, shmring__hash64(ring->hash, key, len));
    size_t found = 0;
    for (size_t step = 0; step < ring->count && found < n; step++, i++) {
        if (i == ring->count)
            i = 0;
        size_t j = 0;
        while (j < found && strcmp(names[j], ring->points[i].name) != 0)
            j++;
        if (j == found)
            names[found++] = ring->points[i].name;
    }
    return found;
}

static void check_owner(const shmring_snapshot_t *snapshot, const shmring_nodeset_t *set,
                        const struct ref_ring *ring, uint64_t hash)
{
    shmring_node_info_t owner;
    EXPECT_INT_EQ(
        shmring_nodeset_get(
            set, shmring__snapshot_owner(shmring_snapshot_data(snapshot, NULL), hash),
            &owner),
        0);
    EXPECT_STR_EQ(owner.name, ring->points[ref_ring_first(ring, hash)].name);
}

static void check_against_reference(const shmring_nodeset_t *set, size_t keys)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    struct ref_ring ring = ref_ring_build(set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, ring.count);

    uint64_t state = 1234;
    for (size_t k = 0; k < keys; k++) {
        /* Half readable keys, half random bytes of random length. */
        uint8_t key[64];
        size_t len;
        if (k % 2 == 0) {
            len = test_key((char *)key, k);
        } else {
            len = test_random(&state) % sizeof(key);
            for (size_t b = 0; b < len; b++)
                key[b] = (uint8_t)test_random(&state);
        }
        const char *expected[4];
        size_t expected_count = ref_ring_lookup_n(&ring, key, len, expected, 4);
        EXPECT_TRUE(expected_count >= 1);
        shmring_node_t got[4];
        EXPECT_INT_EQ(shmring_snapshot_lookup(snapshot, key, len, &got[0]), 0);
        EXPECT_STR_EQ(got[0].name, expected[0]);
        uint32_t id = UINT32_MAX;
        EXPECT_INT_EQ(shmring_snapshot_lookup_id(snapshot, key, len, &id), 0);
        EXPECT_UINT_EQ(id, got[0].id);
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(snapshot, key, len, got, 4),
                      (int)expected_count);
        for (size_t i = 0; i < expected_count; i++)
            EXPECT_STR_EQ(got[i].name, expected[i]);
    }
    /*
     * Hashes exactly on a point, one either side of it, and the ends of the hash
     * space, through the lookup routine the reader inlines.
     */
    uint64_t edges[] = {0, 1, UINT64_MAX, UINT64_MAX - 1};
    for (size_t e = 0; e < COUNT_OF(edges); e++)
        check_owner(snapshot, set, &ring, edges[e]);
    for (size_t p = 0; p < ring.count; p += 1 + ring.count / 500) {
        check_owner(snapshot, set, &ring, ring.points[p].point);
        check_owner(snapshot, set, &ring, ring.points[p].point - 1);
        check_owner(snapshot, set, &ring, ring.points[p].point + 1);
    }
    free(ring.points);
    shmring_snapshot_free(snapshot);
}

/* ---- reference, ties and counts ---- */

START_TEST(ring_matches_reference)
{
    shmring_hash_t hash = test_ring_hashes[_i];
    shmring_nodeset_t *set = test_empty_set(SHMRING_ALGORITHM_RING, hash, 20);
    char name[32];
    for (int n = 0; n < 30; n++) {
        snprintf(name, sizeof(name), "cache-%02d.example.net", n);
        test_add_node(set, name, (uint32_t)(n % 5 + 1),
                      n % 6 == 5 ? SHMRING_STATE_DOWN : SHMRING_STATE_UP);
    }
    check_against_reference(set, 20000);
    shmring_nodeset_free(set);
}
END_TEST
START_TEST(ring_ties_break_by_name)
{
    /* Equal-length names with equal CRC-32: every point of one node coincides with a
     * point of the other, and the smaller name must own all of them. */
    static const char *const smaller = "tie-o16ztj0g", *const larger = "tie-yd5cous7";
    for (int order = 0; order < 2; order++) {
        shmring_nodeset_t *set =
            test_empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, 40);
        test_add_node(set, "other", 1, SHMRING_STATE_UP);
        test_add_node(set, order ? smaller : larger, 1, SHMRING_STATE_UP);
        test_add_node(set, order ? larger : smaller, 1, SHMRING_STATE_UP);
        check_against_reference(set, 2000);

        shmring_snapshot_t *snapshot = test_snapshot(set);
        double shares[3];
        ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, COUNT_OF(shares)), 0);
        size_t index;
        ck_assert_int_eq(shmring_nodeset_find(set, larger, &index), 0);
        ck_assert(shares[index] == 0.0);
        ck_assert_int_eq(shmring_nodeset_find(set, smaller, &index), 0);
        ck_assert(shares[index] > 0.2);

        int owned = 0;
        for (uint64_t k = 0; k < 2000; k++) {
            char key[32];
            size_t len = test_key(key, k);
            shmring_node_t got[3];
            EXPECT_INT_EQ(shmring_snapshot_lookup_n(snapshot, key, len, got, 3), 3);
            EXPECT_STR_NE(got[0].name, larger);
            if (strcmp(got[0].name, smaller) == 0) {
                /* The tied point of the larger name comes next clockwise. */
                EXPECT_STR_EQ(got[1].name, larger);
                owned++;
            }
        }
        ck_assert_int_gt(owned, 0);
        shmring_snapshot_free(snapshot);
        shmring_nodeset_free(set);
    }
}
END_TEST
START_TEST(ring_of_equal_points)
{
    /* Two nodes whose only points are equal: the smaller name owns the whole ring,
     * and its share is all of it (the wrap-around arc is the full 2^64). */
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, 1);
    test_add_node(set, "tie-yd5cous7", 1, SHMRING_STATE_UP);
    test_add_node(set, "tie-o16ztj0g", 1, SHMRING_STATE_UP);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    double shares[2] = {-1, -1};
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, COUNT_OF(shares)), 0);
    ck_assert(shares[0] == 0.0);
    ck_assert(shares[1] == 1.0);
    for (uint64_t k = 0; k < 1000; k++)
        EXPECT_UINT_EQ(test_owner_id(snapshot, k), 1);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST
/* Prints what share of TEST_DISRUPTION_KEYS keys the change WHAT moved (MOVED of
 * them), and checks that it is within 10% of IDEAL. */
static void check_moved_share(const char *what, size_t moved, double ideal)
{
    double fraction = (double)moved / TEST_DISRUPTION_KEYS;
    printf("%s moved %.4f%% of keys (ideal %.4f%%)\n", what, 100 * fraction, 100 * ideal);
    fflush(stdout);
    ck_assert_double_le(fraction, ideal * 1.1);
    ck_assert_double_ge(fraction, ideal * 0.9);
}

START_TEST(ring_add_node_moves_its_share_only)
{
    shmring_nodeset_t *set = test_nodeset(100, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_snapshot_t *before = test_snapshot(set);
    ck_assert_int_eq(shmring_nodeset_add(set, "node-100", "10.0.0.100:11211", 1,
                                         SHMRING_STATE_UP, NULL),
                     0);
    shmring_snapshot_t *after = test_snapshot(set);
    uint32_t *old_owner = test_owners(before, TEST_DISRUPTION_KEYS);
    size_t moved = 0;
    for (uint64_t k = 0; k < TEST_DISRUPTION_KEYS; k++) {
        uint32_t id = test_owner_id(after, k);
        if (id != old_owner[k]) {
            EXPECT_UINT_EQ(id, 100); /* keys move only to the new node */
            moved++;
        }
    }
    check_moved_share("ring: adding 1 node to 100", moved, 1.0 / 101);
    free(old_owner);
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
    shmring_nodeset_free(set);
}
END_TEST
START_TEST(ring_remove_node_moves_its_keys_only)
{
    shmring_nodeset_t *set = test_nodeset(100, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_snapshot_t *before = test_snapshot(set);
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-37"), 0);
    shmring_snapshot_t *after = test_snapshot(set);
    uint32_t *old_owner = test_owners(before, TEST_DISRUPTION_KEYS);
    size_t moved = 0;
    for (uint64_t k = 0; k < TEST_DISRUPTION_KEYS; k++) {
        uint32_t id = test_owner_id(after, k);
        EXPECT_UINT_NE(id, 37);
        if (id != old_owner[k]) {
            EXPECT_UINT_EQ(old_owner[k], 37); /* only the removed node's keys move */
            moved++;
        } else {
            EXPECT_UINT_NE(old_owner[k], 37);
        }
    }
    check_moved_share("ring: removing 1 node of 100", moved, 1.0 / 100);
    free(old_owner);
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
    shmring_nodeset_free(set);
}
END_TEST
START_TEST(ring_weights_scale_shares)
{
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 160);
    char name[32];
    for (int n = 0; n < 50; n++) {
        snprintf(name, sizeof(name), "node-%d", n);
        test_add_node(set, name, n < 10 ? 3 : 1, SHMRING_STATE_UP);
    }
    shmring_snapshot_t *snapshot = test_snapshot(set);
    double shares[50], heavy = 0, light = 0, total = 0;
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, COUNT_OF(shares)), 0);
    for (int n = 0; n < 50; n++) {
        total += shares[n];
        if (n < 10)
            heavy += shares[n] / 10;
        else
            light += shares[n] / 40;
    }
    ck_assert_double_eq_tol(total, 1.0, 1e-9);
    /* Ideal: heavy nodes 3/70 each, light ones 1/70. */
    printf("ring: weight-3 nodes hold %.3fx the share of weight-1 nodes (ideal 3)\n",
           heavy / light);
    fflush(stdout);
    ck_assert_double_ge(heavy / light, 2.7);
    ck_assert_double_le(heavy / light, 3.3);

    /* Keys follow the shares. */
    size_t heavy_keys = 0;
    for (uint64_t k = 0; k < 100000; k++)
        heavy_keys += test_owner_id(snapshot, k) < 10;
    ck_assert_double_eq_tol((double)heavy_keys / 100000, heavy * 10, 0.01);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST
START_TEST(ring_down_nodes_pass_keys_clockwise)
{
    shmring_nodeset_t *set =
        test_nodeset(50, SHMRING_ALGORITHM_RING, test_ring_hashes[_i]);
    shmring_snapshot_t *all_up = test_snapshot(set);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-7", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-23", SHMRING_STATE_DOWN), 0);
    shmring_snapshot_t *some_down = test_snapshot(set);

    size_t moved = 0;
    for (uint64_t k = 0; k < 50000; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t before[3], now;
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(all_up, key, len, before, 3), 3);
        EXPECT_INT_EQ(shmring_snapshot_lookup(some_down, key, len, &now), 0);
        /* The owner is the first node clockwise that is still up. */
        int i = 0;
        while (before[i].id == 7 || before[i].id == 23)
            i++;
        EXPECT_UINT_EQ(now.id, before[i].id);
        moved += i > 0;
    }
    ck_assert_uint_gt(moved, 0);
    shmring_snapshot_free(all_up);
    shmring_snapshot_free(some_down);
    shmring_nodeset_free(set);
}
END_TEST
START_TEST(ring_addresses_do_not_matter)
{
    shmring_nodeset_t *one =
        test_empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 50);
    shmring_nodeset_t *two =
        test_empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 50);
    char name[32], address[32];
    for (int n = 0; n < 20; n++) {
        snprintf(name, sizeof(name), "node-%d", n);
        snprintf(address, sizeof(address), "10.1.1.%d:%d", n, 20000 + n);
        test_add_node(one, name, 1, SHMRING_STATE_UP);
        ck_assert_int_eq(
            shmring_nodeset_add(two, name, address, 1, SHMRING_STATE_UP, NULL), 0);
    }
    shmring_snapshot_t *a = test_snapshot(one);
    shmring_snapshot_t *b = test_snapshot(two);
    for (uint64_t k = 0; k < 20000; k++)
        EXPECT_UINT_EQ(test_owner_id(a, k), test_owner_id(b, k));
    shmring_snapshot_free(a);
    shmring_snapshot_free(b);
    shmring_nodeset_free(one);
    shmring_nodeset_free(two);
}
END_TEST
START_TEST(ring_point_counts)
{
    /* weight x vnodes points for each up node, none for a down one: 3 x 7 + 1 x 7. */
    shmring_nodeset_t *set = test_empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 7);
    test_add_node(set, "a", 3, SHMRING_STATE_UP);
    test_add_node(set, "b", 1, SHMRING_STATE_UP);
    test_add_node(set, "c", 5, SHMRING_STATE_DOWN);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 28);
    /* Sorted, and a hash past the last point wraps to the first point's owner. */
    for (uint32_t p = 1; p < 28; p++)
        ck_assert_uint_le(test_point(snapshot, p - 1), test_point(snapshot, p));
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

static const struct test_fixture slow = {NULL, NULL, 300};

static Suite *placement_ring_suite(void)
{
    Suite *s = suite_create("placement_ring");
    TCase *tc = TEST_CASE_WITH(s, "reference", &slow, ring_ties_break_by_name,
                               ring_of_equal_points, ring_point_counts);
    tcase_add_loop_test(tc, ring_matches_reference, 0, (int)COUNT_OF(test_ring_hashes));
    TEST_CASE_WITH(s, "disruption", &slow, ring_add_node_moves_its_share_only,
                   ring_remove_node_moves_its_keys_only, ring_weights_scale_shares,
                   ring_addresses_do_not_matter);
    tc = tcase_create("down_nodes");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, ring_down_nodes_pass_keys_clockwise, 0,
                        (int)COUNT_OF(test_ring_hashes));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_ring_suite());
}
