/*
 * `jump`: Lamping and Veach's jump consistent hash (2014) as Guava computes it,
 * Hashing.consistentHash(Hashing.murmur3_128().hashString(key, UTF_8), n) (Guava 31.1,
 * com/google/common/hash/Hashing.java), reproduced bit for bit:
 *
 * - the key hash is murmur3_128 (seed 0) of the key's bytes, which for a Java String
 *   are its UTF-8; consistentHash() takes the HashCode's padToLong(), for a 128-bit
 *   hash asLong(): the first 8 bytes, little-endian, which is MurmurHash3 x64_128's
 *   h1 (the `murmur3_128` hash, hash.c);
 * - a LinearCongruentialGenerator seeded with that long steps
 *   state = 2862933555777941757 x state + 1 (mod 2^64), and nextDouble() is
 *   ((int) (state >>> 33) + 1) / 2^31 in Java's int arithmetic, which wraps: the
 *   largest state gives -2^31, so -1.0;
 * - from candidate 0, next = (int) ((candidate + 1) / nextDouble()), and the key
 *   moves to next while 0 <= next < n. Java's (int) of a double saturates, where C's
 *   conversion of a value out of range is undefined: the comparison is made on the
 *   double, which gives the same answer (trunc(q) < n exactly when q < n).
 *
 * Bucket i is node i of the node set. Guava's buckets are numbered, so jump takes no
 * weights and no down nodes (check_nodes()), and a publication may not move a node
 * to another bucket (check_change()): it may add nodes at the end, remove the last
 * ones, or replace a node in its bucket; anything else would renumber buckets and
 * move keys that a Guava client keeps where they were. The lookup is
 * O(log n) steps of the generator.
 */
#include <stdlib.h>
#include <string.h>

#include "nodeset_internal.h"
#include "placement_internal.h"
#include "text_internal.h"

#define JUMP_MULTIPLIER UINT64_C(2862933555777941757)

/* Guava's LinearCongruentialGenerator.nextDouble(): the state steps, then the
 * top 31 bits plus 1 as a Java int (wrapping), over 2^31. */
static inline double next_double(uint64_t *state)
{
    *state = JUMP_MULTIPLIER * *state + 1;
    int32_t top = (int32_t)(uint32_t)((*state >> 33) + 1);
    return (double)top / 2147483648.0;
}

/* Guava's consistentHash(long input, int buckets), BUCKETS >= 1. */
static uint32_t jump_bucket(uint64_t input, uint32_t buckets)
{
    uint64_t state = input;
    uint32_t candidate = 0;
    for (;;) {
        double next = (double)(candidate + 1) / next_double(&state);
        if (!(next >= 0.0 && next < (double)buckets))
            return candidate;
        candidate = (uint32_t)next;
    }
}

/* The node index of bucket BUCKET: the BUCKET-th up node. The builder refuses down
 * nodes, so in its snapshots bucket i is node i; another writer's snapshot may have
 * down nodes, which are skipped. */
static uint32_t bucket_node(const struct snapshot_header *h,
                            const struct snapshot_node *nodes, uint32_t bucket)
{
    if (h->up_count == h->node_count)
        return bucket;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < h->node_count; i++) {
        if (nodes[i].state == SHMRING_STATE_UP && seen++ == bucket)
            return i;
    }
    return 0;
}

/*
 * The owner, then the buckets the key had before each one after the first was added
 * (consistentHash() of the key with the owner's bucket number as the count, and so
 * on down to bucket 0: the key's history as buckets were added), then the buckets
 * after the owner's, wrapping. Guava names no order of candidates; this one puts
 * first the nodes that held the key while the ring was smaller.
 */
