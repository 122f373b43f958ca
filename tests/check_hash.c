/*
 * Tests of lib/hash.c: every hash against published or independently computed
 * vectors. The MurmurHash3 constants come from a separate reimplementation of
 * Appleby's MurmurHash3_x64_128 (seed 0, first 64-bit half), which also reproduces
 * the widely published digest of "The quick brown fox jumps over the lazy dog"
 * (6c1b07bc7bbc4be347939ac4a93c437a).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "hash_internal.h"
#include "test_support.h"

static uint64_t hash_str(shmring_hash_t hash, const char *s)
{
    return shmring__hash64(hash, s, strlen(s));
}

static void digest_hex(const uint8_t digest[16], char out[33])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[32] = '\0';
}

/* ---- md5 ---- */

START_TEST(md5_digests)
{
    static const struct {
        const char *input;
        const char *digest;
    } vectors[] = {
        /* RFC 1321, appendix A.5. */
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"1234567890123456789012345678901234567890123456789012345678901234567890123456789"
         "0",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        uint8_t digest[16];
        char hex[33];
        shmring__md5(vectors[i].input, strlen(vectors[i].input), digest);
        digest_hex(digest, hex);
        ck_assert_str_eq(hex, vectors[i].digest);
    }
}
END_TEST

START_TEST(md5_hash64_is_first_eight_bytes_little_endian)
{
    /* d41d8cd9 8f00b204 ... read as two little-endian words, low word first. */
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MD5, ""), UINT64_C(0x04b2008fd98c1dd4));
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MD5, "abc"), UINT64_C(0xb04fd23c98500190));
}
END_TEST

START_TEST(ketama_key_hash_is_first_word)
{
    /* libhashkit's hashkit_md5: results[3] << 24 | ... | results[0]. */
    ck_assert_uint_eq(shmring__ketama_key_hash("", 0), 0xd98c1dd4u);
    ck_assert_uint_eq(shmring__ketama_key_hash("abc", 3), 0x98500190u);
    ck_assert_uint_eq(
        shmring__key_hash(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, "abc", 3),
        UINT64_C(0x98500190) << 32);
}
END_TEST

/* ---- fnv1a, crc32 ---- */

START_TEST(fnv1a_vectors)
{
    /* The FNV reference test suite (Noll), 64-bit FNV-1a. */
    ck_assert_uint_eq(hash_str(SHMRING_HASH_FNV1A, ""), UINT64_C(0xcbf29ce484222325));
    ck_assert_uint_eq(hash_str(SHMRING_HASH_FNV1A, "a"), UINT64_C(0xaf63dc4c8601ec8c));
    ck_assert_uint_eq(hash_str(SHMRING_HASH_FNV1A, "foobar"),
                      UINT64_C(0x85944171f73967e8));
}
END_TEST

/* CRC-32 as a key hash: lib/crc32.c's CRC (check_crc32 tests it) in the top 32 bits
 * of the 64-bit hash. */
START_TEST(crc32_key_hash)
{
    ck_assert_uint_eq(hash_str(SHMRING_HASH_CRC32, "123456789"), UINT64_C(0xcbf43926)
                                                                     << 32);
    ck_assert_uint_eq(hash_str(SHMRING_HASH_CRC32, ""), 0);
    ck_assert_uint_eq(hash_str(SHMRING_HASH_CRC32, "a"), UINT64_C(0xe8b7be43) << 32);
}
END_TEST

/* ---- murmur3 ---- */

START_TEST(murmur3_strings)
{
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MURMUR3, ""), 0);
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MURMUR3, "a"), UINT64_C(0x85555565f6597889));
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MURMUR3, "hello"),
                      UINT64_C(0xcbd8a7b341bd9b02));
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MURMUR3, "123456789"),
                      UINT64_C(0x3c84645edb66cca4));
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MURMUR3, "0123456789abcdef"),
                      UINT64_C(0x4be06d94cf4ad1a7));
    ck_assert_uint_eq(hash_str(SHMRING_HASH_MURMUR3, "0123456789abcdefg"),
                      UINT64_C(0x8e32612daa45f9de));
    ck_assert_uint_eq(
        hash_str(SHMRING_HASH_MURMUR3, "The quick brown fox jumps over the lazy dog"),
        UINT64_C(0xe34bbc7bbc071b6c));
}
END_TEST

