/*
 * The snapshot format: one contiguous, position-independent buffer.
 *
 *   header  (256 bytes)
 *   nodes   (node_count entries of struct snapshot_node)
 *   strings (NUL-terminated names and addresses, referenced by offset)
 *   points  (ring, ketama: point_count struct snapshot_point, sorted)
 *   buckets (ring, ketama: 2^bucket_bits + 1 point indexes)
 *   answers (ring, ketama: 2^answer_bits + 1 bucket answers, see ANSWER_SPLIT_BITS)
 *   table   (maglev, envoy-maglev: table_size node indexes)
 *
 * Every section starts on a 64-byte boundary and is referenced by an offset from the
 * start of the buffer, never by a pointer, so the same bytes work at any address in
 * any process. Integers are in the writer's byte order, which the header records;
 * a reader of the other byte order refuses the snapshot.
 */
#ifndef SHMRING_SNAPSHOT_INTERNAL_H
#define SHMRING_SNAPSHOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash_internal.h"
#include "params_internal.h"
#include "shmring.h"
#include "shmring_ctl.h"

#define SNAPSHOT_MAGIC UINT64_C(0x3170616e73726873) /* "shrsnap1" little-endian */
/* 2: the answers section. 3: 64-bit answers of two runs, one per bucket index
 * bucket. 4: format 3 whose features and min_reader fields a reader must check
 * (readers of format 3, 0.3.0 and older, ignore them). The compatibility rule
 * (docs/upgrading.md): a reader takes its own format and the one before; a writer
 * publishes the oldest format that can express the ring, SNAPSHOT_FORMAT_OLDEST
 * unless a feature or the ring's minimum reader needs the newer one. */
#define SNAPSHOT_FORMAT_VERSION 4u
#define SNAPSHOT_FORMAT_OLDEST 3u
/* The features a snapshot can use (its header's features), each a bit that a reader
 * must know to answer from it: none yet. A feature added later (an algorithm, a hash
 * or a section an older reader cannot execute) takes the next bit, and the writer
 * sets it, with format 4 or newer, only in snapshots that use it. */
#define SNAPSHOT_FEATURES_KNOWN 0u

/* A release as the header's min_reader spells it: 0.4.0 is 0x000400. */
#define SNAPSHOT_VERSION_CODE(major, minor, patch)                                       \
    ((uint32_t)(major) << 16 | (uint32_t)(minor) << 8 | (uint32_t)(patch))
/* This build's release, and the first that reads format 4 (any release reads 3). */
#define SNAPSHOT_VERSION_SELF                                                            \
    SNAPSHOT_VERSION_CODE(SHMRING_VERSION_MAJOR, SHMRING_VERSION_MINOR,                  \
                          SHMRING_VERSION_PATCH)
#define SNAPSHOT_VERSION_FORMAT4 SNAPSHOT_VERSION_CODE(0, 4, 0)
#define SNAPSHOT_BYTE_ORDER_MARK UINT32_C(0x01020304)
#define SNAPSHOT_ALIGN 64u
#define SNAPSHOT_BUCKET_BITS_MAX 24u

struct snapshot_section {
    uint64_t offset;
    uint64_t size;
};

