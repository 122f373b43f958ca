/*
 * Tests of lib/placement_maglev.c, the `maglev` algorithm: balance of equal nodes,
 * weights, disruption when a node comes, and the table size (given, refused when
 * smaller than the up nodes, and the default that grows with them).
 */
#include <stdio.h>
#include <stdlib.h>

#include "test_placement.h"
#include "test_support.h"

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
    shmring_nodeset_t *set =
        test_empty_set(SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 160);
    char name[32];
    for (int n = 0; n < 50; n++) {
        snprintf(name, sizeof(name), "node-%d", n);
        test_add_node(set, name, n < 10 ? 2 : 1, SHMRING_STATE_UP);
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
    test_add_node(set, "light", 1, SHMRING_STATE_UP);
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
    uint32_t *old_owner = test_owners(before, TEST_DISRUPTION_KEYS);
    size_t moved = 0, to_new = 0;
    for (uint64_t k = 0; k < TEST_DISRUPTION_KEYS; k++) {
        uint32_t id = test_owner_id(after, k);
        moved += id != old_owner[k];
        to_new += id == 100;
    }
    double fraction = (double)moved / TEST_DISRUPTION_KEYS, ideal = 1.0 / 101;
    printf("maglev: adding 1 node to 100 moved %.4f%% of keys (%.4f%% to the new node, "
           "ideal %.4f%%)\n",
           100 * fraction, 100.0 * (double)to_new / TEST_DISRUPTION_KEYS, 100 * ideal);
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
    test_check_lookup_n(snapshot, 5, 5);
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
static const struct test_fixture slow = {NULL, NULL, 300};

static Suite *placement_maglev_suite(void)
{
    Suite *s = suite_create("placement_maglev");
    TEST_CASE_WITH(s, "maglev", &slow, maglev_balance, maglev_weights,
                   maglev_add_node_disruption, maglev_table_size);
    return s;
}

int main(void)
{
    return test_run_suite(placement_maglev_suite());
}
