/*
 * What every changing command shares: take the ring's writer lock, read the current
 * node set, change it, publish exactly one new generation (or nothing), and report
 * it. Any error before the publication leaves the ring as it was. With --dry-run the
 * same steps read the current version without the lock and publish nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringctl.h"

/* The state of one changing command. */
struct session {
    shmring_writer_t *writer;
    /* For --dry-run: a copy of the current version (NULL: nothing published). */
    shmring_snapshot_t *current;
    shmring_nodeset_t *set;
    uint64_t generation;
};

void change_keep_node(struct change *change, const shmring_node_info_t *node)
{
    snprintf(change->node_name, sizeof(change->node_name), "%s", node->name);
    snprintf(change->node_address, sizeof(change->node_address), "%s", node->address);
    change->node = *node;
    change->node.name = change->node_name;
    change->node.address = change->node_address;
}

int nodeset_diff(const shmring_nodeset_t *before, const shmring_nodeset_t *after,
                 struct nodeset_diff *out)
{
    memset(out, 0, sizeof(*out));
    shmring_nodeset_diff_t *diff;
    int err = shmring_nodeset_diff(before, after, &diff);
    if (err != 0)
        return err;
    shmring_difference_counts_t counts;
    shmring_nodeset_diff_counts(diff, &counts);
    out->added = counts.added;
    out->removed = counts.removed;
    out->changed = counts.changed;
    out->params_changed = counts.params_changed;
    out->same = shmring_nodeset_diff_count(diff) == 0;
    shmring_nodeset_diff_free(diff);
    return 0;
}

int dry_run_owner_check(const shmring_ring_status_t *status)
{
    return status->owner == geteuid() ? 0 : SHMRING_EOWNER;
}

/* Opens the ring for writing and reads its node set. */
static int session_open_writer(struct ringctl *ctl, enum open_mode mode,
                               struct session *s)
{
    /* A ring this command creates appears only with its first publication: if the
     * command fails before, no trace of it is left, and no other writer's ring is
     * ever removed in its place. Without EXCL, a ring that exists when the library
     * looks is opened instead (see SHMRING_WRITER_CREATE). */
    const unsigned create = SHMRING_WRITER_CREATE | SHMRING_WRITER_ATOMIC_CREATE;
    unsigned flags = 0;
    if (mode == OPEN_EXCLUSIVE)
        flags = create | SHMRING_WRITER_EXCL;
    else if (mode == OPEN_CREATE)
        flags = create;
    int err = shmring_writer_open(ctl->ring, flags, &ctl->writer, &s->writer);
    if (err == SHMRING_EEXIST && mode == OPEN_EXCLUSIVE)
        return fail(EXIT_FAILED, "ring '%s' already exists", ctl->ring);
    if (err != 0)
        return library_failure(mode == OPEN_EXCLUSIVE ? "create" : "open", ctl, err);
    s->generation = shmring_writer_generation(s->writer);
    err = shmring_writer_nodeset(s->writer, &s->set);
    if (err != 0)
        return library_failure("read", ctl, err);
    return EXIT_OK;
}

/* For --dry-run: reads the current version without the writer lock, and fails where
 * the command itself would fail to open the ring. */
static int session_open_readonly(struct ringctl *ctl, enum open_mode mode,
                                 struct session *s)
{
    shmring_ring_status_t status;
    int err =
        shmring_ring_snapshot_with_status(ctl->ring, &ctl->open, &status, &s->current);
    if (err == 0) {
        s->generation = status.generation;
        err = dry_run_owner_check(&status);
    }
    if (err == 0 && mode == OPEN_EXCLUSIVE)
        return fail(EXIT_FAILED, "ring '%s' already exists", ctl->ring);
    if (err == SHMRING_ENOENT && mode != OPEN_EXISTING) {
        s->generation = 0;
        s->current = NULL;
        err = 0;
    }
    if (err != 0)
        return library_failure("open", ctl, err);
    err = s->current != NULL ? shmring_nodeset_from_snapshot(s->current, &s->set)
                             : shmring_nodeset_new(&s->set);
    if (err != 0)
        return library_failure("read", ctl, err);
    return EXIT_OK;
}

/* Builds the version SET would publish and computes the exact share of the keyspace
 * that would move to it from CURRENT (NULL: nothing published). */
