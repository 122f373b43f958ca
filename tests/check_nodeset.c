/* Tests of lib/nodeset.c and lib/params.c: node sets and placement parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodeset_internal.h"
#include "test_expect.h"
#include "test_support.h"

static shmring_nodeset_t *new_set(void)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    return set;
}

static void add_node(shmring_nodeset_t *set, const char *name, uint32_t expected_id)
{
    uint32_t id = UINT32_MAX;
    ck_assert_int_eq(shmring_nodeset_add(set, name, NULL, 1, SHMRING_STATE_UP, &id), 0);
    ck_assert_uint_eq(id, expected_id);
}

/* A new node set of up nodes NAMES (NULL-terminated), which get the ids 0, 1, ...
 * in order. */
static shmring_nodeset_t *set_of(const char *const *names)
{
    shmring_nodeset_t *set = new_set();
    for (uint32_t i = 0; names[i] != NULL; i++)
        add_node(set, names[i], i);
    return set;
}
#define SET_OF(...) set_of((const char *const[]){__VA_ARGS__, NULL})

/*
 * Describes a node set as text: parameters, then every node with all its fields in
 * order. Two node sets are equal exactly when their descriptions are.
 */
static char *describe(const shmring_nodeset_t *set)
{
    size_t capacity = 256 + shmring_nodeset_count(set) * 600;
    char *text = malloc(capacity);
    ck_assert_ptr_nonnull(text);
    shmring_params_t p;
    shmring_nodeset_params(set, &p);
    size_t used = (size_t)snprintf(text, capacity, "%d %d %u %u\n", (int)p.algorithm,
                                   (int)p.hash, p.vnodes, p.table_size);
    for (size_t i = 0; i < shmring_nodeset_count(set); i++) {
        shmring_node_info_t n;
        ck_assert_int_eq(shmring_nodeset_get(set, i, &n), 0);
        used += (size_t)snprintf(text + used, capacity - used, "%u %u %d '%s' '%s'\n",
                                 n.id, n.weight, (int)n.state, n.name, n.address);
        ck_assert_uint_lt(used, capacity);
    }
    return text;
}

/* Checks that describe() gives EXPECTED for SET. */
static void check_described(const shmring_nodeset_t *set, const char *expected)
{
    char *text = describe(set);
    ck_assert_str_eq(text, expected);
    free(text);
}

/* SET inherits the ids of PREVIOUS, and then describe() gives EXPECTED. */
static void check_inherited(shmring_nodeset_t *set, const shmring_nodeset_t *previous,
                            const char *expected)
{
    ck_assert_int_eq(shmring_nodeset_inherit_ids(set, previous), 0);
    check_described(set, expected);
}

/* ---- core ---- */

