/*
 * Tests of the snapshot validator (lib/snapshot_validate.c): every refusal with its
 * exact code, bit flips and garbage, and safe lookups in whatever it accepts. The
 * builder's limits and the round trip back to a node set are check_snapshot_build's.
 *
 * Buffers under test sit at the very end of a mapping that is followed by an
 * inaccessible page, so a read past the end crashes the test instead of passing
 * unnoticed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <xxhash.h>

#include "snapshot_handle_internal.h"
#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_support.h"

/* ---- guarded buffers ---- */

struct guarded {
    unsigned char *mapping;
    size_t mapping_size;
    /* SIZE bytes, 8-byte aligned, ending at most 7 bytes before the guard page. */
    unsigned char *data;
    size_t size;
    /* DATA as a snapshot read in place (the guard page then catches any read past
     * its end), for the calls that take one once validate() has accepted DATA. */
    shmring_snapshot_t in_place;
};

static struct guarded guarded_new(const void *bytes, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t usable = (size + 8 + page - 1) / page * page;
    struct guarded g;
    g.mapping_size = usable + page;
    g.mapping = mmap(NULL, g.mapping_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(g.mapping, MAP_FAILED);
    ck_assert_int_eq(mprotect(g.mapping + usable, page, PROT_NONE), 0);
    g.data = g.mapping + ((usable - size) & ~(size_t)7);
    g.size = size;
    g.in_place = (shmring_snapshot_t){.buffer = g.data, .size = size};
    if (size > 0)
        memcpy(g.data, bytes, size);
    return g;
}

static void guarded_free(struct guarded *g)
{
    munmap(g->mapping, g->mapping_size);
}

static struct snapshot_header *header_of(struct guarded *g)
{
    return (struct snapshot_header *)(void *)g->data;
}

/* Recomputes the checksum the way the builder does, so that a tampered buffer gets
 * past the checksum and reaches the check under test. */
static void reseal(struct guarded *g)
{
    struct snapshot_header *h = header_of(g);
    h->checksum = 0;
    h->checksum = XXH3_64bits(g->data, g->size);
}

static int validate(const struct guarded *g)
{
    return shmring__snapshot_validate(g->data, g->size);
}

static struct guarded guarded_build(const shmring_nodeset_t *set)
{
    size_t size;
    void *buffer = test_build(set, &size);
    struct guarded g = guarded_new(buffer, size);
    free(buffer);
    ck_assert_int_eq(validate(&g), 0);
    return g;
}

static struct guarded small_ring(void)
{
    shmring_nodeset_t *set = test_small_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 0);
    struct guarded g = guarded_build(set);
    shmring_nodeset_free(set);
    return g;
}

/* Maglev with a 7-slot table: small enough to flip every bit of. */
static struct guarded small_maglev(void)
{
    shmring_nodeset_t *set =
        test_small_set(SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3, 7);
    struct guarded g = guarded_build(set);
    shmring_nodeset_free(set);
    return g;
}

static struct guarded small_ketama(void)
{
    shmring_nodeset_t *set =
        test_small_set(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 0);
    struct guarded g = guarded_build(set);
    shmring_nodeset_free(set);
    return g;
}

static struct snapshot_node *node_at(struct guarded *g, size_t index)
{
    return (struct snapshot_node *)(void *)(g->data + header_of(g)->nodes.offset) + index;
}

static char *string_at(struct guarded *g, size_t offset)
{
    return (char *)(g->data + header_of(g)->strings.offset + offset);
}

static struct snapshot_point *points_of(struct guarded *g)
{
    return (struct snapshot_point *)(void *)(g->data + header_of(g)->points.offset);
}

static struct snapshot_point *point_at(struct guarded *g, size_t index)
{
    return points_of(g) + index;
}

static uint32_t *buckets_of(struct guarded *g)
{
    return (uint32_t *)(void *)(g->data + header_of(g)->buckets.offset);
}

static uint64_t *answers_of(struct guarded *g)
{
    return (uint64_t *)(void *)(g->data + header_of(g)->answers.offset);
}

/* The last of the points [I, END) of point I's owner. */
static uint32_t last_of_run(const struct snapshot_point *p, uint32_t i, uint32_t end)
{
    while (i + 1 < end && p[i + 1].node_index == p[i].node_index)
        i++;
    return i;
}

/*
 * The answer of answer bucket A as the format defines it (snapshot_internal.h),
 * written here from the definition, independently of the builder's code, with the
 * bit layout spelled out: the owner of the first point at or after the bucket's
 * first key (point 0 past the last) in the top 20 bits, the 11 split bits of the
 * first run's last point (0x7ff: no point) below them; then, for at most two runs,
 * the owner after the first run (the second run's or the next point's), the second
 * run's split (0x7ff: no second run) and a zero bit; for more runs, the index of the
 * bucket's first point and a one bit.
 */
static uint64_t reference_answer(struct guarded *g, uint64_t a)
{
    const struct snapshot_header *h = header_of(g);
    const struct snapshot_point *p = points_of(g);
    unsigned bits = h->answer_bits;
    uint32_t count = h->point_count;
    uint32_t first = 0;
    while (first < count && p[first].point >> (64 - bits) < a)
        first++;
    uint32_t end = first;
    while (end < count && p[end].point >> (64 - bits) == a)
        end++;
    uint64_t owner = p[first < count ? first : 0].node_index;
    uint64_t next_owner = p[end < count ? end : 0].node_index;
#define SPLIT_OF(i) ((p[i].point << bits) >> 53)
    if (first == end)
        return owner << 44 | UINT64_C(0x7ff) << 33 | owner << 13 | UINT64_C(0x7ff) << 2;
    uint32_t last1 = last_of_run(p, first, end);
    if (last1 + 1 == end)
        return owner << 44 | SPLIT_OF(last1) << 33 | next_owner << 13 |
               UINT64_C(0x7ff) << 2;
    uint32_t last2 = last_of_run(p, last1 + 1, end);
    if (last2 + 1 == end)
        return owner << 44 | SPLIT_OF(last1) << 33 |
               (uint64_t)p[last1 + 1].node_index << 13 | SPLIT_OF(last2) << 2;
    return owner << 44 | SPLIT_OF(last1) << 33 | (uint64_t)first << 1 | 1;
#undef SPLIT_OF
}

/* Rewrites the answers from the points, as a writer that follows the format would
 * after editing them, so that a test reaches the checks behind the answers. */
static void rederive_answers(struct guarded *g)
{
    uint64_t *answers = answers_of(g);
    for (uint64_t a = 0; a <= UINT64_C(1) << header_of(g)->answer_bits; a++)
        answers[a] = reference_answer(g, a);
}

/* The bucket index the format derives from the points, rewritten likewise. */
static void rederive_buckets(struct guarded *g)
{
    const struct snapshot_header *h = header_of(g);
    const struct snapshot_point *p = points_of(g);
    uint32_t *buckets = buckets_of(g);
    uint32_t i = 0;
    for (uint64_t b = 0; b <= UINT64_C(1) << h->bucket_bits; b++) {
        while (i < h->point_count && p[i].point >> (64 - h->bucket_bits) < b)
            i++;
        buckets[b] = i;
    }
}

