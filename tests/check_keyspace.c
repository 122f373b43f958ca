/*
 * Tests of lib/keyspace.c: each node's share of the keyspace, and the share that
 * moves between two snapshots.
 *
 * The exact cases are snapshots whose points or maglev table are set by hand, so
 * that the expected share is worked out here from the placement rule alone (a key
 * belongs to the first point at or after its hash; a maglev key to slot
 * floor(hash x T / 2^64)), never by code like the library's. Real node sets are then
 * checked against brute force: the share of many keys whose owner changes must agree
 * with the exact share within a stated statistical bound.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_support.h"

#define TWO_TO_62 (UINT64_C(1) << 62)
#define TWO_TO_63 (UINT64_C(1) << 63)

static const char *const names[] = {"A", "B", "C", "D"};

/* A node set of the first COUNT of `names` (weight 1, up, with an address, which
 * nginx requires) with PARAMS. */
static shmring_nodeset_t *named_set(const shmring_params_t *params, size_t count)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    ck_assert_int_eq(shmring_nodeset_set_params(set, params), 0);
    for (size_t i = 0; i < count; i++) {
        char address[32];
        snprintf(address, sizeof(address), "10.0.0.%zu:11211", i + 1);
        ck_assert_int_eq(
            shmring_nodeset_add(set, names[i], address, 1, SHMRING_STATE_UP, NULL), 0);
    }
    return set;
}

static shmring_params_t params_of(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t vnodes, uint32_t table_size)
{
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = algorithm;
    params.hash = hash;
    params.vnodes = vnodes;
    params.table_size = table_size;
    return params;
}

/* Makes BYTES (edited by hand) a snapshot again: new checksum, then validation. */
static shmring_snapshot_t *sealed(unsigned char *bytes, size_t size)
{
    struct snapshot_header *h = (struct snapshot_header *)(void *)bytes;
    h->checksum = 0;
    h->checksum = XXH3_64bits(bytes, size);
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_snapshot_new(bytes, size, &snapshot), 0);
    free(bytes);
    return snapshot;
}

/*
 * A `ring` or `ketama` snapshot of NODE_COUNT nodes whose sorted points are replaced
 * by the COUNT points VALUES (ascending), point i owned by node OWNERS[i]. The
 * builder's other points become copies of the last one: equal points after the
 * first own nothing, so the ring is exactly the one given.
 */
static shmring_snapshot_t *hand_ring(const shmring_params_t *params, size_t node_count,
                                     const uint64_t *values, const uint32_t *owners,
                                     size_t count)
{
    shmring_nodeset_t *set = named_set(params, node_count);
    size_t size;
    unsigned char *bytes = test_build(set, &size);
    shmring_nodeset_free(set);
    struct snapshot_header *h = (struct snapshot_header *)(void *)bytes;
    ck_assert_uint_ge(h->point_count, count);
    struct snapshot_point *points = (void *)(bytes + h->points.offset);
    for (uint32_t i = 0; i < h->point_count; i++) {
        size_t from = i < count ? i : count - 1;
        points[i].point = values[from];
        points[i].node_index = owners[from];
    }
    /* The bucket index the format requires: bucket b starts at the first point whose
     * top bucket_bits bits are >= b. */
    uint32_t *buckets = (void *)(bytes + h->buckets.offset);
    uint64_t bucket_count = UINT64_C(1) << h->bucket_bits;
    uint32_t i = 0;
    for (uint64_t b = 0; b <= bucket_count; b++) {
        while (i < h->point_count && (points[i].point >> (64 - h->bucket_bits)) < b)
            i++;
        buckets[b] = i;
    }
    /* The bucket answers the format derives from the points (the builder's own
     * derivation: the answers are not what this test is about). */
    uint64_t *answers = (void *)(bytes + h->answers.offset);
    shmring__answers_fill(points, h->point_count, buckets, h->bucket_bits, answers);
    return sealed(bytes, size);
}

/* A maglev snapshot of NODE_COUNT nodes whose table (TABLE_SIZE slots, prime) is
 * OWNERS. */
static shmring_snapshot_t *hand_table(shmring_hash_t hash, size_t node_count,
                                      uint32_t table_size, const uint32_t *owners)
{
    shmring_params_t params = params_of(SHMRING_ALGORITHM_MAGLEV, hash, 160, table_size);
    shmring_nodeset_t *set = named_set(&params, node_count);
    size_t size;
    unsigned char *bytes = test_build(set, &size);
    shmring_nodeset_free(set);
    struct snapshot_header *h = (struct snapshot_header *)(void *)bytes;
    ck_assert_uint_eq(h->table_size, table_size);
    memcpy(bytes + h->table.offset, owners, table_size * sizeof(*owners));
    return sealed(bytes, size);
}

