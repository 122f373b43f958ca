/* Tests of the nginx configuration reader (lib/import_nginx.c). */
#include "test_placement.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NGINX SHMRING_IMPORT_NGINX

/* A whole configuration: comments, quoting, an upstream of another method, the
 * stream module's twin, and every server parameter the reader takes. */
static const char configuration[] =
    "# a comment; { } \"\n"
    "events { worker_connections 64; }\n"
    "http {\n"
    "  upstream decoy { ip_hash; server 10.0.0.9:80; }\n"
    "  upstream cache {\n"
    "    hash $arg_key consistent;  # the continuum\n"
    "    server 10.0.0.1:8080 weight=3 max_fails=2 fail_timeout=5s;\n"
    "    server \"cache-b.example:8080\" down;\n"
    "    server 'unix:/run/cache c.sock' max_conns=10;\n"
    "    server [::1]:8081;\n"
    "    server backend-e;\n"
    "    keepalive 16; keepalive_requests 100; keepalive_time 1h;\n"
    "    keepalive_timeout 60s; zone cache 64k;\n"
    "  }\n"
    "  server { listen 80; location / { proxy_pass http://cache; set $x \"${y}z\"; } }\n"
    "}\n"
    "stream { upstream tcp { hash $remote_addr consistent; server 10.0.1.1:53; } }\n";

static const struct test_json_node cache_json_nodes[] = {
    {"10.0.0.1:8080", 0, "10.0.0.1:8080", NULL, 3, "up"},
    {"cache-b.example:8080", 1, "cache-b.example:8080", NULL, 1, "down"},
    {"unix:/run/cache c.sock", 2, "unix:/run/cache c.sock", NULL, 1, "up"},
    {"[::1]:8081", 3, "[::1]:8081", NULL, 1, "up"},
    {"backend-e", 4, "backend-e", NULL, 1, "up"},
};
static const struct test_json_text cache_json = {"nginx",
                                                 "crc32",
                                                 160,
                                                 TEST_JSON_NO_TABLE_SIZE,
                                                 cache_json_nodes,
                                                 COUNT_OF(cache_json_nodes)};

START_TEST(test_upstream_by_name)
{
    test_check_import(NGINX, configuration, "cache", &cache_json);
}
END_TEST

START_TEST(test_stream_upstream)
{
    test_check_import(NGINX, configuration, "tcp",
                      &TEST_JSON_TEXT("nginx", "crc32", 160, TEST_JSON_NO_TABLE_SIZE,
                                      {"10.0.1.1:53", 0, "10.0.1.1:53", NULL, 1, "up"}));
}
END_TEST

START_TEST(test_only_upstream_needs_no_name)
{
    char *json = test_import_json(
        NGINX, "upstream u {\n hash $k consistent;\n server a:1 weight=65535;\n}\n",
        NULL);
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"a:1\""));
    ck_assert_ptr_nonnull(strstr(json, "\"weight\": 65535"));
    free(json);
}
END_TEST

