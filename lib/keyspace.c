/*
 * Who owns how much of the keyspace: each node's share in one snapshot, and the
 * share whose owner changes between two. Both come from the lookup structures
 * themselves (the arcs between ring points, the maglev slots), exactly: no key is
 * sampled.
 *
 * A key is placed by its hash h, in [0, 2^64). Ring and ketama give h to the first
 * point >= h, wrapping to the first point; so the hash space falls into pieces
 * [p(k-1) + 1, p(k) + 1), each owned by point k, plus the wrap-around piece past the
 * last point, owned by the first. Maglev gives h to slot floor(h x T / 2^64), whose
 * piece is [ceil(s x 2^64 / T), ceil((s + 1) x 2^64 / T)).
 *
 * A piece's share is the share of the values the key hash takes that fall in it
 * (shmring__key_hash_range()), each taken as often: its length over 2^64 for a
 * 64-bit hash. The peers' 32-bit hashes take the multiples of 2^32, so a piece
 * between two of their points holds keys in proportion to its length just the same;
 * libmemcached's 15-bit crc32 takes only the first 2^15 of them, below 2^47.
 */
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "snapshot_handle_internal.h"
#include "snapshot_internal.h"
#include "text_internal.h"

typedef unsigned __int128 wide_t;

#define HASH_SPACE ((wide_t)1 << 64)
#define NO_NODE UINT32_MAX

/* A snapshot with up nodes seen as its consecutive pieces of the hash space. */
struct pieces {
    const struct snapshot_header *header;
    const struct snapshot_point *points;
    const uint32_t *table;
    /* Ring types: point_count + 1 (the last is the wrap-around); maglev: table_size. */
    uint64_t count;
    /* Maglev: 2^64 = quotient x table_size + remainder, for the slots' first hashes. */
    uint64_t quotient;
    uint64_t remainder;
};

static void pieces_of(const void *buffer, struct pieces *out)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    *out = (struct pieces){.header = h};
    if (shmring__algorithm_has_table(h->algorithm)) {
        out->table = snapshot_section_at(buffer, &h->table);
        out->count = h->table_size;
        out->quotient = (uint64_t)(HASH_SPACE / h->table_size);
        out->remainder = (uint64_t)(HASH_SPACE % h->table_size);
    } else {
        out->points = snapshot_section_at(buffer, &h->points);
        out->count = (uint64_t)h->point_count + 1;
    }
}

/* The values of the key hash of the snapshot with header H. */
static struct key_hash_range range_of(const struct snapshot_header *h)
{
    return shmring__key_hash_range(shmring__algorithm_valid(h->algorithm)->key_hash,
                                   (shmring_hash_t)h->hash);
}

/* How many of the values of R lie below X (at most 2^64). */
static wide_t values_below(const struct key_hash_range *r, wide_t x)
{
    if (x <= r->offset)
        return 0;
    wide_t below = (x - r->offset + ((wide_t)1 << r->shift) - 1) >> r->shift;
    wide_t all = (wide_t)1 << r->bits;
    return below < all ? below : all;
}

/* The share of the values of R that COUNT of them make. */
static double share_of(const struct key_hash_range *r, wide_t count)
{
    /* 2^bits as a double, exactly. */
    return (double)count / (double)((wide_t)1 << r->bits);
}

/* The first hash of piece K (K == count: 2^64, the end of the last piece). */
static wide_t piece_start(const struct pieces *p, uint64_t k)
{
    if (p->table != NULL) {
        /* ceil(k x 2^64 / T) = k x quotient + ceil(k x remainder / T), where
         * k x remainder < T^2 <= 2^48 keeps the division narrow. */
        uint64_t size = p->header->table_size;
        return (wide_t)k * p->quotient + (k * p->remainder + size - 1) / size;
    }
    if (k == 0)
        return 0;
    if (k == p->count)
        return HASH_SPACE;
    return (wide_t)p->points[k - 1].point + 1;
}

/* The node index owning piece K. Equal points give the ones after the first an
 * empty piece, so the owner of a shared point is its first, as lookups answer. */
static uint32_t piece_owner(const struct pieces *p, uint64_t k)
{
    if (p->table != NULL)
        return p->table[k];
    return p->points[k == p->count - 1 ? 0 : k].node_index;
}

