/* Tests of the JSON node-set module (lib/json.c). */
#include "test_support.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* The example of the format from the JSON node-set specification. */
static const char example[] = "{\"algorithm\": \"ketama\", \"hash\": \"md5\", "
                              "\"vnodes\": 160, \"table_size\": 65537,\n"
                              " \"nodes\": [{\"name\": \"cache-a\", \"address\": "
                              "\"10.0.1.1:11211\", \"weight\": 600},\n"
                              "           {\"name\": \"cache-b\", \"address\": "
                              "\"10.0.1.2:11211\", \"weight\": 300, "
                              "\"state\": \"down\"}]}";

/* What shmring_nodeset_to_json() writes for the example. */
static const struct test_json_node example_written_nodes[] = {
    {"cache-a", 0, "10.0.1.1:11211", NULL, 600, "up"},
    {"cache-b", 1, "10.0.1.2:11211", NULL, 300, "down"},
};
static const struct test_json_text example_written = {
    "ketama", "md5", 160, 65537, example_written_nodes, COUNT_OF(example_written_nodes)};

/* A failed call must leave *out as it was: it starts as this address. */
static char untouched;
#define UNTOUCHED ((shmring_nodeset_t *)(void *)&untouched)

/* Parses TEXT, expecting CODE and the one-line message TEXT_WANTED. */
static void parse_fails_with(const char *text, const shmring_params_t *base, int code,
                             int line, int column, const char *text_wanted)
{
    shmring_nodeset_t *set = UNTOUCHED;
    shmring_json_error_t error;
    memset(&error, 0x55, sizeof(error));
    int rc = shmring_nodeset_from_json(text, strlen(text), base, &set, &error);
    ck_assert_int_eq(rc, code);
    ck_assert_ptr_eq(set, UNTOUCHED);
    ck_assert_str_eq(error.text, text_wanted);
    ck_assert_int_eq(error.line, line);
    ck_assert_int_eq(error.column, column);
}

static void parse_fails(const char *text, const char *text_wanted)
{
    parse_fails_with(text, NULL, SHMRING_EJSON, 0, 0, text_wanted);
}

static void syntax_fails(const char *text, int line, int column, const char *text_wanted)
{
    parse_fails_with(text, NULL, SHMRING_EJSON, line, column, text_wanted);
}

static void check_node(const shmring_nodeset_t *set, size_t index, uint32_t id,
                       const char *name, const char *address, uint32_t weight,
                       shmring_state_t state)
{
    shmring_node_info_t node;
    ck_assert_int_eq(shmring_nodeset_get(set, index, &node), 0);
    ck_assert_uint_eq(node.id, id);
    ck_assert_str_eq(node.name, name);
    ck_assert_str_eq(node.address, address);
    ck_assert_uint_eq(node.weight, weight);
    ck_assert_int_eq(node.state, state);
}

static void check_params(const shmring_nodeset_t *set, shmring_algorithm_t algorithm,
                         shmring_hash_t hash, uint32_t vnodes, uint32_t table_size)
{
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    ck_assert_int_eq(params.algorithm, algorithm);
    ck_assert_int_eq(params.hash, hash);
    ck_assert_uint_eq(params.vnodes, vnodes);
    ck_assert_uint_eq(params.table_size, table_size);
}

static char *write_ok(const shmring_nodeset_t *set)
{
    char *text = NULL;
    ck_assert_int_eq(shmring_nodeset_to_json(set, &text), 0);
    ck_assert_ptr_nonnull(text);
    return text;
}

/* A string of LENGTH copies of C (LENGTH < 1024). */
static const char *repeat(char c, size_t length)
{
    static char text[1024];
    ck_assert_uint_lt(length, sizeof(text));
    memset(text, c, length);
    text[length] = '\0';
    return text;
}

/* Formats into BUF, failing the test if the text does not fit. */
__attribute__((format(printf, 3, 4))) static void format_into(char *buf, size_t size,
                                                              const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int length = vsnprintf(buf, size, format, args);
    va_end(args);
    ck_assert_int_ge(length, 0);
    ck_assert_uint_lt((size_t)length, size);
}

/* ---- parse ---------------------------------------------------------------- */