/* The owner of HASH by the definition: the first point >= HASH, wrapping, found by
 * a scan of every point. */
static uint32_t reference_owner(struct guarded *g, uint64_t hash)
{
    const struct snapshot_point *p = points_of(g);
    uint32_t count = header_of(g)->point_count, i = 0;
    while (i < count && p[i].point < hash)
        i++;
    return p[i < count ? i : 0].node_index;
}

static uint32_t *slot_at(struct guarded *g, size_t index)
{
    return (uint32_t *)(void *)(g->data + header_of(g)->table.offset) + index;
}

/* ---- header ---- */

START_TEST(valid_snapshot_and_info)
{
    struct guarded g = small_ring();
    shmring_snapshot_info_t info;
    shmring_snapshot_info(&g.in_place, &info);
    ck_assert_int_eq(info.params.algorithm, SHMRING_ALGORITHM_RING);
    ck_assert_int_eq(info.params.hash, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(info.params.vnodes, 4);
    ck_assert_uint_eq(info.node_count, 4);
    ck_assert_uint_eq(info.up_count, 3);
    ck_assert_uint_eq(info.point_count, 16);
    ck_assert_uint_eq(info.next_node_id, 4);
    ck_assert_uint_eq(info.size, g.size);
    ck_assert_uint_eq(g.size % 64, 0);
    struct snapshot_header *h = header_of(&g);
    ck_assert_uint_eq(h->header_size, 256);
    ck_assert_uint_eq(h->nodes.offset, 256);
    ck_assert_uint_eq(h->bucket_bits, 4);
    guarded_free(&g);
}
END_TEST

START_TEST(bad_magic)
{
    struct guarded g = small_ring();
    header_of(&g)->magic ^= 1;
    ck_assert_int_eq(validate(&g), SHMRING_EBADMAGIC);
    header_of(&g)->magic = 0;
    ck_assert_int_eq(validate(&g), SHMRING_EBADMAGIC);
    guarded_free(&g);
}
END_TEST

START_TEST(bad_format)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    /* A newer writer's format has a code of its own (docs/upgrading.md). */
    h->format_version = SNAPSHOT_FORMAT_VERSION + 1;
    ck_assert_int_eq(validate(&g), SHMRING_ENEWFORMAT);
    h->format_version = UINT32_MAX;
    ck_assert_int_eq(validate(&g), SHMRING_ENEWFORMAT);
    /* Version 1 had no answers and version 2 answers of another layout: a reader of
     * versions 3 and 4 must take neither. */
    h->format_version = 2;
    ck_assert_int_eq(validate(&g), SHMRING_EFORMAT);
    h->format_version = 1;
    ck_assert_int_eq(validate(&g), SHMRING_EFORMAT);
    h->format_version = 0;
    ck_assert_int_eq(validate(&g), SHMRING_EFORMAT);
    h->format_version = SNAPSHOT_FORMAT_OLDEST;
    ck_assert_int_eq(validate(&g), 0);
    h->header_size = 255;
    ck_assert_int_eq(validate(&g), SHMRING_EFORMAT);
    h->header_size = 512;
    ck_assert_int_eq(validate(&g), SHMRING_EFORMAT);
    guarded_free(&g);
}
END_TEST

/*
 * Format 3 is what the builder writes for a ring that needs nothing newer, and its
 * readers (0.3.0 and older) ignore the features and min_reader fields, so they must
 * be zero there; format 4 has them checked: an unknown feature is SHMRING_EFEATURE, a
 * minimum reader after this release SHMRING_ENEWFORMAT.
 */
START_TEST(format_features)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    ck_assert_uint_eq(h->format_version, SNAPSHOT_FORMAT_OLDEST);
    ck_assert_uint_eq(h->features, 0);
    ck_assert_uint_eq(h->min_reader, 0);
    h->features = 1;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EFORMAT);
    h->features = 0;
    h->min_reader = SNAPSHOT_VERSION_FORMAT4;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EFORMAT);

    h->format_version = SNAPSHOT_FORMAT_VERSION;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    for (unsigned bit = 0; bit < 32; bit++) {
        h->features = UINT32_C(1) << bit;
        reseal(&g);
        ck_assert_int_eq(validate(&g),
                         (SNAPSHOT_FEATURES_KNOWN & h->features) ? 0 : SHMRING_EFEATURE);
    }
    h->features = 0;
    h->min_reader = SNAPSHOT_VERSION_SELF;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    h->min_reader = SNAPSHOT_VERSION_SELF + 1;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_ENEWFORMAT);
    h->min_reader = SNAPSHOT_VERSION_CODE(1, 0, 0);
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_ENEWFORMAT);
    guarded_free(&g);
}
END_TEST

/* A node set published for readers of 0.4 on is format 4, and keeps that minimum
 * when it is read back from the snapshot; 0.0 goes back to format 3. */
START_TEST(min_reader_format)
{
    shmring_nodeset_t *set = test_small_set(SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3, 0);
    ck_assert_int_eq(shmring_nodeset_set_min_reader(set, 0, 4), 0);
    ck_assert_int_eq(shmring_nodeset_set_min_reader(set, 0, SHMRING_VERSION_MINOR + 1),
                     SHMRING_EINVAL);
    ck_assert_int_eq(shmring_nodeset_set_min_reader(set, SHMRING_VERSION_MAJOR + 1, 0),
                     SHMRING_EINVAL);
    struct guarded g = guarded_build(set);
    const struct snapshot_header *h = header_of(&g);
    ck_assert_uint_eq(h->format_version, 4);
    ck_assert_uint_eq(h->min_reader, SNAPSHOT_VERSION_CODE(0, 4, 0));
    shmring_nodeset_t *back;
    ck_assert_int_eq(shmring__nodeset_from_snapshot(g.data, &back), 0);
    unsigned major, minor;
    shmring_nodeset_min_reader(back, &major, &minor);
    ck_assert_uint_eq(major, 0);
    ck_assert_uint_eq(minor, 4);
    ck_assert_int_eq(shmring_nodeset_set_min_reader(back, 0, 0), 0);
    struct guarded oldest = guarded_build(back);
    ck_assert_uint_eq(header_of(&oldest)->format_version, 3);
    ck_assert_uint_eq(header_of(&oldest)->min_reader, 0);
    guarded_free(&oldest);
    shmring_nodeset_free(back);
    guarded_free(&g);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(other_byte_order)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    h->byte_order = __builtin_bswap32(SNAPSHOT_BYTE_ORDER_MARK);
    ck_assert_int_eq(validate(&g), SHMRING_EBYTEORDER);
    h->byte_order = 0;
    ck_assert_int_eq(validate(&g), SHMRING_EBYTEORDER);

    /* What a writer of the other byte order really produces: every field swapped,
     * the magic included. */
    h->byte_order = __builtin_bswap32(SNAPSHOT_BYTE_ORDER_MARK);
    h->magic = __builtin_bswap64(SNAPSHOT_MAGIC);
    h->format_version = __builtin_bswap32(SNAPSHOT_FORMAT_VERSION);
    h->total_size = __builtin_bswap64(h->total_size);
    ck_assert_int_eq(validate(&g), SHMRING_EBYTEORDER);
    guarded_free(&g);
}
END_TEST

