/*
 * Lookups on a validated snapshot. Nothing here checks bounds again: the validator
 * has proved every index these functions follow.
 */
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "snapshot_internal.h"

/* Copies the LENGTH-byte string at STRINGS + OFFSET and its NUL into OUT (room for
 * SHMRING_NAME_MAX + 1 bytes). Most names and addresses are short: a fixed 32-byte
 * copy is a few instructions, where memcpy() would first pick a method by size.
 * The bytes it copies past the NUL stay inside the strings section (checked here)
 * and are harmless in OUT. */
static inline void copy_string(char *out, const char *strings, uint64_t strings_size,
                               uint32_t offset, uint16_t length)
{
    enum { SHORT = 32 };
    if (length < SHORT && strings_size - offset >= SHORT)
        memcpy(out, strings + offset, SHORT);
    else
        memcpy(out, strings + offset, (size_t)length + 1);
}

/* Copies node NODE_INDEX of a validated snapshot to *out. */
static inline void node_copy(const void *buffer, uint32_t node_index, shmring_node_t *out)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *n =
        (const struct snapshot_node *)snapshot_section_at(buffer, &h->nodes) + node_index;
    const char *strings = snapshot_section_at(buffer, &h->strings);
    out->id = n->id;
    out->weight = n->weight;
    /* Reserved fields zero (see shmring.h's rule for public structs). */
    memset(out->reserved, 0, sizeof(out->reserved));
    copy_string(out->name, strings, h->strings.size, n->name_offset, n->name_length);
    copy_string(out->address, strings, h->strings.size, n->address_offset,
                n->address_length);
}

/* The end of the run of points of one owner that starts at point I, before END. */
static uint32_t run_end(const struct snapshot_point *points, uint32_t i, uint32_t end)
{
    uint32_t owner = points[i].node_index;
    while (i < end && points[i].node_index == owner)
        i++;
    return i;
}

uint64_t shmring__bucket_answer_long(const struct snapshot_point *points,
                                     uint32_t point_count, unsigned answer_bits,
                                     uint32_t first, uint32_t end)
{
    uint32_t owner = points[first].node_index;
    /* The owner of the first point after the bucket, wrapping. */
    uint32_t next_owner = points[end < point_count ? end : 0].node_index;
    uint32_t end1 = run_end(points, first, end);
    uint32_t split = shmring__answer_split_bits(points[end1 - 1].point, answer_bits);
    if (end1 == end)
        return shmring__answer_runs(owner, split, next_owner, ANSWER_SPLIT_MASK);
    uint32_t end2 = run_end(points, end1, end);
    if (end2 < end)
        return shmring__answer_crowded(owner, split, first);
    return shmring__answer_runs(
        owner, split, points[end1].node_index,
        shmring__answer_split_bits(points[end2 - 1].point, answer_bits));
}

void shmring__answers_fill(const struct snapshot_point *points, uint32_t point_count,
                           const uint32_t *buckets, unsigned bucket_bits,
                           uint64_t *answers)
{
    uint64_t bucket_count = UINT64_C(1) << bucket_bits;
    for (uint64_t b = 0; b < bucket_count; b++)
        answers[b] = shmring__bucket_answer(points, point_count, bucket_bits, buckets[b],
                                            buckets[b + 1]);
    answers[bucket_count] = shmring__bucket_answer(points, point_count, bucket_bits,
                                                   point_count, point_count);
}

int shmring__snapshot_lookup(const void *buffer, const void *key, size_t len,
                             shmring_node_t *out)
{
    int err = shmring__snapshot_state(buffer);
    if (err != 0)
        return err;
    node_copy(buffer, shmring__snapshot_key_owner(buffer, key, len), out);
    return 0;
}

/* Appends NODE_INDEX to FOUND unless it is there already; returns the new count. */
static size_t add_distinct(uint32_t *found, size_t count, uint32_t node_index)
{
    for (size_t i = 0; i < count; i++) {
        if (found[i] == node_index)
            return count;
    }
    found[count] = node_index;
    return count + 1;
}

/*
 * Collects up to N distinct owners in the algorithm's candidate order: ring types
 * walk the points clockwise from the key's point; maglev walks the table forward
 * from the key's slot (both walks stop after one full turn, so they end even when
 * fewer than N nodes are up); a ranked algorithm ranks the up nodes itself.
 */