struct snapshot_header {
    uint64_t magic;
    uint32_t format_version;
    uint32_t byte_order;
    uint64_t total_size;
    /* XXH3-64 of the whole buffer, read with this field as zero. */
    uint64_t checksum;
    /* Hash of the canonical node set and parameters (see snapshot_build.c). */
    uint64_t fingerprint;
    uint32_t header_size;
    uint8_t algorithm;
    uint8_t hash;
    uint16_t reserved0;
    uint32_t vnodes;
    uint32_t table_size;
    uint32_t node_count;
    uint32_t up_count;
    uint32_t next_node_id;
    uint32_t point_count;
    uint32_t bucket_bits;
    /* The node set's table_size parameter (0: the default for the up count), kept so
     * that the node set can be recreated; table_size is the size in use. */
    uint32_t table_size_param;
    struct snapshot_section nodes;
    struct snapshot_section strings;
    struct snapshot_section points;
    struct snapshot_section buckets;
    struct snapshot_section table;
    struct snapshot_section answers;
    /* bucket_bits for a ring or ketama with points, else 0. */
    uint32_t answer_bits;
    /* The node set's min_ring_size and max_ring_size parameters (`envoy-ring`; 0:
     * Envoy's defaults), kept so that the node set can be recreated. */
    uint32_t min_ring_size_param;
    uint32_t max_ring_size_param;
    /* Format 4: the features the snapshot uses (SNAPSHOT_FEATURES_KNOWN), which a
     * reader refuses with SHMRING_EFEATURE when it does not know one. Zero in format
     * 3, where it was reserved (and zero from every writer). */
    uint32_t features;
    /* Format 4: the oldest reader release the ring was published for
     * (SNAPSHOT_VERSION_CODE()), which an older reader refuses with
     * SHMRING_ENEWFORMAT, and which the ring's node set keeps across publications.
     * Zero in format 3. */
    uint32_t min_reader;
    uint8_t reserved2[60];
};

_Static_assert(sizeof(struct snapshot_header) == 256, "header layout");

struct snapshot_node {
    uint32_t id;
    uint32_t weight;
    /* Offsets into the strings section. */
    uint32_t name_offset;
    uint32_t address_offset;
    uint16_t name_length;
    uint16_t address_length;
    uint8_t state;
    uint8_t reserved;
    /* The node's hash key, 0 for none: its string follows the address's NUL. */
    uint16_t hash_key_length;
};

_Static_assert(sizeof(struct snapshot_node) == 24, "node layout");

/*
 * A point on the ring. The point and its owner share 16 bytes so that a lookup reads
 * one cache line for both. Ketama's 32-bit points are stored shifted into the top
 * half, with key hashes shifted alike, so one lookup routine serves both.
 */
struct snapshot_point {
    uint64_t point;
    uint32_t node_index;
    uint32_t reserved;
};

_Static_assert(sizeof(struct snapshot_point) == 16, "point layout");

/*
 * The answers: one 64-bit word per bucket of the bucket index (answer_bits ==
 * bucket_bits, about one point per bucket), plus one past the last bucket, that
 * give most keys their owner in one read and a select, without a search. A
 * bucket's points form runs, the points of one owner in a row; most buckets have at
 * most two runs. From the top bit down, an answer holds:
 *
 * - ANSWER_OWNER_BITS: the owner (node index) of the bucket's first key,
 *   b << (64 - answer_bits): the owner of the first point at or after it, wrapping
 *   to point 0 (the answer past the last bucket holds point 0's owner). Keys up to
 *   the end of the first run are its.
 * - ANSWER_SPLIT_BITS: the first split: the bits that follow the bucket bits in the
 *   last point of the bucket's first run, or ANSWER_SPLIT_MASK when the bucket has
 *   no point.
 * - The lowest bit tells the two kinds of answer apart. ANSWER_RUNS (0), for a
 *   bucket of at most two runs: the owner of the keys after the first run (that of
 *   the second run, or of the first point after the bucket), then the second split
 *   (that of the second run's last point, or ANSWER_SPLIT_MASK with fewer than two
 *   runs), then a zero bit; keys after the second run belong to the next answer's
 *   owner. ANSWER_CROWDED (1), for more runs: the index of the bucket's first
 *   point, from which the points decide the keys after the first run.
 *
 * A key whose split bits (the ANSWER_SPLIT_BITS after the bucket bits) equal a split
 * (two keys in 2,048 at most), or follow the first split in a crowded bucket, takes
 * the slow path: a scan of the points from a crowded bucket's first, or else the
 * bucket index and the points. 3.3% of random keys do on a ring of 10,000 nodes, in
 * one read for most; the answers of format 2 (32 bits, one run, twice as many
 * buckets for the same 16 MiB) left 5.7% to the bucket index and then the points,
 * two dependent reads.
 */
