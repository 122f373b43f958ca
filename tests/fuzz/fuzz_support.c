/*
 * Checks shared by the fuzz targets. The lookups of an accepted snapshot are compared
 * with a reference that knows nothing of the bucket index: a binary search of the
 * sorted points (or the maglev slot) and a plain walk from there. A validator that
 * let through an index, an offset or a count that the fast path trusts shows up here
 * as a wrong answer, or under AddressSanitizer as a read out of bounds.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "hash_internal.h"
#include "reference_lookup.h"
#include "snapshot_internal.h"

/* Lookups per snapshot: an empty key, the whole input, slices of it, a fixed key. */
#define KEY_COUNT 9
/* The largest N that each key is looked up with (and every smaller one). */
#define LOOKUP_N_TRIED 8

void fuzz_fail(const char *file, int line, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s:%d: invariant broken: ", file, line);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

uint64_t fuzz_build_cost(const shmring_nodeset_t *set)
{
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    uint64_t up = 0, total_weight = 0, all_weight = 0;
    size_t count = shmring_nodeset_count(set);
    for (size_t i = 0; i < count; i++) {
        shmring_node_info_t node;
        FUZZ_REQUIRE(shmring_nodeset_get(set, i, &node) == 0, "node %zu of %zu", i,
                     count);
        all_weight += node.weight;
        if (node.state == SHMRING_STATE_UP) {
            up++;
            total_weight += node.weight;
        }
    }
    if (up == 0)
        return 0;
    switch (params.algorithm) {
    case SHMRING_ALGORITHM_NGINX:
        /* weight x 160 points for every server, down ones included, whatever the
         * vnodes parameter. */
        return 160 * all_weight;
    case SHMRING_ALGORITHM_ENVOY_MAGLEV:
        return (params.table_size != 0 ? params.table_size : 65537) + up;
    case SHMRING_ALGORITHM_ENVOY_RING:
        /* At most the maximum ring size, plus one point of rounding. */
        return (params.max_ring_size != 0 ? params.max_ring_size : 8388608) + 1;
    case SHMRING_ALGORITHM_MAGLEV:
        /* The default table is the first prime of a doubling series at or above
         * max(65537, 100 x up): less than twice that. */
        if (params.table_size != 0)
            return params.table_size + up;
        return 2 * (up * 100 > 65537 ? up * 100 : 65537);
    case SHMRING_ALGORITHM_KETAMA:
    case SHMRING_ALGORITHM_TWEMPROXY:
    case SHMRING_ALGORITHM_LIBKETAMA:
        /* About 160 points per up node, whatever the weights, plus rounding (the
         * three continua share 160 points a server out by weight). */
        return 164 * up;
    case SHMRING_ALGORITHM_HAPROXY:
        /* weight x 16 points for every up server, and as many halfway points. */
        return 32 * total_weight;
    case SHMRING_ALGORITHM_DALLI:
        /* 160 points per up server, shared out by weight, whatever the vnodes. */
        return 160 * up;
    default:
        /* vnodes x weight points per up node, or vnodes per node shared out by
         * weight (uhashring's ketama, hashring, spymemcached): no more than this. A
         * node algorithm builds no points at all. */
        return total_weight * params.vnodes;
    }
}

/* ---- Reading an accepted snapshot ------------------------------------------ */

static const struct snapshot_node *nodes_of(const void *buffer)
{
    return snapshot_section_at(buffer, &snapshot_header(buffer)->nodes);
}

static const char *string_at(const void *buffer, uint32_t offset)
{
    const char *strings = snapshot_section_at(buffer, &snapshot_header(buffer)->strings);
    return strings + offset;
}

/* Does *NODE, as a lookup answered it, describe node INDEX of the snapshot? */
static bool node_is(const void *buffer, uint32_t index, const shmring_node_t *node)
{
    const struct snapshot_node *n = &nodes_of(buffer)[index];
    return node->id == n->id && node->weight == n->weight &&
           strcmp(node->name, string_at(buffer, n->name_offset)) == 0 &&
           strcmp(node->address, string_at(buffer, n->address_offset)) == 0;
}

/* Maglev's slot of KEY_HASH, as the reader computes it. */
static uint64_t maglev_slot(unsigned algorithm, uint64_t key_hash, uint32_t table_size)
{
    /* Envoy's MaglevTable::chooseHost() takes the remainder. */
    if (algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV)
        return key_hash % table_size;
    return (uint64_t)(((unsigned __int128)key_hash * table_size) >> 64);
}

/*
 * The reference answer of lookup_n: the distinct owners met walking one full turn
 * from the key's point (or slot), at most N of them. Returns how many.
 */
static size_t reference_owners(const void *buffer, uint64_t key_hash, uint32_t *owners,
                               size_t n)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    bool maglev = shmring__algorithm_has_table(h->algorithm);
    uint32_t positions = maglev ? h->table_size : h->point_count;
    uint64_t at = maglev ? maglev_slot(h->algorithm, key_hash, h->table_size)
                         : reference_first_point(buffer, key_hash);
    const uint32_t *table = snapshot_section_at(buffer, &h->table);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    size_t count = 0;
    for (uint32_t step = 0; step < positions && count < n; step++) {
        uint32_t owner = maglev ? table[at] : points[at].node_index;
        bool seen = false;
        for (size_t i = 0; i < count && !seen; i++)
            seen = owners[i] == owner;
        if (!seen)
            owners[count++] = owner;
        if (++at == positions)
            at = 0;
    }
    return count;
}

