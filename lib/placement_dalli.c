/*
 * `dalli`: the continuum of Ruby's Dalli client (Dalli 3.0.6, lib/dalli/ring.rb
 * build_continuum and server_for_hash_key, lib/dalli/protocol/server_config_parser.rb
 * and Dalli::Protocol::Binary#name), reproduced bit for bit:
 *
 * - of N servers with total weight T, a server of weight W gets
 *   floor(N x 160 x W / Float(T)) points: the product is an exact Ruby Integer and the
 *   quotient a double, as here (both operands stay below 2^53);
 * - point i of a server is the first four bytes, big-endian, of the SHA-1 of
 *   "NAME:i" (Integer("0x" + hexdigest[0..7])), i counting from 0, with NAME the
 *   server's name: "HOST:PORT" for a TCP server and the path for a UNIX socket;
 * - the points are sorted with sort_by, which in Ruby 3.1 is glibc's qsort_r(), a
 *   merge sort: equal points keep server order;
 * - a key goes to the last point <= its CRC-32 (Zlib.crc32), found by bsearch_index,
 *   and to the last point when every point is above it. Of equal points that is the
 *   last server's.
 *
 * The NAME comes from the node's hash_key when it has one (taken as the name itself),
 * otherwise from its address read as Dalli reads a server string (see server_name()).
 *
 * A snapshot answers with the first point at or after a key's hash, so each point p
 * is stored as the value just below the next distinct point value (wrapping), which
 * the same keys reach: the keys from p up to that value. Equal points are emitted in
 * reverse server order so that the stable sort puts the last server's first.
 *
 * What Dalli does not decide by the continuum, we cannot follow: a key whose server
 * is dead is hashed again as "0KEY", "1KEY", ... (its failover), so down nodes are
 * refused (SHMRING_ENODOWN); and the client hands the ring the key after its
 * KeyManager (namespace prefix, keys over 250 bytes cut and digested), which is the
 * key to look up.
 *
 * tests/peers/test_dalli.py checks every rule above against Debian's ruby-dalli.
 */
#include <nettle/sha1.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"

#define DALLI_POINTS_PER_SERVER 160
#define DALLI_DEFAULT_PORT "11211"
/* The longest NAME: an address with its port in decimal (at most 20 digits). */
#define DALLI_NAME_MAX (SHMRING_ADDRESS_MAX + 24)

static uint32_t points_for(uint32_t weight, uint64_t total_weight, size_t servers)
{
    uint64_t scaled = (uint64_t)servers * DALLI_POINTS_PER_SERVER * weight;
    return (uint32_t)((double)scaled / (double)total_weight);
}

static bool is_hex_or_colon(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
           c == ':';
}

/*
 * Reads TAIL as the end of ServerConfigParser's pattern, (?::(\d+))?(?::(\d+))?\z:
 * the port (or a socket's weight) at *FIRST, *FIRST_LENGTH digits, and whether a
 * second number follows. False when TAIL does not match.
 */
static bool read_tail(const char *tail, const char **first, size_t *first_length,
                      bool *second)
{
    *first = NULL;
    *first_length = 0;
    *second = false;
    if (*tail == '\0')
        return true;
    if (*tail != ':')
        return false;
    size_t digits = strspn(tail + 1, "0123456789");
    if (digits == 0)
        return false;
    *first = tail + 1;
    *first_length = digits;
    tail += 1 + digits;
    if (*tail == '\0')
        return true;
    if (*tail != ':')
        return false;
    digits = strspn(tail + 1, "0123456789");
    *second = digits > 0 && tail[1 + digits] == '\0';
    return *second;
}

/*
 * Writes PORT (LENGTH ASCII digits) as Ruby's Integer() reads it and to_s writes it:
 * decimal as written, except that a leading 0 makes it octal ("011" is 9, "0" is 0,
 * and "08" raises). Returns the length written, or 0 for a port Dalli refuses (or
 * one past 2^64, which no server can have).
 */
