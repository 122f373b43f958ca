/*
 * `envoy-maglev`: the lookup table of Envoy's Maglev load balancer
 * (source/extensions/load_balancing_policies/maglev/maglev_lb.cc, MaglevTable),
 * reproduced bit for bit:
 *
 * - each host's key is its `envoy.lb` hash_key metadata (our node's hash_key) or,
 *   without one, its address as Envoy prints it ("10.0.0.1:80", "[::1]:80"): our
 *   node's address, which must be written that way;
 * - hosts are taken in the order of their keys (std::sort of (key, host pointer,
 *   weight) tuples: bytewise, a prefix first); Envoy breaks a tie between two hosts
 *   with one key by pointer, which is unspecified, and we break it by node name;
 * - a host's permutation starts at offset = xxHash64(key, seed 0) mod size and steps
 *   by skip = xxHash64(key, seed 1) mod (size - 1) + 1;
 * - weights are Envoy's normalized ones, w / (sum of the up weights) in double, and
 *   a host takes a turn in iteration i (counting from 1) only while
 *   i x weight >= its target, which then grows by the largest normalized weight: the
 *   same floating-point operations in the same order (this file is built with
 *   -ffp-contract=off, so that no fused multiply-add changes a rounding);
 * - hosts take turns, each claiming the next free slot of its permutation, until the
 *   table is full; a table smaller than the host count is filled by the first hosts.
 *
 * The table size is Envoy's table_size (65537 by default, a prime); the key's slot
 * is its hash modulo the size (MaglevTable::chooseHost), which the lookup does.
 * Envoy's Compact and Original tables are filled alike; this is their content.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "params_internal.h"
#include "placement_internal.h"

struct envoy_maglev_host {
    /* The key hashed: the hash_key or the address. */
    const char *key;
    size_t key_length;
    const struct placement_node *node;
    double weight;
};

/* The order of Envoy's sorted_host_weights: by key (std::string_view's <), ties
 * by node name in place of Envoy's unspecified pointer order. */
static int compare_hosts(const void *a, const void *b)
{
    const struct envoy_maglev_host *x = a, *y = b;
    size_t common = x->key_length < y->key_length ? x->key_length : y->key_length;
    int c = memcmp(x->key, y->key, common);
    if (c != 0)
        return c;
    if (x->key_length != y->key_length)
        return x->key_length < y->key_length ? -1 : 1;
    return strcmp(x->node->name, y->node->name);
}

static int place_table(const struct placement_node *up, size_t up_count,
                       uint32_t table_size, uint32_t *table)
{
    struct envoy_maglev_host *hosts = malloc(up_count * sizeof(*hosts));
    if (hosts == NULL)
        return SHMRING_ENOMEM;
    /* normalizeHostWeights(): w x 1.0 / sum, the sum an integer converted to double. */
    uint64_t sum = shmring__placement_total_weight(up, up_count);
    double max_weight = 0.0;
    for (size_t i = 0; i < up_count; i++) {
        const char *key = up[i].hash_key != NULL ? up[i].hash_key : up[i].address;
        double weight = (double)up[i].weight * 1.0 / (double)sum;
        hosts[i] = (struct envoy_maglev_host){
            .key = key, .key_length = strlen(key), .node = &up[i], .weight = weight};
        if (weight > max_weight)
            max_weight = weight;
    }
    qsort(hosts, up_count, sizeof(*hosts), compare_hosts);
    struct maglev_permutation *nodes = malloc(up_count * sizeof(*nodes));
    if (nodes == NULL) {
        free(hosts);
        return SHMRING_ENOMEM;
    }
    for (size_t i = 0; i < up_count; i++) {
        const struct envoy_maglev_host *host = &hosts[i];
        uint64_t offset = XXH64(host->key, host->key_length, 0) % table_size;
        nodes[i] = (struct maglev_permutation){
            .offset = offset,
            .skip = XXH64(host->key, host->key_length, 1) % (table_size - 1) + 1,
            .slot = offset,
            .weight = host->weight,
            .target = 0.0,
            .node_index = host->node->node_index,
        };
    }
    shmring__maglev_fill(nodes, up_count, max_weight, table_size, table);
    free(nodes);
    free(hosts);
    return 0;
}

/* Envoy refuses a larger table (MaglevLbConfig's table_size rule). */
static int check(const shmring_params_t *params)
{
    return params->table_size > ENVOY_MAGLEV_TABLE_SIZE_MAX ? SHMRING_EINVAL : 0;
}

/* Envoy's table size does not grow with the hosts. */
static int size(struct placement_input *input, uint64_t *size)
{
    *size = input->params->table_size ? input->params->table_size
                                      : ENVOY_MAGLEV_DEFAULT_TABLE_SIZE;
    return 0;
}

static int place(const struct placement_input *input, uint64_t size, void *table)
{
    return place_table(input->up, input->up_count, (uint32_t)size, table);
}

const struct placement_algorithm shmring__placement_envoy_maglev = {
    .name = "envoy-maglev",
    .id = SHMRING_ALGORITHM_ENVOY_MAGLEV,
    .peer = true,
    .default_hash = SHMRING_HASH_XXH64,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_XXH64),
    .parameters = PLACEMENT_PARAM_TABLE_SIZE,
    .check = check,
    .key_hash = KEY_HASH_XXH64,
    .order = PLACEMENT_ORDER_NONE,
    .lookup = PLACEMENT_LOOKUP_TABLE,
    .candidates = PLACEMENT_CANDIDATES_TABLE_FORWARD,
    .size = size,
    .place = place,
};