/* Marks in OWNS (node_count entries) the nodes that own a point or a slot; returns
 * how many do. */
static uint32_t mark_owners(const void *buffer, bool *owns)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    uint32_t distinct = 0;
    if (shmring__algorithm_valid(h->algorithm)->lookup == PLACEMENT_LOOKUP_NODES) {
        /* rendezvous and jump: every up node may own keys. */
        const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
        for (uint32_t i = 0; i < h->node_count; i++) {
            owns[i] = nodes[i].state == SHMRING_STATE_UP;
            distinct += owns[i];
        }
    } else if (shmring__algorithm_has_table(h->algorithm)) {
        const uint32_t *table = snapshot_section_at(buffer, &h->table);
        for (uint32_t s = 0; s < h->table_size; s++) {
            distinct += !owns[table[s]];
            owns[table[s]] = true;
        }
    } else {
        const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
        for (uint32_t i = 0; i < h->point_count; i++) {
            distinct += !owns[points[i].node_index];
            owns[points[i].node_index] = true;
        }
    }
    return distinct;
}

static void check_info(const shmring_snapshot_t *snapshot)
{
    size_t size;
    const void *buffer = shmring_snapshot_data(snapshot, &size);
    const struct snapshot_header *h = snapshot_header(buffer);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    uint32_t slots =
        shmring__algorithm_has_table(h->algorithm) ? h->table_size : h->point_count;
    FUZZ_REQUIRE(info.params.algorithm == (shmring_algorithm_t)h->algorithm &&
                     info.params.hash == (shmring_hash_t)h->hash &&
                     info.params.vnodes == h->vnodes &&
                     info.params.table_size == h->table_size,
                 "info params differ from the header");
    FUZZ_REQUIRE(info.node_count == h->node_count && info.up_count == h->up_count &&
                     info.up_count <= info.node_count && info.point_count == slots &&
                     info.next_node_id == h->next_node_id && info.size == size &&
                     info.fingerprint == h->fingerprint,
                 "info counts differ from the header (size %zu)", size);
}

static void check_shares(const shmring_snapshot_t *snapshot, const bool *owns)
{
    const struct snapshot_header *h =
        snapshot_header(shmring_snapshot_data(snapshot, NULL));
    double *shares = malloc((h->node_count ? h->node_count : 1) * sizeof(*shares));
    FUZZ_REQUIRE(shares != NULL, "out of memory");
    int err = shmring_snapshot_shares(snapshot, shares, h->node_count);
    FUZZ_REQUIRE(err == 0, "shares returned %d", err);
    if (h->node_count > 0) {
        err = shmring_snapshot_shares(snapshot, shares, h->node_count - 1);
        FUZZ_REQUIRE(err == SHMRING_EINVAL, "shares with too little room returned %d",
                     err);
    }
    double total = 0.0;
    for (uint32_t i = 0; i < h->node_count; i++) {
        FUZZ_REQUIRE(shares[i] >= 0.0 && shares[i] <= 1.0 + 1e-9,
                     "node %u has share %.17g", i, shares[i]);
        FUZZ_REQUIRE(owns[i] || shares[i] == 0.0,
                     "node %u owns nothing but has share %.17g", i, shares[i]);
        total += shares[i];
    }
    double expected = h->up_count > 0 ? 1.0 : 0.0;
    FUZZ_REQUIRE(fabs(total - expected) < 1e-6, "shares add up to %.17g, not %g", total,
                 expected);
    free(shares);
}