int shmring_snapshot_shares(const shmring_snapshot_t *snapshot, double *shares,
                            size_t count)
{
    const struct snapshot_header *h = snapshot_header(snapshot->buffer);
    if (count < h->node_count)
        return SHMRING_EINVAL;
    for (uint32_t i = 0; i < h->node_count; i++)
        shares[i] = 0.0;
    if (h->up_count == 0)
        return 0;
    if (shmring__algorithm_valid(h->algorithm)->lookup == PLACEMENT_LOOKUP_NODES) {
        /* Rendezvous and jump have nothing to measure: each up node takes an equal
         * share of keys hashed at random, the share stated here. */
        const struct snapshot_node *nodes =
            snapshot_section_at(snapshot->buffer, &h->nodes);
        for (uint32_t i = 0; i < h->node_count; i++)
            shares[i] = nodes[i].state == SHMRING_STATE_UP ? 1.0 / h->up_count : 0.0;
        return 0;
    }
    if (shmring__algorithm_has_table(h->algorithm)) {
        const uint32_t *table = snapshot_section_at(snapshot->buffer, &h->table);
        /* Slots are counted first (a double holds every count up to 2^53 exactly,
         * and tables have at most 2^24 slots), then divided once: exact. */
        for (uint32_t s = 0; s < h->table_size; s++)
            shares[table[s]] += 1.0;
        for (uint32_t i = 0; i < h->node_count; i++)
            shares[i] /= h->table_size;
        return 0;
    }
    /* A point owns the key hashes from its predecessor (exclusive) up to itself; the
     * first point also owns those past the last one. Each point's count is divided
     * once. */
    const struct snapshot_point *points =
        snapshot_section_at(snapshot->buffer, &h->points);
    struct key_hash_range range = range_of(h);
    wide_t past_last = ((wide_t)1 << range.bits) -
                       values_below(&range, (wide_t)points[h->point_count - 1].point + 1);
    for (uint32_t i = 0; i < h->point_count; i++) {
        wide_t below = i == 0 ? 0 : values_below(&range, (wide_t)points[i - 1].point + 1);
        wide_t owned = values_below(&range, (wide_t)points[i].point + 1) - below;
        shares[points[i].node_index] +=
            share_of(&range, i == 0 ? owned + past_last : owned);
    }
    return 0;
}

/* The node-name order of the nodes of a snapshot, for matching them by name. */
struct named_node {
    const char *name;
    uint16_t length;
    uint32_t index;
};

static int compare_named(const void *a, const void *b)
{
    const struct named_node *x = a, *y = b;
    return shmring__text_compare(x->name, x->length, y->name, y->length);
}

/*
 * Fills MATCH[i] (room for FROM's node_count values) with the index in TO of the node
 * that has the name of FROM's node i, or NO_NODE. Returns 0 or SHMRING_ENOMEM.
 */
static int match_names(const void *from, const void *to, uint32_t *match)
{
    const struct snapshot_header *fh = snapshot_header(from), *th = snapshot_header(to);
    const struct snapshot_node *fnodes = snapshot_section_at(from, &fh->nodes);
    const struct snapshot_node *tnodes = snapshot_section_at(to, &th->nodes);
    const char *fstrings = snapshot_section_at(from, &fh->strings);
    const char *tstrings = snapshot_section_at(to, &th->strings);
    struct named_node *sorted = malloc((th->node_count + 1) * sizeof(*sorted));
    if (sorted == NULL)
        return SHMRING_ENOMEM;
    for (uint32_t i = 0; i < th->node_count; i++)
        sorted[i] = (struct named_node){.name = tstrings + tnodes[i].name_offset,
                                        .length = tnodes[i].name_length,
                                        .index = i};
    qsort(sorted, th->node_count, sizeof(*sorted), compare_named);
    for (uint32_t i = 0; i < fh->node_count; i++) {
        struct named_node key = {.name = fstrings + fnodes[i].name_offset,
                                 .length = fnodes[i].name_length};
        /* The validator does not make names unique (ids are what must be): a name
         * that several nodes share matches the node at the same position first, so
         * that a snapshot compared with itself moves nothing. */
        if (i < th->node_count &&
            shmring__text_compare(key.name, key.length, tstrings + tnodes[i].name_offset,
                                  tnodes[i].name_length) == 0) {
            match[i] = i;
            continue;
        }
        const struct named_node *found =
            bsearch(&key, sorted, th->node_count, sizeof(*sorted), compare_named);
        match[i] = found != NULL ? found->index : NO_NODE;
    }
    free(sorted);
    return 0;
}

