/*
 * Fuzzes the snapshot validator and the lookups on what it accepts.
 *
 * An input whose first byte has RECIPE_FLAG set is a recipe: it describes a small
 * node set, whose snapshot is built and then tampered with at offsets the input
 * chooses, after which the checksum is sealed again (unless STALE_FLAG is set too), so
 * that the checks behind the checksum (sections, nodes, strings, points, buckets, the
 * maglev table) see the tampering. Random bytes would almost never get past the
 * checksum. Any other input is a snapshot as it stands; real snapshots begin with the
 * magic "shrsnap1", whose first byte does not have RECIPE_FLAG set.
 *
 * Whatever the validator accepts is looked up in and checked (fuzz_support.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "fuzz_support.h"
#include "snapshot_internal.h"

#define RECIPE_FLAG 0x80u
#define STALE_FLAG 0x40u

/* Longest name or address a recipe writes, and most nodes and tamperings. */
#define RECIPE_TEXT_MAX 24
#define RECIPE_NODES_MAX 8
#define RECIPE_EDITS_MAX 7
/* A tampering may grow or shrink the buffer by this many bytes at most. */
#define RECIPE_RESIZE_MAX 512
/* Snapshots of more points or slots than this are neither built nor rebuilt: they
 * take milliseconds, and small ones exercise the same checks. */
#define RECIPE_COST_MAX 16384u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input, read front to back; past its end every read gives zeros. */
struct recipe {
    const uint8_t *data;
    size_t size;
    size_t used;
};

static uint8_t take8(struct recipe *r)
{
    return r->used < r->size ? r->data[r->used++] : 0;
}

static uint16_t take16(struct recipe *r)
{
    uint16_t low = take8(r);
    return (uint16_t)(low | (uint16_t)take8(r) << 8);
}

static uint32_t take32(struct recipe *r)
{
    uint32_t low = take16(r);
    return low | (uint32_t)take16(r) << 16;
}

/* ---- Node sets from recipes ------------------------------------------------- */

/* Maglev table sizes a recipe picks from; 0 is the default (65537 here). */
static const uint32_t table_sizes[] = {0, 2, 3, 5, 7, 11, 13, 31, 61, 101, 251, 1021};

/* The INDEX-th hash (counting from 0, modulo their number) of the set HASHES. */
static shmring_hash_t nth_hash(uint64_t hashes, unsigned index)
{
    index %= (unsigned)__builtin_popcountll(hashes);
    for (;; index--) {
        shmring_hash_t hash = (shmring_hash_t)__builtin_ctzll(hashes);
        if (index == 0)
            return hash;
        hashes &= hashes - 1;
    }
}

/* Returns false when the algorithm byte names no algorithm (a gap in the table). */
static bool take_params(struct recipe *r, shmring_params_t *params)
{
    /* Every algorithm of the library's table, each with any hash it takes (ring and
     * maglev: hash byte % 5 picks XXH3, MD5, CRC32, FNV1A or MURMUR3; envoy-ring: odd
     * is murmur2, even xxh64, in the order of the values), so that one added to the
     * table is fuzzed too. */
    unsigned algorithm = take8(r) % (unsigned)shmring__algorithm_count();
    const struct placement_algorithm *description = shmring__algorithm(algorithm);
    uint8_t hash = take8(r);
    if (description == NULL)
        return false;
    params->algorithm = (shmring_algorithm_t)algorithm;
    params->hash = nth_hash(description->hashes, hash);
    params->vnodes = 1u + take8(r) % 32u;
    params->table_size =
        table_sizes[take8(r) % (sizeof(table_sizes) / sizeof(table_sizes[0]))];
    if (params->algorithm == SHMRING_ALGORITHM_ENVOY_RING) {
        /* Small rings: Envoy's default maximum (8388608 points) is over the cost
         * a recipe may have. */
        params->max_ring_size = 1u + take16(r) % 4096u;
        params->min_ring_size = 1u + take16(r) % params->max_ring_size;
    }
    /* Digests of four points each (uhashring's ketama, hashring) take a multiple of
     * four. */
    if (shmring_params_check(params) == SHMRING_EBADVNODES)
        params->vnodes = (params->vnodes + 3u) & ~3u;
    return true;
}

/* Writes up to RECIPE_TEXT_MAX bytes of text into BUF: letters, digits, '-' and '.'
 * (other bytes are mapped onto them), or the input's bytes as they are (often
 * invalid UTF-8, which must be refused). */