START_TEST(truncated_and_extended)
{
    struct guarded g = small_ring();
    ck_assert_int_eq(shmring__snapshot_validate(g.data, 0), SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring__snapshot_validate(g.data, 255), SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring__snapshot_validate(NULL, g.size), SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring__snapshot_validate(g.data, g.size - 1), SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring__snapshot_validate(g.data, g.size - 64), SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring__snapshot_validate(g.data, 256), SHMRING_ETRUNCATED);

    /* The same bytes followed by more bytes. */
    unsigned char *longer = calloc(1, g.size + 64);
    ck_assert_ptr_nonnull(longer);
    memcpy(longer, g.data, g.size);
    struct guarded extended = guarded_new(longer, g.size + 64);
    ck_assert_int_eq(validate(&extended), SHMRING_ETRUNCATED);
    /* A header that claims the longer size is consistent again: bytes after the last
     * section are covered by the checksum, and nothing reads them. */
    header_of(&extended)->total_size = g.size + 64;
    reseal(&extended);
    ck_assert_int_eq(validate(&extended), 0);
    free(longer);
    guarded_free(&extended);

    /* total_size disagreeing with the size given. */
    header_of(&g)->total_size = g.size + 64;
    ck_assert_int_eq(validate(&g), SHMRING_ETRUNCATED);
    header_of(&g)->total_size = g.size - 64;
    ck_assert_int_eq(validate(&g), SHMRING_ETRUNCATED);
    guarded_free(&g);
}
END_TEST

START_TEST(misaligned_buffer)
{
    struct guarded g = small_ring();
    unsigned char *copy = malloc(g.size + 8);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy + 4, g.data, g.size);
    ck_assert_int_eq(shmring__snapshot_validate(copy + 4, g.size), SHMRING_EINVAL);
    free(copy);
    guarded_free(&g);
}
END_TEST

/* ---- sections ---- */

START_TEST(section_misaligned)
{
    struct guarded g = small_ring();
    header_of(&g)->strings.offset += 8;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
    g = small_ring();
    header_of(&g)->points.offset += 1;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
}
END_TEST

START_TEST(section_overlapping)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    h->points.offset = h->strings.offset;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);

    /* A section inside the header. */
    g = small_ring();
    header_of(&g)->nodes.offset = 192;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);

    /* Sections out of their fixed order. */
    g = small_ring();
    h = header_of(&g);
    struct snapshot_section points = h->points;
    h->points.offset = h->buckets.offset;
    h->buckets.offset = points.offset;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
}
END_TEST

START_TEST(section_out_of_bounds)
{
    struct guarded g = small_ring();
    header_of(&g)->table.offset = g.size + 64;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);

    /* Starts inside, ends outside. */
    g = small_ring();
    header_of(&g)->buckets.offset = g.size - 64;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);

    /* Offsets so large that offset + size would wrap around to a small number. */
    g = small_ring();
    header_of(&g)->points.offset = UINT64_MAX & ~(uint64_t)63;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
    g = small_ring();
    header_of(&g)->table.offset = UINT64_MAX - 63;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);

    /* A string section that would run past the end. */
    g = small_ring();
    header_of(&g)->strings.size = UINT32_MAX;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    header_of(&g)->strings.size = UINT64_MAX;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
}
END_TEST

START_TEST(section_size_disagrees_with_count)
{
    struct guarded g = small_ring();
    header_of(&g)->nodes.size += sizeof(struct snapshot_node);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
    g = small_ring();
    header_of(&g)->points.size -= sizeof(struct snapshot_point);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
    g = small_ring();
    header_of(&g)->buckets.size += 4;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
    g = small_ring();
    header_of(&g)->table.size = 4;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
    g = small_maglev();
    header_of(&g)->table.size -= 4;
    ck_assert_int_eq(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);
}
END_TEST

/* ---- params ---- */

START_TEST(params_refused)
{
    struct {
        size_t field;
        size_t width;
        uint64_t value;
    } cases[] = {
        {offsetof(struct snapshot_header, algorithm), 1, 3},
        {offsetof(struct snapshot_header, algorithm), 1, 255},
        {offsetof(struct snapshot_header, hash), 1, 5},
        {offsetof(struct snapshot_header, vnodes), 4, 0},
        {offsetof(struct snapshot_header, vnodes), 4, 65536},
        {offsetof(struct snapshot_header, node_count), 4, SHMRING_NODES_MAX + 1},
        {offsetof(struct snapshot_header, up_count), 4, 5},
        {offsetof(struct snapshot_header, point_count), 4, SHMRING_POINTS_MAX + 1},
        {offsetof(struct snapshot_header, point_count), 4, 0},
        {offsetof(struct snapshot_header, bucket_bits), 4, SNAPSHOT_BUCKET_BITS_MAX + 1},
        {offsetof(struct snapshot_header, bucket_bits), 4, 0},
        {offsetof(struct snapshot_header, table_size), 4, 7},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct guarded g = small_ring();
        if (cases[i].width == 1)
            g.data[cases[i].field] = (uint8_t)cases[i].value;
        else
            memcpy(g.data + cases[i].field, &(uint32_t){(uint32_t)cases[i].value}, 4);
        reseal(&g);
        ck_assert_msg(validate(&g) == SHMRING_EBADPARAMS, "case %zu: %d", i,
                      validate(&g));
        guarded_free(&g);
    }
}
END_TEST

START_TEST(ketama_needs_md5)
{
    shmring_nodeset_t *set =
        test_small_set(SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 0);
    struct guarded g = guarded_build(set);
    header_of(&g)->hash = SHMRING_HASH_XXH3;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    header_of(&g)->hash = SHMRING_HASH_CRC32;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(maglev_params_refused)
{
    struct guarded g = small_maglev();
    header_of(&g)->table_size = 8; /* not prime */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);

    g = small_maglev();
    header_of(&g)->table_size = 2; /* prime, smaller than the 3 up nodes */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);

    g = small_maglev();
    header_of(&g)->point_count = 16;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);

    g = small_maglev();
    header_of(&g)->table_size = 0;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);

    /* The configured table size must be a valid parameter and, when the table was
     * built, the size in use. */
    g = small_maglev();
    ck_assert_uint_eq(header_of(&g)->table_size_param, 7);
    header_of(&g)->table_size_param = 11;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    header_of(&g)->table_size_param = 9;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    header_of(&g)->table_size_param = 0;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    guarded_free(&g);
    g = small_ring();
    header_of(&g)->table_size_param = 65536;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);
}
END_TEST