START_TEST(test_parse_example)
{
    shmring_nodeset_t *set = test_parse_json(example, NULL);
    check_params(set, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 160, 65537);
    ck_assert_uint_eq(shmring_nodeset_count(set), 2);
    check_node(set, 0, 0, "cache-a", "10.0.1.1:11211", 600, SHMRING_STATE_UP);
    check_node(set, 1, 1, "cache-b", "10.0.1.2:11211", 300, SHMRING_STATE_DOWN);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_node_defaults)
{
    shmring_nodeset_t *set = test_parse_json(
        "{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\", \"state\": \"up\"}]}", NULL);
    check_params(set, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, SHMRING_DEFAULT_VNODES,
                 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 2);
    check_node(set, 0, 0, "a", "a", 1, SHMRING_STATE_UP);
    check_node(set, 1, 1, "b", "b", 1, SHMRING_STATE_UP);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_params_from_base)
{
    shmring_params_t base = {.algorithm = SHMRING_ALGORITHM_MAGLEV,
                             .hash = SHMRING_HASH_MURMUR3,
                             .vnodes = 10,
                             .table_size = 131071};
    shmring_nodeset_t *set = test_parse_json("{\"nodes\": [{\"name\": \"a\"}]}", &base);
    check_params(set, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MURMUR3, 10, 131071);
    shmring_nodeset_free(set);

    /* Fields the text gives win over the base's, one by one. */
    set = test_parse_json("{\"vnodes\": 20, \"nodes\": []}", &base);
    check_params(set, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MURMUR3, 20, 131071);
    shmring_nodeset_free(set);
    set =
        test_parse_json("{\"hash\": \"fnv1a\", \"table_size\": 0, \"nodes\": []}", &base);
    check_params(set, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_FNV1A, 10, 0);
    shmring_nodeset_free(set);
    set = test_parse_json("{\"algorithm\": \"ring\", \"nodes\": []}", &base);
    check_params(set, SHMRING_ALGORITHM_RING, SHMRING_HASH_MURMUR3, 10, 131071);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_hash_fallback)
{
    /* The base's xxh3 cannot serve ketama: the text's algorithm brings md5. */
    shmring_params_t base;
    shmring_params_default(&base);
    shmring_nodeset_t *set =
        test_parse_json("{\"algorithm\": \"ketama\", \"nodes\": []}", &base);
    check_params(set, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, SHMRING_DEFAULT_VNODES,
                 0);
    shmring_nodeset_free(set);
    set = test_parse_json("{\"algorithm\": \"ketama\", \"nodes\": []}", NULL);
    check_params(set, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, SHMRING_DEFAULT_VNODES,
                 0);
    shmring_nodeset_free(set);

    /* A base hash the algorithm can use is kept, even a non-default one. */
    base.algorithm = SHMRING_ALGORITHM_KETAMA;
    base.hash = SHMRING_HASH_MD5;
    set = test_parse_json("{\"algorithm\": \"ring\", \"nodes\": []}", &base);
    check_params(set, SHMRING_ALGORITHM_RING, SHMRING_HASH_MD5, SHMRING_DEFAULT_VNODES,
                 0);
    shmring_nodeset_free(set);
    base.algorithm = SHMRING_ALGORITHM_RING;
    base.hash = SHMRING_HASH_CRC32;
    set = test_parse_json("{\"algorithm\": \"maglev\", \"nodes\": []}", &base);
    check_params(set, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_CRC32,
                 SHMRING_DEFAULT_VNODES, 0);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_empty_nodes)
{
    shmring_nodeset_t *set = test_parse_json("{\"nodes\": []}", NULL);
    ck_assert_uint_eq(shmring_nodeset_count(set), 0);
    check_params(set, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, SHMRING_DEFAULT_VNODES,
                 0);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_order_and_limits)
{
    char text[2048];
    char name[256];
    format_into(name, sizeof(name), "%s", repeat('n', 255));
    format_into(
        text, sizeof(text),
        "{\"vnodes\": 65535, \"nodes\": ["
        "{\"name\": \"c\", \"weight\": 65535},"
        "{\"name\": \"a\", \"weight\": 1, \"state\": \"down\"},"
        "{\"state\": \"up\", \"weight\": 2, \"address\": \"x y\", \"name\": \"b\"},"
        "{\"name\": \"%s\", \"address\": \"%s\"},"
        "{\"name\": \"caf\\u00e9 \\\"\\\\/\", \"address\": \"\xe6\x97\xa5\"}]}",
        name, repeat('a', 255));
    shmring_nodeset_t *set = test_parse_json(text, NULL);
    check_params(set, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 65535, 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 5);
    check_node(set, 0, 0, "c", "c", 65535, SHMRING_STATE_UP);
    check_node(set, 1, 1, "a", "a", 1, SHMRING_STATE_DOWN);
    check_node(set, 2, 2, "b", "x y", 2, SHMRING_STATE_UP);
    check_node(set, 3, 3, name, repeat('a', 255), 1, SHMRING_STATE_UP);
    check_node(set, 4, 4, "caf\xc3\xa9 \"\\/", "\xe6\x97\xa5", 1, SHMRING_STATE_UP);
    shmring_nodeset_free(set);

    set = test_parse_json("{\"vnodes\": 1, \"nodes\": []}", NULL);
    check_params(set, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 1, 0);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_reads_only_len_bytes)
{
    /* The text need not end in a NUL; what follows LEN bytes is not read. */
    static const char text[] = "{\"nodes\": [{\"name\": \"a\"}]}garbage";
    shmring_nodeset_t *set = UNTOUCHED;
    shmring_json_error_t error;
    ck_assert_int_eq(shmring_nodeset_from_json(text, sizeof(text) - 1 - strlen("garbage"),
                                               NULL, &set, &error),
                     0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 1);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_null_error)
{
    shmring_nodeset_t *set = UNTOUCHED;
    ck_assert_int_eq(shmring_nodeset_from_json("[]", 2, NULL, &set, NULL), SHMRING_EJSON);
    ck_assert_ptr_eq(set, UNTOUCHED);
    ck_assert_int_eq(shmring_nodeset_from_json("{\"nodes\": []}", 13, NULL, &set, NULL),
                     0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 0);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_parse_clears_error)
{
    shmring_nodeset_t *set = UNTOUCHED;
    shmring_json_error_t error;
    memset(&error, 0x55, sizeof(error));
    ck_assert_int_eq(shmring_nodeset_from_json("{\"nodes\": []}", 13, NULL, &set, &error),
                     0);
    ck_assert_int_eq(error.line, 0);
    ck_assert_int_eq(error.column, 0);
    ck_assert_str_eq(error.text, "");
    shmring_nodeset_free(set);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

START_TEST(test_error_syntax)
{
    syntax_fails("{\n  \"nodes\": [\n    {\"name\": \"a\",}\n  ]\n}", 3, 18,
                 "line 3, column 18: string or '}' expected near '}'");
    syntax_fails("{\"nodes\": [}", 1, 12, "line 1, column 12: unexpected token near '}'");
    syntax_fails("{\"nodes\": []} x", 1, 15,
                 "line 1, column 15: end of file expected near 'x'");
    syntax_fails("{\"nodes\": [{\"name\": tru}]}", 1, 23,
                 "line 1, column 23: invalid token near 'tru'");
    /* At the end of the input, Jansson's column 0 becomes an editor's column 1. */
    syntax_fails("", 1, 1, "line 1, column 1: unexpected token near end of file");
    syntax_fails("{\n\"nodes\": [\n", 3, 1,
                 "line 3, column 1: ']' expected near end of file");
    /* A raw control character in Jansson's quote of the input becomes '?'. */
    syntax_fails("{\x01}", 1, 2, "line 1, column 2: string or '}' expected near '?'");
    syntax_fails("{\"nodes\": [{\"name\": \"a\nb\"}]}", 1, 22,
                 "line 1, column 22: unexpected newline near '\"a'");
}
END_TEST

START_TEST(test_error_syntax_strings_and_numbers)
{
    syntax_fails("{\"nodes\": [{\"name\": \"\xff\"}]}", 1, 21,
                 "line 1, column 21: unable to decode byte 0xff near '\"'");
    syntax_fails("{\"nodes\": [{\"name\": \"a\\u0000b\"}]}", 1, 30,
                 "line 1, column 30: \\u0000 is not allowed without JSON_ALLOW_NUL near "
                 "'\"a\\u0000b\"'");
    /* An integer beyond Jansson's 64 bits is a syntax error, not a range error. */
    syntax_fails("{\"nodes\": [{\"name\": \"a\", \"weight\": 99999999999999999999}]}", 1,
                 55, "line 1, column 55: too big integer near '99999999999999999999'");
}
END_TEST

START_TEST(test_error_duplicate_key)
{
    syntax_fails("{\"nodes\": [], \"nodes\": []}", 1, 21,
                 "line 1, column 21: duplicate object key near '\"nodes\"'");
    syntax_fails("{\"nodes\": [\n  {\"name\": \"a\", \"weight\": 2, \"weight\": 3}]}", 2,
                 37, "line 2, column 37: duplicate object key near '\"weight\"'");
}
END_TEST

START_TEST(test_error_structure)
{
    parse_fails("[]", "(root): must be an object");
    parse_fails("\"nodes\"", "(root): must be an object");
    parse_fails("5", "(root): must be an object");
    parse_fails("null", "(root): must be an object");
    parse_fails("{}", "nodes: required array is missing");
    parse_fails("{\"algorithm\": \"ring\"}", "nodes: required array is missing");
    parse_fails("{\"nodes\": {}}", "nodes: must be an array");
    parse_fails("{\"nodes\": null}", "nodes: must be an array");
    parse_fails("{\"nodes\": [{\"name\": \"a\"}, 5]}", "nodes[1]: must be an object");
    parse_fails("{\"nodes\": [[]]}", "nodes[0]: must be an object");
    parse_fails("{\"nodes\": [{\"name\": \"a\"}, {\"address\": \"b\"}]}",
                "nodes[1].name: required string is missing");
}
END_TEST

START_TEST(test_error_unknown_field)
{
    parse_fails("{\"colour\": \"red\", \"nodes\": []}", "colour: unknown field");
    parse_fails("{\"nodes\": [], \"Nodes\": []}", "Nodes: unknown field");
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"port\": 11211}]}",
                "nodes[0].port: unknown field");
    parse_fails("{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\", \"ID\": 1}]}",
                "nodes[1].ID: unknown field");
    /* Keys that are not plain identifiers are quoted and escaped in the path. */
    parse_fails("{\"\": 1, \"nodes\": []}", "\"\": unknown field");
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"we ight\": 1}]}",
                "nodes[0].\"we ight\": unknown field");
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"x\\n\\\"y\": 1}]}",
                "nodes[0].\"x\\n\\\"y\": unknown field");
}
END_TEST

