/*
 * `spymemcached`: the continuum of Java spymemcached 2.12.3's KetamaNodeLocator
 * (net/spy/memcached/KetamaNodeLocator.java, setKetamaNodes) with
 * DefaultKetamaNodeLocatorConfiguration and the SPYMEMCACHED node key format,
 * reproduced bit for bit:
 *
 * - a node's key is String.valueOf(its InetSocketAddress) without the leading '/':
 *   "10.0.0.1:11211", "[2001:db8:0:0:0:0:0:1]:11211" (JDK 14 and later bracket an
 *   IPv6 address; every group in hex, none left out), "name/10.0.0.1:11211" for a
 *   host name, which the JDK resolves. The node's hash_key, when it has one, is that
 *   key as it is; otherwise it is derived from the address, as AddrUtil parses it
 *   ("host:port", split at the last colon; an IPv4 address, or an IPv6 one bare or
 *   in brackets, an IPv4-mapped one read as IPv4 as Java does). A host name needs the
 *   hash_key, since the address it resolves to is not ours to know;
 * - its point strings are "KEY-i", i counting from 0;
 * - without weights (every node's weight 1) and with md5 (KETAMA_HASH) a node gets
 *   numReps / 4 digests (vnodes, 160 by default, in integer division), each giving
 *   four points, the little-endian 32-bit words of the MD5 of "KEY-i"; with another
 *   hash, numReps points, that hash of "KEY-i";
 * - with weights (any node's weight other than 1: spymemcached's weights map, which
 *   gives a node weight w) every hash places points as md5 does, and a node gets
 *   floor((float)(pct x numReps / 4 x nodes + 1e-10)) digests, pct = (float)w /
 *   (float)total, in single precision up to the double 1e-10, the total an int;
 * - points go into a TreeMap node by node, so of equal points the last node's
 *   stays; a key's hash takes the first point at or after it, else the first.
 *
 * Our down nodes are left out, as if the client were built without them;
 * spymemcached itself keeps a dead node on its continuum and lets its FailureMode
 * route around it.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"

#define SPYMEMCACHED_PORT_MAX 65535u
/* A node key and "-i" with i < 65535. */
#define POINT_STRING_MAX (PLACEMENT_LABEL_NAME_MAX + 7)

/* An IPv4 address as Java prints it, and as we accept it: four decimal numbers up to
 * 255 without leading zeros. Java reads other forms ("10.1", "010.0.0.1") too, but
 * not in one way across JDK releases. Fills BYTES; returns whether HOST is one. */
static bool parse_ipv4(const char *host, size_t length, uint8_t bytes[4])
{
    size_t at = 0;
    for (int part = 0; part < 4; part++) {
        size_t digits = 0;
        unsigned value = 0;
        while (at + digits < length && host[at + digits] >= '0' &&
               host[at + digits] <= '9' && digits < 4) {
            value = value * 10 + (unsigned)(host[at + digits] - '0');
            digits++;
        }
        if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && host[at] == '0'))
            return false;
        bytes[part] = (uint8_t)value;
        at += digits;
        if (part < 3) {
            if (at >= length || host[at] != '.')
                return false;
            at++;
        }
    }
    return at == length;
}

/* An IPv6 address, without a zone (Java would look its interface up on this host).
 * Fills BYTES; returns whether HOST is one. */
static bool parse_ipv6(const char *host, size_t length, uint8_t bytes[16])
{
    char text[64];
    if (length == 0 || length >= sizeof(text) || memchr(host, '%', length) != NULL)
        return false;
    memcpy(text, host, length);
    text[length] = '\0';
    return inet_pton(AF_INET6, text, bytes) == 1;
}

/*
 * The key spymemcached gives the node at ADDRESS: into KEY (SIZE bytes) and its
 * length into *LENGTH. Returns 0, SHMRING_EBADADDRESS (AddrUtil or
 * InetSocketAddress would refuse it, or Java would not read it as an address) or
 * SHMRING_EUNRESOLVED (a host name).
 */