/* Key K of KEY_COUNT, cut from KEYS; returns its length. */
static size_t key_at(const uint8_t *keys, size_t keys_len, unsigned k, const void **key)
{
    static const char fixed[] = "fuzz-key";
    if (k == 0) {
        *key = fixed;
        return 0;
    }
    if (k == 1 || keys == NULL) {
        *key = keys != NULL ? (const void *)keys : fixed;
        return keys != NULL ? keys_len : sizeof(fixed) - 1;
    }
    if (k == KEY_COUNT - 1) {
        *key = fixed;
        return sizeof(fixed) - 1;
    }
    size_t offset = (size_t)k * 37 % (keys_len + 1);
    size_t length = keys_len - offset < (size_t)k * 3 ? keys_len - offset : (size_t)k * 3;
    *key = keys + offset;
    return length;
}

/*
 * A node algorithm's lookups, which have no structure to walk for a reference: the
 * owner OWNER is an up node and the first of lookup_n()'s, whose answers are that
 * many distinct up nodes, each list a prefix of the longer ones.
 */
static void check_ranked(const shmring_snapshot_t *snapshot, const void *key, size_t len,
                         const shmring_node_t *owner, uint32_t distinct)
{
    const void *buffer = shmring_snapshot_data(snapshot, NULL);
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = nodes_of(buffer);
    shmring_node_t longest[LOOKUP_N_TRIED], found[LOOKUP_N_TRIED];
    int count = shmring_snapshot_lookup_n(snapshot, key, len, longest, LOOKUP_N_TRIED);
    size_t wanted = LOOKUP_N_TRIED < distinct ? LOOKUP_N_TRIED : distinct;
    FUZZ_REQUIRE(count >= 0 && (size_t)count == wanted, "lookup_n returned %d of %zu",
                 count, wanted);
    FUZZ_REQUIRE(longest[0].id == owner->id, "lookup_n's first is id %u, lookup's %u",
                 longest[0].id, owner->id);
    for (int i = 0; i < count; i++) {
        bool up = false;
        for (uint32_t j = 0; j < h->node_count && !up; j++)
            up = nodes[j].id == longest[i].id && nodes[j].state == SHMRING_STATE_UP;
        FUZZ_REQUIRE(up, "candidate %d (id %u) is no up node", i, longest[i].id);
        for (int j = 0; j < i; j++)
            FUZZ_REQUIRE(longest[i].id != longest[j].id, "candidates %d and %d agree", i,
                         j);
    }
    for (size_t n = 1; n < wanted; n++) {
        int shorter = shmring_snapshot_lookup_n(snapshot, key, len, found, n);
        FUZZ_REQUIRE(shorter == (int)n, "lookup_n(%zu) returned %d", n, shorter);
        for (size_t i = 0; i < n; i++)
            FUZZ_REQUIRE(found[i].id == longest[i].id,
                         "lookup_n(%zu)[%zu] is id %u, the longer list has %u", n, i,
                         found[i].id, longest[i].id);
    }
}

