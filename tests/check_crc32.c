/*
 * Tests of lib/crc32.c: the library's slicing-by-8 CRC-32 against the published check
 * value and against zlib's crc32(), an implementation apart from it, over every
 * length and alignment that its eight-byte steps and tails can meet.
 */
#include <string.h>

#include <zlib.h>

#include "hash_internal.h"
#include "test_support.h"

START_TEST(crc32_vectors)
{
    /* The CRC-32 check value (the CRC of "123456789") and the CRC of nothing. */
    ck_assert_uint_eq(shmring__crc32("123456789", 9), 0xcbf43926);
    ck_assert_uint_eq(shmring__crc32("", 0), 0);
    ck_assert_uint_eq(shmring__crc32("a", 1), 0xe8b7be43);
    /* Continued over the rest, it is the CRC of the whole. */
    ck_assert_uint_eq(shmring__crc32_update(shmring__crc32("1234", 4), "56789", 5),
                      0xcbf43926);
    /* Continued over nothing, it is unchanged. */
    ck_assert_uint_eq(shmring__crc32_update(0xcbf43926, "", 0), 0xcbf43926);
}
END_TEST

/* Every length from 0 to 300 bytes (the eight-byte steps and every tail), at every
 * alignment of the first byte, over random bytes, whole and continued from a split at
 * every eighth length. */
START_TEST(crc32_equals_zlib)
{
    enum { MAX_LENGTH = 300, ALIGNMENTS = 8 };
    static uint8_t bytes[MAX_LENGTH + ALIGNMENTS];
    uint64_t state = 0xc3c32;
    for (size_t i = 0; i < sizeof(bytes); i++)
        bytes[i] = (uint8_t)(test_random(&state) >> 24);
    size_t compared = 0;
    for (size_t align = 0; align < ALIGNMENTS; align++) {
        const uint8_t *data = bytes + align;
        for (size_t length = 0; length <= MAX_LENGTH; length++) {
            uint32_t expected = (uint32_t)crc32(0, data, (uInt)length);
            ck_assert_uint_eq(shmring__crc32(data, length), expected);
            size_t split = length / 8 * 3;
            ck_assert_uint_eq(shmring__crc32_update(shmring__crc32(data, split),
                                                    data + split, length - split),
                              expected);
            compared++;
        }
    }
    ck_assert_uint_eq(compared, ALIGNMENTS * (MAX_LENGTH + 1));
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("crc32");
    TEST_CASE(suite, "core", crc32_vectors, crc32_equals_zlib);
    return test_run_suite(suite);
}
