/*
 * Tests of `jump` (lib/placement_jump.c). The expected values were computed once with
 * Debian's libguava-java 31.1 on openjdk 17:
 * Hashing.murmur3_128().hashString(key, UTF_8).padToLong() and
 * Hashing.consistentHash(that, n), and consistentHash(long, n) for chosen longs.
 * tests/peers/test_guava.py checks many more against Guava itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "snapshot_internal.h"
#include "test_placement.h"
#include "test_support.h"

/* The bucket counts of the expected values. */
static const uint32_t counts[] = {1, 2, 7, 100, 500, 1000};
#define COUNTS (sizeof(counts) / sizeof(counts[0]))

static const struct {
    const char *key;
    uint64_t hash;
    uint32_t bucket[COUNTS];
} keys[] = {
    {"", 0x0000000000000000u, {0, 0, 0, 0, 0, 0}},
    {"foo", 0xe271865701f54561u, {0, 0, 3, 74, 177, 872}},
    {"bar", 0x923658dbfd3ae604u, {0, 1, 2, 94, 355, 355}},
    {"user:1001", 0x3e66fcf0dae4c87cu, {0, 0, 6, 95, 95, 561}},
    {"\xc3\xa9t\xc3\xa9", 0x53bf5f6c9b9d9a14u, {0, 1, 6, 57, 215, 215}},
    {"\xe2\x82\xac", 0x59e3303a2fdd9555u, {0, 1, 1, 1, 231, 860}},
    {"\xf0\x9f\x98\x80x", 0x1dadc58a230958deu, {0, 0, 2, 57, 298, 298}},
    {"0123456789abcdef0123456789", 0x849a02423668b6ccu, {0, 1, 5, 38, 363, 363}},
};

/* consistentHash(long, n) of chosen longs. The last one's first generator step gives
 * the state 2^64 - 1, whose nextDouble() is -1.0 (Java's int wraps): bucket 0. */
static const struct {
    uint64_t input;
    uint32_t bucket[COUNTS];
} longs[] = {
    {0x0000000000000000u, {0, 0, 0, 0, 0, 0}},
    {0x0000000000000001u, {0, 0, 6, 55, 493, 549}},
    {0xffffffffffffffffu, {0, 1, 2, 92, 313, 313}},
    {0x8000000000000000u, {0, 1, 5, 84, 453, 453}},
    {0x7fffffffffffffffu, {0, 0, 2, 97, 286, 972}},
    {0x40332ff0ccc62756u, {0, 0, 0, 0, 0, 0}},
};

static shmring_snapshot_t *jump_snapshot(uint32_t count)
{
    shmring_nodeset_t *set =
        test_nodeset(count, SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3_128);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_nodeset_free(set);
    return snapshot;
}

START_TEST(key_hash_is_guavas_pad_to_long)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        ck_assert_uint_eq(shmring__key_hash_any(SHMRING_ALGORITHM_JUMP,
                                                SHMRING_HASH_MURMUR3_128, keys[i].key,
                                                strlen(keys[i].key)),
                          keys[i].hash);
}
END_TEST

START_TEST(buckets_are_guavas)
{
    for (size_t c = 0; c < COUNTS; c++) {
        shmring_snapshot_t *snapshot = jump_snapshot(counts[c]);
        const void *buffer = shmring_snapshot_data(snapshot, NULL);
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            shmring_node_t node;
            ck_assert_int_eq(shmring_snapshot_lookup(snapshot, keys[i].key,
                                                     strlen(keys[i].key), &node),
                             0);
            /* test_nodeset()'s node i is "node-i", in node-set order. */
            ck_assert_str_eq(node.name, test_fmt("node-%u", keys[i].bucket[c]));
        }
        const struct placement_algorithm *jump =
            shmring__algorithm(SHMRING_ALGORITHM_JUMP);
        for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
            uint32_t owner;
            ck_assert_uint_eq(jump->rank(buffer, NULL, 0, longs[i].input, &owner, 1), 1);
            ck_assert_msg(owner == longs[i].bucket[c], "input %016llx, %u buckets: %u",
                          (unsigned long long)longs[i].input, counts[c], owner);
        }
        shmring_snapshot_free(snapshot);
    }
}
END_TEST

/* Candidates: the owner, then its buckets while the ring was smaller, then the
 * buckets after it; all distinct, every node in the end. */