/* MurmurHash3_x64_128 (seed 0, h1) of the bytes 0, 1, ..., n - 1 for n = 0..32:
 * every tail length twice, and one and two whole blocks. */
static const uint64_t murmur3_prefixes[33] = {
    UINT64_C(0x0000000000000000), UINT64_C(0x4610abe56eff5cb5),
    UINT64_C(0x7cb3f5c58dab264c), UINT64_C(0xb872a12fef53e6be),
    UINT64_C(0xe1c594ae0ddfaf10), UINT64_C(0x41ee8cd4a6f94036),
    UINT64_C(0x66983abba4f5043c), UINT64_C(0xbd4c6987ca4b0d68),
    UINT64_C(0x47a7e1bdd68e2fc8), UINT64_C(0xfbb4cb0f6e812d32),
    UINT64_C(0xcfca25e89e58e463), UINT64_C(0xc57b4f47c7564f88),
    UINT64_C(0xb35da7e69212a5ca), UINT64_C(0x4b52d9f2c55f41c2),
    UINT64_C(0x5fa933ee35906d64), UINT64_C(0x47231598fd4925e9),
    UINT64_C(0x444924b591903f30), UINT64_C(0x5c76f40f9fe7c20e),
    UINT64_C(0x1648e4d1bae9c47b), UINT64_C(0xa665a45564a30163),
    UINT64_C(0xa3d253705736954b), UINT64_C(0xcdd13da028d41203),
    UINT64_C(0x45f8f3bf27c12a71), UINT64_C(0xb9a1376f153581db),
    UINT64_C(0x734e846275b2dfde), UINT64_C(0x3bbe7cb52ee982cb),
    UINT64_C(0xa515dcfe02226f72), UINT64_C(0x111602884d592eed),
    UINT64_C(0xdc14ff62ee05813c), UINT64_C(0xaae494b11518cf1a),
    UINT64_C(0xf069080d38a201e3), UINT64_C(0x053dd3e1a32cd094),
    UINT64_C(0xc66d9022b62f500f),
};

START_TEST(murmur3_every_tail_length)
{
    uint8_t bytes[33];
    for (int i = 0; i < 33; i++)
        bytes[i] = (uint8_t)i;
    for (size_t n = 0; n <= 32; n++) {
        uint64_t got = shmring__hash64(SHMRING_HASH_MURMUR3, bytes, n);
        ck_assert_msg(got == murmur3_prefixes[n], "length %zu: got 0x%016llx", n,
                      (unsigned long long)got);
    }
}
END_TEST

/* ---- xxh3 ---- */

START_TEST(xxh3_matches_libxxhash)
{
    ck_assert_uint_eq(shmring__hash64(SHMRING_HASH_XXH3, "", 0),
                      UINT64_C(0x2d06800538d394c2));
    uint8_t data[1024];
    uint64_t state = 42;
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)test_random(&state);
    /* Every length up to 300 crosses all of xxh3's short-input code paths. */
    for (size_t n = 0; n <= 300; n++)
        ck_assert_uint_eq(shmring__hash64(SHMRING_HASH_XXH3, data, n),
                          XXH3_64bits(data, n));
    ck_assert_uint_eq(shmring__hash64(SHMRING_HASH_XXH3, data, sizeof(data)),
                      XXH3_64bits(data, sizeof(data)));
}
END_TEST

/* ---- key hashes ---- */

START_TEST(key_hash_follows_algorithm)
{
    static const shmring_hash_t hashes[] = {SHMRING_HASH_XXH3, SHMRING_HASH_MD5,
                                            SHMRING_HASH_CRC32, SHMRING_HASH_FNV1A,
                                            SHMRING_HASH_MURMUR3};
    const char *key = "user:1234";
    for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
        uint64_t expected = hash_str(hashes[i], key);
        ck_assert_uint_eq(
            shmring__key_hash(SHMRING_ALGORITHM_RING, hashes[i], key, strlen(key)),
            expected);
        ck_assert_uint_eq(
            shmring__key_hash(SHMRING_ALGORITHM_MAGLEV, hashes[i], key, strlen(key)),
            expected);
    }
    ck_assert_uint_eq(
        shmring__key_hash(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, key, strlen(key)),
        (uint64_t)shmring__ketama_key_hash(key, strlen(key)) << 32);
}
END_TEST

