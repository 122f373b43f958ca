/*
 * Key and point hashes. Every hash gives a 64-bit value whose top bits are well
 * mixed, because the ring's bucket index and maglev's slot come from the top bits:
 * the 32-bit hashes (CRC-32, ketama's MD5 word) are therefore shifted into the top
 * half.
 */
#ifndef SHMRING_HASH_INTERNAL_H
#define SHMRING_HASH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithm_internal.h"
#include "shmring_ctl.h"

/* xxh3 in the library's supported header-only mode, so lookups inline it. */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* The 64-bit hash HASH of DATA. */
uint64_t shmring__hash64(shmring_hash_t hash, const void *data, size_t len);

/* MD5 of DATA. */
void shmring__md5(const void *data, size_t len, uint8_t digest[16]);

/* The longest digest shmring__digest() writes (SHA-512's). */
#define SHMRING_DIGEST_MAX 64

/* The digest HASH (md5, sha1, sha256 or sha512; any other as md5) of DATA, into
 * DIGEST; returns its length in bytes. */
size_t shmring__digest(shmring_hash_t hash, const void *data, size_t len,
                       uint8_t digest[SHMRING_DIGEST_MAX]);

/* uhashring's key hash with HASH (md5 or ketama), as `uhashring` looks it up
 * (placement_uhashring.c). */
uint64_t shmring__uhashring_key_hash(shmring_hash_t hash, const void *key, size_t len);

/*
 * libmemcached's ketama key hash: the first little-endian 32-bit word of MD5(key)
 * (libhashkit's md5 digest).
 */
uint32_t shmring__ketama_key_hash(const void *data, size_t len);

/* The CRC-32 of DATA (zlib's, which is ISO-HDLC's and nginx's ngx_crc32_long()). */
uint32_t shmring__crc32(const void *data, size_t len);

/* CRC32, the CRC-32 of some bytes, continued over DATA: the CRC-32 of both (zlib's
 * crc32(CRC32, DATA, LEN)). */
uint32_t shmring__crc32_update(uint32_t crc32, const void *data, size_t len);

/* twemproxy's key hash HASH (one of the names of its `hash:` option) of KEY. */
uint32_t shmring__twemproxy_hash(shmring_hash_t hash, const void *key, size_t len);

/* HAProxy's key hash HASH (sdbm, djb2, wt6 or crc32, with or without avalanche) of
 * KEY (hash_haproxy.c). */
uint32_t shmring__haproxy_hash(shmring_hash_t hash, const void *key, size_t len);

/* spymemcached's DefaultHashAlgorithm HASH (md5, crc32, native, fnv1_64, fnv1a_64,
 * fnv1_32 or fnv1a_32 in its meaning) of the string KEY decodes to as UTF-8
 * (hash_spymemcached.c). */
uint32_t shmring__spymemcached_hash(shmring_hash_t hash, const void *key, size_t len);

/* HAProxy's full_hash(): its `avalanche` step, and the hash of a server's points. */
uint32_t shmring__haproxy_full_hash(uint32_t value);

/* The hash of KEY by KIND (see enum key_hash), with HASH the parameters' hash. */
uint64_t shmring__key_hash_by(enum key_hash kind, shmring_hash_t hash, const void *key,
                              size_t len);

/*
 * Whether the key hashes KIND_A with HASH_A and KIND_B with HASH_B are one function:
 * whether shmring__key_hash_by() gives every key that is UTF-8 the same 64-bit value
 * by both, so that two snapshots hashing keys so place each key in one hash space.
 * Pairs of different kinds can be (ring's md5 is not ketama's, but twemproxy's and
 * hashring's md5 are). spymemcached's md5 and crc32 are the same as ketama's and
 * twemproxy's crc32 only for UTF-8: a key that is not stands for the string it
 * decodes to, which spymemcached's clients, holding Java strings, send as other
 * bytes; so no key of theirs is hashed differently.
 */
bool shmring__key_hash_same(enum key_hash kind_a, shmring_hash_t hash_a,
                            enum key_hash kind_b, shmring_hash_t hash_b);

/*
 * The values a key hash takes: OFFSET + m x 2^SHIFT for m below 2^BITS (BITS + SHIFT
 * <= 64), each as often as the others for keys hashed at random. The peers' 32-bit
 * hashes sit in the top half (SHIFT 32), and libmemcached's crc32 keeps 15 bits of
 * the CRC-32 there, so that its keys reach only the bottom 2^-17 of the hash space:
 * a key's share of a piece of the hash space is not the piece's length.
 */
struct key_hash_range {
    unsigned bits;
    unsigned shift;
    uint64_t offset;
};

/* The range of the key hash KIND with HASH (as shmring__key_hash_by() computes it). */
struct key_hash_range shmring__key_hash_range(enum key_hash kind, shmring_hash_t hash);

/* The hash a snapshot of ALGORITHM (a valid one) with HASH gives KEY for its
 * lookups: its description's key hash. */
uint64_t shmring__key_hash_any(shmring_algorithm_t algorithm, shmring_hash_t hash,
                               const void *key, size_t len);

/*
 * The same, with the default hash and Envoy's inlined into the lookup: xxh3 costs
 * about 3 ns on short keys, and a call through the hash switch added 1.3 ns to that
 * (ringbench). Every algorithm that takes xxh3 hashes its keys with it
 * (KEY_HASH_PARAMS; check_placement asserts it of every row), so the common case
 * needs no look at the table.
 */
static inline uint64_t shmring__key_hash(shmring_algorithm_t algorithm,
                                         shmring_hash_t hash, const void *key, size_t len)
{
    if (hash == SHMRING_HASH_XXH3)
        return XXH3_64bits(key, len);
    enum key_hash kind = shmring__algorithm_valid(algorithm)->key_hash;
    if (kind == KEY_HASH_XXH64)
        return XXH64(key, len, 0);
    return shmring__key_hash_by(kind, hash, key, len);
}

/* Reads a little-endian 32-bit word, whatever the host's byte order. */
static inline uint32_t shmring__load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

#endif /* SHMRING_HASH_INTERNAL_H */
