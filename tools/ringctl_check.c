/*
 * ringctl check: a drift check for configuration management and monitoring. The
 * comparison is the library's (shmring_nodeset_diff()); this file only reads the two
 * node sets and prints the differences, one line each.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ringctl_check.h"

/* Prints "ringctl: error: MESSAGE" and returns RINGCTL_CHECK_ERROR. The message's
 * parts are a ring name, a file name and library texts; a file name may hold control
 * characters, shown as '?' so that the line stays one line. */
__attribute__((format(printf, 1, 2))) static int check_error(const char *format, ...)
{
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    for (char *c = message; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    }
    fprintf(stderr, "ringctl: error: %s\n", message);
    return RINGCTL_CHECK_ERROR;
}

static const char *state_name(shmring_state_t state)
{
    return state == SHMRING_STATE_DOWN ? "down" : "up";
}

/* Appends ", " between items of a line being built. */
static void separate(char *line, size_t size)
{
    if (line[0] != '\0')
        strncat(line, ", ", size - strlen(line) - 1);
}

/* Describes a difference of parameters: "algorithm ring -> maglev, vnodes 160 -> 7". */
static void describe_params(unsigned fields, const shmring_params_t *ring,
                            const shmring_params_t *file, char *line, size_t size)
{
    char item[128];
    line[0] = '\0';
    if (fields & SHMRING_DIFF_ALGORITHM) {
        snprintf(item, sizeof(item), "algorithm %s -> %s",
                 shmring_algorithm_name(ring->algorithm),
                 shmring_algorithm_name(file->algorithm));
        strncat(line, item, size - strlen(line) - 1);
    }
    if (fields & SHMRING_DIFF_HASH) {
        separate(line, size);
        snprintf(item, sizeof(item), "hash %s -> %s", shmring_hash_name(ring->hash),
                 shmring_hash_name(file->hash));
        strncat(line, item, size - strlen(line) - 1);
    }
    if (fields & SHMRING_DIFF_VNODES) {
        separate(line, size);
        snprintf(item, sizeof(item), "vnodes %" PRIu32 " -> %" PRIu32, ring->vnodes,
                 file->vnodes);
        strncat(line, item, size - strlen(line) - 1);
    }
    if (fields & SHMRING_DIFF_TABLE_SIZE) {
        separate(line, size);
        snprintf(item, sizeof(item), "table_size %" PRIu32 " -> %" PRIu32,
                 ring->table_size, file->table_size);
        strncat(line, item, size - strlen(line) - 1);
    }
}

