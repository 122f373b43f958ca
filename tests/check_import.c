/*
 * Tests of lib/import.c: the public entry point's own checks (format names, NUL
 * bytes) and what the format readers share: quoting untrusted words into messages,
 * strict numbers, the error report, first-problem-only recording, and named sections
 * (adding, choosing, handing over, freeing).
 */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"

/* ---- quoting ---------------------------------------------------------------- */

/* Quotes the LEN bytes at WORD and checks the result is exactly EXPECTED. */
static void assert_quoted(const char *word, size_t len, const char *expected)
{
    char quoted[IMPORT_QUOTE_SIZE];
    ck_assert_ptr_eq(shmring__import_quote(quoted, word, len), quoted);
    ck_assert_str_eq(quoted, expected);
}

/* Quotes the NUL-terminated WORD. */
#define QUOTED(word, expected) assert_quoted((word), strlen(word), (expected))

START_TEST(test_quote_printable)
{
    QUOTED("", "");
    QUOTED("cache-a:11211", "cache-a:11211");
    /* Every printable ASCII byte is shown as it is, quotes and backslashes included:
     * the message's own quotes are not escaped, the word only kept on one line. */
    QUOTED(" !\"#'\\~", " !\"#'\\~");
    /* The length counts, not a NUL: a word inside a line is quoted alone. */
    assert_quoted("server a:1;", 6, "server");
}
END_TEST

START_TEST(test_quote_utf8)
{
    /* Two-, three- and four-byte sequences, the largest code point and the first
     * after the C1 controls, as they are. */
    QUOTED("caf\xc3\xa9", "caf\xc3\xa9");
    QUOTED("\xe2\x82\xac", "\xe2\x82\xac");
    QUOTED("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");
    QUOTED("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");
    QUOTED("\xc2\xa0", "\xc2\xa0");
}
END_TEST

