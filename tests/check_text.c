/*
 * Tests of lib/text.c: the rule for node names and addresses (printable UTF-8 as
 * RFC 3629 defines it, without C0 controls, DEL or C1 controls), through the internal
 * functions and the public checks.
 *
 * The expected results come from the rule, not from the code: a small UTF-8 encoder
 * here produces every code point (and every overlong form of the short ones), and
 * the tables list byte sequences with the verdict RFC 3629 gives them.
 */
#include <stdio.h>
#include <string.h>

#include "text_internal.h"
#include "test_support.h"

/* Encodes CP in exactly LENGTH bytes (1-4), overlong or not; returns LENGTH. */
static size_t encode(uint32_t cp, size_t length, unsigned char out[4])
{
    static const unsigned char lead[] = {0, 0x00, 0xc0, 0xe0, 0xf0};
    for (size_t i = length - 1; i > 0; i--) {
        out[i] = (unsigned char)(0x80 | (cp & 0x3f));
        cp >>= 6;
    }
    out[0] = (unsigned char)(lead[length] | cp);
    return length;
}

/* The shortest length of CP in UTF-8. */
static size_t shortest(uint32_t cp)
{
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/* The rule, from its definition: a scalar value that is not a control character. */
static bool allowed(uint32_t cp)
{
    bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
    bool control = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
    return cp <= 0x10ffff && !surrogate && !control;
}

static bool valid(const char *bytes, size_t len)
{
    return shmring__text_valid(bytes, len);
}

/* ---- one sequence ---- */

START_TEST(sequence_lengths)
{
    static const struct {
        const char *bytes;
        size_t len;
        size_t expected;
    } cases[] = {
        {"A", 1, 1},
        {"\x00", 1, 1},                     /* ASCII, even NUL: the caller judges it */
        {"\x7f", 1, 1},                     /* DEL: likewise */
        {"\xc2\x80", 2, 2},                 /* U+0080, the first two-byte code point */
        {"\xdf\xbf", 2, 2},                 /* U+07FF, the last */
        {"\xe0\xa0\x80", 3, 3},             /* U+0800 */
        {"\xed\x9f\xbf", 3, 3},             /* U+D7FF, just below the surrogates */
        {"\xee\x80\x80", 3, 3},             /* U+E000, just above them */
        {"\xef\xbf\xbf", 3, 3},             /* U+FFFF */
        {"\xef\xbf\xbe", 3, 3},             /* U+FFFE: a noncharacter, still a scalar */
        {"\xf0\x90\x80\x80", 4, 4},         /* U+10000 */
        {"\xf4\x8f\xbf\xbf", 4, 4},         /* U+10FFFF, the last code point */
        {"\x80", 1, 0},                     /* a lone continuation byte */
        {"\xbf", 1, 0},                     /* another */
        {"\xc0\x80", 2, 0},                 /* overlong NUL */
        {"\xc1\xbf", 2, 0},                 /* overlong U+007F */
        {"\xe0\x80\x80", 3, 0},             /* overlong NUL */
        {"\xe0\x9f\xbf", 3, 0},             /* overlong U+07FF */
        {"\xf0\x80\x80\x80", 4, 0},         /* overlong NUL */
        {"\xf0\x8f\xbf\xbf", 4, 0},         /* overlong U+FFFF */
        {"\xed\xa0\x80", 3, 0},             /* U+D800, the first surrogate */
        {"\xed\xbf\xbf", 3, 0},             /* U+DFFF, the last */
        {"\xed\xb0\x80", 3, 0},             /* U+DC00, a low surrogate */
        {"\xf4\x90\x80\x80", 4, 0},         /* U+110000 */
        {"\xf5\x80\x80\x80", 4, 0},         /* a lead byte RFC 3629 removed */
        {"\xf7\xbf\xbf\xbf", 4, 0},         /* U+1FFFFF */
        {"\xf8\x88\x80\x80\x80", 5, 0},     /* five-byte form */
        {"\xfc\x84\x80\x80\x80\x80", 6, 0}, /* six-byte form */
        {"\xfe", 1, 0},
        {"\xff", 1, 0},
        {"\xc3", 1, 0},             /* truncated */
        {"\xe2\x82", 2, 0},         /* truncated */
        {"\xf0\x9f\x98", 3, 0},     /* truncated */
        {"\xc3\x28", 2, 0},         /* bad continuation */
        {"\xe2\x28\xa1", 3, 0},     /* bad second byte */
        {"\xe2\x82\x28", 3, 0},     /* bad third byte */
        {"\xf0\x28\x8c\xbc", 4, 0}, /* bad second byte */
        {"\xf0\x90\x28\xbc", 4, 0}, /* bad third byte */
        {"\xf0\x90\x8c\x28", 4, 0}, /* bad fourth byte */
        {"\xc3\xa9", 1, 0},         /* complete, but only one byte may be read */
        {"\xe2\x82\xac", 2, 0},     /* likewise */
        {"\xf0\x9f\x98\x80", 3, 0}, /* likewise */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t got =
            shmring__utf8_sequence((const unsigned char *)cases[i].bytes, cases[i].len);
        ck_assert_msg(got == cases[i].expected, "case %zu: %zu, expected %zu", i, got,
                      cases[i].expected);
    }
}
END_TEST

START_TEST(every_code_point)
{
    /* All 1,114,112 code points in their shortest form, and the rule's verdict.
     * (Plain tests in the loop: each Check assertion costs a message to the runner.) */
    size_t accepted = 0;
    for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
        unsigned char bytes[4];
        size_t len = encode(cp, shortest(cp), bytes);
        bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
        if (shmring__utf8_sequence(bytes, len) != (surrogate ? 0 : len))
            ck_abort_msg("U+%04X: sequence length %zu", (unsigned)cp,
                         shmring__utf8_sequence(bytes, len));
        if (valid((const char *)bytes, len) != allowed(cp))
            ck_abort_msg("U+%04X: valid %d", (unsigned)cp,
                         valid((const char *)bytes, len));
        accepted += allowed(cp);
    }
    /* 0x110000 minus 2,048 surrogates, 32 C0 controls, DEL and 32 C1 controls. */
    ck_assert_uint_eq(accepted, 0x110000u - 2048 - 32 - 1 - 32);
}
END_TEST

