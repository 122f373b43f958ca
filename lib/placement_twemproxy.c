/*
 * `twemproxy`: nutcracker's `distribution: ketama` continuum (twemproxy 0.5.0,
 * src/hashkit/nc_ketama.c, ketama_update), reproduced bit for bit:
 *
 * - a live server of weight w gets floor((float)(pct x 160 / 4 x live + 1e-10)) x 4
 *   points, pct = (float)w / (float)total live weight: the product in single
 *   precision, the 1e-10 added in double (a double literal), the sum rounded back
 *   to float before floorf() (this file is built with -ffp-contract=off so that no
 *   fused multiply-add changes a rounding);
 * - the point strings are "NAME-i", i counting from 0, where NAME is the server's
 *   name when the configuration gives one (our hash_key) and otherwise what
 *   nutcracker derives from "host:port": the host alone when the port is 11211,
 *   "host:port" as written otherwise; each MD5 digest gives four points, its
 *   little-endian 32-bit words; strings past 272 bytes are cut there, as
 *   nutcracker cuts them;
 * - servers are in nutcracker's order, which is not the configuration's: checking
 *   for duplicate names (conf_validate_server) sorts them by name, shorter names
 *   first, then bytewise (string_compare); points are then sorted by value with
 *   qsort(), which glibc does by merge sort, so equal points keep that server
 *   order. Emitting points server by server in that order and sorting them stably
 *   does the same, and the lookup (first point >= the key's hash, wrapping to the
 *   first) is nutcracker's ketama_dispatch().
 *
 * Down nodes are nutcracker's ejected servers (auto_eject_hosts): neither their
 * points nor their weight count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"
#include "text_internal.h"

#define TWEMPROXY_POINTS_PER_SERVER 160
#define TWEMPROXY_DEFAULT_PORT 11211
/* nutcracker's KETAMA_MAX_HOSTLEN: a point string is cut to one byte less. */
#define TWEMPROXY_POINT_STRING_MAX 272

static uint32_t points_for(uint32_t weight, uint32_t total_weight, uint32_t live)
{
    float pct = (float)weight / (float)total_weight;
    float scaled = pct * TWEMPROXY_POINTS_PER_SERVER / 4 * (float)live;
    return (uint32_t)(floorf((float)((double)scaled + 0.0000000001)) * 4);
}

/* nutcracker keeps the total weight in 32 bits: the sum wraps as its does. */
static uint32_t total_weight_of(const struct placement_node *up, size_t up_count)
{
    return (uint32_t)shmring__placement_total_weight(up, up_count);
}

static int size(struct placement_input *input, uint64_t *size)
{
    uint32_t total_weight = total_weight_of(input->up, input->up_count);
    *size = 0;
    for (size_t i = 0; i < input->up_count; i++)
        *size += points_for(input->up[i].weight, total_weight, (uint32_t)input->up_count);
    return 0;
}

/*
 * The name nutcracker gives an unnamed server "host:port" (conf_add_server): it
 * splits at the last colon, and leaves the port out when it reads as 11211. A Unix
 * socket path has no port, and nutcracker's name for it keeps the colon that
 * followed it. Writes at most SIZE - 1 bytes to NAME; returns the length.
 */
static size_t derived_name(const char *address, char *name, size_t size)
{
    size_t length = strlen(address);
    const char *colon = strrchr(address, ':');
    if (address[0] == '/') {
        length = (size_t)snprintf(name, size, "%s:", address);
        return length < size ? length : size - 1;
    }
    if (colon != NULL && colon[1] != '\0' &&
        strspn(colon + 1, "0123456789") == strlen(colon + 1) && strlen(colon + 1) <= 9 &&
        atoi(colon + 1) == TWEMPROXY_DEFAULT_PORT)
        length = (size_t)(colon - address);
    if (length >= size)
        length = size - 1;
    memcpy(name, address, length);
    name[length] = '\0';
    return length;
}

/* A server as nutcracker orders them: by its name. */
struct named_server {
    char name[SHMRING_ADDRESS_MAX + 2];
    size_t name_length;
    const struct placement_node *node;
};

/* string_compare(): shorter first, then bytewise. nutcracker refuses two servers of
 * one name, so the tie-break between nodes that share one (the same address or
 * hash_key) is ours: their node names, unique, so that node-set order never decides
 * which of them an equal point goes to. */
static int compare_servers(const void *a, const void *b)
{
    const struct named_server *x = a, *y = b;
    if (x->name_length != y->name_length)
        return x->name_length < y->name_length ? -1 : 1;
    int c = memcmp(x->name, y->name, x->name_length);
    if (c != 0)
        return c;
    return shmring__text_compare(x->node->name, x->node->name_length, y->node->name,
                                 y->node->name_length);
}

static int place(const struct placement_input *input, uint64_t size, void *points)
{
    (void)size;
    const struct placement_node *up = input->up;
    size_t up_count = input->up_count;
    struct named_server *servers = malloc((up_count ? up_count : 1) * sizeof(*servers));
    if (servers == NULL)
        return SHMRING_ENOMEM;
    for (size_t n = 0; n < up_count; n++) {
        struct named_server *server = &servers[n];
        server->node = &up[n];
        if (up[n].hash_key != NULL)
            server->name_length = (size_t)snprintf(server->name, sizeof(server->name),
                                                   "%s", up[n].hash_key);
        else
            server->name_length =
                derived_name(up[n].address, server->name, sizeof(server->name));
    }
    qsort(servers, up_count, sizeof(*servers), compare_servers);

    uint32_t total_weight = total_weight_of(up, up_count);
    size_t next = 0;
    for (size_t n = 0; n < up_count; n++) {
        const struct placement_node *node = servers[n].node;
        uint32_t count = points_for(node->weight, total_weight, (uint32_t)up_count);
        shmring__points_add_md5_labels(points, &next, servers[n].name,
                                       servers[n].name_length, count / 4,
                                       TWEMPROXY_POINT_STRING_MAX, node->node_index);
    }
    free(servers);
    return shmring__points_sort(points, next);
}

/* nutcracker's `hash:` names (nc_conf.c; CONF_DEFAULT_HASH is fnv1a_64): md5 and
 * crc32 in twemproxy's meaning, and its ten own. Servers are sorted by name, so
 * node-set order never reaches an answer. */
const struct placement_algorithm shmring__placement_twemproxy = {
    .name = "twemproxy",
    .id = SHMRING_ALGORITHM_TWEMPROXY,
    .peer = true,
    .default_hash = SHMRING_HASH_FNV1A_64,
    .hashes =
        PLACEMENT_HASH_BIT(SHMRING_HASH_MD5) | PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1A_64) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_CRC16) | PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32A) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1_32) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1_64) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1A_32) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_HSIEH) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_JENKINS) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_MURMUR) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_ONE_AT_A_TIME),
    .parameters = 0,
    .key_hash = KEY_HASH_TWEMPROXY,
    .order = PLACEMENT_ORDER_NONE,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