static double moved(const shmring_snapshot_t *before, const shmring_snapshot_t *after)
{
    double share = -1.0;
    ck_assert_int_eq(shmring_snapshot_moved_share(before, after, &share), 0);
    return share;
}

/* ---- shares ---- */

START_TEST(shares_need_room_for_every_node)
{
    shmring_params_t params = params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 4, 0);
    shmring_nodeset_t *set = named_set(&params, 3);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    double shares[4] = {-1, -1, -1, -1};
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, 2), SHMRING_EINVAL);
    for (size_t i = 0; i < COUNT_OF(shares); i++)
        ck_assert(shares[i] == -1.0); /* nothing written */
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, 3), 0);
    ck_assert(shares[3] == -1.0);
    ck_assert_double_eq_tol(shares[0] + shares[1] + shares[2], 1.0, 1e-12);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

/* A at 2^62 owns [0, 2^62] and (3 x 2^62, 2^64): one half; B the other. */
START_TEST(shares_of_hand_built_arcs)
{
    shmring_params_t params = params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 1, 0);
    const uint64_t values[] = {TWO_TO_62, 3 * TWO_TO_62};
    const uint32_t owners[] = {0, 1};
    shmring_snapshot_t *snapshot = hand_ring(&params, 2, values, owners, 2);
    double shares[2];
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, 2), 0);
    ck_assert(shares[0] == 0.5 && shares[1] == 0.5);
    shmring_snapshot_free(snapshot);

    const uint64_t quarter[] = {TWO_TO_62, TWO_TO_63};
    snapshot = hand_ring(&params, 2, quarter, owners, 2);
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, 2), 0);
    ck_assert(shares[0] == 0.75 && shares[1] == 0.25);
    shmring_snapshot_free(snapshot);
}
END_TEST

/* ---- exact moved shares ---- */

/*
 * Before: A at 2^62, B at 3 x 2^62 (halves). After: B moves back to 2^63, so the
 * keys in (2^63, 3 x 2^62] go from B to A: a quarter, exactly. The same for ketama,
 * whose hashes live in the top 32 bits (these points are multiples of 2^32).
 */
START_TEST(ring_arcs_exact)
{
    const shmring_params_t all[] = {
        params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 1, 0),
        params_of(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 160, 0)};
    for (size_t p = 0; p < COUNT_OF(all); p++) {
        const uint64_t halves[] = {TWO_TO_62, 3 * TWO_TO_62};
        const uint64_t quarter[] = {TWO_TO_62, TWO_TO_63};
        const uint32_t owners[] = {0, 1};
        shmring_snapshot_t *before = hand_ring(&all[p], 2, halves, owners, 2);
        shmring_snapshot_t *after = hand_ring(&all[p], 2, quarter, owners, 2);
        ck_assert(moved(before, after) == 0.25);
        ck_assert(moved(after, before) == 0.25);
        ck_assert(moved(before, before) == 0.0);

        /* Owners swapped: every key moves. */
        const uint32_t swapped[] = {1, 0};
        shmring_snapshot_t *other = hand_ring(&all[p], 2, halves, swapped, 2);
        ck_assert(moved(before, other) == 1.0);

        /* Three points: A 2^62, B 2^63, C 3 x 2^62 against A 2^62, C 2^63,
         * B 3 x 2^62: (2^62, 2^63] and (2^63, 3 x 2^62] change hands, a half. */
        const uint64_t thirds[] = {TWO_TO_62, TWO_TO_63, 3 * TWO_TO_62};
        const uint32_t abc[] = {0, 1, 2}, acb[] = {0, 2, 1};
        shmring_snapshot_t *x = hand_ring(&all[p], 3, thirds, abc, 3);
        shmring_snapshot_t *y = hand_ring(&all[p], 3, thirds, acb, 3);
        ck_assert(moved(x, y) == 0.5);
        shmring_snapshot_free(x);
        shmring_snapshot_free(y);
        shmring_snapshot_free(before);
        shmring_snapshot_free(after);
        shmring_snapshot_free(other);
    }
}
END_TEST