static void check_lookups(const shmring_snapshot_t *snapshot, const void *key, size_t len,
                          uint32_t distinct)
{
    const void *buffer = shmring_snapshot_data(snapshot, NULL);
    const struct snapshot_header *h = snapshot_header(buffer);
    int expected = h->node_count == 0 ? SHMRING_EEMPTY
                   : h->up_count == 0 ? SHMRING_EALLDOWN
                                      : 0;
    shmring_node_t found[LOOKUP_N_TRIED];
    int err = shmring_snapshot_lookup(snapshot, key, len, &found[0]);
    FUZZ_REQUIRE(err == expected, "lookup returned %d, expected %d", err, expected);
    for (size_t n = 1; n <= LOOKUP_N_TRIED && expected != 0; n++) {
        err = shmring_snapshot_lookup_n(snapshot, key, len, found, n);
        FUZZ_REQUIRE(err == expected, "lookup_n(%zu) returned %d, expected %d", n, err,
                     expected);
    }
    if (expected != 0)
        return;
    if (shmring__algorithm_valid(h->algorithm)->lookup == PLACEMENT_LOOKUP_NODES) {
        check_ranked(snapshot, key, len, &found[0], distinct);
        return;
    }

    uint64_t key_hash = shmring__key_hash((shmring_algorithm_t)h->algorithm,
                                          (shmring_hash_t)h->hash, key, len);
    uint32_t owners[LOOKUP_N_TRIED];
    size_t owner_count = reference_owners(buffer, key_hash, owners, LOOKUP_N_TRIED);
    FUZZ_REQUIRE(owner_count >= 1 && owner_count <= distinct,
                 "%zu reference owners of %u", owner_count, distinct);
    FUZZ_REQUIRE(node_is(buffer, owners[0], &found[0]),
                 "lookup answered node id %u, the reference says index %u", found[0].id,
                 owners[0]);
    for (size_t n = 1; n <= LOOKUP_N_TRIED; n++) {
        memset(found, 0, sizeof(found));
        int count = shmring_snapshot_lookup_n(snapshot, key, len, found, n);
        size_t wanted = n < owner_count ? n : owner_count;
        FUZZ_REQUIRE(count >= 0 && (size_t)count == wanted,
                     "lookup_n(%zu) returned %d, the reference finds %zu", n, count,
                     wanted);
        for (size_t i = 0; i < wanted; i++) {
            FUZZ_REQUIRE(node_is(buffer, owners[i], &found[i]),
                         "lookup_n(%zu)[%zu] is node id %u, the reference says index %u",
                         n, i, found[i].id, owners[i]);
        }
    }
}

/* The share that moves between a snapshot and itself is none; from nothing, all. */
static void check_moved(const shmring_snapshot_t *snapshot)
{
    const struct snapshot_header *h =
        snapshot_header(shmring_snapshot_data(snapshot, NULL));
    double share = -1.0;
    int err = shmring_snapshot_moved_share(snapshot, snapshot, &share);
    FUZZ_REQUIRE(err == 0 && share == 0.0, "moved to itself: %d, %.17g", err, share);
    err = shmring_snapshot_moved_share(NULL, snapshot, &share);
    FUZZ_REQUIRE(err == 0 && share == (h->up_count > 0 ? 1.0 : 0.0),
                 "moved from nothing: %d, %.17g", err, share);
}

void fuzz_check_snapshot(const shmring_snapshot_t *snapshot, const uint8_t *keys,
                         size_t keys_len)
{
    const void *buffer = shmring_snapshot_data(snapshot, NULL);
    const struct snapshot_header *h = snapshot_header(buffer);
    check_info(snapshot);
    check_moved(snapshot);

    bool *owns = calloc(h->node_count ? h->node_count : 1, sizeof(*owns));
    FUZZ_REQUIRE(owns != NULL, "out of memory");
    uint32_t distinct = mark_owners(buffer, owns);
    const struct snapshot_node *nodes = nodes_of(buffer);
    for (uint32_t i = 0; i < h->node_count; i++) {
        FUZZ_REQUIRE(!owns[i] || nodes[i].state == SHMRING_STATE_UP,
                     "down node %u owns a point or slot", i);
    }
    FUZZ_REQUIRE((distinct > 0) == (h->up_count > 0), "%u owners but %u nodes up",
                 distinct, h->up_count);
    check_shares(snapshot, owns);
    free(owns);

    for (unsigned k = 0; k < KEY_COUNT; k++) {
        const void *key;
        size_t len = key_at(keys, keys_len, k, &key);
        check_lookups(snapshot, key, len, distinct);
    }

    /* N = 0 is refused; N above the maximum is treated as the maximum. */
    shmring_node_t many[SHMRING_LOOKUP_N_MAX + 1];
    int err = shmring_snapshot_lookup_n(snapshot, "k", 1, many, 0);
    FUZZ_REQUIRE(err == SHMRING_EINVAL, "lookup_n(0) returned %d", err);
    if (h->up_count > 0) {
        err = shmring_snapshot_lookup_n(snapshot, "k", 1, many, SHMRING_LOOKUP_N_MAX + 1);
        uint32_t wanted =
            distinct < SHMRING_LOOKUP_N_MAX ? distinct : SHMRING_LOOKUP_N_MAX;
        FUZZ_REQUIRE(err >= 0 && (uint32_t)err == wanted,
                     "lookup_n(%d) returned %d of %u owners", SHMRING_LOOKUP_N_MAX + 1,
                     err, distinct);
    }
}

