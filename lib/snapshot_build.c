/*
 * Building snapshots from node sets, and node sets back from snapshots.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fingerprint_internal.h"
#include "nodeset_internal.h"
#include "algorithm_internal.h"
#include "params_internal.h"
#include "placement_internal.h"
#include "snapshot_build_internal.h"
#include "snapshot_internal.h"

static uint64_t align_up(uint64_t n)
{
    return (n + SNAPSHOT_ALIGN - 1) & ~(uint64_t)(SNAPSHOT_ALIGN - 1);
}

/* Places section S of SIZE bytes at *END (aligned) and advances *END past it. */
static void layout_section(struct snapshot_section *s, uint64_t size, uint64_t *end)
{
    s->offset = align_up(*end);
    s->size = size;
    *end = s->offset + size;
}

/* The start of section S in a buffer being built: 64-byte aligned (calloc's memory and
 * a mapping are aligned for any type, and every section offset is a multiple of 64). */
static void *section_start(unsigned char *buf, const struct snapshot_section *s)
{
    return buf + s->offset;
}

static void fill_buckets(const struct snapshot_point *points, uint32_t point_count,
                         unsigned bits, uint32_t *buckets)
{
    /* buckets[b] is the first point whose top BITS bits are >= b: the number of
     * points in the buckets before b. Counted, then summed, into BUCKETS (zeroed by
     * the caller): no branch depends on the points, where a search per bucket
     * mispredicts on every other one. */
    uint64_t bucket_count = UINT64_C(1) << bits;
    for (uint32_t i = 0; i < point_count; i++)
        buckets[(points[i].point >> (64 - bits)) + 1]++;
    for (uint64_t b = 1; b <= bucket_count; b++)
        buckets[b] += buckets[b - 1];
}

void shmring__snapshot_plan_free(struct snapshot_plan *plan)
{
    free(plan->input.prepared);
    plan->input.prepared = NULL;
    free(plan->nodes);
    plan->nodes = NULL;
}

int shmring__snapshot_plan(const shmring_nodeset_t *set, struct snapshot_plan *plan)
{
    const shmring_params_t *params = &set->params;
    int err = shmring_params_check(params);
    if (err != 0)
        return err;
    if (set->count > SHMRING_NODES_MAX)
        return SHMRING_ELIMIT;

    /* Every node in node-set order, then the up ones, in one array. */
    struct placement_node *nodes =
        malloc((set->count ? 2 * set->count : 1) * sizeof(*nodes));
    if (nodes == NULL)
        return SHMRING_ENOMEM;
    struct placement_node *up = nodes + set->count;
    size_t up_count = 0;
    uint64_t strings_size = 0;
    for (size_t i = 0; i < set->count; i++) {
        const struct nodeset_node *n = &set->nodes[i];
        strings_size += (uint64_t)n->name_length + 1 + n->address_length + 1;
        if (n->hash_key != NULL)
            strings_size += strlen(n->hash_key) + 1;
        nodes[i] = (struct placement_node){
            .name = n->name,
            .name_length = n->name_length,
            .address = n->address,
            .hash_key = n->hash_key,
            .weight = n->weight,
            .state = n->state,
            .node_index = (uint32_t)i,
        };
        if (n->state == SHMRING_STATE_UP)
            up[up_count++] = nodes[i];
    }
    *plan = (struct snapshot_plan){
        .nodes = nodes,
        .input = {.params = params,
                  .nodes = nodes,
                  .node_count = set->count,
                  .up = up,
                  .up_count = up_count},
        .algorithm = shmring__algorithm_valid((unsigned)params->algorithm),
    };

    /* Work out the sizes and refuse anything over a limit before allocating. */
    uint64_t size = 0;
    if (plan->algorithm->check_nodes != NULL)
        err = plan->algorithm->check_nodes(&plan->input);
    if (err == 0 && up_count > 0)
        err = plan->algorithm->size(&plan->input, &size);
    uint64_t point_count = 0;
    uint32_t table_size = 0;
    unsigned bucket_bits = 0;
    if (err == 0 && size > SHMRING_POINTS_MAX)
        err = SHMRING_ELIMIT;
    if (err == 0 && plan->algorithm->lookup == PLACEMENT_LOOKUP_TABLE) {
        table_size = (uint32_t)size;
    } else if (err == 0 && plan->algorithm->lookup == PLACEMENT_LOOKUP_POINTS) {
        point_count = size;
        if (point_count > 0)
            bucket_bits = shmring__snapshot_bucket_bits_for(point_count);
    }
    if (err != 0) {
        shmring__snapshot_plan_free(plan);
        return err;
    }

    struct snapshot_header header = {
        .magic = SNAPSHOT_MAGIC,
        /* The oldest format that expresses the ring (docs/upgrading.md): format 3,
         * which the previous release reads, unless the ring is published for
         * readers of 0.4 or later (no feature needs format 4 yet). */
        .format_version = set->min_reader >= SNAPSHOT_VERSION_FORMAT4
                              ? SNAPSHOT_FORMAT_VERSION
                              : SNAPSHOT_FORMAT_OLDEST,
        .min_reader = set->min_reader >= SNAPSHOT_VERSION_FORMAT4 ? set->min_reader : 0,
        .byte_order = SNAPSHOT_BYTE_ORDER_MARK,
        .header_size = sizeof(struct snapshot_header),
        .algorithm = (uint8_t)params->algorithm,
        .hash = (uint8_t)params->hash,
        .vnodes = params->vnodes,
        .table_size = table_size,
        .node_count = (uint32_t)set->count,
        .up_count = (uint32_t)up_count,
        .next_node_id = set->next_id,
        .point_count = (uint32_t)point_count,
        .bucket_bits = bucket_bits,
        .answer_bits = bucket_bits ? bucket_bits + ANSWER_EXTRA_BITS : 0,
        .table_size_param = params->table_size,
        .min_ring_size_param = params->min_ring_size,
        .max_ring_size_param = params->max_ring_size,
    };
    uint64_t end = sizeof(header);
    layout_section(&header.nodes, set->count * sizeof(struct snapshot_node), &end);
    layout_section(&header.strings, strings_size, &end);
    layout_section(&header.points, point_count * sizeof(struct snapshot_point), &end);
    layout_section(
        &header.buckets,
        point_count ? ((UINT64_C(1) << bucket_bits) + 1) * sizeof(uint32_t) : 0, &end);
    layout_section(
        &header.answers,
        point_count ? ((UINT64_C(1) << header.answer_bits) + 1) * sizeof(uint64_t) : 0,
        &end);
    layout_section(&header.table, (uint64_t)table_size * sizeof(uint32_t), &end);
    header.total_size = align_up(end);
    err = shmring__fingerprint(set, table_size, &header.fingerprint);
    if (err != 0) {
        shmring__snapshot_plan_free(plan);
        return err;
    }
    plan->header = header;
    return 0;
}

