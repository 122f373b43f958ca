/*
 * The output of `ringctl check`: the library's differences between the ring and the
 * file (shmring_nodeset_diff()), one line each or one JSON document.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ringctl.h"

/* Appends one item to a line being built, after ", " when it is not the first. */
__attribute__((format(printf, 3, 4))) static void append_item(char *line, size_t size,
                                                              const char *format, ...)
{
    char item[600];
    va_list args;
    va_start(args, format);
    vsnprintf(item, sizeof(item), format, args);
    va_end(args);
    if (line[0] != '\0')
        strncat(line, ", ", size - strlen(line) - 1);
    strncat(line, item, size - strlen(line) - 1);
}

/* Describes a difference of parameters: "algorithm ring -> maglev, vnodes 160 -> 7". */
static void describe_param_changes(unsigned fields, const shmring_params_t *ring,
                                   const shmring_params_t *file, char *line, size_t size)
{
    line[0] = '\0';
    if (fields & SHMRING_DIFF_ALGORITHM) {
        append_item(line, size, "algorithm %s -> %s",
                    shmring_algorithm_name(ring->algorithm),
                    shmring_algorithm_name(file->algorithm));
    }
    if (fields & SHMRING_DIFF_HASH) {
        append_item(line, size, "hash %s -> %s", shmring_hash_name(ring->hash),
                    shmring_hash_name(file->hash));
    }
    if (fields & SHMRING_DIFF_VNODES) {
        append_item(line, size, "vnodes %" PRIu32 " -> %" PRIu32, ring->vnodes,
                    file->vnodes);
    }
    if (fields & SHMRING_DIFF_TABLE_SIZE) {
        append_item(line, size, "table_size %" PRIu32 " -> %" PRIu32, ring->table_size,
                    file->table_size);
    }
    if ((fields & SHMRING_DIFF_RING_SIZE) && ring->min_ring_size != file->min_ring_size) {
        append_item(line, size, "min_ring_size %" PRIu32 " -> %" PRIu32,
                    ring->min_ring_size, file->min_ring_size);
    }
    if ((fields & SHMRING_DIFF_RING_SIZE) && ring->max_ring_size != file->max_ring_size) {
        append_item(line, size, "max_ring_size %" PRIu32 " -> %" PRIu32,
                    ring->max_ring_size, file->max_ring_size);
    }
}

/* Describes a changed node's fields: "address A -> B, weight 1 -> 5". */
static void describe_node_change(const shmring_difference_t *d, char *line, size_t size)
{
    line[0] = '\0';
    if (d->fields & SHMRING_DIFF_ADDRESS) {
        append_item(line, size, "address %s -> %s", d->before.address, d->after.address);
    }
    if (d->fields & SHMRING_DIFF_HASH_KEY) {
        append_item(line, size, "hash_key %s -> %s",
                    d->before.hash_key ? d->before.hash_key : "(none)",
                    d->after.hash_key ? d->after.hash_key : "(none)");
    }
    if (d->fields & SHMRING_DIFF_WEIGHT) {
        append_item(line, size, "weight %" PRIu32 " -> %" PRIu32, d->before.weight,
                    d->after.weight);
    }
    if (d->fields & SHMRING_DIFF_STATE) {
        append_item(line, size, "state %s -> %s", ringctl_state_name(d->before.state),
                    ringctl_state_name(d->after.state));
    }
    if (d->fields & SHMRING_DIFF_ID) {
        append_item(line, size, "id %" PRIu32 " -> %" PRIu32, d->before.id, d->after.id);
    }
}

static const char *kind_name(shmring_difference_kind_t kind)
{
    switch (kind) {
    case SHMRING_DIFFERENCE_PARAMS:
        return "params";
    case SHMRING_DIFFERENCE_ADDED:
        return "missing";
    case SHMRING_DIFFERENCE_REMOVED:
        return "extra";
    case SHMRING_DIFFERENCE_CHANGED:
        return "changed";
    case SHMRING_DIFFERENCE_ORDER:
        return "order";
    }
    return "unknown";
}

