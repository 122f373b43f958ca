/*
 * Tests of the placement algorithms (lib/placement_*.c, lib/point_sort.c) through
 * snapshots and their lookups: `ring` against a brute-force reference built here from
 * its documented definition, disruption and balance of `ring` and `maglev`, weights,
 * down nodes, lookup_n, and determinism for every algorithm and hash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_support.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static const shmring_hash_t all_hashes[] = {SHMRING_HASH_XXH3, SHMRING_HASH_MD5,
                                            SHMRING_HASH_CRC32, SHMRING_HASH_FNV1A,
                                            SHMRING_HASH_MURMUR3};

static shmring_nodeset_t *empty_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                    uint32_t vnodes)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {algorithm, hash, vnodes, 0};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    return set;
}

static void add(shmring_nodeset_t *set, const char *name, uint32_t weight,
                shmring_state_t state)
{
    ck_assert_int_eq(shmring_nodeset_add(set, name, NULL, weight, state, NULL), 0);
}

/* The id of KEY's owner. */
static uint32_t owner_id(const shmring_snapshot_t *snapshot, uint64_t key)
{
    char text[32];
    size_t len = test_key(text, key);
    shmring_node_t node;
    EXPECT_INT_EQ(shmring_snapshot_lookup(snapshot, text, len, &node), 0);
    return node.id;
}

static uint32_t *owners(const shmring_snapshot_t *snapshot, size_t keys)
{
    uint32_t *ids = malloc(keys * sizeof(*ids));
    ck_assert_ptr_nonnull(ids);
    for (size_t k = 0; k < keys; k++)
        ids[k] = owner_id(snapshot, k);
    return ids;
}

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

/* ---- ring: reference ---- */

START_TEST(ring_matches_reference)
{
    shmring_hash_t hash = all_hashes[_i];
    shmring_nodeset_t *set = empty_set(SHMRING_ALGORITHM_RING, hash, 20);
    char name[32];
    for (int n = 0; n < 30; n++) {
        snprintf(name, sizeof(name), "cache-%02d.example.net", n);
        add(set, name, (uint32_t)(n % 5 + 1),
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
            empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, 40);
        add(set, "other", 1, SHMRING_STATE_UP);
        add(set, order ? smaller : larger, 1, SHMRING_STATE_UP);
        add(set, order ? larger : smaller, 1, SHMRING_STATE_UP);
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
    shmring_nodeset_t *set = empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, 1);
    add(set, "tie-yd5cous7", 1, SHMRING_STATE_UP);
    add(set, "tie-o16ztj0g", 1, SHMRING_STATE_UP);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    double shares[2] = {-1, -1};
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, COUNT_OF(shares)), 0);
    ck_assert(shares[0] == 0.0);
    ck_assert(shares[1] == 1.0);
    for (uint64_t k = 0; k < 1000; k++)
        EXPECT_UINT_EQ(owner_id(snapshot, k), 1);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- ring: disruption and weights ---- */

#define DISRUPTION_KEYS 200000

