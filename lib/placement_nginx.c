/*
 * `nginx`: the continuum of nginx's `hash KEY consistent`
 * (src/http/modules/ngx_http_upstream_hash_module.c, ngx_http_upstream_init_chash and
 * ngx_http_upstream_get_chash_peer, nginx 1.22), reproduced bit for bit:
 *
 * - every server of the upstream, down ones included, in configuration order, gets
 *   weight x 160 points;
 * - the point string is the server's address as written in the `server` directive
 *   (our node address, or its hash_key): "unix:PATH" hashes PATH; otherwise digits
 *   after the last colon are the port and what precedes it the host, and an address
 *   without such a port is all host. Point j is CRC-32 of HOST, a NUL byte, PORT and
 *   point j - 1 as four little-endian bytes (0 for the first point);
 * - points are sorted with qsort() (glibc's merge sort: equal points keep server
 *   order), and of equal points only the first is kept;
 * - a key goes to the first point >= CRC-32 of the key, wrapping to the first, and
 *   from there to the first point whose server is up. Skipping a down server's
 *   points at lookup time is the same as dropping them from the sorted continuum,
 *   which is what we do, after merging equal points as nginx does (a down server's
 *   point can hide an up server's equal one).
 *
 * What nginx does not decide by the continuum, we cannot follow: after 20 points of
 * down (or failed) servers in a row, and for an empty key, nginx falls back to
 * round robin.
 *
 * tests/peers/test_nginx.py checks every rule above against a running nginx.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"

#define NGINX_POINTS_PER_WEIGHT 160

/* Emits the weight x 160 points of NODE at POINTS. */
static size_t place_node(const struct placement_node *node, struct snapshot_point *points)
{
    const char *server = node->hash_key != NULL ? node->hash_key : node->address;
    size_t length = strlen(server);
    const char *host = server, *port = "";
    size_t host_length = length, port_length = 0;

    if (length >= 5 && strncasecmp(server, "unix:", 5) == 0) {
        host = server + 5;
        host_length = length - 5;
    } else {
        for (size_t j = 0; j < length; j++) {
            char c = server[length - j - 1];
            if (c == ':') {
                host_length = length - j - 1;
                port = server + length - j;
                port_length = j;
                break;
            }
            if (c < '0' || c > '9')
                break;
        }
    }

    /* nginx keeps the CRC register open across ngx_crc32_update() calls and
     * finishes it once; continuing a finished CRC-32 gives the same values. */
    uint32_t base = shmring__crc32_update(0, host, host_length);
    base = shmring__crc32_update(base, "", 1);
    base = shmring__crc32_update(base, port, port_length);

    uint32_t previous = 0;
    size_t count = (size_t)node->weight * NGINX_POINTS_PER_WEIGHT, next = 0;
    while (next < count) {
        uint8_t bytes[4] = {(uint8_t)previous, (uint8_t)(previous >> 8),
                            (uint8_t)(previous >> 16), (uint8_t)(previous >> 24)};
        uint32_t hash = shmring__crc32_update(base, bytes, sizeof(bytes));
        shmring__points_append(points, &next, (uint64_t)hash << 32, node->node_index);
        previous = hash;
    }
    return count;
}

/*
 * Places all NODE_COUNT NODES (node_index = position), down ones included, into a new
 * sorted array that the caller frees, *COUNT points after merging and skipping.
 * Returns 0, SHMRING_ENOMEM, SHMRING_EBADADDRESS, or SHMRING_ELIMIT when all nodes'
 * points would pass SHMRING_POINTS_MAX.
 */
static int continuum(const struct placement_node *nodes, size_t node_count,
                     struct snapshot_point **out, size_t *count)
{
    uint64_t all = 0;
    for (size_t i = 0; i < node_count; i++)
        all += (uint64_t)nodes[i].weight * NGINX_POINTS_PER_WEIGHT;
    /* The continuum holds at most the points of all nodes: refuse more before
     * placing them. */
    if (all > SHMRING_POINTS_MAX)
        return SHMRING_ELIMIT;
    struct snapshot_point *points = malloc((all ? all : 1) * sizeof(*points));
    if (points == NULL)
        return SHMRING_ENOMEM;
    size_t next = 0;
    for (size_t i = 0; i < node_count; i++)
        next += place_node(&nodes[i], points + next);
    int err = shmring__points_sort(points, next);
    if (err != 0) {
        free(points);
        return err;
    }
    /* Points carry node indexes, and node N of this array is node index N. */
    size_t kept = 0;
    for (size_t j = 0; j < next; j++) {
        uint64_t point = points[j].point;
        bool first_of_equals = j == 0 || point != points[j - 1].point;
        if (first_of_equals && nodes[points[j].node_index].state == SHMRING_STATE_UP)
            points[kept++] = points[j];
    }
    /* Up servers whose every point a down server listed before them holds (the same
     * address, in practice) take no key on nginx's continuum: nginx then picks one by
     * round robin, which no snapshot can reproduce. Refused, rather than a snapshot
     * with up nodes and no points, which the validator would refuse. */
    if (kept == 0) {
        for (size_t i = 0; i < node_count; i++) {
            if (nodes[i].state == SHMRING_STATE_UP) {
                free(points);
                return SHMRING_EBADADDRESS;
            }
        }
    }
    *out = points;
    *count = kept;
    return 0;
}

/* The number of points costs a whole placement: nginx merges equal points, down
 * servers' too, before it skips the down servers. The continuum is kept for
 * place(). */
static int size(struct placement_input *input, uint64_t *size)
{
    struct snapshot_point *points;
    size_t kept;
    int err = continuum(input->nodes, input->node_count, &points, &kept);
    if (err != 0)
        return err;
    input->prepared = points;
    *size = kept;
    return 0;
}

/* nginx hashes points and keys with CRC-32 alone. Every server, down ones included,
 * is placed in configuration order, and of equal points the first is kept. */
const struct placement_algorithm shmring__placement_nginx = {
    .name = "nginx",
    .id = SHMRING_ALGORITHM_NGINX,
    .peer = true,
    .default_hash = SHMRING_HASH_CRC32,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32),
    .parameters = 0,
    .key_hash = KEY_HASH_CRC32,
    .order = PLACEMENT_ORDER_ALL,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = shmring__place_prepared_points,
};