/*
 * Whether the two snapshots give every key the same hash, so that their pieces of
 * the hash space can be compared. The algorithms' kinds of key hash decide it, with
 * the hash where a kind reads it (shmring__key_hash_same()): the same hash parameter
 * means different functions to different kinds (ring's md5 takes 64 bits of the
 * MD5, ketama's the first word in the top half). The pieces need nothing of the
 * points but their positions in that space: every ring-type lookup takes the first
 * point at or after the key's hash, and the maglev tables compared here take its
 * slot by multiply-high.
 */
static bool same_key_hash(const struct snapshot_header *a,
                          const struct snapshot_header *b)
{
    return shmring__key_hash_same(
        shmring__algorithm_valid(a->algorithm)->key_hash, (shmring_hash_t)a->hash,
        shmring__algorithm_valid(b->algorithm)->key_hash, (shmring_hash_t)b->hash);
}

/* The share of maglev slots whose owners differ, for tables of one size. */
static double moved_slots(const void *before, const void *after, const uint32_t *match)
{
    const struct snapshot_header *h = snapshot_header(before);
    const uint32_t *old_table = snapshot_section_at(before, &h->table);
    const uint32_t *new_table =
        snapshot_section_at(after, &snapshot_header(after)->table);
    uint64_t moved = 0;
    for (uint32_t s = 0; s < h->table_size; s++)
        moved += match[old_table[s]] != new_table[s];
    return (double)moved / h->table_size;
}

/*
 * The share of the hash space whose owners differ: both snapshots' pieces are
 * walked together, cut wherever either one's piece ends, and the lengths of the
 * cuts whose owners differ are summed.
 */
static double moved_pieces(const void *before, const void *after, const uint32_t *match)
{
    struct pieces a, b;
    pieces_of(before, &a);
    pieces_of(after, &b);
    /* One key hash (same_key_hash()), so one range. */
    struct key_hash_range range = range_of(a.header);
    wide_t moved = 0, position = 0;
    uint64_t i = 0, j = 0;
    while (position < HASH_SPACE) {
        wide_t end_a = piece_start(&a, i + 1), end_b = piece_start(&b, j + 1);
        wide_t end = end_a < end_b ? end_a : end_b;
        if (match[piece_owner(&a, i)] != piece_owner(&b, j))
            moved += values_below(&range, end) - values_below(&range, position);
        position = end;
        i += end_a == end;
        j += end_b == end;
    }
    return share_of(&range, moved);
}

/* Whether node I of A and node J of B are one node to a node algorithm: the same
 * address and hash key (the name matched already). */
static bool same_node_string(const void *a, uint32_t i, const void *b, uint32_t j)
{
    const struct snapshot_header *ha = snapshot_header(a), *hb = snapshot_header(b);
    const struct snapshot_node *x =
        (const struct snapshot_node *)snapshot_section_at(a, &ha->nodes) + i;
    const struct snapshot_node *y =
        (const struct snapshot_node *)snapshot_section_at(b, &hb->nodes) + j;
    const char *xs =
        (const char *)snapshot_section_at(a, &ha->strings) + x->address_offset;
    const char *ys =
        (const char *)snapshot_section_at(b, &hb->strings) + y->address_offset;
    /* The address, its NUL, and the hash key that follows. */
    size_t x_length = (size_t)x->address_length + 1 + x->hash_key_length;
    size_t y_length = (size_t)y->address_length + 1 + y->hash_key_length;
    return x->address_length == y->address_length && x_length == y_length &&
           memcmp(xs, ys, x_length) == 0;
}

/*
 * The share of keys hashed at random that move between two snapshots of one node
 * algorithm, in expectation (there is no structure to measure). Rendezvous: a key's
 * owner in either is the node of highest score among its own up nodes, so it stays
 * exactly when the highest of all the up nodes of both is one they share: the
 * shared nodes over all of them. Jump: a key's buckets among n and m are the same
 * with probability min(n, m) / max(n, m), and then uniform below min(n, m); it stays
 * when that bucket holds the same node in both.
 */
