/*
 * The hash functions. xxh3 and MD5 come from well-kept libraries (libxxhash,
 * nettle); CRC-32 has its own module (crc32.c); FNV-1a and MurmurHash3 are short
 * enough to follow their published definitions here.
 */
#include "hash_internal.h"

#include <nettle/md5.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>

void shmring__md5(const void *data, size_t len, uint8_t digest[16])
{
    struct md5_ctx ctx;
    md5_init(&ctx);
    md5_update(&ctx, len, data);
    md5_digest(&ctx, MD5_DIGEST_SIZE, digest);
}

uint32_t shmring__ketama_key_hash(const void *data, size_t len)
{
    uint8_t digest[16];
    shmring__md5(data, len, digest);
    return shmring__load_le32(digest);
}

size_t shmring__digest(shmring_hash_t hash, const void *data, size_t len,
                       uint8_t digest[SHMRING_DIGEST_MAX])
{
    switch (hash) {
    case SHMRING_HASH_SHA1: {
        struct sha1_ctx ctx;
        sha1_init(&ctx);
        sha1_update(&ctx, len, data);
        sha1_digest(&ctx, SHA1_DIGEST_SIZE, digest);
        return SHA1_DIGEST_SIZE;
    }
    case SHMRING_HASH_SHA256: {
        struct sha256_ctx ctx;
        sha256_init(&ctx);
        sha256_update(&ctx, len, data);
        sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
        return SHA256_DIGEST_SIZE;
    }
    case SHMRING_HASH_SHA512: {
        struct sha512_ctx ctx;
        sha512_init(&ctx);
        sha512_update(&ctx, len, data);
        sha512_digest(&ctx, SHA512_DIGEST_SIZE, digest);
        return SHA512_DIGEST_SIZE;
    }
    case SHMRING_HASH_MD5:
    default:
        shmring__md5(data, len, digest);
        return MD5_DIGEST_SIZE;
    }
}

uint64_t shmring__uhashring_key_hash(shmring_hash_t hash, const void *key, size_t len)
{
    uint8_t digest[16];
    shmring__md5(key, len, digest);
    if (hash == SHMRING_HASH_KETAMA) {
        /* KetamaRing: the first little-endian word; bisect() takes the first point
         * above it, which is the first at or above the word's last 64-bit value. */
        return (uint64_t)shmring__load_le32(digest) << 32 | UINT32_MAX;
    }
    /* MetaRing: int(hexdigest, 16), the digest read big-endian, of which a point
     * keeps the top 64 bits; bisect() takes the first point above it, which the
     * next 64-bit value reaches (wrapping past the last to the first point). */
    uint64_t top = 0;
    for (int i = 0; i < 8; i++)
        top = top << 8 | digest[i];
    return top + 1;
}

static uint64_t md5_64(const void *data, size_t len)
{
    uint8_t digest[16];
    shmring__md5(data, len, digest);
    return (uint64_t)shmring__load_le32(digest) | (uint64_t)shmring__load_le32(digest + 4)
                                                      << 32;
}

static uint64_t crc32_64(const void *data, size_t len)
{
    return (uint64_t)shmring__crc32(data, len) << 32;
}

/* FNV-1a, 64-bit: offset basis and prime from the FNV specification. */
static uint64_t fnv1a_64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static inline uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t load_le64(const unsigned char *p)
{
    return (uint64_t)shmring__load_le32(p) | (uint64_t)shmring__load_le32(p + 4) << 32;
}

/* One 64-bit lane of a block or of the tail, before it is mixed into its half:
 * multiply, rotate, multiply. */
static inline uint64_t murmur_scramble(uint64_t k, uint64_t first, int rotation,
                                       uint64_t second)
{
    return rotl64(k * first, rotation) * second;
}

static inline uint64_t murmur_fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return k;
}

/*
 * MurmurHash3 x64_128 with seed 0, as Austin Appleby defined it; the ring uses the
 * first 64-bit half. Bytes are read little-endian so every host agrees.
 */
static uint64_t murmur3_64(const void *data, size_t len)
{
    const unsigned char *p = data;
    const uint64_t c1 = UINT64_C(0x87c37b91114253d5);
    const uint64_t c2 = UINT64_C(0x4cf5ad432745937f);
    uint64_t h1 = 0, h2 = 0;
    size_t blocks = len / 16;

    for (size_t i = 0; i < blocks; i++) {
        uint64_t k1 = load_le64(p + i * 16);
        uint64_t k2 = load_le64(p + i * 16 + 8);
        h1 ^= murmur_scramble(k1, c1, 31, c2);
        h1 = (rotl64(h1, 27) + h2) * 5 + 0x52dce729;
        h2 ^= murmur_scramble(k2, c2, 33, c1);
        h2 = (rotl64(h2, 31) + h1) * 5 + 0x38495ab5;
    }

    const unsigned char *tail = p + blocks * 16;
    size_t rest = len & 15;
    uint64_t k1 = 0, k2 = 0;
    for (size_t i = rest; i > 8; i--)
        k2 = (k2 << 8) | tail[i - 1];
    for (size_t i = rest < 8 ? rest : 8; i > 0; i--)
        k1 = (k1 << 8) | tail[i - 1];
    if (rest > 8)
        h2 ^= murmur_scramble(k2, c2, 33, c1);
    if (rest > 0)
        h1 ^= murmur_scramble(k1, c1, 31, c2);

    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = murmur_fmix64(h1);
    h2 = murmur_fmix64(h2);
    h1 += h2;
    return h1;
}

