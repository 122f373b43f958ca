/*
 * The output of `ringctl metrics`: rings' states in the Prometheus text exposition
 * format (version 0.0.4), for node_exporter's textfile collector.
 *
 * Prometheus' conventions: one family per quantity, named shmring_ring_* with its
 * unit as a suffix (_bytes, _seconds) and counters ending in _total; the ring, a
 * node state or a generation are labels, never parts of a name. Every sample of a
 * family follows its HELP and TYPE lines, so the output is written family by family.
 */
#include <inttypes.h>
#include <stdio.h>

#include "ringctl.h"

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
static void sample_start(const char *name, const struct metrics_sample *sample)
{
    printf("%s{ring=\"", name);
    print_label_value(sample->summary.ring);
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
    QUANTITY_UNCOUNTED_PROCESSES,
    QUANTITY_STUCK_PROCESSES,
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
    {"shmring_ring_uncounted_processes", "gauge",
     "Processes left out of the reader counts: holding objects named like the ring's "
     "versions that are not provably the ring's, or too large to inspect.",
     QUANTITY_UNCOUNTED_PROCESSES},
    {"shmring_ring_stuck_processes", "gauge",
     "Processes stuck on an older version because their libshmring release cannot read "
     "the current one (docs/upgrading.md): restart them after upgrading.",
     QUANTITY_STUCK_PROCESSES},
};

/* Processes of CENSUS listed apart with KIND. */
static size_t uncounted_processes(const shmring_ring_readers_t *census, uint32_t kind)
{
    size_t count = 0;
    for (size_t i = 0; i < census->uncounted_count; i++)
        count += (i == 0 || census->uncounted[i - 1].pid != census->uncounted[i].pid) &&
                 census->uncounted[i].kind == kind;
    return count;
}

/* The reader_processes samples of one ring: one per version that processes map. */
static void print_reader_processes(const char *name, const struct metrics_sample *sample)
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
    if (!current_listed && sample->summary.status.generation != 0) {
        sample_start(name, sample);
        printf(",generation=\"%" PRIu64 "\",current=\"true\"} 0\n",
               sample->summary.status.generation);
    }
}

/* The samples of FAMILY for one ring. */
static void print_ring_samples(const struct ring_family *family,
                               const struct metrics_sample *sample)
{
    const shmring_ring_readers_t *census = &sample->census;
    uint64_t value = 0;
    switch (family->quantity) {
    case QUANTITY_NODES:
        sample_start(family->name, sample);
        printf(",state=\"up\"} %" PRIu32 "\n", sample->summary.info.up_count);
        sample_start(family->name, sample);
        printf(",state=\"down\"} %" PRIu32 "\n",
               sample->summary.info.node_count - sample->summary.info.up_count);
        return;
    case QUANTITY_UNCOUNTED_PROCESSES:
        sample_start(family->name, sample);
        printf(",reason=\"unverified\"} %zu\n",
               uncounted_processes(census, SHMRING_READER_UNVERIFIED));
        sample_start(family->name, sample);
        printf(",reason=\"too_large\"} %zu\n",
               uncounted_processes(census, SHMRING_READER_TOO_LARGE));
        return;
    case QUANTITY_READER_PROCESSES:
        print_reader_processes(family->name, sample);
        return;
    case QUANTITY_LAST_PUBLICATION:
        /* Absent rather than 0 for a ring never published. */
        if (sample->summary.status.published_at != 0) {
            sample_start(family->name, sample);
            printf("} %" PRId64 "\n", sample->summary.status.published_at);
        }
        return;
    case QUANTITY_GENERATION:
        value = sample->summary.status.generation;
        break;
    case QUANTITY_PUBLICATIONS:
        value = sample->summary.status.publish_count;
        break;
    case QUANTITY_SNAPSHOT_BYTES:
        value = sample->summary.info.size;
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
    case QUANTITY_STUCK_PROCESSES:
        value = census->stuck_processes;
        break;
    }
    sample_start(family->name, sample);
    printf("} %" PRIu64 "\n", value);
}

/* The load board's families (docs/bounded-loads.md), printed only when a ring has a
 * board, so that the output of rings without one is as it always was. */
enum board_quantity {
    BOARD_BALANCE_FACTOR,
    BOARD_WORKERS,
    BOARD_ACQUIRES,
    BOARD_FIRST_CANDIDATE,
    BOARD_CANDIDATES_TRIED,
    BOARD_RECLAIMED,
    BOARD_NODE_IN_FLIGHT,
    BOARD_NODE_CAPACITY,
    BOARD_NODE_OVERFLOW,
};