/* Maglev tables of one size: the differing slots over the size. */
START_TEST(maglev_slots_exact)
{
    const uint32_t before_table[] = {0, 0, 0, 1, 1};
    const uint32_t after_table[] = {0, 1, 0, 1, 0};
    shmring_snapshot_t *before = hand_table(SHMRING_HASH_XXH3, 2, 5, before_table);
    shmring_snapshot_t *after = hand_table(SHMRING_HASH_XXH3, 2, 5, after_table);
    ck_assert(moved(before, after) == 2.0 / 5.0);
    ck_assert(moved(after, before) == 2.0 / 5.0);
    double shares[2];
    ck_assert_int_eq(shmring_snapshot_shares(before, shares, 2), 0);
    ck_assert(shares[0] == 3.0 / 5.0 && shares[1] == 2.0 / 5.0);
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
}
END_TEST

/*
 * Tables of 2 and 3 slots: slot s of T holds the hashes from ceil(s x 2^64 / T). With
 * [A, B] against [A, A, B], the hashes from 2^63 up to ceil(2 x 2^64 / 3) =
 * 12297829382473034411 go from B to A: 3074457345618258603 of 2^64.
 */
START_TEST(maglev_sizes_differ_exact)
{
    const uint32_t two[] = {0, 1};
    const uint32_t three[] = {0, 0, 1};
    shmring_snapshot_t *before = hand_table(SHMRING_HASH_XXH3, 2, 2, two);
    shmring_snapshot_t *after = hand_table(SHMRING_HASH_XXH3, 2, 3, three);
    ck_assert(moved(before, after) == 3074457345618258603.0 / 18446744073709551616.0);
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
}
END_TEST

/*
 * A ring and a maglev table that hash keys alike (xxh3): ring A 2^62, B 3 x 2^62
 * against maglev [A, B] (A below 2^63). The hashes 2^62 + 1 .. 2^63 - 1 go from B
 * to A and 3 x 2^62 + 1 .. 2^64 - 1 from A to B: 2^63 - 2 of 2^64, which is 1/2 in a
 * double.
 */
START_TEST(ring_against_maglev_exact)
{
    shmring_params_t params = params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 1, 0);
    const uint64_t halves[] = {TWO_TO_62, 3 * TWO_TO_62};
    const uint32_t owners[] = {0, 1};
    shmring_snapshot_t *ring = hand_ring(&params, 2, halves, owners, 2);
    const uint32_t table[] = {0, 1};
    shmring_snapshot_t *maglev = hand_table(SHMRING_HASH_XXH3, 2, 2, table);
    ck_assert(moved(ring, maglev) == 0.5);
    ck_assert(moved(maglev, ring) == 0.5);
    /* A table that gives every key to A: exactly B's arc (2^62, 3 x 2^62] moves. */
    const uint32_t all_a[] = {0, 0};
    shmring_snapshot_t *only_a = hand_table(SHMRING_HASH_XXH3, 2, 2, all_a);
    ck_assert(moved(ring, only_a) == 0.5);
    shmring_snapshot_free(ring);
    shmring_snapshot_free(maglev);
    shmring_snapshot_free(only_a);
}
END_TEST

/*
 * Different key hashes give a key two unrelated places: it stays with the chance
 * that both pick the same node. Halves against halves: 1 - (1/4 + 1/4) = 1/2; halves
 * against A alone: 1 - 1/2 = 1/2; a node only one side has adds nothing.
 */
START_TEST(different_hashes_by_chance)
{
    shmring_params_t xxh3 = params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 1, 0);
    shmring_params_t md5 = params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_MD5, 1, 0);
    const uint64_t halves[] = {TWO_TO_62, 3 * TWO_TO_62};
    const uint32_t owners[] = {0, 1};
    shmring_snapshot_t *a = hand_ring(&xxh3, 2, halves, owners, 2);
    shmring_snapshot_t *b = hand_ring(&md5, 2, halves, owners, 2);
    ck_assert(moved(a, b) == 0.5);
    const uint32_t all_a[] = {0, 0};
    shmring_snapshot_t *only_a = hand_table(SHMRING_HASH_MD5, 2, 2, all_a);
    ck_assert(moved(a, only_a) == 0.5);
    /* Ketama hashes keys its own way, whatever the other's hash. */
    shmring_params_t ketama =
        params_of(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 160, 0);
    const uint32_t to_c[] = {2, 2};
    shmring_snapshot_t *c = hand_ring(&ketama, 3, halves, to_c, 2);
    ck_assert(moved(b, c) == 1.0);
    shmring_snapshot_free(a);
    shmring_snapshot_free(b);
    shmring_snapshot_free(only_a);
    shmring_snapshot_free(c);
}
END_TEST

