/*
 * Tests of lib/fingerprint.c: the content fingerprint covers exactly what decides
 * answers (algorithm, hash, the parameters in use, each node's name, address,
 * weight, state and id, and node order where placement depends on it), in a
 * canonical order: equal
 * for rings that answer alike whatever their history or file order, different as
 * soon as one of those differs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "nodeset_internal.h"
#include "test_expect.h"
#include "test_support.h"

#define SAMPLE_KEYS 20000

static uint64_t fingerprint_of_set(const shmring_nodeset_t *set)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    shmring_snapshot_free(snapshot);
    return info.fingerprint;
}

static uint64_t fingerprint_of(const char *text)
{
    shmring_nodeset_t *set = test_parse_json(text, NULL);
    uint64_t fingerprint = fingerprint_of_set(set);
    shmring_nodeset_free(set);
    return fingerprint;
}

/* Whether the snapshots of A and B give every sampled key the same node id. */
static bool same_answers(const char *a, const char *b)
{
    shmring_nodeset_t *set_a = test_parse_json(a, NULL),
                      *set_b = test_parse_json(b, NULL);
    shmring_snapshot_t *snapshot_a = test_snapshot(set_a);
    shmring_snapshot_t *snapshot_b = test_snapshot(set_b);
    bool same = true;
    for (uint64_t i = 0; i < SAMPLE_KEYS && same; i++) {
        char key[32];
        size_t len = test_key(key, i);
        uint32_t id_a, id_b;
        ck_assert_int_eq(shmring_snapshot_lookup_id(snapshot_a, key, len, &id_a), 0);
        ck_assert_int_eq(shmring_snapshot_lookup_id(snapshot_b, key, len, &id_b), 0);
        same = id_a == id_b;
    }
    shmring_snapshot_free(snapshot_a);
    shmring_snapshot_free(snapshot_b);
    shmring_nodeset_free(set_a);
    shmring_nodeset_free(set_b);
    return same;
}

#define NODES_ABC                                                                        \
    "{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", \"weight\": 2},"      \
    "{\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"},"                     \
    "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": \"down\"}"
#define NODES_CAB                                                                        \
    "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": "          \
    "\"down\"},"                                                                         \
    "{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", \"weight\": 2},"      \
    "{\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"}"

/* Appends V as 32 little-endian bits. */
static void put_le32(unsigned char *buf, size_t *used, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        buf[(*used)++] = (unsigned char)(v >> (8 * i));
}

static void put_text(unsigned char *buf, size_t *used, const char *text)
{
    put_le32(buf, used, (uint32_t)strlen(text));
    memcpy(buf + *used, text, strlen(text));
    *used += strlen(text);
}

/* The encoding lib/fingerprint.c documents, written out by hand for nodes a, b and
 * c (down) of NODES_ABC, with each node's rank in RANKS (by name). */
static uint64_t documented_fingerprint(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                       uint32_t vnodes, const uint32_t ranks[3])
{
    unsigned char buf[512];
    size_t used = 0;
    static const char domain[] = "shmring fingerprint v4";
    memcpy(buf, domain, sizeof(domain));
    used += sizeof(domain);
    put_le32(buf, &used, algorithm);
    put_le32(buf, &used, hash);
    put_le32(buf, &used, vnodes); /* `ring` only */
    put_le32(buf, &used, 0);      /* no maglev table */
    put_le32(buf, &used, 3);
    const struct {
        const char *name, *address;
        uint32_t weight, state, id;
    } nodes[] = {{"a", "10.0.0.1:11211", 2, 0, 0},
                 {"b", "10.0.0.2:11211", 1, 0, 1},
                 {"c", "10.0.0.3:11211", 1, 1, 2}};
    for (size_t i = 0; i < 3; i++) {
        put_text(buf, &used, nodes[i].name);
        put_text(buf, &used, nodes[i].address);
        put_le32(buf, &used, nodes[i].weight);
        put_le32(buf, &used, nodes[i].state);
        put_le32(buf, &used, nodes[i].id);
        put_le32(buf, &used, ranks[i]);
        put_text(buf, &used, ""); /* no hash key */
    }
    return XXH3_64bits(buf, used);
}

/* The value every host must compute: the encoding lib/fingerprint.c documents,
 * written out by hand here, and its hash pinned, so that a change of the encoding
 * shows here first (and must come with a new domain string). */
