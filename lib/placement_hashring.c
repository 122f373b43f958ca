/*
 * `hashring`: the ring of npm's hashring 3.2.0 (index.js, HashRing) as the npm
 * `memcached` client 2.2.2 builds it with its default compatibility 'ketama' (4
 * replicas, default port 11211), bit for bit:
 *
 * - a server of weight w gets floor(w / W x v x N) digests, v hashring's 'vnode
 *   count' (our vnodes divided by 4: 40 by default), N the number of servers, W the
 *   sum of their weights, in JavaScript's double arithmetic, left to right
 *   (HashRing.prototype.continuum; this file is built with -ffp-contract=off);
 * - digest i is DIGEST("S-i"), DIGEST the parameters' hash (Node's
 *   crypto.createHash(): md5 by default, sha1, sha256, sha512), and gives four
 *   points, its first four little-endian 32-bit words;
 * - S is the server string, or its host when its port is the default port: our
 *   hash_key verbatim when the node has one, else server_string() below;
 * - points are sorted with Array.prototype.sort, stable in V8, so equal points keep
 *   server order; find()'s bisection returns the first point at or above the key's
 *   hash and the first point past the last (it reads the point before the first as
 *   0, which gives a hash of 0 the first point too): our lookup;
 * - a key's hash is the first little-endian word of DIGEST(key's UTF-8).
 *
 * The client lists no down servers (it removes a dead one and rebuilds the ring):
 * our down nodes are left out. What a node set cannot express is refused: a port
 * field that JavaScript reads as a number within 1e-6 of 11211 without being
 * written in digits ("+11211", "11211.0"), whose exact reading we do not follow.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"

#define HASHRING_REPLICAS 4u
/* The memcached client's 'default port' under compatibility 'ketama'. */
#define HASHRING_DEFAULT_PORT 11211.0

/* Digests of a server of WEIGHT: Math.floor(weight / total * vnodes * servers). */
static uint32_t digests_for(uint32_t weight, uint64_t total_weight, uint32_t vnodes,
                            size_t servers)
{
    double percentage = (double)weight / (double)total_weight;
    return (uint32_t)floor(percentage * (double)vnodes * (double)servers);
}

/* The length of the whitespace (JavaScript's WhiteSpace and LineTerminator, which
 * Number() trims) that starts at P, 0 if none. */
static size_t js_space_at(const unsigned char *p, const unsigned char *end)
{
    static const char *const spaces[] = {" ",
                                         "\t",
                                         "\n",
                                         "\v",
                                         "\f",
                                         "\r",
                                         "\xc2\xa0",
                                         "\xe1\x9a\x80",
                                         "\xe2\x80\xa8",
                                         "\xe2\x80\xa9",
                                         "\xe2\x80\xaf",
                                         "\xe2\x81\x9f",
                                         "\xe3\x80\x80",
                                         "\xef\xbb\xbf"};
    for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
        size_t n = strlen(spaces[i]);
        if ((size_t)(end - p) >= n && memcmp(p, spaces[i], n) == 0)
            return n;
    }
    /* U+2000 to U+200A. */
    if (end - p >= 3 && p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0x80 && p[2] <= 0x8a)
        return 3;
    return 0;
}

static bool all_in(const char *p, size_t n, const char *set)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\0' || strchr(set, p[i]) == NULL)
            return false;
    }
    return true;
}

/*
 * What JavaScript's Number() makes of the N bytes at TEXT, as far as the default
 * port needs: 1 when it is 11211, 0 when it is anything else (NaN included), -1
 * when it is a number near 11211 written otherwise than in digits, which we refuse
 * rather than round as V8 does.
 */
static int js_number_is_default_port(const char *text, size_t n)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + n;
    for (size_t s; p < end && (s = js_space_at(p, end)) != 0;)
        p += s;
    while (end > p) {
        size_t s = 0;
        /* Whitespace is at most three bytes: find one that ends at END. */
        for (size_t back = 1; back <= 3 && back <= (size_t)(end - p) && s == 0; back++)
            s = js_space_at(end - back, end) == back ? back : 0;
        if (s == 0)
            break;
        end -= s;
    }
    const char *t = (const char *)p;
    size_t length = (size_t)(end - p);
    if (all_in(t, length, "0123456789")) {
        while (length > 1 && t[0] == '0')
            t++, length--;
        return length == 5 && memcmp(t, "11211", 5) == 0;
    }
    /* 0x, 0o and 0b literals: exact integers. */
    if (length > 2 && t[0] == '0' && strchr("xXoObB", t[1]) != NULL) {
        unsigned base = (t[1] | 0x20) == 'x' ? 16 : (t[1] | 0x20) == 'o' ? 8 : 2;
        const char *digits = base == 16  ? "0123456789abcdefABCDEF"
                             : base == 8 ? "01234567"
                                         : "01";
        if (!all_in(t + 2, length - 2, digits))
            return 0;
        uint64_t value = 0;
        for (size_t i = 2; i < length && value <= 11211; i++) {
            unsigned c = (unsigned char)t[i] | 0x20;
            value = value * base + (c >= 'a' ? c - 'a' + 10 : c - '0');
        }
        return value == 11211;
    }
    /* A decimal literal: sign, digits, a point, digits, an exponent. */
    size_t i = 0;
    if (i < length && (t[i] == '+' || t[i] == '-'))
        i++;
    double value = 0;
    int mantissa_digits = 0, scale = 0;
    for (; i < length && t[i] >= '0' && t[i] <= '9'; i++, mantissa_digits++)
        value = value * 10 + (t[i] - '0');
    if (i < length && t[i] == '.') {
        for (i++; i < length && t[i] >= '0' && t[i] <= '9'; i++, mantissa_digits++)
            value = value * 10 + (t[i] - '0'), scale--;
    }
    if (mantissa_digits == 0)
        return 0; /* NaN, or Infinity: not 11211 */
    if (mantissa_digits > 17)
        return -1; /* more digits than a double holds: refused, not rounded */
    if (i < length && (t[i] == 'e' || t[i] == 'E')) {
        int sign = 1, exponent = 0, exponent_digits = 0;
        i++;
        if (i < length && (t[i] == '+' || t[i] == '-'))
            sign = t[i++] == '-' ? -1 : 1;
        for (; i < length && t[i] >= '0' && t[i] <= '9'; i++, exponent_digits++)
            exponent = exponent < 10000 ? exponent * 10 + (t[i] - '0') : exponent;
        if (exponent_digits == 0)
            return 0;
        scale += sign * exponent;
    }
    if (i != length)
        return 0;
    value = t[0] == '-' ? -value : value;
    value *= pow(10.0, scale);
    return fabs(value - HASHRING_DEFAULT_PORT) < 1e-6 ? -1 : 0;
}