/*
 * Which key hashes are one: the algorithms' kinds of key hash decide, with the hash
 * where the kind reads it. Each pair is halves (A 2^62, B 3 x 2^62) against a quarter
 * (A 2^62, B 2^63): compared piece by piece, (2^63, 3 x 2^62] moves, 1/4; by chance,
 * 1 - (1/2 x 3/4 + 1/2 x 1/4) = 1/2. Halves against halves: 0 by pieces, 1/2 by
 * chance. Every value is exact in a double.
 */
START_TEST(key_hash_kinds_decide)
{
    static const struct {
        shmring_algorithm_t before_algorithm;
        shmring_hash_t before_hash;
        shmring_algorithm_t after_algorithm;
        shmring_hash_t after_hash;
        bool same; /* one key hash: compared piece by piece */
    } pairs[] = {
        /* 64 bits of the MD5 against its first word in the top half. */
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_MD5, SHMRING_ALGORITHM_LIBKETAMA,
         SHMRING_HASH_MD5, false},
        {SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MD5, SHMRING_ALGORITHM_KETAMA,
         SHMRING_HASH_MD5, false},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, SHMRING_ALGORITHM_LIBKETAMA,
         SHMRING_HASH_MD5, true},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, SHMRING_ALGORITHM_RING,
         SHMRING_HASH_MD5, false},
        /* nutcracker's and npm hashring's md5 are ketama's word. */
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_MD5, SHMRING_ALGORITHM_KETAMA,
         SHMRING_HASH_MD5, true},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, SHMRING_ALGORITHM_LIBKETAMA,
         SHMRING_HASH_MD5, true},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_SHA1, SHMRING_ALGORITHM_KETAMA,
         SHMRING_HASH_MD5, false},
        /* spymemcached's md5 is ketama's for every key that is UTF-8. */
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_MD5, SHMRING_ALGORITHM_KETAMA,
         SHMRING_HASH_MD5, true},
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_NATIVE, SHMRING_ALGORITHM_KETAMA,
         SHMRING_HASH_MD5, false},
        /* zlib's CRC-32 in the top half, under four names. */
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, SHMRING_ALGORITHM_NGINX,
         SHMRING_HASH_CRC32, true},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_CRC32A, SHMRING_ALGORITHM_NGINX,
         SHMRING_HASH_CRC32, true},
        {SHMRING_ALGORITHM_HAPROXY, SHMRING_HASH_CRC32, SHMRING_ALGORITHM_RING,
         SHMRING_HASH_CRC32, true},
        {SHMRING_ALGORITHM_HAPROXY, SHMRING_HASH_CRC32_AVALANCHE, SHMRING_ALGORITHM_NGINX,
         SHMRING_HASH_CRC32, false},
    };
    const uint64_t halves[] = {TWO_TO_62, 3 * TWO_TO_62};
    const uint64_t quarter[] = {TWO_TO_62, TWO_TO_63};
    const uint32_t owners[] = {0, 1};
    for (size_t i = 0; i < COUNT_OF(pairs); i++) {
        shmring_params_t x =
            params_of(pairs[i].before_algorithm, pairs[i].before_hash, 160, 0);
        shmring_params_t y =
            params_of(pairs[i].after_algorithm, pairs[i].after_hash, 160, 0);
        shmring_snapshot_t *x_halves =
            pairs[i].before_algorithm == SHMRING_ALGORITHM_MAGLEV
                ? hand_table(x.hash, 2, 2, owners)
                : hand_ring(&x, 2, halves, owners, 2);
        shmring_snapshot_t *y_halves = hand_ring(&y, 2, halves, owners, 2);
        shmring_snapshot_t *y_quarter = hand_ring(&y, 2, quarter, owners, 2);
        double expected_halves = pairs[i].same ? 0.0 : 0.5;
        double expected_quarter = pairs[i].same ? 0.25 : 0.5;
        ck_assert_msg(moved(x_halves, y_halves) == expected_halves &&
                          moved(y_halves, x_halves) == expected_halves &&
                          moved(x_halves, y_quarter) == expected_quarter &&
                          moved(y_quarter, x_halves) == expected_quarter,
                      "%s/%s against %s/%s: %.17g and %.17g",
                      shmring_algorithm_name(pairs[i].before_algorithm),
                      shmring_hash_name(pairs[i].before_hash),
                      shmring_algorithm_name(pairs[i].after_algorithm),
                      shmring_hash_name(pairs[i].after_hash), moved(x_halves, y_halves),
                      moved(x_halves, y_quarter));
        shmring_snapshot_free(x_halves);
        shmring_snapshot_free(y_halves);
        shmring_snapshot_free(y_quarter);
    }
}
END_TEST

