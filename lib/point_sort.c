/*
 * Sorting ring points by their 64-bit value, stably: equal points keep their input
 * order, which makes ties deterministic (the placement code emits points in
 * tie-break order).
 *
 * A large sort runs in the snapshot's own shared mapping, so a scratch copy of the
 * points would add half of a snapshot to the publisher's peak memory (256 MB for 16
 * million points). Large sets are therefore sorted mostly in place:
 *
 * 1. one in-place pass distributes the points by their top 8 bits (McIlroy, Bostic
 *    and McIlroy's "American flag sort"), recursing in place on the next 8 bits for
 *    any bucket too large for a small scratch (only crowded values make one);
 * 2. each bucket, about a megabyte for uniform hashes and so in the cache, is
 *    distributed through the scratch by its next bits, which leaves it almost
 *    sorted, and an insertion into place finishes it; a bucket whose values that
 *    distribution does not separate falls back to the LSD radix sort below;
 * 3. the in-place pass is not stable, so each run of equal points is put back into
 *    input order by its nodes' ranks: the order of each node's first point in the
 *    input. That is the stable order when each node's points are emitted together,
 *    as every placement does; the first pass checks it, and any other input (or a
 *    small one) is sorted by the stable LSD radix sort with a full scratch instead.
 *
 * The LSD radix sort skips the passes in which every point has the same digit
 * (ketama's points live in the top 32 bits, so it sorts in half the passes). Large
 * sets use 16-bit digits (four passes); small ones 8-bit digits, whose 256 counters
 * cost nothing to clear, where 65,536 would cost more than the points themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "placement_internal.h"

#define WIDE_DIGIT_BITS 16
#define NARROW_DIGIT_BITS 8
/* At most this many points are sorted by the stable LSD sort with a full scratch. */
#define SMALL_SORT_MAX (1u << 16)
/* The in-place pass's digit. */
#define FLAG_DIGIT_BITS 8
#define FLAG_DIGIT_VALUES (1u << FLAG_DIGIT_BITS)
/* How far ahead of a bucket's next free place its points are prefetched. */
#define PREFETCH_AHEAD 16
/* A bucket is distributed by one bit more than the log of its size (about half a
 * point per slot, so the insertion that follows moves few points), at most this
 * many bits. */
#define BUCKET_DIGIT_BITS_MAX 16u
/* An insertion that moves more points than this per point gives up: the
 * distribution did not separate the bucket's values. */
#define INSERTION_MOVES_PER_POINT 4u
/* Runs of equal points longer than this are ordered by qsort_r(), shorter ones by
 * insertion. */
#define TIE_INSERTION_MAX 16u

/* Stable LSD radix sort of COUNT points, with SCRATCH of COUNT points. */
static int sort_stable(struct snapshot_point *points, size_t count,
                       struct snapshot_point *scratch)
{
    unsigned digit_bits =
        count >= (1u << WIDE_DIGIT_BITS) ? WIDE_DIGIT_BITS : NARROW_DIGIT_BITS;
    size_t digit_values = (size_t)1 << digit_bits;
    uint64_t digit_mask = digit_values - 1;
    size_t *counts = malloc(digit_values * sizeof(*counts));
    if (counts == NULL)
        return SHMRING_ENOMEM;

    struct snapshot_point *from = points, *to = scratch;
    for (unsigned shift = 0; shift < 64; shift += digit_bits) {
        memset(counts, 0, digit_values * sizeof(*counts));
        for (size_t i = 0; i < count; i++)
            counts[(from[i].point >> shift) & digit_mask]++;
        if (counts[(from[0].point >> shift) & digit_mask] == count)
            continue;
        size_t start = 0;
        for (size_t d = 0; d < digit_values; d++) {
            size_t c = counts[d];
            counts[d] = start;
            start += c;
        }
        for (size_t i = 0; i < count; i++)
            to[counts[(from[i].point >> shift) & digit_mask]++] = from[i];
        struct snapshot_point *swap = from;
        from = to;
        to = swap;
    }
    if (from != points)
        memcpy(points, from, count * sizeof(*points));
    free(counts);
    return 0;
}

/* The working state of one in-place sort. */
struct flag_sort {
    /* Up to scratch_size points; buckets larger than that are split in place. */
    struct snapshot_point *scratch;
    size_t scratch_size;
    /* 2^BUCKET_DIGIT_BITS_MAX counters for distributing a bucket. */
    uint32_t *counts;
    /* The rank of node index i (below rank_count): the position of its points'
     * run in the input. */
    uint32_t *rank;
    int err;
};

static unsigned flag_digit(uint64_t point, unsigned shift)
{
    return (unsigned)(point >> shift) & (FLAG_DIGIT_VALUES - 1);
}

