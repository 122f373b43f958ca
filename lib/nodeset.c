/*
 * Node sets: the nodes of a ring, in node-set order, with a name index so that
 * adding or finding a node stays O(1) at 100,000 nodes.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array_internal.h"
#include "hash_internal.h"
#include "nodeset_internal.h"
#include "text_internal.h"

int shmring_nodeset_new(shmring_nodeset_t **out)
{
    shmring_nodeset_t *set = calloc(1, sizeof(*set));
    if (set == NULL)
        return SHMRING_ENOMEM;
    shmring_params_default(&set->params);
    set->balance_percent = BALANCE_UNSET;
    *out = set;
    return 0;
}

void shmring_nodeset_free(shmring_nodeset_t *set)
{
    if (set == NULL)
        return;
    for (size_t i = 0; i < set->count; i++) {
        free(set->nodes[i].name);
        free(set->nodes[i].address);
        free(set->nodes[i].hash_key);
    }
    free(set->nodes);
    free(set->slots);
    free(set);
}

int shmring_nodeset_set_params(shmring_nodeset_t *set, const shmring_params_t *params)
{
    int err = shmring_params_check(params);
    /* Only the fields this version knows: reserved fields read back as zero. */
    if (err == 0)
        set->params = (shmring_params_t){.algorithm = params->algorithm,
                                         .hash = params->hash,
                                         .vnodes = params->vnodes,
                                         .table_size = params->table_size,
                                         .min_ring_size = params->min_ring_size,
                                         .max_ring_size = params->max_ring_size};
    return err;
}

void shmring_nodeset_params(const shmring_nodeset_t *set, shmring_params_t *out)
{
    *out = set->params;
}

static int text_check(const char *text, size_t max)
{
    size_t len = strnlen(text, max + 1);
    return len > 0 && len <= max && shmring__text_valid(text, len) ? 0 : -1;
}

int shmring_node_name_check(const char *name)
{
    return name != NULL && text_check(name, SHMRING_NAME_MAX) == 0 ? 0 : SHMRING_EBADNAME;
}

int shmring_node_address_check(const char *address)
{
    return address != NULL && text_check(address, SHMRING_ADDRESS_MAX) == 0
               ? 0
               : SHMRING_EBADADDRESS;
}

static size_t name_slot_start(const shmring_nodeset_t *set, const char *name, size_t len)
{
    return (size_t)shmring__hash64(SHMRING_HASH_XXH3, name, len) & set->slot_mask;
}

/* Returns the index of NAME, or -1. */
static long find_index(const shmring_nodeset_t *set, const char *name)
{
    if (set->slots == NULL)
        return -1;
    size_t len = strlen(name);
    for (size_t s = name_slot_start(set, name, len);; s = (s + 1) & set->slot_mask) {
        uint32_t v = set->slots[s];
        if (v == 0)
            return -1;
        const struct nodeset_node *n = &set->nodes[v - 1];
        if (n->name_length == len && memcmp(n->name, name, len) == 0)
            return (long)(v - 1);
    }
}

static void index_insert(shmring_nodeset_t *set, size_t index)
{
    const struct nodeset_node *n = &set->nodes[index];
    size_t s = name_slot_start(set, n->name, n->name_length);
    while (set->slots[s] != 0)
        s = (s + 1) & set->slot_mask;
    set->slots[s] = (uint32_t)index + 1;
}

/* Rebuilds the name index with room for at least WANTED nodes at half load. */
static int index_rebuild(shmring_nodeset_t *set, size_t wanted)
{
    size_t slots = 16;
    while (slots < wanted * 2)
        slots *= 2;
    uint32_t *table = calloc(slots, sizeof(*table));
    if (table == NULL)
        return SHMRING_ENOMEM;
    free(set->slots);
    set->slots = table;
    set->slot_mask = slots - 1;
    for (size_t i = 0; i < set->count; i++)
        index_insert(set, i);
    return 0;
}

int shmring__nodeset_add_with_id(shmring_nodeset_t *set, const char *name,
                                 const char *address, uint32_t weight,
                                 shmring_state_t state, uint32_t id)
{
    if (shmring_node_name_check(name) != 0)
        return SHMRING_EBADNAME;
    if (address == NULL)
        address = name;
    if (shmring_node_address_check(address) != 0)
        return SHMRING_EBADADDRESS;
    if (weight < 1 || weight > SHMRING_WEIGHT_MAX)
        return SHMRING_EBADWEIGHT;
    if (state != SHMRING_STATE_UP && state != SHMRING_STATE_DOWN)
        return SHMRING_EINVAL;
    if (find_index(set, name) >= 0)
        return SHMRING_EDUPLICATE;
    if (set->count >= SHMRING_NODES_MAX)
        return SHMRING_ELIMIT;

    if (shmring__array_reserve((void **)&set->nodes, &set->capacity, set->count,
                               sizeof(*set->nodes)) != 0)
        return SHMRING_ENOMEM;
    if ((set->count + 1) * 2 > set->slot_mask + 1 || set->slots == NULL) {
        int err = index_rebuild(set, set->count + 1);
        if (err != 0)
            return err;
    }

    struct nodeset_node node = {
        .name = strdup(name),
        .address = strdup(address),
        .id = id,
        .weight = weight,
        .state = state,
        .name_length = (uint16_t)strlen(name),
        .address_length = (uint16_t)strlen(address),
    };
    if (node.name == NULL || node.address == NULL) {
        free(node.name);
        free(node.address);
        return SHMRING_ENOMEM;
    }
    set->nodes[set->count] = node;
    index_insert(set, set->count);
    set->count++;
    if (id >= set->next_id)
        set->next_id = id + 1;
    return 0;
}

