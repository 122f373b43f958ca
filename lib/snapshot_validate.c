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
    /* A newer format, or a feature or a minimum reader this release does not know,
     * is a newer writer's version: refused with codes of their own, so that the
     * reader's status can say that it is too old, not that the ring is damaged. */
    if (h->format_version > SNAPSHOT_FORMAT_VERSION)
        return SHMRING_ENEWFORMAT;
    if (h->format_version < SNAPSHOT_FORMAT_OLDEST ||
        h->header_size != sizeof(struct snapshot_header))
        return SHMRING_EFORMAT;
    if (h->format_version == SNAPSHOT_FORMAT_OLDEST) {
        /* Readers of format 3 ignore these fields: a writer must never set them
         * there, since such a reader would answer without the feature. */
        if (h->features != 0 || h->min_reader != 0)
            return SHMRING_EFORMAT;
    } else {
        if ((h->features & ~SNAPSHOT_FEATURES_KNOWN) != 0)
            return SHMRING_EFEATURE;
        if (h->min_reader > SNAPSHOT_VERSION_SELF)
            return SHMRING_ENEWFORMAT;
    }
    if (h->total_size != size)
        return SHMRING_ETRUNCATED;

    shmring_params_t params = shmring__snapshot_params(h);
    if (shmring_params_check(&params) != 0)
        return SHMRING_EBADPARAMS;
    if (h->node_count > SHMRING_NODES_MAX || h->up_count > h->node_count ||
        h->point_count > SHMRING_POINTS_MAX || h->table_size > SHMRING_POINTS_MAX ||
        h->bucket_bits > SNAPSHOT_BUCKET_BITS_MAX)
        return SHMRING_EBADPARAMS;

    enum placement_lookup lookup = shmring__algorithm_valid(h->algorithm)->lookup;
    if (lookup == PLACEMENT_LOOKUP_NODES) {
        /* Answered from the node table alone: no points, no table. */
        if (h->point_count != 0 || h->table_size != 0 || h->bucket_bits != 0 ||
            h->answer_bits != 0)
            return SHMRING_EBADPARAMS;
    } else if (lookup == PLACEMENT_LOOKUP_TABLE) {
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

/* The name of NODE, or NULL if its offset and length leave the strings section:
 * read once, so that a field another process rewrites after string_valid() cannot
 * send the comparison out of bounds. */
static const char *node_name(const struct snapshot_node *node, const char *strings,
                             uint64_t strings_size, uint16_t *length)
{
    uint32_t offset = node->name_offset;
    *length = node->name_length;
    return in_bounds(offset, *length, strings_size) ? strings + offset : NULL;
}

/*
 * Node names are unique, as in every node set: tools find nodes by name, and
 * shmring_nodeset_from_snapshot() rebuilds a node set from a version. One pass
 * through an open-addressing table of node indexes keyed by the name's xxh3, at
 * least twice as large as the node count, instead of a sort of strings.
 */
static int check_names_unique(const struct snapshot_node *nodes, uint32_t count,
                              const char *strings, uint64_t strings_size)
{
    if (count < 2)
        return 0;
    size_t capacity = 2;
    while (capacity < (size_t)count * 2)
        capacity <<= 1;
    uint32_t *slots = malloc(capacity * sizeof(*slots));
    if (slots == NULL)
        return SHMRING_ENOMEM;
    /* All ones: an empty slot (node indexes stay below SHMRING_NODES_MAX). */
    memset(slots, 0xff, capacity * sizeof(*slots));
    int err = 0;
    for (uint32_t i = 0; i < count && err == 0; i++) {
        uint16_t length, other_length;
        const char *name = node_name(&nodes[i], strings, strings_size, &length);
        if (name == NULL) {
            err = SHMRING_EBADSTRING;
            break;
        }
        size_t slot = (size_t)XXH3_64bits(name, length) & (capacity - 1);
        while (slots[slot] != UINT32_MAX) {
            const char *other =
                node_name(&nodes[slots[slot]], strings, strings_size, &other_length);
            if (other == NULL) {
                err = SHMRING_EBADSTRING;
                break;
            }
            if (other_length == length && memcmp(other, name, length) == 0) {
                err = SHMRING_EBADNODE;
                break;
            }
            slot = (slot + 1) & (capacity - 1);
        }
        slots[slot] = i;
    }
    free(slots);
    return err;
}

/*
 * Checks the nodes, and marks in USABLE (node_count + 1 bytes) which may own a point
 * or a slot: 1 for an up node, 0 for the others and for the entry past the last,
 * which stands for every index out of range.
 */
static int check_nodes(const void *buffer, const struct snapshot_header *h,
                       uint8_t *usable)
{
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    const char *strings = snapshot_section_at(buffer, &h->strings);
    uint32_t up = 0;
    /* Ids in increasing order are unique without a sort. The builder writes them so
     * (ids are given out in order), so only other writers' snapshots pay for one. */
    bool ascending = true;
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
        usable[i] = n->state == SHMRING_STATE_UP;
        up += n->state == SHMRING_STATE_UP;
        ascending &= i == 0 || n->id > nodes[i - 1].id;
    }
    usable[h->node_count] = 0;
    if (up != h->up_count)
        return SHMRING_EBADNODE;
    int names = check_names_unique(nodes, h->node_count, strings, h->strings.size);
    if (names != 0)
        return names;

    /* Workers index connection pools by id: ids must be unique. */
    if (h->node_count < 2 || ascending)
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

/*
 * The checks of the points, the bucket index, the answers and the maglev table run
 * in one pass with the checksum: the buffer is hashed a chunk at a time, and each
 * chunk's entries are checked right after, while they are in the cache. The bucket
 * index and the answers are checked with the points they describe, as those are
 * hashed: a bucket's check and its answer's both read its points, which are then
 * in the cache, and the index and the answers, a third of the points' size, are
 * what is read from memory twice. The checksum is always finished, so that a
 * damaged buffer is reported as such before anything its damage broke; then the
 * first problem in the order of the sections (the points before the index and the
 * answers).
 */
#define STREAM_CHUNK (64u * 1024u)

struct stream {
    const struct snapshot_header *h;
    /* See check_nodes(). */
    const uint8_t *usable;
    const struct snapshot_point *points;
    const uint32_t *buckets;
    const uint64_t *answers;
    const uint32_t *table;
    /* The next entry of each kind to check. */
    uint64_t point, bucket, slot;
    /* The first point of the next bucket, as its predecessor's check read it. */
    uint32_t bucket_first;
    /* What the points checked last give the buckets that start at them (see
     * fill_candidates()): entry j is point candidates_base + j's. */
    struct candidates *candidates;
    uint32_t candidates_base, candidates_count;
    /* Problems found so far, accumulated rather than branched on: every entry is
     * checked whatever came before it. */
    bool bad_points, bad_index;
    /* The OR of each stored answer XOR the derived one: 0 while all agree. */
    uint64_t answers_differ;
    /* The nodes' problem: once set, only the checksum goes on. */
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

/* Whether node index INDEX (any value) may own a point or a slot. */
static inline bool index_usable(const struct stream *st, uint32_t index)
{
    uint32_t node_count = st->h->node_count;
    return st->usable[index < node_count ? index : node_count];
}

/* Points [st->point, END) are sorted, and each belongs to an up node. */
static void check_points(struct stream *st, uint64_t end)
{
    const struct snapshot_point *points = st->points;
    uint64_t i = st->point;
    if (i >= end)
        return;
    bool bad = !index_usable(st, points[i].node_index);
    if (i > 0)
        bad |= points[i].point < points[i - 1].point;
    for (i++; i < end; i++)
        bad |= (points[i].point < points[i - 1].point) |
               (!index_usable(st, points[i].node_index));
    st->bad_points |= bad;
    st->point = end;
}

/*
 * What a point I gives the buckets that may start at it, derived once per point:
 * the answers of a bucket of 0, 1 and 2 points that starts at I, and the bounds an
 * index entry of value I must lie in, LOW <= b <= HIGH: one more than the top bits
 * of point I - 1 (0 for I == 0) and the top bits of point I (the bucket count for
 * I == point_count). A bucket of at most two points then costs one read of each,
 * where deriving its answer reads three points and selects among them.
 */
struct candidates {
    uint64_t answer[3];
    uint32_t low, high;
};

/* Candidates of a chunk's points, with the two before them (a bucket of up to two
 * points may start there and end in the chunk) and the one past them. */
#define CANDIDATES_MAX (STREAM_CHUNK / sizeof(struct snapshot_point) + 3)
/* Sections start on SNAPSHOT_ALIGN boundaries and chunks are a whole number of
 * points apart, so a chunk completes at most STREAM_CHUNK / 16 points. */
_Static_assert(STREAM_CHUNK % sizeof(struct snapshot_point) == 0 &&
                   SNAPSHOT_ALIGN % sizeof(struct snapshot_point) == 0,
               "a chunk completes at most CANDIDATES_MAX - 3 points");

/* The top bits of point I, or for I at or past the point count (any value) the
 * bucket count: where the last bucket ends. */
static inline uint32_t candidate_high(const struct snapshot_header *h,
                                      const struct snapshot_point *points, uint64_t i)
{
    if (i >= h->point_count)
        return (uint32_t)(UINT64_C(1) << h->bucket_bits);
    return (uint32_t)(points[i].point >> (64 - h->bucket_bits));
}

/* The first two points of a window of three that slides along the points: each
 * point is read, and its top and split bits taken, once. */
struct window {
    uint64_t owner0, split0, owner1, split1;
    uint32_t top0, top1;
};

/* Slides W one point on: POINT becomes its second, the first drops out. */
static inline void window_push(struct window *w, const struct snapshot_point *point,
                               unsigned bits)
{
    w->owner0 = w->owner1, w->split0 = w->split1, w->top0 = w->top1;
    w->owner1 = point->node_index;
    w->split1 = shmring__answer_split_bits(point->point, bits);
    w->top1 = (uint32_t)(point->point >> (64 - bits));
}

/* The candidates of W's first point, whose bucket index entry lies in [LOW, HIGH];
 * OWNER2 is the third point's owner (a bucket ends before its third point). */
static inline void candidates_set(struct candidates *c, uint32_t low, uint32_t high,
                                  const struct window *w, uint64_t owner2)
{
    c->answer[0] = shmring__answer_of_points(0, w->owner0, w->split0, w->owner1,
                                             w->split1, w->owner0);
    c->answer[1] = shmring__answer_of_points(1, w->owner0, w->split0, w->owner1,
                                             w->split1, w->owner1);
    c->answer[2] =
        shmring__answer_of_points(2, w->owner0, w->split0, w->owner1, w->split1, owner2);
    c->low = low;
    c->high = high;
}

/*
 * Derives the candidates of points [FROM, TO) and of the two before, and of TO
 * itself once all points are checked (TO == point_count: the last bucket ends
 * there). Every read is in bounds whatever the points hold; check_index() reads
 * candidates only at indexes inside what was filled.
 */
static void fill_candidates(struct stream *st, uint64_t from, uint64_t to)
{
    const struct snapshot_header *h = st->h;
    const struct snapshot_point *points = st->points;
    uint32_t point_count = h->point_count;
    unsigned bits = h->bucket_bits;
    uint32_t bucket_count = (uint32_t)(UINT64_C(1) << bits);
    uint64_t base = from >= 2 ? from - 2 : 0;
    uint64_t last = to == point_count ? to : to - 1;
    uint32_t low = base == 0 ? 0 : candidate_high(h, points, base - 1) + 1;
    /* The window starts on I and I + 1, which wrap to point 0 at the point count as
     * a bucket's next point does (the candidates past the end are never used). */
    struct window w = {0};
    window_push(&w, &points[base < point_count ? base : 0], bits);
    window_push(&w, &points[base + 1 < point_count ? base + 1 : 0], bits);
    struct candidates *c = st->candidates;
    /* Points whose window does not wrap, then the last two and the end, apart:
     * the first loop, nearly all of them, has no select to make. */
    uint64_t straight = point_count > 2 ? point_count - 2 : 0;
    if (straight > last + 1)
        straight = last + 1;
    uint64_t i = base;
    for (; i < straight; i++, c++) {
        candidates_set(c, low, w.top0, &w, points[i + 2].node_index);
        low = w.top0 + 1;
        window_push(&w, &points[i + 2], bits);
    }
    for (; i <= last; i++, c++) {
        const struct snapshot_point *third = &points[i + 2 < point_count ? i + 2 : 0];
        uint32_t high = i < point_count ? w.top0 : bucket_count;
        candidates_set(c, low, high, &w, third->node_index);
        low = high + 1;
        window_push(&w, third, bits);
    }
    st->candidates_base = (uint32_t)base;
    st->candidates_count = (uint32_t)(last - base + 1);
}

/*
 * The bucket index must be exactly the one the builder derives from the points
 * (sorted, or EBADPOINTS wins): buckets[b] counts the points whose top bits are below
 * b. It is, if buckets[0] is 0 and every entry b > 0, of value I, lies between the
 * candidates' bounds of point I: points before I have top bits below b and the
 * others not. Then every lookup's scan starts and ends where it should, and each
 * bucket's answer is the one its range defines.
 *
 * Buckets are checked as far as the points checked so far reach: bucket b needs its
 * points and the one after them (whose owner its answer may hold). Each entry of the
 * index is read once, as the end of one bucket and then carried as the start of the
 * next, so the ranges derived from are disjoint whatever the index holds (and
 * another process may change it meanwhile): a range out of order or out of bounds
 * is derived as an empty one instead, and the derivation reads each point a bounded
 * number of times.
 */
static __attribute__((noinline)) void check_index(struct stream *st)
{
    const struct snapshot_header *h = st->h;
    const struct snapshot_point *points = st->points;
    const uint32_t *buckets = st->buckets;
    const uint64_t *answers = st->answers;
    const struct candidates *candidates = st->candidates;
    uint32_t base = st->candidates_base, count_filled = st->candidates_count;
    uint32_t point_count = h->point_count;
    unsigned bits = h->bucket_bits;
    uint64_t bucket_count = UINT64_C(1) << bits;
    /* A bucket may end (exclusive) at or below the last point checked; once all are,
     * anywhere. */
    uint64_t end_limit = st->point == point_count ? UINT64_MAX : st->point;
    uint32_t first = st->bucket_first;
    uint64_t b = st->bucket;
    bool bad = false;
    uint64_t differ = 0;
    /* Bucket starts and ends relative to the candidates' first point: one
     * comparison each tells whether a candidate is there. */
    uint32_t from = first - base;
    for (; b < bucket_count; b++) {
        uint32_t next = buckets[b + 1];
        uint32_t to = next - base;
        /* Both ends among the candidates (then the range is in order and ends
         * before end_limit) and at most two points: two reads. */
        if (__builtin_expect(
                (to - from <= 2) & (from < count_filled) & (to < count_filled), 1)) {
            const struct candidates *end = &candidates[to];
            bad |= ((uint32_t)(b + 1) < end->low) | ((uint32_t)(b + 1) > end->high);
            differ |= candidates[from].answer[to - from] ^ answers[b];
        } else {
            if (next >= end_limit)
                break;
            /* More points, or a range out of order or out of bounds: the same
             * checks from the points, whose reads stay in bounds whatever the
             * values (a bad range fails anyway, and its answer is derived as an
             * empty one's). */
            first = from + base;
            bool disordered = (first > next) | (next > point_count);
            uint32_t low = next == 0 ? 0 : candidate_high(h, points, next - 1) + 1;
            uint32_t high = candidate_high(h, points, next);
            bad |= disordered | ((uint32_t)(b + 1) < low) | ((uint32_t)(b + 1) > high);
            uint32_t keep = (uint32_t)disordered - 1u;
            differ |= shmring__bucket_answer(points, point_count, bits, first & keep,
                                             next & keep) ^
                      answers[b];
        }
        from = to;
    }
    first = from + base;
    if (b == bucket_count && st->bucket < bucket_count) {
        /* The entry past the last bucket: the index ends at the point count, and the
         * answer past the last is the wrap's. */
        bad |= first != point_count;
        differ |=
            shmring__bucket_answer(points, point_count, bits, point_count, point_count) ^
            answers[bucket_count];
    }
    st->bucket = b;
    st->bucket_first = first;
    st->bad_index |= bad;
    st->answers_differ |= differ;
}

static void check_table(struct stream *st, uint64_t end)
{
    const uint32_t *table = st->table;
    uint32_t node_count = st->h->node_count;
    bool bad = false;
    if (st->h->up_count == node_count) {
        /* Every node is up: a slot is good when its index is in range, a test that
         * compilers vectorize (into an integer accumulator, not a bool), where a
         * lookup of each slot's node cannot be. */
        uint32_t out_of_range = 0;
        for (uint64_t s = st->slot; s < end; s++)
            out_of_range |= table[s] >= node_count;
        bad = out_of_range != 0;
    } else {
        for (uint64_t s = st->slot; s < end; s++)
            bad |= !index_usable(st, table[s]);
    }
    st->bad_index |= bad;
    st->slot = end;
}

/* Checks every entry that lies entirely below byte END (hashed by now), in the
 * order of the sections. */
static void check_below(struct stream *st, uint64_t end)
{
    const struct snapshot_header *h = st->h;
    if (st->err != 0)
        return;
    if (shmring__algorithm_has_table(h->algorithm)) {
        check_table(st, entries_below(&h->table, end, sizeof(uint32_t)));
        return;
    }
    /* No up nodes: the header check made sure that there are no points, no bucket
     * index and no answers either, so there is nothing to read (buckets[0] would be
     * out of bounds). */
    if (h->point_count == 0)
        return;
    uint64_t from = st->point;
    check_points(st, entries_below(&h->points, end, sizeof(*st->points)));
    if (st->point == from)
        return;
    fill_candidates(st, from, st->point);
    check_index(st);
}

/*
 * Hashes the buffer as the builder did (with the checksum field read as zero),
 * checking the lookup structures as it goes, after the nodes (FIRST_ERR: their
 * result; USABLE: see check_nodes()). Returns ECHECKSUM if the checksum differs, else
 * the first problem.
 */
static int check_stream(const void *buffer, const struct snapshot_header *h,
                        const uint8_t *usable, int first_err)
{
    struct stream st = {
        .h = h,
        .usable = usable,
        .points = snapshot_section_at(buffer, &h->points),
        .buckets = snapshot_section_at(buffer, &h->buckets),
        .answers = snapshot_section_at(buffer, &h->answers),
        .table = snapshot_section_at(buffer, &h->table),
        .err = first_err,
    };
    if (h->point_count > 0 && first_err == 0) {
        st.bucket_first = st.buckets[0];
        st.bad_index = st.bucket_first != 0;
        st.candidates = malloc(CANDIDATES_MAX * sizeof(*st.candidates));
        if (st.candidates == NULL)
            return SHMRING_ENOMEM;
    }
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
    free(st.candidates);
    if (XXH3_64bits_digest(&state) != h->checksum)
        return SHMRING_ECHECKSUM;
    if (st.err != 0)
        return st.err;
    if (st.bad_points)
        return SHMRING_EBADPOINTS;
    if (st.bad_index || st.answers_differ != 0)
        return SHMRING_EBADINDEX;
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
    if (err != 0)
        return err;
    uint8_t *usable = malloc((size_t)h->node_count + 1);
    if (usable == NULL)
        return SHMRING_ENOMEM;
    err = check_stream(buffer, h, usable, check_nodes(buffer, h, usable));
    free(usable);
    return err;
}