int shmring__snapshot_candidates(const void *buffer, const void *key, size_t len,
                                 uint32_t *found, size_t n)
{
    uint64_t key_hash = shmring__snapshot_key_hash(buffer, key, len);
    const struct snapshot_header *h = snapshot_header(buffer);
    size_t wanted = n < h->up_count ? n : h->up_count;
    size_t count = 0;
    const struct placement_algorithm *algorithm = shmring__algorithm_valid(h->algorithm);
    if (algorithm->candidates == PLACEMENT_CANDIDATES_RANKED)
        return (int)algorithm->rank(buffer, key, len, key_hash, found, wanted);
    if (algorithm->candidates == PLACEMENT_CANDIDATES_TABLE_FORWARD) {
        const uint32_t *table = snapshot_section_at(buffer, &h->table);
        uint64_t slot = shmring__snapshot_slot(h, key_hash);
        for (uint32_t step = 0; step < h->table_size && count < wanted; step++) {
            count = add_distinct(found, count, table[slot]);
            if (++slot == h->table_size)
                slot = 0;
        }
        return (int)count;
    }
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    uint32_t i = shmring__snapshot_first_point(buffer, key_hash);
    for (uint32_t step = 0; step < h->point_count && count < wanted; step++) {
        if (i == h->point_count)
            i = 0;
        count = add_distinct(found, count, points[i].node_index);
        i++;
    }
    return (int)count;
}

int shmring__snapshot_lookup_n(const void *buffer, const void *key, size_t len,
                               shmring_node_t *out, size_t n)
{
    if (n == 0)
        return SHMRING_EINVAL;
    int err = shmring__snapshot_state(buffer);
    if (err != 0)
        return err;
    if (n > SHMRING_LOOKUP_N_MAX)
        n = SHMRING_LOOKUP_N_MAX;
    uint32_t found[SHMRING_LOOKUP_N_MAX];
    int count = shmring__snapshot_candidates(buffer, key, len, found, n);
    for (int i = 0; i < count; i++)
        node_copy(buffer, found[i], &out[i]);
    return count;
}

/*
 * Keys of a batch are resolved in groups of this many: hashed first, then their
 * first cache line of the lookup structure is prefetched, then they are resolved.
 * The misses of a group overlap instead of following one another, which is what a
 * batch gains on rings larger than the cache.
 */
#define BATCH_GROUP 16

/*
 * Owners' ids of the COUNT (<= BATCH_GROUP) key hashes of a ring or table snapshot,
 * into IDS. The first read of
 * every lookup (the maglev slot; the bucket's answer) is prefetched for the whole
 * group before any lookup runs. Each algorithm resolves in its own loop, as
 * shmring__snapshot_owner() would, without its per-key branch.
 */
static void ids_of_hashes(const void *buffer, const uint64_t *hashes, size_t count,
                          uint32_t *ids)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    const struct placement_algorithm *algorithm = shmring__algorithm_valid(h->algorithm);
    if (algorithm->lookup == PLACEMENT_LOOKUP_TABLE) {
        const uint32_t *table = snapshot_section_at(buffer, &h->table);
        uint64_t slots[BATCH_GROUP];
        for (size_t i = 0; i < count; i++) {
            slots[i] = shmring__snapshot_slot(h, hashes[i]);
            __builtin_prefetch(&table[slots[i]]);
        }
        for (size_t i = 0; i < count; i++)
            ids[i] = nodes[table[slots[i]]].id;
        return;
    }
    /* Ring and ketama: the answers first; the few keys they leave to the points
     * then prefetch the points they start from (a crowded bucket's first point, or
     * the bucket index), then resolve, so that their misses overlap too. */
    const uint64_t *answers = snapshot_section_at(buffer, &h->answers);
    const uint32_t *buckets = snapshot_section_at(buffer, &h->buckets);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    uint32_t owners[BATCH_GROUP];
    uint8_t slow[BATCH_GROUP];
    size_t slow_count = 0;
    for (size_t i = 0; i < count; i++)
        __builtin_prefetch(&answers[hashes[i] >> (64 - h->answer_bits)]);
    for (size_t i = 0; i < count; i++) {
        owners[i] = shmring__answer_owner(h, answers, hashes[i]);
        if (owners[i] == ANSWER_SLOW) {
            slow[slow_count++] = (uint8_t)i;
            uint64_t word = answers[hashes[i] >> (64 - h->answer_bits)];
            if (word & ANSWER_CROWDED)
                __builtin_prefetch(&points[shmring__answer_first_point(word)]);
            else
                __builtin_prefetch(&buckets[shmring__snapshot_bucket(h, hashes[i])]);
        }
    }
    for (size_t s = 0; s < slow_count; s++)
        owners[slow[s]] =
            points[shmring__answer_slow_point(buffer, hashes[slow[s]])].node_index;
    for (size_t i = 0; i < count; i++)
        ids[i] = nodes[owners[i]].id;
}

