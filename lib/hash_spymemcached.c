/*
 * spymemcached's key hashes: DefaultHashAlgorithm.hash() of spymemcached 2.12.3
 * (net/spy/memcached/DefaultHashAlgorithm.java), which hashes a Java String and
 * keeps the low 32 bits of what it computes (rv & 0xffffffffL):
 *
 * - KETAMA_HASH (md5): the first little-endian 32-bit word of the MD5 of the
 *   string's UTF-8 bytes (KeyUtil.getKeyBytes());
 * - CRC_HASH (crc32): (CRC-32 of those bytes >> 16) & 0x7fff, fifteen bits;
 * - NATIVE_HASH (native): String.hashCode(), h = 31 x h + c over its UTF-16 code
 *   units, in 32-bit arithmetic;
 * - FNV1_64_HASH, FNV1A_64_HASH, FNV1_32_HASH, FNV1A_32_HASH (fnv1_64, fnv1a_64,
 *   fnv1_32, fnv1a_32): FNV-1 and FNV-1a over the UTF-16 code units (charAt(), not
 *   bytes), in 64-bit arithmetic. The low 32 bits of a product depend only on the
 *   low 32 bits of its factors, so 64 bits here give Java's answer for all four.
 *
 * A key here is bytes, and the String it stands for is the one they decode to as
 * JDK 17's new String(bytes, UTF_8) decodes them: each maximal malformed subsequence
 * (the Unicode Standard's "maximal subpart") becomes U+FFFD, except that the JDK
 * reads an encoded surrogate (ED A0-BF) to its end and makes one U+FFFD of its
 * three bytes, or of the two at the end of the key. A key that is valid UTF-8 is
 * so hashed as its own bytes by md5 and crc32, and any other as the UTF-8 of its
 * decoded string, where U+FFFD is EF BF BD. A String with an unpaired surrogate has no
 * UTF-8 form, so no key stands for it.
 */
#include <nettle/md5.h>

#include "hash_internal.h"

#define REPLACEMENT_CHARACTER 0xfffdu
/* What decode() gives for a malformed subpart: no code point. */
#define MALFORMED UINT32_MAX
#define FNV_64_INIT UINT64_C(0xcbf29ce484222325)
#define FNV_64_PRIME UINT64_C(0x100000001b3)
#define FNV_32_INIT UINT64_C(2166136261)
#define FNV_32_PRIME UINT64_C(16777619)

/* U+FFFD in UTF-8. */
static const uint8_t replacement_utf8[3] = {0xef, 0xbf, 0xbd};

/*
 * Decodes the UTF-8 sequence at P, which has LEN >= 1 bytes: its code point into
 * *CODE_POINT and its length; or MALFORMED and the length of the maximal malformed
 * subpart there (a lead byte and the continuation bytes that fit it, at least one).
 */
static size_t decode(const uint8_t *p, size_t len, uint32_t *code_point)
{
    uint8_t lead = p[0];
    uint8_t lower = 0x80, upper = 0xbf;
    size_t continuations;
    uint32_t value;
    if (lead < 0x80) {
        *code_point = lead;
        return 1;
    }
    if (lead >= 0xc2 && lead <= 0xdf) {
        continuations = 1;
        value = lead & 0x1fu;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        /* No overlong forms (E0 80-9F). A surrogate (ED A0-BF) is malformed once its
         * three bytes are read, as the JDK reads it, not at its second byte as the
         * Unicode Standard's practice would have it. */
        continuations = 2;
        value = lead & 0x0fu;
        lower = lead == 0xe0 ? 0xa0 : 0x80;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        /* No overlong forms (F0 80-8F) and nothing past U+10FFFF (F4 90-BF). */
        continuations = 3;
        value = lead & 0x07u;
        lower = lead == 0xf0 ? 0x90 : 0x80;
        upper = lead == 0xf4 ? 0x8f : 0xbf;
    } else {
        *code_point = MALFORMED;
        return 1;
    }
    for (size_t i = 1; i <= continuations; i++) {
        if (i >= len || p[i] < lower || p[i] > upper) {
            *code_point = MALFORMED;
            return i;
        }
        value = value << 6 | (p[i] & 0x3fu);
        lower = 0x80;
        upper = 0xbf;
    }
    *code_point = value >= 0xd800 && value <= 0xdfff ? MALFORMED : value;
    return continuations + 1;
}