static size_t rank(const void *buffer, const void *key, size_t len, uint64_t key_hash,
                   uint32_t *found, size_t n)
{
    (void)key;
    (void)len;
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    uint32_t buckets = h->up_count;
    size_t wanted = n < buckets ? n : buckets;
    uint32_t owner = jump_bucket(key_hash, buckets);
    size_t count = 0;
    found[count++] = bucket_node(h, nodes, owner);
    for (uint32_t b = owner; b > 0 && count < wanted;) {
        b = jump_bucket(key_hash, b);
        found[count++] = bucket_node(h, nodes, b);
    }
    /* The chain holds buckets up to the owner's; the rest follow it in turn. */
    for (uint32_t b = owner + 1; b < buckets && count < wanted; b++)
        found[count++] = bucket_node(h, nodes, b);
    if (count < wanted) {
        /* Buckets below the owner that the chain skipped, in order. */
        for (uint32_t b = 0; b < owner && count < wanted; b++) {
            uint32_t node = bucket_node(h, nodes, b);
            bool taken = false;
            for (size_t i = 0; i < count && !taken; i++)
                taken = found[i] == node;
            if (!taken)
                found[count++] = node;
        }
    }
    return count;
}

/* Guava's buckets have no weights and cannot be down. */
static int check_nodes(const struct placement_input *input)
{
    for (size_t i = 0; i < input->node_count; i++) {
        if (input->nodes[i].weight != 1)
            return SHMRING_EUNWEIGHTED;
    }
    for (size_t i = 0; i < input->node_count; i++) {
        if (input->nodes[i].state != SHMRING_STATE_UP)
            return SHMRING_EJUMPDOWN;
    }
    return 0;
}

/* A node of the current version, by name, for check_change(). */
struct named_bucket {
    const char *name;
    size_t length;
    uint32_t bucket;
};

static int compare_named(const void *a, const void *b)
{
    const struct named_bucket *x = a, *y = b;
    return shmring__text_compare(x->name, x->length, y->name, y->length);
}

/*
 * Every node that AFTER shares (by name) with the current version BEFORE must keep
 * its bucket: AFTER may add nodes at the end, drop the last ones, or put a new node
 * in a bucket whose node it drops (replacing a server), but never move a node.
 */
static int check_change(const void *before, const struct shmring_nodeset *after)
{
    const struct snapshot_header *h = snapshot_header(before);
    const struct snapshot_node *nodes = snapshot_section_at(before, &h->nodes);
    const char *strings = snapshot_section_at(before, &h->strings);
    if (h->node_count == 0 || after->count == 0)
        return 0;
    struct named_bucket *sorted = malloc(h->node_count * sizeof(*sorted));
    if (sorted == NULL)
        return SHMRING_ENOMEM;
    for (uint32_t i = 0; i < h->node_count; i++)
        sorted[i] = (struct named_bucket){.name = strings + nodes[i].name_offset,
                                          .length = nodes[i].name_length,
                                          .bucket = i};
    qsort(sorted, h->node_count, sizeof(*sorted), compare_named);
    int err = 0;
    for (size_t i = 0; i < after->count && err == 0; i++) {
        struct named_bucket key = {.name = after->nodes[i].name,
                                   .length = after->nodes[i].name_length};
        const struct named_bucket *found =
            bsearch(&key, sorted, h->node_count, sizeof(*sorted), compare_named);
        if (found != NULL && found->bucket != i)
            err = SHMRING_ERENUMBER;
    }
    free(sorted);
    return err;
}

static int size(struct placement_input *input, uint64_t *size)
{
    (void)input;
    *size = 0;
    return 0;
}

const struct placement_algorithm shmring__placement_jump = {
    .name = "jump",
    .id = SHMRING_ALGORITHM_JUMP,
    .peer = true,
    .default_hash = SHMRING_HASH_MURMUR3_128,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_MURMUR3_128),
    .parameters = 0,
    .check_nodes = check_nodes,
    .check_change = check_change,
    .key_hash = KEY_HASH_PARAMS,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_NODES,
    .candidates = PLACEMENT_CANDIDATES_RANKED,
    .size = size,
    .place = NULL,
    .rank = rank,
};