/*
 * One line per difference, seen from the ring: "missing NAME" (the file has it, the
 * ring not), "extra NAME" (the ring has it, the file not), "changed NAME: ...",
 * "params: ...", "order: ...". Node names are valid UTF-8 without control characters
 * (the library checks them), so they print as they are.
 */
static void check_text(const shmring_nodeset_diff_t *diff, const shmring_params_t *ring,
                       const shmring_params_t *file)
{
    char line[2048];
    for (size_t i = 0; i < shmring_nodeset_diff_count(diff); i++) {
        shmring_difference_t d;
        if (shmring_nodeset_diff_get(diff, i, &d) != 0)
            continue;
        switch (d.kind) {
        case SHMRING_DIFFERENCE_PARAMS:
            describe_param_changes(d.fields, ring, file, line, sizeof(line));
            printf("params: %s\n", line);
            break;
        case SHMRING_DIFFERENCE_ADDED:
            printf("missing %s: address %s, weight %" PRIu32 ", state %s, id %" PRIu32
                   "\n",
                   d.after.name, d.after.address, d.after.weight,
                   ringctl_state_name(d.after.state), d.after.id);
            break;
        case SHMRING_DIFFERENCE_REMOVED:
            printf("extra %s: address %s, weight %" PRIu32 ", state %s, id %" PRIu32 "\n",
                   d.before.name, d.before.address, d.before.weight,
                   ringctl_state_name(d.before.state), d.before.id);
            break;
        case SHMRING_DIFFERENCE_CHANGED:
            describe_node_change(&d, line, sizeof(line));
            printf("changed %s: %s\n", d.after.name, line);
            break;
        case SHMRING_DIFFERENCE_ORDER:
            printf("order: the ring holds the nodes in another order\n");
            break;
        }
    }
}

static int check_json(const shmring_nodeset_diff_t *diff, const shmring_params_t *ring,
                      const shmring_params_t *file)
{
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < shmring_nodeset_diff_count(diff); i++) {
        shmring_difference_t d;
        if (shmring_nodeset_diff_get(diff, i, &d) != 0)
            continue;
        json_t *entry = json_pack("{s:s}", "kind", kind_name(d.kind));
        if (entry == NULL)
            break;
        char line[2048];
        if (d.kind == SHMRING_DIFFERENCE_PARAMS) {
            describe_param_changes(d.fields, ring, file, line, sizeof(line));
            json_object_set_new(entry, "what", json_string(line));
        }
        if (d.kind == SHMRING_DIFFERENCE_CHANGED) {
            describe_node_change(&d, line, sizeof(line));
            json_object_set_new(entry, "what", json_string(line));
        }
        /* Every key in every entry (docs/json-output.md): null where it does not
         * apply. */
        if (json_object_get(entry, "what") == NULL)
            json_object_set_new(entry, "what", json_null());
        json_object_set_new(entry, "ring",
                            d.before.name != NULL ? ringctl_json_node_info(&d.before)
                                                  : json_null());
        json_object_set_new(entry, "file",
                            d.after.name != NULL ? ringctl_json_node_info(&d.after)
                                                 : json_null());
        json_array_append_new(list, entry);
    }
    json_t *root = json_pack("{s:b, s:o}", "same", shmring_nodeset_diff_count(diff) == 0,
                             "differences", list);
    if (root == NULL)
        return ringctl_fail(EXIT_FAILED, "check: %s", shmring_strerror(SHMRING_ENOMEM));
    return output_json(root, true);
}

int output_check(const struct ringctl *ctl, const shmring_nodeset_diff_t *diff,
                 const shmring_params_t *ring, const shmring_params_t *file)
{
    if (ctl->json)
        return check_json(diff, ring, file);
    check_text(diff, ring, file);
    return EXIT_OK;
}