/* ---- Node sets --------------------------------------------------------------- */

static bool params_equal(const shmring_params_t *a, const shmring_params_t *b)
{
    return a->algorithm == b->algorithm && a->hash == b->hash && a->vnodes == b->vnodes &&
           a->table_size == b->table_size;
}

void fuzz_check_json_round_trip(const shmring_nodeset_t *set)
{
    char *text = NULL;
    int err = shmring_nodeset_to_json(set, &text);
    FUZZ_REQUIRE(err == 0, "to_json returned %d", err);

    shmring_json_error_t error;
    shmring_nodeset_t *again = NULL;
    err = shmring_nodeset_from_json(text, strlen(text), NULL, &again, &error);
    FUZZ_REQUIRE(err == 0, "written JSON does not read back (%d: %s):\n%s", err,
                 error.text, text);

    char *text_again = NULL;
    err = shmring_nodeset_to_json(again, &text_again);
    FUZZ_REQUIRE(err == 0, "to_json returned %d", err);
    FUZZ_REQUIRE(strcmp(text, text_again) == 0, "round trip changed the JSON:\n%s\n%s",
                 text, text_again);

    shmring_params_t params, params_again;
    shmring_nodeset_params(set, &params);
    shmring_nodeset_params(again, &params_again);
    FUZZ_REQUIRE(params_equal(&params, &params_again), "round trip changed parameters");
    size_t count = shmring_nodeset_count(set);
    FUZZ_REQUIRE(shmring_nodeset_count(again) == count, "round trip changed the count");
    for (size_t i = 0; i < count; i++) {
        shmring_node_info_t a, b;
        FUZZ_REQUIRE(shmring_nodeset_get(set, i, &a) == 0 &&
                         shmring_nodeset_get(again, i, &b) == 0,
                     "node %zu missing", i);
        FUZZ_REQUIRE(a.weight == b.weight && a.state == b.state &&
                         strcmp(a.name, b.name) == 0 && strcmp(a.address, b.address) == 0,
                     "round trip changed node %zu", i);
    }
    free(text);
    free(text_again);
    shmring_nodeset_free(again);
}

/* Does SET hold exactly the nodes and parameters of the snapshot BUFFER? */
static void check_set_matches(const shmring_nodeset_t *set, const void *buffer)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = nodes_of(buffer);
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    shmring_params_t expected = {
        .algorithm = (shmring_algorithm_t)h->algorithm,
        .hash = (shmring_hash_t)h->hash,
        .vnodes = h->vnodes,
        .table_size = h->table_size_param,
    };
    FUZZ_REQUIRE(params_equal(&params, &expected), "recreated parameters differ");
    FUZZ_REQUIRE(shmring_nodeset_count(set) == h->node_count, "recreated %zu nodes of %u",
                 shmring_nodeset_count(set), h->node_count);
    for (uint32_t i = 0; i < h->node_count; i++) {
        shmring_node_info_t node;
        FUZZ_REQUIRE(shmring_nodeset_get(set, i, &node) == 0, "node %u missing", i);
        FUZZ_REQUIRE(
            node.id == nodes[i].id && node.weight == nodes[i].weight &&
                node.state == (shmring_state_t)nodes[i].state &&
                strcmp(node.name, string_at(buffer, nodes[i].name_offset)) == 0 &&
                strcmp(node.address, string_at(buffer, nodes[i].address_offset)) == 0,
            "recreated node %u differs", i);
    }
}

