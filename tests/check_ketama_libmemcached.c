/*
 * `ketama` against its definition: libmemcached's own memcached_generate_hash() with
 * weighted ketama. Both sides get the same servers in the same order (no network I/O
 * happens: libmemcached only computes its continuum when servers are added), and
 * every key must land on the same server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmemcached/memcached.h>

#include "test_expect.h"
#include "test_support.h"

#define SERVERS_MAX 100

struct server {
    char host[64];
    unsigned port;
    /* Whether the address names the port ("host:port") or leaves it implied. */
    int explicit_port;
    uint32_t weight;
    int up;
};

struct comparison {
    size_t sets;
    size_t keys;
    size_t mismatches;
    /* Servers that answered at least one key, summed over the sets. */
    size_t answering;
};

static void random_server(uint64_t *state, struct server *s)
{
    uint64_t r = test_random(state);
    switch (r % 8) {
    case 0:
    case 1:
    case 2:
        snprintf(s->host, sizeof(s->host), "10.%u.%u.%u", (unsigned)(r >> 8) & 255,
                 (unsigned)(r >> 16) & 255, (unsigned)(r >> 24) & 255);
        break;
    case 7:
        snprintf(s->host, sizeof(s->host), "2001:db8::%x", (unsigned)(r >> 8) & 0xffff);
        break;
    default:
        snprintf(s->host, sizeof(s->host), "cache-%u.%s.example.com",
                 (unsigned)(r >> 8) % 1000, (r >> 20) % 2 ? "eu-west" : "us");
        break;
    }
    r = test_random(state);
    s->port = r % 2 ? 11211 : 1024 + (unsigned)((r >> 1) % 64000);
    /* A bare host means port 11211 to both sides. */
    s->explicit_port = !(s->port == 11211 && (r >> 20) % 4 == 0);
    s->weight = 1 + (uint32_t)(test_random(state) % 1000);
    s->up = 1;
}

static void address_of(const struct server *s, char *out, size_t size)
{
    int ipv6 = strchr(s->host, ':') != NULL;
    int len;
    if (!s->explicit_port)
        len = snprintf(out, size, "%s", s->host);
    else if (ipv6)
        len = snprintf(out, size, "[%s]:%u", s->host, s->port);
    else
        len = snprintf(out, size, "%s:%u", s->host, s->port);
    /* Test addresses always fit; a cut one would compare the wrong points. */
    ck_assert(len > 0 && (size_t)len < size);
}

/*
 * Compares KEYS random keys over the servers: libmemcached gets the up servers in
 * order, the snapshot gets every server (down ones marked down). Adds to *totals.
 */
