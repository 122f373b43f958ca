/*
 * The snapshot validator. A snapshot may come from another process's shared memory,
 * so it is untrusted input: every field is checked before it is used, sizes are
 * compared by subtraction so that no sum can overflow, and nothing outside
 * [buffer, buffer + size) is read. Once a buffer passes, lookups index it without
 * further checks.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "params_internal.h"
#include "snapshot_internal.h"
#include "text_internal.h"

/* Does [offset, offset + length) lie inside a region of SIZE bytes? */
static bool in_bounds(uint64_t offset, uint64_t length, uint64_t size)
{
    return offset <= size && length <= size - offset;
}

int shmring__snapshot_header_check(const struct snapshot_header *h, uint64_t size)
{
    /* A writer of the other byte order swapped the magic too: report the byte order
     * rather than a foreign object. */
    if (h->magic == __builtin_bswap64(SNAPSHOT_MAGIC))
        return SHMRING_EBYTEORDER;
    if (h->magic != SNAPSHOT_MAGIC)
        return SHMRING_EBADMAGIC;
    if (h->byte_order != SNAPSHOT_BYTE_ORDER_MARK)
        return SHMRING_EBYTEORDER;
    if (h->format_version != SNAPSHOT_FORMAT_VERSION ||
        h->header_size != sizeof(struct snapshot_header))
        return SHMRING_EFORMAT;
    if (h->total_size != size)
        return SHMRING_ETRUNCATED;

    shmring_params_t params = shmring__snapshot_params(h);
    if (shmring_params_check(&params) != 0)
        return SHMRING_EBADPARAMS;
    if (h->node_count > SHMRING_NODES_MAX || h->up_count > h->node_count ||
        h->point_count > SHMRING_POINTS_MAX || h->table_size > SHMRING_POINTS_MAX ||
        h->bucket_bits > SNAPSHOT_BUCKET_BITS_MAX)
        return SHMRING_EBADPARAMS;

    if (shmring__algorithm_has_table(h->algorithm)) {
        bool has_table = h->up_count > 0;
        /* Envoy fills a table smaller than its host count too (some hosts get no
         * slot); shmring's maglev gives every up node one. */
        bool envoy = h->algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV;
        uint32_t size_wanted =
            h->table_size_param
                ? h->table_size_param
                : (envoy ? ENVOY_MAGLEV_DEFAULT_TABLE_SIZE : h->table_size);
        if (h->point_count != 0 || h->bucket_bits != 0 || h->answer_bits != 0 ||
            has_table != (h->table_size > 0) || (!envoy && h->table_size < h->up_count) ||
            (has_table && !shmring__is_prime(h->table_size)) ||
            (has_table && h->table_size != size_wanted))
            return SHMRING_EBADPARAMS;
    } else {
        bool has_points = h->up_count > 0;
        if (h->table_size != 0 || has_points != (h->point_count > 0) ||
            h->bucket_bits !=
                (has_points ? shmring__snapshot_bucket_bits_for(h->point_count) : 0) ||
            h->answer_bits != (has_points ? h->bucket_bits + ANSWER_EXTRA_BITS : 0))
            return SHMRING_EBADPARAMS;
    }
    return 0;
}

static int check_sections(const struct snapshot_header *h)
{
    const struct snapshot_section *order[] = {&h->nodes,   &h->strings, &h->points,
                                              &h->buckets, &h->answers, &h->table};
    uint64_t bucket_entries = h->bucket_bits ? (UINT64_C(1) << h->bucket_bits) + 1 : 0;
    uint64_t answer_entries = h->answer_bits ? (UINT64_C(1) << h->answer_bits) + 1 : 0;
    if (h->nodes.size != (uint64_t)h->node_count * sizeof(struct snapshot_node) ||
        h->points.size != (uint64_t)h->point_count * sizeof(struct snapshot_point) ||
        h->buckets.size != bucket_entries * sizeof(uint32_t) ||
        h->answers.size != answer_entries * sizeof(uint64_t) ||
        h->table.size != (uint64_t)h->table_size * sizeof(uint32_t) ||
        h->strings.size > UINT32_MAX)
        return SHMRING_EBADSECTION;

    /* Sections are in a fixed order, aligned, and do not overlap. */
    uint64_t end = sizeof(struct snapshot_header);
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        const struct snapshot_section *s = order[i];
        if (s->offset % SNAPSHOT_ALIGN != 0 || s->offset < end ||
            !in_bounds(s->offset, s->size, h->total_size))
            return SHMRING_EBADSECTION;
        end = s->offset + s->size;
    }
    return 0;
}

static uint64_t checksum_of(const unsigned char *buf, size_t size)
{
    /* Hash the buffer as the builder did: with the checksum field read as zero. */
    static const uint8_t zero[sizeof(uint64_t)];
    size_t field = offsetof(struct snapshot_header, checksum);
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, buf, field);
    XXH3_64bits_update(&state, zero, sizeof(zero));
    XXH3_64bits_update(&state, buf + field + sizeof(zero), size - field - sizeof(zero));
    return XXH3_64bits_digest(&state);
}

/* A string of LENGTH bytes at OFFSET: in bounds, NUL-terminated, printable UTF-8
 * inside. */