START_TEST(envoy_params_refused)
{
    /* envoy-maglev: the size in use is the configured one, 0 standing for 65537. */
    shmring_nodeset_t *set =
        test_small_set(SHMRING_ALGORITHM_ENVOY_MAGLEV, SHMRING_HASH_XXH64, 7);
    struct guarded g = guarded_build(set);
    shmring_nodeset_free(set);
    ck_assert_uint_eq(header_of(&g)->table_size, 7);
    header_of(&g)->table_size_param = 0;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    header_of(&g)->table_size_param = 11;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    header_of(&g)->table_size_param = 7;
    header_of(&g)->hash = SHMRING_HASH_XXH3;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);

    /* envoy-ring: ring sizes within Envoy's limits, the minimum at most the maximum. */
    set = test_small_set(SHMRING_ALGORITHM_ENVOY_RING, SHMRING_HASH_XXH64, 0);
    g = guarded_build(set);
    shmring_nodeset_free(set);
    header_of(&g)->min_ring_size_param = 20;
    header_of(&g)->max_ring_size_param = 10;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    header_of(&g)->min_ring_size_param = 0;
    header_of(&g)->max_ring_size_param = 8388609;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);
}
END_TEST

/* ---- checksum ---- */

START_TEST(checksum_mismatch)
{
    struct guarded g = small_ring();
    /* A byte of a name, a byte of padding between sections, the last byte. */
    size_t offsets[] = {header_of(&g)->strings.offset + 1,
                        header_of(&g)->nodes.offset + header_of(&g)->nodes.size,
                        g.size - 1};
    for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
        g.data[offsets[i]] ^= 0x10;
        ck_assert_int_eq(validate(&g), SHMRING_ECHECKSUM);
        g.data[offsets[i]] ^= 0x10;
        ck_assert_int_eq(validate(&g), 0);
    }
    header_of(&g)->checksum ^= UINT64_C(1) << 63;
    ck_assert_int_eq(validate(&g), SHMRING_ECHECKSUM);
    guarded_free(&g);
}
END_TEST

/* ---- nodes and strings ---- */

START_TEST(bad_nodes)
{
    struct guarded g = small_ring();
    node_at(&g, 1)->weight = 0;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    node_at(&g, 1)->weight = 65536;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    node_at(&g, 1)->weight = 65535;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0); /* weights are not checked against points */
    guarded_free(&g);

    g = small_ring();
    node_at(&g, 2)->state = 2;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    guarded_free(&g);

    g = small_ring();
    node_at(&g, 3)->id = node_at(&g, 0)->id; /* duplicate id */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    guarded_free(&g);

    /* Two nodes of one name: node 2, then the last node, given node 0's name. */
    for (size_t twin = 2; twin <= 3; twin++) {
        g = small_ring();
        node_at(&g, twin)->name_offset = node_at(&g, 0)->name_offset;
        node_at(&g, twin)->name_length = node_at(&g, 0)->name_length;
        reseal(&g);
        ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
        guarded_free(&g);
    }

    g = small_ring();
    node_at(&g, 3)->id = header_of(&g)->next_node_id; /* not below next_node_id */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    guarded_free(&g);

    /* up_count disagreeing with the states. */
    g = small_ring();
    header_of(&g)->up_count = 2;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    header_of(&g)->up_count = 4;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    guarded_free(&g);
}
END_TEST

/*
 * Ids need not be in node order (the builder writes them so, and the validator
 * then skips its sort): ids swapped between two nodes stay unique and pass, a
 * duplicate among out-of-order ids is still found, and the reader's id index of
 * such a snapshot is sorted.
 */
START_TEST(node_ids_out_of_order)
{
    struct guarded g = small_ring();
    uint32_t id0 = node_at(&g, 0)->id, id3 = node_at(&g, 3)->id;
    node_at(&g, 0)->id = id3;
    node_at(&g, 3)->id = id0;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    struct node_id_entry *index;
    ck_assert_int_eq(shmring__node_id_index(g.data, &index), 0);
    for (uint32_t i = 1; i < header_of(&g)->node_count; i++)
        ck_assert_uint_lt(index[i - 1].id, index[i].id);
    ck_assert_int_eq(shmring__node_id_find(index, header_of(&g)->node_count, id3), 0);
    ck_assert_int_eq(shmring__node_id_find(index, header_of(&g)->node_count, id0), 3);
    free(index);

    /* Out of order and a duplicate: node 1 takes node 0's id (now id3). */
    node_at(&g, 1)->id = id3;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADNODE);
    guarded_free(&g);
}
END_TEST

START_TEST(bad_strings)
{
    struct guarded g = small_ring();
    struct snapshot_node *n = node_at(&g, 0);
    /* Unterminated: the NUL after "alpha" overwritten. */
    *string_at(&g, n->name_offset + n->name_length) = 'x';
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    guarded_free(&g);

    g = small_ring();
    n = node_at(&g, 1);
    n->name_offset = (uint32_t)header_of(&g)->strings.size;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    n->name_offset = UINT32_MAX;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    /* The last string's terminator would be just past the section. */
    n->name_offset = (uint32_t)header_of(&g)->strings.size - n->name_length;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    guarded_free(&g);

    g = small_ring();
    n = node_at(&g, 2);
    *string_at(&g, n->name_offset + 1) = '\n';
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    *string_at(&g, n->name_offset + 1) = '\0';
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    guarded_free(&g);

    g = small_ring();
    n = node_at(&g, 3);
    *string_at(&g, n->address_offset) = 0x7f;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    guarded_free(&g);

    g = small_ring();
    node_at(&g, 0)->name_length = 0;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    node_at(&g, 0)->name_length = 256;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    guarded_free(&g);

    /* A length that runs into the next string. */
    g = small_ring();
    node_at(&g, 0)->address_length++;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADSTRING);
    guarded_free(&g);
}
END_TEST

/* ---- points and lookup structures ---- */

START_TEST(bad_points)
{
    struct guarded g = small_ring();
    struct snapshot_point *p = points_of(&g);
    struct snapshot_point swap = p[5];
    p[5] = p[6];
    p[6] = swap;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPOINTS);
    guarded_free(&g);

    g = small_ring();
    point_at(&g, 3)->node_index = 4; /* == node_count */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPOINTS);
    point_at(&g, 3)->node_index = UINT32_MAX;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPOINTS);
    point_at(&g, 3)->node_index = 2; /* gamma is down */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADPOINTS);
    guarded_free(&g);

    /* Equal neighbours are sorted; a point that moves within its gap is valid. */
    g = small_ring();
    p = points_of(&g);
    p[7].point = p[6].point;
    rederive_answers(&g);
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    guarded_free(&g);
}
END_TEST