static void compare(const struct server *servers, size_t count, size_t keys,
                    uint64_t *state, struct comparison *totals)
{
    memcached_st *mc = memcached_create(NULL);
    ck_assert_ptr_nonnull(mc);
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 160, 0};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);

    /* libmemcached's server index -> our node index. */
    size_t up_to_node[SERVERS_MAX];
    size_t up_count = 0;
    for (size_t i = 0; i < count; i++) {
        char name[24], address[96];
        snprintf(name, sizeof(name), "s%zu", i);
        address_of(&servers[i], address, sizeof(address));
        ck_assert_int_eq(shmring_nodeset_add(
                             set, name, address, servers[i].weight,
                             servers[i].up ? SHMRING_STATE_UP : SHMRING_STATE_DOWN, NULL),
                         0);
        if (!servers[i].up)
            continue;
        ck_assert_int_eq(memcached_server_add_with_weight(mc, servers[i].host,
                                                          (in_port_t)servers[i].port,
                                                          servers[i].weight),
                         MEMCACHED_SUCCESS);
        up_to_node[up_count++] = i;
    }
    ck_assert_uint_eq(memcached_server_count(mc), up_count);
    /*
     * Ketama is switched on after the servers are added: libmemcached rebuilds and
     * sorts its whole continuum on every add once it is on, and the continuum depends
     * only on the final server list.
     */
    ck_assert_int_eq(memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                            MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA),
                     MEMCACHED_SUCCESS);
    ck_assert_int_eq(memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                     MEMCACHED_SUCCESS);
    /* Weighted ketama switches the key hash to MD5 as well. */
    ck_assert_uint_eq(memcached_behavior_get(mc, MEMCACHED_BEHAVIOR_HASH),
                      MEMCACHED_HASH_MD5);

    shmring_snapshot_t *snapshot = test_snapshot(set);
    /* Which servers answered: comparisons where one server takes every key would
     * prove little. */
    unsigned char answered[SERVERS_MAX] = {0};
    size_t distinct = 0;
    for (size_t k = 0; k < keys; k++) {
        uint8_t key[64];
        size_t len = 1 + test_random(state) % sizeof(key);
        for (size_t b = 0; b < len; b++)
            key[b] = (uint8_t)test_random(state);
        uint32_t theirs = memcached_generate_hash(mc, (const char *)key, len);
        shmring_node_t ours;
        EXPECT_INT_EQ(shmring_snapshot_lookup(snapshot, key, len, &ours), 0);
        EXPECT_TRUE(theirs < up_count);
        unsigned long node = strtoul(ours.name + 1, NULL, 10);
        if (node != up_to_node[theirs])
            totals->mismatches++;
        distinct += !answered[theirs];
        answered[theirs] = 1;
    }
    totals->answering += distinct;
    totals->sets++;
    totals->keys += keys;
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
    memcached_free(mc);
}

static void report(const char *what, const struct comparison *totals)
{
    printf("ketama vs libmemcached%s: %zu sets, %zu keys, %zu mismatches (%zu servers "
           "answered)\n",
           what, totals->sets, totals->keys, totals->mismatches, totals->answering);
    fflush(stdout);
}

START_TEST(random_server_sets)
{
    uint64_t state = 20240601;
    struct comparison totals = {0, 0, 0, 0};
    struct server servers[SERVERS_MAX];
    /* Each set costs two continuums of up to 16,000 points, so the sets are few
     * (the edge cases below name the sets that matter) and their keys many: 2,000
     * keys reach every server of a 100-server continuum. */
    for (int set = 0; set < 50; set++) {
        size_t count = 2 + test_random(&state) % (SERVERS_MAX - 1);
        for (size_t i = 0; i < count; i++)
            random_server(&state, &servers[i]);
        compare(servers, count, 2000, &state, &totals);
    }
    report("", &totals);
    ck_assert_uint_eq(totals.sets, 50);
    ck_assert_uint_eq(totals.keys, 100000);
    ck_assert_uint_gt(totals.answering, 50 * 20);
    ck_assert_uint_eq(totals.mismatches, 0);
}
END_TEST

START_TEST(down_nodes_are_left_out)
{
    uint64_t state = 77;
    struct comparison totals = {0, 0, 0, 0};
    struct server servers[SERVERS_MAX];
    for (int set = 0; set < 60; set++) {
        size_t count = 3 + test_random(&state) % (SERVERS_MAX - 2);
        for (size_t i = 0; i < count; i++) {
            random_server(&state, &servers[i]);
            servers[i].up = test_random(&state) % 4 != 0;
        }
        servers[test_random(&state) % count].up = 1;
        compare(servers, count, 2000, &state, &totals);
    }
    report(" (with down nodes)", &totals);
    ck_assert_uint_eq(totals.keys, 120000);
    ck_assert_uint_gt(totals.answering, 60 * 10);
    ck_assert_uint_eq(totals.mismatches, 0);
}
END_TEST