START_TEST(every_overlong_form)
{
    /* Every code point that fits in fewer bytes, written in more: never valid. */
    size_t refused = 0;
    for (uint32_t cp = 0; cp < 0x10000; cp++) {
        for (size_t len = shortest(cp) + 1; len <= 4; len++) {
            if (len == 1)
                continue;
            unsigned char bytes[4];
            encode(cp, len, bytes);
            ck_assert_msg(shmring__utf8_sequence(bytes, len) == 0, "U+%04X in %zu bytes",
                          (unsigned)cp, len);
            ck_assert(!valid((const char *)bytes, len));
            refused++;
        }
    }
    /* 0x80 code points have 3 longer forms, 0x780 have 2, 0xF800 have 1. */
    ck_assert_uint_eq(refused, 0x80 * 3 + 0x780 * 2 + 0xf800);
}
END_TEST

START_TEST(two_byte_sequences_exhaustively)
{
    /* Every lead and continuation byte: valid unless overlong (C0, C1) or a C1
     * control (C2 80 to C2 9F). */
    for (unsigned lead = 0xc0; lead <= 0xdf; lead++) {
        for (unsigned next = 0x80; next <= 0xbf; next++) {
            char bytes[2] = {(char)lead, (char)next};
            bool expected = lead >= 0xc2 && !(lead == 0xc2 && next < 0xa0);
            ck_assert_msg(valid(bytes, 2) == expected, "%02x %02x", lead, next);
        }
    }
}
END_TEST

/* ---- whole texts ---- */

START_TEST(control_characters)
{
    for (unsigned c = 0; c < 0x20; c++) {
        char text[3] = {'a', (char)c, 'b'};
        ck_assert_msg(!valid(text, 3), "C0 %02x accepted", c);
    }
    ck_assert(!valid("a\x7f", 2));
    ck_assert(!valid("\xc2\x85", 2)); /* NEL */
    ck_assert(!valid("\xc2\x9b", 2)); /* CSI */
    ck_assert(!valid("ok\xc2\x9f", 4));
    ck_assert(valid("\xc2\xa0", 2)); /* NO-BREAK SPACE, the first after C1 */
    ck_assert(valid(" ", 1));
    ck_assert(valid("~", 1));
    ck_assert(valid("\xe2\x80\xa8", 3)); /* U+2028 is not a C0 or C1 control */
}
END_TEST