START_TEST(test_error_weight)
{
    static const char *const bad[] = {
        "0",   "65536", "-1",   "4294967297", "-4294967295", "\"5\"", "1.5",
        "1.0", "1e3",   "true", "false",      "null",        "[1]",   "{}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\", \"weight\": %s}]}",
                 bad[i]);
        parse_fails(text, "nodes[1].weight: must be an integer from 1 to 65535");
    }
}
END_TEST

START_TEST(test_error_vnodes)
{
    static const char *const bad[] = {"0",       "65536", "-1",  "4294967457",
                                      "\"160\"", "1.5",   "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "{\"vnodes\": %s, \"nodes\": []}", bad[i]);
        parse_fails(text, "vnodes: must be an integer from 1 to 65535");
    }
}
END_TEST

START_TEST(test_error_name)
{
    char text[1024];
    format_into(text, sizeof(text), "{\"nodes\": [{\"name\": \"%s\"}]}",
                repeat('n', 256));
    parse_fails(text, "nodes[0].name: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": \"\"}]}",
                "nodes[0].name: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\\tc\"}]}",
                "nodes[1].name: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": \"b\\u001bc\"}]}",
                "nodes[0].name: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": \"b\\u007f\"}]}",
                "nodes[0].name: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": 5}]}", "nodes[0].name: must be a string");
    parse_fails("{\"nodes\": [{\"name\": null}]}", "nodes[0].name: must be a string");
}
END_TEST