static int compare_rank(const void *a, const void *b, void *rank_table)
{
    const uint32_t *rank = rank_table;
    uint32_t x = rank[((const struct snapshot_point *)a)->node_index];
    uint32_t y = rank[((const struct snapshot_point *)b)->node_index];
    return (x > y) - (x < y);
}

/* Puts each run of equal points of a sorted bucket into its nodes' rank order: the
 * order a stable sort gives (a node's equal points are identical). */
static void order_ties(struct flag_sort *s, struct snapshot_point *points, size_t count)
{
    const uint32_t *rank = s->rank;
    for (size_t i = 0; i + 1 < count;) {
        size_t end = i + 1;
        while (end < count && points[end].point == points[i].point)
            end++;
        size_t run = end - i;
        if (run > TIE_INSERTION_MAX) {
            qsort_r(points + i, run, sizeof(*points), compare_rank, s->rank);
        } else {
            for (size_t j = i + 1; j < end; j++) {
                struct snapshot_point p = points[j];
                size_t k = j;
                while (k > i && rank[points[k - 1].node_index] > rank[p.node_index]) {
                    points[k] = points[k - 1];
                    k--;
                }
                points[k] = p;
            }
        }
        i = end;
    }
}

/*
 * Sorts a bucket of COUNT points (at most the scratch's size) whose values share
 * their bits from SHIFT up: distributed through the scratch by the bits just below
 * SHIFT, then inserted back into place.
 */
static void sort_bucket(struct flag_sort *s, struct snapshot_point *points, size_t count,
                        unsigned shift)
{
    unsigned bits = 1;
    while (bits < BUCKET_DIGIT_BITS_MAX && ((size_t)1 << bits) < 2 * count)
        bits++;
    if (bits > shift)
        bits = shift;
    if (bits > 0) {
        unsigned low = shift - bits;
        uint64_t mask = ((uint64_t)1 << bits) - 1;
        size_t values = (size_t)1 << bits;
        uint32_t *counts = s->counts;
        memset(counts, 0, values * sizeof(*counts));
        for (size_t i = 0; i < count; i++)
            counts[(points[i].point >> low) & mask]++;
        uint32_t start = 0;
        for (size_t d = 0; d < values; d++) {
            uint32_t c = counts[d];
            counts[d] = start;
            start += c;
        }
        struct snapshot_point *scratch = s->scratch;
        for (size_t i = 0; i < count; i++)
            scratch[counts[(points[i].point >> low) & mask]++] = points[i];

        size_t budget = INSERTION_MOVES_PER_POINT * count;
        for (size_t i = 0; i < count; i++) {
            struct snapshot_point p = scratch[i];
            size_t j = i;
            while (j > 0 && points[j - 1].point > p.point) {
                if (budget == 0) {
                    /* Give up: POINTS keeps every point once, in some order, for
                     * the LSD sort to finish. */
                    points[j] = p;
                    memcpy(points + i + 1, scratch + i + 1,
                           (count - i - 1) * sizeof(*points));
                    int err = sort_stable(points, count, scratch);
                    if (err != 0)
                        s->err = err;
                    goto sorted;
                }
                budget--;
                points[j] = points[j - 1];
                j--;
            }
            points[j] = p;
        }
    }
sorted:
    order_ties(s, points, count);
}

/*
 * Sorts points whose values share their bits above SHIFT + FLAG_DIGIT_BITS, as many
 * as COUNTS (the number of points per value of the digit at SHIFT, which the caller
 * counted) add up to: distributed in place by that digit, then each bucket sorted.
 */
static void sort_in_place(struct flag_sort *s, struct snapshot_point *points,
                          unsigned shift, const size_t *counts)
{
    size_t head[FLAG_DIGIT_VALUES], tail[FLAG_DIGIT_VALUES];
    size_t start = 0;
    for (unsigned d = 0; d < FLAG_DIGIT_VALUES; d++) {
        head[d] = start;
        start += counts[d];
        tail[d] = start;
    }
    /* Each point moves once, straight to the next free place of its bucket, and the
     * point it displaces moves on in turn, until the cycle comes back. */
    for (unsigned d = 0; d < FLAG_DIGIT_VALUES; d++) {
        while (head[d] < tail[d]) {
            struct snapshot_point p = points[head[d]];
            unsigned digit = flag_digit(p.point, shift);
            while (digit != d) {
                /* The cycle's next read is where its point goes: a cache miss that
                 * nothing can overlap, unless each bucket's next lines are already
                 * on their way. (Computed as an integer: the address may lie past
                 * the end of the points, which a prefetch may touch but C may not
                 * point at.) */
                __builtin_prefetch((const void *)((uintptr_t)&points[head[digit]] +
                                                  PREFETCH_AHEAD * sizeof(*points)),
                                   1);
                struct snapshot_point displaced = points[head[digit]];
                points[head[digit]++] = p;
                p = displaced;
                digit = flag_digit(p.point, shift);
            }
            points[head[d]++] = p;
        }
    }

    start = 0;
    for (unsigned d = 0; d < FLAG_DIGIT_VALUES && s->err == 0; d++) {
        struct snapshot_point *bucket = points + start;
        size_t size = counts[d];
        start += size;
        if (size < 2)
            continue;
        if (size <= s->scratch_size) {
            sort_bucket(s, bucket, size, shift);
        } else if (shift == 0) {
            order_ties(s, bucket, size); /* all equal */
        } else {
            size_t next_counts[FLAG_DIGIT_VALUES] = {0};
            unsigned next_shift = shift - FLAG_DIGIT_BITS;
            for (size_t i = 0; i < size; i++)
                next_counts[flag_digit(bucket[i].point, next_shift)]++;
            sort_in_place(s, bucket, next_shift, next_counts);
        }
    }
}