START_TEST(test_documented_encoding)
{
    static const uint32_t no_ranks[3] = {0, 0, 0};
    uint64_t expected =
        documented_fingerprint(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 160, no_ranks);
    ck_assert_uint_eq(expected, UINT64_C(0x22538562cfb23698));
    ck_assert_uint_eq(
        fingerprint_of("{\"algorithm\": \"ring\", \"nodes\": [" NODES_CAB "]}"),
        expected);

    /* Ranks in node-set order (c, a, b): ketama's among the up nodes, the down one
     * 0xffffffff; nginx's among all nodes, the down one included. */
    static const uint32_t up_ranks[3] = {0, 1, UINT32_MAX};
    ck_assert_uint_eq(
        fingerprint_of("{\"algorithm\": \"ketama\", \"nodes\": [" NODES_CAB "]}"),
        documented_fingerprint(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 0, up_ranks));
    static const uint32_t all_ranks[3] = {1, 2, 0};
    ck_assert_uint_eq(
        fingerprint_of("{\"algorithm\": \"nginx\", \"nodes\": [" NODES_CAB "]}"),
        documented_fingerprint(SHMRING_ALGORITHM_NGINX, SHMRING_HASH_CRC32, 0,
                               all_ranks));
}
END_TEST

/* File order and history (the next id to give) change nothing, for the algorithms
 * whose answers ignore node order; the answers are indeed the same. */
START_TEST(test_order_and_history_do_not_count)
{
    const char *const algorithms[] = {"ring", "maglev", "envoy-maglev", "twemproxy"};
    for (size_t i = 0; i < sizeof(algorithms) / sizeof(algorithms[0]); i++) {
        char abc[1024], cab[1024];
        snprintf(abc, sizeof(abc), "{\"algorithm\": \"%s\", \"nodes\": [" NODES_ABC "]}",
                 algorithms[i]);
        snprintf(cab, sizeof(cab), "{\"algorithm\": \"%s\", \"nodes\": [" NODES_CAB "]}",
                 algorithms[i]);
        ck_assert_uint_eq(fingerprint_of(abc), fingerprint_of(cab));
        ck_assert(same_answers(abc, cab));

        shmring_nodeset_t *set = test_parse_json(abc, NULL);
        uint64_t fresh = fingerprint_of_set(set);
        shmring__nodeset_set_next_id(set, 5000);
        ck_assert_uint_eq(fingerprint_of_set(set), fresh);
        shmring_nodeset_free(set);
    }
}
END_TEST

/* Every covered field, changed alone, gives a fingerprint of its own. */
START_TEST(test_every_covered_field_counts)
{
    const char *const variants[] = {
        "{\"algorithm\": \"ring\", \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"maglev\", \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"ketama\", \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"ring\", \"hash\": \"md5\", \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"ring\", \"vnodes\": 100, \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"maglev\", \"table_size\": 131071, \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"envoy-maglev\", \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"envoy-maglev\", \"table_size\": 131071, \"nodes\": [" NODES_ABC
        "]}",
        "{\"algorithm\": \"envoy-ring\", \"nodes\": [" NODES_ABC "]}",
        "{\"algorithm\": \"envoy-ring\", \"hash\": \"murmur2\", \"nodes\": [" NODES_ABC
        "]}",
        "{\"algorithm\": \"envoy-ring\", \"min_ring_size\": 12, \"nodes\": [" NODES_ABC
        "]}",
        "{\"algorithm\": \"envoy-ring\", \"max_ring_size\": 2048, \"nodes\": [" NODES_ABC
        "]}",
        /* a hash_key given, and another hash_key */
        "{\"nodes\": [{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
        "\"weight\": 2, \"hash_key\": \"k\"}, {\"name\": \"b\", \"id\": 1, \"address\": "
        "\"10.0.0.2:11211\"}, {\"name\": \"c\", \"id\": 2, \"address\": "
        "\"10.0.0.3:11211\", "
        "\"state\": \"down\"}]}",
        "{\"nodes\": [{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
        "\"weight\": 2, \"hash_key\": \"j\"}, {\"name\": \"b\", \"id\": 1, \"address\": "
        "\"10.0.0.2:11211\"}, {\"name\": \"c\", \"id\": 2, \"address\": "
        "\"10.0.0.3:11211\", "
        "\"state\": \"down\"}]}",
        /* name, address, weight, state, id of one node */
        "{\"nodes\": [{\"name\": \"A\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
        "\"weight\": 2}, {\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"}, "
        "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": "
        "\"down\"}]}",
        "{\"nodes\": [{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.9:11211\", "
        "\"weight\": 2}, {\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"}, "
        "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": "
        "\"down\"}]}",
        "{\"nodes\": [{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
        "\"weight\": 3}, {\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"}, "
        "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": "
        "\"down\"}]}",
        "{\"nodes\": [{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
        "\"weight\": 2}, {\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"}, "
        "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\"}]}",
        "{\"nodes\": [{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
        "\"weight\": 2}, {\"name\": \"b\", \"id\": 7, \"address\": \"10.0.0.2:11211\"}, "
        "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": "
        "\"down\"}]}",
        /* one node fewer (parenthesised: one string, not two missing a comma) */
        ("{\"nodes\": [{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
         "\"weight\": 2}, {\"name\": \"b\", \"id\": 1, \"address\": "
         "\"10.0.0.2:11211\"}]}"),
    };
    size_t count = sizeof(variants) / sizeof(variants[0]);
    uint64_t prints[sizeof(variants) / sizeof(variants[0])];
    for (size_t i = 0; i < count; i++) {
        prints[i] = fingerprint_of(variants[i]);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(prints[i] != prints[j], "variants %zu and %zu collide", j, i);
    }
}
END_TEST

