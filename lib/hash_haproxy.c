/*
 * HAProxy's hashes for `hash-type consistent` (HAProxy 2.6, src/hash.c,
 * include/haproxy/intops.h and src/backend.c gen_hash()), bit for bit:
 *
 * - sdbm (HAProxy's default), djb2, wt6 and crc32 read the key as unsigned bytes;
 *   crc32 is the CRC-32 zlib computes;
 * - the `avalanche` modifier passes the function's result through full_hash(), one of
 *   Bob Jenkins' 32-bit integer hashes followed by a multiplication by 3221225473,
 *   the function that also gives every server's points.
 */
#include "hash_internal.h"

uint32_t shmring__haproxy_full_hash(uint32_t a)
{
    a = (a + 0x7ed55d16u) + (a << 12);
    a = (a ^ 0xc761c23cu) ^ (a >> 19);
    a = (a + 0x165667b1u) + (a << 5);
    a = (a + 0xd3a2646cu) ^ (a << 9);
    a = (a + 0xfd7046c5u) + (a << 3);
    a = (a ^ 0xb55a4f09u) ^ (a >> 16);
    return a * 3221225473u;
}

static uint32_t sdbm(const uint8_t *key, size_t len)
{
    uint32_t hash = 0;
    for (size_t i = 0; i < len; i++)
        hash = key[i] + (hash << 6) + (hash << 16) - hash;
    return hash;
}

static uint32_t djb2(const uint8_t *key, size_t len)
{
    uint32_t hash = 5381;
    for (size_t i = 0; i < len; i++)
        hash = hash * 33 + key[i];
    return hash;
}

/* Willy Tarreau's wt6: two registers, rotated by amounts the data chooses. */
static uint32_t wt6(const uint8_t *key, size_t len)
{
    uint32_t h0 = 0xa53c965au, h1 = 0x5ca6953au;
    unsigned rotate0 = 6, rotate1 = 18;
    for (size_t i = 0; i < len; i++) {
        uint32_t byte = key[i];
        h0 = ~(h0 ^ byte);
        h1 = ~(h1 + byte);
        /* A rotation by 0 is the identity (HAProxy shifts right by 32 there, which
         * x86 takes modulo 32: the same value). */
        uint32_t rotated1 = rotate0 ? (h1 << rotate0) | (h1 >> (32 - rotate0)) : h1;
        h1 = rotate1 ? (h0 << rotate1) | (h0 >> (32 - rotate1)) : h0;
        h0 = rotated1;
        uint32_t mix = ((h0 >> 16) ^ h1) & 0xffffu;
        rotate0 = mix & 0x1fu;
        rotate1 = mix >> 11;
    }
    return h0 ^ h1;
}

uint32_t shmring__haproxy_hash(shmring_hash_t hash, const void *key, size_t len)
{
    const uint8_t *bytes = key;
    switch (hash) {
    case SHMRING_HASH_DJB2:
        return djb2(bytes, len);
    case SHMRING_HASH_DJB2_AVALANCHE:
        return shmring__haproxy_full_hash(djb2(bytes, len));
    case SHMRING_HASH_WT6:
        return wt6(bytes, len);
    case SHMRING_HASH_WT6_AVALANCHE:
        return shmring__haproxy_full_hash(wt6(bytes, len));
    case SHMRING_HASH_CRC32:
        return shmring__crc32(bytes, len);
    case SHMRING_HASH_CRC32_AVALANCHE:
        return shmring__haproxy_full_hash(shmring__crc32(bytes, len));
    case SHMRING_HASH_SDBM_AVALANCHE:
        return shmring__haproxy_full_hash(sdbm(bytes, len));
    case SHMRING_HASH_SDBM:
    default:
        /* A haproxy node set takes only the hashes above (shmring_params_check());
         * any other code gets HAProxy's default, sdbm. */
        return sdbm(bytes, len);
    }
}
