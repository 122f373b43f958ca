/*
 * The content fingerprint: one 64-bit value that is equal on two rings exactly when
 * they answer every key identically with the same nodes and ids, whatever their
 * history, the order of the file they were loaded from, or the snapshot format.
 *
 * It is XXH3-64 over a canonical encoding built from the node set alone (never from
 * snapshot bytes, whose layout may change), with every integer as 32 little-endian
 * bits and every string as its length then its bytes:
 *
 *   "shmring fingerprint v4" (with its NUL)
 *   algorithm, hash
 *   vnodes                  for `ring`; 0 for maglev and ketama, which ignore it
 *   table size              for `maglev` and `envoy-maglev`, the size actually used
 *                           (a table_size of 0 and the default prime it stands for
 *                           are the same); 0 for the others
 *   min and max ring size   for `envoy-ring` only (absent for the others, whose
 *                           encoding is unchanged): the sizes in use, 0 read as
 *                           Envoy's defaults
 *   node count
 *   for each node, by name (bytewise, shorter first on a common prefix):
 *     name, address, weight, state (0 up, 1 down), id,
 *     rank                  where node order may change an answer (the one
 *                           predicate, shmring__placement_order()): for `ketama`,
 *                           `libketama` and `envoy-ring` the node's position
 *                           among the up nodes in node-set order (0xffffffff when
 *                           down), because those continua break ties between
 *                           equal points by server order (and envoy-ring shares
 *                           its points out in host order); for `nginx` its
 *                           position among all nodes, down ones included,
 *                           because nginx places down servers too and the first
 *                           of equal points wins; `ring`, `maglev`, `envoy-maglev`
 *                           and `twemproxy` order their nodes by key and name and
 *                           never depend on node order, so for them it is 0
 *     hash key              the string hashed into the node's points in place of
 *                           the default (empty when the node has none)
 *
 * Nothing else goes in: not the generation, the publisher, the next id to give, the
 * ring's name, mode or owner, nor the order of the nodes when the algorithm ignores
 * it. ringctl and docs/concepts.md describe the same list; change all three together, and
 * the domain string with them.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fingerprint_internal.h"
#include "nodeset_internal.h"
#include "params_internal.h"
#include "placement_internal.h"

#define NOT_UP UINT32_MAX

static void hash_le32(XXH3_state_t *state, uint32_t v)
{
    uint8_t bytes[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                        (uint8_t)(v >> 24)};
    XXH3_64bits_update(state, bytes, sizeof(bytes));
}

static void hash_text(XXH3_state_t *state, const char *text, uint32_t length)
{
    hash_le32(state, length);
    XXH3_64bits_update(state, text, length);
}

/* A node and its rank in node-set order (see above), sorted by name. */
struct ranked_node {
    const struct nodeset_node *node;
    uint32_t rank;
};

static int compare_by_name(const void *a, const void *b)
{
    const struct nodeset_node *x = ((const struct ranked_node *)a)->node;
    const struct nodeset_node *y = ((const struct ranked_node *)b)->node;
    size_t common = x->name_length < y->name_length ? x->name_length : y->name_length;
    int c = memcmp(x->name, y->name, common);
    if (c != 0)
        return c;
    return (x->name_length > y->name_length) - (x->name_length < y->name_length);
}

int shmring__fingerprint(const shmring_nodeset_t *set, uint32_t table_size, uint64_t *out)
{
    const shmring_params_t *params = &set->params;
    struct ranked_node *sorted = malloc((set->count ? set->count : 1) * sizeof(*sorted));
    if (sorted == NULL)
        return SHMRING_ENOMEM;
    /* Node order counts exactly where placement may depend on it (see above). */
    enum placement_order order = shmring__placement_order(params);
    uint32_t next_rank = 0;
    for (size_t i = 0; i < set->count; i++) {
        const struct nodeset_node *n = &set->nodes[i];
        uint32_t rank = 0;
        if (order == PLACEMENT_ORDER_ALL)
            rank = next_rank++;
        else if (order == PLACEMENT_ORDER_UP)
            rank = n->state == SHMRING_STATE_UP ? next_rank++ : NOT_UP;
        sorted[i] = (struct ranked_node){.node = n, .rank = rank};
    }
    /* Names are unique in a node set, so the order is total. */
    qsort(sorted, set->count, sizeof(*sorted), compare_by_name);

    static const char domain[] = "shmring fingerprint v4";
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, domain, sizeof(domain));
    hash_le32(&state, (uint32_t)params->algorithm);
    hash_le32(&state, (uint32_t)params->hash);
    /* What the algorithm reads of the parameters (its description's), so that a
     * parameter it ignores moves no fingerprint. */
    unsigned reads = shmring__algorithm_valid((unsigned)params->algorithm)->parameters;
    hash_le32(&state, reads & PLACEMENT_PARAM_VNODES ? params->vnodes : 0);
    hash_le32(&state, reads & PLACEMENT_PARAM_TABLE_SIZE ? table_size : 0);
    /* Only algorithms with ring sizes (`envoy-ring`) hash them; the others' encoding
     * is as it was. */
    if (reads & PLACEMENT_PARAM_RING_SIZES) {
        hash_le32(&state, shmring__envoy_min_ring_size(params));
        hash_le32(&state, shmring__envoy_max_ring_size(params));
    }
    hash_le32(&state, (uint32_t)set->count);
    for (size_t i = 0; i < set->count; i++) {
        const struct nodeset_node *n = sorted[i].node;
        hash_text(&state, n->name, n->name_length);
        hash_text(&state, n->address, n->address_length);
        hash_le32(&state, n->weight);
        hash_le32(&state, (uint32_t)n->state);
        hash_le32(&state, n->id);
        hash_le32(&state, sorted[i].rank);
        const char *hash_key = n->hash_key != NULL ? n->hash_key : "";
        hash_text(&state, hash_key, (uint32_t)strlen(hash_key));
    }
    free(sorted);
    *out = XXH3_64bits_digest(&state);
    return 0;
}