START_TEST(new_set_is_empty_with_defaults)
{
    shmring_nodeset_t *set = new_set();
    ck_assert_uint_eq(shmring_nodeset_count(set), 0);
    shmring_params_t p;
    shmring_nodeset_params(set, &p);
    ck_assert_int_eq(p.algorithm, SHMRING_ALGORITHM_RING);
    ck_assert_int_eq(p.hash, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(p.vnodes, 160);
    ck_assert_uint_eq(p.table_size, 0);
    shmring_node_info_t info;
    ck_assert_int_eq(shmring_nodeset_get(set, 0, &info), SHMRING_EINVAL);
    size_t index;
    ck_assert_int_eq(shmring_nodeset_find(set, "a", &index), SHMRING_ENODE);
    shmring_nodeset_free(set);
    shmring_nodeset_free(NULL);
}
END_TEST

START_TEST(add_get_find)
{
    shmring_nodeset_t *set = new_set();
    uint32_t id = UINT32_MAX;
    ck_assert_int_eq(
        shmring_nodeset_add(set, "cache-a", "10.0.0.1:11211", 3, SHMRING_STATE_UP, &id),
        0);
    ck_assert_uint_eq(id, 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "cache-b", NULL, 65535, SHMRING_STATE_DOWN, &id), 0);
    ck_assert_uint_eq(id, 1);
    /* A NULL id pointer is accepted. */
    ck_assert_int_eq(
        shmring_nodeset_add(set, "cache-c", "c:1", 1, SHMRING_STATE_UP, NULL), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 3);

    shmring_node_info_t n;
    ck_assert_int_eq(shmring_nodeset_get(set, 0, &n), 0);
    ck_assert_uint_eq(n.id, 0);
    ck_assert_uint_eq(n.weight, 3);
    ck_assert_int_eq(n.state, SHMRING_STATE_UP);
    ck_assert_str_eq(n.name, "cache-a");
    ck_assert_str_eq(n.address, "10.0.0.1:11211");
    ck_assert_int_eq(shmring_nodeset_get(set, 1, &n), 0);
    ck_assert_uint_eq(n.id, 1);
    ck_assert_uint_eq(n.weight, 65535);
    ck_assert_int_eq(n.state, SHMRING_STATE_DOWN);
    ck_assert_str_eq(n.name, "cache-b");
    ck_assert_str_eq(n.address, "cache-b"); /* NULL address means the name */
    ck_assert_int_eq(shmring_nodeset_get(set, 2, &n), 0);
    ck_assert_uint_eq(n.id, 2);
    ck_assert_int_eq(shmring_nodeset_get(set, 3, &n), SHMRING_EINVAL);

    size_t index = 99;
    ck_assert_int_eq(shmring_nodeset_find(set, "cache-b", &index), 0);
    ck_assert_uint_eq(index, 1);
    ck_assert_int_eq(shmring_nodeset_find(set, "cache-c", &index), 0);
    ck_assert_uint_eq(index, 2);
    ck_assert_int_eq(shmring_nodeset_find(set, "cache", &index), SHMRING_ENODE);
    ck_assert_int_eq(shmring_nodeset_find(set, "cache-a ", &index), SHMRING_ENODE);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(remove_keeps_order_and_ids)
{
    shmring_nodeset_t *set = SET_OF("a", "b", "c", "d");
    ck_assert_int_eq(shmring_nodeset_remove(set, "b"), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 3);
    size_t index;
    ck_assert_int_eq(shmring_nodeset_find(set, "b", &index), SHMRING_ENODE);
    ck_assert_int_eq(shmring_nodeset_find(set, "c", &index), 0);
    ck_assert_uint_eq(index, 1);
    ck_assert_int_eq(shmring_nodeset_find(set, "d", &index), 0);
    ck_assert_uint_eq(index, 2);
    check_described(set, "0 0 160 0\n0 1 0 'a' 'a'\n2 1 0 'c' 'c'\n3 1 0 'd' 'd'\n");

    /* Ids are never reused: not the removed one, not after removing the last one. */
    ck_assert_int_eq(shmring_nodeset_remove(set, "d"), 0);
    add_node(set, "b", 4);
    add_node(set, "d", 5);
    ck_assert_int_eq(shmring_nodeset_remove(set, "a"), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "c"), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "b"), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "d"), 0);
    ck_assert_uint_eq(shmring_nodeset_count(set), 0);
    add_node(set, "a", 6);
    ck_assert_int_eq(shmring_nodeset_remove(set, "zz"), SHMRING_ENODE);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(set_weight_and_state)
{
    shmring_nodeset_t *set = SET_OF("a", "b");
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "b", 7), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "a", SHMRING_STATE_DOWN), 0);
    check_described(set, "0 0 160 0\n0 1 1 'a' 'a'\n1 7 0 'b' 'b'\n");
    ck_assert_int_eq(shmring_nodeset_set_state(set, "a", SHMRING_STATE_UP), 0);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "b", 65535), 0);
    check_described(set, "0 0 160 0\n0 1 0 'a' 'a'\n1 65535 0 'b' 'b'\n");
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(names_are_exact_bytes)
{
    shmring_nodeset_t *set = SET_OF("Node", "node", "node ");
    add_node(set,
             "n\xc3\xb6"
             "de",
             3); /* UTF-8 is allowed */
    size_t index;
    ck_assert_int_eq(shmring_nodeset_find(set, "node ", &index), 0);
    ck_assert_uint_eq(index, 2);
    ck_assert_int_eq(shmring_nodeset_find(set,
                                          "n\xc3\xb6"
                                          "de",
                                          &index),
                     0);
    ck_assert_uint_eq(index, 3);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- inherit_ids ---- */

START_TEST(inherit_ids_keeps_known_names)
{
    shmring_nodeset_t *previous = SET_OF("a", "b", "c", "d");
    ck_assert_int_eq(shmring_nodeset_remove(previous, "d"), 0); /* next id stays 4 */

    /* "d" was removed before: it is a new node now. */
    shmring_nodeset_t *set = SET_OF("c", "x", "a", "d", "y", "z", "w");
    check_inherited(set, previous,
                    "0 0 160 0\n"
                    "2 1 0 'c' 'c'\n"
                    "4 1 0 'x' 'x'\n"
                    "0 1 0 'a' 'a'\n"
                    "5 1 0 'd' 'd'\n"
                    "6 1 0 'y' 'y'\n"
                    "7 1 0 'z' 'z'\n"
                    "8 1 0 'w' 'w'\n");
    /* The next node gets an id after every id handed out. */
    add_node(set, "v", 9);
    /* Lookup by name still works after the ids changed. */
    size_t index;
    ck_assert_int_eq(shmring_nodeset_find(set, "a", &index), 0);
    ck_assert_uint_eq(index, 2);
    shmring_nodeset_free(set);
    shmring_nodeset_free(previous);
}
END_TEST

/* New ids that would reach the id limit are refused, and the set is left as it was. */
START_TEST(inherit_ids_stops_at_id_limit)
{
    shmring_nodeset_t *previous = new_set();
    add_node(previous, "kept", 0);
    shmring__nodeset_set_next_id(previous, UINT32_MAX - 1);
    shmring_nodeset_t *set = SET_OF("new-1", "kept", "new-2");
    char *before = describe(set);
    ck_assert_int_eq(shmring_nodeset_inherit_ids(set, previous), SHMRING_ELIMIT);
    char *after = describe(set);
    ck_assert_str_eq(after, before);
    free(before);
    free(after);

    /* One fresh id is still there to give. */
    ck_assert_int_eq(shmring_nodeset_remove(set, "new-2"), 0);
    check_inherited(set, previous,
                    "0 0 160 0\n4294967294 1 0 'new-1' 'new-1'\n0 1 0 'kept' 'kept'\n");
    ck_assert_int_eq(shmring_nodeset_add(set, "more", NULL, 1, SHMRING_STATE_UP, NULL),
                     SHMRING_ELIMIT);
    shmring_nodeset_free(set);
    shmring_nodeset_free(previous);
}
END_TEST

/* Ids a file gives win over inherited ones; a staying node keeps its id only when no
 * given id took it. */
START_TEST(inherit_ids_keeps_given_ids)
{
    shmring_nodeset_t *previous = SET_OF("a", "b", "c");

    shmring_nodeset_t *set =
        test_parse_json("{\"nodes\": [{\"name\": \"a\", \"id\": 7}, "
                        "{\"name\": \"b\"}, {\"name\": \"c\", \"id\": 1}, "
                        "{\"name\": \"x\"}]}",
                        NULL);
    check_inherited(set, previous,
                    "0 0 160 0\n"
                    "7 1 0 'a' 'a'\n"
                    "8 1 0 'b' 'b'\n"
                    "1 1 0 'c' 'c'\n"
                    "9 1 0 'x' 'x'\n");
    add_node(set, "y", 10);
    shmring_nodeset_free(set);

    set = test_parse_json(
        "{\"nodes\": [{\"name\": \"a\", \"id\": 7}, {\"name\": \"b\"}]}", NULL);
    check_inherited(set, previous, "0 0 160 0\n7 1 0 'a' 'a'\n1 1 0 'b' 'b'\n");
    add_node(set, "y", 8);
    shmring_nodeset_free(set);
    shmring_nodeset_free(previous);
}
END_TEST

START_TEST(inherit_ids_from_empty_previous)
{
    shmring_nodeset_t *previous = new_set();
    add_node(previous, "old", 0);
    ck_assert_int_eq(shmring_nodeset_remove(previous, "old"), 0);
    shmring_nodeset_t *set = SET_OF("a", "b");
    check_inherited(set, previous, "0 0 160 0\n1 1 0 'a' 'a'\n2 1 0 'b' 'b'\n");
    shmring_nodeset_free(set);
    shmring_nodeset_free(previous);
}
END_TEST

/* ---- errors ---- */

START_TEST(name_check_codes)
{
    char name[300];
    memset(name, 'n', sizeof(name));
    name[255] = '\0';
    ck_assert_int_eq(shmring_node_name_check(name), 0); /* 255 bytes */
    name[255] = 'n';
    name[256] = '\0';
    ck_assert_int_eq(shmring_node_name_check(name), SHMRING_EBADNAME); /* 256 bytes */
    ck_assert_int_eq(shmring_node_name_check(""), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check(NULL), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("a\nb"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("a\tb"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\x1f"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("a\x7f"), SHMRING_EBADNAME);
    /* C1 controls: U+0080, U+0085 (NEL), U+009B (CSI), U+009F; U+00A0 is printable. */
    ck_assert_int_eq(shmring_node_name_check("a\xc2\x80"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("a\xc2\x85"
                                             "b"),
                     SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xc2\x9b"
                                             "31m"),
                     SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xc2\x9f"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_address_check("h\xc2\x85:1"), SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_node_name_check("a\xc2\xa0"
                                             "b"),
                     0);
    ck_assert_int_eq(shmring_node_name_check(" "), 0);
    ck_assert_int_eq(shmring_node_name_check("~"), 0);

    memset(name, 'a', sizeof(name));
    name[255] = '\0';
    ck_assert_int_eq(shmring_node_address_check(name), 0);
    name[255] = 'a';
    name[256] = '\0';
    ck_assert_int_eq(shmring_node_address_check(name), SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_node_address_check(""), SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_node_address_check(NULL), SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_node_address_check("host\r:1"), SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_node_address_check("[::1]:11211"), 0);

    /* Names and addresses are UTF-8 (JSON can carry nothing else): a stray byte, a
     * truncated or overlong sequence, a surrogate or a code point past U+10FFFF is
     * refused; every length of valid sequence is accepted. */
    ck_assert_int_eq(shmring_node_name_check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                     0);
    ck_assert_int_eq(shmring_node_name_check("caf\xe9"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xc3"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xc0\xaf"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xe0\x80\xaf"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xed\xa0\x80"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xf4\x90\x80\x80"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_name_check("\xff"), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_node_address_check("\xed\xa0\x80:1"), SHMRING_EBADADDRESS);
}
END_TEST

START_TEST(failed_calls_leave_set_unchanged)
{
    shmring_nodeset_t *set = new_set();
    ck_assert_int_eq(shmring_nodeset_add(set, "a", "h:1", 2, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(shmring_nodeset_add(set, "b", "h:2", 3, SHMRING_STATE_DOWN, NULL),
                     0);
    char *before = describe(set);

    char long_text[300];
    memset(long_text, 'x', sizeof(long_text));
    long_text[256] = '\0';
    uint32_t id = 12345;
    const uint32_t up = SHMRING_STATE_UP;

    ck_assert_int_eq(shmring_nodeset_add(set, "", NULL, 1, up, &id), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_nodeset_add(set, long_text, NULL, 1, up, &id),
                     SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_nodeset_add(set, "c\001", NULL, 1, up, &id),
                     SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_nodeset_add(set, NULL, NULL, 1, up, &id), SHMRING_EBADNAME);
    ck_assert_int_eq(shmring_nodeset_add(set, "c", "", 1, up, &id), SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_nodeset_add(set, "c", long_text, 1, up, &id),
                     SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_nodeset_add(set, "c", "h\n", 1, up, &id),
                     SHMRING_EBADADDRESS);
    ck_assert_int_eq(shmring_nodeset_add(set, "c", NULL, 0, up, &id), SHMRING_EBADWEIGHT);
    ck_assert_int_eq(shmring_nodeset_add(set, "c", NULL, 65536, up, &id),
                     SHMRING_EBADWEIGHT);
    ck_assert_int_eq(shmring_nodeset_add(set, "c", NULL, 1, (shmring_state_t)2, &id),
                     SHMRING_EINVAL);
    ck_assert_int_eq(shmring_nodeset_add(set, "a", NULL, 1, up, &id), SHMRING_EDUPLICATE);
    ck_assert_int_eq(shmring_nodeset_add(set, "b", "other", 1, up, &id),
                     SHMRING_EDUPLICATE);
    ck_assert_uint_eq(id, 12345); /* *id is only written on success */

    ck_assert_int_eq(shmring_nodeset_remove(set, "c"), SHMRING_ENODE);
    ck_assert_int_eq(shmring_nodeset_remove(set, ""), SHMRING_ENODE);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "c", 5), SHMRING_ENODE);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "a", 0), SHMRING_EBADWEIGHT);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "a", 65536), SHMRING_EBADWEIGHT);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "c", SHMRING_STATE_DOWN),
                     SHMRING_ENODE);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "a", (shmring_state_t)7),
                     SHMRING_EINVAL);

    shmring_params_t bad;
    shmring_params_default(&bad);
    bad.vnodes = 0;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &bad), SHMRING_EBADVNODES);

    char *after = describe(set);
    ck_assert_str_eq(after, before);
    /* Failed adds consumed no id. */
    add_node(set, "c", 2);
    free(before);
    free(after);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- params ---- */

