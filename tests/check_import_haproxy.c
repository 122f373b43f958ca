/* Tests of the HAProxy configuration reader (lib/import_haproxy.c). */
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#define HAPROXY SHMRING_IMPORT_HAPROXY

/* A whole configuration that haproxy -c accepts (with a resolvable backend-e):
 * comments, quoting and escapes, settings from defaults
 * (balance, hash-type, default-server), a backend of another balance, and a listen
 * section that overrides the hash-type it inherits. */
static const char configuration[] =
    "# HAProxy configuration; \"quotes\" and 'more' in a comment\n"
    "global\n"
    "    maxconn 100\n"
    "defaults\n"
    "    mode http\n"
    "    balance hdr(X-Key)\n"
    "    hash-type consistent djb2 avalanche\n"
    "    default-server weight 2 check\n"
    "frontend fe\n"
    "    bind :80\n"
    "    use_backend cache\n"
    "backend decoy\n"
    "    balance roundrobin\n"
    "    server d1 10.0.0.9:80\n"
    "backend cache\n"
    "    http-send-name-header X-Server\n"
    "    server a 10.0.0.1:8080 id 7 inter 2s   # an explicit id\n"
    "    server \"b-c\" 'unix@/run/b c.sock' weight 256 disabled\n"
    "    server c.d unix@/run/c\\ d.sock weight 1 maxconn 10\n"
    "listen inherit\n"
    "    bind :81\n"
    "    hash-type consistent\n"
    "    server e backend-e\n";

static const char cache_json[] = "{\n"
                                 "  \"algorithm\": \"haproxy\",\n"
                                 "  \"hash\": \"djb2_avalanche\",\n"
                                 "  \"vnodes\": 160,\n"
                                 "  \"nodes\": [\n"
                                 "    {\n"
                                 "      \"name\": \"a\",\n"
                                 "      \"id\": 0,\n"
                                 "      \"address\": \"10.0.0.1:8080\",\n"
                                 "      \"hash_key\": \"7\",\n"
                                 "      \"weight\": 2,\n"
                                 "      \"state\": \"up\"\n"
                                 "    },\n"
                                 "    {\n"
                                 "      \"name\": \"b-c\",\n"
                                 "      \"id\": 1,\n"
                                 "      \"address\": \"unix@/run/b c.sock\",\n"
                                 "      \"weight\": 256,\n"
                                 "      \"state\": \"down\"\n"
                                 "    },\n"
                                 "    {\n"
                                 "      \"name\": \"c.d\",\n"
                                 "      \"id\": 2,\n"
                                 "      \"address\": \"unix@/run/c d.sock\",\n"
                                 "      \"weight\": 1,\n"
                                 "      \"state\": \"up\"\n"
                                 "    }\n"
                                 "  ]\n"
                                 "}\n";

START_TEST(test_backend_by_name)
{
    char *json = test_import_json(HAPROXY, configuration, "cache");
    ck_assert_str_eq(json, cache_json);
    free(json);
}
END_TEST

START_TEST(test_listen_inherits_and_overrides)
{
    /* balance and default-server's weight come from defaults; `hash-type consistent`
     * alone is sdbm with avalanche. */
    char *json = test_import_json(HAPROXY, configuration, "inherit");
    ck_assert_ptr_nonnull(strstr(json, "\"hash\": \"sdbm_avalanche\""));
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"e\""));
    ck_assert_ptr_nonnull(strstr(json, "\"weight\": 2"));
    free(json);
}
END_TEST

START_TEST(test_named_defaults)
{
    char *json = test_import_json(HAPROXY,
                                  "defaults hashed\n balance uri whole\n"
                                  " hash-type consistent wt6\n"
                                  "defaults\n balance roundrobin\n"
                                  "backend b from hashed\n server a 1:1 id 3\n",
                                  NULL);
    ck_assert_ptr_nonnull(strstr(json, "\"hash\": \"wt6\""));
    ck_assert_ptr_nonnull(strstr(json, "\"hash_key\": \"3\""));
    free(json);
}
END_TEST

