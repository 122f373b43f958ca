/*
 * `rendezvous`: highest random weight as pymemcache's HashClient places keys with its
 * default hasher (pymemcache 3.5.2, pymemcache/client/rendezvous.py, RendezvousHash,
 * and client/murmur3.py, client/hash.py, client/base.py), reproduced bit for bit:
 *
 * - a node's string is what HashClient gives its hasher: "%s:%s" % (host, port) for
 *   a server given as (host, port), the path for a UNIX socket. Our node's hash_key,
 *   when it has one, is that string as it is; otherwise it is derived from the
 *   address as normalize_server_spec() reads a server string: "unix:PATH" and "/PATH"
 *   are the path; without a colon, or ending in ']', the address is the host and the
 *   port 11211; otherwise host and port split at the last colon, the port read as a
 *   decimal integer (its leading zeros go); a host that starts with '[' loses its
 *   leading and trailing brackets. So "[::1]:11211" and ("::1", 11211) both give
 *   "::1:11211". We take only ASCII digits for a port, where Python's int() also
 *   takes signs, spaces and underscores: such addresses are refused;
 * - a key scores murmur3_32(seed 0) of the str "%s-%s" % (node, key); the node with
 *   the highest score wins, and a tie goes to the greater node string (max() of the
 *   two strs). pymemcache's murmur3_32 reads each character as ord(c) & 0xff and takes
 *   the length in characters: for ASCII this is MurmurHash3_x86_32 of the bytes;
 *   any other character counts as one byte, the low byte of its code point;
 * - HashClient passes the key to the hasher as the caller gave it (check_key_helper's
 *   result is not what is hashed; its key_prefix is not hashed). Our keys are bytes:
 *   they are the str whose UTF-8 they are, each byte that is not part of a
 *   well-formed UTF-8 sequence standing for one character of its own value (Python's
 *   b.decode("utf-8", "surrogateescape"), whose U+DC80-U+DCFF keep the byte as
 *   their low byte). A pymemcache caller's bytes key is hashed as its repr(),
 *   "b'...'": such a caller looks up that string (docs/algorithms-node.md).
 *
 * pymemcache has no weights (EUNWEIGHTED). Its hasher keeps one node per string,
 * so two up nodes with one string are refused (EDUPLICATE). The lookup costs one
 * hash of the node string and the key per up node.
 */
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "placement_internal.h"

/* Node strings: an address with ":" and a port of at most 20 digits, or a hash key. */
#define NODE_STRING_MAX (SHMRING_ADDRESS_MAX + 32)

/*
 * The string pymemcache's HashClient gives the hasher for ADDRESS (LENGTH bytes),
 * into OUT (NODE_STRING_MAX bytes): its length, or 0 for an address whose port is
 * not a decimal number.
 */
static size_t address_node_string(const char *address, size_t length, char *out)
{
    if ((length >= 5 && memcmp(address, "unix:", 5) == 0)) {
        memcpy(out, address + 5, length - 5);
        return length - 5 > 0 ? length - 5 : 0;
    }
    if (length > 0 && address[0] == '/') {
        memcpy(out, address, length);
        return length;
    }
    const char *colon = memrchr(address, ':', length);
    const char *host = address;
    size_t host_length = length;
    const char *port = "11211";
    size_t port_length = 5;
    if (colon != NULL && address[length - 1] != ']') {
        host_length = (size_t)(colon - address);
        port = colon + 1;
        port_length = length - host_length - 1;
        if (port_length == 0)
            return 0;
        for (size_t i = 0; i < port_length; i++) {
            if (port[i] < '0' || port[i] > '9')
                return 0;
        }
        /* str(int(port)): no leading zeros, but "0" stays. */
        while (port_length > 1 && port[0] == '0') {
            port++;
            port_length--;
        }
        if (port_length > 20)
            return 0;
    }
    if (host_length > 0 && host[0] == '[') {
        /* str.strip("[]"): brackets off both ends. */
        while (host_length > 0 && (host[0] == '[' || host[0] == ']')) {
            host++;
            host_length--;
        }
        while (host_length > 0 &&
               (host[host_length - 1] == '[' || host[host_length - 1] == ']'))
            host_length--;
    }
    memcpy(out, host, host_length);
    out[host_length] = ':';
    memcpy(out + host_length + 1, port, port_length);
    return host_length + 1 + port_length;
}