START_TEST(test_quote_other_bytes)
{
    /* C0 controls and DEL. */
    QUOTED("a\tb", "a\\x09b");
    QUOTED("a\nb\r", "a\\x0ab\\x0d");
    QUOTED("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
    assert_quoted("a\0b", 3, "a\\x00b");
    /* C1 controls are valid UTF-8 but not printable (U+009B is a terminal's CSI). */
    QUOTED("\xc2\x80", "\\xc2\\x80");
    QUOTED("\xc2\x9b[31m", "\\xc2\\x9b[31m");
    /* Not UTF-8: a Latin-1 byte, bytes that never start a sequence, an overlong
     * encoding, a surrogate, a code point past U+10FFFF, a sequence cut short, a
     * continuation byte alone. */
    QUOTED("caf\xe9", "caf\\xe9");
    QUOTED("\xff\xfe", "\\xff\\xfe");
    QUOTED("\xc0\xaf", "\\xc0\\xaf");
    QUOTED("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
    QUOTED("\xed\xa0\x80", "\\xed\\xa0\\x80");
    QUOTED("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
    QUOTED("\xe2\x82", "\\xe2\\x82");
    QUOTED("\x80", "\\x80");
}
END_TEST

START_TEST(test_quote_cut)
{
    char word[IMPORT_QUOTE_MAX * 2 + 1];
    char expected[IMPORT_QUOTE_SIZE];

    /* IMPORT_QUOTE_MAX bytes are shown whole; one more, and they are cut there. */
    memset(word, 'w', sizeof(word));
    memset(expected, 'w', IMPORT_QUOTE_MAX);
    expected[IMPORT_QUOTE_MAX] = '\0';
    assert_quoted(word, IMPORT_QUOTE_MAX, expected);
    strcpy(expected + IMPORT_QUOTE_MAX, "...");
    assert_quoted(word, IMPORT_QUOTE_MAX + 1, expected);
    assert_quoted(word, sizeof(word), expected);

    /* The cut counts bytes: a character that it splits shows its first bytes
     * escaped, as any sequence cut short. */
    memset(word, 'w', IMPORT_QUOTE_MAX - 1);
    memcpy(word + IMPORT_QUOTE_MAX - 1, "\xe2\x82\xac", 3);
    memset(expected, 'w', IMPORT_QUOTE_MAX - 1);
    strcpy(expected + IMPORT_QUOTE_MAX - 1, "\\xe2...");
    assert_quoted(word, IMPORT_QUOTE_MAX + 2, expected);
    /* A character that ends at the cut is shown whole. */
    memset(word, 'w', IMPORT_QUOTE_MAX - 3);
    memcpy(word + IMPORT_QUOTE_MAX - 3, "\xe2\x82\xac!", 4);
    memset(expected, 'w', IMPORT_QUOTE_MAX - 3);
    strcpy(expected + IMPORT_QUOTE_MAX - 3, "\xe2\x82\xac...");
    assert_quoted(word, IMPORT_QUOTE_MAX + 1, expected);

    /* The longest quote, every shown byte escaped and the cut marked, fills
     * IMPORT_QUOTE_SIZE exactly. */
    memset(word, 0xff, sizeof(word));
    char quoted[IMPORT_QUOTE_SIZE];
    shmring__import_quote(quoted, word, sizeof(word));
    ck_assert_uint_eq(strlen(quoted), IMPORT_QUOTE_SIZE - 1);
    ck_assert_str_eq(quoted + IMPORT_QUOTE_SIZE - 8, "\\xff...");
}
END_TEST

/* ---- numbers ---------------------------------------------------------------- */

/* A number as text, the largest value allowed, and the value it must give, or 0 when
 * it must be refused (0 is never a number's value). */
struct number_case {
    const char *text;
    uint32_t max;
    uint32_t value;
};

static const struct number_case numbers[] = {
    {"1", 65535, 1},
    {"10", 65535, 10},
    {"600", 65535, 600},
    /* The largest values, and one more. */
    {"65535", 65535, 65535},
    {"65536", 65535, 0},
    {"1", 1, 1},
    {"2", 1, 0},
    {"4294967295", UINT32_MAX, UINT32_MAX},
    {"4294967296", UINT32_MAX, 0},
    /* Past 32 bits, and past 64 (more than ten digits are refused unread). */
    {"9999999999", UINT32_MAX, 0},
    {"10000000000", UINT32_MAX, 0},
    {"18446744073709551617", UINT32_MAX, 0},
    /* Numbers start at 1, with no leading zero. */
    {"0", 65535, 0},
    {"00", 65535, 0},
    {"01", 65535, 0},
    {"0600", 65535, 0},
    /* Digits only: no sign, space, point, exponent or base. */
    {"", 65535, 0},
    {"-1", 65535, 0},
    {"+1", 65535, 0},
    {" 1", 65535, 0},
    {"1 ", 65535, 0},
    {"1.5", 65535, 0},
    {"1e3", 65535, 0},
    {"0x10", 65535, 0},
    {"1a", 65535, 0},
};

START_TEST(test_number)
{
    for (size_t i = 0; i < COUNT_OF(numbers); i++) {
        const struct number_case *c = &numbers[i];
        /* A refusal leaves *out as it was. */
        uint32_t out = 12345;
        bool taken = shmring__import_number(c->text, strlen(c->text), c->max, &out);
        ck_assert_msg(taken == (c->value != 0), "'%s' (max %u): taken %d", c->text,
                      (unsigned)c->max, taken);
        ck_assert_uint_eq(out, taken ? c->value : 12345);
    }
    /* The length counts, not a NUL. */
    uint32_t out = 0;
    ck_assert(shmring__import_number("600 1", 3, 65535, &out));
    ck_assert_uint_eq(out, 600);
}
END_TEST

/* ---- the error report --------------------------------------------------------- */

START_TEST(test_fail)
{
    shmring_import_error_t error;
    memset(&error, 0xa5, sizeof(error));
    ck_assert_int_eq(shmring__import_fail(&error, 7, "'%s' on line %d", "x", 7),
                     SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 7);
    ck_assert_str_eq(error.text, "'x' on line 7");
    /* The whole report is written, its reserved room zeroed. */
    for (size_t i = 0; i < COUNT_OF(error.reserved); i++)
        ck_assert_uint_eq(error.reserved[i], 0);

    /* A message longer than the report is cut to fit it. */
    char long_word[400];
    memset(long_word, 'x', sizeof(long_word) - 1);
    long_word[sizeof(long_word) - 1] = '\0';
    ck_assert_int_eq(shmring__import_fail(&error, 0, "%s", long_word), SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 0);
    ck_assert_uint_eq(strlen(error.text), sizeof(error.text) - 1);
    ck_assert_int_eq(memcmp(error.text, long_word, sizeof(error.text) - 1), 0);
}
END_TEST

START_TEST(test_fail_once)
{
    struct import_section section;
    memset(&section, 0, sizeof(section));
    ck_assert_int_eq(shmring__import_fail_once(&section, 3, "first %d", 1), 0);
    ck_assert(section.failed);
    ck_assert_int_eq(section.error.line, 3);
    ck_assert_str_eq(section.error.text, "first 1");
    /* A later problem of the same section is not recorded: the first one is what the
     * section's user is told about. */
    ck_assert_int_eq(shmring__import_fail_once(&section, 9, "second %d", 2), 0);
    ck_assert(section.failed);
    ck_assert_int_eq(section.error.line, 3);
    ck_assert_str_eq(section.error.text, "first 1");
}
END_TEST

/* ---- sections ----------------------------------------------------------------- */

static const struct import_section_kind pool_kind = {
    .one = "pool",
    .many = "pools",
    .none = "no pool",
    .algorithm = SHMRING_ALGORITHM_TWEMPROXY,
};

/* A format's own section type: the shared part first, then its own fields, which
 * the shared calls must step over and keep. */
struct test_section {
    struct import_section base;
    int own;
};

struct test_sections {
    struct test_section *at;
    size_t count;
    size_t capacity;
};

/* Adds a section named by the NAME_LEN bytes at NAME, starting on LINE. */
static int add_section(struct test_sections *sections, const char *name, size_t name_len,
                       int line, shmring_import_error_t *error)
{
    void *at = sections->at;
    int err = shmring__import_section_new(&at, &sections->count, &sections->capacity,
                                          sizeof(struct test_section), name, name_len,
                                          line, &pool_kind, error);
    sections->at = at;
    return err;
}

static int take(struct test_sections *sections, const char *wanted,
                shmring_nodeset_t **chosen, shmring_import_error_t *error)
{
    return shmring__import_take(sections->at, sections->count,
                                sizeof(struct test_section), wanted, &pool_kind, chosen,
                                error);
}

static void free_sections(struct test_sections *sections)
{
    shmring__import_sections_free(sections->at, sections->count,
                                  sizeof(struct test_section));
}

START_TEST(test_section_new)
{
    struct test_sections sections = {0};
    shmring_import_error_t error;
    /* Ten sections: the array grows past its first four, each section keeping its
     * name (given by length, not by a NUL), line, node set and own fields. */
    for (int i = 0; i < 10; i++) {
        char name[16];
        int len = snprintf(name, sizeof(name), "pool%d;", i);
        ck_assert_int_eq(add_section(&sections, name, (size_t)len - 1, i + 1, &error), 0);
        ck_assert_uint_eq(sections.count, (size_t)i + 1);
        ck_assert_int_eq(sections.at[i].own, 0);
        sections.at[i].own = 100 + i;
    }
    ck_assert_uint_ge(sections.capacity, 10);
    for (int i = 0; i < 10; i++) {
        const struct import_section *section = &sections.at[i].base;
        char name[16];
        snprintf(name, sizeof(name), "pool%d", i);
        ck_assert_str_eq(section->name, name);
        ck_assert_int_eq(section->line, i + 1);
        ck_assert(!section->failed);
        ck_assert_uint_eq(section->servers, 0);
        ck_assert_int_eq(sections.at[i].own, 100 + i);
        /* An empty node set of the kind's algorithm and that algorithm's hash. */
        ck_assert_ptr_nonnull(section->set);
        ck_assert_uint_eq(shmring_nodeset_count(section->set), 0);
        shmring_params_t params;
        shmring_nodeset_params(section->set, &params);
        ck_assert_int_eq(params.algorithm, SHMRING_ALGORITHM_TWEMPROXY);
        ck_assert_int_eq(params.hash, shmring_algorithm_default_hash(params.algorithm));
    }

    /* A name given twice is refused, naming the first, and adds nothing. */
    ck_assert_int_eq(add_section(&sections, "pool3", 5, 40, &error), SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 40);
    ck_assert_str_eq(error.text, "pool 'pool3' is given twice (first on line 4)");
    ck_assert_uint_eq(sections.count, 10);
    /* A name that only starts like another is another name. */
    ck_assert_int_eq(add_section(&sections, "pool", 4, 41, &error), 0);
    ck_assert_int_eq(add_section(&sections, "pool10", 6, 42, &error), 0);
    ck_assert_uint_eq(sections.count, 12);
    /* The refusal quotes the name as every message quotes a word. */
    ck_assert_int_eq(add_section(&sections, "a\tb", 3, 43, &error), 0);
    ck_assert_int_eq(add_section(&sections, "a\tb", 3, 44, &error), SHMRING_EINVAL);
    ck_assert_str_eq(error.text, "pool 'a\\x09b' is given twice (first on line 43)");
    free_sections(&sections);
}
END_TEST

START_TEST(test_take_by_name)
{
    struct test_sections sections = {0};
    shmring_import_error_t error;
    ck_assert_int_eq(add_section(&sections, "alpha", 5, 1, &error), 0);
    ck_assert_int_eq(add_section(&sections, "beta", 4, 5, &error), 0);
    ck_assert_int_eq(add_section(&sections, "gamma", 5, 9, &error), 0);
    /* A problem in a section that is not chosen does not matter. */
    shmring__import_fail_once(&sections.at[0].base, 2, "alpha is broken");

    shmring_nodeset_t *beta = sections.at[1].base.set, *chosen = NULL;
    ck_assert_int_eq(take(&sections, "beta", &chosen, &error), 0);
    /* Handed over: the caller frees it, the sections no longer do. */
    ck_assert_ptr_eq(chosen, beta);
    ck_assert_ptr_null(sections.at[1].base.set);
    shmring_nodeset_free(chosen);

    chosen = NULL;
    ck_assert_int_eq(take(&sections, "delta", &chosen, &error), SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 0);
    ck_assert_str_eq(error.text, "no pool 'delta'");
    ck_assert_ptr_null(chosen);
    /* Names compare whole. */
    ck_assert_int_eq(take(&sections, "gam", &chosen, &error), SHMRING_EINVAL);
    ck_assert_str_eq(error.text, "no pool 'gam'");

    /* The chosen section's first problem is the refusal, and its node set stays with
     * the sections. */
    ck_assert_int_eq(take(&sections, "alpha", &chosen, &error), SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 2);
    ck_assert_str_eq(error.text, "alpha is broken");
    ck_assert_ptr_null(chosen);
    ck_assert_ptr_nonnull(sections.at[0].base.set);
    free_sections(&sections);
}
END_TEST

START_TEST(test_take_without_name)
{
    struct test_sections sections = {0};
    shmring_import_error_t error;
    shmring_nodeset_t *chosen = NULL;
    /* No section: the kind's own words. */
    ck_assert_int_eq(take(&sections, NULL, &chosen, &error), SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 0);
    ck_assert_str_eq(error.text, "no pool");

    /* The only section needs no name. */
    ck_assert_int_eq(add_section(&sections, "only", 4, 3, &error), 0);
    shmring_nodeset_t *only = sections.at[0].base.set;
    ck_assert_int_eq(take(&sections, NULL, &chosen, &error), 0);
    ck_assert_ptr_eq(chosen, only);
    shmring_nodeset_free(chosen);
    free_sections(&sections);

    /* Several: the caller must name one; the message names the first. */
    memset(&sections, 0, sizeof(sections));
    chosen = NULL;
    ck_assert_int_eq(add_section(&sections, "b\xff", 2, 4, &error), 0);
    ck_assert_int_eq(add_section(&sections, "a", 1, 8, &error), 0);
    ck_assert_int_eq(add_section(&sections, "c", 1, 9, &error), 0);
    ck_assert_int_eq(take(&sections, NULL, &chosen, &error), SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 0);
    ck_assert_str_eq(error.text,
                     "3 pools (the first 'b\\xff' on line 4): name the one to import");
    ck_assert_ptr_null(chosen);
    free_sections(&sections);
}
END_TEST

START_TEST(test_sections_free_empty)
{
    /* No sections at all, and an array that was never allocated. */
    shmring__import_sections_free(NULL, 0, sizeof(struct test_section));
}
END_TEST

/* ---- adding servers ----------------------------------------------------------- */

START_TEST(test_add)
{
    shmring_nodeset_t *set;
    shmring_import_error_t error;
    ck_assert_int_eq(
        shmring__import_nodeset(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, &set), 0);
    ck_assert_int_eq(
        shmring__import_add(set, "a:1", "a:1", 3, SHMRING_STATE_DOWN, NULL, 2, &error),
        0);
    ck_assert_int_eq(
        shmring__import_add(set, "b", "b:1", 1, SHMRING_STATE_UP, "key-b", 3, &error), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 2);
    shmring_node_info_t node;
    ck_assert_int_eq(shmring_nodeset_get(set, 0, &node), 0);
    ck_assert_str_eq(node.name, "a:1");
    ck_assert_uint_eq(node.weight, 3);
    ck_assert_int_eq(node.state, SHMRING_STATE_DOWN);
    ck_assert_ptr_null(node.hash_key);
    ck_assert_int_eq(shmring_nodeset_get(set, 1, &node), 0);
    ck_assert_str_eq(node.hash_key, "key-b");

    /* Each refusal names the server on its line. */
    ck_assert_int_eq(
        shmring__import_add(set, "a:1", "a:1", 1, SHMRING_STATE_UP, NULL, 7, &error),
        SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 7);
    ck_assert_str_eq(error.text,
                     "server 'a:1' is given twice: the peer would merge their "
                     "points, a node set cannot hold both");
    ck_assert_int_eq(
        shmring__import_add(set, "c", "c\x01", 1, SHMRING_STATE_UP, NULL, 8, &error),
        SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 8);
    ck_assert_str_eq(error.text,
                     "server 'c\\x01': a server must be 1-255 bytes of UTF-8 text");
    ck_assert_int_eq(
        shmring__import_add(set, "d\xff", "d:1", 1, SHMRING_STATE_UP, "key-d", 9, &error),
        SHMRING_EINVAL);
    ck_assert_int_eq(error.line, 9);
    ck_assert_str_eq(error.text,
                     "server name 'd\\xff': a name must be 1-255 bytes of UTF-8 text");
    ck_assert_uint_eq(shmring_nodeset_count(set), 2);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- the entry point ---------------------------------------------------------- */

START_TEST(test_format_names)
{
    shmring_import_format_t format;
    ck_assert_int_eq(shmring_import_format_parse("nginx", &format), 0);
    ck_assert_int_eq(format, SHMRING_IMPORT_NGINX);
    ck_assert_int_eq(shmring_import_format_parse("twemproxy", &format), 0);
    ck_assert_int_eq(format, SHMRING_IMPORT_TWEMPROXY);
    ck_assert_int_eq(shmring_import_format_parse("libketama", &format), 0);
    ck_assert_int_eq(format, SHMRING_IMPORT_LIBKETAMA);
    ck_assert_int_eq(shmring_import_format_parse("Nginx", &format), SHMRING_EINVAL);
    ck_assert_int_eq(shmring_import_format_parse("", &format), SHMRING_EINVAL);
    test_import_fails((shmring_import_format_t)7, "x", NULL, 0,
                      "unknown configuration format 7");
}
END_TEST

/* A NUL byte is refused before any format's reader sees the text, on its line. */
START_TEST(test_nul_byte)
{
    static const char text[] = "upstream u {\n hash $k consistent;\n server a\0:1;\n}";
    static const shmring_import_format_t formats[] = {
        SHMRING_IMPORT_NGINX, SHMRING_IMPORT_TWEMPROXY, SHMRING_IMPORT_LIBKETAMA};
    for (size_t i = 0; i < COUNT_OF(formats); i++) {
        shmring_nodeset_t *set = NULL;
        shmring_import_error_t error;
        ck_assert_int_eq(shmring_nodeset_import(formats[i], text, sizeof(text) - 1, NULL,
                                                &set, &error),
                         SHMRING_EINVAL);
        ck_assert_int_eq(error.line, 3);
        ck_assert_str_eq(error.text, "a NUL byte: not a text file");
        ck_assert_ptr_null(set);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("import");
    TEST_CASE(suite, "quote", test_quote_printable, test_quote_utf8,
              test_quote_other_bytes, test_quote_cut);
    TEST_CASE(suite, "numbers", test_number);
    TEST_CASE(suite, "errors", test_fail, test_fail_once, test_add);
    TEST_CASE(suite, "sections", test_section_new, test_take_by_name,
              test_take_without_name, test_sections_free_empty);
    TEST_CASE(suite, "entry", test_format_names, test_nul_byte);
    return test_run_suite(suite);
}
