/*
 * Tests of tools/sync/backoff.c: the waits between attempts to reach a source (each in
 * the upper half of a delay that doubles from 100 ms up to the cap, spread by the
 * jitter), and sleeps that end at once when sync is stopping.
 */
#include "sync_internal.h"
#include "test_support.h"

/* Each wait lies in the upper half of its delay: 100, 200, 400, 800 ms, then the cap
 * of 1,000 ms for every later attempt. */
START_TEST(waits_double_up_to_the_cap)
{
    static const unsigned delays[] = {100, 200, 400, 800, 1000, 1000, 1000, 1000};
    uint64_t random = 0x5eed;
    struct sync_backoff backoff = {0};
    for (size_t i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
        unsigned wait = sync__backoff_next_ms(&backoff, 1000, &random);
        ck_assert_uint_ge(wait, delays[i] / 2);
        ck_assert_uint_le(wait, delays[i]);
        ck_assert_uint_eq(backoff.attempt, i + 1);
    }
}
END_TEST

/* The attempt count stops at 32, and the largest cap sync takes (an hour) is reached
 * without the doubling overflowing: waits stay within 30-60 minutes. */
START_TEST(attempts_saturate_at_the_largest_cap)
{
    enum { HOUR_MS = 3600000 };
    uint64_t random = 0x5eed;
    struct sync_backoff backoff = {0};
    unsigned wait = 0;
    for (int i = 0; i < 100; i++)
        wait = sync__backoff_next_ms(&backoff, HOUR_MS, &random);
    ck_assert_uint_eq(backoff.attempt, 32);
    ck_assert_uint_ge(wait, HOUR_MS / 2);
    ck_assert_uint_le(wait, HOUR_MS);
}
END_TEST

/* Hosts that lost etcd together do not come back together: from one first delay of
 * 100 ms, 1,000 draws take every one of the 51 waits from 50 to 100 ms, where a
 * backoff without jitter would give one. */
START_TEST(jitter_spreads_the_waits)
{
    bool seen[101] = {false};
    uint64_t random = 0x5eed;
    for (int i = 0; i < 1000; i++) {
        struct sync_backoff backoff = {0};
        unsigned wait = sync__backoff_next_ms(&backoff, 5000, &random);
        ck_assert_uint_ge(wait, 50);
        ck_assert_uint_le(wait, 100);
        seen[wait] = true;
    }
    unsigned distinct = 0;
    for (unsigned ms = 50; ms <= 100; ms++)
        distinct += seen[ms];
    ck_assert_uint_eq(distinct, 51);
    ck_assert(seen[50] && seen[100]);
}
END_TEST

/* With the stop flag set, an hour's sleep and a backoff's wait return false at once
 * (if they slept, Check's timeout would fail the test); without it, a 1 ms sleep
 * returns true. */
START_TEST(sleeps_end_when_stopping)
{
    volatile sig_atomic_t stop = 1;
    ringctl_sync_config_t config = {.stop = &stop};
    struct sync_context ctx = {.config = &config, .random = 0x5eed};
    ck_assert(!sync__sleep_ms(&ctx, 3600000));
    struct sync_backoff backoff = {.attempt = 31};
    ck_assert(!sync__backoff_wait(&ctx, &backoff));
    stop = 0;
    ck_assert(sync__sleep_ms(&ctx, 1));
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("sync_backoff");
    TEST_CASE(suite, "core", waits_double_up_to_the_cap,
              attempts_saturate_at_the_largest_cap, jitter_spreads_the_waits,
              sleeps_end_when_stopping);
    return test_run_suite(suite);
}