START_TEST(candidates)
{
    shmring_snapshot_t *snapshot = jump_snapshot(7);
    const void *buffer = shmring_snapshot_data(snapshot, NULL);
    const struct placement_algorithm *jump = shmring__algorithm(SHMRING_ALGORITHM_JUMP);
    /* "foo" is in bucket 3 of 7; Guava's consistentHash(foo, 3) is 2 and
     * consistentHash(foo, 2) is 0; then 4 to 6, then 1. */
    static const uint32_t order[7] = {3, 2, 0, 4, 5, 6, 1};
    uint32_t found[7];
    ck_assert_uint_eq(jump->rank(buffer, NULL, 0, keys[1].hash, found, 7), 7);
    for (size_t i = 0; i < 7; i++)
        ck_assert_uint_eq(found[i], order[i]);
    test_check_lookup_n(snapshot, 3, 3);
    test_check_lookup_n(snapshot, 9, 7);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(no_weights_no_down_nodes)
{
    shmring_nodeset_t *set =
        test_nodeset(3, SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3_128);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "node-1", 2), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_EUNWEIGHTED);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "node-1", 1), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-2", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_EJUMPDOWN);
    /* Even with no node up. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-0", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-1", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(test_build_error(set), SHMRING_EJUMPDOWN);
    shmring_nodeset_free(set);
    shmring_params_t params = {
        .algorithm = SHMRING_ALGORITHM_JUMP, .hash = SHMRING_HASH_MURMUR3, .vnodes = 160};
    ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADHASH);
}
END_TEST

/* A publication over a jump version may add nodes at the end, drop the last ones or
 * put a new node in the bucket of one it drops; moving a node to another bucket is
 * refused and publishes nothing. */
START_TEST(no_renumbering)
{
    const char *ring = test_ring_name("jump");
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    shmring_nodeset_t *set =
        test_nodeset(4, SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3_128);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    /* Removing the last node, then adding nodes at the end: allowed. */
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-3"), 0);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "node-9", "10.0.0.9:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "node-8", "10.0.0.8:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    uint64_t generation = shmring_writer_generation(w);
    /* Removing a node in the middle renumbers the ones after it. */
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-1"), 0);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), SHMRING_ERENUMBER);
    ck_assert_uint_eq(shmring_writer_generation(w), generation);
    shmring_nodeset_free(set);
    /* So does a new order of the same nodes. */
    ck_assert_int_eq(shmring_writer_nodeset(w, &set), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-0"), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "node-0", "10.0.0.0:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), SHMRING_ERENUMBER);
    ck_assert_uint_eq(shmring_writer_generation(w), generation);
    shmring_nodeset_free(set);
    /* A new node may take the bucket of one it replaces. */
    set = test_nodeset(3, SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3_128);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    shmring_nodeset_free(set);
    set = test_parse_json("{\"algorithm\": \"jump\", \"hash\": \"murmur3_128\", "
                          "\"nodes\": [{\"name\": \"node-0\", \"address\": \"a:1\"}, "
                          "{\"name\": \"spare\", \"address\": \"b:1\"}, "
                          "{\"name\": \"node-2\", \"address\": \"c:1\"}]}",
                          NULL);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    shmring_nodeset_free(set);
    /* Another algorithm may follow; jump may follow another. */
    set = test_nodeset(2, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    shmring_nodeset_free(set);
    set = test_nodeset(1, SHMRING_ALGORITHM_JUMP, SHMRING_HASH_MURMUR3_128);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    shmring_nodeset_free(set);
    shmring_writer_close(w);
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
}
END_TEST

/* Jump's moved share: adding the n+1st of n + 1 nodes moves 1 / (n + 1). */
START_TEST(shares_and_moves)
{
    shmring_snapshot_t *four = jump_snapshot(4);
    shmring_snapshot_t *five = jump_snapshot(5);
    double shares[5];
    ck_assert_int_eq(shmring_snapshot_shares(four, shares, 5), 0);
    for (size_t i = 0; i < 4; i++)
        ck_assert_double_eq(shares[i], 0.25);
    double moved;
    ck_assert_int_eq(shmring_snapshot_moved_share(four, five, &moved), 0);
    ck_assert_double_eq(moved, 1.0 - 4.0 / 5.0);
    ck_assert_int_eq(shmring_snapshot_moved_share(five, five, &moved), 0);
    ck_assert_double_eq(moved, 0.0);
    shmring_snapshot_free(four);
    shmring_snapshot_free(five);
}
END_TEST

static Suite *jump_suite(void)
{
    Suite *s = suite_create("placement_jump");
    TEST_CASE(s, "guava", key_hash_is_guavas_pad_to_long, buckets_are_guavas);
    TEST_CASE(s, "core", candidates, shares_and_moves);
    TEST_CASE(s, "errors", no_weights_no_down_nodes, no_renumbering);
    return s;
}

int main(void)
{
    return test_run_suite(jump_suite());
}