START_TEST(test_error_address)
{
    char text[1024];
    format_into(text, sizeof(text),
                "{\"nodes\": [{\"name\": \"a\", \"address\": \"%s\"}]}",
                repeat('a', 256));
    parse_fails(text, "nodes[0].address: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"address\": \"\"}]}",
                "nodes[0].address: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"address\": \"10.0.0.1\\n\"}]}",
                "nodes[0].address: must be 1-255 bytes without control characters");
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"address\": 11211}]}",
                "nodes[0].address: must be a string");
}
END_TEST

START_TEST(test_error_state)
{
    static const char *const bad[] = {"\"UP\"", "\"maybe\"", "\"\"", "true", "0", "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\", "
                 "\"state\": %s}]}",
                 bad[i]);
        parse_fails(text, "nodes[2].state: must be \"up\" or \"down\"");
    }
}
END_TEST

START_TEST(test_error_duplicate_name)
{
    parse_fails("{\"nodes\": [{\"name\": \"cache-a\"}, {\"name\": \"cache-b\"}, "
                "{\"name\": \"cache-c\"}, {\"name\": \"cache-d\"}, "
                "{\"name\": \"cache-a\", \"address\": \"elsewhere\"}]}",
                "nodes[4].name: duplicate node name \"cache-a\"");
    /* Names are compared byte for byte: "A" and "a" are two nodes. */
    shmring_nodeset_t *set =
        test_parse_json("{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"A\"}]}", NULL);
    ck_assert_uint_eq(shmring_nodeset_count(set), 2);
    shmring_nodeset_free(set);
}
END_TEST

/* Given ids are kept; nodes without one are numbered after the largest, in order. */
START_TEST(test_parse_given_ids)
{
    shmring_nodeset_t *set =
        test_parse_json("{\"nodes\": [{\"name\": \"a\", \"id\": 4}, {\"name\": \"b\"}, "
                        "{\"id\": 2, \"name\": \"c\"}, {\"name\": \"d\"}]}",
                        NULL);
    check_node(set, 0, 4, "a", "a", 1, SHMRING_STATE_UP);
    check_node(set, 1, 5, "b", "b", 1, SHMRING_STATE_UP);
    check_node(set, 2, 2, "c", "c", 1, SHMRING_STATE_UP);
    check_node(set, 3, 6, "d", "d", 1, SHMRING_STATE_UP);
    uint32_t id = 0;
    ck_assert_int_eq(shmring_nodeset_add(set, "e", NULL, 1, SHMRING_STATE_UP, &id), 0);
    ck_assert_uint_eq(id, 7);
    shmring_nodeset_free(set);

    /* The largest id there is. */
    set = test_parse_json("{\"nodes\": [{\"name\": \"a\", \"id\": 4294967294}]}", NULL);
    check_node(set, 0, UINT32_MAX - 1, "a", "a", 1, SHMRING_STATE_UP);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_error_id)
{
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"id\": 4}, {\"name\": \"b\"}, "
                "{\"name\": \"c\", \"id\": 4}]}",
                "nodes[2].id: duplicate id 4 (nodes[0] has it)");
    const char *const bad[] = {"-1", "4294967295", "\"3\"", "1.0", "null", "true"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[128];
        format_into(text, sizeof(text), "{\"nodes\": [{\"name\": \"a\", \"id\": %s}]}",
                    bad[i]);
        parse_fails(text, "nodes[0].id: must be an integer from 0 to 4294967294");
    }
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"id\": 4294967294}, {\"name\": "
                "\"b\"}]}",
                "nodes[1]: no id is left after the largest given id");
}
END_TEST

START_TEST(test_error_algorithm_and_hash)
{
    parse_fails(
        "{\"algorithm\": \"foo\", \"nodes\": []}",
        "algorithm: unknown algorithm \"foo\" (expected ring, maglev, ketama, "
        "twemproxy, nginx, libketama, envoy-maglev, envoy-ring, rendezvous, jump, "
        "haproxy, uhashring, hashring, dalli, spymemcached or groupcache)");
    parse_fails(
        "{\"algorithm\": \"Ketama\", \"nodes\": []}",
        "algorithm: unknown algorithm \"Ketama\" (expected ring, maglev, ketama, "
        "twemproxy, nginx, libketama, envoy-maglev, envoy-ring, rendezvous, jump, "
        "haproxy, uhashring, hashring, dalli, spymemcached or groupcache)");
    parse_fails("{\"algorithm\": 2, \"nodes\": []}", "algorithm: must be a string");
    parse_fails("{\"hash\": \"sha3\", \"nodes\": []}",
                "hash: unknown hash \"sha3\" (expected xxh3, md5, crc32, fnv1a, murmur3, "
                "twemproxy's hash: names, "
                "xxh64, murmur2, murmur3_32, murmur3_128, sdbm, djb2, wt6, *_avalanche, "
                "ketama, sha1, sha256, sha512, native)");
    parse_fails("{\"hash\": null, \"nodes\": []}", "hash: must be a string");
    parse_fails("{\"algorithm\": \"ketama\", \"hash\": \"xxh3\", \"nodes\": []}",
                "hash: \"xxh3\" cannot be used with algorithm \"ketama\" (expected md5)");
    /* The same when the algorithm comes from the base. */
    shmring_params_t base = {.algorithm = SHMRING_ALGORITHM_KETAMA,
                             .hash = SHMRING_HASH_MD5,
                             .vnodes = 160,
                             .table_size = 0};
    parse_fails_with(
        "{\"hash\": \"crc32\", \"nodes\": []}", &base, SHMRING_EJSON, 0, 0,
        "hash: \"crc32\" cannot be used with algorithm \"ketama\" (expected md5)");
}
END_TEST