/*
 * libmemcached's crc32 (twemproxy's and spymemcached's) keeps 15 bits of the CRC-32,
 * so keys hash to m x 2^32 for m below 2^15, all below 2^47: a piece holds the keys
 * of the multiples it covers, whatever its length.
 */
START_TEST(narrow_key_hash_exact)
{
    const uint32_t owners[] = {0, 1};
    /* A at 2^13 x 2^32 owns m <= 2^13 and m > 2^14: 3 x 2^13 of 2^15; B the rest. */
    const uint64_t narrow[] = {UINT64_C(1) << 45, UINT64_C(1) << 46};
    /* B back at 3 x 2^12 x 2^32: B gives A m in (3 x 2^12, 2^14], 2^12 of 2^15. */
    const uint64_t narrower[] = {UINT64_C(1) << 45, UINT64_C(3) << 44};
    shmring_params_t spymemcached =
        params_of(SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_CRC32, 160, 0);
    shmring_params_t twemproxy =
        params_of(SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_CRC32, 160, 0);
    shmring_snapshot_t *before = hand_ring(&spymemcached, 2, narrow, owners, 2);
    shmring_snapshot_t *after = hand_ring(&spymemcached, 2, narrower, owners, 2);
    shmring_snapshot_t *other = hand_ring(&twemproxy, 2, narrower, owners, 2);
    double shares[2];
    ck_assert_int_eq(shmring_snapshot_shares(before, shares, 2), 0);
    ck_assert(shares[0] == 0.75 && shares[1] == 0.25);
    ck_assert(moved(before, after) == 0.125);
    /* twemproxy's crc32 is the same function: compared piece by piece. */
    ck_assert(moved(before, other) == 0.125);

    /* Points above 2^47 leave every key to the first point: A. */
    const uint64_t halves[] = {TWO_TO_62, 3 * TWO_TO_62};
    const uint64_t quarter[] = {TWO_TO_62, TWO_TO_63};
    shmring_snapshot_t *wide = hand_ring(&twemproxy, 2, halves, owners, 2);
    ck_assert_int_eq(shmring_snapshot_shares(wide, shares, 2), 0);
    ck_assert(shares[0] == 1.0 && shares[1] == 0.0);
    /* Against ring's crc32, zlib's CRC-32, by chance: B's 1/4 of a quarter ring
     * moves, and B's 1/2 of halves. */
    shmring_params_t ring = params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, 1, 0);
    shmring_snapshot_t *ring_quarter = hand_ring(&ring, 2, quarter, owners, 2);
    shmring_snapshot_t *ring_halves = hand_ring(&ring, 2, halves, owners, 2);
    ck_assert(moved(wide, ring_quarter) == 0.25);
    ck_assert(moved(ring_halves, wide) == 0.5);
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
    shmring_snapshot_free(other);
    shmring_snapshot_free(wide);
    shmring_snapshot_free(ring_quarter);
    shmring_snapshot_free(ring_halves);
}
END_TEST

/* Owners are compared by name: ids and node-set order do not count. (Addresses
 * place ketama's points, as libmemcached's do, so they stay the same here.) */
START_TEST(nodes_matched_by_name)
{
    for (int a = 0; a < 3; a++) {
        shmring_params_t params = params_of(
            (shmring_algorithm_t)a, test_usual_hash((shmring_algorithm_t)a), 40, 0);
        shmring_nodeset_t *forward, *backward, *renamed;
        ck_assert_int_eq(shmring_nodeset_new(&forward), 0);
        ck_assert_int_eq(shmring_nodeset_new(&backward), 0);
        ck_assert_int_eq(shmring_nodeset_new(&renamed), 0);
        ck_assert_int_eq(shmring_nodeset_set_params(forward, &params), 0);
        ck_assert_int_eq(shmring_nodeset_set_params(backward, &params), 0);
        ck_assert_int_eq(shmring_nodeset_set_params(renamed, &params), 0);
        /* A spare node first, so that the ids of the same names differ. */
        ck_assert_int_eq(
            shmring_nodeset_add(backward, "spare", NULL, 1, SHMRING_STATE_DOWN, NULL), 0);
        for (int i = 0; i < 20; i++) {
            char name[16], other[16];
            snprintf(name, sizeof(name), "node-%d", i);
            snprintf(other, sizeof(other), "node-%d", 19 - i);
            ck_assert_int_eq(
                shmring_nodeset_add(forward, name, NULL, 1, SHMRING_STATE_UP, NULL), 0);
            ck_assert_int_eq(
                shmring_nodeset_add(backward, other, NULL, 1, SHMRING_STATE_UP, NULL), 0);
            snprintf(name, sizeof(name), "other-%d", i);
            ck_assert_int_eq(
                shmring_nodeset_add(renamed, name, NULL, 1, SHMRING_STATE_UP, NULL), 0);
        }
        shmring_snapshot_t *x = test_snapshot(forward), *y = test_snapshot(backward);
        shmring_snapshot_t *z = test_snapshot(renamed);
        ck_assert(moved(x, y) == 0.0);
        ck_assert(moved(y, x) == 0.0);
        ck_assert(moved(x, z) == 1.0);
        shmring_snapshot_free(x);
        shmring_snapshot_free(y);
        shmring_snapshot_free(z);
        shmring_nodeset_free(forward);
        shmring_nodeset_free(backward);
        shmring_nodeset_free(renamed);
    }
}
END_TEST

