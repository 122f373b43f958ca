/*
 * `ringctl metrics`: a ring's state in the Prometheus text exposition format
 * (version 0.0.4), for node_exporter's textfile collector.
 *
 * Prometheus' conventions: one family per quantity, named shmring_ring_* with its
 * unit as a suffix (_bytes, _seconds) and counters ending in _total; the ring, a
 * node state or a generation are labels, never parts of a name. Every sample of a
 * family follows its HELP and TYPE lines (the format requires a family's samples to
 * be together), so the rings are read first and printed family by family.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "ringctl.h"

/* What one ring's metrics come from. */
struct ring_sample {
    const char *ring;
    shmring_ring_status_t status;
    /* The current version's header; zero when nothing is published. */
    shmring_snapshot_info_t info;
    bool published;
    shmring_ring_readers_t census;
};

/*
 * Reads RING's status, its current version's header and its readers into *OUT.
 * Returns 0 or a library error.
 */
static int sample_read(const struct ringctl_scope *scope, const char *ring,
                       struct ring_sample *out)
{
    memset(out, 0, sizeof(*out));
    out->ring = ring;
    /* The control object and the current version's header alone: a few kilobytes
     * whatever the ring's size. */
    shmring_ring_info_t info;
    int err = shmring_ring_info(ring, scope->open, &info);
    if (err == 0) {
        out->status = info.status;
        out->info = info.version;
        out->published = info.status.generation != 0;
    }
    if (err == 0)
        err = shmring_ring_readers(ring, scope->open, &out->census);
    return err;
}

/* Prints TEXT as a label value: backslash, double quote and newline escaped. */
static void print_label_value(const char *text)
{
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\\' || *c == '"')
            printf("\\%c", *c);
        else if (*c == '\n')
            printf("\\n");
        else
            putchar(*c);
    }
}