/* The length of the longest prefix of P (LEN bytes) that is valid UTF-8. */
static size_t valid_prefix(const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t code_point;
        size_t n = decode(p + i, len - i, &code_point);
        if (code_point == MALFORMED)
            return i;
        i += n;
    }
    return len;
}

/*
 * Feeds UPDATE the UTF-8 of the string that KEY (LEN bytes) decodes to: its valid
 * runs as they are, U+FFFD for each malformed subpart.
 */
static void feed_decoded_utf8(const uint8_t *key, size_t len,
                              void (*update)(void *state, const uint8_t *, size_t),
                              void *state)
{
    size_t i = 0;
    while (i < len) {
        size_t run = valid_prefix(key + i, len - i);
        if (run > 0)
            update(state, key + i, run);
        i += run;
        if (i < len) {
            uint32_t code_point;
            i += decode(key + i, len - i, &code_point);
            update(state, replacement_utf8, sizeof(replacement_utf8));
        }
    }
}

static void md5_update_bytes(void *state, const uint8_t *data, size_t len)
{
    md5_update(state, len, data);
}

static void crc32_update_bytes(void *state, const uint8_t *data, size_t len)
{
    uint32_t *crc = state;
    *crc = shmring__crc32_update(*crc, data, len);
}

static uint32_t ketama_hash(const uint8_t *key, size_t len)
{
    if (valid_prefix(key, len) == len)
        return shmring__ketama_key_hash(key, len);
    struct md5_ctx ctx;
    uint8_t digest[MD5_DIGEST_SIZE];
    md5_init(&ctx);
    feed_decoded_utf8(key, len, md5_update_bytes, &ctx);
    md5_digest(&ctx, sizeof(digest), digest);
    return shmring__load_le32(digest);
}

static uint32_t crc_hash(const uint8_t *key, size_t len)
{
    uint32_t crc = 0;
    if (valid_prefix(key, len) == len)
        crc = shmring__crc32(key, len);
    else
        feed_decoded_utf8(key, len, crc32_update_bytes, &crc);
    return (crc >> 16) & 0x7fffu;
}

/* One UTF-16 code unit UNIT into the running hash H of the unit hash HASH. */
static inline uint64_t unit_step(shmring_hash_t hash, uint64_t h, uint32_t unit)
{
    switch (hash) {
    case SHMRING_HASH_NATIVE:
        return h * 31 + unit;
    case SHMRING_HASH_FNV1_64:
        return (h * FNV_64_PRIME) ^ unit;
    case SHMRING_HASH_FNV1A_64:
        return (h ^ unit) * FNV_64_PRIME;
    case SHMRING_HASH_FNV1_32:
        return (h * FNV_32_PRIME) ^ unit;
    case SHMRING_HASH_FNV1A_32:
    default:
        return (h ^ unit) * FNV_32_PRIME;
    }
}

/* A hash over the UTF-16 code units of the string KEY decodes to. */
static uint32_t unit_hash(shmring_hash_t hash, const uint8_t *key, size_t len)
{
    uint64_t h = hash == SHMRING_HASH_NATIVE ? 0
                 : hash == SHMRING_HASH_FNV1_64 || hash == SHMRING_HASH_FNV1A_64
                     ? FNV_64_INIT
                     : FNV_32_INIT;
    size_t i = 0;
    while (i < len) {
        if (key[i] < 0x80) {
            h = unit_step(hash, h, key[i++]);
            continue;
        }
        uint32_t code_point;
        i += decode(key + i, len - i, &code_point);
        if (code_point == MALFORMED) {
            h = unit_step(hash, h, REPLACEMENT_CHARACTER);
        } else if (code_point >= 0x10000) {
            /* A supplementary character is two chars in Java: its surrogate pair. */
            h = unit_step(hash, h, 0xd800u + ((code_point - 0x10000u) >> 10));
            h = unit_step(hash, h, 0xdc00u + (code_point & 0x3ffu));
        } else {
            h = unit_step(hash, h, code_point);
        }
    }
    return (uint32_t)h;
}

uint32_t shmring__spymemcached_hash(shmring_hash_t hash, const void *key, size_t len)
{
    switch (hash) {
    case SHMRING_HASH_MD5:
        return ketama_hash(key, len);
    case SHMRING_HASH_CRC32:
        return crc_hash(key, len);
    default:
        return unit_hash(hash, key, len);
    }
}