static double moved_among_nodes(const void *before, const void *after,
                                const uint32_t *match)
{
    const struct snapshot_header *a = snapshot_header(before);
    const struct snapshot_header *b = snapshot_header(after);
    const struct snapshot_node *old_nodes = snapshot_section_at(before, &a->nodes);
    const struct snapshot_node *new_nodes = snapshot_section_at(after, &b->nodes);
    if (a->algorithm == SHMRING_ALGORITHM_JUMP && a->up_count == a->node_count &&
        b->up_count == b->node_count) {
        uint32_t common = a->node_count < b->node_count ? a->node_count : b->node_count;
        uint32_t larger = a->node_count > b->node_count ? a->node_count : b->node_count;
        uint32_t same = 0;
        for (uint32_t i = 0; i < common; i++)
            same += match[i] == i && same_node_string(before, i, after, i);
        return 1.0 - (double)same / larger;
    }
    uint32_t shared = 0;
    for (uint32_t i = 0; i < a->node_count; i++) {
        uint32_t j = match[i];
        shared += old_nodes[i].state == SHMRING_STATE_UP && j != NO_NODE &&
                  new_nodes[j].state == SHMRING_STATE_UP &&
                  same_node_string(before, i, after, j);
    }
    return 1.0 - (double)shared / (a->up_count + b->up_count - shared);
}

/*
 * For snapshots that hash keys differently: a key's two places are unrelated, so it
 * stays with the chance that both put it on the same node.
 */
static int moved_by_chance(const shmring_snapshot_t *before,
                           const shmring_snapshot_t *after, const uint32_t *match,
                           double *share)
{
    uint32_t old_count = snapshot_header(before->buffer)->node_count;
    uint32_t new_count = snapshot_header(after->buffer)->node_count;
    double *old_shares = malloc((old_count + 1) * sizeof(*old_shares));
    double *new_shares = malloc((new_count + 1) * sizeof(*new_shares));
    int err = old_shares != NULL && new_shares != NULL ? 0 : SHMRING_ENOMEM;
    if (err == 0)
        err = shmring_snapshot_shares(before, old_shares, old_count);
    if (err == 0)
        err = shmring_snapshot_shares(after, new_shares, new_count);
    if (err == 0) {
        double stays = 0.0;
        for (uint32_t i = 0; i < old_count; i++) {
            if (match[i] != NO_NODE)
                stays += old_shares[i] * new_shares[match[i]];
        }
        *share = 1.0 - stays;
    }
    free(old_shares);
    free(new_shares);
    return err;
}

int shmring_snapshot_moved_share(const shmring_snapshot_t *before,
                                 const shmring_snapshot_t *after, double *share)
{
    bool old_up = before != NULL && snapshot_header(before->buffer)->up_count > 0;
    bool new_up = after != NULL && snapshot_header(after->buffer)->up_count > 0;
    /* Keys that only one of the two can place all move; keys neither can place
     * stay where they are: nowhere. */
    if (!old_up || !new_up) {
        *share = old_up != new_up ? 1.0 : 0.0;
        return 0;
    }
    const struct snapshot_header *a = snapshot_header(before->buffer);
    const struct snapshot_header *b = snapshot_header(after->buffer);
    uint32_t *match = malloc(((size_t)a->node_count + 1) * sizeof(*match));
    int err = match != NULL ? match_names(before->buffer, after->buffer, match)
                            : SHMRING_ENOMEM;
    bool a_nodes =
        shmring__algorithm_valid(a->algorithm)->lookup == PLACEMENT_LOOKUP_NODES;
    bool b_nodes =
        shmring__algorithm_valid(b->algorithm)->lookup == PLACEMENT_LOOKUP_NODES;
    if (err == 0 && a_nodes && a->algorithm == b->algorithm)
        *share = moved_among_nodes(before->buffer, after->buffer, match);
    else if (err == 0 && (a_nodes || b_nodes || !same_key_hash(a, b)))
        err = moved_by_chance(before, after, match, share);
    else if (err == 0 && shmring__algorithm_has_table(a->algorithm) &&
             a->algorithm == b->algorithm && a->table_size == b->table_size)
        *share = moved_slots(before->buffer, after->buffer, match);
    else if (err == 0 && (a->algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV ||
                          b->algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV))
        /* envoy-maglev's slots are residues, not ranges of the hash space: no
         * exact overlap with another table or a ring can be read off pieces. */
        err = moved_by_chance(before, after, match, share);
    else if (err == 0)
        *share = moved_pieces(before->buffer, after->buffer, match);
    free(match);
    return err;
}