#define ANSWER_EXTRA_BITS 0u
#define ANSWER_SPLIT_BITS 11u
#define ANSWER_OWNER_BITS 20u
#define ANSWER_SPLIT_MASK ((UINT32_C(1) << ANSWER_SPLIT_BITS) - 1)
#define ANSWER_OWNER_MASK ((UINT32_C(1) << ANSWER_OWNER_BITS) - 1)
#define ANSWER_OWNER_SHIFT (64u - ANSWER_OWNER_BITS)
#define ANSWER_SPLIT1_SHIFT (ANSWER_OWNER_SHIFT - ANSWER_SPLIT_BITS)
#define ANSWER_OWNER2_SHIFT (ANSWER_SPLIT1_SHIFT - ANSWER_OWNER_BITS)
#define ANSWER_SPLIT2_SHIFT (ANSWER_OWNER2_SHIFT - ANSWER_SPLIT_BITS)
#define ANSWER_FIRST_POINT_SHIFT 1u
#define ANSWER_RUNS UINT64_C(0)
#define ANSWER_CROWDED UINT64_C(1)

_Static_assert(SHMRING_NODES_MAX <= (UINT32_C(1) << ANSWER_OWNER_BITS),
               "an answer holds any node index");
_Static_assert(ANSWER_SPLIT2_SHIFT == 2, "a runs answer's fields fill its word");
_Static_assert(SHMRING_POINTS_MAX - 1 <= UINT32_MAX,
               "a crowded answer holds a point index");

/* The answer of a bucket of at most two runs (see ANSWER_SPLIT_BITS). */
static inline uint64_t shmring__answer_runs(uint32_t owner, uint32_t split,
                                            uint32_t owner2, uint32_t split2)
{
    return (uint64_t)owner << ANSWER_OWNER_SHIFT |
           (uint64_t)split << ANSWER_SPLIT1_SHIFT |
           (uint64_t)owner2 << ANSWER_OWNER2_SHIFT |
           (uint64_t)split2 << ANSWER_SPLIT2_SHIFT | ANSWER_RUNS;
}

/* The answer of a bucket of more runs, whose first point is FIRST_POINT. */
static inline uint64_t shmring__answer_crowded(uint32_t owner, uint32_t split,
                                               uint32_t first_point)
{
    return (uint64_t)owner << ANSWER_OWNER_SHIFT |
           (uint64_t)split << ANSWER_SPLIT1_SHIFT |
           (uint64_t)first_point << ANSWER_FIRST_POINT_SHIFT | ANSWER_CROWDED;
}

/* The first point of a crowded answer's bucket. */
static inline uint32_t shmring__answer_first_point(uint64_t word)
{
    return (uint32_t)(word >> ANSWER_FIRST_POINT_SHIFT);
}

/* The ANSWER_SPLIT_BITS bits of HASH that follow its top ANSWER_BITS bits. */
static inline uint32_t shmring__answer_split_bits(uint64_t hash, unsigned answer_bits)
{
    return (uint32_t)((hash << answer_bits) >> (64 - ANSWER_SPLIT_BITS));
}

static inline const struct snapshot_header *snapshot_header(const void *buffer)
{
    return (const struct snapshot_header *)buffer;
}

/* The parameters a snapshot was built with, as its node set had them (table_size 0:
 * the default for the up count). */
static inline shmring_params_t shmring__snapshot_params(const struct snapshot_header *h)
{
    return (shmring_params_t){.algorithm = (shmring_algorithm_t)h->algorithm,
                              .hash = (shmring_hash_t)h->hash,
                              .vnodes = h->vnodes,
                              .table_size = h->table_size_param,
                              .min_ring_size = h->min_ring_size_param,
                              .max_ring_size = h->max_ring_size_param};
}

static inline const void *snapshot_section_at(const void *buffer,
                                              const struct snapshot_section *s)
{
    return (const unsigned char *)buffer + s->offset;
}

/*
 * The size of the bucket index for POINT_COUNT (> 0) points: about one bucket per
 * point, 2^bits >= point_count, at most SNAPSHOT_BUCKET_BITS_MAX bits. The builder
 * uses it and the validator requires it, so that no snapshot can make lookups scan
 * long buckets with a small index.
 */