START_TEST(test_error_quoted_values)
{
    /* Values are escaped, and cut short, so that a message stays one bounded line. */
    parse_fails(
        "{\"algorithm\": \"a\\\"b\\n\\u0001\", \"nodes\": []}",
        "algorithm: unknown algorithm \"a\\\"b\\n\\u0001\" (expected ring, "
        "maglev, ketama, "
        "twemproxy, nginx, libketama, envoy-maglev, envoy-ring, rendezvous, jump, "
        "haproxy, uhashring, hashring, dalli, spymemcached or groupcache)");
    char text[1024];
    char wanted[512];
    format_into(text, sizeof(text), "{\"hash\": \"%s\", \"nodes\": []}",
                repeat('h', 500));
    format_into(wanted, sizeof(wanted),
                "hash: unknown hash \"%s...\" (expected xxh3, md5, crc32, fnv1a, "
                "murmur3, twemproxy's hash: names, "
                "xxh64, murmur2, murmur3_32, murmur3_128, sdbm, djb2, wt6, *_avalanche, "
                "ketama, sha1, sha256, sha512, native)",
                repeat('h', 64));
    parse_fails(text, wanted);
    /* A cut never splits a UTF-8 sequence: 63 ASCII bytes, then a 2-byte letter. */
    format_into(text, sizeof(text), "{\"hash\": \"%s\xc3\xa9\", \"nodes\": []}",
                repeat('h', 63));
    format_into(wanted, sizeof(wanted),
                "hash: unknown hash \"%s...\" (expected xxh3, md5, crc32, fnv1a, "
                "murmur3, twemproxy's hash: names, "
                "xxh64, murmur2, murmur3_32, murmur3_128, sdbm, djb2, wt6, *_avalanche, "
                "ketama, sha1, sha256, sha512, native)",
                repeat('h', 63));
    parse_fails(text, wanted);
    /* A long odd key is quoted and cut the same way. */
    format_into(text, sizeof(text), "{\"nodes\": [], \"%s\": 1}", repeat('k', 300));
    format_into(wanted, sizeof(wanted), "\"%s...\": unknown field", repeat('k', 64));
    parse_fails(text, wanted);
}
END_TEST

