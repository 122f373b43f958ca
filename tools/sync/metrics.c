/*
 * sync's own metrics: a Prometheus textfile that `--metrics PATH` keeps current for
 * node_exporter's textfile collector, beside the ring's own from `ringctl metrics`.
 * It is rewritten after every event with the state file's atomic replacement, so
 * the collector never reads half a file.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sync_internal.h"

/* Room for the whole file: six families of one sample each. */
#define METRICS_TEXT_MAX 4096

struct family {
    const char *name;
    const char *type;
    const char *help;
};

static const struct family families[] = {
    {"shmring_sync_in_step", "gauge",
     "Whether the ring holds the node set last read from the source (1) or not (0)."},
    {"shmring_sync_last_applied_revision", "gauge",
     "The etcd revision of the node set the ring last took (0: a file source, or "
     "none yet)."},
    {"shmring_sync_last_applied_timestamp_seconds", "gauge",
     "When the ring last took the source's node set (0: not yet)."},
    {"shmring_sync_publications_total", "counter",
     "Generations sync published because the source changed."},
    {"shmring_sync_refusals_total", "counter",
     "Values refused (invalid JSON, a node that breaks the rules, an empty set); the "
     "ring was left as it was."},
    {"shmring_sync_errors_total", "counter",
     "Failures to reach the source or to change the ring."},
};

void sync__event(struct sync_context *ctx, enum sync_event event)
{
    struct sync_metrics *m = &ctx->metrics;
    if (event == SYNC_EVENT_PUBLISHED)
        m->publications++;
    if (event == SYNC_EVENT_PUBLISHED || event == SYNC_EVENT_APPLIED) {
        m->applied_revision = ctx->revision;
        m->applied_at = (int64_t)time(NULL);
    }
    if (event == SYNC_EVENT_REFUSED)
        m->refusals++;
    if (event == SYNC_EVENT_ERROR)
        m->errors++;
    sync__metrics_write(ctx);
}

void sync__metrics_write(struct sync_context *ctx)
{
    const char *path = ctx->config->metrics_path;
    if (path == NULL)
        return;
    const struct sync_metrics *m = &ctx->metrics;
    const uint64_t values[] = {
        ctx->in_step ? 1 : 0,
        (uint64_t)m->applied_revision,
        (uint64_t)m->applied_at,
        m->publications,
        m->refusals,
        m->errors,
    };
    char text[METRICS_TEXT_MAX];
    size_t used = 0;
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        /* Ring names are letters, digits, '_', '.' and '-': no label escaping. */
        int n =
            snprintf(text + used, sizeof(text) - used,
                     "# HELP %s %s\n# TYPE %s %s\n%s{ring=\"%s\"} %" PRIu64 "\n",
                     families[i].name, families[i].help, families[i].name,
                     families[i].type, families[i].name, ctx->config->ring, values[i]);
        if (n < 0 || (size_t)n >= sizeof(text) - used)
            return; /* cannot happen with valid ring names */
        used += (size_t)n;
    }
    /* Counts and a ring name, for node_exporter whatever its user: 0644. */
    int err = sync__state_write(path, text, used, 0644, (gid_t)-1);
    if (err != 0 && !ctx->metrics_failed)
        sync__log(ctx, "cannot write metrics file %s: %s", path, sync__file_error(err));
    ctx->metrics_failed = err != 0;
}