START_TEST(params_names_round_trip)
{
    static const char *const algorithms[] = {"ring", "maglev", "ketama"};
    static const char *const hashes[] = {"xxh3", "md5", "crc32", "fnv1a", "murmur3"};
    for (int i = 0; i < 3; i++) {
        shmring_algorithm_t a = (shmring_algorithm_t)99;
        ck_assert_str_eq(shmring_algorithm_name((shmring_algorithm_t)i), algorithms[i]);
        ck_assert_int_eq(shmring_algorithm_parse(algorithms[i], &a), 0);
        ck_assert_int_eq(a, i);
    }
    for (int i = 0; i < 5; i++) {
        shmring_hash_t h = (shmring_hash_t)99;
        ck_assert_str_eq(shmring_hash_name((shmring_hash_t)i), hashes[i]);
        ck_assert_int_eq(shmring_hash_parse(hashes[i], &h), 0);
        ck_assert_int_eq(h, i);
    }
    shmring_algorithm_t a;
    shmring_hash_t h;
    ck_assert_int_eq(shmring_algorithm_parse("Ring", &a), SHMRING_EBADALGORITHM);
    ck_assert_int_eq(shmring_algorithm_parse("", &a), SHMRING_EBADALGORITHM);
    ck_assert_int_eq(shmring_hash_parse("xxh128", &h), SHMRING_EBADHASH);
    ck_assert_str_eq(shmring_algorithm_name((shmring_algorithm_t)16), "unknown");
    ck_assert_str_eq(shmring_hash_name((shmring_hash_t)30), "unknown");
    ck_assert_str_eq(shmring_hash_name((shmring_hash_t)-1), "unknown");
}
END_TEST