START_TEST(bad_bucket_index)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    uint32_t *buckets = buckets_of(&g);
    uint32_t bucket_count = 1u << h->bucket_bits;

    buckets[0] = 1;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADINDEX);
    buckets[0] = 0;
    buckets[bucket_count] = h->point_count - 1;
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADINDEX);
    buckets[bucket_count] = h->point_count;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);

    /* Every single bucket entry off by one either way. */
    for (uint32_t b = 1; b < bucket_count; b++) {
        uint32_t saved = buckets[b];
        for (int delta = -1; delta <= 1; delta += 2) {
            if (saved == 0 && delta < 0)
                continue;
            buckets[b] = saved + (uint32_t)delta;
            reseal(&g);
            EXPECT_INT_EQ(validate(&g), SHMRING_EBADINDEX);
        }
        buckets[b] = saved;
    }
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    guarded_free(&g);
}
END_TEST

/* A bucket index of another size than the builder's is refused, whatever it says. */
START_TEST(bucket_bits_not_derived)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    ck_assert_uint_eq(h->bucket_bits, 4); /* 16 points */
    static const uint32_t others[] = {1, 3, 5, SNAPSHOT_BUCKET_BITS_MAX};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        h->bucket_bits = others[i];
        reseal(&g);
        EXPECT_INT_EQ(validate(&g), SHMRING_EBADPARAMS);
    }
    h->bucket_bits = 4;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    guarded_free(&g);
}
END_TEST

/*
 * Every point crowded into bucket 0, as a writer that does not hash node names could
 * publish: the snapshot is valid, and lookups (by bisection) still find the first
 * point >= the hash, as a search of the whole point array does.
 */
START_TEST(crowded_bucket_bisected)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    struct snapshot_point *points = points_of(&g);
    uint32_t *buckets = buckets_of(&g);
    uint32_t count = h->point_count;
    ck_assert_uint_gt(count, SNAPSHOT_BUCKET_SCAN_MAX);
    const uint64_t bucket_span = UINT64_C(1) << (64 - h->bucket_bits);
    for (uint32_t i = 0; i < count; i++)
        points[i].point = (i + 1) * (bucket_span / (count + 1));
    buckets[0] = 0;
    for (uint64_t b = 1; b <= (UINT64_C(1) << h->bucket_bits); b++)
        buckets[b] = count;
    rederive_answers(&g);
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    ck_assert_uint_eq(answers_of(&g)[0] & 1, 1); /* crowded: the slow path */

    uint64_t state = 5;
    for (int k = 0; k < 20000; k++) {
        /* Mostly hashes inside the crowded bucket, on, beside and between points. */
        uint64_t hash = test_random(&state);
        if (k % 4 != 0)
            hash %= bucket_span;
        if (k % 8 == 1)
            hash = points[hash % count].point + (uint64_t)(k % 3) - 1;
        uint32_t want = 0;
        while (want < count && points[want].point < hash)
            want++;
        if (want == count)
            want = 0;
        EXPECT_UINT_EQ(shmring__snapshot_first_point(g.data, hash), want);
        EXPECT_UINT_EQ(shmring__snapshot_owner(g.data, hash), points[want].node_index);
    }
    guarded_free(&g);
}
END_TEST

/* The builder's answers are the format's, bucket by bucket. */
START_TEST(answers_as_defined)
{
    struct guarded all[] = {small_ring(), small_ketama()};
    for (size_t i = 0; i < 2; i++) {
        struct guarded *g = &all[i];
        ck_assert_uint_eq(header_of(g)->answer_bits,
                          header_of(g)->bucket_bits + ANSWER_EXTRA_BITS);
        for (uint64_t a = 0; a <= UINT64_C(1) << header_of(g)->answer_bits; a++)
            EXPECT_UINT_EQ(answers_of(g)[a], reference_answer(g, a));
        guarded_free(g);
    }
}
END_TEST

/*
 * Hand-made points that reach every kind of answer: an empty bucket, one run, two
 * runs, two runs that meet on equal points, three runs (crowded), a run that ends on
 * a split of 0x7ff, a crowded bucket that holds the ring's last points, and points
 * at both ends of the hash space (the wrap-around). The validator accepts them with
 * the answers the format derives, and every lookup answers as a scan of the points
 * does, for hashes on, beside and between the points and at bucket ends.
 */
START_TEST(answers_exact_on_hand_made_points)
{
    struct guarded g = small_ring();
    struct snapshot_header *h = header_of(&g);
    struct snapshot_point *p = points_of(&g);
    ck_assert_uint_eq(h->point_count, 16);
    ck_assert_uint_eq(h->answer_bits, 4);
    /* Up nodes are 0, 1 and 3 (2, gamma, is down). */
    const uint64_t span = UINT64_C(1) << 60;
    static const struct {
        uint64_t bucket, offset;
        uint32_t owner;
        /* Offsets are multiples of 2^48 (split bits apart) but for the points that
         * test a split of 0. */
    } layout[16] = {
        {0, 0, 1},                       /* point 0 at hash 0: the wrap's owner */
        {2, UINT64_C(100) << 48, 0},     /* bucket 1 empty; bucket 2: one run */
        {2, UINT64_C(1000) << 48, 0},    /* ... of two points */
        {3, UINT64_C(300) << 48, 1},     /* bucket 3: two runs */
        {3, UINT64_C(3000) << 48, 3},    /* */
        {4, UINT64_C(2000) << 48, 0},    /* bucket 4: two runs on equal points */
        {4, UINT64_C(2000) << 48, 3},    /* */
        {5, UINT64_C(10) << 48, 0},      /* bucket 5: three runs, crowded */
        {5, UINT64_C(20) << 48, 1},      /* */
        {5, UINT64_C(30) << 48, 3},      /* */
        {6, (UINT64_C(1) << 60) - 1, 1}, /* bucket 6: a split of 0x7ff */
        {9, 1, 3},                       /* bucket 9: one point right at its start */
        {15, 1, 0},                      /* bucket 15: crowded, the last points */
        {15, 2, 1},                      /* */
        {15, UINT64_MAX >> 4, 3},        /* the last hash of all */
        {15, UINT64_MAX >> 4, 1},        /* an equal last point of another owner */
    };
    for (size_t i = 0; i < 16; i++) {
        p[i].point = layout[i].bucket * span + layout[i].offset;
        p[i].node_index = layout[i].owner;
    }
    rederive_buckets(&g);
    rederive_answers(&g);
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    const uint64_t *answers = answers_of(&g);
    ck_assert_uint_eq(answers[1] & 1, 0);
    ck_assert_uint_eq((answers[1] >> 33) & 0x7ff, 0x7ff); /* empty */
    ck_assert_uint_eq(answers[5] & 1, 1);                 /* crowded */
    ck_assert_uint_eq(answers[15] & 1, 1);
    ck_assert_uint_eq(answers[4] & 1, 0);
    ck_assert_uint_eq((answers[6] >> 33) & 0x7ff, 0x7ff); /* a point's split */

    uint64_t state = 11;
    size_t checked = 0;
    for (size_t i = 0; i < 16; i++) {
        for (int64_t d = -3; d <= 3; d++) {
            uint64_t hash = p[i].point + (uint64_t)d;
            EXPECT_UINT_EQ(shmring__snapshot_owner(g.data, hash),
                           reference_owner(&g, hash));
            checked++;
        }
    }
    for (uint64_t b = 0; b < 16; b++) {
        static const uint64_t offsets[] = {0, 1, UINT64_C(1) << 49,
                                           (UINT64_C(1) << 60) - 1,
                                           (UINT64_C(1) << 60) - (UINT64_C(1) << 49)};
        for (size_t o = 0; o < sizeof(offsets) / sizeof(offsets[0]); o++) {
            uint64_t hash = b * span + offsets[o];
            EXPECT_UINT_EQ(shmring__snapshot_owner(g.data, hash),
                           reference_owner(&g, hash));
            checked++;
        }
    }
    for (int k = 0; k < 20000; k++) {
        /* Random hashes, half of them in the buckets with points. */
        uint64_t hash = test_random(&state);
        if (k % 2 == 0)
            hash = layout[k % 16].bucket * span + hash % span;
        EXPECT_UINT_EQ(shmring__snapshot_owner(g.data, hash), reference_owner(&g, hash));
        checked++;
    }
    ck_assert_uint_eq(checked, 16 * 7 + 16 * 5 + 20000);
    guarded_free(&g);
}
END_TEST

