/*
 * `ring`: classic consistent hashing with virtual nodes. Node N of weight W gets
 * W x vnodes points, point i at hash(key || le32(i)), where the key is the node's
 * hash_key when it has one and its name otherwise. Points depend only on that key
 * and the index, never on the node's address, id or position in the node set, so
 * re-addressing or reordering nodes moves no keys, a node given a hash_key can be
 * renamed without moving any, and adding or removing a node moves only the keys of
 * the points it gains or loses.
 */
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"

static int size(struct placement_input *input, uint64_t *size)
{
    uint64_t total = 0;
    for (size_t i = 0; i < input->up_count; i++)
        total += (uint64_t)input->up[i].weight * input->params->vnodes;
    *size = total;
    return 0;
}

/* qsort()'s view of shmring__placement_compare_by_key() over node pointers. */
static int compare_by_key(const void *a, const void *b)
{
    return shmring__placement_compare_by_key(*(const struct placement_node *const *)a,
                                             *(const struct placement_node *const *)b);
}

static int place(const struct placement_input *input, uint64_t size, void *out)
{
    (void)size;
    const struct placement_node *up = input->up;
    size_t up_count = input->up_count;
    const shmring_params_t *params = input->params;
    struct snapshot_point *points = out;
    /*
     * Emitting points node by node in point-key order, then sorting stably, breaks
     * ties between equal points by key (then name): a rule that does not depend on
     * node-set order, so two node sets with the same nodes place keys identically.
     */
    const struct placement_node **by_name = malloc(up_count * sizeof(*by_name));
    if (by_name == NULL && up_count > 0)
        return SHMRING_ENOMEM;
    for (size_t i = 0; i < up_count; i++)
        by_name[i] = &up[i];
    qsort(by_name, up_count, sizeof(*by_name), compare_by_key);

    /* The point key, then the point's index in four little-endian bytes. */
    uint8_t key_and_index[(SHMRING_NAME_MAX > SHMRING_ADDRESS_MAX ? SHMRING_NAME_MAX
                                                                  : SHMRING_ADDRESS_MAX) +
                          4];
    size_t next = 0;
    for (size_t n = 0; n < up_count; n++) {
        const struct placement_node *node = by_name[n];
        size_t length;
        const char *key = shmring__placement_node_key(node, &length);
        memcpy(key_and_index, key, length);
        uint32_t count = node->weight * params->vnodes;
        for (uint32_t i = 0; i < count; i++) {
            key_and_index[length + 0] = (uint8_t)i;
            key_and_index[length + 1] = (uint8_t)(i >> 8);
            key_and_index[length + 2] = (uint8_t)(i >> 16);
            key_and_index[length + 3] = (uint8_t)(i >> 24);
            shmring__points_append(
                points, &next, shmring__hash64(params->hash, key_and_index, length + 4),
                node->node_index);
        }
    }
    free(by_name);
    return shmring__points_sort(points, next);
}

/* Ring takes the 64-bit hashes only (PLACEMENT_HASHES_OWN). */
const struct placement_algorithm shmring__placement_ring = {
    .name = "ring",
    .id = SHMRING_ALGORITHM_RING,
    .peer = false,
    .default_hash = SHMRING_HASH_XXH3,
    .hashes = PLACEMENT_HASHES_OWN,
    .parameters = PLACEMENT_PARAM_VNODES,
    .key_hash = KEY_HASH_PARAMS,
    .order = PLACEMENT_ORDER_NONE,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