static void family(const char *name, const char *type, const char *help)
{
    printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Starts a sample of NAME for SAMPLE's ring: the caller adds labels and the value. */
static void sample_start(const char *name, const struct ring_sample *sample)
{
    printf("%s{ring=\"", name);
    print_label_value(sample->ring);
    printf("\"");
}

/* What a family's samples show of a ring. */
enum ring_quantity {
    QUANTITY_GENERATION,
    QUANTITY_NODES,
    QUANTITY_PUBLICATIONS,
    QUANTITY_LAST_PUBLICATION,
    QUANTITY_SNAPSHOT_BYTES,
    QUANTITY_READER_PROCESSES,
    QUANTITY_SUPERSEDED_VERSIONS,
    QUANTITY_SUPERSEDED_BYTES,
    QUANTITY_UNINSPECTED_PROCESSES,
};

/* A family with samples for each ring, in the order they are printed. */
struct ring_family {
    const char *name;
    const char *type;
    const char *help;
    enum ring_quantity quantity;
};

static const struct ring_family ring_families[] = {
    {"shmring_ring_generation", "gauge",
     "Generation of the ring's current version (0: nothing published).",
     QUANTITY_GENERATION},
    {"shmring_ring_nodes", "gauge", "Nodes of the ring's current version, by state.",
     QUANTITY_NODES},
    {"shmring_ring_publications_total", "counter",
     "Versions published since the ring was created.", QUANTITY_PUBLICATIONS},
    {"shmring_ring_last_publication_timestamp_seconds", "gauge",
     "Unix time of the ring's last publication (absent: never published).",
     QUANTITY_LAST_PUBLICATION},
    {"shmring_ring_snapshot_bytes", "gauge",
     "Size of the ring's current version in bytes.", QUANTITY_SNAPSHOT_BYTES},
    {"shmring_ring_reader_processes", "gauge",
     "Processes that map a version of the ring, by generation; current=\"true\" for the "
     "current version.",
     QUANTITY_READER_PROCESSES},
    {"shmring_ring_superseded_versions", "gauge",
     "Superseded versions of the ring that processes still map.",
     QUANTITY_SUPERSEDED_VERSIONS},
    {"shmring_ring_superseded_bytes", "gauge",
     "Memory kept in use by superseded versions that processes still map, in bytes.",
     QUANTITY_SUPERSEDED_BYTES},
    {"shmring_ring_uninspected_processes", "gauge",
     "Processes whose mappings could not be read: the reader counts leave them out.",
     QUANTITY_UNINSPECTED_PROCESSES},
};

/* The reader_processes samples of one ring: one per version that processes map. */
static void print_reader_processes(const char *name, const struct ring_sample *sample)
{
    const shmring_ring_readers_t *census = &sample->census;
    bool current_listed = false;
    for (size_t v = 0; v < census->version_count; v++) {
        const shmring_ring_version_use_t *version = &census->versions[v];
        /* Two versions may share a generation (a destroyed ring's and its
         * successor's): one sample each, told apart by "current". */
        current_listed = current_listed || version->current;
        sample_start(name, sample);
        printf(",generation=\"%" PRIu64 "\",current=\"%s\"} %zu\n", version->generation,
               version->current ? "true" : "false", version->processes);
    }
    /* The current version always has a sample, 0 when nobody maps it, so that an
     * alert on it never sees a gap. */
    if (!current_listed && sample->status.generation != 0) {
        sample_start(name, sample);
        printf(",generation=\"%" PRIu64 "\",current=\"true\"} 0\n",
               sample->status.generation);
    }
}

/* The samples of FAMILY for one ring. */
static void print_ring_samples(const struct ring_family *family,
                               const struct ring_sample *sample)
{
    const shmring_ring_readers_t *census = &sample->census;
    uint64_t value = 0;
    switch (family->quantity) {
    case QUANTITY_NODES:
        sample_start(family->name, sample);
        printf(",state=\"up\"} %" PRIu32 "\n", sample->info.up_count);
        sample_start(family->name, sample);
        printf(",state=\"down\"} %" PRIu32 "\n",
               sample->info.node_count - sample->info.up_count);
        return;
    case QUANTITY_READER_PROCESSES:
        print_reader_processes(family->name, sample);
        return;
    case QUANTITY_LAST_PUBLICATION:
        /* Absent rather than 0 for a ring never published. */
        if (sample->status.published_at != 0) {
            sample_start(family->name, sample);
            printf("} %" PRId64 "\n", sample->status.published_at);
        }
        return;
    case QUANTITY_GENERATION:
        value = sample->status.generation;
        break;
    case QUANTITY_PUBLICATIONS:
        value = sample->status.publish_count;
        break;
    case QUANTITY_SNAPSHOT_BYTES:
        value = sample->info.size;
        break;
    case QUANTITY_SUPERSEDED_VERSIONS:
        value = census->superseded_versions;
        break;
    case QUANTITY_SUPERSEDED_BYTES:
        value = census->superseded_bytes;
        break;
    case QUANTITY_UNINSPECTED_PROCESSES:
        value = census->processes_hidden;
        break;
    }
    sample_start(family->name, sample);
    printf("} %" PRIu64 "\n", value);
}

static void print_families(const struct ring_sample *samples, size_t count,
                           size_t unreadable, bool all)
{
    for (size_t f = 0; f < sizeof(ring_families) / sizeof(ring_families[0]); f++) {
        const struct ring_family *ring_family = &ring_families[f];
        family(ring_family->name, ring_family->type, ring_family->help);
        for (size_t i = 0; i < count; i++)
            print_ring_samples(ring_family, &samples[i]);
    }
    if (all) {
        family("shmring_rings_unreadable", "gauge",
               "Rings in the ring directory that could not be read (named on standard "
               "error).");
        printf("shmring_rings_unreadable %zu\n", unreadable);
    }
}

int ringctl_metrics(const struct ringctl_scope *scope)
{
    char **names = NULL;
    const char *one[] = {scope->ring, NULL};
    size_t count = 1;
    if (scope->all) {
        int err = shmring_ring_list(scope->directory, &names, &count);
        if (err != 0) {
            fprintf(stderr, "ringctl: error: cannot list rings in %s: %s\n",
                    scope->directory != NULL ? scope->directory
                                             : SHMRING_DEFAULT_DIRECTORY,
                    shmring_strerror(err));
            return 1;
        }
    }
    struct ring_sample *samples = calloc(count + 1, sizeof(*samples));
    if (samples == NULL) {
        shmring_ring_list_free(names);
        return scope->library_failure("read", SHMRING_ENOMEM, scope->context);
    }
    size_t read = 0, unreadable = 0;
    int status = 0;
    for (size_t i = 0; i < count; i++) {
        const char *ring = names != NULL ? names[i] : one[i];
        int err = sample_read(scope, ring, &samples[read]);
        if (err == 0) {
            read++;
        } else if (!scope->all) {
            status = scope->library_failure("read", err, scope->context);
        } else if (err != SHMRING_ENOENT) {
            /* Another user's ring, say: name it and go on with the others (a ring
             * destroyed since it was listed is simply gone). */
            shmring_ring_readers_free(&samples[read].census);
            fprintf(stderr, "ringctl: warning: ring '%s': skipped: %s\n", ring,
                    shmring_strerror(err));
            unreadable++;
        }
    }
    if (status == 0)
        print_families(samples, read, unreadable, scope->all);
    for (size_t i = 0; i < read; i++)
        shmring_ring_readers_free(&samples[i].census);
    free(samples);
    shmring_ring_list_free(names);
    return status;
}

static int ops_library_failure(const char *what, int err, void *context)
{
    return library_failure(what, context, err);
}

struct ringctl_scope ringctl_ops_scope(const struct ringctl *ctl)
{
    return (struct ringctl_scope){
        .ring = ctl->ring,
        .directory = ctl->directory,
        .open = &ctl->open,
        .json = ctl->json,
        .all = (ctl->given & OPTION_ALL) != 0,
        .library_failure = ops_library_failure,
        .context = (void *)ctl,
    };
}

int ringctl_cmd_metrics(struct ringctl *ctl)
{
    bool all = (ctl->given & OPTION_ALL) != 0;
    if (ctl->ring_given && all)
        return fail(EXIT_USAGE, "'metrics' takes -r RING or --all, not both");
    struct ringctl_scope scope = ringctl_ops_scope(ctl);
    return ringctl_metrics(&scope);
}