/* Every variant of answer A of G with one field changed, into OUT; returns how many. */
static size_t answer_variants(uint64_t answer, uint64_t *out)
{
    uint64_t owner = answer >> 44, split = (answer >> 33) & 0x7ff;
    uint64_t low = answer & ((UINT64_C(1) << 33) - 1);
    size_t n = 0;
    /* The owner: another up node, a down one, one out of range, the largest. */
    static const uint64_t owners[] = {0, 1, 2, 4, 0xfffff};
    for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++)
        out[n++] = owners[i] << 44 | split << 33 | low;
    /* The first split: one either way, none. */
    out[n++] = owner << 44 | ((split + 1) & 0x7ff) << 33 | low;
    out[n++] = owner << 44 | ((split - 1) & 0x7ff) << 33 | low;
    out[n++] = owner << 44 | UINT64_C(0x7ff) << 33 | low;
    out[n++] = answer ^ 1; /* the other kind */
    out[n++] = answer ^ 2; /* the zero bit, or the point index's lowest */
    if ((answer & 1) == 0) {
        uint64_t owner2 = (answer >> 13) & 0xfffff, split2 = (answer >> 2) & 0x7ff;
        uint64_t high = answer & ~((UINT64_C(1) << 33) - 1);
        for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++)
            out[n++] = high | owners[i] << 13 | split2 << 2;
        out[n++] = high | owner2 << 13 | ((split2 + 1) & 0x7ff) << 2;
        out[n++] = high | owner2 << 13 | ((split2 - 1) & 0x7ff) << 2;
        out[n++] = high | owner2 << 13 | UINT64_C(0x7ff) << 2;
    } else {
        uint64_t first = (answer >> 1) & 0xffffffff;
        uint64_t high = answer & ~((UINT64_C(1) << 33) - 1);
        out[n++] = high | ((first + 1) & 0xffffffff) << 1 | 1;
        out[n++] = high | ((first - 1) & 0xffffffff) << 1 | 1;
        out[n++] = high | UINT64_C(0xffffffff) << 1 | 1;
    }
    out[n++] = answer ^ (UINT64_C(1) << 63);
    return n;
}

/* Changes every answer of G in every way answer_variants() knows: each is refused. */
static void every_answer_variant_refused(struct guarded *g)
{
    uint64_t *answers = answers_of(g);
    uint64_t count = (UINT64_C(1) << header_of(g)->answer_bits) + 1;
    for (uint64_t a = 0; a < count; a++) {
        uint64_t saved = answers[a], variants[32];
        size_t n = answer_variants(saved, variants);
        for (size_t v = 0; v < n; v++) {
            if (variants[v] == saved)
                continue;
            answers[a] = variants[v];
            reseal(g);
            EXPECT_INT_EQ(validate(g), SHMRING_EBADINDEX);
        }
        answers[a] = saved;
    }
    reseal(g);
    ck_assert_int_eq(validate(g), 0);
}

/*
 * Every malformed variant of the answers is refused: each answer with another owner
 * (another up node, a down one, out of range) in either owner field, another split
 * (one either way, none) in either split field, the other kind, another first point,
 * a set zero bit; then the answer bits, the section's size, place and order.
 */
START_TEST(bad_answers)
{
    struct guarded g = small_ring();
    every_answer_variant_refused(&g);
    guarded_free(&g);

    /* The same on crowded answers: every point in bucket 0. */
    g = small_ring();
    struct snapshot_header *h = header_of(&g);
    struct snapshot_point *points = points_of(&g);
    const uint64_t bucket_span = UINT64_C(1) << (64 - h->bucket_bits);
    for (uint32_t i = 0; i < h->point_count; i++)
        points[i].point = (i + 1) * (bucket_span / (h->point_count + 1));
    rederive_buckets(&g);
    rederive_answers(&g);
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    ck_assert_uint_eq(answers_of(&g)[0] & 1, 1);
    every_answer_variant_refused(&g);
    guarded_free(&g);

    g = small_ring();
    h = header_of(&g);
    uint32_t bits = h->answer_bits;
    static const int32_t deltas[] = {-1, 1, 2};
    for (size_t i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
        h->answer_bits = bits + (uint32_t)deltas[i];
        reseal(&g);
        EXPECT_INT_EQ(validate(&g), SHMRING_EBADPARAMS);
    }
    h->answer_bits = bits;
    h->answers.size += 8;
    reseal(&g);
    EXPECT_INT_EQ(validate(&g), SHMRING_EBADSECTION);
    h->answers.size -= 16;
    reseal(&g);
    EXPECT_INT_EQ(validate(&g), SHMRING_EBADSECTION);
    /* The size of the previous format's 32-bit answers. */
    h->answers.size = ((UINT64_C(1) << bits) + 1) * 4;
    reseal(&g);
    EXPECT_INT_EQ(validate(&g), SHMRING_EBADSECTION);
    h->answers.size = ((UINT64_C(1) << bits) + 1) * 8;
    h->answers.offset += 8;
    reseal(&g);
    EXPECT_INT_EQ(validate(&g), SHMRING_EBADSECTION);
    h->answers.offset = h->buckets.offset; /* overlapping the bucket index */
    reseal(&g);
    EXPECT_INT_EQ(validate(&g), SHMRING_EBADSECTION);
    h->answers.offset = g.size - 64; /* running past the end */
    reseal(&g);
    EXPECT_INT_EQ(validate(&g), SHMRING_EBADSECTION);
    guarded_free(&g);

    /* Maglev has no answers. */
    g = small_maglev();
    header_of(&g)->answer_bits = 2;
    reseal(&g);
    EXPECT_INT_EQ(validate(&g), SHMRING_EBADPARAMS);
    guarded_free(&g);
}
END_TEST

/*
 * One answer entry corrupted in a real snapshot of every algorithm with answers,
 * large enough that its points, index and answers span many of the validator's
 * chunks: the first bucket's, a middle one's, the last bucket's and the one past it
 * (the wrap), each changed in its owner, its first split and its kind bit, is
 * refused with SHMRING_EBADINDEX; the restored snapshot passes again.
 */