static inline unsigned shmring__snapshot_bucket_bits_for(uint64_t point_count)
{
    unsigned bits = 1;
    while (bits < SNAPSHOT_BUCKET_BITS_MAX && (UINT64_C(1) << bits) < point_count)
        bits++;
    return bits;
}

/* Buckets holding more points than this are searched by bisection, not scanned. */
#define SNAPSHOT_BUCKET_SCAN_MAX 8u

/* The bucket of KEY_HASH in a ring or ketama snapshot's bucket index: its top bits. */
static inline uint64_t shmring__snapshot_bucket(const struct snapshot_header *h,
                                                uint64_t key_hash)
{
    return key_hash >> (64 - h->bucket_bits);
}

/* The maglev table slot of KEY_HASH. Multiply-high maps the hash onto
 * [0, table_size) without a division; `envoy-maglev` takes the remainder, as
 * Envoy's MaglevTable::chooseHost() does. */
static inline uint64_t shmring__snapshot_slot(const struct snapshot_header *h,
                                              uint64_t key_hash)
{
    if (h->algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV)
        return key_hash % h->table_size;
    return (uint64_t)(((unsigned __int128)key_hash * h->table_size) >> 64);
}

/*
 * Index of the first ring point >= KEY_HASH in a validated ring or ketama snapshot
 * with points, wrapping to 0 past the last one.
 */
static inline uint32_t shmring__snapshot_first_point(const void *buffer,
                                                     uint64_t key_hash)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    const uint32_t *buckets = snapshot_section_at(buffer, &h->buckets);
    uint64_t bucket = shmring__snapshot_bucket(h, key_hash);
    uint32_t i = buckets[bucket];
    uint32_t end = buckets[bucket + 1];
    /*
     * Points in [buckets[b], buckets[b + 1]) share the hash's top bits; the first
     * point >= the hash is in that range or, failing that, at its end. The builder's
     * buckets hold about one point each, so a scan is quickest; but the validator
     * cannot tell crowded points from honest ones (it does not rehash node names),
     * and bisection keeps a lookup in a snapshot crowded by another writer
     * logarithmic.
     */
    if (end - i > SNAPSHOT_BUCKET_SCAN_MAX) {
        while (i < end) {
            uint32_t middle = i + (end - i) / 2;
            if (points[middle].point < key_hash)
                i = middle + 1;
            else
                end = middle;
        }
    }
    while (i < end && points[i].point < key_hash)
        i++;
    return i == h->point_count ? 0 : i;
}

/* What shmring__answer_owner() returns when the points must decide. */
#define ANSWER_SLOW UINT32_MAX

/*
 * The node index of the owner of KEY_HASH from the answers of a validated ring or
 * ketama snapshot with points (see ANSWER_SPLIT_BITS), or ANSWER_SLOW when the points
 * must decide.
 */
static inline uint32_t shmring__answer_owner(const struct snapshot_header *h,
                                             const uint64_t *answers, uint64_t key_hash)
{
    const uint64_t *answer = answers + (key_hash >> (64 - h->answer_bits));
    uint64_t word = answer[0];
    uint32_t bits = shmring__answer_split_bits(key_hash, h->answer_bits);
    uint32_t split = (uint32_t)(word >> ANSWER_SPLIT1_SHIFT) & ANSWER_SPLIT_MASK;
    /* A crowded answer has no second split (those bits are part of its point index):
     * the mask stands for it, which no key's bits exceed. */
    uint64_t crowded = word & ANSWER_CROWDED;
    uint32_t split2 =
        (uint32_t)((word >> ANSWER_SPLIT2_SHIFT) | (0 - crowded)) & ANSWER_SPLIT_MASK;
    /* Which owner, 0 to 2, and whether the points must decide, are computed without a
     * branch: random keys would mispredict one half of the time, and each
     * misprediction also drops the reads of the lookups that follow. */
    uint32_t which = (uint32_t)(bits > split) + (uint32_t)(bits > split2);
    bool slow = (bits == split) | (bits == split2) | (crowded & (bits > split));
    if (__builtin_expect(slow, 0))
        return ANSWER_SLOW;
    /* The owner field: the first or second of this answer, or the first of the
     * next, picked with masks rather than an indexed array, which would go through
     * memory, or a condition, which compilers turn into a branch around the read of
     * the next answer (in the same cache line but for one bucket in eight). */
    uint64_t next = answer[1];
    uint64_t take_next = 0 - (uint64_t)(which == 2);
    uint64_t holder = (next & take_next) | (word & ~take_next);
    unsigned shift = which == 1 ? ANSWER_OWNER2_SHIFT : ANSWER_OWNER_SHIFT;
    return (uint32_t)(holder >> shift) & ANSWER_OWNER_MASK;
}