START_TEST(params_check_codes)
{
    shmring_params_t p;
    shmring_params_default(&p);
    ck_assert_int_eq(shmring_params_check(&p), 0);

    shmring_params_t q = p;
    q.algorithm = (shmring_algorithm_t)16;
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EBADALGORITHM);
    q = p;
    q.hash = (shmring_hash_t)30;
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EBADHASH);
    q = p;
    q.algorithm = SHMRING_ALGORITHM_KETAMA;
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EBADHASH); /* xxh3 */
    q.hash = SHMRING_HASH_MD5;
    ck_assert_int_eq(shmring_params_check(&q), 0);
    q = p;
    q.vnodes = 0;
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EBADVNODES);
    q.vnodes = 65536;
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EBADVNODES);
    q.vnodes = 65535;
    ck_assert_int_eq(shmring_params_check(&q), 0);
    q = p;
    q.algorithm = SHMRING_ALGORITHM_MAGLEV;
    q.table_size = 65536; /* not prime */
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EINVAL);
    q.table_size = 1;
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EINVAL);
    q.table_size = 16777259; /* prime, but over the point limit */
    ck_assert_int_eq(shmring_params_check(&q), SHMRING_EINVAL);
    q.table_size = 16777213; /* the largest prime under 2^24 */
    ck_assert_int_eq(shmring_params_check(&q), 0);
    q.table_size = 2;
    ck_assert_int_eq(shmring_params_check(&q), 0);
    q.table_size = 65537;
    ck_assert_int_eq(shmring_params_check(&q), 0);
}
END_TEST

