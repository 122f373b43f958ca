/*
 * Assertions for loops over many keys. In fork mode Check records every assertion
 * that passes (a write to its pipe, a system call each), which makes a million
 * ck_assert calls take seconds; these macros compare first and call Check only to
 * report a failure, naming the expressions and their values.
 * Each argument is evaluated exactly once.
 */
#ifndef SHMRING_TEST_EXPECT_H
#define SHMRING_TEST_EXPECT_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#define EXPECT_INT_EQ(x, y)                                                              \
    do {                                                                                 \
        intmax_t expect_x = (x), expect_y = (y);                                         \
        if (expect_x != expect_y)                                                        \
            ck_abort_msg("Assertion '%s == %s' failed: %jd != %jd", #x, #y, expect_x,    \
                         expect_y);                                                      \
    } while (0)

#define EXPECT_UINT_EQ(x, y)                                                             \
    do {                                                                                 \
        uintmax_t expect_x = (x), expect_y = (y);                                        \
        if (expect_x != expect_y)                                                        \
            ck_abort_msg("Assertion '%s == %s' failed: %ju != %ju", #x, #y, expect_x,    \
                         expect_y);                                                      \
    } while (0)

#define EXPECT_UINT_NE(x, y)                                                             \
    do {                                                                                 \
        uintmax_t expect_x = (x), expect_y = (y);                                        \
        if (expect_x == expect_y)                                                        \
            ck_abort_msg("Assertion '%s != %s' failed: both are %ju", #x, #y, expect_x); \
    } while (0)

#define EXPECT_STR_EQ(x, y)                                                              \
    do {                                                                                 \
        const char *expect_x = (x), *expect_y = (y);                                     \
        if (strcmp(expect_x, expect_y) != 0)                                             \
            ck_abort_msg("Assertion '%s == %s' failed: \"%s\" != \"%s\"", #x, #y,        \
                         expect_x, expect_y);                                            \
    } while (0)

#define EXPECT_STR_NE(x, y)                                                              \
    do {                                                                                 \
        const char *expect_x = (x), *expect_y = (y);                                     \
        if (strcmp(expect_x, expect_y) == 0)                                             \
            ck_abort_msg("Assertion '%s != %s' failed: both are \"%s\"", #x, #y,         \
                         expect_x);                                                      \
    } while (0)

#define EXPECT_TRUE(condition)                                                           \
    do {                                                                                 \
        if (!(condition))                                                                \
            ck_abort_msg("Assertion '%s' failed", #condition);                           \
    } while (0)

#endif /* SHMRING_TEST_EXPECT_H */