/*
 * Index of the first ring point >= KEY_HASH of a validated ring or ketama snapshot
 * with points, where the answer of the key's bucket did not tell its owner: from
 * the crowded answer's first point, or else the bucket index.
 */
static inline uint32_t shmring__answer_slow_point(const void *buffer, uint64_t key_hash)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const uint64_t *answers = snapshot_section_at(buffer, &h->answers);
    uint64_t word = answers[key_hash >> (64 - h->answer_bits)];
    if (word & ANSWER_CROWDED) {
        /* The builder's buckets hold a few points: scan a few from the bucket's
         * first; past them (a snapshot crowded by another writer), bisect. */
        const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
        uint32_t i = shmring__answer_first_point(word);
        uint32_t end = h->point_count - i < SNAPSHOT_BUCKET_SCAN_MAX
                           ? h->point_count
                           : i + SNAPSHOT_BUCKET_SCAN_MAX;
        while (i < end && points[i].point < key_hash)
            i++;
        if (i < end)
            return i;
        if (i == h->point_count)
            return 0;
    }
    return shmring__snapshot_first_point(buffer, key_hash);
}

/*
 * The node index of the owner of KEY_HASH in a validated ring or ketama snapshot with
 * points: what points[shmring__snapshot_first_point()].node_index is, from the
 * bucket's answer alone for most keys.
 */
static inline uint32_t shmring__snapshot_point_owner(const void *buffer,
                                                     uint64_t key_hash)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    uint32_t owner =
        shmring__answer_owner(h, snapshot_section_at(buffer, &h->answers), key_hash);
    if (__builtin_expect(owner == ANSWER_SLOW, 0)) {
        const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
        owner = points[shmring__answer_slow_point(buffer, key_hash)].node_index;
    }
    return owner;
}

/*
 * Node index of the owner of KEY_HASH in a validated snapshot with up nodes, of a
 * ring or table algorithm: a node algorithm may need the key itself
 * (shmring__snapshot_key_owner()).
 */
static inline uint32_t shmring__snapshot_owner(const void *buffer, uint64_t key_hash)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct placement_algorithm *algorithm = shmring__algorithm_valid(h->algorithm);
    if (algorithm->lookup == PLACEMENT_LOOKUP_TABLE) {
        const uint32_t *table = snapshot_section_at(buffer, &h->table);
        return table[shmring__snapshot_slot(h, key_hash)];
    }
    return shmring__snapshot_point_owner(buffer, key_hash);
}

/* The lookup's answer for a ring without up nodes: 0, SHMRING_EEMPTY or
 * SHMRING_EALLDOWN. */
static inline int shmring__snapshot_state(const void *buffer)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    if (h->node_count == 0)
        return SHMRING_EEMPTY;
    if (h->up_count == 0)
        return SHMRING_EALLDOWN;
    return 0;
}

/* The hash a validated snapshot gives KEY for its lookups. */
static inline uint64_t shmring__snapshot_key_hash(const void *buffer, const void *key,
                                                  size_t len)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    return shmring__key_hash((shmring_algorithm_t)h->algorithm, (shmring_hash_t)h->hash,
                             key, len);
}

/* Node index of the owner of KEY (LEN bytes) in a validated snapshot with up nodes,
 * of any algorithm. */