START_TEST(one_answer_corrupted_per_algorithm)
{
    static const shmring_algorithm_t algorithms[] = {
        SHMRING_ALGORITHM_RING,      SHMRING_ALGORITHM_KETAMA,
        SHMRING_ALGORITHM_TWEMPROXY, SHMRING_ALGORITHM_NGINX,
        SHMRING_ALGORITHM_LIBKETAMA, SHMRING_ALGORITHM_ENVOY_RING,
    };
    static const uint64_t flips[] = {UINT64_C(1) << 44, UINT64_C(1) << 33, 1};
    for (size_t a = 0; a < sizeof(algorithms) / sizeof(algorithms[0]); a++) {
        shmring_nodeset_t *set;
        ck_assert_int_eq(shmring_nodeset_new(&set), 0);
        shmring_params_t params;
        shmring_params_default(&params);
        params.algorithm = algorithms[a];
        params.hash = shmring_algorithm_default_hash(algorithms[a]);
        /* Envoy's ring of 64 hosts would be 1,024 points by default. */
        if (algorithms[a] == SHMRING_ALGORITHM_ENVOY_RING)
            params.min_ring_size = 16384;
        ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
        for (int i = 0; i < 64; i++) {
            char name[32], address[32];
            snprintf(name, sizeof(name), "node-%d", i);
            snprintf(address, sizeof(address), "10.0.%d.%d:11211", i / 250, i % 250 + 1);
            ck_assert_int_eq(
                shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL), 0);
        }
        struct guarded g = guarded_build(set);
        shmring_nodeset_free(set);
        const struct snapshot_header *h = header_of(&g);
        ck_assert_msg(h->points.size + h->buckets.size + h->answers.size > 4 * 64 * 1024,
                      "%s: %llu points only", shmring_algorithm_name(algorithms[a]),
                      (unsigned long long)h->point_count);
        uint64_t bucket_count = UINT64_C(1) << h->answer_bits;
        const uint64_t entries[] = {0, bucket_count / 2, bucket_count - 1, bucket_count};
        uint64_t *answers = answers_of(&g);
        for (size_t e = 0; e < sizeof(entries) / sizeof(entries[0]); e++) {
            for (size_t f = 0; f < sizeof(flips) / sizeof(flips[0]); f++) {
                answers[entries[e]] ^= flips[f];
                reseal(&g);
                ck_assert_msg(validate(&g) == SHMRING_EBADINDEX,
                              "%s: answer %llu with bit 0x%llx flipped: %d",
                              shmring_algorithm_name(algorithms[a]),
                              (unsigned long long)entries[e],
                              (unsigned long long)flips[f], validate(&g));
                answers[entries[e]] ^= flips[f];
            }
        }
        reseal(&g);
        ck_assert_int_eq(validate(&g), 0);
        guarded_free(&g);
    }
}
END_TEST

START_TEST(bad_maglev_table)
{
    struct guarded g = small_maglev();
    ck_assert_uint_eq(header_of(&g)->table_size, 7);
    *slot_at(&g, 4) = 4; /* == node_count */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADINDEX);
    *slot_at(&g, 4) = 2; /* gamma is down */
    reseal(&g);
    ck_assert_int_eq(validate(&g), SHMRING_EBADINDEX);
    *slot_at(&g, 4) = 3;
    reseal(&g);
    ck_assert_int_eq(validate(&g), 0);
    guarded_free(&g);

    /* Every node up (the validator then only compares indexes with the node
     * count), in both maglevs: the first, a middle and the last slot out of range,
     * by one and by all. */
    static const shmring_algorithm_t algorithms[] = {SHMRING_ALGORITHM_MAGLEV,
                                                     SHMRING_ALGORITHM_ENVOY_MAGLEV};
    for (size_t a = 0; a < sizeof(algorithms) / sizeof(algorithms[0]); a++) {
        shmring_nodeset_t *set = test_small_set(
            algorithms[a], shmring_algorithm_default_hash(algorithms[a]), 0);
        ck_assert_int_eq(shmring_nodeset_set_state(set, "gamma", SHMRING_STATE_UP), 0);
        g = guarded_build(set);
        shmring_nodeset_free(set);
        uint32_t table_size = header_of(&g)->table_size;
        ck_assert_uint_eq(header_of(&g)->up_count, 4);
        const size_t slots[] = {0, table_size / 2, table_size - 1};
        static const uint32_t bad_indexes[] = {4, UINT32_MAX};
        for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
            uint32_t saved = *slot_at(&g, slots[i]);
            for (size_t b = 0; b < sizeof(bad_indexes) / sizeof(bad_indexes[0]); b++) {
                *slot_at(&g, slots[i]) = bad_indexes[b];
                reseal(&g);
                EXPECT_INT_EQ(validate(&g), SHMRING_EBADINDEX);
            }
            *slot_at(&g, slots[i]) = saved;
        }
        reseal(&g);
        ck_assert_int_eq(validate(&g), 0);
        guarded_free(&g);
    }
}
END_TEST

/* ---- empty rings ---- */

START_TEST(empty_and_all_down_snapshots)
{
    /* Nothing follows the header: the validator must not look for a bucket index. */
    for (int a = 0; a < 3; a++) {
        shmring_nodeset_t *set;
        ck_assert_int_eq(shmring_nodeset_new(&set), 0);
        shmring_params_t params = {(shmring_algorithm_t)a,
                                   test_usual_hash((shmring_algorithm_t)a), 160, 0};
        ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
        struct guarded g = guarded_build(set);
        ck_assert_uint_eq(g.size, 256);
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(&g.in_place, "k", 1, &node),
                         SHMRING_EEMPTY);
        guarded_free(&g);

        ck_assert_int_eq(
            shmring_nodeset_add(set, "down", NULL, 1, SHMRING_STATE_DOWN, NULL), 0);
        g = guarded_build(set);
        ck_assert_int_eq(shmring_snapshot_lookup(&g.in_place, "k", 1, &node),
                         SHMRING_EALLDOWN);
        guarded_free(&g);
        shmring_nodeset_free(set);
    }
}
END_TEST

/* ---- bit flips and garbage ---- */

static void flip_every_bit(struct guarded *g)
{
    for (size_t byte = 0; byte < g->size; byte++) {
        for (int bit = 0; bit < 8; bit++) {
            g->data[byte] ^= (uint8_t)(1u << bit);
            int err = validate(g);
            if (err == 0)
                ck_abort_msg("flipping bit %d of byte %zu was accepted", bit, byte);
            EXPECT_TRUE(err < 0);
            g->data[byte] ^= (uint8_t)(1u << bit);
        }
    }
    ck_assert_int_eq(validate(g), 0);
}

