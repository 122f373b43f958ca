/*
 * `ketama`: the continuum of libmemcached 1.x with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED
 * (libmemcached/hosts.cc, update_continuum), reproduced bit for bit:
 *
 * - each live server gets floor(pct x 160 / 4 x live_servers + 1e-10) x 4 points,
 *   pct = weight / total weight, all in single-precision float as libmemcached
 *   computes it (this file is built with -ffp-contract=off so that no fused
 *   multiply-add changes a rounding);
 * - the point strings are "host-i" when the port is 11211 and "host:port-i"
 *   otherwise, i counting from 0; each MD5 digest gives four points, its
 *   little-endian 32-bit words;
 * - points are sorted by value, then by server index (continuum_item_cmp), which the
 *   stable sort of points emitted in node-set order reproduces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"

#define KETAMA_POINTS_PER_SERVER 160
#define KETAMA_DEFAULT_PORT 11211

static uint32_t points_for(uint32_t weight, uint64_t total_weight, uint32_t live)
{
    float pct = (float)weight / (float)total_weight;
    float scaled = pct * KETAMA_POINTS_PER_SERVER / 4 * (float)live + 0.0000000001F;
    return (uint32_t)(floorf(scaled) * 4);
}

/*
 * The name in ADDRESS's point strings: libmemcached's hostname, then ":port" unless
 * the port is the default 11211. The address is "[v6]:port", "host:port" (one colon,
 * numeric port) or a bare host, whose port is the default. Writes at most SIZE - 1
 * bytes and a NUL to NAME; returns the length.
 */
static size_t point_name(const char *address, char *name, size_t size)
{
    const char *colon = strrchr(address, ':');
    const char *host_start = address;
    size_t host_length = strlen(address);
    unsigned port = KETAMA_DEFAULT_PORT;

    if (address[0] == '[') {
        const char *close = strchr(address, ']');
        if (close != NULL) {
            host_start = address + 1;
            host_length = (size_t)(close - host_start);
            if (close[1] == ':')
                colon = close + 1;
            else
                colon = NULL;
        }
    } else if (colon != NULL && strchr(address, ':') != colon) {
        colon = NULL; /* A bare IPv6 address has no port. */
    }
    if (colon != NULL && colon[1] != '\0' &&
        strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
        unsigned long value = strtoul(colon + 1, NULL, 10);
        if (value <= 65535) {
            /* libmemcached's memcached_server_add_with_weight() takes port 0 as the
             * default port, so "host:0" names the points of "host:11211". */
            port = value == 0 ? KETAMA_DEFAULT_PORT : (unsigned)value;
            if (address[0] != '[')
                host_length = (size_t)(colon - address);
        }
    }
    int length =
        port == KETAMA_DEFAULT_PORT
            ? snprintf(name, size, "%.*s", (int)host_length, host_start)
            : snprintf(name, size, "%.*s:%u", (int)host_length, host_start, port);
    return (size_t)length < size ? (size_t)length : size - 1;
}

static int size(struct placement_input *input, uint64_t *size)
{
    uint64_t total_weight = shmring__placement_total_weight(input->up, input->up_count);
    *size = 0;
    for (size_t i = 0; i < input->up_count; i++)
        *size += points_for(input->up[i].weight, total_weight, (uint32_t)input->up_count);
    return 0;
}

static int place(const struct placement_input *input, uint64_t size, void *points)
{
    (void)size;
    uint64_t total_weight = shmring__placement_total_weight(input->up, input->up_count);
    size_t next = 0;
    for (size_t n = 0; n < input->up_count; n++) {
        const struct placement_node *server = &input->up[n];
        char name[PLACEMENT_LABEL_NAME_MAX + 1];
        size_t length = point_name(server->address, name, sizeof(name));
        uint32_t count =
            points_for(server->weight, total_weight, (uint32_t)input->up_count);
        shmring__points_add_md5_labels(points, &next, name, length, count / 4, SIZE_MAX,
                                       server->node_index);
    }
    return shmring__points_sort(points, next);
}

/* libmemcached's ketama hashes points and keys with MD5 alone; its points follow
 * the up servers' order (continuum_item_cmp keeps it among equal points). */
const struct placement_algorithm shmring__placement_ketama = {
    .name = "ketama",
    .id = SHMRING_ALGORITHM_KETAMA,
    .peer = false,
    .default_hash = SHMRING_HASH_MD5,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_MD5),
    .parameters = 0,
    .key_hash = KEY_HASH_KETAMA,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
