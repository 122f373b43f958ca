/*
 * Applying a node set read from the source to the ring: the same rules as `ringctl
 * load` (parameters and ids the document leaves out are the ring's; an empty node
 * set is refused), one publication only when something differs, then the state
 * file and systemd's readiness.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "sync_internal.h"

/* Opens the ring for writing, creating it (whole, at its first publication) if it
 * does not exist, as `ringctl load` does. */
static int open_writer(struct sync_context *ctx, shmring_writer_t **out)
{
    const shmring_sync_config_t *c = ctx->config;
    return shmring_writer_open(
        c->ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_ATOMIC_CREATE, c->writer, out);
}

/* Rewrites "nodes[N]..." of a JSON error as "key K: ..." when the node came from an
 * etcd key of its own, and an error about the parameters as "key P: ..." when they
 * came from the prefix's own key. */
static void name_node_key(const char *text, char *out, size_t size,
                          const char *(*key_of_node)(void *data, size_t index),
                          void *key_data)
{
    snprintf(out, size, "%s", text);
    size_t index = SIZE_MAX;
    int consumed = 0;
    if (key_of_node == NULL)
        return;
    /* Not about one node: about the parameters, which have a key of their own. */
    if (sscanf(text, "nodes[%zu]%n", &index, &consumed) != 1 || consumed == 0) {
        index = SIZE_MAX;
        consumed = 0;
    }
    const char *key = key_of_node(key_data, index);
    if (key == NULL)
        return;
    const char *tail = text + consumed;
    if (*tail == '.' || (*tail == ':' && consumed > 0))
        tail += *tail == '.' ? 1 : 2;
    snprintf(out, size, "key %s: %s", key, tail);
}

