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

/*
 * The checks of the points, the bucket index, the answers and the maglev table run
 * in one pass with the checksum: the buffer is hashed a chunk at a time, and each
 * chunk's entries are checked right after, while they are in the cache. A switch
 * then reads the snapshot from memory once, where separate passes read it up to
 * five times. The checksum is always finished, so that a damaged buffer is reported
 * as such before anything its damage broke (the order of the separate passes).
 */
#define STREAM_CHUNK (64u * 1024u)
/* Answers derived at a time for comparison with the stored ones. */
#define ANSWER_BATCH 1024u

struct stream {
    const unsigned char *buffer;
    const struct snapshot_header *h;
    const struct snapshot_node *nodes;
    const struct snapshot_point *points;
    const uint32_t *buckets;
    const uint64_t *answers;
    const uint32_t *table;
    /* The next entry of each kind to check. */
    uint64_t point, bucket, answer, slot;
    struct answer_cursor answer_cursor;
    /* The first problem found: once set, only the checksum goes on. */
    int err;
};

/* How many entries of SIZE bytes of section S lie entirely below byte END. */
static uint64_t entries_below(const struct snapshot_section *s, uint64_t end,
                              uint64_t size)
{
    if (end <= s->offset)
        return 0;
    uint64_t bytes = end - s->offset < s->size ? end - s->offset : s->size;
    return bytes / size;
}

/* Points are sorted, and each belongs to an up node. Without a branch per point:
 * the problems of a chunk are gathered, then looked at once. */
static int check_points(struct stream *st, uint64_t end)
{
    const struct snapshot_point *points = st->points;
    const struct snapshot_node *nodes = st->nodes;
    uint32_t last_node = st->h->node_count - 1; /* there are up nodes */
    bool bad = false;
    for (uint64_t i = st->point; i < end; i++) {
        uint32_t index = points[i].node_index;
        /* The state read is always in bounds; a bad index fails anyway. */
        uint32_t in_bounds = index < last_node ? index : last_node;
        bad |= (i > 0 && points[i].point < points[i - 1].point) | (index > last_node) |
               (nodes[in_bounds].state != SHMRING_STATE_UP);
    }
    st->point = end;
    return bad ? SHMRING_EBADPOINTS : 0;
}

/*
 * The bucket index must be exactly the one the builder derives from the points
 * (sorted by now): buckets[b] counts the points whose top bits are below b. It is,
 * if it starts at 0, ends at the point count, never decreases, and the first and
 * the last point of each bucket's range have the bucket's top bits: the ranges then
 * cover every point once, and sorted points between two of a bucket's are the
 * bucket's too. Then every lookup's scan starts and ends where it should.
 */
static int check_buckets(struct stream *st, uint64_t end)
{
    const struct snapshot_point *points = st->points;
    const uint32_t *buckets = st->buckets;
    uint32_t point_count = st->h->point_count;
    uint64_t bucket_count = UINT64_C(1) << st->h->bucket_bits;
    unsigned shift = 64 - st->h->bucket_bits;
    bool bad = false;
    for (uint64_t b = st->bucket; b < end; b++) {
        uint32_t first = buckets[b];
        if (b == 0)
            bad |= first != 0;
        if (b == bucket_count) {
            bad |= first != point_count;
            continue;
        }
        /* buckets[b + 1] is in the section, checked or not: this compares it with
         * its predecessor only, and its own turn checks its value. */
        uint32_t next = buckets[b + 1];
        bool filled = next != first;
        /* Reads in bounds whatever the values; a bad range fails anyway. */
        uint32_t low = first < point_count ? first : point_count - 1;
        uint32_t high = next - 1 < point_count ? next - 1 : point_count - 1;
        bad |= (next < first) | (next > point_count) |
               (filled &
                ((points[low].point >> shift != b) | (points[high].point >> shift != b)));
    }
    st->bucket = end;
    return bad ? SHMRING_EBADINDEX : 0;
}

/* Likewise every bucket's answer, which lookups trust instead of the points. */
static int check_answers(struct stream *st, uint64_t end)
{
    uint64_t expected[ANSWER_BATCH];
    while (st->answer < end) {
        uint64_t count =
            end - st->answer < ANSWER_BATCH ? end - st->answer : ANSWER_BATCH;
        shmring__answer_fill(&st->answer_cursor, expected, (size_t)count);
        if (memcmp(expected, st->answers + st->answer, count * sizeof(*expected)) != 0)
            return SHMRING_EBADINDEX;
        st->answer += count;
    }
    return 0;
}

static int check_table(struct stream *st, uint64_t end)
{
    for (uint64_t s = st->slot; s < end; s++) {
        if (!owner_valid(st->nodes, st->h->node_count, st->table[s]))
            return SHMRING_EBADINDEX;
    }
    st->slot = end;
    return 0;
}

/* Checks every entry that lies entirely below byte END (hashed by now), in the
 * order of the sections. */
static void check_below(struct stream *st, uint64_t end)
{
    const struct snapshot_header *h = st->h;
    if (st->err != 0)
        return;
    if (shmring__algorithm_has_table(h->algorithm)) {
        st->err = check_table(st, entries_below(&h->table, end, sizeof(uint32_t)));
        return;
    }
    /* No up nodes: the header check made sure that there are no points, no bucket
     * index and no answers either, so there is nothing to read (buckets[0] would be
     * out of bounds). */
    if (h->point_count == 0)
        return;
    st->err = check_points(st, entries_below(&h->points, end, sizeof(*st->points)));
    if (st->err == 0)
        st->err = check_buckets(st, entries_below(&h->buckets, end, sizeof(uint32_t)));
    if (st->err == 0)
        st->err = check_answers(st, entries_below(&h->answers, end, sizeof(uint64_t)));
}

/*
 * Hashes the buffer as the builder did (with the checksum field read as zero),
 * checking the lookup structures as it goes, after the nodes (FIRST_ERR: their
 * result). Returns ECHECKSUM if the checksum differs, else the first problem.
 */
static int check_stream(const void *buffer, const struct snapshot_header *h,
                        int first_err)
{
    struct stream st = {
        .buffer = buffer,
        .h = h,
        .nodes = snapshot_section_at(buffer, &h->nodes),
        .points = snapshot_section_at(buffer, &h->points),
        .buckets = snapshot_section_at(buffer, &h->buckets),
        .answers = snapshot_section_at(buffer, &h->answers),
        .table = snapshot_section_at(buffer, &h->table),
        .err = first_err,
    };
    if (h->point_count > 0)
        shmring__answer_cursor_start(&st.answer_cursor, st.points, h->point_count,
                                     h->answer_bits);
    struct snapshot_header zeroed = *h;
    zeroed.checksum = 0;
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, &zeroed, sizeof(zeroed));
    const unsigned char *bytes = buffer;
    for (uint64_t at = sizeof(zeroed); at < h->total_size;) {
        uint64_t end =
            h->total_size - at > STREAM_CHUNK ? at + STREAM_CHUNK : h->total_size;
        XXH3_64bits_update(&state, bytes + at, end - at);
        check_below(&st, end);
        at = end;
    }
    if (XXH3_64bits_digest(&state) != h->checksum)
        return SHMRING_ECHECKSUM;
    return st.err;
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
    if (err == 0)
        err = check_stream(buffer, h, check_nodes(buffer, h));
    return err;
}
