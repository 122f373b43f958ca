/*
 * `groupcache`: the ring of Go's groupcache (github.com/golang/groupcache, Debian's
 * 0.0~git20200121.8c9f03a, consistenthash/consistenthash.go, Map.Add and Map.Get),
 * reproduced bit for bit with its default hash:
 *
 * - consistenthash.New(replicas, nil) hashes with crc32.ChecksumIEEE, the CRC-32
 *   zlib computes; `vnodes` is `replicas` (HTTPPool's is 50), and the nodes have no
 *   weights;
 * - Add(keys...) gives each node, in node-set order, the points
 *   ChecksumIEEE(strconv.Itoa(i) + NODE) for i from 0 to replicas - 1, where NODE is
 *   the node's hash_key when it has one and its address otherwise (a groupcache peer
 *   is a string, for HTTPPool its base URL: "http://10.0.0.1:8080");
 * - equal points are one entry of Map.hashMap, which the last Add wrote: the node
 *   that comes last in node-set order owns an equal point, whichever node's point
 *   sort.Ints put first;
 * - Get() takes the first point >= ChecksumIEEE(key) (sort.Search), wrapping to the
 *   first point.
 *
 * We emit the nodes' points last node first, so that the stable sort puts the owner
 * first among equal points, where a snapshot's lookup stops. A hash function that
 * New() is given instead of nil has no name we could follow, and groupcache has no
 * down peers (Set() replaces the peer list): down nodes are refused
 * (SHMRING_ENODOWN), and so are weights (SHMRING_EUNWEIGHTED).
 *
 * tests/peers/test_groupcache.py checks every rule above against the Go package.
 */
#include <stdio.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"

static int check_nodes(const struct placement_input *input)
{
    for (size_t i = 0; i < input->node_count; i++) {
        if (input->nodes[i].weight != 1)
            return SHMRING_EUNWEIGHTED;
    }
    for (size_t i = 0; i < input->node_count; i++) {
        if (input->nodes[i].state != SHMRING_STATE_UP)
            return SHMRING_ENODOWN;
    }
    return 0;
}

static int size(struct placement_input *input, uint64_t *size)
{
    *size = (uint64_t)input->up_count * input->params->vnodes;
    return 0;
}

static int place(const struct placement_input *input, uint64_t size, void *out)
{
    (void)size;
    struct snapshot_point *points = out;
    size_t next = 0;
    for (size_t n = input->up_count; n-- > 0;) {
        const struct placement_node *node = &input->up[n];
        const char *peer = node->hash_key != NULL ? node->hash_key : node->address;
        size_t peer_length = strlen(peer);
        for (uint32_t i = 0; i < input->params->vnodes; i++) {
            /* CRC-32 of the replica number in decimal, continued over the peer. */
            char replica[11];
            int replica_length = snprintf(replica, sizeof(replica), "%u", (unsigned)i);
            uint32_t crc = shmring__crc32(replica, (size_t)replica_length);
            crc = shmring__crc32_update(crc, peer, peer_length);
            shmring__points_append(points, &next, (uint64_t)crc << 32, node->node_index);
        }
    }
    return shmring__points_sort(points, next);
}

/* groupcache hashes keys and points with CRC-32 (its default); its points follow
 * node order, the last node owning equal ones. */
const struct placement_algorithm shmring__placement_groupcache = {
    .name = "groupcache",
    .id = SHMRING_ALGORITHM_GROUPCACHE,
    .peer = true,
    .default_hash = SHMRING_HASH_CRC32,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32),
    .parameters = PLACEMENT_PARAM_VNODES,
    .check_nodes = check_nodes,
    .key_hash = KEY_HASH_CRC32,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