START_TEST(hashes_differ_from_each_other)
{
    /* A switch that fell through to the wrong case would make two hashes agree. */
    static const shmring_hash_t hashes[] = {SHMRING_HASH_XXH3, SHMRING_HASH_MD5,
                                            SHMRING_HASH_CRC32, SHMRING_HASH_FNV1A,
                                            SHMRING_HASH_MURMUR3};
    for (size_t i = 0; i < 5; i++) {
        for (size_t j = i + 1; j < 5; j++)
            ck_assert_uint_ne(hash_str(hashes[i], "key"), hash_str(hashes[j], "key"));
    }
}
END_TEST

/* Keys of every shape a key hash treats apart: ASCII, UTF-8 beyond ASCII (bytes
 * >= 0x80, which nutcracker's signed `char` widens, and a character beyond U+FFFF,
 * two UTF-16 code units to spymemcached), the empty key; and keys that are not UTF-8
 * (bytes that never are, an encoded surrogate), which spymemcached decodes first. */
#define SAMPLE_KEYS 64

static size_t sample_key(char *buf, size_t i, bool utf8)
{
    static const char *const utf8_prefixes[] = {
        "key:", "caf\xc3\xa9:", "\xf0\x9f\x98\x80", "\xe2\x82\xac"};
    static const char *const other_prefixes[] = {"\xff\xfe", "\xed\xa0\x80", "a\xc3"};
    if (utf8 && i == 0)
        return 0;
    const char *prefix = utf8 ? utf8_prefixes[i % COUNT_OF(utf8_prefixes)]
                              : other_prefixes[i % COUNT_OF(other_prefixes)];
    return (size_t)snprintf(buf, 32, "%s%zu", prefix, i);
}

/* One (algorithm, hash) pair that a node set may have, with its key hashes of the
 * sample keys that are UTF-8 and of those that are not. */
struct key_hash_use {
    const struct placement_algorithm *algorithm;
    shmring_hash_t hash;
    uint64_t utf8[SAMPLE_KEYS];
    uint64_t other[SAMPLE_KEYS];
};

/* Every algorithm with every hash it takes. */
static size_t key_hash_uses(struct key_hash_use *uses, size_t room)
{
    size_t count = 0;
    for (size_t a = 0; a < shmring__algorithm_count(); a++) {
        const struct placement_algorithm *algorithm = shmring__algorithm((unsigned)a);
        for (unsigned h = 0; algorithm != NULL && h < 64; h++) {
            if ((algorithm->hashes & PLACEMENT_HASH_BIT(h)) == 0)
                continue;
            ck_assert_uint_lt(count, room);
            struct key_hash_use *use = &uses[count++];
            use->algorithm = algorithm;
            use->hash = (shmring_hash_t)h;
            for (size_t k = 0; k < SAMPLE_KEYS; k++) {
                char key[32];
                size_t len = sample_key(key, k, true);
                use->utf8[k] = shmring__key_hash_any(algorithm->id, use->hash, key, len);
                len = sample_key(key, k, false);
                use->other[k] = shmring__key_hash_any(algorithm->id, use->hash, key, len);
            }
        }
    }
    return count;
}

/*
 * shmring__key_hash_same() against the key hashes themselves, for every two
 * (algorithm, hash) pairs a node set may have: when it says same, every sample key
 * that is UTF-8 has one hash by both, and so has every other key unless spymemcached
 * hashes it; when it says different, some sample key's hashes differ.
 */