static int derived_key(const char *address, char *key, size_t size, size_t *length)
{
    const char *colon = strrchr(address, ':');
    /* AddrUtil.getAddresses(): the port follows the last colon, which must not be
     * the first character; Integer.parseInt() and InetSocketAddress take it. */
    if (colon == NULL || colon == address || colon[1] == '\0')
        return SHMRING_EBADADDRESS;
    unsigned long port = 0;
    for (const char *p = colon + 1; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return SHMRING_EBADADDRESS;
        port = port * 10 + (unsigned long)(*p - '0');
        if (port > SPYMEMCACHED_PORT_MAX)
            return SHMRING_EBADADDRESS;
    }
    const char *host = address;
    size_t host_length = (size_t)(colon - address);
    bool bracketed = host[0] == '[';
    if (bracketed) {
        /* InetAddress.getByName() takes "[v6]" as an IPv6 address and nothing else. */
        if (host_length < 3 || host[host_length - 1] != ']')
            return SHMRING_EBADADDRESS;
        host++;
        host_length -= 2;
    }
    uint8_t v4[4], v6[16];
    int written;
    if (!bracketed && parse_ipv4(host, host_length, v4)) {
        written =
            snprintf(key, size, "%u.%u.%u.%u:%lu", v4[0], v4[1], v4[2], v4[3], port);
    } else if (bracketed || memchr(host, ':', host_length) != NULL) {
        if (!parse_ipv6(host, host_length, v6))
            return SHMRING_EBADADDRESS;
        static const uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0,    0,
                                                  0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(v6, mapped_prefix, sizeof(mapped_prefix)) == 0) {
            /* InetAddress turns an IPv4-mapped address into an Inet4Address. */
            written = snprintf(key, size, "%u.%u.%u.%u:%lu", v6[12], v6[13], v6[14],
                               v6[15], port);
        } else {
            unsigned groups[8];
            for (int i = 0; i < 8; i++)
                groups[i] = (unsigned)v6[2 * i] << 8 | v6[2 * i + 1];
            written = snprintf(key, size, "[%x:%x:%x:%x:%x:%x:%x:%x]:%lu", groups[0],
                               groups[1], groups[2], groups[3], groups[4], groups[5],
                               groups[6], groups[7], port);
        }
    } else {
        return SHMRING_EUNRESOLVED;
    }
    *length = (size_t)written;
    return 0;
}

/* NODE's key (its hash_key, or what derived_key() makes of its address) into KEY,
 * which has room for PLACEMENT_LABEL_NAME_MAX + 1 bytes. */
static int node_key(const struct placement_node *node, char *key, size_t *length)
{
    if (node->hash_key == NULL)
        return derived_key(node->address, key, PLACEMENT_LABEL_NAME_MAX + 1, length);
    *length = strlen(node->hash_key);
    memcpy(key, node->hash_key, *length + 1);
    return 0;
}

/* Every node, down ones too, has a key: a down node is refused now rather than when
 * it comes up. */
static int check_nodes(const struct placement_input *input)
{
    for (size_t i = 0; i < input->node_count; i++) {
        char key[PLACEMENT_LABEL_NAME_MAX + 1];
        size_t length;
        int err = node_key(&input->nodes[i], key, &length);
        if (err != 0)
            return err;
    }
    return 0;
}

/* Whether the ring stands for a client given a weights map: some node, down or up,
 * has a weight other than 1. (A map of equal weights is every weight 2.) */
static bool weighted(const struct placement_input *input)
{
    for (size_t i = 0; i < input->node_count; i++) {
        if (input->nodes[i].weight != 1)
            return true;
    }
    return false;
}

/* Java's (int) of a double: NaN gives 0, and values past int's range its ends. */
static int32_t java_int(double value)
{
    if (isnan(value))
        return 0;
    if (value >= 2147483647.0)
        return INT32_MAX;
    if (value <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)value;
}

/* The digests of a node of WEIGHT in weighted mode (setKetamaNodes()'s
 * pointerPerServer / 4), with TOTAL the int sum of the weights. */
static uint32_t weighted_digests(uint32_t weight, int32_t total, uint32_t repetitions,
                                 uint32_t nodes)
{
    float percent = (float)weight / (float)total;
    float scaled = percent * (float)repetitions / 4 * (float)nodes;
    int32_t pointers =
        java_int(floor((double)(float)((double)scaled + 0.0000000001)) * 4);
    return pointers > 0 ? (uint32_t)(pointers / 4) : 0;
}

/* Java's int sum of the up nodes' weights, which wraps. */
static int32_t total_weight(const struct placement_input *input)
{
    uint32_t total = 0;
    for (size_t i = 0; i < input->up_count; i++)
        total += input->up[i].weight;
    return (int32_t)total;
}