static inline uint32_t shmring__snapshot_key_owner(const void *buffer, const void *key,
                                                   size_t len)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    uint64_t key_hash = shmring__snapshot_key_hash(buffer, key, len);
    const struct placement_algorithm *algorithm = shmring__algorithm_valid(h->algorithm);
    if (__builtin_expect(algorithm->lookup == PLACEMENT_LOOKUP_NODES, 0)) {
        uint32_t owner;
        algorithm->rank(buffer, key, len, key_hash, &owner, 1);
        return owner;
    }
    return shmring__snapshot_owner(buffer, key_hash);
}

/*
 * The id of KEY's owner in a validated snapshot, into *id: the whole of
 * shmring_snapshot_lookup_id(), inline so that the reader's hot path is one function.
 */
static inline int shmring__snapshot_lookup_id(const void *buffer, const void *key,
                                              size_t len, uint32_t *id)
{
    int err = shmring__snapshot_state(buffer);
    if (err != 0)
        return err;
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    *id = nodes[shmring__snapshot_key_owner(buffer, key, len)].id;
    return 0;
}

/*
 * Validates SIZE bytes at BUFFER (8-byte aligned), which may hold anything: the whole
 * of shmring_snapshot_new()'s checking. Returns 0 or the code of the first problem.
 */
int shmring__snapshot_validate(const void *buffer, size_t size);

/*
 * Checks a header alone against an object of SIZE bytes: magic, byte order, format,
 * size, parameters, and counts within limits and consistent with one another (what
 * shmring_ring_info() relies on without reading the rest). Returns 0 or a code.
 */
int shmring__snapshot_header_check(const struct snapshot_header *h, uint64_t size);

/* What a validated snapshot's header says (shmring_snapshot_info()). */
void shmring__snapshot_info(const void *buffer, shmring_snapshot_info_t *out);

/* The node set a validated snapshot was built from (shmring_nodeset_from_snapshot()). */
int shmring__nodeset_from_snapshot(const void *buffer, shmring_nodeset_t **out);

/*
 * The lookups of shmring_snapshot_lookup(), shmring_snapshot_lookup_ids() and
 * shmring_snapshot_lookup_n() on a validated snapshot, as hidden functions: the
 * reader calls these directly.
 */
int shmring__snapshot_lookup(const void *buffer, const void *key, size_t len,
                             shmring_node_t *out);
int shmring__snapshot_lookup_ids(const void *buffer, const void *const *keys,
                                 const size_t *lens, size_t count, uint32_t *ids);
int shmring__snapshot_lookup_n(const void *buffer, const void *key, size_t len,
                               shmring_node_t *out, size_t n);

/*
 * The first N (>= 1) distinct up nodes that KEY tries in a validated snapshot with up
 * nodes, in the algorithm's candidate order (enum placement_candidates), as node
 * indexes into FOUND, the owner first: what shmring_lookup_n() answers, and the
 * candidates of a bounded-load lease. Returns how many (N, or the up count when
 * smaller).
 */
int shmring__snapshot_candidates(const void *buffer, const void *key, size_t len,
                                 uint32_t *found, size_t n);

/* Copies node NODE_INDEX (below the header's node_count) of a validated snapshot to
 * *out. */
void shmring__snapshot_node_at(const void *buffer, uint32_t node_index,
                               shmring_node_t *out);

/*
 * The answer of one bucket, whose points are [FIRST, END) of the POINT_COUNT (> 0)
 * sorted points, FIRST <= END <= POINT_COUNT: what the format defines (see
 * ANSWER_SPLIT_BITS), in one place for the builder that stores it and the validator
 * that compares it. The answer past the last bucket is that of the empty range
 * [POINT_COUNT, POINT_COUNT). Any such range is read in bounds, points sorted or not;
 * a range of more than two points is read whole at most.
 *
 * Answers are per bucket of the bucket index, so a bucket's points are its range
 * in the index.
 */
_Static_assert(ANSWER_EXTRA_BITS == 0, "an answer's points are a bucket index range");

