/*
 * `haproxy`: the tree of HAProxy's `hash-type consistent` (HAProxy 2.6, src/lb_chash.c
 * chash_init_server_tree() and chash_get_server_hash(), src/cfgparse.c's server ids),
 * reproduced bit for bit:
 *
 * - keys are hashed with the backend's `hash-type consistent` function (hash_haproxy.c);
 *   `hash-type consistent` with no function is sdbm with avalanche (cfgparse-listen.c),
 *   our default, and a function named alone (`sdbm`) has no avalanche;
 * - every server has an id: the node's hash_key when it has one (the server's `id`, a
 *   decimal integer from 1 to 2147483647, unique in the backend), otherwise the id
 *   HAProxy gives it: walking the servers in configuration order (down ones included)
 *   with a counter from 1, a server without an id takes the first id at or above the
 *   counter that no server holds, and every server, with an id or not, then adds one
 *   to the counter (so an explicit id moves the counter by one, not past itself);
 * - an up server of weight W (1 to 256) gets W x 16 points; point j of the server with
 *   id ID is full_hash(ID x 4096 + j), computed modulo 2^32 (HAProxy builds with
 *   -fwrapv), so ids 2^20 apart give the same points;
 * - a key goes to the point nearest its hash in either direction, modulo 2^32: with
 *   NEXT the first point at or after the hash (wrapping to the first point) and PREV
 *   the point before NEXT (wrapping to the last), PREV wins when hash - PREV <=
 *   NEXT - hash, NEXT otherwise;
 * - equal points (a collision) keep the order the servers were inserted in, which is
 *   configuration order: a key that reaches them from below takes the first server's,
 *   a key that reaches them from above takes the last server's (ebtree's duplicates:
 *   eb32_lookup_ge() returns the first, eb32_prev() and eb32_last() the last).
 *
 * A snapshot answers with the first point at or after a key's hash, so we store the
 * nearest-point rule in that form: for each distinct point value P, with D the
 * distance to the next distinct value (wrapping), a point at P owned by P's first
 * server, and when D >= 2 a point at P + floor(D / 2) owned by P's last server. A hash
 * at distance 1 to floor(D / 2) above P is nearer P (or as near, which HAProxy gives
 * P), the rest is nearer the next value. Every server has 16 or more distinct points
 * (full_hash() is a bijection), so there are always two distinct values at least.
 *
 * What HAProxy does not decide by the tree, we cannot follow: a request without the
 * hashed header, or with an empty one, goes to a server by round robin, and backup
 * servers take keys only when no active server is up.
 *
 * tests/peers/test_haproxy.py checks every rule above against a running haproxy.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"

/* BE_WEIGHT_SCALE: HAProxy gives a server weight x 16 points. */
#define HAPROXY_POINTS_PER_WEIGHT 16u
/* SRV_EWGHT_RANGE (256 x 16): the ids' stride in the point hash's input. */
#define HAPROXY_ID_STRIDE 4096u
/* SRV_UWGHT_MAX. */
#define HAPROXY_WEIGHT_MAX 256u
#define HAPROXY_ID_MAX 2147483647u

/*
 * A server's id from NODE's hash_key into *ID: 0 when it has none, the id when the
 * key is its `id` in decimal, false when the key is not one.
 */
static bool explicit_id(const struct placement_node *node, uint32_t *id)
{
    *id = 0;
    const char *key = node->hash_key;
    if (key == NULL)
        return true;
    if (key[0] < '1' || key[0] > '9')
        return false;
    uint64_t value = 0;
    for (const char *c = key; *c != '\0'; c++) {
        if (*c < '0' || *c > '9')
            return false;
        value = value * 10 + (uint64_t)(*c - '0');
        if (value > HAPROXY_ID_MAX)
            return false;
    }
    *id = (uint32_t)value;
    return true;
}