START_TEST(key_hash_same_iff_equal_hashes)
{
    static struct key_hash_use uses[256];
    size_t count = key_hash_uses(uses, COUNT_OF(uses));
    size_t same_pairs = 0, same_kinds_differ = 0;
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; j < count; j++) {
            const struct key_hash_use *x = &uses[i], *y = &uses[j];
            bool same = shmring__key_hash_same(x->algorithm->key_hash, x->hash,
                                               y->algorithm->key_hash, y->hash);
            bool equal = memcmp(x->utf8, y->utf8, sizeof(x->utf8)) == 0;
            bool spymemcached = x->algorithm->key_hash == KEY_HASH_SPYMEMCACHED ||
                                y->algorithm->key_hash == KEY_HASH_SPYMEMCACHED;
            if (!spymemcached)
                equal = equal && memcmp(x->other, y->other, sizeof(x->other)) == 0;
            ck_assert_msg(same == equal, "%s/%s against %s/%s: same %d, equal %d",
                          x->algorithm->name, shmring_hash_name(x->hash),
                          y->algorithm->name, shmring_hash_name(y->hash), same, equal);
            same_pairs += same && i < j;
            same_kinds_differ += same && x->algorithm->key_hash != y->algorithm->key_hash;
        }
    }
    /* Not vacuous: the table has pairs of both answers, across kinds too. */
    ck_assert_uint_gt(same_kinds_differ, 0);
    ck_assert_uint_gt(count * (count - 1) / 2, same_pairs);
}
END_TEST

/*
 * Every sample key's hash is in its range, and the range is not wider than the
 * hashes: some of the 128 keys reach its top half (all of them miss it with a chance
 * of 2^-128 for a hash that fills it evenly; djb2 of short keys, which does not,
 * still reaches it).
 */
START_TEST(key_hash_range_holds_the_hashes)
{
    static struct key_hash_use uses[256];
    size_t count = key_hash_uses(uses, COUNT_OF(uses));
    size_t narrow = 0;
    for (size_t i = 0; i < count; i++) {
        const struct key_hash_use *use = &uses[i];
        struct key_hash_range range =
            shmring__key_hash_range(use->algorithm->key_hash, use->hash);
        ck_assert_uint_le(range.bits + range.shift, 64);
        if (range.bits == 64)
            continue;
        narrow += range.bits < 32;
        uint64_t highest = 0;
        for (size_t k = 0; k < 2 * SAMPLE_KEYS; k++) {
            uint64_t value = k < SAMPLE_KEYS ? use->utf8[k] : use->other[k - SAMPLE_KEYS];
            uint64_t m = (value - range.offset) >> range.shift;
            ck_assert_msg((value - range.offset) % (UINT64_C(1) << range.shift) == 0 &&
                              m < (UINT64_C(1) << range.bits),
                          "%s/%s: %" PRIx64 " is not in its range", use->algorithm->name,
                          shmring_hash_name(use->hash), value);
            highest = m > highest ? m : highest;
        }
        ck_assert_msg(highest >= (UINT64_C(1) << (range.bits - 1)),
                      "%s/%s: no hash in the top half of its range", use->algorithm->name,
                      shmring_hash_name(use->hash));
    }
    /* twemproxy's and spymemcached's crc32. */
    ck_assert_uint_eq(narrow, 2);
}
END_TEST

/* The one difference that shmring__key_hash_same() leaves out: spymemcached's md5 of
 * a key that is not UTF-8 is the MD5 of the string it decodes to. */
START_TEST(key_hash_same_spymemcached_not_utf8)
{
    const char *key = "\xff\xfe";
    ck_assert(shmring__key_hash_same(KEY_HASH_SPYMEMCACHED, SHMRING_HASH_MD5,
                                     KEY_HASH_KETAMA, SHMRING_HASH_MD5));
    ck_assert_uint_ne(
        shmring__key_hash_by(KEY_HASH_SPYMEMCACHED, SHMRING_HASH_MD5, key, strlen(key)),
        shmring__key_hash_by(KEY_HASH_KETAMA, SHMRING_HASH_MD5, key, strlen(key)));
    /* Two U+FFFD, whose UTF-8 is what spymemcached hashes for it. */
    const char *decoded = "\xef\xbf\xbd\xef\xbf\xbd";
    ck_assert_uint_eq(
        shmring__key_hash_by(KEY_HASH_SPYMEMCACHED, SHMRING_HASH_MD5, key, strlen(key)),
        shmring__key_hash_by(KEY_HASH_KETAMA, SHMRING_HASH_MD5, decoded,
                             strlen(decoded)));
}
END_TEST