START_TEST(test_error_table_size)
{
    static const char *const bad[] = {"65536",     "1",        "-1",
                                      "65535",     "16777259", "4294967311",
                                      "\"65537\"", "65537.0",  "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "{\"algorithm\": \"maglev\", \"table_size\": %s, \"nodes\": []}",
                 bad[i]);
        parse_fails(text,
                    "table_size: must be a prime number up to 16777216, or 0 for the "
                    "default");
    }
    shmring_nodeset_t *set = test_parse_json(
        "{\"algorithm\": \"maglev\", \"table_size\": 16777213, \"nodes\": []}", NULL);
    check_params(set, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, SHMRING_DEFAULT_VNODES,
                 16777213);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_envoy_ring_sizes)
{
    /* envoy-ring's ring sizes round-trip, and a ring that gives none writes none. */
    static const char text[] = "{\"algorithm\": \"envoy-ring\", \"hash\": \"murmur2\", "
                               "\"min_ring_size\": 12, \"max_ring_size\": 24, "
                               "\"nodes\": [{\"name\": \"a\", \"address\": "
                               "\"127.0.0.1:80\", \"hash_key\": \"k\"}]}";
    shmring_nodeset_t *set = test_parse_json(text, NULL);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    ck_assert_int_eq(params.algorithm, SHMRING_ALGORITHM_ENVOY_RING);
    ck_assert_int_eq(params.hash, SHMRING_HASH_MURMUR2);
    ck_assert_uint_eq(params.min_ring_size, 12);
    ck_assert_uint_eq(params.max_ring_size, 24);
    char *dumped;
    ck_assert_int_eq(shmring_nodeset_to_json(set, &dumped), 0);
    ck_assert_ptr_nonnull(strstr(dumped, "\"min_ring_size\": 12,"));
    ck_assert_ptr_nonnull(strstr(dumped, "\"max_ring_size\": 24,"));
    shmring_nodeset_t *again = test_parse_json(dumped, NULL);
    shmring_nodeset_params(again, &params);
    ck_assert_uint_eq(params.min_ring_size, 12);
    ck_assert_uint_eq(params.max_ring_size, 24);
    free(dumped);
    shmring_nodeset_free(again);
    shmring_nodeset_free(set);

    /* Without a hash, envoy-ring takes Envoy's xxh64. */
    set = test_parse_json("{\"algorithm\": \"envoy-maglev\", \"nodes\": []}", NULL);
    shmring_nodeset_params(set, &params);
    ck_assert_int_eq(params.hash, SHMRING_HASH_XXH64);
    ck_assert_int_eq(shmring_nodeset_to_json(set, &dumped), 0);
    ck_assert_ptr_null(strstr(dumped, "ring_size"));
    ck_assert_ptr_nonnull(strstr(dumped, "\"table_size\": 0,"));
    free(dumped);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_error_envoy_params)
{
    static const char *const bad[] = {"0", "8388609", "-1", "\"12\"", "1.5", "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "{\"algorithm\": \"envoy-ring\", \"min_ring_size\": %s, \"nodes\": []}",
                 bad[i]);
        parse_fails(text, "min_ring_size: must be an integer from 1 to 8388608");
        snprintf(text, sizeof(text),
                 "{\"algorithm\": \"envoy-ring\", \"max_ring_size\": %s, \"nodes\": []}",
                 bad[i]);
        parse_fails(text, "max_ring_size: must be an integer from 1 to 8388608");
    }
    /* Envoy's BadRingSizeBounds, and a maximum below the default minimum. */
    parse_fails("{\"algorithm\": \"envoy-ring\", \"min_ring_size\": 20, "
                "\"max_ring_size\": 10, \"nodes\": []}",
                "min_ring_size: must not exceed max_ring_size (10)");
    parse_fails("{\"algorithm\": \"envoy-ring\", \"max_ring_size\": 1000, \"nodes\": []}",
                "min_ring_size: must not exceed max_ring_size (1000)");
    /* A prime past Envoy's largest maglev table. */
    parse_fails("{\"algorithm\": \"envoy-maglev\", \"table_size\": 5000077, "
                "\"nodes\": []}",
                "table_size: must be at most 5000011 for envoy-maglev");
    parse_fails("{\"algorithm\": \"envoy-maglev\", \"hash\": \"xxh3\", \"nodes\": []}",
                "hash: \"xxh3\" cannot be used with algorithm \"envoy-maglev\" "
                "(expected xxh64)");
}
END_TEST

START_TEST(test_error_first_in_document_order)
{
    parse_fails("{\"nodes\": [{\"name\": \"a\", \"weight\": 0}], \"algorithm\": \"x\"}",
                "nodes[0].weight: must be an integer from 1 to 65535");
    parse_fails(
        "{\"algorithm\": \"x\", \"nodes\": [{\"name\": \"a\", \"weight\": 0}]}",
        "algorithm: unknown algorithm \"x\" (expected ring, maglev, ketama, "
        "twemproxy, nginx, libketama, envoy-maglev, envoy-ring, rendezvous, jump, "
        "haproxy, uhashring, hashring, dalli, spymemcached or groupcache)");
    parse_fails("{\"nodes\": [{\"weight\": 0, \"name\": \"\"}]}",
                "nodes[0].weight: must be an integer from 1 to 65535");
}
END_TEST

START_TEST(test_error_bad_base)
{
    shmring_params_t base;
    shmring_params_default(&base);
    base.vnodes = 0;
    parse_fails_with("{\"nodes\": []}", &base, SHMRING_EINVAL, 0, 0,
                     "base parameters: vnodes must be an integer from 1 to 65535");
    /* What the text gives replaces the bad base value. */
    shmring_nodeset_t *set = test_parse_json("{\"vnodes\": 5, \"nodes\": []}", &base);
    check_params(set, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 5, 0);
    shmring_nodeset_free(set);
}
END_TEST

/*
 * Allocation failures. This program defines its own malloc() family (glibc lets a
 * program replace it): the library, linked in statically, allocates through it, and
 * so does Jansson once json_set_alloc_funcs() points it here. One chosen allocation
 * fails, and the blocks alive are counted, so that a failed call can be shown to
 * return SHMRING_ENOMEM, leave *out alone and free all it took. AddressSanitizer
 * replaces malloc() itself, and finds leaks on its own.
 */
#define TEST_FAIL_ALLOCATIONS (!TEST_ASAN)

#if TEST_FAIL_ALLOCATIONS
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *block, size_t size);
void __libc_free(void *block);

/*
 * Allocations to let through before one fails (-1: never fail). Volatile because the
 * compiler takes malloc() for the C library's, which touches no variable of this
 * file, and could otherwise drop a store made before a call into the library.
 */
static volatile long allocations_until_failure = -1;
static volatile bool allocation_failed;
static volatile long blocks_alive;

static bool allocation_fails(void)
{
    if (allocations_until_failure < 0)
        return false;
    if (allocations_until_failure-- > 0)
        return false;
    allocation_failed = true;
    return true;
}

void *malloc(size_t size)
{
    void *block = allocation_fails() ? NULL : __libc_malloc(size);
    blocks_alive += block != NULL;
    return block;
}

void *calloc(size_t count, size_t size)
{
    void *block = allocation_fails() ? NULL : __libc_calloc(count, size);
    blocks_alive += block != NULL;
    return block;
}

void *realloc(void *block, size_t size)
{
    if (allocation_fails())
        return NULL;
    void *moved = __libc_realloc(block, size);
    blocks_alive += block == NULL && moved != NULL;
    return moved;
}