START_TEST(equal_addresses_tie_by_index)
{
    /* Two servers with one address give identical points; libmemcached's continuum
     * sort puts the lower server index first, and so must we. */
    uint64_t state = 5;
    struct comparison totals = {0, 0, 0, 0};
    struct server servers[6];
    for (size_t i = 0; i < 6; i++)
        random_server(&state, &servers[i]);
    servers[3] = servers[1];
    servers[3].weight = servers[1].weight;
    compare(servers, 6, 20000, &state, &totals);
    servers[5] = servers[0];
    servers[0].up = 0;
    compare(servers, 6, 20000, &state, &totals);
    ck_assert_uint_eq(totals.mismatches, 0);
}
END_TEST

START_TEST(extreme_weights)
{
    /* Weights so uneven that light servers get no points at all. */
    uint64_t state = 99;
    struct comparison totals = {0, 0, 0, 0};
    struct server servers[SERVERS_MAX];
    for (size_t i = 0; i < SERVERS_MAX; i++) {
        random_server(&state, &servers[i]);
        servers[i].weight = i % 10 == 0 ? 65535 : 1;
    }
    compare(servers, SERVERS_MAX, 20000, &state, &totals);
    compare(servers, 2, 20000, &state, &totals);
    servers[1].weight = 1000;
    compare(servers, 2, 20000, &state, &totals);
    ck_assert_uint_eq(totals.mismatches, 0);
}
END_TEST

START_TEST(float_rounding_cases)
{
    /*
     * Sets where libmemcached's single-precision arithmetic rounds a server's share
     * down by one digest (found by searching weight sets with a float32 model of
     * update_continuum): equal weights for 25, 47, 50, ... servers, where 1/n x 160 /
     * 4 x n comes to 39.99999 and each server gets 156 points, not 160, and sets of k
     * servers of weight A among n - k of weight 1.
     */
    static const struct {
        unsigned n, k, a;
    } uneven[] = {{3, 1, 58}, {5, 1, 21}, {5, 2, 36},  {5, 3, 16},
                  {7, 1, 22}, {9, 3, 14}, {10, 1, 16}, {10, 3, 6}};
    uint64_t state = 11;
    struct comparison totals = {0, 0, 0, 0};
    struct server servers[SERVERS_MAX];
    for (size_t n = 2; n <= SERVERS_MAX; n++) {
        for (size_t i = 0; i < n; i++) {
            random_server(&state, &servers[i]);
            servers[i].weight = 7;
        }
        compare(servers, n, 1000, &state, &totals);
    }
    for (size_t u = 0; u < sizeof(uneven) / sizeof(uneven[0]); u++) {
        for (size_t i = 0; i < uneven[u].n; i++) {
            random_server(&state, &servers[i]);
            servers[i].weight = i < uneven[u].k ? uneven[u].a : 1;
        }
        compare(servers, uneven[u].n, 5000, &state, &totals);
    }
    report(" (float rounding cases)", &totals);
    ck_assert_uint_eq(totals.mismatches, 0);
}
END_TEST

START_TEST(port_zero_means_default)
{
    /* memcached_server_add_with_weight() takes port 0 as the default port 11211,
     * so "host:0" must name the same points as "host:11211" and "host". */
    uint64_t state = 3;
    struct comparison totals = {0, 0, 0, 0};
    struct server servers[8];
    for (size_t i = 0; i < 8; i++) {
        random_server(&state, &servers[i]);
        servers[i].port = i % 2 ? 0 : servers[i].port;
        servers[i].explicit_port = 1;
    }
    compare(servers, 8, 20000, &state, &totals);
    ck_assert_uint_eq(totals.mismatches, 0);
}
END_TEST

static const struct test_fixture slow = {NULL, NULL, 300};

static Suite *ketama_suite(void)
{
    Suite *s = suite_create("ketama_libmemcached");
    TEST_CASE_WITH(s, "random_sets", &slow, random_server_sets);
    TEST_CASE_WITH(s, "down_nodes", &slow, down_nodes_are_left_out);
    TEST_CASE_WITH(s, "edge_cases", &slow, equal_addresses_tie_by_index, extreme_weights,
                   float_rounding_cases, port_zero_means_default);
    return s;
}

int main(void)
{
    return test_run_suite(ketama_suite());
}
