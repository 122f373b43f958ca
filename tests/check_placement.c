/*
 * Tests of the table of placement algorithms (lib/algorithm.c) and of what every
 * algorithm keeps: each row is complete and named uniquely, and found by its value and
 * its name; builds are byte-identical for the same node set, whatever the algorithm
 * and hash, the order nodes were added in does not change any lookup, and ring and
 * maglev hash a node's hash_key in place of its name.
 * Each algorithm has its own program, check_placement_<algorithm>.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithm_internal.h"
#include "test_expect.h"
#include "test_placement.h"
#include "test_support.h"

static shmring_nodeset_t *mixed_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                    int reversed)
{
    shmring_nodeset_t *set = test_empty_set(algorithm, hash, 40);
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
    /* Every algorithm: ring and maglev with each of their hashes, the peer
     * algorithms with their peer's hash. */
    for (int a = 0; a <= SHMRING_ALGORITHM_LIBKETAMA; a++) {
        shmring_algorithm_t algorithm = (shmring_algorithm_t)a;
        bool own_hashes = a == SHMRING_ALGORITHM_RING || a == SHMRING_ALGORITHM_MAGLEV;
        for (size_t h = 0; h < (own_hashes ? COUNT_OF(test_ring_hashes) : 1); h++) {
            shmring_hash_t hash = own_hashes ? test_ring_hashes[h]
                                             : shmring_algorithm_default_hash(algorithm);
            shmring_nodeset_t *one = mixed_set(algorithm, hash, 0);
            shmring_nodeset_t *two = mixed_set(algorithm, hash, 0);
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
    shmring_hash_t hash = test_ring_hashes[_i % 5];
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
/*
 * A node set of 12 nodes named PREFIX-i, each with hash_key "key-i" when HASH_KEYS
 * (and an address of its own), listed forwards or backwards.
 */
static shmring_nodeset_t *keyed_set(shmring_algorithm_t algorithm, const char *prefix,
                                    bool hash_keys, bool backwards)
{
    shmring_nodeset_t *set = test_empty_set(algorithm, SHMRING_HASH_XXH3, 40);
    for (int i = 0; i < 12; i++) {
        int n = backwards ? 11 - i : i;
        char name[32], address[48], key[16];
        snprintf(name, sizeof(name), "%s-%d", prefix, n);
        snprintf(address, sizeof(address), "%s.example:%d", prefix, 7000 + n);
        snprintf(key, sizeof(key), "key-%d", n);
        ck_assert_int_eq(shmring_nodeset_add(set, name, address, 1 + (uint32_t)n % 3,
                                             SHMRING_STATE_UP, NULL),
                         0);
        if (hash_keys)
            ck_assert_int_eq(shmring_nodeset_set_hash_key(set, name, key), 0);
    }
    return set;
}

/* The number after the last '-' of NAME: which of keyed_set()'s nodes it is. */
static int node_number(const char *name)
{
    return atoi(strrchr(name, '-') + 1);
}

/* How many of 20,000 keys two snapshots send to different node numbers. */
static uint32_t keys_moved(const shmring_snapshot_t *a, const shmring_snapshot_t *b)
{
    uint32_t moved = 0;
    for (uint64_t k = 0; k < 20000; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t x, y;
        EXPECT_INT_EQ(shmring_snapshot_lookup(a, key, len, &x), 0);
        EXPECT_INT_EQ(shmring_snapshot_lookup(b, key, len, &y), 0);
        moved += node_number(x.name) != node_number(y.name);
    }
    return moved;
}

/* keys_moved() between the snapshots of BEFORE and AFTER. */
static uint32_t keys_moved_between(const shmring_nodeset_t *before,
                                   const shmring_nodeset_t *after)
{
    shmring_snapshot_t *a = test_snapshot(before);
    shmring_snapshot_t *b = test_snapshot(after);
    uint32_t moved = keys_moved(a, b);
    shmring_snapshot_free(a);
    shmring_snapshot_free(b);
    return moved;
}

START_TEST(hash_key_renames_move_no_keys)
{
    /* ring and maglev hash a node's hash_key in place of its name: renaming and
     * re-addressing nodes that keep their hash keys (and reordering them) moves no
     * key; without hash keys, the same renaming moves keys. */
    shmring_algorithm_t algorithm =
        _i == 0 ? SHMRING_ALGORITHM_RING : SHMRING_ALGORITHM_MAGLEV;
    shmring_nodeset_t *before = keyed_set(algorithm, "old", true, false);
    shmring_nodeset_t *after = keyed_set(algorithm, "new", true, true);
    ck_assert_uint_eq(keys_moved_between(before, after), 0);
    shmring_nodeset_free(before);
    shmring_nodeset_free(after);

    before = keyed_set(algorithm, "old", false, false);
    after = keyed_set(algorithm, "new", false, true);
    ck_assert_uint_gt(keys_moved_between(before, after), 10000);
    shmring_nodeset_free(before);
    shmring_nodeset_free(after);
}
END_TEST

START_TEST(hash_key_replaces_the_name)
{
    /* A node whose hash_key is another node's name takes that node's place: node
     * "x" keyed "node-3" answers exactly what "node-3" answered. */
    shmring_algorithm_t algorithm =
        _i == 0 ? SHMRING_ALGORITHM_RING : SHMRING_ALGORITHM_MAGLEV;
    shmring_nodeset_t *named = test_empty_set(algorithm, SHMRING_HASH_XXH3, 40);
    shmring_nodeset_t *keyed = test_empty_set(algorithm, SHMRING_HASH_XXH3, 40);
    for (int n = 0; n < 8; n++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%d", n);
        test_add_node(named, name, 1, SHMRING_STATE_UP);
        if (n == 3) {
            test_add_node(keyed, "x-3", 1, SHMRING_STATE_UP);
            ck_assert_int_eq(shmring_nodeset_set_hash_key(keyed, "x-3", name), 0);
        } else {
            test_add_node(keyed, name, 1, SHMRING_STATE_UP);
        }
    }
    ck_assert_uint_eq(keys_moved_between(named, keyed), 0);
    shmring_nodeset_free(named);
    shmring_nodeset_free(keyed);
}
END_TEST

/* The algorithms, in shmring_algorithm_t's order, as the table must list them; NULL
 * for a value that no algorithm has. */
static const char *const expected_names[] = {
    "ring",         "maglev",     "ketama",       "twemproxy", "nginx",   "libketama",
    "envoy-maglev", "envoy-ring", "rendezvous",   "jump",      "haproxy", "uhashring",
    "hashring",     "dalli",      "spymemcached", "groupcache"};

START_TEST(every_row_is_complete)
{
    size_t count = shmring__algorithm_count();
    ck_assert_uint_eq(count, sizeof(expected_names) / sizeof(expected_names[0]));
    for (size_t i = 0; i < count; i++) {
        const struct placement_algorithm *a = shmring__algorithm((unsigned)i);
        ck_assert_ptr_eq(a, shmring__algorithms[i]);
        if (expected_names[i] == NULL) {
            ck_assert_ptr_null(a);
            ck_assert_str_eq(shmring_algorithm_name((shmring_algorithm_t)i), "unknown");
            continue;
        }
        ck_assert_ptr_nonnull(a);
        ck_assert_str_eq(a->name, expected_names[i]);
        ck_assert_int_eq(a->id, (int)i);
        /* The default hash is one it takes, and every hash it takes exists. */
        ck_assert_uint_ne(a->hashes & PLACEMENT_HASH_BIT(a->default_hash), 0);
        ck_assert_uint_eq(a->hashes >> (SHMRING_HASH_NATIVE + 1), 0);
        ck_assert_uint_eq(a->parameters &
                              ~(PLACEMENT_PARAM_VNODES | PLACEMENT_PARAM_TABLE_SIZE |
                                PLACEMENT_PARAM_RING_SIZES),
                          0);
        /* The key hash inlined into lookups takes xxh3 for the parameters' hash. */
        if (a->hashes & PLACEMENT_HASH_BIT(SHMRING_HASH_XXH3))
            ck_assert_int_eq(a->key_hash, KEY_HASH_PARAMS);
        ck_assert_int_le(a->key_hash, KEY_HASH_SPYMEMCACHED);
        /* Only an algorithm that ranks nodes itself may leave the key unhashed. */
        if (a->key_hash == KEY_HASH_NONE)
            ck_assert_int_eq(a->lookup, PLACEMENT_LOOKUP_NODES);
        ck_assert_int_le(a->order, PLACEMENT_ORDER_ALL);
        ck_assert_ptr_nonnull(a->size);
        /* Each lookup kind with what it needs, and the candidate order that fits. */
        switch (a->lookup) {
        case PLACEMENT_LOOKUP_POINTS:
            ck_assert_ptr_nonnull(a->place);
            ck_assert_int_eq(a->candidates, PLACEMENT_CANDIDATES_CLOCKWISE);
            break;
        case PLACEMENT_LOOKUP_TABLE:
            ck_assert_ptr_nonnull(a->place);
            ck_assert_int_eq(a->candidates, PLACEMENT_CANDIDATES_TABLE_FORWARD);
            break;
        case PLACEMENT_LOOKUP_NODES:
            ck_assert_ptr_null(a->place);
            ck_assert_int_eq(a->candidates, PLACEMENT_CANDIDATES_RANKED);
            break;
        default:
            ck_abort_msg("%s: unknown lookup kind %d", a->name, (int)a->lookup);
        }
        if (a->candidates == PLACEMENT_CANDIDATES_RANKED)
            ck_assert_ptr_nonnull(a->rank);
        else
            ck_assert_ptr_null(a->rank);
        /* The public calls read the same row. */
        ck_assert_str_eq(shmring_algorithm_name(a->id), a->name);
        ck_assert_int_eq(shmring_algorithm_default_hash(a->id), a->default_hash);
    }
    ck_assert_ptr_null(shmring__algorithm((unsigned)count));
    ck_assert_ptr_null(shmring__algorithm(UINT32_MAX));
    ck_assert_str_eq(shmring_algorithm_name((shmring_algorithm_t)count), "unknown");
}
END_TEST

START_TEST(names_are_unique_and_found)
{
    size_t count = shmring__algorithm_count();
    for (size_t i = 0; i < count; i++) {
        const struct placement_algorithm *a = shmring__algorithm((unsigned)i);
        if (a == NULL)
            continue;
        for (size_t j = 0; j < i; j++) {
            if (shmring__algorithm((unsigned)j) != NULL)
                ck_assert_str_ne(a->name, shmring__algorithm((unsigned)j)->name);
        }
        ck_assert_ptr_eq(shmring__algorithm_find(a->name), a);
        shmring_algorithm_t parsed;
        ck_assert_int_eq(shmring_algorithm_parse(a->name, &parsed), 0);
        ck_assert_int_eq(parsed, a->id);
    }
    static const char *const unknown[] = {"",      "Ring",       "maglev ",
                                          "envoy", "Rendezvous", "jump "};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        ck_assert_ptr_null(shmring__algorithm_find(unknown[i]));
        shmring_algorithm_t parsed = SHMRING_ALGORITHM_MAGLEV;
        ck_assert_int_eq(shmring_algorithm_parse(unknown[i], &parsed),
                         SHMRING_EBADALGORITHM);
        ck_assert_int_eq(parsed, SHMRING_ALGORITHM_MAGLEV);
    }
}
END_TEST

/* The rows' hash sets are what shmring_params_check() accepts, hash by hash. */
START_TEST(params_check_follows_the_rows)
{
    for (size_t i = 0; i < shmring__algorithm_count(); i++) {
        const struct placement_algorithm *a = shmring__algorithm((unsigned)i);
        if (a == NULL) {
            shmring_params_t params;
            shmring_params_default(&params);
            params.algorithm = (shmring_algorithm_t)i;
            ck_assert_int_eq(shmring_params_check(&params), SHMRING_EBADALGORITHM);
            continue;
        }
        for (int hash = 0; hash <= SHMRING_HASH_NATIVE + 1; hash++) {
            shmring_params_t params;
            shmring_params_default(&params);
            params.algorithm = a->id;
            params.hash = (shmring_hash_t)hash;
            bool takes = hash <= SHMRING_HASH_NATIVE &&
                         (a->hashes & PLACEMENT_HASH_BIT((unsigned)hash)) != 0;
            ck_assert_int_eq(shmring_params_check(&params), takes ? 0 : SHMRING_EBADHASH);
        }
    }
}
END_TEST

static const struct test_fixture slow = {NULL, NULL, 300};

static Suite *placement_suite(void)
{
    Suite *s = suite_create("placement");
    TEST_CASE(s, "table", every_row_is_complete, names_are_unique_and_found,
              params_check_follows_the_rows);
    TCase *tc = TEST_CASE_WITH(s, "determinism", &slow, builds_are_byte_identical);
    tcase_add_loop_test(tc, node_order_does_not_matter, 0, 10);
    tc = tcase_create("hash_key");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, hash_key_renames_move_no_keys, 0, 2);
    tcase_add_loop_test(tc, hash_key_replaces_the_name, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_suite());
}