/* MurmurHash2's 64-bit finishing step, libstdc++'s shift_mix(). */
static inline uint64_t shift_mix(uint64_t v)
{
    return v ^ (v >> 47);
}

/*
 * Envoy's MurmurHash::murmurHash2() with its STD_HASH_SEED: libstdc++'s 64-bit
 * _Hash_bytes (hash_bytes.cc, the std::hash of strings), a MurmurHash64A variant
 * whose tail of 1-7 bytes is read little-endian as one word and mixed without the
 * block scramble. Envoy reads the blocks in the host's order on little-endian
 * machines; this reads them little-endian everywhere.
 */
static uint64_t murmur2_64(const void *data, size_t len)
{
    const unsigned char *p = data;
    const uint64_t mul = UINT64_C(0xc6a4a7935bd1e995);
    const uint64_t seed = UINT64_C(0xc70f6907);
    size_t aligned = len & ~(size_t)7;
    uint64_t hash = seed ^ ((uint64_t)len * mul);
    for (size_t i = 0; i < aligned; i += 8) {
        hash ^= shift_mix(load_le64(p + i) * mul) * mul;
        hash *= mul;
    }
    if ((len & 7) != 0) {
        uint64_t tail = 0;
        for (size_t i = len; i > aligned; i--)
            tail = (tail << 8) | p[i - 1];
        hash ^= tail;
        hash *= mul;
    }
    hash = shift_mix(hash) * mul;
    return shift_mix(hash);
}

uint64_t shmring__hash64(shmring_hash_t hash, const void *data, size_t len)
{
    switch (hash) {
    case SHMRING_HASH_MD5:
        return md5_64(data, len);
    case SHMRING_HASH_CRC32:
        return crc32_64(data, len);
    case SHMRING_HASH_FNV1A:
        return fnv1a_64(data, len);
    case SHMRING_HASH_MURMUR3:
    case SHMRING_HASH_MURMUR3_128:
        /* Guava's murmur3_128() is the same function, and its padToLong() the
         * same first half: asLong() of the first 8 bytes, little-endian. */
        return murmur3_64(data, len);
    case SHMRING_HASH_XXH64:
        return XXH64(data, len, 0);
    case SHMRING_HASH_MURMUR2:
        return murmur2_64(data, len);
    case SHMRING_HASH_XXH3:
    default:
        return XXH3_64bits(data, len);
    }
}

uint64_t shmring__key_hash_any(shmring_algorithm_t algorithm, shmring_hash_t hash,
                               const void *key, size_t len)
{
    return shmring__key_hash_by(shmring__algorithm_valid(algorithm)->key_hash, hash, key,
                                len);
}

uint64_t shmring__key_hash_by(enum key_hash kind, shmring_hash_t hash, const void *key,
                              size_t len)
{
    switch (kind) {
    case KEY_HASH_KETAMA:
        return (uint64_t)shmring__ketama_key_hash(key, len) << 32;
    case KEY_HASH_TWEMPROXY:
        return (uint64_t)shmring__twemproxy_hash(hash, key, len) << 32;
    case KEY_HASH_CRC32:
        return crc32_64(key, len);
    case KEY_HASH_HAPROXY:
        return (uint64_t)shmring__haproxy_hash(hash, key, len) << 32;
    case KEY_HASH_XXH64:
        return XXH64(key, len, 0);
    case KEY_HASH_SPYMEMCACHED:
        return (uint64_t)shmring__spymemcached_hash(hash, key, len) << 32;
    case KEY_HASH_NONE:
        return 0;
    case KEY_HASH_UHASHRING:
        return shmring__uhashring_key_hash(hash, key, len);
    case KEY_HASH_HASHRING: {
        uint8_t digest[SHMRING_DIGEST_MAX];
        shmring__digest(hash, key, len, digest);
        return (uint64_t)shmring__load_le32(digest) << 32;
    }
    case KEY_HASH_PARAMS:
    default:
        return shmring__hash64(hash, key, len);
    }
}

/* A key hash function named by the one pair of kind and hash that stands for every
 * pair computing it (the parameters' hash only where the kind reads it). */
struct key_hash_function {
    enum key_hash kind;
    shmring_hash_t hash;
};