int shmring__snapshot_lookup_ids(const void *buffer, const void *const *keys,
                                 const size_t *lens, size_t count, uint32_t *ids)
{
    int err = shmring__snapshot_state(buffer);
    if (err != 0)
        return err;
    const struct snapshot_header *h = snapshot_header(buffer);
    if (shmring__algorithm_valid(h->algorithm)->lookup == PLACEMENT_LOOKUP_NODES) {
        /* Nothing to prefetch: a node algorithm reads the node table alone. */
        const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
        for (size_t i = 0; i < count; i++)
            ids[i] = nodes[shmring__snapshot_key_owner(buffer, keys[i], lens[i])].id;
        return 0;
    }
    uint64_t hashes[BATCH_GROUP];
    for (size_t first = 0; first < count; first += BATCH_GROUP) {
        size_t group = count - first < BATCH_GROUP ? count - first : BATCH_GROUP;
        for (size_t i = 0; i < group; i++)
            hashes[i] =
                shmring__snapshot_key_hash(buffer, keys[first + i], lens[first + i]);
        ids_of_hashes(buffer, hashes, group, ids + first);
    }
    return 0;
}

void shmring__snapshot_info(const void *buffer, shmring_snapshot_info_t *out)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    /* Whole, reserved fields included (see shmring.h's rule for public structs). */
    *out = (shmring_snapshot_info_t){
        .params = {.algorithm = (shmring_algorithm_t)h->algorithm,
                   .hash = (shmring_hash_t)h->hash,
                   .vnodes = h->vnodes,
                   .table_size = h->table_size,
                   .min_ring_size = h->min_ring_size_param,
                   .max_ring_size = h->max_ring_size_param},
        .node_count = h->node_count,
        .up_count = h->up_count,
        .point_count =
            shmring__algorithm_has_table(h->algorithm) ? h->table_size : h->point_count,
        .next_node_id = h->next_node_id,
        .size = h->total_size,
        .fingerprint = h->fingerprint};
}

void shmring__snapshot_node_at(const void *buffer, uint32_t node_index,
                               shmring_node_t *out)
{
    node_copy(buffer, node_index, out);
}

static int compare_id_entries(const void *a, const void *b)
{
    uint32_t x = ((const struct node_id_entry *)a)->id;
    uint32_t y = ((const struct node_id_entry *)b)->id;
    return (x > y) - (x < y);
}

int shmring__node_id_index(const void *buffer, struct node_id_entry **out)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    *out = NULL;
    if (h->node_count == 0)
        return 0;
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    struct node_id_entry *index = malloc(h->node_count * sizeof(*index));
    if (index == NULL)
        return SHMRING_ENOMEM;
    /* The builder writes nodes in id order (ids are given out in order), which
     * needs no sort: a switch to a large ring then builds its index in one pass. */
    bool sorted = true;
    for (uint32_t i = 0; i < h->node_count; i++) {
        index[i] = (struct node_id_entry){.id = nodes[i].id, .index = i};
        sorted &= i == 0 || index[i].id > index[i - 1].id;
    }
    if (!sorted)
        qsort(index, h->node_count, sizeof(*index), compare_id_entries);
    *out = index;
    return 0;
}

int64_t shmring__node_id_find(const struct node_id_entry *index, uint32_t count,
                              uint32_t id)
{
    /* Ids are given out in order and only removals leave gaps: while none has, id I
     * is entry I, and no search is needed. */
    if (id < count && index[id].id == id)
        return (int64_t)index[id].index;
    const struct node_id_entry key = {.id = id};
    const struct node_id_entry *found =
        bsearch(&key, index, count, sizeof(*index), compare_id_entries);
    return found != NULL ? (int64_t)found->index : -1;
}