/* The node string of a node with ADDRESS and HASH_KEY (NULL for none) into OUT: its
 * length, 0 when the address gives none. */
static size_t node_string(const char *address, size_t address_length,
                          const char *hash_key, size_t hash_key_length, char *out)
{
    if (hash_key != NULL && hash_key_length > 0) {
        memcpy(out, hash_key, hash_key_length);
        return hash_key_length;
    }
    return address_node_string(address, address_length, out);
}

/* pymemcache's murmur3_32, fed one character (its low byte) at a time. */
struct murmur3_32 {
    uint32_t h1;
    uint32_t block;
    uint32_t length;
};

static inline uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static inline uint32_t scramble(uint32_t k1)
{
    return rotl32(k1 * UINT32_C(0xcc9e2d51), 15) * UINT32_C(0x1b873593);
}

static inline void murmur_add(struct murmur3_32 *m, uint8_t byte)
{
    unsigned at = m->length & 3;
    m->block |= (uint32_t)byte << (8 * at);
    m->length++;
    if (at == 3) {
        m->h1 ^= scramble(m->block);
        m->h1 = rotl32(m->h1, 13) * 5 + UINT32_C(0xe6546b64);
        m->block = 0;
    }
}

static inline uint32_t murmur_end(struct murmur3_32 m)
{
    if ((m.length & 3) != 0)
        m.h1 ^= scramble(m.block);
    uint32_t h = m.h1 ^ m.length;
    h ^= h >> 16;
    h *= UINT32_C(0x85ebca6b);
    h ^= h >> 13;
    h *= UINT32_C(0xc2b2ae35);
    h ^= h >> 16;
    return h;
}

/*
 * The length of the well-formed UTF-8 sequence at P (LEFT > 0 bytes), by the Unicode
 * Standard's table 3-7, or 0 when none starts there (what Python's decoder takes).
 */
static inline size_t utf8_sequence(const uint8_t *p, size_t left)
{
    uint8_t b = p[0];
    if (b < 0x80)
        return 1;
    uint8_t low = 0x80, high = 0xbf;
    size_t length;
    if (b >= 0xc2 && b <= 0xdf)
        length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
        length = 3;
        low = b == 0xe0 ? 0xa0 : 0x80;
        high = b == 0xed ? 0x9f : 0xbf;
    } else if (b >= 0xf0 && b <= 0xf4) {
        length = 4;
        low = b == 0xf0 ? 0x90 : 0x80;
        high = b == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (left < length || p[1] < low || p[1] > high)
        return 0;
    for (size_t i = 2; i < length; i++) {
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    }
    return length;
}

/* Adds the characters of the UTF-8 text TEXT (LENGTH bytes; a byte outside a
 * well-formed sequence is a character of its own value), each as its low byte. */
static void murmur_add_text(struct murmur3_32 *m, const uint8_t *text, size_t length,
                            bool ascii)
{
    if (ascii) {
        /* Bytes are characters: up to a block boundary one at a time, then whole
         * little-endian blocks, then the rest. */
        size_t i = 0;
        for (; i < length && (m->length & 3) != 0; i++)
            murmur_add(m, text[i]);
        for (; i + 4 <= length; i += 4) {
            m->h1 ^= scramble(shmring__load_le32(text + i));
            m->h1 = rotl32(m->h1, 13) * 5 + UINT32_C(0xe6546b64);
            m->length += 4;
        }
        for (; i < length; i++)
            murmur_add(m, text[i]);
        return;
    }
    for (size_t i = 0; i < length;) {
        size_t n = utf8_sequence(text + i, length - i);
        if (n <= 1) {
            murmur_add(m, text[i]);
            i++;
            continue;
        }
        /* The code point's low byte: two bits of the sequence's second-to-last
         * byte, six of its last. */
        murmur_add(m,
                   (uint8_t)((text[i + n - 2] & 0x03) << 6 | (text[i + n - 1] & 0x3f)));
        i += n;
    }
}

