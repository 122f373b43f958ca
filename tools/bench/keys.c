/*
 * Key sets: keys of KEY_MIN-KEY_MAX random bytes from splitmix64 with a fixed seed, so
 * every run and every contender sees the same keys, back to back in one buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "ringbench.h"

/* splitmix64 (Steele, Lea and Flood): a fixed seed gives the same keys every run. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

int keyset_make(size_t count, uint64_t seed, bool distinct, struct keyset *out)
{
    uint64_t state = seed;
    memset(out, 0, sizeof(*out));
    out->offset = malloc(count * sizeof(*out->offset));
    out->length = malloc(count);
    if (out->offset == NULL || out->length == NULL)
        goto nomem;
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        out->length[i] =
            (uint8_t)(KEY_MIN + splitmix64(&state) % (KEY_MAX - KEY_MIN + 1));
        out->offset[i] = (uint32_t)total;
        total += out->length[i];
    }
    out->bytes = malloc(total + sizeof(uint64_t));
    if (out->bytes == NULL)
        goto nomem;
    for (size_t at = 0; at < total; at += sizeof(uint64_t)) {
        uint64_t word = splitmix64(&state);
        memcpy(out->bytes + at, &word, sizeof(word));
    }
    /* splitmix64's output function is a bijection of its state, and the states of
     * consecutive indexes differ, so these first words differ from key to key. */
    for (size_t i = 0; distinct && i < count; i++) {
        uint64_t index_state = seed + i * UINT64_C(0x9e3779b97f4a7c15);
        uint64_t word = splitmix64(&index_state);
        memcpy(out->bytes + out->offset[i], &word, sizeof(word));
    }
    out->count = count;
    out->total_bytes = total;
    return 0;
nomem:
    free(out->offset);
    free(out->length);
    memset(out, 0, sizeof(*out));
    fail("cannot allocate %zu keys", count);
    return -1;
}

void keyset_free(struct keyset *keys)
{
    free(keys->bytes);
    free(keys->offset);
    free(keys->length);
    memset(keys, 0, sizeof(*keys));
}

struct keyset keyset_prefix(const struct keyset *all, size_t count)
{
    struct keyset prefix = *all;
    prefix.count = count;
    prefix.total_bytes = count < all->count ? all->offset[count] : all->total_bytes;
    return prefix;
}

double keyset_mib(const struct keyset *keys)
{
    return (double)keys->total_bytes / 1048576.0;
}