static int estimate_moved(const struct ringctl *ctl, const shmring_snapshot_t *current,
                          const shmring_nodeset_t *set, double *fraction)
{
    shmring_snapshot_t *next = NULL;
    int err = shmring_nodeset_snapshot(set, &next);
    if (err == 0)
        err = shmring_snapshot_moved_share(current, next, fraction);
    shmring_snapshot_free(next);
    if (err != 0)
        return library_failure("build", ctl, err);
    return EXIT_OK;
}

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
static void describe_node_change(const struct ringctl *ctl, const struct change *change,
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
    char params[256], summary[256], detail[64];
    switch (change->action) {
    case ACTION_INIT:
        describe_params(&change->params, params, sizeof(params));
        snprintf(out, size,
                 would ? "would create ring '%s' (%s)" : "created ring '%s' (%s)", ring,
                 params);
        return;
    case ACTION_LOAD: {
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
        describe_node_change(ctl, change, would, detail, out, size);
        return;
    case ACTION_DOWN:
    case ACTION_UP:
        if (change->unchanged) {
            snprintf(out, size, "node '%s' is already %s", node->name,
                     state_name(node->state));
            return;
        }
        snprintf(detail, sizeof(detail), " %s", state_name(node->state));
        describe_node_change(ctl, change, would, detail, out, size);
        return;
    case ACTION_ADD:
    case ACTION_REMOVE:
        describe_node_change(ctl, change, would, "", out, size);
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

/* The keys only CHANGE's action reports (see the README's JSON schema). */
static void json_action_keys(json_t *object, const struct change *change)
{
    switch (change->action) {
    case ACTION_INIT:
        json_object_set_new(
            object, "algorithm",
            json_string(shmring_algorithm_name(change->params.algorithm)));
        json_object_set_new(object, "hash",
                            json_string(shmring_hash_name(change->params.hash)));
        json_object_set_new(object, "vnodes", json_uint(change->params.vnodes));
        json_object_set_new(object, "table_size", json_uint(change->params.table_size));
        return;
    case ACTION_LOAD:
        json_object_set_new(object, "nodes", json_uint(change->node_count));
        json_object_set_new(object, "added", json_uint(change->diff.added));
        json_object_set_new(object, "removed", json_uint(change->diff.removed));
        json_object_set_new(object, "changed_nodes", json_uint(change->diff.changed));
        json_object_set_new(object, "params_changed",
                            json_boolean(change->params_changed));
        return;
    case ACTION_WEIGHT:
        json_object_set_new(object, "node", json_node_info(&change->node));
        json_object_set_new(object, "previous_weight",
                            json_uint(change->previous_weight));
        return;
    case ACTION_ADD:
    case ACTION_REMOVE:
    case ACTION_DOWN:
    case ACTION_UP:
        json_object_set_new(object, "node", json_node_info(&change->node));
        return;
    case ACTION_DESTROY:
        return;
    }
}

int report_change(const struct ringctl *ctl, const struct change *change,
                  uint64_t generation, const double *moved)
{
    /* A dry run that would change something says so as "would ..."; nothing to do
     * is said as without --dry-run. */
    bool would = ctl->dry_run && !change->unchanged;
    if (ctl->json) {
        /* A destroyed ring has no generation left to name. */
        bool gone = change->action == ACTION_DESTROY && !ctl->dry_run;
        json_t *object = json_object();
        json_object_set_new(object, "ring", json_str(ctl->ring));
        json_object_set_new(object, "generation",
                            gone ? json_null() : json_uint(generation));
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

/* Publishes the changed node set, or (dry run, nothing to do) does not, and reports
 * it. */
static int publish_and_report(struct ringctl *ctl, struct session *s,
                              const struct change *change)
{
    if (change->unchanged)
        return report_change(ctl, change, s->generation, NULL);
    if (ctl->dry_run) {
        double fraction;
        int status =
            change->sample ? estimate_moved(ctl, s->current, s->set, &fraction) : EXIT_OK;
        if (status != EXIT_OK)
            return status;
        return report_change(ctl, change, s->generation,
                             change->sample ? &fraction : NULL);
    }
    int err = shmring_writer_publish(s->writer, s->set, &s->generation);
    if (err != 0)
        return library_failure("publish", ctl, err);
    ctl->published = s->generation; /* from now on, the ring has changed */
    return report_change(ctl, change, s->generation, NULL);
}

int run_change(struct ringctl *ctl, enum open_mode mode, change_fn apply,
               const void *input)
{
    struct session s = {0};
    struct change change = {.sample = true};
    ctl->writing = true;
    int status = ctl->dry_run ? session_open_readonly(ctl, mode, &s)
                              : session_open_writer(ctl, mode, &s);
    if (status == EXIT_OK)
        status = apply(ctl, input, &s.set, &change);
    if (status == EXIT_OK)
        status = publish_and_report(ctl, &s, &change);
    shmring_writer_close(s.writer);
    shmring_snapshot_free(s.current);
    shmring_nodeset_free(s.set);
    return status;
}