START_TEST(ring_add_node_moves_its_share_only)
{
    shmring_nodeset_t *set = test_nodeset(100, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_snapshot_t *before = test_snapshot(set);
    ck_assert_int_eq(shmring_nodeset_add(set, "node-100", "10.0.0.100:11211", 1,
                                         SHMRING_STATE_UP, NULL),
                     0);
    shmring_snapshot_t *after = test_snapshot(set);
    uint32_t *old_owner = owners(before, DISRUPTION_KEYS);
    size_t moved = 0;
    for (uint64_t k = 0; k < DISRUPTION_KEYS; k++) {
        uint32_t id = owner_id(after, k);
        if (id != old_owner[k]) {
            EXPECT_UINT_EQ(id, 100); /* keys move only to the new node */
            moved++;
        }
    }
    double fraction = (double)moved / DISRUPTION_KEYS, ideal = 1.0 / 101;
    printf("ring: adding 1 node to 100 moved %.4f%% of keys (ideal %.4f%%)\n",
           100 * fraction, 100 * ideal);
    fflush(stdout);
    ck_assert_double_le(fraction, ideal * 1.1);
    ck_assert_double_ge(fraction, ideal * 0.9);
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
    uint32_t *old_owner = owners(before, DISRUPTION_KEYS);
    size_t moved = 0;
    for (uint64_t k = 0; k < DISRUPTION_KEYS; k++) {
        uint32_t id = owner_id(after, k);
        EXPECT_UINT_NE(id, 37);
        if (id != old_owner[k]) {
            EXPECT_UINT_EQ(old_owner[k], 37); /* only the removed node's keys move */
            moved++;
        } else {
            EXPECT_UINT_NE(old_owner[k], 37);
        }
    }
    double fraction = (double)moved / DISRUPTION_KEYS, ideal = 1.0 / 100;
    printf("ring: removing 1 node of 100 moved %.4f%% of keys (ideal %.4f%%)\n",
           100 * fraction, 100 * ideal);
    fflush(stdout);
    ck_assert_double_le(fraction, ideal * 1.1);
    ck_assert_double_ge(fraction, ideal * 0.9);
    free(old_owner);
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(ring_weights_scale_shares)
{
    shmring_nodeset_t *set = empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 160);
    char name[32];
    for (int n = 0; n < 50; n++) {
        snprintf(name, sizeof(name), "node-%d", n);
        add(set, name, n < 10 ? 3 : 1, SHMRING_STATE_UP);
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
        heavy_keys += owner_id(snapshot, k) < 10;
    ck_assert_double_eq_tol((double)heavy_keys / 100000, heavy * 10, 0.01);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- down nodes ---- */

START_TEST(ring_down_nodes_pass_keys_clockwise)
{
    shmring_nodeset_t *set = test_nodeset(50, SHMRING_ALGORITHM_RING, all_hashes[_i]);
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

START_TEST(down_nodes_take_no_keys)
{
    shmring_algorithm_t algorithm = (shmring_algorithm_t)_i;
    shmring_hash_t hash =
        algorithm == SHMRING_ALGORITHM_KETAMA ? SHMRING_HASH_MD5 : SHMRING_HASH_XXH3;
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
        EXPECT_UINT_NE(owner_id(snapshot, k) % 3, 0);
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(snapshot, key, len, found, 13), 13);
        for (int i = 0; i < 13; i++)
            EXPECT_UINT_NE(found[i].id % 3, 0);
    }
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- lookup_n ---- */

static void check_lookup_n(const shmring_snapshot_t *snapshot, size_t n,
                           int expected_count)
{
    for (uint64_t k = 0; k < 5000; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t first, found[SHMRING_LOOKUP_N_MAX];
        EXPECT_INT_EQ(shmring_snapshot_lookup(snapshot, key, len, &first), 0);
        int count = shmring_snapshot_lookup_n(snapshot, key, len, found, n);
        EXPECT_INT_EQ(count, expected_count);
        EXPECT_UINT_EQ(found[0].id, first.id);
        EXPECT_STR_EQ(found[0].name, first.name);
        EXPECT_STR_EQ(found[0].address, first.address);
        for (int i = 0; i < count; i++) {
            for (int j = 0; j < i; j++)
                EXPECT_UINT_NE(found[i].id, found[j].id);
        }
    }
}

/*
 * Batches answer key for key what single lookups answer, whatever the batch size
 * (the library resolves keys in groups of 16) and the key length (up to 299 bytes,
 * past xxh3's 240-byte short-input path).
 */
START_TEST(lookup_ids_match_single_lookups)
{
    shmring_algorithm_t algorithm = (shmring_algorithm_t)_i;
    shmring_nodeset_t *set = test_nodeset(
        37, algorithm,
        algorithm == SHMRING_ALGORITHM_KETAMA ? SHMRING_HASH_MD5 : SHMRING_HASH_XXH3);
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

/*
 * The previous format's search, kept as the reference of the answers: the first
 * point >= HASH in the snapshot's sorted points, by bisection of the whole array,
 * wrapping to point 0.
 */
static uint32_t search_first_point(const void *snapshot, uint64_t hash)
{
    const struct snapshot_header *h = snapshot_header(snapshot);
    const struct snapshot_point *points = snapshot_section_at(snapshot, &h->points);
    uint32_t low = 0, high = h->point_count;
    while (low < high) {
        uint32_t mid = low + (high - low) / 2;
        if (points[mid].point < hash)
            low = mid + 1;
        else
            high = mid;
    }
    return low == h->point_count ? 0 : low;
}

/* Does the owner the answers give HASH match the search of the points? Returns 1 when
 * the answers alone gave it (no slow path), so that callers can show the fast path
 * ran. */
static int check_answer(const void *snapshot, uint64_t hash)
{
    const struct snapshot_header *h = snapshot_header(snapshot);
    const struct snapshot_point *points = snapshot_section_at(snapshot, &h->points);
    EXPECT_UINT_EQ(shmring__snapshot_owner(snapshot, hash),
                   points[search_first_point(snapshot, hash)].node_index);
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
                   : all_hashes[test_random(&state) % COUNT_OF(all_hashes)];
        uint32_t vnodes = 1 + (uint32_t)(test_random(&state) % 200);
        size_t nodes = 1 + test_random(&state) % (round == 5 ? 2000 : 300);
        shmring_nodeset_t *set = empty_set(
            ketama ? SHMRING_ALGORITHM_KETAMA : SHMRING_ALGORITHM_RING, hash, vnodes);
        char name[32];
        for (size_t n = 0; n < nodes; n++) {
            snprintf(name, sizeof(name), "n%zu-%d", n, _i);
            add(set, name, 1 + (uint32_t)(test_random(&state) % 5),
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
    shmring_hash_t hash =
        algorithm == SHMRING_ALGORITHM_KETAMA ? SHMRING_HASH_MD5 : SHMRING_HASH_XXH3;
    shmring_nodeset_t *set = test_nodeset(100, algorithm, hash);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    check_lookup_n(snapshot, 1, 1);
    check_lookup_n(snapshot, 3, 3);
    check_lookup_n(snapshot, 64, 64);
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
    check_lookup_n(snapshot, 10, 5);
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
    shmring_hash_t hash =
        algorithm == SHMRING_ALGORITHM_KETAMA ? SHMRING_HASH_MD5 : SHMRING_HASH_XXH3;
    shmring_nodeset_t *set = empty_set(algorithm, hash, 160);
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

    add(set, "a", 1, SHMRING_STATE_DOWN);
    add(set, "b", 5, SHMRING_STATE_DOWN);
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

/* ---- maglev ---- */

static void table_slots(const shmring_snapshot_t *snapshot, uint32_t *slots,
                        size_t node_count)
{
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    double *shares = malloc(node_count * sizeof(*shares));
    ck_assert_ptr_nonnull(shares);
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, node_count), 0);
    uint64_t total = 0;
    for (size_t i = 0; i < node_count; i++) {
        slots[i] = (uint32_t)(shares[i] * info.point_count + 0.5);
        total += slots[i];
    }
    ck_assert_uint_eq(total, info.point_count);
    free(shares);
}

START_TEST(maglev_balance)
{
    shmring_nodeset_t *set =
        test_nodeset(100, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 65537); /* the default table size */
    uint32_t slots[100], largest = 0, smallest = UINT32_MAX;
    table_slots(snapshot, slots, 100);
    for (int i = 0; i < 100; i++) {
        largest = slots[i] > largest ? slots[i] : largest;
        smallest = slots[i] < smallest ? slots[i] : smallest;
    }
    double mean = 65537.0 / 100;
    printf("maglev: 100 equal nodes, slots %u..%u, largest/mean %.5f\n", smallest,
           largest, largest / mean);
    fflush(stdout);
    ck_assert_double_le(largest / mean, 1.01);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(maglev_weights)
{
    shmring_nodeset_t *set = empty_set(SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 160);
    char name[32];
    for (int n = 0; n < 50; n++) {
        snprintf(name, sizeof(name), "node-%d", n);
        add(set, name, n < 10 ? 2 : 1, SHMRING_STATE_UP);
    }
    shmring_snapshot_t *snapshot = test_snapshot(set);
    uint32_t slots[50];
    table_slots(snapshot, slots, 50);
    for (int n = 0; n < 10; n++) {
        for (int m = 10; m < 50; m++) {
            double ratio = (double)slots[n] / slots[m];
            ck_assert_double_ge(ratio, 1.98);
            ck_assert_double_le(ratio, 2.02);
        }
    }
    printf("maglev: weight-2 node %u slots, weight-1 node %u slots\n", slots[0],
           slots[10]);
    fflush(stdout);
    shmring_snapshot_free(snapshot);

    /* A node of weight 1 next to the heaviest weight still gets a slot. */
    add(set, "light", 1, SHMRING_STATE_UP);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "node-0", 65535), 0);
    snapshot = test_snapshot(set);
    uint32_t more[51];
    table_slots(snapshot, more, 51);
    ck_assert_uint_ge(more[50], 1);
    ck_assert_uint_gt(more[0], 65537 / 2);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(maglev_add_node_disruption)
{
    shmring_nodeset_t *set =
        test_nodeset(100, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    shmring_snapshot_t *before = test_snapshot(set);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "node-100", NULL, 1, SHMRING_STATE_UP, NULL), 0);
    shmring_snapshot_t *after = test_snapshot(set);
    uint32_t *old_owner = owners(before, DISRUPTION_KEYS);
    size_t moved = 0, to_new = 0;
    for (uint64_t k = 0; k < DISRUPTION_KEYS; k++) {
        uint32_t id = owner_id(after, k);
        moved += id != old_owner[k];
        to_new += id == 100;
    }
    double fraction = (double)moved / DISRUPTION_KEYS, ideal = 1.0 / 101;
    printf("maglev: adding 1 node to 100 moved %.4f%% of keys (%.4f%% to the new node, "
           "ideal %.4f%%)\n",
           100 * fraction, 100.0 * (double)to_new / DISRUPTION_KEYS, 100 * ideal);
    fflush(stdout);
    ck_assert_uint_gt(to_new, 0);
    ck_assert_double_le(fraction, 2 * ideal);
    free(old_owner);
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(maglev_table_size)
{
    shmring_nodeset_t *set = test_nodeset(5, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.table_size = 7;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 7);
    ck_assert_uint_eq(info.params.table_size, 7);
    uint32_t slots[5];
    table_slots(snapshot, slots, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_uint_ge(slots[i], 1);
    check_lookup_n(snapshot, 5, 5);
    shmring_snapshot_free(snapshot);

    /* A table smaller than the number of up nodes cannot be built. */
    params.table_size = 3;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    void *buffer = NULL;
    size_t size;
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, &size), SHMRING_ELIMIT);
    ck_assert_ptr_null(buffer);
    /* ... unless enough of them are down. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-0", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-1", SHMRING_STATE_DOWN), 0);
    snapshot = test_snapshot(set);
    shmring_snapshot_free(snapshot);

    /* The default grows with the node count: 100 x up nodes, rounded up to a prime. */
    shmring_nodeset_t *big =
        test_nodeset(700, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    snapshot = test_snapshot(big);
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 131071);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(big);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- ketama basics (the libmemcached comparison is check_ketama_libmemcached) ---- */

START_TEST(ketama_point_counts)
{
    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 1600); /* 160 per equal server */
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);

    /* libmemcached computes in float: for 25 equal servers, 1/25 x 160 / 4 x 25 is
     * 39.999996, so each server gets 39 digests (156 points), not 40. */
    set = test_nodeset(25, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5);
    snapshot = test_snapshot(set);
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 25 * 156);
    shmring_snapshot_free(snapshot);

    /* Weights 1 and 3 of two servers: floor(0.25 x 40 x 2) x 4 = 80 and
     * floor(0.75 x 40 x 2) x 4 = 240. */
    shmring_nodeset_t *two = empty_set(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 160);
    add(two, "a", 1, SHMRING_STATE_UP);
    add(two, "b", 3, SHMRING_STATE_UP);
    add(two, "c", 9, SHMRING_STATE_DOWN);
    snapshot = test_snapshot(two);
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 320);
    ck_assert_uint_eq(info.up_count, 2);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(two);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- determinism ---- */

static shmring_nodeset_t *mixed_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                    int reversed)
{
    shmring_nodeset_t *set = empty_set(algorithm, hash, 40);
    for (int i = 0; i < 25; i++) {
        int n = reversed ? 24 - i : i;
        char name[32], address[32];
        snprintf(name, sizeof(name), "n%d", n * 7919 % 1000);
        snprintf(address, sizeof(address), "192.168.%d.%d:%d", n, n * 3, 11211 + n % 2);
        ck_assert_int_eq(
            shmring_nodeset_add(set, name, address, (uint32_t)(n % 4 + 1),
                                n % 8 == 3 ? SHMRING_STATE_DOWN : SHMRING_STATE_UP, NULL),
            0);
    }
    return set;
}

START_TEST(builds_are_byte_identical)
{
    for (int a = 0; a < 3; a++) {
        for (size_t h = 0; h < COUNT_OF(all_hashes); h++) {
            if (a == SHMRING_ALGORITHM_KETAMA && all_hashes[h] != SHMRING_HASH_MD5)
                continue;
            shmring_nodeset_t *one = mixed_set((shmring_algorithm_t)a, all_hashes[h], 0);
            shmring_nodeset_t *two = mixed_set((shmring_algorithm_t)a, all_hashes[h], 0);
            size_t size1, size2, size3;
            void *first = test_build(one, &size1);
            void *second = test_build(one, &size2);
            void *third = test_build(two, &size3);
            ck_assert_uint_eq(size1, size2);
            ck_assert_uint_eq(size1, size3);
            ck_assert_int_eq(memcmp(first, second, size1), 0);
            ck_assert_int_eq(memcmp(first, third, size1), 0);
            free(first);
            free(second);
            free(third);
            shmring_nodeset_free(one);
            shmring_nodeset_free(two);
        }
    }
}
END_TEST

START_TEST(node_order_does_not_matter)
{
    shmring_algorithm_t algorithm =
        _i < 5 ? SHMRING_ALGORITHM_RING : SHMRING_ALGORITHM_MAGLEV;
    shmring_hash_t hash = all_hashes[_i % 5];
    shmring_nodeset_t *forward = mixed_set(algorithm, hash, 0);
    shmring_nodeset_t *backward = mixed_set(algorithm, hash, 1);
    shmring_snapshot_t *a = test_snapshot(forward);
    shmring_snapshot_t *b = test_snapshot(backward);
    for (uint64_t k = 0; k < 20000; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t x[5], y[5];
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(a, key, len, x, 5), 5);
        EXPECT_INT_EQ(shmring_snapshot_lookup_n(b, key, len, y, 5), 5);
        for (int i = 0; i < 5; i++)
            EXPECT_STR_EQ(x[i].name, y[i].name);
    }
    shmring_snapshot_free(a);
    shmring_snapshot_free(b);
    shmring_nodeset_free(forward);
    shmring_nodeset_free(backward);
}
END_TEST

