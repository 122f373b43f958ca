/*
 * Tests of lib/point_sort.c: ring points sorted by value, stably, with either digit
 * width, whatever bits the values use. Each point's node_index records its input
 * position, so stability can be seen; the order is checked against qsort() on
 * (value, input position), which is what a stable sort must give.
 */
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"
#include "test_expect.h"
#include "test_support.h"

static int compare_value_then_position(const void *a, const void *b)
{
    const struct snapshot_point *x = a, *y = b;
    if (x->point != y->point)
        return x->point < y->point ? -1 : 1;
    return (x->node_index > y->node_index) - (x->node_index < y->node_index);
}

/* Sorts COUNT points whose values MAKE_VALUE draws, and checks the result. */
static void check_sort(size_t count, uint64_t (*make_value)(uint64_t *state))
{
    struct snapshot_point *points = malloc((count + 1) * sizeof(*points));
    struct snapshot_point *expected = malloc((count + 1) * sizeof(*expected));
    ck_assert(points != NULL && expected != NULL);
    uint64_t state = 12345 + count;
    for (size_t i = 0; i < count; i++)
        points[i] = (struct snapshot_point){.point = make_value(&state),
                                            .node_index = (uint32_t)i};
    memcpy(expected, points, count * sizeof(*points));
    qsort(expected, count, sizeof(*expected), compare_value_then_position);
    ck_assert_int_eq(shmring__points_sort(points, count), 0);
    for (size_t i = 0; i < count; i++) {
        EXPECT_UINT_EQ(points[i].point, expected[i].point);
        EXPECT_UINT_EQ(points[i].node_index, expected[i].node_index);
    }
    free(points);
    free(expected);
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

START_TEST(sorts_stably_with_wide_digits)
{
    check_sort(65536, any_value); /* the smallest count sorted with 16-bit digits */
    check_sort(200000, any_value);
    check_sort(200000, few_values);
    check_sort(200000, top_half);
}
END_TEST

static Suite *point_sort_suite(void)
{
    Suite *s = suite_create("point_sort");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, sorts_stably_with_narrow_digits);
    tcase_add_test(tc, sorts_stably_with_wide_digits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(point_sort_suite());
}