int shmring_nodeset_add(shmring_nodeset_t *set, const char *name, const char *address,
                        uint32_t weight, shmring_state_t state, uint32_t *id)
{
    /* Ids are never reused while the ring lives, so a worker's pool slot for a
     * removed node can never be mistaken for a new node's. */
    if (set->next_id == UINT32_MAX)
        return SHMRING_ELIMIT;
    uint32_t new_id = set->next_id;
    int err = shmring__nodeset_add_with_id(set, name, address, weight, state, new_id);
    if (err == 0 && id != NULL)
        *id = new_id;
    return err;
}

int shmring_nodeset_remove(shmring_nodeset_t *set, const char *name)
{
    long index = find_index(set, name);
    if (index < 0)
        return SHMRING_ENODE;
    free(set->nodes[index].name);
    free(set->nodes[index].address);
    free(set->nodes[index].hash_key);
    memmove(&set->nodes[index], &set->nodes[index + 1],
            (set->count - (size_t)index - 1) * sizeof(set->nodes[0]));
    set->count--;
    /* Indexes after the removed node shifted: rebuild the name index in place. */
    memset(set->slots, 0, (set->slot_mask + 1) * sizeof(set->slots[0]));
    for (size_t i = 0; i < set->count; i++)
        index_insert(set, i);
    return 0;
}

int shmring_nodeset_set_weight(shmring_nodeset_t *set, const char *name, uint32_t weight)
{
    long index = find_index(set, name);
    if (index < 0)
        return SHMRING_ENODE;
    if (weight < 1 || weight > SHMRING_WEIGHT_MAX)
        return SHMRING_EBADWEIGHT;
    set->nodes[index].weight = weight;
    return 0;
}

int shmring_nodeset_set_hash_key(shmring_nodeset_t *set, const char *name,
                                 const char *hash_key)
{
    long index = find_index(set, name);
    if (index < 0)
        return SHMRING_ENODE;
    /* A hash key is hashed as an address is: the same text rules. */
    if (hash_key != NULL && shmring_node_address_check(hash_key) != 0)
        return SHMRING_EBADADDRESS;
    char *copy = NULL;
    if (hash_key != NULL && (copy = strdup(hash_key)) == NULL)
        return SHMRING_ENOMEM;
    free(set->nodes[index].hash_key);
    set->nodes[index].hash_key = copy;
    return 0;
}

int shmring_nodeset_set_state(shmring_nodeset_t *set, const char *name,
                              shmring_state_t state)
{
    long index = find_index(set, name);
    if (index < 0)
        return SHMRING_ENODE;
    if (state != SHMRING_STATE_UP && state != SHMRING_STATE_DOWN)
        return SHMRING_EINVAL;
    set->nodes[index].state = state;
    return 0;
}

size_t shmring_nodeset_count(const shmring_nodeset_t *set)
{
    return set->count;
}

shmring_node_info_t shmring__nodeset_node_info(const shmring_nodeset_t *set, size_t index)
{
    const struct nodeset_node *n = &set->nodes[index];
    /* Whole, reserved fields included (see shmring.h's rule for public structs). */
    return (shmring_node_info_t){.id = n->id,
                                 .weight = n->weight,
                                 .state = n->state,
                                 .name = n->name,
                                 .address = n->address,
                                 .hash_key = n->hash_key};
}

int shmring_nodeset_get(const shmring_nodeset_t *set, size_t index,
                        shmring_node_info_t *out)
{
    if (index >= set->count)
        return SHMRING_EINVAL;
    *out = shmring__nodeset_node_info(set, index);
    return 0;
}

int shmring_nodeset_find(const shmring_nodeset_t *set, const char *name, size_t *index)
{
    long i = find_index(set, name);
    if (i < 0)
        return SHMRING_ENODE;
    *index = (size_t)i;
    return 0;
}

void shmring__nodeset_mark_id_given(shmring_nodeset_t *set, size_t index)
{
    set->nodes[index].id_given = true;
}

/* A given id and the index of its node, sorted by id to find duplicates. */
struct given_id {
    uint32_t id;
    size_t index;
};

