/*
 * The report of every command that changes a ring (init, load, add, remove, weight,
 * down, up, destroy): one line of text ("added NAME (id ID) to ring 'R': generation
 * G", "would ...", with the share of the keyspace that would move) or one JSON
 * object.
 */
#include <inttypes.h>
#include <stdio.h>

#include "ringctl.h"

/* How the text report says that one node changed: "added NAME (id ID) to ring
 * 'RING'", "would add NAME (id ID)". */
static const struct {
    const char *verb;
    const char *done;
    const char *preposition;
} node_phrases[] = {
    [ACTION_ADD] = {"add", "added", "to"},
    [ACTION_REMOVE] = {"remove", "removed", "from"},
    [ACTION_WEIGHT] = {"change weight of", "changed weight of", "in"},
    [ACTION_DOWN] = {"mark", "marked", "in"},
    [ACTION_UP] = {"mark", "marked", "in"},
};

/* Writes what CHANGE did (WOULD false) or would do to its node into OUT, DETAIL
 * after the node ("from 1 to 3", "down"). */
static void describe_node(const struct ringctl *ctl, const struct change *change,
                          bool would, const char *detail, char *out, size_t size)
{
    const shmring_node_info_t *node = &change->node;
    if (would)
        snprintf(out, size, "would %s %s (id %" PRIu32 ")%s",
                 node_phrases[change->action].verb, node->name, node->id, detail);
    else
        snprintf(out, size, "%s %s (id %" PRIu32 ")%s %s ring '%s'",
                 node_phrases[change->action].done, node->name, node->id, detail,
                 node_phrases[change->action].preposition, ctl->ring);
}

/* Writes what CHANGE did (WOULD false) or would do into OUT, as the text report
 * says it. */
static void describe_change(const struct ringctl *ctl, const struct change *change,
                            bool would, uint64_t generation, char *out, size_t size)
{
    const shmring_node_info_t *node = &change->node;
    const char *ring = ctl->ring;
    char params[256], detail[64];
    switch (change->action) {
    case ACTION_INIT:
        ringctl_describe_params(&change->params, params, sizeof(params));
        snprintf(out, size,
                 would ? "would create ring '%s' (%s)" : "created ring '%s' (%s)", ring,
                 params);
        return;
    case ACTION_LOAD: {
        char summary[256];
        const char *plural = change->node_count == 1 ? "" : "s";
        snprintf(summary, sizeof(summary), "%zu added, %zu removed, %zu changed%s",
                 change->diff.added, change->diff.removed, change->diff.changed,
                 change->params_changed ? ", new parameters" : "");
        if (change->unchanged)
            snprintf(out, size, "ring '%s' already has this node set (%zu node%s)", ring,
                     change->node_count, plural);
        else if (would)
            snprintf(out, size, "would load %zu node%s (%s)", change->node_count, plural,
                     summary);
        else
            snprintf(out, size, "loaded %zu node%s into ring '%s' (%s)",
                     change->node_count, plural, ring, summary);
        return;
    }
    case ACTION_WEIGHT:
        if (change->unchanged) {
            snprintf(out, size, "node '%s' already has weight %" PRIu32, node->name,
                     node->weight);
            return;
        }
        snprintf(detail, sizeof(detail), " from %" PRIu32 " to %" PRIu32,
                 change->previous_weight, node->weight);
        describe_node(ctl, change, would, detail, out, size);
        return;
    case ACTION_DOWN:
    case ACTION_UP:
        if (change->unchanged) {
            snprintf(out, size, "node '%s' is already %s", node->name,
                     ringctl_state_name(node->state));
            return;
        }
        snprintf(detail, sizeof(detail), " %s", ringctl_state_name(node->state));
        describe_node(ctl, change, would, detail, out, size);
        return;
    case ACTION_ADD:
    case ACTION_REMOVE:
        describe_node(ctl, change, would, "", out, size);
        return;
    case ACTION_DESTROY:
        if (would)
            snprintf(out, size, "would destroy ring '%s' (generation %" PRIu64 ")", ring,
                     generation);
        else
            snprintf(out, size, "destroyed ring '%s'", ring);
        return;
    }
}

static const char *const action_names[] = {
    [ACTION_INIT] = "init",     [ACTION_LOAD] = "load",       [ACTION_ADD] = "add",
    [ACTION_REMOVE] = "remove", [ACTION_WEIGHT] = "weight",   [ACTION_DOWN] = "down",
    [ACTION_UP] = "up",         [ACTION_DESTROY] = "destroy",
};

/* The keys only CHANGE's action reports (see docs/json-output.md). */
static void json_action_keys(json_t *object, const struct change *change)
{
    switch (change->action) {
    case ACTION_INIT:
        json_object_set_new(
            object, "algorithm",
            json_string(shmring_algorithm_name(change->params.algorithm)));
        json_object_set_new(object, "hash",
                            json_string(shmring_hash_name(change->params.hash)));
        json_object_set_new(object, "vnodes", ringctl_json_uint(change->params.vnodes));
        json_object_set_new(object, "table_size",
                            ringctl_json_uint(change->params.table_size));
        return;
    case ACTION_LOAD:
        json_object_set_new(object, "nodes", ringctl_json_uint(change->node_count));
        json_object_set_new(object, "added", ringctl_json_uint(change->diff.added));
        json_object_set_new(object, "removed", ringctl_json_uint(change->diff.removed));
        json_object_set_new(object, "changed_nodes",
                            ringctl_json_uint(change->diff.changed));
        json_object_set_new(object, "params_changed",
                            json_boolean(change->params_changed));
        return;
    case ACTION_WEIGHT:
        json_object_set_new(object, "node", ringctl_json_node_info(&change->node));
        json_object_set_new(object, "previous_weight",
                            ringctl_json_uint(change->previous_weight));
        return;
    case ACTION_ADD:
    case ACTION_REMOVE:
    case ACTION_DOWN:
    case ACTION_UP:
        json_object_set_new(object, "node", ringctl_json_node_info(&change->node));
        return;
    case ACTION_DESTROY:
        return;
    }
}

int output_change(const struct ringctl *ctl, const struct change *change,
                  uint64_t generation, const double *moved)
{
    /* A dry run that would change something says so as "would ..."; nothing to do
     * is said as without --dry-run. */
    bool would = ctl->dry_run && !change->unchanged;
    if (ctl->json) {
        /* A destroyed ring has no generation left to name. */
        bool gone = change->action == ACTION_DESTROY && !ctl->dry_run;
        json_t *object = json_object();
        json_object_set_new(object, "ring", ringctl_json_str(ctl->ring));
        json_object_set_new(object, "generation",
                            gone ? json_null() : ringctl_json_uint(generation));
        json_object_set_new(object, "action", json_string(action_names[change->action]));
        json_object_set_new(object, "dry_run", json_boolean(ctl->dry_run));
        json_object_set_new(object, "changed", json_boolean(!change->unchanged));
        json_action_keys(object, change);
        json_object_set_new(object, "moved_fraction",
                            moved != NULL ? json_real(*moved) : json_null());
        return output_json(object, false);
    }
    char text[LINE_MAX_BYTES];
    describe_change(ctl, change, would, generation, text, sizeof(text));
    if (moved != NULL)
        printf("%s: %.2f%% of the keyspace would move\n", text, *moved * 100.0);
    else if (change->unchanged || would || change->action == ACTION_DESTROY)
        printf("%s\n", text);
    else
        printf("%s: generation %" PRIu64 "\n", text, generation);
    return EXIT_OK;
}