/* The answer of a range of three points or more (FIRST + 2 < END), out of line. */
uint64_t shmring__bucket_answer_long(const struct snapshot_point *points,
                                     uint32_t point_count, unsigned answer_bits,
                                     uint32_t first, uint32_t end);

/*
 * The answer of a bucket of COUNT <= 2 points from what they hold: OWNER, the owner
 * of the first point at or after the bucket's start (for an empty bucket, the next
 * point's), SPLIT0 the split bits of the bucket's first point, OWNER1 and SPLIT1
 * those of its second (ignored unless COUNT is 2), NEXT_OWNER the owner of the first
 * point after the bucket, wrapping. Computed with masks rather than branches (or
 * conditions that compilers turn into branches), since the count varies from one
 * bucket to the next at random.
 */
static inline uint64_t shmring__answer_of_points(uint32_t count, uint64_t owner,
                                                 uint64_t split0, uint64_t owner1,
                                                 uint64_t split1, uint64_t next_owner)
{
    /* Two points of two owners are two runs; of one owner, one run that ends at
     * the second. */
    uint64_t two = 0 - (uint64_t)(count == 2);
    uint64_t two_runs = two & (0 - (uint64_t)(owner1 != owner));
    uint64_t one_run_of_two = two & ~two_runs;
    uint64_t none = 0 - (uint64_t)(count == 0);
    uint64_t split = (split1 & one_run_of_two) | (split0 & ~one_run_of_two) |
                     (ANSWER_SPLIT_MASK & none);
    uint64_t owner2 = (owner1 & two_runs) | (next_owner & ~two_runs);
    uint64_t split2 = (split1 & two_runs) | (ANSWER_SPLIT_MASK & ~two_runs);
    return shmring__answer_runs((uint32_t)owner, (uint32_t)split, (uint32_t)owner2,
                                (uint32_t)split2);
}

static inline uint64_t shmring__bucket_answer(const struct snapshot_point *points,
                                              uint32_t point_count, unsigned answer_bits,
                                              uint32_t first, uint32_t end)
{
    uint32_t count = end - first;
    if (__builtin_expect(count > 2, 0))
        return shmring__bucket_answer_long(points, point_count, answer_bits, first, end);
    /* Zero to two points, about 96 buckets in 100 of the builder's. Past the last
     * point, the next owner is point 0's (the wrap); an empty range's first point
     * is its next one. The second point is read always and ignored unless there are
     * two. Every read is in bounds whatever FIRST and END. */
    uint32_t at0 = first & (0u - (first < point_count));
    uint32_t at1 = (first + 1) & (0u - (first + 1 < point_count));
    uint32_t at_end = end & (0u - (end < point_count));
    return shmring__answer_of_points(
        count, points[at0].node_index,
        shmring__answer_split_bits(points[at0].point, answer_bits),
        points[at1].node_index,
        shmring__answer_split_bits(points[at1].point, answer_bits),
        points[at_end].node_index);
}

/* Fills the 2^BUCKET_BITS + 1 ANSWERS of POINT_COUNT (> 0) sorted points from their
 * bucket index BUCKETS: what the builder stores. */
void shmring__answers_fill(const struct snapshot_point *points, uint32_t point_count,
                           const uint32_t *buckets, unsigned bucket_bits,
                           uint64_t *answers);

/*
 * An index from node ids to node positions of one validated snapshot: ids sorted
 * with their positions, for a binary search (ids are unique but may be sparse, so
 * no table indexed by id).
 */
struct node_id_entry {
    uint32_t id;
    uint32_t index;
};

/* Builds the id index of a validated snapshot into a new array of node_count entries
 * that the caller frees (NULL for a snapshot without nodes). Returns 0 or
 * SHMRING_ENOMEM. */
int shmring__node_id_index(const void *buffer, struct node_id_entry **out);

/* Finds ID in INDEX (COUNT entries): its node position, or -1. */
int64_t shmring__node_id_find(const struct node_id_entry *index, uint32_t count,
                              uint32_t id);

#endif /* SHMRING_SNAPSHOT_INTERNAL_H */