static void take_text(struct recipe *r, bool raw, char *buf)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789-.";
    size_t length = 1u + take8(r) % RECIPE_TEXT_MAX;
    for (size_t i = 0; i < length; i++) {
        uint8_t c = take8(r);
        if (raw)
            buf[i] = (char)(c ? c : 'z');
        else if (c != 0 && memchr(alphabet, c, sizeof(alphabet) - 1) != NULL)
            buf[i] = (char)c;
        else
            buf[i] = alphabet[c % (sizeof(alphabet) - 1)];
    }
    buf[length] = '\0';
}

/* Addresses in the shapes ketama splits into host and port differently. */
static void take_address(struct recipe *r, char *buf, size_t buf_size)
{
    uint8_t shape = take8(r);
    unsigned a = take8(r), b = take8(r), port = take16(r);
    switch (shape % 5) {
    case 0:
        snprintf(buf, buf_size, "10.0.%u.%u:%u", a, b, port);
        break;
    case 1:
        snprintf(buf, buf_size, "[fe80::%x:%x]:%u", a, b, port);
        break;
    case 2:
        snprintf(buf, buf_size, "cache-%u.example", a);
        break;
    case 3:
        snprintf(buf, buf_size, "host:%u:%u", a, port);
        break;
    default:
        take_text(r, shape & 0x80, buf);
        break;
    }
}

/*
 * One node: a flags byte (bit 0: down, bit 1: a large weight, bit 2: raw name bytes,
 * bit 3: an address of its own, bit 4: remove the node again, leaving a gap in the
 * ids), then its weight, name and address. Nodes the node set refuses (a duplicate
 * or invalid name) are left out.
 */
static void take_node(struct recipe *r, shmring_nodeset_t *set)
{
    uint8_t flags = take8(r);
    uint32_t weight =
        flags & 0x02 ? 1u + take16(r) % SHMRING_WEIGHT_MAX : 1u + take8(r) % 4u;
    char name[RECIPE_TEXT_MAX + 1];
    char address[64];
    take_text(r, flags & 0x04, name);
    if (flags & 0x08)
        take_address(r, address, sizeof(address));
    shmring_state_t state = flags & 0x01 ? SHMRING_STATE_DOWN : SHMRING_STATE_UP;
    if (shmring_nodeset_add(set, name, flags & 0x08 ? address : NULL, weight, state,
                            NULL) == 0 &&
        (flags & 0x10)) {
        int err = shmring_nodeset_remove(set, name);
        FUZZ_REQUIRE(err == 0, "removing a node just added returned %d", err);
    }
}

/* ---- Tampering --------------------------------------------------------------- */

/* Header fields a tampering aims at: where they are and how wide. */
struct field {
    size_t offset;
    size_t width;
};

#define HEADER_FIELD(member)                                                             \
    {                                                                                    \
        offsetof(struct snapshot_header, member),                                        \
            sizeof(((struct snapshot_header *)0)->member)                                \
    }

static const struct field header_fields[] = {
    HEADER_FIELD(total_size),     HEADER_FIELD(format_version),
    HEADER_FIELD(answer_bits),    HEADER_FIELD(header_size),
    HEADER_FIELD(algorithm),      HEADER_FIELD(hash),
    HEADER_FIELD(vnodes),         HEADER_FIELD(table_size),
    HEADER_FIELD(node_count),     HEADER_FIELD(up_count),
    HEADER_FIELD(next_node_id),   HEADER_FIELD(point_count),
    HEADER_FIELD(bucket_bits),    HEADER_FIELD(table_size_param),
    HEADER_FIELD(nodes.offset),   HEADER_FIELD(nodes.size),
    HEADER_FIELD(strings.offset), HEADER_FIELD(strings.size),
    HEADER_FIELD(points.offset),  HEADER_FIELD(points.size),
    HEADER_FIELD(buckets.offset), HEADER_FIELD(buckets.size),
    HEADER_FIELD(table.offset),   HEADER_FIELD(table.size),
    HEADER_FIELD(features),       HEADER_FIELD(min_reader),
};

#define NODE_FIELD(member)                                                               \
    {                                                                                    \
        offsetof(struct snapshot_node, member),                                          \
            sizeof(((struct snapshot_node *)0)->member)                                  \
    }