/* The function that shmring__key_hash_by() computes for KIND with HASH. */
static struct key_hash_function key_hash_function(enum key_hash kind, shmring_hash_t hash)
{
    switch (kind) {
    case KEY_HASH_PARAMS:
        /* shmring__hash64()'s crc32 is crc32_64(), nginx's key hash; its xxh64 is
         * Envoy's (seed 0); murmur3_128 is murmur3's first half. */
        if (hash == SHMRING_HASH_CRC32)
            return (struct key_hash_function){KEY_HASH_CRC32, 0};
        if (hash == SHMRING_HASH_XXH64)
            return (struct key_hash_function){KEY_HASH_XXH64, 0};
        if (hash == SHMRING_HASH_MURMUR3_128)
            return (struct key_hash_function){KEY_HASH_PARAMS, SHMRING_HASH_MURMUR3};
        return (struct key_hash_function){KEY_HASH_PARAMS, hash};
    case KEY_HASH_TWEMPROXY:
        /* nutcracker's md5 is ketama's word, and its crc32a zlib's CRC-32; its crc32
         * is libmemcached's fifteen bits, which is no other kind's. */
        if (hash == SHMRING_HASH_MD5)
            return (struct key_hash_function){KEY_HASH_KETAMA, 0};
        if (hash == SHMRING_HASH_CRC32A)
            return (struct key_hash_function){KEY_HASH_CRC32, 0};
        return (struct key_hash_function){KEY_HASH_TWEMPROXY, hash};
    case KEY_HASH_HAPROXY:
        /* HAProxy's crc32 without avalanche is zlib's CRC-32. */
        if (hash == SHMRING_HASH_CRC32)
            return (struct key_hash_function){KEY_HASH_CRC32, 0};
        return (struct key_hash_function){KEY_HASH_HAPROXY, hash};
    case KEY_HASH_HASHRING:
        /* The first little-endian word of the MD5 is ketama's. */
        if (hash == SHMRING_HASH_MD5)
            return (struct key_hash_function){KEY_HASH_KETAMA, 0};
        return (struct key_hash_function){KEY_HASH_HASHRING, hash};
    case KEY_HASH_SPYMEMCACHED:
        /* Its md5 and crc32 hash a key that is UTF-8 as its bytes: ketama's word, and
         * libmemcached's fifteen bits as nutcracker's crc32. Its other hashes read
         * UTF-16 code units, which no other kind does. */
        if (hash == SHMRING_HASH_MD5)
            return (struct key_hash_function){KEY_HASH_KETAMA, 0};
        if (hash == SHMRING_HASH_CRC32)
            return (struct key_hash_function){KEY_HASH_TWEMPROXY, SHMRING_HASH_CRC32};
        return (struct key_hash_function){KEY_HASH_SPYMEMCACHED, hash};
    case KEY_HASH_UHASHRING:
        /* Both of uhashring's are off by one from any other's (bisect()'s "first
         * above"), and its md5 reads the digest big-endian. */
        return (struct key_hash_function){KEY_HASH_UHASHRING, hash};
    case KEY_HASH_KETAMA:
    case KEY_HASH_CRC32:
    case KEY_HASH_XXH64:
    case KEY_HASH_NONE:
    default:
        /* These read no parameter: ketama's is MD5 whatever the hash. */
        return (struct key_hash_function){kind, 0};
    }
}

bool shmring__key_hash_same(enum key_hash kind_a, shmring_hash_t hash_a,
                            enum key_hash kind_b, shmring_hash_t hash_b)
{
    struct key_hash_function a = key_hash_function(kind_a, hash_a);
    struct key_hash_function b = key_hash_function(kind_b, hash_b);
    return a.kind == b.kind && a.hash == b.hash;
}

struct key_hash_range shmring__key_hash_range(enum key_hash kind, shmring_hash_t hash)
{
    struct key_hash_function f = key_hash_function(kind, hash);
    switch (f.kind) {
    case KEY_HASH_PARAMS:
    case KEY_HASH_XXH64:
    case KEY_HASH_NONE:
        return (struct key_hash_range){.bits = 64, .shift = 0};
    case KEY_HASH_UHASHRING:
        /* md5: the top 64 bits of the digest plus one, wrapping, take every value;
         * ketama: the word in the top half, the bottom half all ones. */
        if (f.hash != SHMRING_HASH_KETAMA)
            return (struct key_hash_range){.bits = 64, .shift = 0};
        return (struct key_hash_range){.bits = 32, .shift = 32, .offset = UINT32_MAX};
    case KEY_HASH_TWEMPROXY:
        /* libmemcached's crc32, bits 16-30 of the CRC-32 (spymemcached's crc32 is
         * this function too). */
        if (f.hash == SHMRING_HASH_CRC32)
            return (struct key_hash_range){.bits = 15, .shift = 32};
        return (struct key_hash_range){.bits = 32, .shift = 32};
    case KEY_HASH_KETAMA:
    case KEY_HASH_CRC32:
    case KEY_HASH_HAPROXY:
    case KEY_HASH_HASHRING:
    case KEY_HASH_SPYMEMCACHED:
    default:
        return (struct key_hash_range){.bits = 32, .shift = 32};
    }
}