/* The pairs whose answer the moved-share prediction turned on, by name. */
START_TEST(key_hash_same_named_pairs)
{
    /* ring's md5 is 64 bits of the MD5, ketama's its first word in the top half. */
    ck_assert(!shmring__key_hash_same(KEY_HASH_PARAMS, SHMRING_HASH_MD5, KEY_HASH_KETAMA,
                                      SHMRING_HASH_MD5));
    /* ketama reads no hash: libmemcached's and libketama's are one. */
    ck_assert(shmring__key_hash_same(KEY_HASH_KETAMA, SHMRING_HASH_MD5, KEY_HASH_KETAMA,
                                     SHMRING_HASH_XXH3));
    ck_assert(!shmring__key_hash_same(KEY_HASH_PARAMS, SHMRING_HASH_XXH3, KEY_HASH_PARAMS,
                                      SHMRING_HASH_MD5));
    ck_assert(shmring__key_hash_same(KEY_HASH_TWEMPROXY, SHMRING_HASH_MD5,
                                     KEY_HASH_KETAMA, SHMRING_HASH_MD5));
    ck_assert(shmring__key_hash_same(KEY_HASH_HASHRING, SHMRING_HASH_MD5, KEY_HASH_KETAMA,
                                     SHMRING_HASH_MD5));
    ck_assert(!shmring__key_hash_same(KEY_HASH_HASHRING, SHMRING_HASH_SHA1,
                                      KEY_HASH_KETAMA, SHMRING_HASH_MD5));
    ck_assert(shmring__key_hash_same(KEY_HASH_PARAMS, SHMRING_HASH_CRC32, KEY_HASH_CRC32,
                                     SHMRING_HASH_CRC32));
    ck_assert(shmring__key_hash_same(KEY_HASH_TWEMPROXY, SHMRING_HASH_CRC32A,
                                     KEY_HASH_CRC32, SHMRING_HASH_CRC32));
    ck_assert(shmring__key_hash_same(KEY_HASH_HAPROXY, SHMRING_HASH_CRC32, KEY_HASH_CRC32,
                                     SHMRING_HASH_CRC32));
    /* The same hash parameter, another function: libmemcached's fifteen bits. */
    ck_assert(!shmring__key_hash_same(KEY_HASH_TWEMPROXY, SHMRING_HASH_CRC32,
                                      KEY_HASH_CRC32, SHMRING_HASH_CRC32));
    ck_assert(shmring__key_hash_same(KEY_HASH_SPYMEMCACHED, SHMRING_HASH_CRC32,
                                     KEY_HASH_TWEMPROXY, SHMRING_HASH_CRC32));
    ck_assert(!shmring__key_hash_same(KEY_HASH_SPYMEMCACHED, SHMRING_HASH_FNV1A_32,
                                      KEY_HASH_TWEMPROXY, SHMRING_HASH_FNV1A_32));
    ck_assert(!shmring__key_hash_same(KEY_HASH_UHASHRING, SHMRING_HASH_KETAMA,
                                      KEY_HASH_KETAMA, SHMRING_HASH_MD5));
    /* Envoy's xxHash64, whatever the points' hash. */
    ck_assert(shmring__key_hash_same(KEY_HASH_XXH64, SHMRING_HASH_MURMUR2, KEY_HASH_XXH64,
                                     SHMRING_HASH_XXH64));
}
END_TEST

static Suite *hash_suite(void)
{
    Suite *s = suite_create("hash");
    TEST_CASE(s, "md5", md5_digests, md5_hash64_is_first_eight_bytes_little_endian,
              ketama_key_hash_is_first_word);
    TEST_CASE(s, "fnv1a_crc32", fnv1a_vectors, crc32_key_hash);
    TEST_CASE(s, "murmur3", murmur3_strings, murmur3_every_tail_length);
    TEST_CASE(s, "xxh3", xxh3_matches_libxxhash);
    TEST_CASE(s, "key_hash", key_hash_follows_algorithm, hashes_differ_from_each_other,
              key_hash_same_iff_equal_hashes, key_hash_same_spymemcached_not_utf8,
              key_hash_same_named_pairs, key_hash_range_holds_the_hashes);
    return s;
}

int main(void)
{
    return test_run_suite(hash_suite());
}