/* Keys up to this long are read as characters once a lookup (rank()). */
#define KEY_CHARACTERS_MAX 512

/* The low byte of each character of TEXT (LENGTH bytes, read as murmur_add_text()
 * reads it) into OUT (LENGTH bytes at least): how many. */
static size_t low_bytes(const uint8_t *text, size_t length, uint8_t *out)
{
    size_t count = 0;
    for (size_t i = 0; i < length;) {
        size_t n = utf8_sequence(text + i, length - i);
        if (n <= 1) {
            out[count++] = text[i++];
            continue;
        }
        out[count++] =
            (uint8_t)((text[i + n - 2] & 0x03) << 6 | (text[i + n - 1] & 0x3f));
        i += n;
    }
    return count;
}

static bool is_ascii(const uint8_t *text, size_t length)
{
    uint8_t any = 0;
    for (size_t i = 0; i < length; i++)
        any |= text[i];
    return any < 0x80;
}

/* Python's comparison of two strs, by code point, for well-formed UTF-8: bytewise. */
static int compare_strings(const char *a, size_t a_length, const char *b, size_t b_length)
{
    size_t common = a_length < b_length ? a_length : b_length;
    int c = memcmp(a, b, common);
    if (c != 0)
        return c;
    return (a_length > b_length) - (a_length < b_length);
}

/* The node string of node N of a validated snapshot into OUT: its length. A node
 * whose address gives none (only another writer's snapshot has one) uses its address
 * as it is. */
static size_t snapshot_node_string(const char *strings, const struct snapshot_node *n,
                                   char *out)
{
    const char *address = strings + n->address_offset;
    const char *hash_key =
        n->hash_key_length > 0 ? address + n->address_length + 1 : NULL;
    size_t length =
        node_string(address, n->address_length, hash_key, n->hash_key_length, out);
    if (length == 0) {
        memcpy(out, address, n->address_length);
        length = n->address_length;
    }
    return length;
}

/* One up node's standing for a key. */
struct candidate {
    uint32_t score;
    uint32_t node_index;
};

/* Whether X beats Y: a higher score, or an equal one (one key in 2^32 for two
 * nodes) and a greater node string. */
static bool beats(const char *strings, const struct snapshot_node *nodes,
                  struct candidate x, struct candidate y)
{
    if (x.score != y.score)
        return x.score > y.score;
    char a[NODE_STRING_MAX], b[NODE_STRING_MAX];
    size_t a_length = snapshot_node_string(strings, &nodes[x.node_index], a);
    size_t b_length = snapshot_node_string(strings, &nodes[y.node_index], b);
    return compare_strings(a, a_length, b, b_length) > 0;
}