/*
 * One pass over the input: the counts of the top digit, and the ranks of the nodes
 * (into a new array *RANK that the caller frees). Returns 0, SHMRING_ENOMEM, or 1
 * when some node's points are not together (or a reserved field is set), for which
 * ranks do not give the stable order.
 */
static int first_pass(const struct snapshot_point *points, size_t count,
                      size_t counts[FLAG_DIGIT_VALUES], uint32_t **rank)
{
    /* The node index of each run of one node's points, in input order. */
    size_t runs = 0, capacity = 1024;
    uint32_t *run_nodes = malloc(capacity * sizeof(*run_nodes));
    if (run_nodes == NULL)
        return SHMRING_ENOMEM;
    uint32_t max_index = 0, reserved = 0;
    for (size_t i = 0; i < count; i++) {
        counts[flag_digit(points[i].point, 64 - FLAG_DIGIT_BITS)]++;
        reserved |= points[i].reserved;
        uint32_t node = points[i].node_index;
        if (i > 0 && node == points[i - 1].node_index)
            continue;
        if (runs == capacity) {
            capacity *= 2;
            uint32_t *grown = realloc(run_nodes, capacity * sizeof(*run_nodes));
            if (grown == NULL) {
                free(run_nodes);
                return SHMRING_ENOMEM;
            }
            run_nodes = grown;
        }
        run_nodes[runs++] = node;
        if (node > max_index)
            max_index = node;
    }
    /* Node indexes are below SHMRING_NODES_MAX in every placement; the rank table of
     * anything else could be huge. */
    int result = reserved != 0 || max_index >= SHMRING_NODES_MAX ? 1 : 0;
    uint32_t *ranks = NULL;
    if (result == 0) {
        ranks = malloc(((size_t)max_index + 1) * sizeof(*ranks));
        if (ranks == NULL)
            result = SHMRING_ENOMEM;
    }
    if (result == 0) {
        memset(ranks, 0xff, ((size_t)max_index + 1) * sizeof(*ranks));
        for (size_t r = 0; r < runs && result == 0; r++) {
            if (ranks[run_nodes[r]] != UINT32_MAX)
                result = 1; /* a second run of this node */
            ranks[run_nodes[r]] = (uint32_t)r;
        }
    }
    free(run_nodes);
    if (result != 0) {
        free(ranks);
        return result;
    }
    *rank = ranks;
    return 0;
}

static int sort_with_full_scratch(struct snapshot_point *points, size_t count)
{
    struct snapshot_point *scratch = malloc(count * sizeof(*scratch));
    if (scratch == NULL)
        return SHMRING_ENOMEM;
    int err = sort_stable(points, count, scratch);
    free(scratch);
    return err;
}

int shmring__points_sort(struct snapshot_point *points, size_t count)
{
    if (count < 2)
        return 0;
    if (count <= SMALL_SORT_MAX)
        return sort_with_full_scratch(points, count);

    size_t counts[FLAG_DIGIT_VALUES] = {0};
    struct flag_sort s = {.err = 0};
    int err = first_pass(points, count, counts, &s.rank);
    if (err == 1)
        return sort_with_full_scratch(points, count);
    if (err != 0)
        return err;
    /* Twice the mean bucket of the first pass: room for uniform values' largest
     * buckets, a 128th of the points. */
    s.scratch_size = count / (FLAG_DIGIT_VALUES / 2);
    if (s.scratch_size < SMALL_SORT_MAX)
        s.scratch_size = SMALL_SORT_MAX;
    s.scratch = malloc(s.scratch_size * sizeof(*s.scratch));
    s.counts = malloc(((size_t)1 << BUCKET_DIGIT_BITS_MAX) * sizeof(*s.counts));
    if (s.scratch == NULL || s.counts == NULL)
        s.err = SHMRING_ENOMEM;
    else
        sort_in_place(&s, points, 64 - FLAG_DIGIT_BITS, counts);
    free(s.scratch);
    free(s.counts);
    free(s.rank);
    return s.err;
}
