/*
 * Tests of lib/base64.c: RFC 4648's own test vectors (section 10), every byte value
 * and every length encoded as the definition says bit by bit and decoded back, and the
 * strictness of the decoder (section 3.3's "non-alphabet characters", section 3.5's
 * unused bits), each refusal with SHMRING_EINVAL.
 */
#include <stdlib.h>
#include <string.h>

#include "shmring_ctl.h"
#include "test_support.h"

static const struct {
    const char *bytes;
    const char *text;
} rfc4648_vectors[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

START_TEST(encodes_rfc4648_vectors)
{
    for (size_t i = 0; i < sizeof(rfc4648_vectors) / sizeof(rfc4648_vectors[0]); i++) {
        char *text = NULL;
        const char *bytes = rfc4648_vectors[i].bytes;
        ck_assert_int_eq(shmring_base64_encode(bytes, strlen(bytes), &text), 0);
        ck_assert_str_eq(text, rfc4648_vectors[i].text);
        free(text);
    }
}
END_TEST

START_TEST(decodes_rfc4648_vectors)
{
    for (size_t i = 0; i < sizeof(rfc4648_vectors) / sizeof(rfc4648_vectors[0]); i++) {
        char *bytes = NULL;
        size_t len = 99;
        const char *text = rfc4648_vectors[i].text;
        ck_assert_int_eq(shmring_base64_decode(text, strlen(text), &bytes, &len), 0);
        ck_assert_uint_eq(len, strlen(rfc4648_vectors[i].bytes));
        ck_assert_mem_eq(bytes, rfc4648_vectors[i].bytes, len);
        ck_assert_int_eq(bytes[len], '\0');
        free(bytes);
    }
}
END_TEST

/*
 * Base64 from its definition, bit by bit (RFC 4648 section 4: each 6-bit run of the
 * input, high bit first, zero-filled at the end, is one digit; '=' fills the
 * text to a multiple of four), to check the codec's group arithmetic against.
 */
static void encode_by_bits(const unsigned char *in, size_t len, char *out)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t bits = len * 8, used = 0;
    for (size_t at = 0; at < bits; at += 6) {
        unsigned value = 0;
        for (size_t b = at; b < at + 6; b++) {
            unsigned bit = b < bits ? (in[b / 8] >> (7 - b % 8)) & 1u : 0;
            value = value << 1 | bit;
        }
        out[used++] = digits[value];
    }
    while (used % 4 != 0)
        out[used++] = '=';
    out[used] = '\0';
}

/*
 * Every byte value at each of a group's three positions, and every length up to 768
 * (so every padding): byte i is 7i mod 256, and as 21 is odd, the bytes at positions
 * 3k + p (k < 256) take all 256 values for each p.
 */
START_TEST(round_trips_every_byte)
{
    unsigned char data[768];
    char expected[sizeof(data) / 3 * 4 + 1];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(i * 7);
    for (size_t len = 0; len <= sizeof(data); len++) {
        char *text = NULL, *bytes = NULL;
        size_t decoded = 0;
        ck_assert_int_eq(shmring_base64_encode(data, len, &text), 0);
        encode_by_bits(data, len, expected);
        ck_assert_str_eq(text, expected);
        ck_assert_int_eq(shmring_base64_decode(text, strlen(text), &bytes, &decoded), 0);
        ck_assert_uint_eq(decoded, len);
        ck_assert_mem_eq(bytes, data, len);
        free(text);
        free(bytes);
    }
}
END_TEST

START_TEST(refuses_what_is_not_base64)
{
    static const char *const bad[] = {
        "Zg=",      /* not a multiple of four */
        "Zg",       /* unpadded */
        "Z===",     /* three pads */
        "Zg==Zg==", /* a pad before the end */
        "Z=g=",     /* a digit after a pad */
        "Zh==",     /* unused bits set: "Zg==" is the one encoding of "f" */
        "Zm9=",     /* the same with one pad: "Zm8=" is "fo" */
        "Zm9v-_==", /* the URL-safe alphabet is another one */
        "Zm9 v===", /* white space */
        "Zm\x80v",  /* a byte above ASCII */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *bytes = (char *)"untouched";
        size_t len = 99;
        ck_assert_msg(shmring_base64_decode(bad[i], strlen(bad[i]), &bytes, &len) ==
                          SHMRING_EINVAL,
                      "accepted '%s'", bad[i]);
        ck_assert_str_eq(bytes, "untouched");
        ck_assert_uint_eq(len, 99);
    }
    /* A NUL inside the given length is a byte like any other: not base64. */
    char *bytes = NULL;
    size_t len = 0;
    ck_assert_int_eq(shmring_base64_decode("Zm\0v", 4, &bytes, &len), SHMRING_EINVAL);
    /* The length given counts, not a NUL after it. */
    ck_assert_int_eq(shmring_base64_decode("Zm9vYmFy", 4, &bytes, &len), 0);
    ck_assert_uint_eq(len, 3);
    ck_assert_str_eq(bytes, "foo");
    free(bytes);
}
END_TEST

static Suite *base64_suite(void)
{
    Suite *s = suite_create("base64");
    TEST_CASE(s, "core", encodes_rfc4648_vectors, decodes_rfc4648_vectors,
              round_trips_every_byte);
    TEST_CASE(s, "errors", refuses_what_is_not_base64);
    return s;
}

int main(void)
{
    return test_run_suite(base64_suite());
}
