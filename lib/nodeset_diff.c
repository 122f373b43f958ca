/*
 * Node-set differences: what separates two node sets, entry by entry, for the
 * reports of `ringctl load` and `ringctl check` and for sync's decision to publish.
 * Nodes are matched by name through the node sets' name index, so a diff of two
 * 100,000-node sets costs two passes.
 */
#include <stdlib.h>
#include <string.h>

#include "array_internal.h"
#include "nodeset_internal.h"
#include "placement_internal.h"

/* A difference as stored: which nodes, by index, the public view is filled from. */
struct entry {
    shmring_difference_kind_t kind;
    unsigned fields;
    /* Node indexes in BEFORE and AFTER, or NO_NODE. */
    size_t before_index;
    size_t after_index;
};

#define NO_NODE SIZE_MAX

struct shmring_nodeset_diff {
    const shmring_nodeset_t *before;
    const shmring_nodeset_t *after;
    struct entry *entries;
    size_t count;
    size_t capacity;
};

static int append(shmring_nodeset_diff_t *diff, shmring_difference_kind_t kind,
                  unsigned fields, size_t before_index, size_t after_index)
{
    const struct entry entry = {.kind = kind,
                                .fields = fields,
                                .before_index = before_index,
                                .after_index = after_index};
    return shmring__array_push((void **)&diff->entries, &diff->capacity, &diff->count,
                               &entry, sizeof(entry)) != NULL
               ? 0
               : SHMRING_ENOMEM;
}

static unsigned params_fields(const shmring_params_t *a, const shmring_params_t *b)
{
    return (a->algorithm != b->algorithm ? SHMRING_DIFF_ALGORITHM : 0) |
           (a->hash != b->hash ? SHMRING_DIFF_HASH : 0) |
           (a->vnodes != b->vnodes ? SHMRING_DIFF_VNODES : 0) |
           (a->table_size != b->table_size ? SHMRING_DIFF_TABLE_SIZE : 0) |
           (a->min_ring_size != b->min_ring_size || a->max_ring_size != b->max_ring_size
                ? SHMRING_DIFF_RING_SIZE
                : 0);
}

static unsigned node_fields(const struct nodeset_node *a, const struct nodeset_node *b)
{
    bool same_address = a->address_length == b->address_length &&
                        memcmp(a->address, b->address, a->address_length) == 0;
    bool same_hash_key = (a->hash_key == NULL && b->hash_key == NULL) ||
                         (a->hash_key != NULL && b->hash_key != NULL &&
                          strcmp(a->hash_key, b->hash_key) == 0);
    return (same_address ? 0 : SHMRING_DIFF_ADDRESS) |
           (same_hash_key ? 0 : SHMRING_DIFF_HASH_KEY) |
           (a->weight != b->weight ? SHMRING_DIFF_WEIGHT : 0) |
           (a->state != b->state ? SHMRING_DIFF_STATE : 0) |
           (a->id != b->id ? SHMRING_DIFF_ID : 0);
}

