/*
 * Helpers shared by the placement and lookup test programs (check_placement*.c,
 * check_snapshot_lookup.c): node sets built node by node, owners of numbered keys,
 * and the lookup_n properties every algorithm keeps.
 */
#ifndef SHMRING_TEST_PLACEMENT_H
#define SHMRING_TEST_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "shmring.h"
#include "shmring_ctl.h"

/* The hashes `ring` and `maglev` take. */
extern const shmring_hash_t test_ring_hashes[5];

/* Keys looked up to measure how many move when the node set changes. */
#define TEST_DISRUPTION_KEYS 200000

/* A node set without nodes, with ALGORITHM, HASH and VNODES (table size 0: the
 * default). Fails the test on error. */
shmring_nodeset_t *test_empty_set(shmring_algorithm_t algorithm, shmring_hash_t hash,
                                  uint32_t vnodes);

/* Adds node NAME (its address is its name); fails the test on error. */
void test_add_node(shmring_nodeset_t *set, const char *name, uint32_t weight,
                   shmring_state_t state);

/* Adds up node "hPORT" at "127.0.0.1:PORT" (Envoy's tests' makeTestHost()) of
 * WEIGHT, with HASH_KEY when not NULL (makeTestHostWithHashKey()). */
void test_add_local_host(shmring_nodeset_t *set, unsigned port, uint32_t weight,
                         const char *hash_key);

/* Adds HOSTS such hosts, ports FIRST_PORT and up, without hash keys, of WEIGHTS
 * (NULL: weight 1 each). */
void test_add_local_hosts(shmring_nodeset_t *set, unsigned first_port, size_t hosts,
                          const uint32_t *weights);

/* Adds HOSTS up nodes "hPORT" of weight 1, ports FIRST_PORT and up, with the hash key
 * "PORT" (Envoy's BasicWithHostname): at "127.0.0.1:PORT" when ADDRESS_PREFIX is
 * NULL, else at ADDRESS_PREFIX, the port and ADDRESS_SUFFIX ("10.9.8." ":8080"). */
void test_add_keyed_hosts(shmring_nodeset_t *set, unsigned first_port, size_t hosts,
                          const char *address_prefix, const char *address_suffix);

/* The id of the owner of key number KEY (test_key()). */
uint32_t test_owner_id(const shmring_snapshot_t *snapshot, uint64_t key);

/* The ids of the owners of keys 0 to KEYS - 1, in a new array (free()). */
uint32_t *test_owners(const shmring_snapshot_t *snapshot, size_t keys);

/* Checks, over 5,000 keys, that shmring_snapshot_lookup_n() for N nodes returns
 * EXPECTED_COUNT distinct nodes, the first of them the single lookup's owner. */
void test_check_lookup_n(const shmring_snapshot_t *snapshot, size_t n,
                         int expected_count);

/* Point INDEX of a ring-type snapshot (ring, ketama and the peer algorithms), in the
 * order lookups search them. The peer algorithms' 32-bit points are its top half. */
uint64_t test_point(const shmring_snapshot_t *snapshot, uint32_t index);

/* The node index of the owner of point INDEX. */
uint32_t test_point_owner(const shmring_snapshot_t *snapshot, uint32_t index);

/* The node index that owns HASH, as the reader's lookup finds it. */
uint32_t test_hash_owner(const shmring_snapshot_t *snapshot, uint64_t hash);

/* The number of points (or maglev slots) of SNAPSHOT. */
uint32_t test_point_count(const shmring_snapshot_t *snapshot);

/* A snapshot of one up node "a" of ADDRESS (and HASH_KEY, if not NULL) under
 * ALGORITHM with its default hash and 160 vnodes. */
shmring_snapshot_t *test_one_node_snapshot(shmring_algorithm_t algorithm,
                                           const char *address, const char *hash_key);

/* The number of points of SET's snapshot. */
uint32_t test_point_count_of(const shmring_nodeset_t *set);

/* Nodes "a" (weight 1), "b" (3) and "c" (9, down) under ALGORITHM with its default
 * hash: the ketama-style shares of weights 1 and 3, with a down node's weight that
 * must not count. */
shmring_nodeset_t *test_one_three_and_down(shmring_algorithm_t algorithm);

/* Checks that ring-type snapshots A and B have the same points, in the same order,
 * owned by the same node indexes. */
void test_check_same_points(const shmring_snapshot_t *a, const shmring_snapshot_t *b);

/* Checks the wrap of a ring-type snapshot: a hash past the last point, and the
 * largest hash, belong to point 0's owner; a hash equal to the last point to its. */
void test_check_wrap(const shmring_snapshot_t *snapshot);

/* Checks that node 0 of a two-node SNAPSHOT, named NAME, owns the whole keyspace. */
void test_check_sole_owner(const shmring_snapshot_t *snapshot, const char *name);

/* One case of shmring_params_check(): WHAT names it, PARAMS are checked, and EXPECTED
 * is the code the check must return. */
struct test_params_case {
    const char *what;
    shmring_params_t params;
    int expected;
};

/* Checks each of the COUNT CASES; a failure names the case. */
void test_check_params_cases(const struct test_params_case *cases, size_t count);

#endif
