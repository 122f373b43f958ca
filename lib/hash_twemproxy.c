/*
 * twemproxy's key hashes: the twelve functions of nutcracker's `hash:` option
 * (twemproxy 0.5.0, src/hashkit/), reproduced bit for bit, quirks included:
 *
 * - nutcracker reads keys as `char`, which is signed on x86 and x86-64, and several
 *   functions widen a key byte straight from it, so a byte >= 0x80 enters them
 *   sign-extended (0xe9 as 0xffffffe9). signed_byte() does that on every host, so a
 *   ring agrees with nutcracker as Debian builds it for amd64 whatever our own
 *   `char` is (an arm64 nutcracker, whose `char` is unsigned, differs from itself).
 * - fnv1a_64 is FNV-1a with the 64-bit offset basis and prime truncated to 32 bits;
 *   fnv1_64 is true 64-bit FNV-1, truncated at the end.
 * - crc16 never masks its register to 16 bits: the bits shifted past bit 15 stay in
 *   the 32-bit result.
 * - crc32 is libmemcached's: bits 16-30 of the CRC-32; crc32a is the CRC-32 itself.
 * - murmur is MurmurHash2 seeded with 0xdeadbeef x length; jenkins is Bob Jenkins'
 *   lookup3 hashlittle() with initval 13.
 */
#include <string.h>

#include "hash_internal.h"

/* A key byte as nutcracker's `char` gives it to `(uint32_t)key[i]` on x86. */
static inline uint32_t signed_byte(uint8_t byte)
{
    return (uint32_t)(int32_t)(int8_t)byte;
}

static uint32_t one_at_a_time(const uint8_t *key, size_t len)
{
    uint32_t value = 0;
    for (size_t i = 0; i < len; i++) {
        value += signed_byte(key[i]);
        value += value << 10;
        value ^= value >> 6;
    }
    value += value << 3;
    value ^= value >> 11;
    value += value << 15;
    return value;
}

/* The CRC-16/XMODEM step table (polynomial 0x1021, MSB first): entry i is the CRC
 * register after shifting the byte i through it. */