static const struct board_family {
    const char *name;
    const char *type;
    const char *help;
    enum board_quantity quantity;
} board_families[] = {
    {"shmring_board_balance_factor", "gauge",
     "Balance factor of the ring's bounded-load leases (0: none).", BOARD_BALANCE_FACTOR},
    {"shmring_board_workers", "gauge", "Worker handles holding a slot of the load board.",
     BOARD_WORKERS},
    {"shmring_board_acquires_total", "counter", "Leases acquired on the load board.",
     BOARD_ACQUIRES},
    {"shmring_board_first_candidate_total", "counter",
     "Leases that their key's first candidate took (divide by acquires_total for the "
     "first-candidate share).",
     BOARD_FIRST_CANDIDATE},
    {"shmring_board_candidates_tried_total", "counter",
     "Candidates that leases tried in all (divide by acquires_total for the mean).",
     BOARD_CANDIDATES_TRIED},
    {"shmring_board_reclaimed_slots_total", "counter",
     "Slots of dead workers whose leases were given back.", BOARD_RECLAIMED},
    {"shmring_board_node_in_flight", "gauge", "Requests in flight on the node.",
     BOARD_NODE_IN_FLIGHT},
    {"shmring_board_node_capacity", "gauge",
     "The node's capacity now: ceil(c x (in flight + 1) x weight / up weight); 0 "
     "without a factor or when down.",
     BOARD_NODE_CAPACITY},
    {"shmring_board_node_overflow_total", "counter",
     "Requests that found the node full and went on to another candidate.",
     BOARD_NODE_OVERFLOW},
};

static void print_board_samples(const struct board_family *family,
                                const struct metrics_sample *sample)
{
    const shmring_board_info_t *b = &sample->board;
    if (!b->present)
        return;
    if (family->quantity >= BOARD_NODE_IN_FLIGHT) {
        for (size_t i = 0; i < b->node_count; i++) {
            const shmring_board_node_t *n = &b->nodes[i];
            sample_start(family->name, sample);
            printf(",node=\"");
            print_label_value(n->name);
            printf("\"} %" PRIu64 "\n",
                   family->quantity == BOARD_NODE_IN_FLIGHT  ? n->in_flight
                   : family->quantity == BOARD_NODE_CAPACITY ? n->capacity
                                                             : n->overflow);
        }
        return;
    }
    sample_start(family->name, sample);
    switch (family->quantity) {
    case BOARD_BALANCE_FACTOR:
        printf("} %" PRIu32 ".%02" PRIu32 "\n", b->balance_percent / 100,
               b->balance_percent % 100);
        return;
    case BOARD_WORKERS:
        printf("} %" PRIu32 "\n", b->workers);
        return;
    case BOARD_ACQUIRES:
        printf("} %" PRIu64 "\n", b->acquires);
        return;
    case BOARD_FIRST_CANDIDATE:
        printf("} %" PRIu64 "\n", b->first_candidate);
        return;
    case BOARD_CANDIDATES_TRIED:
        printf("} %" PRIu64 "\n", b->candidates_tried);
        return;
    default:
        printf("} %" PRIu64 "\n", b->reclaimed);
        return;
    }
}

void output_metrics(const struct metrics_sample *samples, size_t count, size_t unreadable,
                    bool all)
{
    for (size_t f = 0; f < sizeof(ring_families) / sizeof(ring_families[0]); f++) {
        const struct ring_family *ring_family = &ring_families[f];
        family(ring_family->name, ring_family->type, ring_family->help);
        for (size_t i = 0; i < count; i++)
            print_ring_samples(ring_family, &samples[i]);
    }
    bool boards = false;
    for (size_t i = 0; i < count; i++)
        boards = boards || samples[i].board.present;
    for (size_t f = 0; boards && f < sizeof(board_families) / sizeof(board_families[0]);
         f++) {
        family(board_families[f].name, board_families[f].type, board_families[f].help);
        for (size_t i = 0; i < count; i++)
            print_board_samples(&board_families[f], &samples[i]);
    }
    if (all) {
        family("shmring_rings_unreadable", "gauge",
               "Rings in the ring directory that could not be read (named on standard "
               "error).");
        printf("shmring_rings_unreadable %zu\n", unreadable);
    }
}