void free(void *block)
{
    blocks_alive -= block != NULL;
    __libc_free(block);
}

/* The C library's strdup() would allocate with its own malloc(), uncounted. */
char *strdup(const char *text)
{
    size_t size = strlen(text) + 1;
    char *copy = malloc(size);
    if (copy != NULL)
        memcpy(copy, text, size);
    return copy;
}

/* Jansson's own allocations, never failed and not counted; see below. */
static void *jansson_malloc(size_t size)
{
    return __libc_malloc(size);
}

static void jansson_free(void *block)
{
    __libc_free(block);
}

START_TEST(test_error_out_of_memory_reading)
{
    /* Jansson 2.14's parser must not see an allocation fail: its lexer drops the
     * error of lex_save() and then reads past its buffer (akheron/jansson#362). So
     * only the module's own allocations fail here. */
    json_set_alloc_funcs(jansson_malloc, jansson_free);
    shmring_nodeset_t *set = test_parse_json(example, NULL);
    shmring_nodeset_free(set);
    for (long n = 0;; n++) {
        long alive = blocks_alive;
        shmring_json_error_t error;
        set = UNTOUCHED;
        allocation_failed = false;
        allocations_until_failure = n;
        int rc = shmring_nodeset_from_json(example, strlen(example), NULL, &set, &error);
        allocations_until_failure = -1;
        /* Check's assertions allocate in fork mode: count before the first one. */
        long taken = blocks_alive - alive;
        if (!allocation_failed) {
            /* Freeing the node set gives back every block the call took. */
            long freed = blocks_alive;
            if (rc == 0)
                shmring_nodeset_free(set);
            freed -= blocks_alive;
            ck_assert_int_eq(rc, 0);
            ck_assert_int_eq(freed, taken);
            /* The set, its slots, its nodes, two names and two addresses. */
            ck_assert_int_eq(n, 7);
            break;
        }
        ck_assert_int_eq(rc, SHMRING_ENOMEM);
        ck_assert_ptr_eq(set, UNTOUCHED);
        ck_assert_str_eq(error.text, "out of memory");
        ck_assert_int_eq(error.line, 0);
        ck_assert_int_eq(taken, 0);
    }
}
END_TEST

START_TEST(test_error_out_of_memory_writing)
{
    json_set_alloc_funcs(malloc, free);
    shmring_nodeset_t *set = test_parse_json(example, NULL);
    free(write_ok(set));
    for (long n = 0;; n++) {
        long alive = blocks_alive;
        char *text = NULL;
        allocation_failed = false;
        allocations_until_failure = n;
        int rc = shmring_nodeset_to_json(set, &text);
        allocations_until_failure = -1;
        /* Check's assertions allocate in fork mode: count before the first one. */
        long taken = blocks_alive - alive;
        if (!allocation_failed) {
            ck_assert_int_eq(rc, 0);
            ck_assert_int_eq(taken, 1);
            test_check_json_text(text, &example_written);
            free(text);
            ck_assert_int_gt(n, 20);
            break;
        }
        ck_assert_int_eq(rc, SHMRING_ENOMEM);
        ck_assert_ptr_null(text);
        ck_assert_int_eq(taken, 0);
    }
    shmring_nodeset_free(set);
}
END_TEST
#endif

/* ---- roundtrip ------------------------------------------------------------ */

START_TEST(test_roundtrip_example_text)
{
    shmring_nodeset_t *set = test_parse_json(example, NULL);
    char *text = write_ok(set);
    test_check_json_text(text, &example_written);
    free(text);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_roundtrip_empty_and_default_table)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    char *text = write_ok(set);
    ck_assert_str_eq(text, "{\n"
                           "  \"algorithm\": \"ring\",\n"
                           "  \"hash\": \"xxh3\",\n"
                           "  \"vnodes\": 160,\n"
                           "  \"nodes\": []\n"
                           "}\n");
    shmring_nodeset_t *again = test_parse_json(text, NULL);
    ck_assert_uint_eq(shmring_nodeset_count(again), 0);
    check_params(again, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 160, 0);
    free(text);
    shmring_nodeset_free(again);
    shmring_nodeset_free(set);
}
END_TEST

/* Writes SET, reads it back, writes that: the two texts and the two sets are equal. */
static void check_roundtrip(const shmring_nodeset_t *set)
{
    char *text = write_ok(set);
    shmring_nodeset_t *again = test_parse_json(text, NULL);
    char *text_again = write_ok(again);
    ck_assert_str_eq(text_again, text);
    test_check_same_nodeset(set, again);
    free(text_again);
    shmring_nodeset_free(again);
    free(text);
}

