#include "test_placement.h"

#include <stdio.h>
#include <stdlib.h>

#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_support.h"

const shmring_hash_t test_ring_hashes[5] = {SHMRING_HASH_XXH3, SHMRING_HASH_MD5,
                                            SHMRING_HASH_CRC32, SHMRING_HASH_FNV1A,
                                            SHMRING_HASH_MURMUR3};

shmring_nodeset_t *test_empty_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t vnodes)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {algorithm, hash, vnodes, 0};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    return set;
}

void test_add_node(shmring_nodeset_t *set, const char *name, uint32_t weight,
                   shmring_state_t state)
{
    ck_assert_int_eq(shmring_nodeset_add(set, name, NULL, weight, state, NULL), 0);
}

void test_add_local_host(shmring_nodeset_t *set, unsigned port, uint32_t weight,
                         const char *hash_key)
{
    char name[16], address[32];
    snprintf(name, sizeof(name), "h%u", port);
    snprintf(address, sizeof(address), "127.0.0.1:%u", port);
    ck_assert_int_eq(
        shmring_nodeset_add(set, name, address, weight, SHMRING_STATE_UP, NULL), 0);
    if (hash_key != NULL)
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, name, hash_key), 0);
}

void test_add_local_hosts(shmring_nodeset_t *set, unsigned first_port, size_t hosts,
                          const uint32_t *weights)
{
    for (size_t i = 0; i < hosts; i++)
        test_add_local_host(set, first_port + (unsigned)i, weights ? weights[i] : 1,
                            NULL);
}

void test_add_keyed_hosts(shmring_nodeset_t *set, unsigned first_port, size_t hosts,
                          const char *address_prefix, const char *address_suffix)
{
    for (unsigned port = first_port; port < first_port + hosts; port++) {
        char name[16], address[64], key[16];
        snprintf(key, sizeof(key), "%u", port);
        if (address_prefix == NULL) {
            test_add_local_host(set, port, 1, key);
            continue;
        }
        snprintf(name, sizeof(name), "h%u", port);
        snprintf(address, sizeof(address), "%s%u%s", address_prefix, port,
                 address_suffix);
        ck_assert_int_eq(
            shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL), 0);
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, name, key), 0);
    }
}

uint32_t test_owner_id(const shmring_snapshot_t *snapshot, uint64_t key)
{
    char text[32];
    size_t len = test_key(text, key);
    shmring_node_t node;
    EXPECT_INT_EQ(shmring_snapshot_lookup(snapshot, text, len, &node), 0);
    return node.id;
}

uint32_t *test_owners(const shmring_snapshot_t *snapshot, size_t keys)
{
    uint32_t *ids = malloc(keys * sizeof(*ids));
    ck_assert_ptr_nonnull(ids);
    for (size_t k = 0; k < keys; k++)
        ids[k] = test_owner_id(snapshot, k);
    return ids;
}

void test_check_lookup_n(const shmring_snapshot_t *snapshot, size_t n, int expected_count)
{
    for (uint64_t k = 0; k < 5000; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t first, found[SHMRING_LOOKUP_N_MAX];
        EXPECT_INT_EQ(shmring_snapshot_lookup(snapshot, key, len, &first), 0);
        int count = shmring_snapshot_lookup_n(snapshot, key, len, found, n);
        EXPECT_INT_EQ(count, expected_count);
        EXPECT_UINT_EQ(found[0].id, first.id);
        EXPECT_STR_EQ(found[0].name, first.name);
        EXPECT_STR_EQ(found[0].address, first.address);
        for (int i = 0; i < count; i++) {
            for (int j = 0; j < i; j++)
                EXPECT_UINT_NE(found[i].id, found[j].id);
        }
    }
}

static const struct snapshot_point *points_of(const shmring_snapshot_t *snapshot)
{
    const void *data = shmring_snapshot_data(snapshot, NULL);
    return snapshot_section_at(data, &snapshot_header(data)->points);
}

uint64_t test_point(const shmring_snapshot_t *snapshot, uint32_t index)
{
    ck_assert_uint_lt(index, test_point_count(snapshot));
    return points_of(snapshot)[index].point;
}

uint32_t test_point_owner(const shmring_snapshot_t *snapshot, uint32_t index)
{
    ck_assert_uint_lt(index, test_point_count(snapshot));
    return points_of(snapshot)[index].node_index;
}

uint32_t test_hash_owner(const shmring_snapshot_t *snapshot, uint64_t hash)
{
    return shmring__snapshot_owner(shmring_snapshot_data(snapshot, NULL), hash);
}

uint32_t test_point_count(const shmring_snapshot_t *snapshot)
{
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    return info.point_count;
}

shmring_snapshot_t *test_one_node_snapshot(shmring_algorithm_t algorithm,
                                           const char *address, const char *hash_key)
{
    shmring_nodeset_t *set =
        test_empty_set(algorithm, shmring_algorithm_default_hash(algorithm), 160);
    ck_assert_int_eq(shmring_nodeset_add(set, "a", address, 1, SHMRING_STATE_UP, NULL),
                     0);
    if (hash_key != NULL)
        ck_assert_int_eq(shmring_nodeset_set_hash_key(set, "a", hash_key), 0);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_nodeset_free(set);
    return snapshot;
}

uint32_t test_point_count_of(const shmring_nodeset_t *set)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    uint32_t count = test_point_count(snapshot);
    shmring_snapshot_free(snapshot);
    return count;
}

shmring_nodeset_t *test_one_three_and_down(shmring_algorithm_t algorithm)
{
    shmring_nodeset_t *set =
        test_empty_set(algorithm, shmring_algorithm_default_hash(algorithm), 160);
    test_add_node(set, "a", 1, SHMRING_STATE_UP);
    test_add_node(set, "b", 3, SHMRING_STATE_UP);
    test_add_node(set, "c", 9, SHMRING_STATE_DOWN);
    return set;
}

void test_check_same_points(const shmring_snapshot_t *a, const shmring_snapshot_t *b)
{
    uint32_t count = test_point_count(a);
    ck_assert_uint_eq(test_point_count(b), count);
    for (uint32_t p = 0; p < count; p++) {
        ck_assert_uint_eq(test_point(a, p), test_point(b, p));
        ck_assert_uint_eq(test_point_owner(a, p), test_point_owner(b, p));
    }
}

void test_check_wrap(const shmring_snapshot_t *snapshot)
{
    uint32_t last = test_point_count(snapshot) - 1;
    ck_assert_uint_lt(test_point(snapshot, last), UINT64_MAX);
    ck_assert_uint_eq(test_hash_owner(snapshot, test_point(snapshot, last) + 1),
                      test_point_owner(snapshot, 0));
    ck_assert_uint_eq(test_hash_owner(snapshot, UINT64_MAX),
                      test_point_owner(snapshot, 0));
    ck_assert_uint_eq(test_hash_owner(snapshot, test_point(snapshot, last)),
                      test_point_owner(snapshot, last));
}

void test_check_sole_owner(const shmring_snapshot_t *snapshot, const char *name)
{
    double shares[2];
    ck_assert_int_eq(shmring_snapshot_shares(snapshot, shares, 2), 0);
    ck_assert(shares[0] == 1.0);
    ck_assert(shares[1] == 0.0);
    shmring_node_t node;
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "k", 1, &node), 0);
    ck_assert_str_eq(node.name, name);
}

void test_check_params_cases(const struct test_params_case *cases, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        int err = shmring_params_check(&cases[i].params);
        ck_assert_msg(err == cases[i].expected,
                      "%s: shmring_params_check() returned %d, not %d", cases[i].what,
                      err, cases[i].expected);
    }
}