/*
 * The string S of a node without a hash_key, from its ADDRESS as connection-parse
 * 0.0.7 splits a server: host = the text before the first ':', port = Number() of
 * the text between the first and the second; S is the host when the port is 11211,
 * else the whole address. Returns S's length (S starts at ADDRESS), or -1 when the
 * port is one we refuse (js_number_is_default_port()).
 */
static long server_string(const char *address)
{
    size_t length = strlen(address);
    const char *colon = strchr(address, ':');
    if (colon == NULL)
        return (long)length;
    const char *port = colon + 1;
    const char *port_end = strchr(port, ':');
    size_t port_length = port_end != NULL ? (size_t)(port_end - port) : strlen(port);
    int is_default = js_number_is_default_port(port, port_length);
    if (is_default < 0)
        return -1;
    return is_default ? (long)(colon - address) : (long)length;
}

static const char *node_string(const struct placement_node *node, size_t *length)
{
    if (node->hash_key != NULL) {
        *length = strlen(node->hash_key);
        return node->hash_key;
    }
    *length = (size_t)server_string(node->address);
    return node->address;
}

static int size(struct placement_input *input, uint64_t *size)
{
    uint64_t total_weight = shmring__placement_total_weight(input->up, input->up_count);
    uint32_t vnodes = input->params->vnodes / HASHRING_REPLICAS;
    *size = 0;
    for (size_t i = 0; i < input->up_count; i++) {
        if (input->up[i].hash_key == NULL && server_string(input->up[i].address) < 0)
            return SHMRING_EBADADDRESS;
        *size +=
            HASHRING_REPLICAS * (uint64_t)digests_for(input->up[i].weight, total_weight,
                                                      vnodes, input->up_count);
    }
    return 0;
}

/* The first HASHRING_REPLICAS little-endian words of DIGEST("S-i"), i from 0. */
static void add_points(struct snapshot_point *points, size_t *next, shmring_hash_t hash,
                       const char *string, size_t length, uint32_t digests,
                       uint32_t node_index)
{
    char label[SHMRING_ADDRESS_MAX + 16];
    memcpy(label, string, length);
    for (uint32_t i = 0; i < digests; i++) {
        int suffix = snprintf(label + length, sizeof(label) - length, "-%u", i);
        uint8_t digest[SHMRING_DIGEST_MAX];
        shmring__digest(hash, label, length + (size_t)suffix, digest);
        for (unsigned j = 0; j < HASHRING_REPLICAS; j++)
            shmring__points_append(points, next,
                                   (uint64_t)shmring__load_le32(digest + 4 * j) << 32,
                                   node_index);
    }
}

static int place(const struct placement_input *input, uint64_t size, void *points)
{
    (void)size;
    uint64_t total_weight = shmring__placement_total_weight(input->up, input->up_count);
    uint32_t vnodes = input->params->vnodes / HASHRING_REPLICAS;
    size_t next = 0;
    for (size_t n = 0; n < input->up_count; n++) {
        const struct placement_node *server = &input->up[n];
        size_t length;
        const char *string = node_string(server, &length);
        add_points(points, &next, input->params->hash, string, length,
                   digests_for(server->weight, total_weight, vnodes, input->up_count),
                   server->node_index);
    }
    return shmring__points_sort(points, next);
}

/* Four points from each digest: hashring's 'vnode count' is our vnodes / 4. */
static int check(const shmring_params_t *params)
{
    return params->vnodes % HASHRING_REPLICAS != 0 ? SHMRING_EBADVNODES : 0;
}

const struct placement_algorithm shmring__placement_hashring = {
    .name = "hashring",
    .id = SHMRING_ALGORITHM_HASHRING,
    .peer = true,
    .default_hash = SHMRING_HASH_MD5,
    .hashes =
        PLACEMENT_HASH_BIT(SHMRING_HASH_MD5) | PLACEMENT_HASH_BIT(SHMRING_HASH_SHA1) |
        PLACEMENT_HASH_BIT(SHMRING_HASH_SHA256) | PLACEMENT_HASH_BIT(SHMRING_HASH_SHA512),
    .parameters = PLACEMENT_PARAM_VNODES,
    .check = check,
    .key_hash = KEY_HASH_HASHRING,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