static const struct field node_fields[] = {
    NODE_FIELD(id),          NODE_FIELD(weight),
    NODE_FIELD(name_offset), NODE_FIELD(address_offset),
    NODE_FIELD(name_length), NODE_FIELD(address_length),
    NODE_FIELD(state),
};

static uint64_t load(const unsigned char *p, size_t width)
{
    uint64_t v = 0;
    memcpy(&v, p, width); /* Little-endian hosts only, like the fuzz build. */
    return v;
}

static void store(unsigned char *p, size_t width, uint64_t v)
{
    memcpy(p, &v, width);
}

/* Changes the WIDTH-byte integer at P: adds a small signed delta or sets a value. */
static void edit_integer(struct recipe *r, unsigned char *p, size_t width)
{
    uint8_t how = take8(r);
    uint64_t v = load(p, width);
    if (how & 1)
        v += (uint64_t)(int64_t)(int8_t)take8(r);
    else
        v = how & 2 ? take32(r) : take8(r);
    store(p, width, v);
}

/* A section's offset and size, read from the header in BUF (at least a header). */
static struct snapshot_section section_of(const unsigned char *buf, size_t member)
{
    struct snapshot_section s;
    memcpy(&s, buf + member, sizeof(s));
    return s;
}

/* Picks an element of SECTION (ELEMENT bytes each) that lies in BUF; returns false
 * when there is none. */
static bool pick_element(struct recipe *r, size_t size, struct snapshot_section s,
                         size_t element, size_t *offset)
{
    uint64_t count = s.size / element;
    if (count == 0 || s.offset > size)
        return false;
    uint64_t at = s.offset + take16(r) % count * element;
    if (at > size || size - at < element)
        return false;
    *offset = (size_t)at;
    return true;
}

/*
 * One tampering of BUF (*SIZE bytes), chosen by the next input byte: set, flip or
 * nudge bytes anywhere; edit a header field, a node field, a point or a table slot;
 * swap two points; or resize the buffer (recording the new size in the header, so
 * that the section checks, not the size check, see it).
 */
static void tamper(struct recipe *r, unsigned char **buf, size_t *size)
{
    uint8_t op = take8(r);
    size_t at = *size ? take16(r) % *size : 0;
    size_t offset;
    bool header = *size >= sizeof(struct snapshot_header);
    switch (op % 9) {
    case 0:
        if (*size)
            (*buf)[at] = take8(r);
        break;
    case 1:
        if (*size)
            (*buf)[at] ^= (uint8_t)(1u << (take8(r) % 8));
        break;
    case 2:
        if (*size >= 4)
            edit_integer(r, *buf + (at > *size - 4 ? *size - 4 : at & ~(size_t)3), 4);
        break;
    case 3:
        if (header) {
            const struct field *f = &header_fields[take8(r) % (sizeof(header_fields) /
                                                               sizeof(header_fields[0]))];
            edit_integer(r, *buf + f->offset, f->width);
        }
        break;
    case 4:
        if (header &&
            pick_element(r, *size,
                         section_of(*buf, offsetof(struct snapshot_header, nodes)),
                         sizeof(struct snapshot_node), &offset)) {
            const struct field *f =
                &node_fields[take8(r) % (sizeof(node_fields) / sizeof(node_fields[0]))];
            edit_integer(r, *buf + offset + f->offset, f->width);
        }
        break;
    case 5:
        if (header &&
            pick_element(r, *size,
                         section_of(*buf, offsetof(struct snapshot_header, points)),
                         sizeof(struct snapshot_point), &offset)) {
            bool owner = take8(r) & 1;
            edit_integer(r,
                         *buf + offset +
                             (owner ? offsetof(struct snapshot_point, node_index) : 0),
                         owner ? 4 : 8);
        }
        break;
    case 6:
        if (header &&
            pick_element(r, *size,
                         section_of(*buf, offsetof(struct snapshot_header, points)),
                         sizeof(struct snapshot_point), &offset) &&
            *size - offset >= 2 * sizeof(struct snapshot_point)) {
            unsigned char saved[sizeof(struct snapshot_point)];
            unsigned char *p = *buf + offset;
            memcpy(saved, p, sizeof(saved));
            memcpy(p, p + sizeof(saved), sizeof(saved));
            memcpy(p + sizeof(saved), saved, sizeof(saved));
        }
        break;
    case 7:
        if (header) {
            /* The bucket index, the bucket answers or the maglev table. */
            static const size_t members[] = {offsetof(struct snapshot_header, buckets),
                                             offsetof(struct snapshot_header, answers),
                                             offsetof(struct snapshot_header, table)};
            /* Their elements: 32-bit point indexes, 64-bit answers, 32-bit slots. */
            static const size_t widths[] = {4, 8, 4};
            size_t which = take8(r) % 3;
            if (pick_element(r, *size, section_of(*buf, members[which]), widths[which],
                             &offset))
                edit_integer(r, *buf + offset, widths[which]);
        }
        break;
    default: {
        int delta = (int)(take16(r) % (2 * RECIPE_RESIZE_MAX + 1)) - RECIPE_RESIZE_MAX;
        size_t new_size = delta < 0 && (size_t)-delta > *size ? 0 : *size + (size_t)delta;
        unsigned char *resized = realloc(*buf, new_size ? new_size : 1);
        FUZZ_REQUIRE(resized != NULL, "out of memory");
        if (new_size > *size)
            memset(resized + *size, 0, new_size - *size);
        *buf = resized;
        *size = new_size;
        if (new_size >= sizeof(struct snapshot_header))
            store(resized + offsetof(struct snapshot_header, total_size), 8, new_size);
        break;
    }
    }
}