/* Keys that only one side can place all move; keys neither can place stay. */
START_TEST(nothing_to_place)
{
    shmring_params_t params = params_of(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 4, 0);
    shmring_nodeset_t *set = named_set(&params, 2);
    shmring_snapshot_t *up = test_snapshot(set);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "A", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "B", SHMRING_STATE_DOWN), 0);
    shmring_snapshot_t *down = test_snapshot(set);
    shmring_nodeset_free(set);
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_snapshot_t *empty = test_snapshot(set);
    shmring_nodeset_free(set);

    ck_assert(moved(NULL, up) == 1.0);
    ck_assert(moved(up, NULL) == 1.0);
    ck_assert(moved(up, down) == 1.0);
    ck_assert(moved(empty, up) == 1.0);
    ck_assert(moved(NULL, NULL) == 0.0);
    ck_assert(moved(NULL, empty) == 0.0);
    ck_assert(moved(down, empty) == 0.0);
    shmring_snapshot_free(up);
    shmring_snapshot_free(down);
    shmring_snapshot_free(empty);
}
END_TEST

/* ---- brute force ---- */

#define SAMPLED_KEYS 200000

/* The share of SAMPLED_KEYS keys whose owner (by name) differs. */
static double sampled_moved(const shmring_snapshot_t *before,
                            const shmring_snapshot_t *after)
{
    unsigned moved_keys = 0;
    for (uint64_t k = 0; k < SAMPLED_KEYS; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t old, now;
        EXPECT_INT_EQ(shmring_snapshot_lookup(before, key, len, &old), 0);
        EXPECT_INT_EQ(shmring_snapshot_lookup(after, key, len, &now), 0);
        moved_keys += strcmp(old.name, now.name) != 0;
    }
    return (double)moved_keys / SAMPLED_KEYS;
}

/*
 * The exact share against the sampled one. A sample of N keys with independent,
 * uniform hashes moves a binomial share of mean p and standard deviation
 * sqrt(p (1 - p) / N); 6 deviations (plus 1/N for the discreteness) are crossed
 * with a probability below 2e-9, so a wider gap means the exact share is wrong. The
 * keys are fixed, so each run gives the same sample.
 */
static void check_against_sample(const shmring_snapshot_t *before,
                                 const shmring_snapshot_t *after, const char *what)
{
    double exact = moved(before, after);
    double sampled = sampled_moved(before, after);
    double bound = 6.0 * sqrt(exact * (1.0 - exact) / SAMPLED_KEYS) + 1.0 / SAMPLED_KEYS;
    printf("keyspace: %s: exact %.5f%%, sampled %.5f%% (bound %.5f%%)\n", what,
           100.0 * exact, 100.0 * sampled, 100.0 * bound);
    fflush(stdout);
    ck_assert_msg(fabs(exact - sampled) <= bound, "%s: exact %.6f, sampled %.6f", what,
                  exact, sampled);
}

static shmring_snapshot_t *changed(shmring_nodeset_t *set, const char *what)
{
    int err = 0;
    if (strcmp(what, "add") == 0)
        err = shmring_nodeset_add(set, "extra", NULL, 1, SHMRING_STATE_UP, NULL);
    else if (strcmp(what, "add an address") == 0)
        err = shmring_nodeset_add(set, "extra", "10.0.1.0:11211", 1, SHMRING_STATE_UP,
                                  NULL);
    else if (strcmp(what, "remove") == 0)
        err = shmring_nodeset_remove(set, "node-0");
    else if (strcmp(what, "down") == 0)
        err = shmring_nodeset_set_state(set, "node-1", SHMRING_STATE_DOWN);
    else if (strcmp(what, "weight") == 0)
        err = shmring_nodeset_set_weight(set, "node-2", 5);
    ck_assert_int_eq(err, 0);
    return test_snapshot(set);
}