START_TEST(every_bit_flip_is_refused)
{
    struct guarded g = small_ring();
    flip_every_bit(&g);
    guarded_free(&g);

    g = small_maglev();
    flip_every_bit(&g);
    guarded_free(&g);

    /* Ketama gives every up node 160 points whatever the vnodes: the smallest
     * snapshot is one up node (and a down one, whose entry is flipped too), 6 KiB.
     * The small set's three up nodes would make 14 KiB, and each flip validates the
     * whole snapshot, so five times the work. */
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 4, 0};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "alpha", "10.0.0.1:11211", 1, SHMRING_STATE_UP, NULL),
        0);
    ck_assert_int_eq(
        shmring_nodeset_add(set, "gamma", "10.0.0.3:11211", 1, SHMRING_STATE_DOWN, NULL),
        0);
    g = guarded_build(set);
    ck_assert_uint_eq(g.size, 6144);
    ck_assert_uint_eq(header_of(&g)->point_count, 160);
    flip_every_bit(&g);
    guarded_free(&g);
    shmring_nodeset_free(set);
}
END_TEST

static int known_code(int err)
{
    return err == 0 || err == SHMRING_EINVAL || err == SHMRING_ENOMEM ||
           err == SHMRING_ENEWFORMAT || err == SHMRING_EFEATURE ||
           (err <= SHMRING_EBADMAGIC && err >= SHMRING_ECHECKSUM);
}

START_TEST(random_garbage)
{
    uint64_t state = 314159;
    unsigned char bytes[4096];
    for (int round = 0; round < 3000; round++) {
        size_t size = test_random(&state) % sizeof(bytes);
        for (size_t i = 0; i < size; i++)
            bytes[i] = (uint8_t)test_random(&state);
        struct guarded g = guarded_new(bytes, size);
        int err = validate(&g);
        EXPECT_TRUE(err != 0 && known_code(err));
        /* With a valid-looking start the validator gets further in. */
        if (size >= sizeof(struct snapshot_header)) {
            struct snapshot_header *h = header_of(&g);
            h->magic = SNAPSHOT_MAGIC;
            h->format_version = SNAPSHOT_FORMAT_VERSION;
            h->byte_order = SNAPSHOT_BYTE_ORDER_MARK;
            h->header_size = sizeof(struct snapshot_header);
            h->total_size = size;
            h->algorithm %= 3;
            h->hash = h->algorithm == SHMRING_ALGORITHM_KETAMA ? SHMRING_HASH_MD5 : 0;
            h->vnodes = 160;
            reseal(&g);
            err = validate(&g);
            EXPECT_TRUE(err != 0 && known_code(err));
        }
        guarded_free(&g);
    }
}
END_TEST

/* Overwrites a random 32-bit word of the buffer with a value that is often near
 * something meaningful: small numbers, counts and offsets of the snapshot. */
static void mutate_word(struct guarded *g, uint64_t *state)
{
    size_t word = test_random(state) % (g->size / 4);
    if (test_random(state) % 2)
        word %= sizeof(struct snapshot_header) / 4; /* the header, more often */
    uint32_t value;
    memcpy(&value, g->data + word * 4, 4);
    switch (test_random(state) % 5) {
    case 0:
        value = (uint32_t)test_random(state);
        break;
    case 1:
        value = (uint32_t)(test_random(state) % 8);
        break;
    case 2:
        value += (uint32_t)(test_random(state) % 129) - 64;
        break;
    case 3:
        value ^= 1u << (test_random(state) % 32);
        break;
    default:
        value = (uint32_t)g->size - (uint32_t)(test_random(state) % 3) * 64;
        break;
    }
    memcpy(g->data + word * 4, &value, 4);
}

START_TEST(resealed_mutations_never_crash)
{
    uint64_t state = 271828;
    size_t accepted = 0, refused = 0;
    for (int round = 0; round < 6000; round++) {
        struct guarded g = round % 3 == 0   ? small_ring()
                           : round % 3 == 1 ? small_maglev()
                                            : small_ketama();
        int mutations = 1 + (int)(test_random(&state) % 4);
        for (int m = 0; m < mutations; m++)
            mutate_word(&g, &state);
        reseal(&g);
        int err = validate(&g);
        EXPECT_TRUE(known_code(err));
        if (err != 0) {
            refused++;
            guarded_free(&g);
            continue;
        }
        /* Whatever passes must be safe to look keys up in. */
        accepted++;
        shmring_snapshot_info_t info;
        shmring_snapshot_info(&g.in_place, &info);
        double shares[8];
        EXPECT_INT_EQ(shmring_snapshot_shares(&g.in_place, shares, (size_t)8),
                      info.node_count <= (size_t)8 ? 0 : SHMRING_EINVAL);
        for (uint64_t k = 0; k < 200; k++) {
            char key[32];
            size_t len = test_key(key, k);
            shmring_node_t found[4];
            int got = shmring_snapshot_lookup(&g.in_place, key, len, found);
            EXPECT_TRUE(got == 0 || got == SHMRING_EEMPTY || got == SHMRING_EALLDOWN);
            got = shmring_snapshot_lookup_n(&g.in_place, key, len, found, 4);
            EXPECT_TRUE(got > 0 || got == SHMRING_EEMPTY || got == SHMRING_EALLDOWN);
            uint32_t id;
            const void *keys[1] = {key};
            got = shmring_snapshot_lookup_id(&g.in_place, key, len, &id);
            EXPECT_INT_EQ(shmring_snapshot_lookup_ids(&g.in_place, keys, &len, 1, &id),
                          got);
        }
        guarded_free(&g);
    }
    printf("snapshot: %zu resealed mutations refused, %zu accepted and looked up\n",
           refused, accepted);
    fflush(stdout);
    ck_assert_uint_gt(refused, 0);
    ck_assert_uint_gt(accepted, 0);
}
END_TEST

static const struct test_fixture slow = {NULL, NULL, 300};

static Suite *snapshot_validate_suite(void)
{
    Suite *s = suite_create("snapshot_validate");
    TEST_CASE(s, "header", valid_snapshot_and_info, bad_magic, bad_format,
              format_features, min_reader_format, other_byte_order,
              truncated_and_extended, misaligned_buffer);
    TEST_CASE(s, "sections", section_misaligned, section_overlapping,
              section_out_of_bounds, section_size_disagrees_with_count);
    TEST_CASE(s, "params", params_refused, ketama_needs_md5, maglev_params_refused,
              envoy_params_refused);
    TEST_CASE(s, "checksum", checksum_mismatch);
    TEST_CASE(s, "nodes", bad_nodes, bad_strings, node_ids_out_of_order);
    TEST_CASE(s, "lookup_structures", bad_points, bad_bucket_index,
              bucket_bits_not_derived, crowded_bucket_bisected, answers_as_defined,
              answers_exact_on_hand_made_points, bad_answers,
              one_answer_corrupted_per_algorithm, bad_maglev_table,
              empty_and_all_down_snapshots);
    TEST_CASE_WITH(s, "fuzz", &slow, every_bit_flip_is_refused, random_garbage,
                   resealed_mutations_never_crash);
    return s;
}

int main(void)
{
    return test_run_suite(snapshot_validate_suite());
}