START_TEST(texts)
{
    static const struct {
        const char *bytes;
        bool expected;
    } cases[] = {
        {"10.0.1.1:11211", true},
        {"node-a", true},
        {"caf\xc3\xa9", true},
        {"\xe6\x97\xa5\xe6\x9c\xac", true},
        {"\xf0\x9f\x98\x80 smile", true},
        {"with space", true},
        {"caf\xe9", false},                  /* Latin-1 */
        {"\xed\xa0\x80", false},             /* a surrogate */
        {"\xed\xa0\xbd\xed\xb8\x80", false}, /* CESU-8 pair */
        {"a\xc3", false},                    /* truncated at the end */
        {"\xef\xbb\xbfnode", true},          /* a BOM is U+FEFF, a scalar value */
        {"a\tb", false},
        {"a\nb", false},
        {"a\rb", false},
        {"\x1b[31m", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(valid(cases[i].bytes, strlen(cases[i].bytes)) == cases[i].expected,
                      "case %zu", i);
    /* The length decides, not a terminating NUL. */
    ck_assert(valid("", 0));
    ck_assert(!valid("a\0b", 3));
    ck_assert(valid("ab\xff", 2));
    ck_assert(!valid("ab\xff", 3));
}
END_TEST

/* ---- the public checks ---- */

START_TEST(public_checks_follow_the_rule)
{
    ck_assert_int_eq(shmring_node_name_check("node-a"), 0);
    ck_assert_int_eq(shmring_node_address_check("10.0.1.1:11211"), 0);
    ck_assert_int_eq(shmring_node_name_check("caf\xc3\xa9"), 0);
    ck_assert_int_eq(shmring_node_address_check("caf\xc3\xa9"), 0);
    ck_assert_int_eq(shmring_node_name_check("\xc2\xa0"), 0);
    static const char *const bad[] = {"",
                                      "a\tb",
                                      "a\nb",
                                      "\x01",
                                      "a\x7f",
                                      "caf\xe9",
                                      "\xed\xa0\x80",
                                      "\xc3",
                                      "\xc2\x85",
                                      "\xc0\x80",
                                      "\xe0\x80\x80",
                                      "\xff",
                                      "\x1b[0m",
                                      "\xf4\x90\x80\x80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(shmring_node_name_check(bad[i]), SHMRING_EBADNAME);
        ck_assert_int_eq(shmring_node_address_check(bad[i]), SHMRING_EBADADDRESS);
    }
    ck_assert_int_eq(shmring_node_name_check(NULL), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_address_check(NULL), SHMRING_EBADADDRESS);
}
END_TEST

START_TEST(public_checks_count_bytes)
{
    char text[400];
    /* 1 and 255 bytes are accepted, 256 are not. */
    ck_assert_int_eq(shmring_node_name_check("a"), 0);
    memset(text, 'a', 255);
    text[255] = '\0';
    ck_assert_int_eq(shmring_node_name_check(text), 0);
    ck_assert_int_eq(shmring_node_address_check(text), 0);
    text[255] = 'a';
    text[256] = '\0';
    ck_assert_int_eq(shmring_node_name_check(text), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_address_check(text), SHMRING_EBADADDRESS);
    /* 85 three-byte characters are 255 bytes; 86 are 258. */
    text[0] = '\0';
    for (int i = 0; i < 85; i++)
        strcat(text, "\xe6\x97\xa5");
    ck_assert_uint_eq(strlen(text), 255);
    ck_assert_int_eq(shmring_node_name_check(text), 0);
    strcat(text, "\xe6\x97\xa5");
    ck_assert_int_eq(shmring_node_name_check(text), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_address_check(text), SHMRING_EBADADDRESS);
    /* 253 ASCII bytes and an e-acute fit; 254 and an e-acute do not. */
    memset(text, 'a', 253);
    memcpy(text + 253, "\xc3\xa9", 3);
    ck_assert_int_eq(shmring_node_name_check(text), 0);
    memset(text, 'a', 254);
    memcpy(text + 254, "\xc3\xa9", 3);
    ck_assert_int_eq(shmring_node_name_check(text), SHMRING_EBADNAME);
    /* A sequence cut by the end of the text at the limit. */
    memset(text, 'a', 254);
    memcpy(text + 254, "\xc3", 2);
    ck_assert_int_eq(shmring_node_name_check(text), SHMRING_EBADNAME);
}
END_TEST

static Suite *text_suite(void)
{
    Suite *s = suite_create("text");
    TEST_CASE(s, "utf8", sequence_lengths, every_code_point, every_overlong_form,
              two_byte_sequences_exhaustively);
    TEST_CASE(s, "texts", control_characters, texts);
    TEST_CASE(s, "public", public_checks_follow_the_rule, public_checks_count_bytes);
    return s;
}

int main(void)
{
    return test_run_suite(text_suite());
}