/* Describes a changed node's fields: "address A -> B, weight 1 -> 5". */
static void describe_node_change(const shmring_difference_t *d, char *line, size_t size)
{
    char item[600];
    line[0] = '\0';
    if (d->fields & SHMRING_DIFF_ADDRESS) {
        snprintf(item, sizeof(item), "address %s -> %s", d->before.address,
                 d->after.address);
        strncat(line, item, size - strlen(line) - 1);
    }
    if (d->fields & SHMRING_DIFF_WEIGHT) {
        separate(line, size);
        snprintf(item, sizeof(item), "weight %" PRIu32 " -> %" PRIu32, d->before.weight,
                 d->after.weight);
        strncat(line, item, size - strlen(line) - 1);
    }
    if (d->fields & SHMRING_DIFF_STATE) {
        separate(line, size);
        snprintf(item, sizeof(item), "state %s -> %s", state_name(d->before.state),
                 state_name(d->after.state));
        strncat(line, item, size - strlen(line) - 1);
    }
    if (d->fields & SHMRING_DIFF_ID) {
        separate(line, size);
        snprintf(item, sizeof(item), "id %" PRIu32 " -> %" PRIu32, d->before.id,
                 d->after.id);
        strncat(line, item, size - strlen(line) - 1);
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
static void print_text(const shmring_nodeset_diff_t *diff, const shmring_params_t *ring,
                       const shmring_params_t *file)
{
    char line[2048];
    for (size_t i = 0; i < shmring_nodeset_diff_count(diff); i++) {
        shmring_difference_t d;
        if (shmring_nodeset_diff_get(diff, i, &d) != 0)
            continue;
        switch (d.kind) {
        case SHMRING_DIFFERENCE_PARAMS:
            describe_params(d.fields, ring, file, line, sizeof(line));
            printf("params: %s\n", line);
            break;
        case SHMRING_DIFFERENCE_ADDED:
            printf("missing %s: address %s, weight %" PRIu32 ", state %s, id %" PRIu32
                   "\n",
                   d.after.name, d.after.address, d.after.weight,
                   state_name(d.after.state), d.after.id);
            break;
        case SHMRING_DIFFERENCE_REMOVED:
            printf("extra %s: address %s, weight %" PRIu32 ", state %s, id %" PRIu32 "\n",
                   d.before.name, d.before.address, d.before.weight,
                   state_name(d.before.state), d.before.id);
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

static json_t *json_node(const shmring_node_info_t *node)
{
    return json_pack("{s:s, s:I, s:s, s:I, s:s}", "name", node->name, "id",
                     (json_int_t)node->id, "address", node->address, "weight",
                     (json_int_t)node->weight, "state", state_name(node->state));
}

static int print_json(const shmring_nodeset_diff_t *diff, const shmring_params_t *ring,
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
            describe_params(d.fields, ring, file, line, sizeof(line));
            json_object_set_new(entry, "what", json_string(line));
        }
        if (d.kind == SHMRING_DIFFERENCE_CHANGED) {
            describe_node_change(&d, line, sizeof(line));
            json_object_set_new(entry, "what", json_string(line));
        }
        if (d.before.name != NULL)
            json_object_set_new(entry, "ring", json_node(&d.before));
        if (d.after.name != NULL)
            json_object_set_new(entry, "file", json_node(&d.after));
        json_array_append_new(list, entry);
    }
    json_t *root = json_pack("{s:b, s:o}", "same", shmring_nodeset_diff_count(diff) == 0,
                             "differences", list);
    if (root == NULL)
        return check_error("check: %s", shmring_strerror(SHMRING_ENOMEM));
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (text == NULL)
        return check_error("check: %s", shmring_strerror(SHMRING_ENOMEM));
    puts(text);
    free(text);
    return 0;
}

int ringctl_check(const char *ring, const shmring_open_options_t *open, const char *text,
                  size_t len, const char *label, bool json)
{
    uint64_t generation;
    void *snapshot;
    size_t size;
    int err = shmring_ring_snapshot(ring, open, &generation, &snapshot, &size);
    if (err != 0)
        return check_error("cannot read ring '%s': %s", ring, shmring_strerror(err));
    shmring_nodeset_t *current = NULL;
    err = snapshot != NULL ? shmring_nodeset_from_snapshot(snapshot, &current)
                           : shmring_nodeset_new(&current);
    free(snapshot);
    if (err != 0)
        return check_error("cannot read ring '%s': %s", ring, shmring_strerror(err));

    /* The document as `load` would apply it: the ring's parameters where it gives
     * none, and the ring's ids for the nodes that stay. */
    shmring_params_t ring_params, file_params;
    shmring_nodeset_params(current, &ring_params);
    shmring_nodeset_t *wanted = NULL;
    shmring_json_error_t error;
    err = shmring_nodeset_from_json(text, len, &ring_params, &wanted, &error);
    if (err == 0)
        err = shmring_nodeset_inherit_ids(wanted, current);
    shmring_nodeset_diff_t *diff = NULL;
    if (err == 0)
        err = shmring_nodeset_diff(current, wanted, &diff);
    int status;
    if (err == SHMRING_EJSON) {
        status = check_error("%s: %s", label, error.text);
    } else if (err != 0) {
        status = check_error("%s: %s", label, shmring_strerror(err));
    } else {
        shmring_nodeset_params(wanted, &file_params);
        status = 0;
        if (json)
            status = print_json(diff, &ring_params, &file_params);
        else
            print_text(diff, &ring_params, &file_params);
        if (status == 0)
            status = shmring_nodeset_diff_count(diff) == 0 ? RINGCTL_CHECK_SAME
                                                           : RINGCTL_CHECK_DIFFERS;
    }
    shmring_nodeset_diff_free(diff);
    shmring_nodeset_free(wanted);
    shmring_nodeset_free(current);
    return status;
}