/* Seals BUF as the builder does: XXH3-64 of the whole buffer with the checksum field
 * read as zero. */
static void seal(unsigned char *buf, size_t size)
{
    size_t field = offsetof(struct snapshot_header, checksum);
    if (size < field + sizeof(uint64_t))
        return;
    store(buf + field, 8, 0);
    store(buf + field, 8, XXH3_64bits(buf, size));
}

/* Validates BUFFER and, if it passes, checks everything a reader may do with it. */
static void check_buffer(const void *buffer, size_t size, const uint8_t *keys,
                         size_t keys_len, bool exact)
{
    shmring_snapshot_t *snapshot = fuzz_snapshot_new(buffer, size, exact);
    if (snapshot == NULL)
        return;
    fuzz_check_snapshot(snapshot, keys, keys_len);
    fuzz_check_rebuild(snapshot, exact, RECIPE_COST_MAX);
    shmring_snapshot_free(snapshot);
}

static void run_recipe(const uint8_t *data, size_t size)
{
    struct recipe r = {.data = data, .size = size, .used = 1};
    shmring_nodeset_t *set = NULL;
    FUZZ_REQUIRE(shmring_nodeset_new(&set) == 0, "out of memory");
    /* Zeroed first: the fields a recipe does not choose (envoy-ring's ring sizes,
     * the reserved room) must be zero, as shmring.h asks of callers. */
    shmring_params_t params = {0};
    if (!take_params(&r, &params)) {
        shmring_nodeset_free(set);
        return;
    }
    int err = shmring_nodeset_set_params(set, &params);
    FUZZ_REQUIRE(err == 0, "set_params returned %d", err);
    unsigned node_count = take8(&r) % (RECIPE_NODES_MAX + 1);
    for (unsigned i = 0; i < node_count; i++)
        take_node(&r, set);

    unsigned char *buf = NULL;
    size_t buf_size = 0;
    if (fuzz_build_cost(set) > RECIPE_COST_MAX ||
        shmring_snapshot_build(set, (void **)&buf, &buf_size) != 0) {
        /* Too large to try, or a maglev table smaller than the up nodes. */
        shmring_nodeset_free(set);
        return;
    }
    shmring_nodeset_free(set);

    unsigned edits = take8(&r) % (RECIPE_EDITS_MAX + 1);
    for (unsigned i = 0; i < edits; i++)
        tamper(&r, &buf, &buf_size);
    bool stale = data[0] & STALE_FLAG;
    if (!stale)
        seal(buf, buf_size);
    /* Lookup keys come from what the recipe did not use. */
    check_buffer(buf, buf_size, data + r.used, size - r.used, edits == 0);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && (data[0] & RECIPE_FLAG)) {
        run_recipe(data, size);
        return 0;
    }
    /* malloc's memory is aligned for any type; its exact size lets AddressSanitizer
     * catch a read one byte past the end. */
    unsigned char *buffer = malloc(size ? size : 1);
    FUZZ_REQUIRE(buffer != NULL, "out of memory");
    if (size > 0)
        memcpy(buffer, data, size);
    check_buffer(buffer, size, data, size, false);
    free(buffer);
    return 0;
}
