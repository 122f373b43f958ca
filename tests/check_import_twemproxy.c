/* Tests of the nutcracker configuration reader (lib/import_twemproxy.c). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWEMPROXY SHMRING_IMPORT_TWEMPROXY

/* Two pools: comments, ignored options, unnamed, named and Unix-socket servers,
 * quoted and unquoted items. */
static const char configuration[] = "# pools\n"
                                    "alpha:\n"
                                    "  listen: 127.0.0.1:22121\n"
                                    "  hash: fnv1a_64\n"
                                    "  distribution: ketama\n"
                                    "  auto_eject_hosts: true\n"
                                    "  servers:\n"
                                    "   - 127.0.0.1:11211:1\n"
                                    "   - 10.0.0.2:11212:2 cache-b\n"
                                    "   - /run/mc.sock:3\n"
                                    "beta:\n"
                                    "  hash: murmur\n"
                                    "  servers:\n"
                                    "  - \"10.0.0.3:11211:1 named\"\n";

/* Pool alpha: an unnamed server is named and addressed HOST:PORT (the placement
 * derives nutcracker's point string from it); a named one hashes its name. */
static const struct test_json_node alpha_json_nodes[] = {
    {"127.0.0.1:11211", 0, "127.0.0.1:11211", NULL, 1, "up"},
    {"cache-b", 1, "10.0.0.2:11212", "cache-b", 2, "up"},
    {"/run/mc.sock", 2, "/run/mc.sock", NULL, 3, "up"},
};
static const struct test_json_text alpha_json = {"twemproxy",
                                                 "fnv1a_64",
                                                 160,
                                                 TEST_JSON_NO_TABLE_SIZE,
                                                 alpha_json_nodes,
                                                 COUNT_OF(alpha_json_nodes)};

START_TEST(test_pool_by_name)
{
    test_check_import(TWEMPROXY, configuration, "alpha", &alpha_json);
}
END_TEST

START_TEST(test_pool_hash)
{
    test_check_import(TWEMPROXY, configuration, "beta",
                      &TEST_JSON_TEXT("twemproxy", "murmur", 160, TEST_JSON_NO_TABLE_SIZE,
                                      {"named", 0, "10.0.0.3:11211", "named", 1, "up"}));
}
END_TEST

/* nutcracker's defaults: fnv1a_64 and ketama; a document start is allowed. */
START_TEST(test_only_pool_and_defaults)
{
    char *json = test_import_json(TWEMPROXY,
                                  "---\r\npool: # the only one\r\n  servers:\r\n"
                                  "  - 'a:1:65535'\r\n",
                                  NULL);
    ck_assert_ptr_nonnull(strstr(json, "\"hash\": \"fnv1a_64\""));
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"a:1\""));
    ck_assert_ptr_nonnull(strstr(json, "\"weight\": 65535"));
    free(json);
}
END_TEST

START_TEST(test_every_hash)
{
    static const char *const hashes[] = {
        "fnv1a_64", "md5",      "crc16", "crc32",   "crc32a", "fnv1_32",
        "fnv1_64",  "fnv1a_32", "hsieh", "jenkins", "murmur", "one_at_a_time"};
    for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
        char text[128], want[64];
        snprintf(text, sizeof(text), "p:\n  hash: %s\n  servers:\n   - a:1:1\n",
                 hashes[i]);
        snprintf(want, sizeof(want), "\"hash\": \"%s\"", hashes[i]);
        char *json = test_import_json(TWEMPROXY, text, NULL);
        ck_assert_msg(strstr(json, want) != NULL, "%s", json);
        free(json);
    }
}
END_TEST

