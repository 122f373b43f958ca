/*
 * `envoy-ring`: the ring of Envoy's ring_hash load balancer
 * (source/extensions/load_balancing_policies/ring_hash/ring_hash_lb.cc,
 * RingHashLoadBalancer::Ring), reproduced bit for bit:
 *
 * - hosts in their order in the cluster (our node-set order), each with the
 *   normalized weight w / (sum of the up weights), in double;
 * - scale = min(ceil(min_weight x min_ring_size) / min_weight, max_ring_size), where
 *   min_weight is the smallest normalized weight (and at most 1.0, the value Envoy
 *   starts from);
 * - running sums over the hosts in order: target += scale x weight, and the host
 *   gets points while current < target, current counting every point given so far.
 *   Both are doubles holding whole numbers far below 2^53 for current, so host k
 *   gets ceil(target_k) - current points when that is positive, which is what the
 *   loop gives; this file is built with -ffp-contract=off so that every product is
 *   rounded as Envoy rounds it;
 * - point i of a host hashes "KEY_i" (i in decimal from 0), KEY being its hash_key
 *   or its address as Envoy prints it ("10.0.0.1:80"), with xxHash64 (seed 0) or,
 *   for the murmur2 hash, libstdc++'s 64-bit MurmurHash2 (MURMUR_HASH_2);
 * - the lookup (Envoy's port of ketama_get_server) is the first point >= the key's
 *   hash, wrapping to the first point: ours.
 *
 * Envoy sorts the points with std::sort, which leaves the order of equal points
 * unspecified; we keep them in host order (a stable sort). Distinct keys give equal
 * 64-bit points with negligible probability; two hosts with one hash_key give equal
 * points always, and which of them Envoy answers for is not defined.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "params_internal.h"
#include "placement_internal.h"

/* The scale of Envoy's Ring constructor for UP's weights and PARAMS' ring sizes. */
static double ring_scale(const struct placement_node *up, size_t up_count, uint64_t sum,
                         const shmring_params_t *params)
{
    double min_weight = 1.0;
    for (size_t i = 0; i < up_count; i++) {
        double weight = (double)up[i].weight * 1.0 / (double)sum;
        if (weight < min_weight)
            min_weight = weight;
    }
    double wanted =
        ceil(min_weight * (double)shmring__envoy_min_ring_size(params)) / min_weight;
    double most = (double)shmring__envoy_max_ring_size(params);
    /* std::min(a, b) is a unless b < a. */
    return most < wanted ? most : wanted;
}

/*
 * Walks the hosts as the Ring constructor does and stores in COUNTS[k] (when COUNTS
 * is not NULL) the number of points host k gets; returns their sum.
 */
static uint64_t hashes_per_host(const struct placement_node *up, size_t up_count,
                                const shmring_params_t *params, uint64_t *counts)
{
    if (up_count == 0)
        return 0;
    uint64_t sum = shmring__placement_total_weight(up, up_count);
    double scale = ring_scale(up, up_count, sum, params);
    double current = 0.0, target = 0.0;
    uint64_t total = 0;
    for (size_t k = 0; k < up_count; k++) {
        double weight = (double)up[k].weight * 1.0 / (double)sum;
        target += scale * weight;
        uint64_t count = 0;
        if (current < target) {
            double reached = ceil(target);
            count = (uint64_t)(reached - current);
            current = reached;
        }
        if (counts != NULL)
            counts[k] = count;
        total += count;
    }
    return total;
}

static int size(struct placement_input *input, uint64_t *size)
{
    *size = hashes_per_host(input->up, input->up_count, input->params, NULL);
    return 0;
}

static int place(const struct placement_input *input, uint64_t size, void *out)
{
    (void)size;
    const struct placement_node *up = input->up;
    size_t up_count = input->up_count;
    struct snapshot_point *points = out;
    uint64_t *counts = malloc((up_count ? up_count : 1) * sizeof(*counts));
    if (counts == NULL)
        return SHMRING_ENOMEM;
    hashes_per_host(up, up_count, input->params, counts);
    /* The key, '_', and up to 20 digits. */
    char label[SHMRING_ADDRESS_MAX + 1 + 21];
    size_t next = 0;
    for (size_t k = 0; k < up_count; k++) {
        const char *key = up[k].hash_key != NULL ? up[k].hash_key : up[k].address;
        size_t key_length = strlen(key);
        memcpy(label, key, key_length);
        label[key_length] = '_';
        for (uint64_t i = 0; i < counts[k]; i++) {
            int digits = snprintf(label + key_length + 1, 21, "%" PRIu64, i);
            uint64_t point = shmring__hash64(input->params->hash, label,
                                             key_length + 1 + (size_t)digits);
            shmring__points_append(points, &next, point, up[k].node_index);
        }
    }
    free(counts);
    return shmring__points_sort(points, next);
}

/* ring_hash's hash_function: XX_HASH (the default) or MURMUR_HASH_2; the key hash is
 * xxHash64 either way. The up hosts' weights are summed in their order, which
 * decides how many points each gets. */
const struct placement_algorithm shmring__placement_envoy_ring = {
    .name = "envoy-ring",
    .id = SHMRING_ALGORITHM_ENVOY_RING,
    .peer = true,
    .default_hash = SHMRING_HASH_XXH64,
    .hashes =
        PLACEMENT_HASH_BIT(SHMRING_HASH_XXH64) | PLACEMENT_HASH_BIT(SHMRING_HASH_MURMUR2),
    .parameters = PLACEMENT_PARAM_RING_SIZES,
    .key_hash = KEY_HASH_XXH64,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