static size_t rank(const void *buffer, const void *key, size_t len, uint64_t key_hash,
                   uint32_t *found, size_t n)
{
    (void)key_hash;
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    const char *strings = snapshot_section_at(buffer, &h->strings);
    /* A key that is not ASCII is read as its characters' low bytes once, here, when
     * they fit; a longer one is read again for each node. */
    uint8_t characters[KEY_CHARACTERS_MAX];
    const uint8_t *text = key;
    size_t text_length = len;
    bool key_ascii = is_ascii(key, len);
    if (!key_ascii && len <= sizeof(characters)) {
        text_length = low_bytes(key, len, characters);
        text = characters;
        key_ascii = true;
    }
    size_t wanted = n < h->up_count ? n : h->up_count;
    /* The best WANTED so far, best first; one more slot for the node being tried. */
    struct candidate best[SHMRING_LOOKUP_N_MAX + 1];
    size_t count = 0;
    char string[NODE_STRING_MAX];
    for (uint32_t i = 0; i < h->node_count; i++) {
        if (nodes[i].state != SHMRING_STATE_UP)
            continue;
        size_t length = snapshot_node_string(strings, &nodes[i], string);
        struct murmur3_32 m = {0, 0, 0};
        murmur_add_text(&m, (const uint8_t *)string, length,
                        is_ascii((const uint8_t *)string, length));
        murmur_add(&m, '-');
        murmur_add_text(&m, text, text_length, key_ascii);
        struct candidate c = {.score = murmur_end(m), .node_index = i};
        /* Insert it in order; past WANTED, the last falls off. */
        size_t at = count;
        while (at > 0 && beats(strings, nodes, c, best[at - 1]))
            at--;
        if (at < wanted) {
            size_t kept = count < wanted ? count : wanted - 1;
            memmove(&best[at + 1], &best[at], (kept - at) * sizeof(best[0]));
            best[at] = c;
            if (count < wanted)
                count++;
        }
    }
    for (size_t i = 0; i < count; i++)
        found[i] = best[i].node_index;
    return count;
}

/* A node string in check_nodes()'s buffer. */
struct string_ref {
    const char *text;
    size_t length;
};

static int compare_refs(const void *a, const void *b)
{
    const struct string_ref *x = a, *y = b;
    return compare_strings(x->text, x->length, y->text, y->length);
}

/*
 * pymemcache's nodes have no weights; every up node must have a node string (an
 * address whose port is a number, or a hash key), and no two up nodes the same one.
 */
static int check_nodes(const struct placement_input *input)
{
    for (size_t i = 0; i < input->node_count; i++) {
        if (input->nodes[i].weight != 1)
            return SHMRING_EUNWEIGHTED;
    }
    if (input->up_count == 0)
        return 0;
    /* Room for each string: its hash key, or its address with a colon and a port. */
    size_t room = 0;
    for (size_t i = 0; i < input->up_count; i++) {
        const struct placement_node *node = &input->up[i];
        room += node->hash_key != NULL
                    ? strlen(node->hash_key)
                    : strlen(node->address) + NODE_STRING_MAX - SHMRING_ADDRESS_MAX;
    }
    struct string_ref *refs = malloc(input->up_count * sizeof(*refs));
    char *text = malloc(room);
    int err = refs != NULL && text != NULL ? 0 : SHMRING_ENOMEM;
    char *out = text;
    for (size_t i = 0; i < input->up_count && err == 0; i++) {
        const struct placement_node *node = &input->up[i];
        refs[i] = (struct string_ref){
            .text = out,
            .length =
                node_string(node->address, strlen(node->address), node->hash_key,
                            node->hash_key != NULL ? strlen(node->hash_key) : 0, out)};
        out += refs[i].length;
        if (refs[i].length == 0)
            err = SHMRING_EBADADDRESS;
    }
    if (err == 0)
        qsort(refs, input->up_count, sizeof(*refs), compare_refs);
    for (size_t i = 1; i < input->up_count && err == 0; i++) {
        if (compare_refs(&refs[i - 1], &refs[i]) == 0)
            err = SHMRING_EDUPLICATE;
    }
    free(text);
    free(refs);
    return err;
}

static int size(struct placement_input *input, uint64_t *size)
{
    (void)input;
    *size = 0;
    return 0;
}

const struct placement_algorithm shmring__placement_rendezvous = {
    .name = "rendezvous",
    .id = SHMRING_ALGORITHM_RENDEZVOUS,
    .peer = true,
    .default_hash = SHMRING_HASH_MURMUR3_32,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_MURMUR3_32),
    .parameters = 0,
    .check_nodes = check_nodes,
    .check_change = NULL,
    .key_hash = KEY_HASH_NONE,
    .order = PLACEMENT_ORDER_NONE,
    .lookup = PLACEMENT_LOOKUP_NODES,
    .candidates = PLACEMENT_CANDIDATES_RANKED,
    .size = size,
    .place = NULL,
    .rank = rank,
};