static const struct test_import_failure failures[] = {
    {"p:\n  distribution: modula\n  servers:\n   - a:1:1\n", NULL, 2,
     "distribution 'modula' is not supported: only ketama places keys on a continuum"},
    {"p:\n  hash_tag: \"{}\"\n  servers:\n   - a:1:1\n", NULL, 2,
     "'hash_tag' is not supported: nutcracker then hashes only part of each key"},
    {"p:\n  hash: xxh3\n  servers:\n   - a:1:1\n", NULL, 2,
     "hash 'xxh3' is not one of twemproxy's"},
    {"p:\n  servers:\n   - a:1:1\n  dyn_read_timeout: 5\n", NULL, 4,
     "'dyn_read_timeout' is not supported in a pool"},
    {"p:\n  hash: md5\n  hash: crc16\n  servers:\n   - a:1:1\n", NULL, 3,
     "'hash' is given twice"},
    {"p:\n  timeout:\n  servers:\n   - a:1:1\n", NULL, 2, "'timeout' has no value"},
    {"p:\n  servers: a:1:1\n", NULL, 2, "'servers' must be a list of '- ' items"},
    {"p:\n  servers:\n   - a:1\n", NULL, 3,
     "server 'a:1': expected 'HOST:PORT:WEIGHT [NAME]' with a port from 1 to 65535"},
    {"p:\n  servers:\n   - a:1:0\n", NULL, 3,
     "server 'a:1:0': expected 'HOST:PORT:WEIGHT [NAME]' with a weight from 1 to 65535"},
    {"p:\n  servers:\n   - a:70000:1\n", NULL, 3,
     "server 'a:70000:1': expected 'HOST:PORT:WEIGHT [NAME]' with a port from 1 to "
     "65535"},
    {"p:\n  servers:\n   - a:1:1 two names\n", NULL, 3,
     "server 'a:1:1 two names': expected 'HOST:PORT:WEIGHT [NAME]' with a name without "
     "blanks"},
    {"p:\n  servers:\n   - a:1:1 x\n   - b:2:1 x\n", NULL, 4,
     "server 'x' is given twice: the peer would merge their points, a node set cannot "
     "hold both"},
    {"p:\n  servers:\n   - a:1:1\n   - a:1:2\n", NULL, 4,
     "server 'a:1' is given twice: the peer would merge their points, a node set cannot "
     "hold both"},
    {"p:\n  servers:\n   - a:1:1 \x01x\n", NULL, 3,
     "server name '\\x01x': a name must be 1-255 bytes of UTF-8 text"},
    {"p:\n  servers:\n   - \x01:1:1\n", NULL, 3,
     "server '\\x01:1': a server must be 1-255 bytes of UTF-8 text"},
    {"p:\n  servers:\n   - [a:1:1]\n", NULL, 3,
     "YAML beyond plain and quoted scalars is not supported"},
    {"p:\n  servers:\n   - \"a:1:1\n", NULL, 3,
     "an unterminated quoted scalar is not supported"},
    {"p:\n  listen: &anchor x\n  servers:\n   - a:1:1\n", NULL, 2,
     "YAML beyond plain and quoted scalars is not supported"},
    {"p:\n  listen: \"a\\\"b\"\n  servers:\n   - a:1:1\n", NULL, 2,
     "a backslash or inner quote in a quoted scalar is not supported"},
    {"p:\n  servers:\n   - a:1:1\n    nested: 1\n", NULL, 4,
     "indented by 4, not 2 as the pool's other keys: nested mappings are not supported"},
    {"p:\n  listen: x\n  - a:1:1\n", NULL, 3, "a list item outside 'servers:'"},
    {"p:\n  servers\n", NULL, 2, "expected 'KEY: VALUE', not 'servers'"},
    {"p:\n\tservers:\n", NULL, 2, "a tab in the indentation (YAML allows spaces only)"},
    {"  servers:\n", NULL, 1, "an indented line before any pool"},
    {"p: {}\n", NULL, 1, "expected a pool ('NAME:'), not 'p: {}'"},
    {"p:\n  servers:\n   - a:1:1\np:\n", NULL, 4,
     "pool 'p' is given twice (first on line 1)"},
    {"p:\n  listen: x\n", NULL, 1, "pool 'p' has no servers"},
    {"# nothing\n", NULL, 0, "no pool"},
    {"a:\n  servers:\n   - a:1:1\nb:\n  servers:\n   - b:1:1\n", NULL, 0,
     "2 pools (the first 'a' on line 1): name the one to import"},
    {"a:\n  servers:\n   - a:1:1\n", "b", 0, "no pool 'b'"},
    /* A problem in another pool does not matter. */
    {"a:\n  distribution: random\nb:\n  servers:\n   - a:1:0\n", "b", 5,
     "server 'a:1:0': expected 'HOST:PORT:WEIGHT [NAME]' with a weight from 1 to 65535"},
};

START_TEST(test_failure)
{
    const struct test_import_failure *f = &failures[_i];
    test_import_fails(TWEMPROXY, f->text, f->section, f->line, f->message);
}
END_TEST

START_TEST(test_other_pool_problems_do_not_matter)
{
    char *json = test_import_json(
        TWEMPROXY, "a:\n  distribution: random\nb:\n  servers:\n   - b:1:1\n", "b");
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"b:1\""));
    free(json);
}
END_TEST

static Suite *import_twemproxy_suite(void)
{
    Suite *suite = suite_create("import_twemproxy");
    TEST_CASE(suite, "core", test_pool_by_name, test_pool_hash,
              test_only_pool_and_defaults, test_every_hash,
              test_other_pool_problems_do_not_matter);
    TCase *errors = tcase_create("errors");
    tcase_add_loop_test(errors, test_failure, 0, sizeof(failures) / sizeof(failures[0]));
    suite_add_tcase(suite, errors);
    return suite;
}

int main(void)
{
    return test_run_suite(import_twemproxy_suite());
}
