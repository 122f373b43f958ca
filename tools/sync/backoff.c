/*
 * Waiting between attempts to reach a source: capped exponential backoff with
 * jitter, so that a fleet of hosts that lost etcd together does not hammer it
 * together when it returns, and sleeps that end early when sync is told to stop.
 */
#include <time.h>

#include "sync_internal.h"

#define BACKOFF_FIRST_MS 100u
/* How often a sleep looks at the stop flag: well under the one second that sync
 * has to exit in after SIGTERM. */
#define STOP_POLL_MS 100u

bool sync__sleep_ms(struct sync_context *ctx, unsigned ms)
{
    while (ms > 0 && !sync__stopping(ctx)) {
        unsigned slice = ms < STOP_POLL_MS ? ms : STOP_POLL_MS;
        struct timespec t = {.tv_sec = slice / 1000,
                             .tv_nsec = (long)(slice % 1000) * 1000000L};
        /* A signal cuts the sleep short; the loop then looks at the flag. */
        nanosleep(&t, NULL);
        ms -= slice;
    }
    return !sync__stopping(ctx);
}

/* xorshift64*: jitter needs spread, not secrecy. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(2685821657736338717);
}

unsigned sync__backoff_next_ms(struct sync_backoff *backoff, unsigned cap_ms,
                               uint64_t *random)
{
    unsigned delay = BACKOFF_FIRST_MS;
    for (unsigned i = 0; i < backoff->attempt && delay < cap_ms; i++)
        delay *= 2;
    if (delay > cap_ms)
        delay = cap_ms;
    if (backoff->attempt < 32)
        backoff->attempt++;
    unsigned half = delay / 2;
    return half + (unsigned)(next_random(random) % (half + 1));
}

bool sync__backoff_wait(struct sync_context *ctx, struct sync_backoff *backoff)
{
    unsigned cap = ctx->config->backoff_max_ms > 0 ? ctx->config->backoff_max_ms : 5000;
    return sync__sleep_ms(ctx, sync__backoff_next_ms(backoff, cap, &ctx->random));
}