static const uint16_t crc16_table[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7, 0x8108, 0x9129,
    0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef, 0x1231, 0x0210, 0x3273, 0x2252,
    0x52b5, 0x4294, 0x72f7, 0x62d6, 0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c,
    0xf3ff, 0xe3de, 0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
    0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d, 0x3653, 0x2672,
    0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4, 0xb75b, 0xa77a, 0x9719, 0x8738,
    0xf7df, 0xe7fe, 0xd79d, 0xc7bc, 0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861,
    0x2802, 0x3823, 0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
    0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12, 0xdbfd, 0xcbdc,
    0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a, 0x6ca6, 0x7c87, 0x4ce4, 0x5cc5,
    0x2c22, 0x3c03, 0x0c60, 0x1c41, 0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b,
    0x8d68, 0x9d49, 0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
    0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78, 0x9188, 0x81a9,
    0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f, 0x1080, 0x00a1, 0x30c2, 0x20e3,
    0x5004, 0x4025, 0x7046, 0x6067, 0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c,
    0xe37f, 0xf35e, 0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d, 0x34e2, 0x24c3,
    0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405, 0xa7db, 0xb7fa, 0x8799, 0x97b8,
    0xe75f, 0xf77e, 0xc71d, 0xd73c, 0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676,
    0x4615, 0x5634, 0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3, 0xcb7d, 0xdb5c,
    0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a, 0x4a75, 0x5a54, 0x6a37, 0x7a16,
    0x0af1, 0x1ad0, 0x2ab3, 0x3a92, 0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b,
    0x9de8, 0x8dc9, 0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
    0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8, 0x6e17, 0x7e36,
    0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

static uint32_t crc16(const uint8_t *key, size_t len)
{
    uint32_t crc = 0;
    for (size_t i = 0; i < len; i++)
        crc = (crc << 8) ^ crc16_table[((crc >> 8) ^ key[i]) & 0xff];
    return crc;
}

static uint32_t crc32a(const uint8_t *key, size_t len)
{
    return shmring__crc32(key, len);
}

static uint32_t crc32_libmemcached(const uint8_t *key, size_t len)
{
    return (shmring__crc32(key, len) >> 16) & 0x7fff;
}

#define FNV_64_INIT UINT64_C(0xcbf29ce484222325)
#define FNV_64_PRIME UINT64_C(0x100000001b3)
#define FNV_32_INIT UINT32_C(2166136261)
#define FNV_32_PRIME UINT32_C(16777619)

static uint32_t fnv1_64(const uint8_t *key, size_t len)
{
    uint64_t hash = FNV_64_INIT;
    for (size_t i = 0; i < len; i++) {
        hash *= FNV_64_PRIME;
        hash ^= (uint64_t)(int64_t)(int8_t)key[i];
    }
    return (uint32_t)hash;
}

static uint32_t fnv1a_64(const uint8_t *key, size_t len)
{
    uint32_t hash = (uint32_t)FNV_64_INIT;
    for (size_t i = 0; i < len; i++) {
        hash ^= signed_byte(key[i]);
        hash *= (uint32_t)FNV_64_PRIME;
    }
    return hash;
}

static uint32_t fnv1_32(const uint8_t *key, size_t len)
{
    uint32_t hash = FNV_32_INIT;
    for (size_t i = 0; i < len; i++) {
        hash *= FNV_32_PRIME;
        hash ^= signed_byte(key[i]);
    }
    return hash;
}

static uint32_t fnv1a_32(const uint8_t *key, size_t len)
{
    uint32_t hash = FNV_32_INIT;
    for (size_t i = 0; i < len; i++) {
        hash ^= signed_byte(key[i]);
        hash *= FNV_32_PRIME;
    }
    return hash;
}

static inline uint32_t load_le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/* Paul Hsieh's SuperFastHash as twemproxy has it (16-bit reads little-endian). */
static uint32_t hsieh(const uint8_t *key, size_t len)
{
    if (len == 0)
        return 0;
    uint32_t hash = 0;
    size_t rest = len & 3;
    for (size_t blocks = len >> 2; blocks > 0; blocks--) {
        hash += load_le16(key);
        uint32_t tmp = (load_le16(key + 2) << 11) ^ hash;
        hash = (hash << 16) ^ tmp;
        key += 4;
        hash += hash >> 11;
    }
    switch (rest) {
    case 3:
        hash += load_le16(key);
        hash ^= hash << 16;
        hash ^= signed_byte(key[2]) << 18;
        hash += hash >> 11;
        break;
    case 2:
        hash += load_le16(key);
        hash ^= hash << 11;
        hash += hash >> 17;
        break;
    case 1:
        hash += key[0];
        hash ^= hash << 10;
        hash += hash >> 1;
        break;
    default:
        break;
    }
    hash ^= hash << 3;
    hash += hash >> 5;
    hash ^= hash << 4;
    hash += hash >> 17;
    hash ^= hash << 25;
    hash += hash >> 6;
    return hash;
}

static inline uint32_t rotl32(uint32_t x, int k)
{
    return (x << k) | (x >> (32 - k));
}

/*
 * lookup3's mix() and final() are rounds of one step each, applied to the three state
 * words in turn: mix() steps (a, c, b), (b, a, c), (c, b, a) twice with its six
 * rotations; final() steps c, a, b, c, a, b, c, each by the word before it.
 */
enum { WORD_A, WORD_B, WORD_C };

static void lookup3_mix(uint32_t word[3])
{
    static const int rotations[6] = {4, 6, 8, 16, 19, 4};
    for (int i = 0; i < 6; i++) {
        uint32_t *x = &word[i % 3], *y = &word[(i + 2) % 3];
        *x -= *y;
        *x ^= rotl32(*y, rotations[i]);
        *y += word[(i + 1) % 3];
    }
}

static void lookup3_final(uint32_t word[3])
{
    static const int rotations[7] = {14, 11, 25, 16, 4, 14, 24};
    for (int i = 0; i < 7; i++) {
        uint32_t *x = &word[(i + 2) % 3], y = word[(i + 1) % 3];
        *x ^= y;
        *x -= rotl32(y, rotations[i]);
    }
}

/*
 * lookup3's hashlittle(): its aligned and unaligned paths give the same value on a
 * little-endian host, which is this byte-wise reading of the key as little-endian
 * words, the last one zero-padded.
 */
static uint32_t jenkins(const uint8_t *key, size_t len)
{
    uint32_t start = 0xdeadbeef + (uint32_t)len + 13;
    uint32_t word[3] = {start, start, start};
    while (len > 12) {
        for (int i = 0; i < 3; i++)
            word[i] += shmring__load_le32(key + 4 * i);
        lookup3_mix(word);
        len -= 12;
        key += 12;
    }
    if (len == 0)
        return word[WORD_C];
    uint8_t tail[12] = {0};
    memcpy(tail, key, len);
    for (int i = 0; i < 3; i++)
        word[i] += shmring__load_le32(tail + 4 * i);
    lookup3_final(word);
    return word[WORD_C];
}

/* MurmurHash2, 32-bit, seed 0xdeadbeef x length (32-bit reads little-endian). */
static uint32_t murmur(const uint8_t *key, size_t len)
{
    const uint32_t m = 0x5bd1e995;
    uint32_t h = (0xdeadbeef * (uint32_t)len) ^ (uint32_t)len;
    while (len >= 4) {
        uint32_t k = shmring__load_le32(key);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
        key += 4;
        len -= 4;
    }
    /* The 0-3 bytes left, as the reference's falling-through switch takes them. */
    if (len == 3)
        h ^= (uint32_t)key[2] << 16;
    if (len >= 2)
        h ^= (uint32_t)key[1] << 8;
    if (len >= 1) {
        h ^= key[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

/* The function of each name of nutcracker's `hash:` option that nutcracker computes
 * its own way, by our code for it (md5 is the one it shares with libmemcached). */
static uint32_t (*const twemproxy_hashes[])(const uint8_t *key, size_t len) = {
    [SHMRING_HASH_FNV1_64] = fnv1_64, [SHMRING_HASH_FNV1A_64] = fnv1a_64,
    [SHMRING_HASH_FNV1_32] = fnv1_32, [SHMRING_HASH_FNV1A_32] = fnv1a_32,
    [SHMRING_HASH_CRC16] = crc16,     [SHMRING_HASH_CRC32] = crc32_libmemcached,
    [SHMRING_HASH_CRC32A] = crc32a,   [SHMRING_HASH_ONE_AT_A_TIME] = one_at_a_time,
    [SHMRING_HASH_JENKINS] = jenkins, [SHMRING_HASH_HSIEH] = hsieh,
    [SHMRING_HASH_MURMUR] = murmur,
};

uint32_t shmring__twemproxy_hash(shmring_hash_t hash, const void *key, size_t len)
{
    /* nutcracker's md5 takes the digest's first little-endian word, as libmemcached's
     * ketama does. */
    if (hash == SHMRING_HASH_MD5)
        return shmring__ketama_key_hash(key, len);
    /* A twemproxy node set takes only these hashes (shmring_params_check()); any
     * other code gets nutcracker's default, fnv1a_64. */
    if ((unsigned)hash < sizeof(twemproxy_hashes) / sizeof(twemproxy_hashes[0]) &&
        twemproxy_hashes[hash] != NULL)
        return twemproxy_hashes[hash](key, len);
    return fnv1a_64(key, len);
}