int shmring__snapshot_fill(const shmring_nodeset_t *set, const struct snapshot_plan *plan,
                           void *buffer)
{
    const struct snapshot_header *header = &plan->header;
    unsigned char *buf = buffer;
    struct snapshot_node *nodes = section_start(buf, &header->nodes);
    char *strings = (char *)(buf + header->strings.offset);
    uint32_t string_offset = 0;
    for (size_t i = 0; i < set->count; i++) {
        const struct nodeset_node *n = &set->nodes[i];
        nodes[i] = (struct snapshot_node){
            .id = n->id,
            .weight = n->weight,
            .name_offset = string_offset,
            .address_offset = string_offset + n->name_length + 1,
            .name_length = n->name_length,
            .address_length = n->address_length,
            .state = (uint8_t)n->state,
        };
        memcpy(strings + string_offset, n->name, n->name_length + 1);
        string_offset += n->name_length + 1u;
        memcpy(strings + string_offset, n->address, n->address_length + 1);
        string_offset += n->address_length + 1u;
        if (n->hash_key != NULL) {
            size_t length = strlen(n->hash_key);
            nodes[i].hash_key_length = (uint16_t)length;
            memcpy(strings + string_offset, n->hash_key, length + 1);
            string_offset += (uint32_t)length + 1u;
        }
    }

    int err = 0;
    if (header->table_size > 0) {
        err = plan->algorithm->place(&plan->input, header->table_size,
                                     section_start(buf, &header->table));
    } else if (header->point_count > 0) {
        struct snapshot_point *points = section_start(buf, &header->points);
        err = plan->algorithm->place(&plan->input, header->point_count, points);
        if (err == 0) {
            uint32_t *buckets = section_start(buf, &header->buckets);
            fill_buckets(points, header->point_count, header->bucket_bits, buckets);
            shmring__answers_fill(points, header->point_count, buckets,
                                  header->bucket_bits,
                                  section_start(buf, &header->answers));
        }
    }
    return err;
}

void shmring__snapshot_seal(const struct snapshot_plan *plan, void *buffer)
{
    unsigned char *buf = buffer;
    memcpy(buf, &plan->header, sizeof(plan->header));
    /* The checksum field is still zero here, which is how the validator reads it. */
    uint64_t checksum = XXH3_64bits(buf, plan->header.total_size);
    memcpy(buf + offsetof(struct snapshot_header, checksum), &checksum, sizeof(checksum));
}

int shmring_snapshot_build(const shmring_nodeset_t *set, void **buffer, size_t *size)
{
    struct snapshot_plan plan;
    int err = shmring__snapshot_plan(set, &plan);
    if (err != 0)
        return err;
    /* Zeroed, so that padding and reserved fields are identical on every build. */
    unsigned char *buf = calloc(1, plan.header.total_size);
    if (buf == NULL)
        err = SHMRING_ENOMEM;
    if (err == 0)
        err = shmring__snapshot_fill(set, &plan, buf);
    if (err == 0) {
        shmring__snapshot_seal(&plan, buf);
        *buffer = buf;
        *size = plan.header.total_size;
    } else {
        free(buf);
    }
    shmring__snapshot_plan_free(&plan);
    return err;
}

int shmring__nodeset_from_snapshot(const void *buffer, shmring_nodeset_t **out)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    const char *strings = snapshot_section_at(buffer, &h->strings);
    shmring_nodeset_t *set;
    int err = shmring_nodeset_new(&set);
    if (err != 0)
        return err;
    shmring_params_t params = shmring__snapshot_params(h);
    err = shmring_nodeset_set_params(set, &params);
    for (uint32_t i = 0; err == 0 && i < h->node_count; i++) {
        err = shmring__nodeset_add_with_id(
            set, strings + nodes[i].name_offset, strings + nodes[i].address_offset,
            nodes[i].weight, (shmring_state_t)nodes[i].state, nodes[i].id);
        if (err == 0 && nodes[i].hash_key_length > 0)
            err = shmring_nodeset_set_hash_key(set, strings + nodes[i].name_offset,
                                               strings + nodes[i].address_offset +
                                                   nodes[i].address_length + 1);
    }
    if (err != 0) {
        shmring_nodeset_free(set);
        return err == SHMRING_ENOMEM ? err : SHMRING_EBADNODE;
    }
    shmring__nodeset_set_next_id(set, h->next_node_id);
    set->min_reader = h->min_reader;
    *out = set;
    return 0;
}
