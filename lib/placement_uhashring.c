/*
 * `uhashring`: the rings of Python's uhashring 2.1 (uhashring/ring.py, HashRing),
 * bit for bit, in its two kinds:
 *
 * - hash md5, uhashring's default (ring_meta.py, MetaRing): a node of weight w gets
 *   vnodes x w points (uhashring's vnodes, 160 by default, is ours); point i, from 0,
 *   is int(md5("NAME-i").hexdigest(), 16), the digest read as one big-endian 128-bit
 *   number, of which a point keeps the top 64 bits.
 * - hash ketama, hash_fn="ketama" (ring_ketama.py, KetamaRing): a node of weight w
 *   gets (v x N x w) // W digests, v uhashring's vnodes (ours divided by 4: 40 by
 *   default), N the number of nodes, W the sum of their weights, in integers;
 *   digest i is md5("NAME-i"), whose four little-endian words are four points
 *   (KetamaRing's default 4 replicas).
 * - NAME is the node name as uhashring formats it: our hash_key, else our name.
 * - A key's owner is the first point above the key's hash (bisect(), that is
 *   bisect_right), wrapping to the first point past the last; the key's hash is
 *   made like a point's from the key's UTF-8 (KEY_HASH_UHASHRING shifts it so that
 *   our first point at or after it is that point).
 * - Equal points: the ring is a dict from point to node name, written in node order
 *   and, within a node, in point order, so the last written owns the point
 *   (KetamaRing's sorted list keeps the repeats, which all name that owner).
 *
 * uhashring has no down nodes: our down nodes are left out, as remove_node() leaves
 * a node out and rebuilds the ring (N and W then count the up nodes alone).
 * What it leaves unspecified, and our choice: MetaRing compares 128-bit numbers and
 * we compare their top 64 bits, so a key whose digest shares its first 64 bits with
 * a point's digest but not all 128 (a 64-bit MD5 prefix collision, which no key
 * meets by chance) would go past the point where uhashring stops at it.
 */
#include <stdio.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"

/* KetamaRing's points per digest: MD5's four 32-bit words. */
#define KETAMA_REPLICAS 4u

static bool is_ketama(const struct placement_input *input)
{
    return input->params->hash == SHMRING_HASH_KETAMA;
}

/* KetamaRing's digests for NODE: (vnodes x N x weight) // W. */
static uint64_t ketama_digests(const struct placement_input *input,
                               const struct placement_node *node, uint64_t total_weight)
{
    uint64_t vnodes = input->params->vnodes / KETAMA_REPLICAS;
    return vnodes * input->up_count * node->weight / total_weight;
}

static int size(struct placement_input *input, uint64_t *size)
{
    uint64_t total_weight = shmring__placement_total_weight(input->up, input->up_count);
    *size = 0;
    for (size_t i = 0; i < input->up_count; i++) {
        if (is_ketama(input))
            *size += KETAMA_REPLICAS * ketama_digests(input, &input->up[i], total_weight);
        else
            *size += (uint64_t)input->params->vnodes * input->up[i].weight;
        if (*size > SHMRING_POINTS_MAX)
            return SHMRING_ELIMIT;
    }
    return 0;
}

/* The node name uhashring formats into NODE's point strings. */
static const char *node_name(const struct placement_node *node, size_t *length)
{
    return shmring__placement_node_key(node, length);
}

/* MetaRing's COUNT points of NAME: the top 64 bits of md5("NAME-i") big-endian. */
static void add_meta_points(struct snapshot_point *points, size_t *next, const char *name,
                            size_t name_length, uint64_t count, uint32_t node_index)
{
    char label[SHMRING_NAME_MAX + 24];
    memcpy(label, name, name_length);
    for (uint64_t i = 0; i < count; i++) {
        int suffix = snprintf(label + name_length, sizeof(label) - name_length, "-%llu",
                              (unsigned long long)i);
        uint8_t digest[16];
        shmring__md5(label, name_length + (size_t)suffix, digest);
        uint64_t point = 0;
        for (int b = 0; b < 8; b++)
            point = point << 8 | digest[b];
        shmring__points_append(points, next, point, node_index);
    }
}

static int place(const struct placement_input *input, uint64_t size, void *out)
{
    (void)size;
    struct snapshot_point *points = out;
    uint64_t total_weight = shmring__placement_total_weight(input->up, input->up_count);
    size_t next = 0;
    for (size_t n = 0; n < input->up_count; n++) {
        const struct placement_node *node = &input->up[n];
        size_t length;
        const char *name = node_name(node, &length);
        if (is_ketama(input))
            shmring__points_add_md5_labels(
                points, &next, name, length,
                (uint32_t)ketama_digests(input, node, total_weight), SIZE_MAX,
                node->node_index);
        else
            add_meta_points(points, &next, name, length,
                            (uint64_t)input->params->vnodes * node->weight,
                            node->node_index);
    }
    int err = shmring__points_sort(points, next);
    if (err != 0)
        return err;
    /* The stable sort keeps equal points in the order they were written: the last
     * of each run is the dict's, and owns them all. */
    for (size_t end = next; end > 0;) {
        size_t last = end - 1;
        size_t first = last;
        while (first > 0 && points[first - 1].point == points[last].point) {
            first--;
            points[first].node_index = points[last].node_index;
        }
        end = first;
    }
    return 0;
}

/* KetamaRing takes four points from each digest: its vnodes are ours / 4. */
static int check(const shmring_params_t *params)
{
    if (params->hash == SHMRING_HASH_KETAMA && params->vnodes % KETAMA_REPLICAS != 0)
        return SHMRING_EBADVNODES;
    return 0;
}

const struct placement_algorithm shmring__placement_uhashring = {
    .name = "uhashring",
    .id = SHMRING_ALGORITHM_UHASHRING,
    .peer = true,
    .default_hash = SHMRING_HASH_MD5,
    .hashes =
        PLACEMENT_HASH_BIT(SHMRING_HASH_MD5) | PLACEMENT_HASH_BIT(SHMRING_HASH_KETAMA),
    .parameters = PLACEMENT_PARAM_VNODES,
    .check = check,
    .key_hash = KEY_HASH_UHASHRING,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