/* Appends the points of one node, whose key is KEY (LENGTH bytes). */
static void add_node_points(struct snapshot_point *points, size_t *next,
                            const shmring_params_t *params, bool md5_points,
                            uint32_t digests, const char *key, size_t length,
                            uint32_t node_index)
{
    if (md5_points) {
        shmring__points_add_md5_labels(points, next, key, length, digests, SIZE_MAX,
                                       node_index);
        return;
    }
    char text[POINT_STRING_MAX + 1];
    memcpy(text, key, length);
    for (uint32_t i = 0; i < params->vnodes; i++) {
        int suffix = snprintf(text + length, sizeof(text) - length, "-%u", i);
        uint32_t point =
            shmring__spymemcached_hash(params->hash, text, length + (size_t)suffix);
        shmring__points_append(points, next, (uint64_t)point << 32, node_index);
    }
}

/*
 * The continuum: the up nodes' points as the TreeMap holds them, sorted, one per
 * value. Points are emitted from the last node back to the first and sorted stably,
 * so that of equal points the last node's comes first, and is the one kept.
 */
static int continuum(const struct placement_input *input, struct snapshot_point **out,
                     size_t *count)
{
    const shmring_params_t *params = input->params;
    bool by_weight = weighted(input);
    bool md5_points = by_weight || params->hash == SHMRING_HASH_MD5;
    int32_t total = total_weight(input);
    uint32_t nodes = (uint32_t)input->up_count;
    uint64_t wanted = 0;
    for (size_t n = 0; n < input->up_count; n++) {
        if (by_weight)
            wanted += 4 * (uint64_t)weighted_digests(input->up[n].weight, total,
                                                     params->vnodes, nodes);
        else
            wanted += md5_points ? 4 * (uint64_t)(params->vnodes / 4) : params->vnodes;
    }
    if (wanted > SHMRING_POINTS_MAX)
        return SHMRING_ELIMIT;
    /* A continuum without points throws on every key in spymemcached. */
    if (wanted == 0)
        return SHMRING_EINVAL;
    struct snapshot_point *points = malloc(wanted * sizeof(*points));
    if (points == NULL)
        return SHMRING_ENOMEM;
    size_t next = 0;
    for (size_t n = input->up_count; n-- > 0;) {
        const struct placement_node *node = &input->up[n];
        char key[PLACEMENT_LABEL_NAME_MAX + 1];
        size_t length;
        int err = node_key(node, key, &length);
        if (err != 0) {
            free(points);
            return err;
        }
        uint32_t digests =
            by_weight ? weighted_digests(node->weight, total, params->vnodes, nodes)
                      : params->vnodes / 4;
        add_node_points(points, &next, params, md5_points, digests, key, length,
                        node->node_index);
    }
    int err = shmring__points_sort(points, next);
    if (err != 0) {
        free(points);
        return err;
    }
    size_t kept = 0;
    for (size_t j = 0; j < next; j++) {
        if (j == 0 || points[j].point != points[j - 1].point)
            points[kept++] = points[j];
    }
    *out = points;
    *count = kept;
    return 0;
}

/* The number of points costs a whole placement (equal points merge), which is kept
 * for place(). */
static int size(struct placement_input *input, uint64_t *size)
{
    struct snapshot_point *points;
    size_t count;
    int err = continuum(input, &points, &count);
    if (err != 0)
        return err;
    input->prepared = points;
    *size = count;
    return 0;
}

/* DefaultHashAlgorithm's seven, KETAMA_HASH (md5) the default, as
 * KetamaConnectionFactory's; node order decides equal points. */
const struct placement_algorithm shmring__placement_spymemcached = {
    .name = "spymemcached",
    .id = SHMRING_ALGORITHM_SPYMEMCACHED,
    .peer = true,
    .default_hash = SHMRING_HASH_MD5,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_MD5) |
              PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32) |
              PLACEMENT_HASH_BIT(SHMRING_HASH_NATIVE) |
              PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1_64) |
              PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1A_64) |
              PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1_32) |
              PLACEMENT_HASH_BIT(SHMRING_HASH_FNV1A_32),
    .parameters = PLACEMENT_PARAM_VNODES,
    .check_nodes = check_nodes,
    .key_hash = KEY_HASH_SPYMEMCACHED,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = shmring__place_prepared_points,
};
