/*
 * Tests of lib/placement.c, the door through which the snapshot builder reaches every
 * placement algorithm: builds are byte-identical for the same node set, whatever the
 * algorithm and hash, and the order nodes were added in does not change any lookup.
 * Each algorithm has its own program, check_placement_<algorithm>.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static Suite *placement_suite(void)
{
    Suite *s = suite_create("placement");
    TCase *tc = tcase_create("determinism");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, builds_are_byte_identical);
    tcase_add_loop_test(tc, node_order_does_not_matter, 0, 10);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(placement_suite());
}
