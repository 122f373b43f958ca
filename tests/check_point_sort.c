/*
 * Tests of lib/point_sort.c: ring points sorted by value, stably, on each of its
 * paths (the LSD sort with either digit width; the in-place sort, its recursion on
 * crowded values, its fallback when a bucket's distribution does not separate its
 * values, and its tie order; the LSD sort again for input whose nodes' points are
 * not together), whatever bits the values use. The order is checked against qsort()
 * on (value, input position), which is what a stable sort must give.
 */
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"
#include "test_expect.h"
#include "test_support.h"

static const struct snapshot_point *sort_input;

static int compare_value_then_position(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sort_input[x].point != sort_input[y].point)
        return sort_input[x].point < sort_input[y].point ? -1 : 1;
    return (x > y) - (x < y);
}

/* Each point its own node: its node index is its input position. */
static uint32_t own_node(size_t i)
{
    return (uint32_t)i;
}

/* 160 points a node, together, as the placements emit them. */
static uint32_t nodes_together(size_t i)
{
    return (uint32_t)(i / 160);
}

/* Seven nodes taking turns: their points are not together. */
static uint32_t nodes_interleaved(size_t i)
{
    return (uint32_t)(i % 7);
}

/* Sorts COUNT points whose values MAKE_VALUE draws, of nodes NODE_OF, and checks the
 * result. */
static void check_sort_nodes(size_t count, uint64_t (*make_value)(uint64_t *state),
                             uint32_t (*node_of)(size_t i))
{
    struct snapshot_point *points = malloc((count + 1) * sizeof(*points));
    struct snapshot_point *input = malloc((count + 1) * sizeof(*input));
    size_t *order = malloc((count + 1) * sizeof(*order));
    ck_assert(points != NULL && input != NULL && order != NULL);
    uint64_t state = 12345 + count;
    for (size_t i = 0; i < count; i++) {
        points[i] = (struct snapshot_point){.point = make_value(&state),
                                            .node_index = node_of(i)};
        order[i] = i;
    }
    memcpy(input, points, count * sizeof(*points));
    sort_input = input;
    qsort(order, count, sizeof(*order), compare_value_then_position);
    ck_assert_int_eq(shmring__points_sort(points, count), 0);
    for (size_t i = 0; i < count; i++) {
        EXPECT_UINT_EQ(points[i].point, input[order[i]].point);
        EXPECT_UINT_EQ(points[i].node_index, input[order[i]].node_index);
        EXPECT_UINT_EQ(points[i].reserved, 0);
    }
    free(points);
    free(input);
    free(order);
}

static void check_sort(size_t count, uint64_t (*make_value)(uint64_t *state))
{
    check_sort_nodes(count, make_value, own_node);
}

static uint64_t any_value(uint64_t *state)
{
    return test_random(state);
}

/* Few distinct values: many ties, which must keep their input order. */
static uint64_t few_values(uint64_t *state)
{
    return (test_random(state) % 5) << 60 | 7;
}

/* Ketama's points: 32-bit values in the top half. */
static uint64_t top_half(uint64_t *state)
{
    return test_random(state) << 32;
}

START_TEST(sorts_stably_with_narrow_digits)
{
    check_sort(0, any_value);
    check_sort(1, any_value);
    check_sort(2, any_value);
    check_sort(1000, any_value);
    check_sort(1000, few_values);
    check_sort(1000, top_half);
    check_sort(65535, any_value); /* the largest count sorted with 8-bit digits */
}
END_TEST

/* Values below 2^20: one bucket of the first pass holds them all, and the in-place
 * pass recurses down to bits 16-23. */
static uint64_t crowded_values(uint64_t *state)
{
    return test_random(state) >> 44;
}

/* Values that differ in their top byte and their low byte only: distributing a
 * bucket by the bits below its top byte separates nothing, and the insertion gives
 * up for the LSD sort. */
static uint64_t top_and_low_bytes(uint64_t *state)
{
    uint64_t r = test_random(state);
    return (r & UINT64_C(0xff00000000000000)) | (r & 0xff);
}

START_TEST(sorts_stably_in_place)
{
    check_sort_nodes(200000, any_value, nodes_together);
    check_sort_nodes(200000, top_half, nodes_together);   /* ketama: many ties */
    check_sort_nodes(200000, few_values, nodes_together); /* long tied runs */
    check_sort(300000, crowded_values);
    check_sort(70000, top_and_low_bytes);
}
END_TEST

START_TEST(sorts_stably_with_wide_digits)
{
    check_sort(65536, any_value); /* the largest count sorted by it directly */
    /* Larger ones when their nodes' points are not together. */
    check_sort_nodes(200000, any_value, nodes_interleaved);
    check_sort_nodes(200000, few_values, nodes_interleaved);
    check_sort_nodes(200000, top_half, nodes_interleaved);
}
END_TEST

static Suite *point_sort_suite(void)
{
    Suite *s = suite_create("point_sort");
    TEST_CASE(s, "core", sorts_stably_with_narrow_digits, sorts_stably_with_wide_digits,
              sorts_stably_in_place);
    return s;
}

int main(void)
{
    return test_run_suite(point_sort_suite());
}