static const struct test_import_failure failures[] = {
    {"backend b\n balance uri\n hash-type consistent\n server a 1:1 id 4\n server b 2:2 "
     "id 4\n",
     NULL, 5, "'id 4' is already server 'a''s"},
    {"backend b\n balance uri\n hash-type consistent\n", NULL, 1,
     "backend 'b' has no servers"},
    {"backend b\n balance roundrobin\n hash-type consistent\n server a 1.2.3.4:80\n",
     NULL, 2,
     "'balance roundrobin' does not hash keys: only hdr(), uri, url_param, source and "
     "rdp-cookie do"},
    {"backend b\n balance hdr(k)\n hash-type map-based\n server a 1.2.3.4:80\n", NULL, 3,
     "'hash-type map-based': only 'hash-type consistent' places keys on a tree, as "
     "'haproxy' does"},
    {"backend b\n balance hdr(k)\n server a 1.2.3.4:80\n", NULL, 1,
     "no 'hash-type' (HAProxy's default is map-based): only 'hash-type consistent' "
     "places keys on a tree, as 'haproxy' does"},
    {"backend b\n hash-type consistent\n server a 1.2.3.4:80\n", NULL, 1,
     "no 'balance': HAProxy's default is roundrobin, which does not hash keys"},
    {"backend b\n balance uri\n hash-type consistent md5\n", NULL, 3,
     "'hash-type' function 'md5': HAProxy has sdbm, djb2, wt6 and crc32"},
    {"backend b\n balance uri\n hash-type consistent sdbm fast\n", NULL, 3,
     "'hash-type' modifier 'fast': only 'avalanche' exists"},
    {"backend b\n balance uri\n hash-type random\n", NULL, 3,
     "'hash-type random': only 'consistent' places keys on a tree, as 'haproxy' does"},
    {"backend b\n balance uri\n hash-type consistent\n hash-balance-factor 150\n", NULL,
     4,
     "'hash-balance-factor': bounded loads move keys by the servers' connections, which "
     "a node set cannot follow"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1.2.3.4:80 backup\n",
     NULL, 4,
     "'backup': backup servers take keys only while no other server is up, which a node "
     "set cannot say"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1.2.3.4:80 weight 0\n",
     NULL, 4, "'weight 0': a server that takes no keys cannot be a node"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1.2.3.4:80 weight 257\n",
     NULL, 4, "'weight 257': HAProxy's weights are 1 to 256"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1.2.3.4:80 id 0\n", NULL,
     4, "'id 0': an id is 1 to 2147483647"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1.2.3.4:80 ssl\n", NULL,
     4, "server option 'ssl' is not known to this reader"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1.2.3.4:80 weight\n",
     NULL, 4, "'weight' without a value"},
    {"backend b\n balance uri\n hash-type consistent\n server a\n", NULL, 4,
     "'server' needs a name and an address"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1:1\n server a 2:2\n",
     NULL, 5,
     "server 'a' is given twice: the peer would merge their points, a node set cannot "
     "hold both"},
    {"backend b\n balance uri\n hash-type consistent\n cookie SRV insert\n server a "
     "1:1\n",
     NULL, 4,
     "'cookie' is not supported in a backend: it chooses servers by other means than the "
     "hash"},
    {"backend b\n balance uri\n hash-type consistent\n use-server a if TRUE\n server a "
     "1:1\n",
     NULL, 4,
     "'use-server' is not supported in a backend: it chooses servers by other means than "
     "the hash"},
    {"backend b\n balance uri\n hash-type consistent\n server-template s 3 1:1\n", NULL,
     4, "'server-template' is not supported: name each server with 'server'"},
    {"backend b\n balance uri\n hash-type consistent\n server a \"${ADDR}\"\n", NULL, 4,
     "an environment variable: its value is not in the file"},
    {"backend b\n balance uri\n hash-type consistent\n server a \"1:1\n", NULL, 4,
     "an unterminated quote"},
    {"backend b\n balance uri\n hash-type consistent\n server a 1:1\n", "c", 0,
     "no backend 'c'"},
    {"frontend f\n bind :80\n", NULL, 0, "no backend or listen section"},
    {"backend b from nope\n balance uri\n hash-type consistent\n server a 1:1\n", NULL, 1,
     "no defaults section 'nope' before this line"},
    {"defaults\n hash-balance-factor 200\nbackend b\n", NULL, 2,
     "'hash-balance-factor': bounded loads move keys by the servers' connections, which "
     "a node set cannot follow"},
    {"defaults\n balance uri\n hash-type consistent\ndefaults\nbackend b\n server a "
     "1:1\n",
     NULL, 5, "no 'balance': HAProxy's default is roundrobin, which does not hash keys"},
};

START_TEST(test_failure)
{
    const struct test_import_failure *f = &failures[_i];
    test_import_fails(HAPROXY, f->text, f->section, f->line, f->message);
}
END_TEST

static Suite *import_haproxy_suite(void)
{
    Suite *suite = suite_create("import_haproxy");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_backend_by_name);
    tcase_add_test(core, test_listen_inherits_and_overrides);
    tcase_add_test(core, test_named_defaults);
    suite_add_tcase(suite, core);
    TCase *errors = tcase_create("errors");
    tcase_add_loop_test(errors, test_failure, 0, sizeof(failures) / sizeof(failures[0]));
    suite_add_tcase(suite, errors);
    return suite;
}

int main(void)
{
    return test_run_suite(import_haproxy_suite());
}