START_TEST(agrees_with_sampled_keys)
{
    static const char *const changes[] = {"add", "remove", "down", "weight"};
    for (int a = 0; a < 3; a++) {
        shmring_hash_t hash = test_usual_hash((shmring_algorithm_t)a);
        for (size_t c = 0; c < COUNT_OF(changes); c++) {
            shmring_nodeset_t *set = test_nodeset(50, (shmring_algorithm_t)a, hash);
            shmring_snapshot_t *before = test_snapshot(set);
            shmring_snapshot_t *after = changed(set, changes[c]);
            char what[64];
            snprintf(what, sizeof(what), "%s, 50 nodes, %s",
                     shmring_algorithm_name((shmring_algorithm_t)a), changes[c]);
            check_against_sample(before, after, what);
            shmring_snapshot_free(before);
            shmring_snapshot_free(after);
            shmring_nodeset_free(set);
        }
    }
}
END_TEST

/* Unequal maglev tables, ring against maglev, and another hash (by chance). */
START_TEST(agrees_with_sampled_keys_across_shapes)
{
    shmring_nodeset_t *set =
        test_nodeset(20, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    shmring_snapshot_t *small = test_snapshot(set);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.table_size = 4099;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    shmring_snapshot_t *large = test_snapshot(set);
    params.algorithm = SHMRING_ALGORITHM_RING;
    params.table_size = 0;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    shmring_snapshot_t *ring = test_snapshot(set);
    params.hash = SHMRING_HASH_MURMUR3;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    shmring_snapshot_t *murmur = test_snapshot(set);

    check_against_sample(small, large, "maglev 2003 slots -> 4099 slots");
    check_against_sample(large, ring, "maglev -> ring, both xxh3");
    check_against_sample(ring, murmur, "ring xxh3 -> ring murmur3");
    shmring_snapshot_free(small);
    shmring_snapshot_free(large);
    shmring_snapshot_free(ring);
    shmring_snapshot_free(murmur);
    shmring_nodeset_free(set);
}
END_TEST

/*
 * Algorithms that hash keys alike or not, by their kinds of key hash: the exact share
 * (compared piece by piece) or the share by chance (unrelated hashes) each agrees
 * with the keys. Ring's md5 against libketama's is one hash parameter for two
 * functions: compared piece by piece, it would say 91.12% where 89.83% of these keys
 * move, beyond the bound.
 */
START_TEST(agrees_with_sampled_keys_across_key_hashes)
{
    static const struct {
        shmring_algorithm_t before_algorithm;
        shmring_hash_t before_hash;
        shmring_algorithm_t after_algorithm;
        shmring_hash_t after_hash;
    } pairs[] = {
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_MD5, SHMRING_ALGORITHM_LIBKETAMA,
         SHMRING_HASH_MD5},
        {SHMRING_ALGORITHM_LIBKETAMA, SHMRING_HASH_MD5, SHMRING_ALGORITHM_RING,
         SHMRING_HASH_MD5},
        {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, SHMRING_ALGORITHM_LIBKETAMA,
         SHMRING_HASH_MD5},
        {SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_MD5, SHMRING_ALGORITHM_KETAMA,
         SHMRING_HASH_MD5},
        {SHMRING_ALGORITHM_HASHRING, SHMRING_HASH_MD5, SHMRING_ALGORITHM_KETAMA,
         SHMRING_HASH_MD5},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_CRC32, SHMRING_ALGORITHM_NGINX,
         SHMRING_HASH_CRC32},
        {SHMRING_ALGORITHM_SPYMEMCACHED, SHMRING_HASH_MD5, SHMRING_ALGORITHM_LIBKETAMA,
         SHMRING_HASH_MD5},
        {SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, SHMRING_ALGORITHM_RING,
         SHMRING_HASH_MD5},
    };
    for (size_t i = 0; i < COUNT_OF(pairs); i++) {
        shmring_nodeset_t *x =
            test_nodeset(10, pairs[i].before_algorithm, pairs[i].before_hash);
        shmring_nodeset_t *y =
            test_nodeset(10, pairs[i].after_algorithm, pairs[i].after_hash);
        shmring_snapshot_t *before = test_snapshot(x);
        shmring_snapshot_t *after = test_snapshot(y);
        char what[96];
        snprintf(what, sizeof(what), "%s %s -> %s %s, 10 nodes",
                 shmring_algorithm_name(pairs[i].before_algorithm),
                 shmring_hash_name(pairs[i].before_hash),
                 shmring_algorithm_name(pairs[i].after_algorithm),
                 shmring_hash_name(pairs[i].after_hash));
        check_against_sample(before, after, what);
        shmring_snapshot_free(before);
        shmring_snapshot_free(after);
        shmring_nodeset_free(x);
        shmring_nodeset_free(y);
    }
}
END_TEST