static size_t port_text(const char *port, size_t length, char *out, size_t size)
{
    if (port[0] != '0' || length == 1) {
        if (length >= size)
            return 0;
        memcpy(out, port, length);
        out[length] = '\0';
        return length;
    }
    uint64_t value = 0;
    for (size_t i = 1; i < length; i++) {
        if (port[i] > '7' || value > (UINT64_MAX >> 3))
            return 0;
        value = value * 8 + (uint64_t)(port[i] - '0');
    }
    int n = snprintf(out, size, "%llu", (unsigned long long)value);
    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/*
 * The name of NODE's server into NAME (DALLI_NAME_MAX + 1 bytes); its length, or 0
 * when its address is no server string Dalli takes as we can place it. Dalli matches
 * the string against \A(\[([\h:]+)\]|[^:]+)(?::(\d+))?(?::(\d+))?\z: the host is the
 * text between brackets or everything up to the first colon ("[]" alone is refused);
 * a host starting with '/' is a UNIX socket, whose one number is its weight; a TCP
 * host's first number is its port (11211 when absent) and its second its weight. The
 * weight is the node's weight, so an address that writes one is refused, as is a
 * memcached:// URI (give its "host:port" as the hash_key).
 */
static size_t server_name(const struct placement_node *node, char *name)
{
    if (node->hash_key != NULL) {
        size_t length = strlen(node->hash_key);
        memcpy(name, node->hash_key, length + 1);
        return length;
    }
    const char *address = node->address;
    if (strncmp(address, "memcached://", 12) == 0)
        return 0;
    const char *host = NULL, *port = NULL;
    size_t host_length = 0, port_length = 0;
    bool second = false;
    if (address[0] == '[') {
        size_t inner = 1;
        while (is_hex_or_colon(address[inner]))
            inner++;
        if (inner > 1 && address[inner] == ']' &&
            read_tail(address + inner + 1, &port, &port_length, &second)) {
            host = address + 1;
            host_length = inner - 1;
        }
    }
    if (host == NULL) {
        /* [^:]+ is greedy and the tail starts with a colon or ends the string. */
        host_length = strcspn(address, ":");
        if (host_length == 0 ||
            !read_tail(address + host_length, &port, &port_length, &second) ||
            (host_length == 2 && memcmp(address, "[]", 2) == 0))
            return 0;
        host = address;
    }
    if (host[0] == '/') {
        if (port != NULL)
            return 0;
        memcpy(name, host, host_length);
        name[host_length] = '\0';
        return host_length;
    }
    if (second)
        return 0;
    char port_decimal[24];
    size_t decimal_length =
        port != NULL
            ? port_text(port, port_length, port_decimal, sizeof(port_decimal))
            : port_text(DALLI_DEFAULT_PORT, 5, port_decimal, sizeof(port_decimal));
    if (decimal_length == 0)
        return 0;
    int n = snprintf(name, DALLI_NAME_MAX + 1, "%.*s:%s", (int)host_length, host,
                     port_decimal);
    return n > 0 && n <= DALLI_NAME_MAX ? (size_t)n : 0;
}

/* Dalli has no down servers, only dead ones that its failover hashes around. */
static int check_nodes(const struct placement_input *input)
{
    char name[DALLI_NAME_MAX + 1];
    for (size_t i = 0; i < input->node_count; i++) {
        if (input->nodes[i].state != SHMRING_STATE_UP)
            return SHMRING_ENODOWN;
    }
    for (size_t i = 0; i < input->node_count; i++) {
        if (server_name(&input->nodes[i], name) == 0)
            return SHMRING_EBADADDRESS;
    }
    return 0;
}

static int size(struct placement_input *input, uint64_t *size)
{
    uint64_t total = shmring__placement_total_weight(input->up, input->up_count);
    *size = 0;
    for (size_t i = 0; i < input->up_count; i++)
        *size += points_for(input->up[i].weight, total, input->up_count);
    return 0;
}

static int place(const struct placement_input *input, uint64_t size, void *out)
{
    struct snapshot_point *points = out;
    uint64_t total = shmring__placement_total_weight(input->up, input->up_count);
    size_t next = 0;
    /* Last server first: the stable sort then puts the last server's first among
     * equal points, which is the one Dalli's search ends on. */
    for (size_t n = input->up_count; n-- > 0;) {
        const struct placement_node *server = &input->up[n];
        char label[DALLI_NAME_MAX + 24];
        size_t length = server_name(server, label);
        uint32_t count = points_for(server->weight, total, input->up_count);
        for (uint32_t i = 0; i < count; i++) {
            int label_length =
                snprintf(label + length, sizeof(label) - length, ":%u", (unsigned)i);
            struct sha1_ctx sha1;
            uint8_t digest[SHA1_DIGEST_SIZE];
            sha1_init(&sha1);
            sha1_update(&sha1, length + (size_t)label_length, (const uint8_t *)label);
            sha1_digest(&sha1, sizeof(digest), digest);
            uint32_t value = (uint32_t)digest[0] << 24 | (uint32_t)digest[1] << 16 |
                             (uint32_t)digest[2] << 8 | digest[3];
            shmring__points_append(points, &next, (uint64_t)value << 32,
                                   server->node_index);
        }
    }
    int err = shmring__points_sort(points, next);
    if (err != 0 || size == 0)
        return err;
    /* Each run of equal points moves to just below the next distinct value; the last
     * run wraps to just below the first value, which is the smallest value of all
     * unless the first value is 0 (then it is 2^32 - 1, the largest). */
    uint32_t first_value = (uint32_t)(points[0].point >> 32);
    size_t last_run = 0;
    for (size_t j = 0; j < size;) {
        size_t end = j;
        while (end < size && points[end].point == points[j].point)
            end++;
        uint32_t following =
            end < size ? (uint32_t)(points[end].point >> 32) : first_value;
        for (size_t k = j; k < end; k++)
            points[k].point = (uint64_t)(uint32_t)(following - 1) << 32;
        last_run = j;
        j = end;
    }
    if (first_value != 0 && last_run > 0) {
        /* Rotate the wrapped run to the front. */
        size_t run = size - last_run;
        struct snapshot_point *moved = malloc(run * sizeof(*moved));
        if (moved == NULL)
            return SHMRING_ENOMEM;
        memcpy(moved, points + last_run, run * sizeof(*moved));
        memmove(points + run, points, last_run * sizeof(*points));
        memcpy(points, moved, run * sizeof(*moved));
        free(moved);
    }
    return 0;
}

/* Dalli hashes keys with CRC-32 (Zlib.crc32) and points with SHA-1; its points
 * follow server order. */
const struct placement_algorithm shmring__placement_dalli = {
    .name = "dalli",
    .id = SHMRING_ALGORITHM_DALLI,
    .peer = true,
    .default_hash = SHMRING_HASH_CRC32,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_CRC32),
    .parameters = 0,
    .check_nodes = check_nodes,
    .key_hash = KEY_HASH_CRC32,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
