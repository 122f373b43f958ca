/*
 * Tests of lib/hash_twemproxy.c: nutcracker's twelve key hashes against published
 * vectors where they exist (lookup3.c's driver, the CRC catalogue's check values,
 * Noll's FNV test suite) and, for the rest and for nutcracker's quirks, against the
 * values tests/vectors/twemproxy_hashes.py prints: a separate Python implementation
 * of the published definitions that first checks itself against those vectors.
 */
#include <string.h>

#include "hash_internal.h"
#include "test_support.h"

static uint32_t twemproxy(shmring_hash_t hash, const char *key, size_t len)
{
    return shmring__twemproxy_hash(hash, key, len);
}

/* The keys of the table below: empty, each tail length of the 4-byte readers, lookup3's
 * two-block key, and keys with bytes >= 0x80, which nutcracker reads sign-extended. */
static const struct {
    const char *bytes;
    size_t length;
} keys[] = {
    {"", 0},          {"a", 1},
    {"ab", 2},        {"abc", 3},
    {"123456789", 9}, {"Four score and seven years ago", 30},
    {"\xe9t\xe9", 3}, {"key\xff\x80-13-bytes!", 15},
};

static const struct {
    shmring_hash_t hash;
    uint32_t values[COUNT_OF(keys)];
} vectors[] = {
    {SHMRING_HASH_ONE_AT_A_TIME,
     {0x00000000, 0xca2e9442, 0x45e61e58, 0xed131f5b, 0xc66b58c5, 0x5554a59f, 0x8c711b75,
      0x12123abc}},
    {SHMRING_HASH_MD5,
     {0xd98c1dd4, 0xb975c10c, 0x43f47e18, 0x98500190, 0x94e7f925, 0x8482c88b, 0x306eb070,
      0xead60774}},
    {SHMRING_HASH_CRC16,
     {0x00000000, 0x00007c87, 0x007c74ff, 0x7c749dd6, 0x869031c3, 0xbe60a5ef, 0x6c94963a,
      0x13768c12}},
    {SHMRING_HASH_CRC32,
     {0x00000000, 0x000068b7, 0x00001e83, 0x00003524, 0x00004bf4, 0x00003cfe, 0x00004bf7,
      0x00004afb}},
    {SHMRING_HASH_CRC32A,
     {0x00000000, 0xe8b7be43, 0x9e83486d, 0x352441c2, 0xcbf43926, 0x3cfe93b8, 0xcbf7d413,
      0x4afb4b9f}},
    {SHMRING_HASH_FNV1_64,
     {0x84222325, 0x8601b7be, 0xb4eb37b8, 0x6bafadcb, 0x2bf916d6, 0xce2804c6, 0x6bd2a1ab,
      0x0355d1ef}},
    {SHMRING_HASH_FNV1A_64,
     {0x84222325, 0x8601ec8c, 0xb545986a, 0x0541574b, 0x23c6cdfc, 0x1987984c, 0xb5281ffb,
      0xba6acd13}},
    {SHMRING_HASH_FNV1_32,
     {0x811c9dc5, 0x050c5d7e, 0x70772d38, 0x439c2f4b, 0x24148816, 0xadc7c266, 0x387cffeb,
      0x5e46430f}},
    {SHMRING_HASH_FNV1A_32,
     {0x811c9dc5, 0xe40c292c, 0x4d2505ca, 0x1a47e90b, 0xbb86b11c, 0xdc02398c, 0xfb67177b,
      0x49748ff3}},
    {SHMRING_HASH_HSIEH,
     {0x00000000, 0x93642e87, 0x5b8c0ec3, 0xe5186b3a, 0xe4fc1670, 0x0c5fc188, 0x3a499135,
      0x5929277f}},
    {SHMRING_HASH_MURMUR,
     {0x00000000, 0x4b41757c, 0xe3b54dfb, 0x7b0cc428, 0xb7760690, 0x666caeaf, 0xf7762cff,
      0x30d30ce1}},
    {SHMRING_HASH_JENKINS,
     {0xdeadbefc, 0xe0a38690, 0xc1b5695b, 0x8f415600, 0x19777af6, 0x1ab867b2, 0x1fc3862b,
      0x300d62fb}},
};