/* Parameters the algorithm does not use, and a table size of 0 against the prime it
 * stands for, answer alike and fingerprint alike. */
START_TEST(test_unused_parameters_do_not_count)
{
    const char *maglev = "{\"algorithm\": \"maglev\", \"nodes\": [" NODES_ABC "]}";
    const char *maglev_vnodes =
        "{\"algorithm\": \"maglev\", \"vnodes\": 7, \"nodes\": [" NODES_ABC "]}";
    const char *maglev_default_table =
        "{\"algorithm\": \"maglev\", \"table_size\": 65537, \"nodes\": [" NODES_ABC "]}";
    ck_assert_uint_eq(fingerprint_of(maglev), fingerprint_of(maglev_vnodes));
    ck_assert_uint_eq(fingerprint_of(maglev), fingerprint_of(maglev_default_table));
    ck_assert(same_answers(maglev, maglev_default_table));
    const char *ketama = "{\"algorithm\": \"ketama\", \"nodes\": [" NODES_ABC "]}";
    const char *ketama_vnodes =
        "{\"algorithm\": \"ketama\", \"vnodes\": 7, \"nodes\": [" NODES_ABC "]}";
    ck_assert_uint_eq(fingerprint_of(ketama), fingerprint_of(ketama_vnodes));
    /* envoy-maglev's table_size 0 is Envoy's 65537; envoy-ring's ring sizes 0 are
     * Envoy's 1024 and 8388608. */
    const char *envoy_maglev =
        "{\"algorithm\": \"envoy-maglev\", \"nodes\": [" NODES_ABC "]}";
    const char *envoy_maglev_default =
        "{\"algorithm\": \"envoy-maglev\", \"table_size\": 65537, \"nodes\": [" NODES_ABC
        "]}";
    ck_assert_uint_eq(fingerprint_of(envoy_maglev), fingerprint_of(envoy_maglev_default));
    const char *envoy_ring =
        "{\"algorithm\": \"envoy-ring\", \"nodes\": [" NODES_ABC "]}";
    const char *envoy_ring_default =
        "{\"algorithm\": \"envoy-ring\", \"min_ring_size\": 1024, \"max_ring_size\": "
        "8388608, \"nodes\": [" NODES_ABC "]}";
    ck_assert_uint_eq(fingerprint_of(envoy_ring), fingerprint_of(envoy_ring_default));
    ck_assert(same_answers(envoy_ring, envoy_ring_default));
    /* Ring sizes mean nothing to the other algorithms. */
    const char *ring_sizes =
        "{\"algorithm\": \"ring\", \"min_ring_size\": 12, \"nodes\": [" NODES_ABC "]}";
    const char *ring = "{\"algorithm\": \"ring\", \"nodes\": [" NODES_ABC "]}";
    ck_assert_uint_eq(fingerprint_of(ring), fingerprint_of(ring_sizes));
}
END_TEST

/* Ketama breaks ties between equal points by server order, so the order of the up
 * nodes counts there, and only theirs: a down node may move freely. */
START_TEST(test_ketama_up_order_counts)
{
    const char *abc = "{\"algorithm\": \"ketama\", \"nodes\": [" NODES_ABC "]}";
    const char *cab = "{\"algorithm\": \"ketama\", \"nodes\": [" NODES_CAB "]}";
    ck_assert_uint_eq(fingerprint_of(abc), fingerprint_of(cab));
    const char *bac =
        "{\"algorithm\": \"ketama\", \"nodes\": ["
        "{\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"},"
        "{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", \"weight\": 2},"
        "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": "
        "\"down\"}]}";
    ck_assert_uint_ne(fingerprint_of(abc), fingerprint_of(bac));
}
END_TEST