shmring_snapshot_t *fuzz_snapshot_new(const void *buffer, size_t size, bool exact)
{
    shmring_snapshot_t *snapshot = NULL;
    int err = shmring_snapshot_new(buffer, size, &snapshot);
    FUZZ_REQUIRE(err == 0 || !exact, "a freshly built snapshot fails with %d (%s)", err,
                 shmring_strerror(err));
    FUZZ_REQUIRE(err <= 0 && shmring_strerror(err) != NULL, "validate returned %d", err);
    FUZZ_REQUIRE((err == 0) == (snapshot != NULL), "snapshot_new returned %d and %p", err,
                 (void *)snapshot);
    return snapshot;
}

void fuzz_check_rebuild(const shmring_snapshot_t *snapshot, bool exact, uint64_t cost_max)
{
    size_t size;
    const void *buffer = shmring_snapshot_data(snapshot, &size);
    shmring_nodeset_t *set = NULL;
    int err = shmring_nodeset_from_snapshot(snapshot, &set);
    /* Two nodes of one name pass the validator (readers do not care); only the
     * recreation of a node set refuses them. */
    FUZZ_REQUIRE(err == 0 || (!exact && err == SHMRING_EBADNODE),
                 "nodeset_from_snapshot returned %d", err);
    if (err != 0)
        return;
    check_set_matches(set, buffer);
    fuzz_check_json_round_trip(set);

    if (fuzz_build_cost(set) > cost_max) {
        FUZZ_REQUIRE(!exact, "an exact rebuild was too large to try");
        shmring_nodeset_free(set);
        return;
    }
    void *rebuilt = NULL;
    size_t rebuilt_size = 0;
    err = shmring_snapshot_build(set, &rebuilt, &rebuilt_size);
    /* The validator does not judge what a node algorithm's builder refuses of the
     * nodes (weights, jump's down nodes, rendezvous's node strings), nor what an
     * algorithm's check_nodes() refuses (dalli's and groupcache's down nodes, dalli's
     * server strings, spymemcached's addresses and a continuum without points):
     * another writer's snapshot may have them. */
    bool node_refusal = err == SHMRING_EUNWEIGHTED || err == SHMRING_EJUMPDOWN ||
                        err == SHMRING_ENODOWN || err == SHMRING_EBADADDRESS ||
                        err == SHMRING_EDUPLICATE || err == SHMRING_EUNRESOLVED ||
                        err == SHMRING_EINVAL;
    const struct placement_algorithm *algorithm =
        shmring__algorithm_valid(snapshot_header(buffer)->algorithm);
    /* Nor HAProxy's weights above 256, which its builder refuses: readers answer
     * from such a snapshot's points as from any other's. */
    bool weight_refusal = err == SHMRING_EBADWEIGHT &&
                          snapshot_header(buffer)->algorithm == SHMRING_ALGORITHM_HAPROXY;
    if (!exact && (weight_refusal ||
                   (node_refusal && (algorithm->lookup == PLACEMENT_LOOKUP_NODES ||
                                     algorithm->check_nodes != NULL)))) {
        shmring_nodeset_free(set);
        return;
    }
    FUZZ_REQUIRE(err == 0, "rebuilding an accepted snapshot returned %d", err);
    shmring_snapshot_free(fuzz_snapshot_new(rebuilt, rebuilt_size, true));
    if (exact) {
        FUZZ_REQUIRE(rebuilt_size == size && memcmp(rebuilt, buffer, size) == 0,
                     "the rebuilt snapshot (%zu bytes) differs from the original (%zu)",
                     rebuilt_size, size);
    }
    free(rebuilt);
    shmring_nodeset_free(set);
}

void fuzz_check_error_text(const char *text, size_t size)
{
    size_t length = strnlen(text, size);
    FUZZ_REQUIRE(length > 0 && length < size, "error text is empty or not terminated");
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        FUZZ_REQUIRE(c >= 0x20 && c != 0x7f, "control character 0x%02x in \"%.*s\"", c,
                     (int)length, text);
    }
}