static int compare_ids(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/*
 * Gives IDS[i] the id of NODES[i], HAProxy's way (see the top of the file). Returns 0,
 * SHMRING_ENOMEM, or SHMRING_EBADADDRESS for a hash_key that is no id or an id two
 * nodes share.
 */
static int assign_ids(const struct placement_node *nodes, size_t count, uint32_t *ids)
{
    uint32_t *taken = malloc((count ? count : 1) * sizeof(*taken));
    if (taken == NULL)
        return SHMRING_ENOMEM;
    size_t taken_count = 0;
    for (size_t i = 0; i < count; i++) {
        if (!explicit_id(&nodes[i], &ids[i])) {
            free(taken);
            return SHMRING_EBADADDRESS;
        }
        if (ids[i] != 0)
            taken[taken_count++] = ids[i];
    }
    qsort(taken, taken_count, sizeof(*taken), compare_ids);
    for (size_t i = 1; i < taken_count; i++) {
        if (taken[i] == taken[i - 1]) {
            free(taken);
            return SHMRING_EBADADDRESS;
        }
    }
    /* The ids given so far are all below the counter, so a free id at or above it is
     * one that no explicit id takes: walk the sorted explicit ids alongside. */
    uint64_t next_id = 1;
    size_t below = 0;
    for (size_t i = 0; i < count; i++) {
        if (ids[i] == 0) {
            while (below < taken_count && taken[below] < next_id)
                below++;
            while (below < taken_count && taken[below] == next_id) {
                next_id++;
                below++;
            }
            ids[i] = (uint32_t)next_id;
        }
        next_id++;
    }
    free(taken);
    return 0;
}

/*
 * Places the up nodes of INPUT into a new sorted array that the caller frees, *COUNT
 * points in the first-at-or-after form described at the top of the file. Returns 0,
 * SHMRING_ENOMEM, SHMRING_EBADWEIGHT (a weight above HAProxy's 256), SHMRING_ELIMIT,
 * or SHMRING_EBADADDRESS (see assign_ids()).
 */
static int tree(const struct placement_input *input, struct snapshot_point **out,
                size_t *count)
{
    uint64_t all = 0;
    for (size_t i = 0; i < input->up_count; i++) {
        if (input->up[i].weight > HAPROXY_WEIGHT_MAX)
            return SHMRING_EBADWEIGHT;
        all += (uint64_t)input->up[i].weight * HAPROXY_POINTS_PER_WEIGHT;
    }
    /* At most two entries per server point. */
    if (2 * all > SHMRING_POINTS_MAX)
        return SHMRING_ELIMIT;
    uint32_t *ids = malloc((input->node_count ? input->node_count : 1) * sizeof(*ids));
    struct snapshot_point *points = malloc((2 * all + 1) * sizeof(*points));
    if (ids == NULL || points == NULL) {
        free(ids);
        free(points);
        return SHMRING_ENOMEM;
    }
    int err = assign_ids(input->nodes, input->node_count, ids);
    size_t placed = 0;
    for (size_t i = 0; err == 0 && i < input->up_count; i++) {
        const struct placement_node *node = &input->up[i];
        uint32_t base = ids[node->node_index] * HAPROXY_ID_STRIDE;
        uint32_t node_points = node->weight * HAPROXY_POINTS_PER_WEIGHT;
        for (uint32_t j = 0; j < node_points; j++) {
            uint32_t point = shmring__haproxy_full_hash(base + j);
            shmring__points_append(points, &placed, (uint64_t)point << 32,
                                   node->node_index);
        }
    }
    free(ids);
    /* A stable sort keeps equal points in server order, as HAProxy's tree does. */
    if (err == 0)
        err = shmring__points_sort(points, placed);
    if (err != 0) {
        free(points);
        return err;
    }
    /* Each distinct value keeps its first server at its own place; its last server
     * takes the half of the gap above it, at the end of the array, sorted in again
     * below. The gap after the last value wraps to the first. */
    size_t kept = 0, halves = placed;
    for (size_t j = 0; j < placed;) {
        size_t last = j;
        while (last + 1 < placed && points[last + 1].point == points[j].point)
            last++;
        uint32_t value = (uint32_t)(points[j].point >> 32);
        size_t following = last + 1 < placed ? last + 1 : 0;
        uint32_t gap = (uint32_t)(points[following].point >> 32) - value;
        uint32_t owner_above = points[last].node_index;
        points[kept++] = points[j];
        if (gap / 2 > 0)
            shmring__points_append(points, &halves,
                                   (uint64_t)(uint32_t)(value + gap / 2) << 32,
                                   owner_above);
        j = last + 1;
    }
    /* The halves sit after the original points, which the loop above has compacted:
     * move them down behind the kept ones. */
    size_t half_count = halves - placed;
    memmove(points + kept, points + placed, half_count * sizeof(*points));
    err = shmring__points_sort(points, kept + half_count);
    if (err != 0) {
        free(points);
        return err;
    }
    *out = points;
    *count = kept + half_count;
    return 0;
}

/* The number of points costs a whole placement, which is kept for place(). */
static int size(struct placement_input *input, uint64_t *size)
{
    struct snapshot_point *points;
    size_t count;
    int err = tree(input, &points, &count);
    if (err != 0)
        return err;
    input->prepared = points;
    *size = count;
    return 0;
}

/* HAProxy hashes keys with its `hash-type` function and the servers' points with
 * full_hash(); ids follow every server's place in the configuration, down ones
 * included, and equal points keep server order. */
const struct placement_algorithm shmring__placement_haproxy = {
    .name = "haproxy",
    .id = SHMRING_ALGORITHM_HAPROXY,
    .peer = true,
    .default_hash = SHMRING_HASH_SDBM_AVALANCHE,
    .hashes =
        PLACEMENT_HASH_BIT(SHMRING_HASH_SDBM) | PLACEMENT_HASH_BIT(SHMRING_HASH_DJB2) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_WT6) | PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_SDBM_AVALANCHE) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_DJB2_AVALANCHE) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_WT6_AVALANCHE) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32_AVALANCHE),
    .parameters = 0,
    .key_hash = KEY_HASH_HAPROXY,
    .order = PLACEMENT_ORDER_ALL,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = shmring__place_prepared_points,
};