static int compare(shmring_nodeset_diff_t *diff)
{
    const shmring_nodeset_t *before = diff->before, *after = diff->after;
    unsigned fields = params_fields(&before->params, &after->params);
    if (fields != 0 &&
        append(diff, SHMRING_DIFFERENCE_PARAMS, fields, NO_NODE, NO_NODE) != 0)
        return SHMRING_ENOMEM;

    /* Order is compared only where placement may depend on it (under either set's
     * parameters), among the nodes it orders: the nodes both hold, and with
     * PLACEMENT_ORDER_UP only those up in both. They are in the same relative order
     * exactly when their indexes in BEFORE increase along AFTER. */
    enum placement_order order = shmring__placement_order(&before->params);
    enum placement_order after_order = shmring__placement_order(&after->params);
    if (after_order > order)
        order = after_order;
    bool in_order = true;
    size_t last_before = 0, kept = 0;
    for (size_t i = 0; i < after->count; i++) {
        size_t old;
        if (shmring_nodeset_find(before, after->nodes[i].name, &old) != 0) {
            if (append(diff, SHMRING_DIFFERENCE_ADDED, 0, NO_NODE, i) != 0)
                return SHMRING_ENOMEM;
            continue;
        }
        bool ordered = order == PLACEMENT_ORDER_ALL ||
                       (order == PLACEMENT_ORDER_UP &&
                        before->nodes[old].state == SHMRING_STATE_UP &&
                        after->nodes[i].state == SHMRING_STATE_UP);
        if (ordered) {
            if (kept++ > 0 && old < last_before)
                in_order = false;
            last_before = old;
        }
        fields = node_fields(&before->nodes[old], &after->nodes[i]);
        if (fields != 0 && append(diff, SHMRING_DIFFERENCE_CHANGED, fields, old, i) != 0)
            return SHMRING_ENOMEM;
    }
    for (size_t i = 0; i < before->count; i++) {
        size_t index;
        if (shmring_nodeset_find(after, before->nodes[i].name, &index) != 0 &&
            append(diff, SHMRING_DIFFERENCE_REMOVED, 0, i, NO_NODE) != 0)
            return SHMRING_ENOMEM;
    }
    if (!in_order && append(diff, SHMRING_DIFFERENCE_ORDER, 0, NO_NODE, NO_NODE) != 0)
        return SHMRING_ENOMEM;
    return 0;
}

int shmring_nodeset_diff(const shmring_nodeset_t *before, const shmring_nodeset_t *after,
                         shmring_nodeset_diff_t **out)
{
    shmring_nodeset_diff_t *diff = calloc(1, sizeof(*diff));
    if (diff == NULL)
        return SHMRING_ENOMEM;
    diff->before = before;
    diff->after = after;
    int err = compare(diff);
    if (err != 0) {
        shmring_nodeset_diff_free(diff);
        return err;
    }
    *out = diff;
    return 0;
}

void shmring_nodeset_diff_free(shmring_nodeset_diff_t *diff)
{
    if (diff == NULL)
        return;
    free(diff->entries);
    free(diff);
}

/* The public form of entry E: its kind and fields, and the nodes on either side as
 * they are in the two sets compared. */
static shmring_difference_t difference_of(const shmring_nodeset_diff_t *diff,
                                          const struct entry *e)
{
    shmring_difference_t d = {.kind = e->kind, .fields = e->fields};
    /* The indices were taken from the two sets when the diff was made, and the sets
     * must stay unchanged while it lives (shmring_nodeset_diff()), so each is in
     * range. */
    if (e->before_index != NO_NODE)
        d.before = shmring__nodeset_node_info(diff->before, e->before_index);
    if (e->after_index != NO_NODE)
        d.after = shmring__nodeset_node_info(diff->after, e->after_index);
    return d;
}

int shmring_nodeset_diff_get(const shmring_nodeset_diff_t *diff, size_t index,
                             shmring_difference_t *out)
{
    if (index >= diff->count)
        return SHMRING_EINVAL;
    *out = difference_of(diff, &diff->entries[index]);
    return 0;
}

size_t shmring_nodeset_diff_count(const shmring_nodeset_diff_t *diff)
{
    return diff->count;
}

void shmring_nodeset_diff_counts(const shmring_nodeset_diff_t *diff,
                                 shmring_difference_counts_t *out)
{
    *out = (shmring_difference_counts_t){0};
    for (size_t i = 0; i < diff->count; i++) {
        switch (diff->entries[i].kind) {
        case SHMRING_DIFFERENCE_PARAMS:
            out->params_changed = true;
            break;
        case SHMRING_DIFFERENCE_ADDED:
            out->added++;
            break;
        case SHMRING_DIFFERENCE_REMOVED:
            out->removed++;
            break;
        case SHMRING_DIFFERENCE_CHANGED:
            out->changed++;
            break;
        case SHMRING_DIFFERENCE_ORDER:
            out->order_changed = true;
            break;
        }
    }
}