/* The imported ring answers as the placement does for the same servers. */
START_TEST(test_import_places_like_the_node_set)
{
    shmring_nodeset_t *imported;
    shmring_import_error_t error;
    static const char text[] =
        "upstream u { hash $k consistent; server 10.0.0.1:80 weight=2; "
        "server 10.0.0.2:80 down; server 10.0.0.3:80; }";
    ck_assert_int_eq(
        shmring_nodeset_import(NGINX, text, strlen(text), NULL, &imported, &error), 0);
    shmring_nodeset_t *built = test_empty_set(SHMRING_ALGORITHM_NGINX, SHMRING_HASH_CRC32,
                                              SHMRING_DEFAULT_VNODES);
    ck_assert_int_eq(
        shmring_nodeset_add(built, "10.0.0.1:80", NULL, 2, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(built, "10.0.0.2:80", NULL, 1, SHMRING_STATE_DOWN, NULL), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(built, "10.0.0.3:80", NULL, 1, SHMRING_STATE_UP, NULL), 0);
    shmring_nodeset_diff_t *diff;
    ck_assert_int_eq(shmring_nodeset_diff(built, imported, &diff), 0);
    ck_assert_uint_eq(shmring_nodeset_diff_count(diff), 0);
    shmring_nodeset_diff_free(diff);
    shmring_nodeset_free(built);
    shmring_nodeset_free(imported);
}
END_TEST

static const struct test_import_failure failures[] = {
    /* What nginx would balance otherwise. */
    {"upstream u {\n ip_hash;\n server a:1;\n}", NULL, 2,
     "'ip_hash' is not supported: only 'hash KEY consistent' places keys on a continuum"},
    {"upstream u {\n server a:1;\n least_conn;\n}", NULL, 3,
     "'least_conn' is not supported: only 'hash KEY consistent' places keys on a "
     "continuum"},
    {"upstream u {\n hash $k;\n server a:1;\n}", NULL, 2,
     "'hash' without 'consistent' is not supported: nginx then picks a server by the "
     "hash modulo the servers"},
    {"upstream u { hash $k consistent; hash $k consistent; server a:1; }", NULL, 1,
     "'hash' is given twice"},
    {"upstream u { hash $k random; server a:1; }", NULL, 1,
     "'hash' takes a key and 'consistent', nothing else"},
    {"\nupstream u {\n server a:1;\n}", NULL, 2,
     "upstream 'u' has no 'hash KEY consistent': nginx would balance it round robin"},
    {"upstream u {\n hash $k consistent;\n}", NULL, 1, "upstream 'u' has no servers"},
    /* Servers. */
    {"upstream u { hash $k consistent;\n server a:1 backup; }", NULL, 2,
     "'backup' is not supported: nginx refuses it with 'hash'"},
    {"upstream u { hash $k consistent;\n server a:1 weight=0; }", NULL, 2,
     "'weight=0': the weight must be an integer from 1 to 65535"},
    {"upstream u { hash $k consistent;\n server a:1 weight=65536; }", NULL, 2,
     "'weight=65536': the weight must be an integer from 1 to 65535"},
    {"upstream u { hash $k consistent;\n server a:1 weight=2x; }", NULL, 2,
     "'weight=2x': the weight must be an integer from 1 to 65535"},
    {"upstream u { hash $k consistent;\n server a:1 resolve; }", NULL, 2,
     "server parameter 'resolve' is not supported"},
    {"upstream u { hash $k consistent;\n server a:1 max_fails=; }", NULL, 2,
     "server parameter 'max_fails=' is not supported"},
    {"upstream u { hash $k consistent;\n server; }", NULL, 2,
     "'server' needs an address"},
    {"upstream u { hash $k consistent;\n server a:1;\n server a:1 down; }", NULL, 3,
     "server 'a:1' is given twice: the peer would merge their points, a node set "
     "cannot hold both"},
    {"upstream u { hash $k consistent;\n server \"a\\tb\"; }", NULL, 2,
     "server 'a\\x09b': a server must be 1-255 bytes of UTF-8 text"},
    /* Other directives and blocks in the upstream. */
    {"upstream u { hash $k consistent; server a:1;\n include more.conf; }", NULL, 2,
     "'include' is not supported in an upstream"},
    {"upstream u { hash $k consistent; server a:1;\n \"\\x01\x7f\"; }", NULL, 2,
     "'\\x01\\x7f' is not supported in an upstream"},
    {"upstream u { hash $k consistent; server a:1;\n check { } }", NULL, 2,
     "a block ('check {') inside an upstream"},
    /* Upstreams in that block are read too (and may grow the list of upstreams). */
    {"upstream u { hash $k consistent; server a:1;\n check { upstream a { } upstream b "
     "{ } upstream c { } upstream d { } upstream e { } } }",
     "u", 2, "a block ('check {') inside an upstream"},
    /* Choosing the upstream. */
    {"upstream a { hash $k consistent; server a:1; }\n"
     "upstream b { hash $k consistent; server b:1; }",
     NULL, 0, "2 upstream blocks (the first 'a' on line 1): name the one to import"},
    {"upstream a { hash $k consistent; server a:1; }", "b", 0, "no upstream 'b'"},
    {"http { server { listen 80; } }", NULL, 0, "no upstream block"},
    {"upstream a { hash $k consistent; server a:1; }\n"
     "upstream a { hash $k consistent; server b:1; }",
     "a", 2, "upstream 'a' is given twice (first on line 1)"},
    {"upstream { hash $k consistent; server a:1; }", NULL, 1,
     "'upstream' takes one name"},
    /* The syntax, everywhere in the file. */
    {"http {\n}\n}", NULL, 3, "unexpected '}'"},
    {"http {\n upstream u { hash $k consistent; server a:1; }\n", NULL, 1,
     "unexpected end of file: the block opened here is not closed with '}'"},
    {"upstream u { hash $k consistent;\n server a:1;\n", NULL, 1,
     "unexpected end of file: upstream 'u' is not closed with '}'"},
    {"upstream \x0f {\n hash $k consistent;\n", NULL, 1,
     "unexpected end of file: upstream '\\x0f' is not closed with '}'"},
    {"events { }\nworker_processes 2", NULL, 2, "unexpected end of file, expecting ';'"},
    {"events { }\n;", NULL, 2, "unexpected ';'"},
    {"events { }\nset $a \"b\n\n", NULL, 2, "unexpected end of file in a quoted word"},
    {"set $a \"b\"c;", NULL, 1, "unexpected character after a quoted word"},
    {"set $a ${b;", NULL, 1, "unterminated variable name '${'"},
};

START_TEST(test_failure)
{
    const struct test_import_failure *f = &failures[_i];
    test_import_fails(NGINX, f->text, f->section, f->line, f->message);
}
END_TEST

/* A long word is shown cut, so that the message stays one short line. */
START_TEST(test_long_word_is_cut)
{
    char text[512];
    snprintf(text, sizeof(text), "upstream u { hash $k consistent; server a:1; %s; }",
             "directive_with_a_name_far_longer_than_any_message_should_show_in_full_x");
    test_import_fails(NGINX, text, NULL, 1,
                      "'directive_with_a_name_far_longer_than_any_message_should_show_in"
                      "...' is not supported in an upstream");
}
END_TEST

static Suite *import_nginx_suite(void)
{
    Suite *suite = suite_create("import_nginx");
    TEST_CASE(suite, "core", test_upstream_by_name, test_stream_upstream,
              test_only_upstream_needs_no_name, test_import_places_like_the_node_set);
    TCase *errors = TEST_CASE(suite, "errors", test_long_word_is_cut);
    tcase_add_loop_test(errors, test_failure, 0, sizeof(failures) / sizeof(failures[0]));
    return suite;
}

int main(void)
{
    return test_run_suite(import_nginx_suite());
}