static bool string_valid(const char *strings, uint64_t strings_size, uint32_t offset,
                         uint16_t length)
{
    if (length == 0 || length > SHMRING_NAME_MAX ||
        !in_bounds(offset, (uint64_t)length + 1, strings_size))
        return false;
    return shmring__text_valid(strings + offset, length) &&
           strings[offset + length] == '\0';
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int check_nodes(const void *buffer, const struct snapshot_header *h)
{
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    const char *strings = snapshot_section_at(buffer, &h->strings);
    uint32_t up = 0;
    for (uint32_t i = 0; i < h->node_count; i++) {
        const struct snapshot_node *n = &nodes[i];
        if (n->weight < 1 || n->weight > SHMRING_WEIGHT_MAX || n->state > 1 ||
            n->id >= h->next_node_id)
            return SHMRING_EBADNODE;
        if (!string_valid(strings, h->strings.size, n->name_offset, n->name_length) ||
            !string_valid(strings, h->strings.size, n->address_offset, n->address_length))
            return SHMRING_EBADSTRING;
        /* A hash key follows the address's NUL; the address's offset and length are
         * in bounds (just checked), so their sum cannot overflow 64 bits. */
        if (n->hash_key_length > 0 &&
            (n->address_offset + (uint64_t)n->address_length + 1 > UINT32_MAX ||
             !string_valid(strings, h->strings.size,
                           n->address_offset + n->address_length + 1u,
                           n->hash_key_length)))
            return SHMRING_EBADSTRING;
        up += n->state == SHMRING_STATE_UP;
    }
    if (up != h->up_count)
        return SHMRING_EBADNODE;

    /* Workers index connection pools by id: ids must be unique. */
    if (h->node_count < 2)
        return 0;
    uint32_t *ids = malloc(h->node_count * sizeof(*ids));
    if (ids == NULL)
        return SHMRING_ENOMEM;
    for (uint32_t i = 0; i < h->node_count; i++)
        ids[i] = nodes[i].id;
    qsort(ids, h->node_count, sizeof(*ids), compare_u32);
    int err = 0;
    for (uint32_t i = 1; i < h->node_count && err == 0; i++) {
        if (ids[i] == ids[i - 1])
            err = SHMRING_EBADNODE;
    }
    free(ids);
    return err;
}

static bool owner_valid(const struct snapshot_node *nodes, uint32_t node_count,
                        uint32_t index)
{
    return index < node_count && nodes[index].state == SHMRING_STATE_UP;
}

static int check_points(const void *buffer, const struct snapshot_header *h)
{
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    const uint32_t *buckets = snapshot_section_at(buffer, &h->buckets);
    unsigned shift = 64 - h->bucket_bits;
    uint64_t bucket_count = UINT64_C(1) << h->bucket_bits;

    /* No up nodes: check_header() has made sure there are no points and no bucket
     * index either, so there is nothing to read (buckets[0] would be out of bounds). */
    if (h->point_count == 0)
        return 0;
    for (uint32_t i = 0; i < h->point_count; i++) {
        if ((i > 0 && points[i].point < points[i - 1].point) ||
            !owner_valid(nodes, h->node_count, points[i].node_index))
            return SHMRING_EBADPOINTS;
    }
    /* The bucket index must be exactly the one the builder derives from the points;
     * then every lookup's scan starts and ends where it should. */
    if (buckets[0] != 0 || buckets[bucket_count] != h->point_count)
        return SHMRING_EBADINDEX;
    for (uint64_t b = 0; b < bucket_count; b++) {
        if (buckets[b] > buckets[b + 1])
            return SHMRING_EBADINDEX;
    }
    for (uint32_t i = 0; i < h->point_count; i++) {
        uint64_t b = points[i].point >> shift;
        if (i < buckets[b] || i >= buckets[b + 1])
            return SHMRING_EBADINDEX;
    }
    /* Likewise every bucket's answer, which lookups trust instead of the points. */
    const uint64_t *answers = snapshot_section_at(buffer, &h->answers);
    struct answer_cursor cursor;
    shmring__answer_cursor_start(&cursor, points, h->point_count, h->answer_bits);
    for (uint64_t b = 0; b <= UINT64_C(1) << h->answer_bits; b++) {
        if (answers[b] != shmring__answer_next(&cursor))
            return SHMRING_EBADINDEX;
    }
    return 0;
}

static int check_table(const void *buffer, const struct snapshot_header *h)
{
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    const uint32_t *table = snapshot_section_at(buffer, &h->table);
    for (uint32_t s = 0; s < h->table_size; s++) {
        if (!owner_valid(nodes, h->node_count, table[s]))
            return SHMRING_EBADINDEX;
    }
    return 0;
}

int shmring__snapshot_validate(const void *buffer, size_t size)
{
    if (buffer == NULL || size < sizeof(struct snapshot_header))
        return SHMRING_ETRUNCATED;
    /* Lookups read 64-bit fields in place. */
    if ((uintptr_t)buffer % sizeof(uint64_t) != 0)
        return SHMRING_EINVAL;
    const struct snapshot_header *h = snapshot_header(buffer);
    int err = shmring__snapshot_header_check(h, size);
    if (err == 0)
        err = check_sections(h);
    if (err == 0 && checksum_of(buffer, size) != h->checksum)
        err = SHMRING_ECHECKSUM;
    if (err == 0)
        err = check_nodes(buffer, h);
    if (err == 0)
        err = shmring__algorithm_has_table(h->algorithm) ? check_table(buffer, h)
                                                         : check_points(buffer, h);
    return err;
}
