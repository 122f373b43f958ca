/* Node sets, snapshots, keys, imports, and node-set JSON parsed or failed. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t test_random(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

size_t test_key(char *buf, uint64_t i)
{
    return (size_t)snprintf(buf, 32, "key:%llu", (unsigned long long)i);
}

/* Whether strings A and B, either of which may be NULL, are equal. */
static bool same_text(const char *a, const char *b)
{
    return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

void test_check_same_nodeset(const shmring_nodeset_t *a, const shmring_nodeset_t *b)
{
    shmring_params_t pa, pb;
    shmring_nodeset_params(a, &pa);
    shmring_nodeset_params(b, &pb);
    ck_assert_int_eq(pa.algorithm, pb.algorithm);
    ck_assert_int_eq(pa.hash, pb.hash);
    ck_assert_uint_eq(pa.vnodes, pb.vnodes);
    ck_assert_uint_eq(pa.table_size, pb.table_size);
    ck_assert_uint_eq(pa.min_ring_size, pb.min_ring_size);
    ck_assert_uint_eq(pa.max_ring_size, pb.max_ring_size);
    ck_assert_uint_eq(shmring_nodeset_count(a), shmring_nodeset_count(b));
    for (size_t i = 0; i < shmring_nodeset_count(a); i++) {
        shmring_node_info_t x, y;
        ck_assert_int_eq(shmring_nodeset_get(a, i, &x), 0);
        ck_assert_int_eq(shmring_nodeset_get(b, i, &y), 0);
        ck_assert_uint_eq(x.id, y.id);
        ck_assert_str_eq(x.name, y.name);
        ck_assert_msg(same_text(x.address, y.address), "node %zu: address '%s', not '%s'",
                      i, y.address != NULL ? y.address : "(none)",
                      x.address != NULL ? x.address : "(none)");
        ck_assert_msg(same_text(x.hash_key, y.hash_key),
                      "node %zu: hash key '%s', not '%s'", i,
                      y.hash_key != NULL ? y.hash_key : "(none)",
                      x.hash_key != NULL ? x.hash_key : "(none)");
        ck_assert_uint_eq(x.weight, y.weight);
        ck_assert_int_eq(x.state, y.state);
    }
}

shmring_hash_t test_usual_hash(shmring_algorithm_t algorithm)
{
    return algorithm == SHMRING_ALGORITHM_KETAMA ? SHMRING_HASH_MD5 : SHMRING_HASH_XXH3;
}

shmring_nodeset_t *test_nodeset(size_t count, shmring_algorithm_t algorithm,
                                shmring_hash_t hash)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = algorithm;
    params.hash = hash;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    for (size_t i = 0; i < count; i++) {
        char name[32], address[48];
        snprintf(name, sizeof(name), "node-%zu", i);
        snprintf(address, sizeof(address), "10.0.%zu.%zu:11211", i / 256, i % 256);
        ck_assert_int_eq(
            shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL), 0);
    }
    return set;
}

void *test_build(const shmring_nodeset_t *set, size_t *size)
{
    void *buffer = NULL;
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, size), 0);
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_snapshot_new(buffer, *size, &snapshot), 0);
    shmring_snapshot_free(snapshot);
    return buffer;
}

int test_build_error(const shmring_nodeset_t *set)
{
    void *buffer = NULL;
    size_t size = 0;
    int err = shmring_snapshot_build(set, &buffer, &size);
    if (err != 0)
        ck_assert_ptr_null(buffer);
    free(buffer);
    return err;
}

shmring_snapshot_t *test_snapshot(const shmring_nodeset_t *set)
{
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_nodeset_snapshot(set, &snapshot), 0);
    return snapshot;
}

shmring_nodeset_t *test_small_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t table_size)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {algorithm, hash, 4, table_size};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "alpha", "10.0.0.1:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "beta", "10.0.0.2:11212", 2, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "gamma", "10.0.0.3:11211", 1, SHMRING_STATE_DOWN, NULL),
        0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "delta", "10.0.0.4:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    return set;
}

shmring_nodeset_t *test_parse_json(const char *text, const shmring_params_t *base)
{
    /* A parser that succeeds must fill its result: it starts as this address. */
    shmring_nodeset_t *untouched = (shmring_nodeset_t *)(void *)&untouched;
    shmring_nodeset_t *set = untouched;
    shmring_json_error_t error;
    int rc = shmring_nodeset_from_json(text, strlen(text), base, &set, &error);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, error.text);
    ck_assert_ptr_ne(set, untouched);
    return set;
}

char *test_import_json(shmring_import_format_t format, const char *text,
                       const char *section)
{
    shmring_nodeset_t *set = NULL;
    shmring_import_error_t error;
    memset(&error, 0, sizeof(error));
    int rc = shmring_nodeset_import(format, text, strlen(text), section, &set, &error);
    ck_assert_msg(rc == 0, "import failed (%d): line %d: %s", rc, error.line, error.text);
    char *json = NULL;
    ck_assert_int_eq(shmring_nodeset_to_json(set, &json), 0);
    shmring_nodeset_free(set);
    return json;
}

void test_check_json_text(const char *text, const struct test_json_text *want)
{
    char *expected = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&expected, &size);
    ck_assert_ptr_nonnull(out);
    fprintf(out, "{\n  \"algorithm\": \"%s\",\n  \"hash\": \"%s\",\n  \"vnodes\": %u,\n",
            want->algorithm, want->hash, want->vnodes);
    if (want->table_size != TEST_JSON_NO_TABLE_SIZE)
        fprintf(out, "  \"table_size\": %ld,\n", want->table_size);
    fprintf(out, "  \"nodes\": [\n");
    for (size_t i = 0; i < want->count; i++) {
        const struct test_json_node *node = &want->nodes[i];
        fprintf(out, "    {\n      \"name\": \"%s\",\n      \"id\": %u,\n", node->name,
                node->id);
        if (node->address != NULL)
            fprintf(out, "      \"address\": \"%s\",\n", node->address);
        if (node->hash_key != NULL)
            fprintf(out, "      \"hash_key\": \"%s\",\n", node->hash_key);
        fprintf(out, "      \"weight\": %u,\n      \"state\": \"%s\"\n    }%s\n",
                node->weight, node->state, i + 1 < want->count ? "," : "");
    }
    fprintf(out, "  ]\n}\n");
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_str_eq(text, expected);
    free(expected);
}

void test_check_import(shmring_import_format_t format, const char *text,
                       const char *section, const struct test_json_text *want)
{
    char *json = test_import_json(format, text, section);
    test_check_json_text(json, want);
    free(json);
}

void test_import_fails(shmring_import_format_t format, const char *text,
                       const char *section, int line, const char *message)
{
    /* A failed import leaves *out as it was. */
    shmring_nodeset_t *untouched = (shmring_nodeset_t *)(void *)&untouched;
    shmring_nodeset_t *set = untouched;
    shmring_import_error_t error;
    memset(&error, 0, sizeof(error));
    ck_assert_int_eq(
        shmring_nodeset_import(format, text, strlen(text), section, &set, &error),
        SHMRING_EINVAL);
    ck_assert_ptr_eq(set, untouched);
    ck_assert_msg(error.line == line && strcmp(error.text, message) == 0,
                  "got line %d: \"%s\"\nwant line %d: \"%s\"", error.line, error.text,
                  line, message);
}