static void tell_ready(struct sync_context *ctx, const char *status)
{
    if (ctx->ready)
        return;
    ctx->ready = true;
    /* Without NOTIFY_SOCKET (not under systemd) this does nothing. */
    sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

static void keep_state(struct sync_context *ctx, const shmring_nodeset_t *set)
{
    const char *path = ctx->config->state_path;
    if (path == NULL || ctx->state_current)
        return;
    /* The state file holds the ring's node set: it is readable by whoever may read
     * the ring (its mode and group), nobody else. */
    shmring_open_options_t options = {0};
    options.directory =
        ctx->config->writer != NULL ? ctx->config->writer->directory : NULL;
    shmring_ring_status_t status;
    int err = shmring_ring_status(ctx->config->ring, &options, &status);
    if (err != 0) {
        sync__log(ctx, "cannot write state file %s: cannot read the ring's mode: %s",
                  path, shmring_strerror(err));
        return;
    }
    char *text = NULL;
    err = shmring_nodeset_to_json(set, &text);
    if (err != 0) {
        sync__log(ctx, "cannot write state file %s: %s", path, shmring_strerror(err));
        return;
    }
    err = sync__state_write(path, text, strlen(text), status.mode, status.group);
    free(text);
    if (err != 0)
        sync__log(ctx, "cannot write state file %s: %s", path, sync__file_error(err));
    else
        ctx->state_current = true;
}

static void describe_changes(const shmring_nodeset_diff_t *diff, char *out, size_t size)
{
    shmring_difference_counts_t counts;
    shmring_nodeset_diff_counts(diff, &counts);
    snprintf(out, size, "%zu added, %zu removed, %zu changed%s%s", counts.added,
             counts.removed, counts.changed,
             counts.params_changed ? ", new parameters" : "",
             counts.order_changed ? ", new order" : "");
}

enum sync_outcome sync__apply(struct sync_context *ctx, const char *text, size_t len,
                              const char *origin,
                              const char *(*key_of_node)(void *data, size_t index),
                              void *key_data)
{
    shmring_writer_t *writer = NULL;
    int err = open_writer(ctx, &writer);
    if (err != 0) {
        sync__log(ctx, "cannot open the ring for %s: %s", origin, shmring_strerror(err));
        return SYNC_FAILED;
    }
    shmring_nodeset_t *current = NULL, *wanted = NULL;
    shmring_nodeset_diff_t *diff = NULL;
    enum sync_outcome outcome = SYNC_FAILED;
    err = shmring_writer_nodeset(writer, &current);
    if (err != 0) {
        sync__log(ctx, "cannot read the ring for %s: %s", origin, shmring_strerror(err));
        goto done;
    }
    shmring_params_t base;
    shmring_nodeset_params(current, &base);
    shmring_json_error_t error;
    err = shmring_nodeset_from_json(text, len, &base, &wanted, &error);
    if (err == SHMRING_EJSON) {
        char message[SYNC_LINE_MAX];
        name_node_key(error.text, message, sizeof(message), key_of_node, key_data);
        sync__log(ctx, "refused %s: %s; ring unchanged", origin, message);
        outcome = SYNC_REFUSED;
        goto done;
    }
    if (err == 0 && shmring_nodeset_count(wanted) == 0) {
        /* As `ringctl load`: no node would route no key, almost always a mistake. */
        sync__log(ctx, "refused %s: nodes: the node set is empty; ring unchanged",
                  origin);
        outcome = SYNC_REFUSED;
        goto done;
    }
    if (err == 0)
        err = shmring_nodeset_inherit_ids(wanted, current);
    if (err == 0)
        err = shmring_nodeset_diff(current, wanted, &diff);
    if (err != 0) {
        sync__log(ctx, "refused %s: %s; ring unchanged", origin, shmring_strerror(err));
        outcome = SYNC_REFUSED;
        goto done;
    }
    char changes[256];
    if (shmring_nodeset_diff_count(diff) == 0) {
        sync__log(ctx, "ring already holds %s (generation %" PRIu64 ")", origin,
                  shmring_writer_generation(writer));
        outcome = SYNC_UNCHANGED;
    } else {
        describe_changes(diff, changes, sizeof(changes));
        uint64_t generation = 0;
        err = shmring_writer_publish(writer, wanted, &generation);
        char holders[SYNC_LINE_MAX / 2];
        if (err == SHMRING_ENOSPC && ctx->config->describe_no_space != NULL &&
            ctx->config->describe_no_space(ctx->config->ring, ctx->config->writer,
                                           holders, sizeof(holders))) {
            sync__log(ctx, "cannot publish %s: %s; %s; ring unchanged", origin,
                      shmring_strerror(err), holders);
            goto done;
        }
        if (err != 0) {
            sync__log(ctx, "cannot publish %s: %s; ring unchanged", origin,
                      shmring_strerror(err));
            goto done;
        }
        sync__log(ctx, "published generation %" PRIu64 " from %s (%s)", generation,
                  origin, changes);
        ctx->state_current = false;
        outcome = SYNC_PUBLISHED;
    }
    ctx->in_step = true;
    sync__event(ctx,
                outcome == SYNC_PUBLISHED ? SYNC_EVENT_PUBLISHED : SYNC_EVENT_APPLIED);
    keep_state(ctx, wanted);
    tell_ready(ctx, "ring in step with the source");
done:
    if (outcome == SYNC_REFUSED)
        sync__event(ctx, SYNC_EVENT_REFUSED);
    if (outcome == SYNC_FAILED)
        sync__event(ctx, SYNC_EVENT_ERROR);
    shmring_nodeset_diff_free(diff);
    shmring_nodeset_free(wanted);
    shmring_nodeset_free(current);
    shmring_writer_close(writer);
    return outcome;
}

bool sync__restore(struct sync_context *ctx)
{
    const char *path = ctx->config->state_path;
    if (path == NULL)
        return false;
    char *text = NULL;
    size_t len = 0;
    char refusal[SYNC_LINE_MAX];
    int err = sync__state_read(path, &text, &len, refusal, sizeof(refusal));
    if (err == SYNC_STATE_REFUSED) {
        sync__log(ctx, "no ring to restore: %s", refusal);
        return false;
    }
    if (err != 0) {
        sync__log(ctx, "no ring to restore: cannot read state file %s: %s", path,
                  sync__file_error(err));
        return false;
    }
    char origin[SYNC_LINE_MAX];
    snprintf(origin, sizeof(origin), "state file %s", path);
    /* What the state file holds is what the ring held: no need to write it back. */
    ctx->state_current = true;
    /* Not the source's: the metrics keep the revision and time they had. */
    struct sync_metrics kept = ctx->metrics;
    enum sync_outcome outcome = sync__apply(ctx, text, len, origin, NULL, NULL);
    free(text);
    /* The ring holds the last applied node set, not the source's current one. */
    ctx->in_step = false;
    kept.errors = ctx->metrics.errors;
    kept.refusals = ctx->metrics.refusals;
    ctx->metrics = kept;
    sync__metrics_write(ctx);
    return outcome == SYNC_PUBLISHED || outcome == SYNC_UNCHANGED;
}