static int compare_ids(const void *a, const void *b)
{
    const struct given_id *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int compare_given_ids(const void *a, const void *b)
{
    const struct given_id *x = a, *y = b;
    int by_id = compare_ids(a, b);
    return by_id != 0 ? by_id : (x->index > y->index) - (x->index < y->index);
}

/* The given ids of SET, sorted by id then index, in a new array (NULL when none). */
static int collect_given_ids(const shmring_nodeset_t *set, struct given_id **out,
                             size_t *count)
{
    size_t given = 0;
    for (size_t i = 0; i < set->count; i++)
        given += set->nodes[i].id_given;
    *out = NULL;
    *count = given;
    if (given == 0)
        return 0;
    struct given_id *ids = malloc(given * sizeof(*ids));
    if (ids == NULL)
        return SHMRING_ENOMEM;
    size_t used = 0;
    for (size_t i = 0; i < set->count; i++) {
        if (set->nodes[i].id_given)
            ids[used++] = (struct given_id){.id = set->nodes[i].id, .index = i};
    }
    qsort(ids, given, sizeof(*ids), compare_given_ids);
    *out = ids;
    return 0;
}

static bool id_is_given(const struct given_id *ids, size_t count, uint32_t id)
{
    const struct given_id key = {.id = id};
    return count > 0 && bsearch(&key, ids, count, sizeof(*ids), compare_ids) != NULL;
}

int shmring__nodeset_settle_ids(shmring_nodeset_t *set, size_t *first, size_t *second)
{
    struct given_id *ids;
    size_t given;
    int err = collect_given_ids(set, &ids, &given);
    if (err != 0)
        return err;
    for (size_t i = 1; i < given; i++) {
        if (ids[i].id == ids[i - 1].id) {
            *first = ids[i - 1].index;
            *second = ids[i].index;
            free(ids);
            return SHMRING_EDUPLICATE;
        }
    }
    /* Given ids are at most UINT32_MAX - 1 (the JSON reader's limit), so the counter
     * after the largest one fits. */
    uint64_t next = given > 0 ? (uint64_t)ids[given - 1].id + 1 : 0;
    free(ids);
    for (size_t i = 0; i < set->count; i++) {
        if (set->nodes[i].id_given)
            continue;
        if (next >= UINT32_MAX) {
            *first = i;
            return SHMRING_ELIMIT;
        }
        set->nodes[i].id = (uint32_t)next++;
    }
    set->next_id = (uint32_t)next;
    return 0;
}

int shmring_nodeset_inherit_ids(shmring_nodeset_t *set, const shmring_nodeset_t *previous)
{
    struct given_id *ids;
    size_t given;
    int err = collect_given_ids(set, &ids, &given);
    if (err != 0)
        return err;
    /* A node keeps its given id; one without takes its id in PREVIOUS unless a given
     * id took it; the rest get fresh ids after both PREVIOUS's and the given ones.
     * Counted first so that a refusal changes nothing, with new ids below UINT32_MAX,
     * the id counter's limit, as in shmring_nodeset_add(). */
    uint32_t start = previous->next_id;
    if (given > 0 && ids[given - 1].id >= start)
        start = ids[given - 1].id + 1;
    size_t fresh = 0;
    for (size_t i = 0; i < set->count; i++) {
        if (set->nodes[i].id_given)
            continue;
        long old = find_index(previous, set->nodes[i].name);
        fresh += old < 0 || id_is_given(ids, given, previous->nodes[old].id);
    }
    if (fresh > UINT32_MAX - start) {
        free(ids);
        return SHMRING_ELIMIT;
    }
    uint32_t next_id = start;
    for (size_t i = 0; i < set->count; i++) {
        struct nodeset_node *n = &set->nodes[i];
        if (n->id_given)
            continue;
        long old = find_index(previous, n->name);
        if (old >= 0 && !id_is_given(ids, given, previous->nodes[old].id))
            n->id = previous->nodes[old].id;
        else
            n->id = next_id++;
    }
    free(ids);
    set->next_id = next_id;
    return 0;
}

void shmring__nodeset_set_next_id(shmring_nodeset_t *set, uint32_t next_id)
{
    if (next_id > set->next_id)
        set->next_id = next_id;
}

int shmring_nodeset_balance_factor(const shmring_nodeset_t *set, uint32_t *percent)
{
    if (set->balance_percent == BALANCE_UNSET)
        return SHMRING_ENOENT;
    *percent = set->balance_percent;
    return 0;
}

int shmring_nodeset_set_min_reader(shmring_nodeset_t *set, unsigned major, unsigned minor)
{
    /* A writer knows the readers up to its own release, no later one; and a
     * release's minor number fits the header's byte. */
    if (major > SHMRING_VERSION_MAJOR || minor > 255 ||
        (major == SHMRING_VERSION_MAJOR && minor > SHMRING_VERSION_MINOR))
        return SHMRING_EINVAL;
    set->min_reader = (uint32_t)major << 16 | (uint32_t)minor << 8;
    return 0;
}

void shmring_nodeset_min_reader(const shmring_nodeset_t *set, unsigned *major,
                                unsigned *minor)
{
    *major = set->min_reader >> 16;
    *minor = (set->min_reader >> 8) & 0xff;
}

int shmring_nodeset_set_balance_factor(shmring_nodeset_t *set, uint32_t percent)
{
    if (percent != 0 && (percent < 100 || percent > 10000))
        return SHMRING_EBADFACTOR;
    set->balance_percent = percent;
    return 0;
}