START_TEST(every_hash_of_every_key)
{
    shmring_hash_t hash = vectors[_i].hash;
    for (size_t k = 0; k < COUNT_OF(keys); k++) {
        uint32_t got = twemproxy(hash, keys[k].bytes, keys[k].length);
        ck_assert_msg(got == vectors[_i].values[k], "%s of key %zu: 0x%08x, not 0x%08x",
                      shmring_hash_name(hash), k, got, vectors[_i].values[k]);
    }
}
END_TEST

START_TEST(published_vectors)
{
    /* The CRC-32 check value; libmemcached's crc32 keeps its bits 16-30. */
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_CRC32A, "123456789", 9), 0xcbf43926);
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_CRC32, "123456789", 9),
                      0xcbf43926 >> 16 & 0x7fff);
    /* CRC-16/XMODEM's check value 0x31c3 in the low 16 bits, with the bits nutcracker
     * never masks off above them. */
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_CRC16, "123456789", 9) & 0xffff, 0x31c3);
    ck_assert_uint_gt(twemproxy(SHMRING_HASH_CRC16, "123456789", 9), 0xffff);
    /* Noll's FNV-1 and FNV-1a of "a"; the 64-bit ones truncated to their low half. */
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_FNV1_32, "a", 1), 0x050c5d7e);
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_FNV1A_32, "a", 1), 0xe40c292c);
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_FNV1_64, "a", 1), 0x8601b7be);
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_FNV1A_64, "a", 1), 0x8601ec8c);
    /* Jenkins' one-at-a-time of "a" and of the pangram. */
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_ONE_AT_A_TIME, "a", 1), 0xca2e9442);
    static const char fox[] = "The quick brown fox jumps over the lazy dog";
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_ONE_AT_A_TIME, fox, strlen(fox)),
                      0x519e91f5);
    /* lookup3 of nothing is its seed: 0xdeadbeef + length 0 + initval 13. */
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_JENKINS, "", 0), 0xdeadbeef + 13);
    /* RFC 1321's MD5 of "a" is 0cc175b9...: its first word, little-endian. */
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_MD5, "a", 1), 0xb975c10c);
}
END_TEST

START_TEST(high_bytes_are_read_signed)
{
    /* "\xe9" as x86's signed char is 0xffffffe9: FNV-1a 32 of it is
     * (0x811c9dc5 ^ 0xffffffe9) x 16777619, not (0x811c9dc5 ^ 0xe9) x 16777619. */
    uint32_t signed_byte = (UINT32_C(0x811c9dc5) ^ UINT32_C(0xffffffe9)) * 16777619u;
    uint32_t unsigned_byte = (UINT32_C(0x811c9dc5) ^ UINT32_C(0xe9)) * 16777619u;
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_FNV1A_32, "\xe9", 1), signed_byte);
    ck_assert_uint_ne(signed_byte, unsigned_byte);
    /* crc32a goes through a table indexed by the byte itself: the sign does not
     * enter it, and it is the CRC-32 that lib/hash.c computes. */
    ck_assert_uint_eq(twemproxy(SHMRING_HASH_CRC32A, "\xe9", 1),
                      shmring__crc32("\xe9", 1));
}
END_TEST

START_TEST(key_hash_sits_in_the_top_half)
{
    /* A twemproxy ring compares 32-bit hashes as the top half of its 64-bit points. */
    for (size_t v = 0; v < COUNT_OF(vectors); v++) {
        for (size_t k = 0; k < COUNT_OF(keys); k++) {
            uint64_t got =
                shmring__key_hash_any(SHMRING_ALGORITHM_TWEMPROXY, vectors[v].hash,
                                      keys[k].bytes, keys[k].length);
            ck_assert_uint_eq(got, (uint64_t)vectors[v].values[k] << 32);
        }
    }
}
END_TEST

static Suite *hash_twemproxy_suite(void)
{
    Suite *s = suite_create("hash_twemproxy");
    TCase *tc = TEST_CASE(s, "vectors", published_vectors, high_bytes_are_read_signed,
                          key_hash_sits_in_the_top_half);
    tcase_add_loop_test(tc, every_hash_of_every_key, 0, (int)COUNT_OF(vectors));
    return s;
}

int main(void)
{
    return test_run_suite(hash_twemproxy_suite());
}
