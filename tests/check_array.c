/*
 * Tests of lib/array_internal.h, the growing arrays behind the library's lists:
 * capacities (16 first, then doubling), refusal of a size that would overflow,
 * copies appended in order, and release.
 */
#include <stdint.h>
#include <stdlib.h>

#include "array_internal.h"
#include "test_support.h"

START_TEST(reserve_starts_at_16_then_doubles)
{
    uint32_t *items = NULL;
    size_t capacity = 0;
    ck_assert_int_eq(
        shmring__array_reserve((void **)&items, &capacity, 0, sizeof(*items)), 0);
    ck_assert_ptr_nonnull(items);
    ck_assert_uint_eq(capacity, 16);
    /* Room left: nothing changes. */
    uint32_t *before = items;
    ck_assert_int_eq(
        shmring__array_reserve((void **)&items, &capacity, 15, sizeof(*items)), 0);
    ck_assert_ptr_eq(items, before);
    ck_assert_uint_eq(capacity, 16);
    /* Full: twice the capacity. */
    ck_assert_int_eq(
        shmring__array_reserve((void **)&items, &capacity, 16, sizeof(*items)), 0);
    ck_assert_uint_eq(capacity, 32);
    free(items);
}
END_TEST

START_TEST(reserve_refuses_overflow)
{
    /* 32 elements of SIZE_MAX / 20 bytes do not fit in a size_t: refused, and the
     * array is left as it was. */
    unsigned char *items = malloc(1);
    ck_assert_ptr_nonnull(items);
    unsigned char *before = items;
    size_t capacity = 16;
    ck_assert_int_eq(
        shmring__array_reserve((void **)&items, &capacity, 16, SIZE_MAX / 20),
        SHMRING_ENOMEM);
    ck_assert_ptr_eq(items, before);
    ck_assert_uint_eq(capacity, 16);
    free(items);
}
END_TEST

START_TEST(push_appends_copies_in_order)
{
    uint64_t *items = NULL;
    size_t capacity = 0, count = 0;
    for (uint64_t i = 0; i < 100; i++) {
        uint64_t value = i * i;
        uint64_t *element = shmring__array_push((void **)&items, &capacity, &count,
                                                &value, sizeof(value));
        ck_assert_ptr_eq(element, &items[i]);
        ck_assert_uint_eq(count, i + 1);
    }
    ck_assert_uint_eq(capacity, 128);
    for (uint64_t i = 0; i < 100; i++)
        ck_assert_uint_eq(items[i], i * i);
    shmring__array_release((void **)&items, &count);
    ck_assert_ptr_null(items);
    ck_assert_uint_eq(count, 0);
    /* Releasing again is harmless. */
    shmring__array_release((void **)&items, &count);
    ck_assert_ptr_null(items);
}
END_TEST

static Suite *array_suite(void)
{
    Suite *s = suite_create("array");
    TEST_CASE(s, "core", reserve_starts_at_16_then_doubles, reserve_refuses_overflow,
              push_appends_copies_in_order);
    return s;
}

int main(void)
{
    return test_run_suite(array_suite());
}