/* libmemcached's 15-bit crc32: spymemcached's points are hashed so too, twemproxy's
 * by MD5 (so every key goes to the first point's node). Both need addresses, so the
 * added node has one. */
START_TEST(agrees_with_sampled_keys_narrow_key_hash)
{
    static const char *const changes[] = {"add an address", "remove", "down", "weight"};
    static const shmring_algorithm_t algorithms[] = {SHMRING_ALGORITHM_SPYMEMCACHED,
                                                     SHMRING_ALGORITHM_TWEMPROXY};
    for (size_t a = 0; a < COUNT_OF(algorithms); a++) {
        for (size_t c = 0; c < COUNT_OF(changes); c++) {
            shmring_nodeset_t *set = test_nodeset(10, algorithms[a], SHMRING_HASH_CRC32);
            shmring_snapshot_t *before = test_snapshot(set);
            shmring_snapshot_t *after = changed(set, changes[c]);
            char what[64];
            snprintf(what, sizeof(what), "%s crc32, 10 nodes, %s",
                     shmring_algorithm_name(algorithms[a]), changes[c]);
            check_against_sample(before, after, what);
            shmring_snapshot_free(before);
            shmring_snapshot_free(after);
            shmring_nodeset_free(set);
        }
    }
    /* twemproxy's node of every key down: every key moves. */
    shmring_nodeset_t *set =
        test_nodeset(10, SHMRING_ALGORITHM_TWEMPROXY, SHMRING_HASH_CRC32);
    shmring_snapshot_t *before = test_snapshot(set);
    shmring_node_t owner;
    ck_assert_int_eq(shmring_snapshot_lookup(before, "key:0", 5, &owner), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, owner.name, SHMRING_STATE_DOWN), 0);
    shmring_snapshot_t *after = test_snapshot(set);
    ck_assert(moved(before, after) == 1.0);
    check_against_sample(before, after, "twemproxy crc32, 10 nodes, its node down");
    shmring_snapshot_free(before);
    shmring_snapshot_free(after);
    shmring_nodeset_free(set);
}
END_TEST

/* Adding one node to a ring moves exactly the keys it now owns: its share. */
START_TEST(added_node_takes_its_share)
{
    for (int a = 0; a < 3; a += 2) { /* ring and ketama */
        shmring_hash_t hash = test_usual_hash((shmring_algorithm_t)a);
        shmring_nodeset_t *set = test_nodeset(30, (shmring_algorithm_t)a, hash);
        shmring_snapshot_t *before = test_snapshot(set);
        shmring_snapshot_t *after = changed(set, "add");
        double shares[31];
        ck_assert_int_eq(shmring_snapshot_shares(after, shares, 31), 0);
        ck_assert_double_eq_tol(moved(before, after), shares[30], 1e-12);
        ck_assert_double_eq_tol(moved(after, before), shares[30], 1e-12);
        shmring_snapshot_free(before);
        shmring_snapshot_free(after);
        shmring_nodeset_free(set);
    }
}
END_TEST

static Suite *keyspace_suite(void)
{
    Suite *s = suite_create("keyspace");
    TEST_CASE(s, "shares", shares_need_room_for_every_node, shares_of_hand_built_arcs);
    TEST_CASE(s, "exact", ring_arcs_exact, maglev_slots_exact, maglev_sizes_differ_exact,
              ring_against_maglev_exact, different_hashes_by_chance,
              key_hash_kinds_decide, narrow_key_hash_exact, nodes_matched_by_name,
              nothing_to_place);
    TEST_CASE(s, "sampled", agrees_with_sampled_keys,
              agrees_with_sampled_keys_across_shapes,
              agrees_with_sampled_keys_across_key_hashes,
              agrees_with_sampled_keys_narrow_key_hash, added_node_takes_its_share);
    return s;
}

int main(void)
{
    return test_run_suite(keyspace_suite());
}