/* Node order counts exactly where the one predicate (lib/placement.c,
 * shmring__placement_order()) says that it may change an answer, as for node-set
 * differences: never for ring, maglev, envoy-maglev and twemproxy; the up nodes'
 * order for ketama, libketama and envoy-ring; every node's order for nginx. */
START_TEST(test_order_counts_where_placement_depends_on_it)
{
    static const struct {
        const char *algorithm;
        bool up_order_counts;
        bool down_order_counts;
    } cases[] = {{"ring", false, false},         {"maglev", false, false},
                 {"envoy-maglev", false, false}, {"twemproxy", false, false},
                 {"ketama", true, false},        {"libketama", true, false},
                 {"envoy-ring", true, false},    {"nginx", true, true}};
#define NODE_A                                                                           \
    "{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", \"weight\": 2}"
#define NODE_B "{\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"}"
#define NODE_C                                                                           \
    "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": \"down\"}"
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char abc[512], bac[512], acb[512];
#define ORDERED_SET "{\"algorithm\": \"%s\", \"nodes\": [%s, %s, %s]}"
        snprintf(abc, sizeof(abc), ORDERED_SET, cases[i].algorithm, NODE_A, NODE_B,
                 NODE_C);
        snprintf(bac, sizeof(bac), ORDERED_SET, cases[i].algorithm, NODE_B, NODE_A,
                 NODE_C);
        snprintf(acb, sizeof(acb), ORDERED_SET, cases[i].algorithm, NODE_A, NODE_C,
                 NODE_B);
#undef ORDERED_SET
        ck_assert_msg((fingerprint_of(abc) != fingerprint_of(bac)) ==
                          cases[i].up_order_counts,
                      "%s: up nodes swapped", cases[i].algorithm);
        ck_assert_msg((fingerprint_of(abc) != fingerprint_of(acb)) ==
                          cases[i].down_order_counts,
                      "%s: down node moved", cases[i].algorithm);
        if (!cases[i].up_order_counts)
            ck_assert(same_answers(abc, bac));
    }
#undef NODE_A
#undef NODE_B
#undef NODE_C
}
END_TEST

/* Why nginx's down nodes are ranked too: a down node listed before an up node of the
 * same address holds every point they share, so the up node takes no key; listed
 * after it, it hides nothing. Other answers for the same nodes, so other
 * fingerprints. */
START_TEST(test_nginx_down_node_order_changes_answers)
{
#define NGINX_UP "{\"name\": \"up\", \"id\": 0, \"address\": \"10.0.0.1:80\"}"
#define NGINX_DOWN                                                                       \
    "{\"name\": \"down\", \"id\": 1, \"address\": \"10.0.0.1:80\", \"state\": \"down\"}"
#define NGINX_OTHER "{\"name\": \"other\", \"id\": 2, \"address\": \"10.0.0.2:80\"}"
    const char *down_first = "{\"algorithm\": \"nginx\", \"nodes\": [" NGINX_DOWN
                             ", " NGINX_UP ", " NGINX_OTHER "]}";
    const char *up_first = "{\"algorithm\": \"nginx\", \"nodes\": [" NGINX_UP
                           ", " NGINX_DOWN ", " NGINX_OTHER "]}";
#undef NGINX_UP
#undef NGINX_DOWN
#undef NGINX_OTHER
    ck_assert(!same_answers(down_first, up_first));
    ck_assert_uint_ne(fingerprint_of(down_first), fingerprint_of(up_first));
    shmring_nodeset_t *set = test_parse_json(down_first, NULL);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    double shares[4];
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, 4), 0);
    ck_assert(shares[1] == 0.0); /* "up", hidden behind "down" */
    ck_assert(shares[2] == 1.0); /* "other" takes every key */
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *fingerprint_suite(void)
{
    Suite *suite = suite_create("fingerprint");
    TEST_CASE(suite, "core", test_documented_encoding,
              test_order_and_history_do_not_count, test_every_covered_field_counts,
              test_unused_parameters_do_not_count, test_ketama_up_order_counts,
              test_order_counts_where_placement_depends_on_it,
              test_nginx_down_node_order_changes_answers);
    return suite;
}

int main(void)
{
    return test_run_suite(fingerprint_suite());
}