START_TEST(ring_addresses_do_not_matter)
{
    shmring_nodeset_t *one = empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 50);
    shmring_nodeset_t *two = empty_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 50);
    char name[32], address[32];
    for (int n = 0; n < 20; n++) {
        snprintf(name, sizeof(name), "node-%d", n);
        snprintf(address, sizeof(address), "10.1.1.%d:%d", n, 20000 + n);
        add(one, name, 1, SHMRING_STATE_UP);
        ck_assert_int_eq(
            shmring_nodeset_add(two, name, address, 1, SHMRING_STATE_UP, NULL), 0);
    }
    shmring_snapshot_t *a = test_snapshot(one);
    shmring_snapshot_t *b = test_snapshot(two);
    for (uint64_t k = 0; k < 20000; k++)
        EXPECT_UINT_EQ(owner_id(a, k), owner_id(b, k));
    shmring_snapshot_free(a);
    shmring_snapshot_free(b);
    shmring_nodeset_free(one);
    shmring_nodeset_free(two);
}
END_TEST

static Suite *placement_suite(void)
{
    Suite *s = suite_create("placement");
    TCase *tc = tcase_create("ring_reference");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ring_matches_reference, 0, (int)COUNT_OF(all_hashes));
    tcase_add_test(tc, ring_ties_break_by_name);
    tcase_add_test(tc, ring_of_equal_points);
    suite_add_tcase(s, tc);

    tc = tcase_create("ring_disruption");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ring_add_node_moves_its_share_only);
    tcase_add_test(tc, ring_remove_node_moves_its_keys_only);
    tcase_add_test(tc, ring_weights_scale_shares);
    suite_add_tcase(s, tc);

    tc = tcase_create("down_nodes");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ring_down_nodes_pass_keys_clockwise, 0,
                        (int)COUNT_OF(all_hashes));
    tcase_add_loop_test(tc, down_nodes_take_no_keys, 0, 3);
    suite_add_tcase(s, tc);

    tc = tcase_create("lookups");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, lookup_n_distinct_first_is_lookup, 0, 3);
    tcase_add_loop_test(tc, empty_and_all_down, 0, 3);
    tcase_add_loop_test(tc, lookup_ids_match_single_lookups, 0, 3);
    tcase_add_loop_test(tc, answers_match_point_search, 0, 8);
    suite_add_tcase(s, tc);

    tc = tcase_create("maglev");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, maglev_balance);
    tcase_add_test(tc, maglev_weights);
    tcase_add_test(tc, maglev_add_node_disruption);
    tcase_add_test(tc, maglev_table_size);
    suite_add_tcase(s, tc);

    tc = tcase_create("ketama");
    tcase_add_test(tc, ketama_point_counts);
    suite_add_tcase(s, tc);

    tc = tcase_create("determinism");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, builds_are_byte_identical);
    tcase_add_loop_test(tc, node_order_does_not_matter, 0, 10);
    tcase_add_test(tc, ring_addresses_do_not_matter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_suite());
}