START_TEST(set_params_stores_valid_params_only)
{
    shmring_nodeset_t *set = new_set();
    shmring_params_t p = {SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MURMUR3, 7, 131071};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &p), 0);
    shmring_params_t got;
    shmring_nodeset_params(set, &got);
    ck_assert_int_eq(got.algorithm, SHMRING_ALGORITHM_MAGLEV);
    ck_assert_int_eq(got.hash, SHMRING_HASH_MURMUR3);
    ck_assert_uint_eq(got.vnodes, 7);
    ck_assert_uint_eq(got.table_size, 131071);

    shmring_params_t bad = {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_CRC32, 160, 0};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &bad), SHMRING_EBADHASH);
    shmring_nodeset_params(set, &got);
    ck_assert_int_eq(got.algorithm, SHMRING_ALGORITHM_MAGLEV);
    ck_assert_int_eq(got.hash, SHMRING_HASH_MURMUR3);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- limits ---- */

#define MANY_NODES 100000

START_TEST(hundred_thousand_nodes)
{
    shmring_nodeset_t *set = new_set();
    char name[32];
    for (uint32_t i = 0; i < MANY_NODES; i++) {
        snprintf(name, sizeof(name), "node-%u", i);
        uint32_t id;
        EXPECT_INT_EQ(
            shmring_nodeset_add(set, name, NULL, i % 7 + 1, SHMRING_STATE_UP, &id), 0);
        EXPECT_UINT_EQ(id, i);
    }
    ck_assert_uint_eq(shmring_nodeset_count(set), MANY_NODES);
    for (uint32_t i = 0; i < MANY_NODES; i++) {
        snprintf(name, sizeof(name), "node-%u", i);
        size_t index;
        EXPECT_INT_EQ(shmring_nodeset_find(set, name, &index), 0);
        EXPECT_UINT_EQ(index, i);
    }
    ck_assert_int_eq(
        shmring_nodeset_add(set, "node-99999", NULL, 1, SHMRING_STATE_UP, NULL),
        SHMRING_EDUPLICATE);
    ck_assert_int_eq(shmring_nodeset_remove(set, "node-500"), 0);
    size_t index;
    ck_assert_int_eq(shmring_nodeset_find(set, "node-501", &index), 0);
    ck_assert_uint_eq(index, 500);
    ck_assert_int_eq(shmring_nodeset_find(set, "node-99999", &index), 0);
    ck_assert_uint_eq(index, MANY_NODES - 2);
    shmring_node_info_t n;
    ck_assert_int_eq(shmring_nodeset_get(set, MANY_NODES - 2, &n), 0);
    ck_assert_uint_eq(n.id, MANY_NODES - 1);
    ck_assert_uint_eq(n.weight, (MANY_NODES - 1) % 7 + 1);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(node_limit)
{
    shmring_nodeset_t *set = new_set();
    char name[32];
    for (uint32_t i = 0; i < SHMRING_NODES_MAX; i++) {
        test_key(name, i);
        EXPECT_INT_EQ(shmring_nodeset_add(set, name, NULL, 1, SHMRING_STATE_UP, NULL), 0);
    }
    ck_assert_uint_eq(shmring_nodeset_count(set), SHMRING_NODES_MAX);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "one-more", NULL, 1, SHMRING_STATE_UP, NULL),
        SHMRING_ELIMIT);
    ck_assert_uint_eq(shmring_nodeset_count(set), SHMRING_NODES_MAX);
    /* A free place is used again, with a new id. */
    ck_assert_int_eq(shmring_nodeset_remove(set, "key:0"), 0);
    add_node(set, "one-more", SHMRING_NODES_MAX);
    shmring_nodeset_free(set);
}
END_TEST

static const struct test_fixture slow = {NULL, NULL, 300};

static Suite *nodeset_suite(void)
{
    Suite *s = suite_create("nodeset");
    TEST_CASE(s, "core", new_set_is_empty_with_defaults, add_get_find,
              remove_keeps_order_and_ids, set_weight_and_state, names_are_exact_bytes);
    TEST_CASE(s, "inherit_ids", inherit_ids_keeps_known_names,
              inherit_ids_from_empty_previous, inherit_ids_keeps_given_ids,
              inherit_ids_stops_at_id_limit);
    TEST_CASE(s, "errors", name_check_codes, failed_calls_leave_set_unchanged);
    TEST_CASE(s, "params", params_names_round_trip, params_check_codes,
              set_params_stores_valid_params_only);
    TEST_CASE_WITH(s, "limits", &slow, hundred_thousand_nodes, node_limit);
    return s;
}

int main(void)
{
    return test_run_suite(nodeset_suite());
}