START_TEST(test_roundtrip_varied_set)
{
    shmring_nodeset_t *set =
        test_nodeset(300, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MURMUR3);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.table_size = 131071;
    params.vnodes = 7;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    uint64_t random = 42;
    for (size_t i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%zu", i);
        uint32_t weight = (uint32_t)(test_random(&random) % SHMRING_WEIGHT_MAX) + 1;
        ck_assert_int_eq(shmring_nodeset_set_weight(set, name, weight), 0);
        if (i % 7 == 3)
            ck_assert_int_eq(shmring_nodeset_set_state(set, name, SHMRING_STATE_DOWN), 0);
    }
    /* Removed nodes leave holes in the ids, which the text carries over. */
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-10"), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-0"), 0);
    ck_assert_int_eq(shmring_nodeset_add(set, "quote\"back\\slash/ tab-free",
                                         "[::1]:11211", 65535, SHMRING_STATE_DOWN, NULL),
                     0);
    ck_assert_int_eq(shmring_nodeset_add(set, "\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x98\x80",
                                         NULL, 1, SHMRING_STATE_UP, NULL),
                     0);
    char long_name[256];
    format_into(long_name, sizeof(long_name), "%s", repeat('z', 255));
    ck_assert_int_eq(
        shmring_nodeset_add(set, long_name, repeat('y', 255), 9, SHMRING_STATE_UP, NULL),
        0);
    check_roundtrip(set);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_roundtrip_every_algorithm_and_hash)
{
    for (int a = SHMRING_ALGORITHM_RING; a <= SHMRING_ALGORITHM_KETAMA; a++) {
        for (int h = SHMRING_HASH_XXH3; h <= SHMRING_HASH_MURMUR3; h++) {
            if (a == SHMRING_ALGORITHM_KETAMA && h != SHMRING_HASH_MD5)
                continue;
            shmring_nodeset_t *set =
                test_nodeset(5, (shmring_algorithm_t)a, (shmring_hash_t)h);
            check_roundtrip(set);
            shmring_nodeset_free(set);
        }
    }
}
END_TEST

/* Reads TEXT over BASE: the node set read has the parameters that follow, and writes
 * TEXT again. */
static void check_reread_over_base(const char *text, const shmring_params_t *base,
                                   shmring_algorithm_t algorithm, shmring_hash_t hash,
                                   uint32_t vnodes, uint32_t table_size)
{
    shmring_nodeset_t *again = test_parse_json(text, base);
    check_params(again, algorithm, hash, vnodes, table_size);
    char *text_again = write_ok(again);
    ck_assert_str_eq(text_again, text);
    free(text_again);
    shmring_nodeset_free(again);
}

START_TEST(test_roundtrip_ignores_base)
{
    /* The text names every parameter but table_size, so the base matters only there. */
    shmring_nodeset_t *set = test_nodeset(3, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5);
    char *text = write_ok(set);
    shmring_params_t base = {.algorithm = SHMRING_ALGORITHM_MAGLEV,
                             .hash = SHMRING_HASH_CRC32,
                             .vnodes = 3,
                             .table_size = 0};
    check_reread_over_base(text, &base, SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5,
                           SHMRING_DEFAULT_VNODES, 0);
    free(text);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_roundtrip_maglev_default_table_over_other_base)
{
    /* A maglev ring with the default table says "table_size": 0, so loading its text
     * into a ring pinned to another size gives the default back, not that size. */
    shmring_nodeset_t *set = test_nodeset(2, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    char *text = write_ok(set);
    ck_assert_ptr_nonnull(strstr(text, "  \"table_size\": 0,\n"));
    shmring_params_t base = {.algorithm = SHMRING_ALGORITHM_MAGLEV,
                             .hash = SHMRING_HASH_XXH3,
                             .vnodes = SHMRING_DEFAULT_VNODES,
                             .table_size = 101};
    check_reread_over_base(text, &base, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3,
                           SHMRING_DEFAULT_VNODES, 0);
    free(text);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *json_suite(void)
{
    Suite *suite = suite_create("json");

    TEST_CASE(suite, "parse", test_parse_example, test_parse_given_ids,
              test_parse_node_defaults, test_parse_params_from_base,
              test_parse_hash_fallback, test_parse_empty_nodes,
              test_parse_order_and_limits, test_parse_reads_only_len_bytes,
              test_parse_null_error, test_parse_clears_error);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, test_error_syntax);
    tcase_add_test(errors, test_error_syntax_strings_and_numbers);
    tcase_add_test(errors, test_error_duplicate_key);
    tcase_add_test(errors, test_error_structure);
    tcase_add_test(errors, test_error_unknown_field);
    tcase_add_test(errors, test_error_id);
    tcase_add_test(errors, test_error_weight);
    tcase_add_test(errors, test_error_vnodes);
    tcase_add_test(errors, test_error_name);
    tcase_add_test(errors, test_error_address);
    tcase_add_test(errors, test_error_state);
    tcase_add_test(errors, test_error_duplicate_name);
    tcase_add_test(errors, test_error_algorithm_and_hash);
    tcase_add_test(errors, test_error_quoted_values);
    tcase_add_test(errors, test_error_table_size);
    tcase_add_test(errors, test_error_envoy_params);
    tcase_add_test(errors, test_envoy_ring_sizes);
    tcase_add_test(errors, test_error_first_in_document_order);
    tcase_add_test(errors, test_error_bad_base);
#if TEST_FAIL_ALLOCATIONS
    tcase_add_test(errors, test_error_out_of_memory_reading);
    tcase_add_test(errors, test_error_out_of_memory_writing);
#endif
    suite_add_tcase(suite, errors);

    TEST_CASE(suite, "roundtrip", test_roundtrip_example_text,
              test_roundtrip_empty_and_default_table, test_roundtrip_varied_set,
              test_roundtrip_every_algorithm_and_hash, test_roundtrip_ignores_base,
              test_roundtrip_maglev_default_table_over_other_base);
    return suite;
}

int main(void)
{
    return test_run_suite(json_suite());
}
