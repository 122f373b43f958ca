/*
 * ringbench's internal declarations: the configuration the runner fills, the key sets,
 * the scratch rings, the contenders of the lookup measurements, the peers, and the
 * figures and targets the report judges. Never installed.
 */
#ifndef RINGBENCH_H
#define RINGBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "shmring.h"
#include "shmring_ctl.h"

enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1,
    EXIT_USAGE = 2,
};

#define SEED UINT64_C(0x5eed0005)
#define KEY_MIN 8
#define KEY_MAX 64
#define HOT_KEYS 1024
/* 4M keys of 36 bytes on average: about 150 MiB, far beyond any last-level cache. */
#define COLD_KEYS (4u << 20)
#define QUICK_COLD_KEYS (1u << 20)
#define NODE_COUNTS_MAX 16
#define REPS_MAX 5
/* libmemcached's ketama is compared up to this many servers. */
#define LIBMEMCACHED_SERVERS_MAX 100
#define DISRUPTION_NODES 100

/* ---- Configuration (main.c) ----------------------------------------------- */

struct config {
    bool quick;
    bool json;
    /* The benchmarks to run (--only), comma-separated names; NULL: all of them. */
    const char *only;
    size_t node_counts[NODE_COUNTS_MAX];
    size_t node_count_n;
    size_t publish_counts[NODE_COUNTS_MAX];
    size_t publish_count_n;
    size_t ringctl_counts[NODE_COUNTS_MAX];
    size_t ringctl_count_n;
    size_t cold_keys;
    /* Lookup cost: runs per figure (the median is kept), seconds per run. */
    int reps;
    double run_seconds;
    double warmup_seconds;
    /* Publish time: timed publications (the median is kept) of sets of up to
     * PUBLISH_REPEAT_MAX nodes; larger sets are timed once. */
    int publish_reps;
    /* Worker scaling: windows per worker count (the median is kept), seconds each. */
    int window_reps;
    double window_seconds;
    long cpus;
};

/* ---- Small helpers (util.c) ----------------------------------------------- */

/* What every measured loop adds its answers to, so that no loop is optimized away. */
extern volatile uint64_t sink;

void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
double now_seconds(void);
/* The 1-minute load average: other work on the machine skews every figure. */
double load_average(void);
/* Sorts VALUES in place and returns their median. */
double median(double *values, int count);
/* Writes COUNT with thousands separators ("100,000"). */
const char *group_digits(size_t count, char buffer[32]);
/* Node i is "node-i" at 10.a.b.c:11211 in every node set, peer and file. */
void node_name(size_t index, char name[32]);
void node_host(size_t index, char host[32]);
void node_address(size_t index, char address[48]);
/* The heading row of a table with a column per node count. */
void print_nodes_row(const size_t *counts, size_t count);
/* A JSON number, or null for NAN and infinities. */
json_t *json_number(double value);

/* ---- Keys (keys.c) ---------------------------------------------------------- */

/* Keys back to back in one buffer; key i is bytes[offset[i] .. + length[i]). */
struct keyset {
    uint8_t *bytes;
    uint32_t *offset;
    uint8_t *length;
    size_t count;
    size_t total_bytes;
};

static inline const uint8_t *key_at(const struct keyset *keys, size_t i)
{
    return keys->bytes + keys->offset[i];
}

/*
 * COUNT keys of KEY_MIN-KEY_MAX random bytes from SEED. With DISTINCT, each key starts
 * with a different 8-byte word, so no two keys are equal.
 */
int keyset_make(size_t count, uint64_t seed, bool distinct, struct keyset *out);
void keyset_free(struct keyset *keys);
/* The first COUNT keys of ALL, as a key set of their own (sharing ALL's memory). */
struct keyset keyset_prefix(const struct keyset *all, size_t count);
double keyset_mib(const struct keyset *keys);

/* ---- Scratch rings and files of this run (scratch.c) ------------------------ */

/* Every algorithm's lookups are measured; the placement benchmarks (balance,
 * disruption, publish) measure shmring's own three, which come first. */
enum algorithm_index {
    ALG_RING,
    ALG_MAGLEV,
    ALG_KETAMA,
    OWN_ALGORITHMS,
    ALG_TWEMPROXY = OWN_ALGORITHMS,
    ALG_NGINX,
    ALG_LIBKETAMA,
    ALG_ENVOY_MAGLEV,
    ALG_ENVOY_RING,
    ALGORITHMS,
};

extern const shmring_algorithm_t algorithms[ALGORITHMS];

/* The lookup rings come first, one per algorithm: RING_LOOKUP_RING + index. */
enum ring_kind {
    RING_LOOKUP_RING,
    RING_WORKERS = RING_LOOKUP_RING + ALGORITHMS,
    RING_PUBLISH,
    RING_SWITCH,
    RING_RINGCTL,
    RING_SYNC_A,
    RING_SYNC_B,
    RING_SYNC_C,
    RING_SYNC_BIG,
    RING_BOUNDED,
    RING_KINDS,
};

/* Starts the thread that removes the run's rings and files on SIGINT, SIGTERM or
 * SIGHUP. */
int scratch_start(void);
const char *scratch_ring(enum ring_kind kind);
/*
 * Held while the caller holds a writer, runs ringctl or owns a scratch file, and by
 * the signal thread while it cleans up: shmring_ring_destroy() waits for the ring's
 * writer lock, so cleaning up in the middle of the run's own publication would wait
 * forever.
 */
void scratch_lock(void);
void scratch_unlock(void);
/* Creates the scratch file, open for writing; the caller holds the lock. */
FILE *scratch_file_create(const char **path);
/* Removes every ring of this run and the scratch file; the caller holds the lock. */
void scratch_cleanup_locked(void);
void scratch_cleanup(void);
/* Removes one ring of this run once its measurement is done, to give back its memory. */
void scratch_ring_remove(enum ring_kind kind);
/* In a forked child: the signal mask of the process before ringbench changed it. */
void child_signals_restore(void);

int nodeset_make(shmring_algorithm_t algorithm, size_t nodes, shmring_nodeset_t **out);
/* Builds SET's snapshot into *out (shmring_snapshot_free()); says why it could not. */
int snapshot_make(const shmring_nodeset_t *set, shmring_snapshot_t **out);
/* Publishes a new node set of NODES nodes as the next generation of RING, creating
 * the ring if needed. */
int ring_publish_new(const char *ring, shmring_algorithm_t algorithm, size_t nodes);

/* ---- Contenders of the lookup measurements (contenders.c) ------------------- */

/*
 * How each algorithm is called: through the reader library or on an in-process copy
 * of the same snapshot, asking for the whole node (strings copied), its id only, or
 * the ids of BATCH_KEYS keys per call; and, one key per call, through a serialized
 * reader handle (SHMRING_OPEN_SERIALIZED, what a single-threaded worker opens).
 */
enum lookup_kind {
    K_READER,
    K_READER_ID,
    K_READER_BATCH,
    K_LOCAL,
    K_LOCAL_ID,
    K_LOCAL_BATCH,
    K_SERIAL,
    K_SERIAL_ID,
    KINDS,
};

#define BATCH_KEYS 16

/* Everything a lookup measurement may time, in the order the tables print them. */
enum contender_id {
    C_XXH3_FLOOR,
    C_MD5_FLOOR,
    C_XXH64_FLOOR,
    C_CRC32_FLOOR,
    C_FNV1A_64_FLOOR,
    C_ALGORITHM_FIRST,
    C_TEXTBOOK = C_ALGORITHM_FIRST + ALGORITHMS * KINDS,
    C_LIBMEMCACHED,
    C_CHASE_FLOOR,
    CONTENDERS,
};

extern const char *contender_names[CONTENDERS];
/* The names of the JSON output. */
extern const char *contender_keys[CONTENDERS];
/* Fills both from the algorithms' names; main calls it first. */
void contender_names_init(void);

/* The width of a table's first column, which names its rows. */
#define ROW_LABEL_WIDTH 28

enum contender_id contender_of(int alg, enum lookup_kind kind);
/* The key-hash floor of an algorithm: the key hash its lookups compute (ketama and
 * libketama MD5, nginx CRC-32, twemproxy FNV-1a 64, Envoy's xxHash64, the others
 * xxh3). */
enum contender_id floor_of(int alg);

/* Looks keys [first, first + count) up and returns a sum of the answers. */
typedef uint64_t (*batch_fn)(const void *context, const struct keyset *keys, size_t first,
                             size_t count);

struct contender {
    batch_fn run; /* NULL: not measured */
    const void *context;
};

/* The textbook ring (peer-textbook.c). */
struct textbook {
    uint64_t *points;
    uint32_t *owners;
    size_t count;
};

/*
 * The one-miss floor: a pointer chase through a buffer the size of the ring's
 * snapshot, one 64-byte line per step in a random cycle, so that each read depends on
 * the one before and lands anywhere: what one cache (and TLB) miss per lookup costs.
 */
struct chase {
    uint32_t *lines; /* 16 words a line; word 0 of line i is the next line */
    size_t line_count;
    uint32_t at;
};

int chase_build(size_t bytes, struct chase *c);
void chase_free(struct chase *c);

/* Everything the contenders of one node count look keys up in. */
struct lookup_subjects {
    shmring_t *readers[ALGORITHMS];
    /* The same rings opened with SHMRING_OPEN_SERIALIZED. */
    shmring_t *serialized[ALGORITHMS];
    shmring_snapshot_t *copies[ALGORITHMS];
    struct textbook textbook;
    struct memcached_st *libmemcached;
    /* With peers, over the ring snapshot's size. */
    struct chase chase;
};

/*
 * Publishes each algorithm's ring of NODES nodes, opens it through the reader library
 * and copies its snapshot into this process; with PEERS, also builds the textbook ring
 * and libmemcached's continuum over the same nodes.
 */
int lookup_subjects_open(size_t nodes, bool peers, struct lookup_subjects *s);
void lookup_subjects_close(struct lookup_subjects *s);
/* Fills CONTENDERS with every loop that can run on S (unbuilt peers stay NULL). */
void lookup_contenders(const struct lookup_subjects *s,
                       struct contender contenders[CONTENDERS]);
/*
 * Times every contender on the same keys, from *CURSOR on: a warm-up run each, then
 * cfg->reps rounds in which each contender runs once, so that a slow phase of the
 * machine falls on all of them alike. NS gets each contender's median (NAN if it has
 * no loop).
 */
void contest(const struct config *cfg, const struct contender *contenders,
             const struct keyset *keys, size_t *cursor, double ns[CONTENDERS]);
/* The id lookups of a worker process, through the reader. */
uint64_t run_reader_id(const void *context, const struct keyset *keys, size_t first,
                       size_t count);
/* Prints one row of a lookup-cost table: NS[C] for each node count, "-" for NAN. */
void print_cost_row(const char *name, const double *ns, size_t stride, size_t count);

/* ---- Peers ------------------------------------------------------------------- */

int textbook_build(size_t nodes, struct textbook *t);
void textbook_free(struct textbook *t);
uint32_t textbook_owner(const struct textbook *t, uint64_t hash);
uint64_t run_textbook(const void *context, const struct keyset *keys, size_t first,
                      size_t count);

/* peer-libmemcached.c: false where ringbench was built without libmemcached. */
extern const bool libmemcached_built_in;
/* Weighted ketama over SERVERS servers; *OUT stays NULL where it is not built in. */
int libmemcached_open(size_t servers, struct memcached_st **out);
void libmemcached_close(struct memcached_st *mc);
uint32_t libmemcached_owner(const struct memcached_st *mc, const uint8_t *key,
                            size_t len);
uint64_t run_libmemcached(const void *context, const struct keyset *keys, size_t first,
                          size_t count);

/* ---- Figures and targets (report.c) ------------------------------------------ */

enum figure_kind {
    /* THEM / US in time: "7.90x faster" (or "1.30x slower"). */
    FIGURE_SPEEDUP,
    /* US / THEM in time: "2.10x". */
    FIGURE_RATIO,
    /* N workers' lookups per second over 1 worker's. */
    FIGURE_THROUGHPUT,
    /* A figure only targets read (seconds, a share): not listed as a comparison. */
    FIGURE_VALUE,
};

enum temperature {
    HOT,
    COLD,
    TEMPERATURES,
};

extern const char *const temperature_names[TEMPERATURES];

/* A named figure derived from the measurements; targets name the figure they judge. */
struct figure {
    char name[96];
    enum figure_kind kind;
    size_t nodes;
    /* Hot and cold keys for SPEEDUP and RATIO; value[HOT] alone otherwise. */
    double value[TEMPERATURES];
};

/* Lookup derives about 100 figures a node count (8 algorithms, their floors, reader
 * kinds and peers); the rest add a few each. figure_add() stops the run rather than
 * drop one, which would turn a target into a silent SKIP. */
#define FIGURES_MAX (NODE_COUNTS_MAX * 160)

struct figures {
    struct figure items[FIGURES_MAX];
    size_t count;
};

void figure_add(struct figures *all, enum figure_kind kind, size_t nodes, double hot,
                double cold, const char *format, ...)
    __attribute__((format(printf, 6, 7)));

enum bound {
    AT_LEAST,
    AT_MOST,
};

/* A target, one line of targets.tsv: the figure it judges (hot keys for lookups), and
 * the bound it must meet. */
struct target_row {
    const char *benchmark;
    const char *figure;
    enum bound bound;
    double limit;
    const char *text;
    /* Its line in targets.tsv, for messages. */
    int line;
};

#define TARGETS_MAX 64

/* The targets of targets.tsv, which the build embeds in ringbench. */
struct targets {
    struct target_row rows[TARGETS_MAX];
    size_t count;
    /* A copy of the file, cut into the rows' strings. */
    char *text;
};

enum verdict {
    PASS,
    MISS,
    SKIP,
};

struct verdicts {
    struct {
        const struct target_row *row;
        double value;
        enum verdict verdict;
    } items[TARGETS_MAX];
    size_t count;
};

/* Parses the embedded targets.tsv into *OUT. Returns 0, or -1 after a message naming
 * the malformed line (a wrong field count or bound, a limit that is not a number, more
 * rows than fit, or a benchmark IS_BENCHMARK does not know). */
int targets_parse(struct targets *out, bool (*is_benchmark)(const char *name));
/* Frees what targets_parse() allocated. */
void targets_free(struct targets *targets);
/* Judges every target on the figures ALL holds; a figure ALL lacks is SKIP. */
void targets_judge(const struct targets *targets, const struct figures *all,
                   struct verdicts *out);
void print_comparisons(const struct figures *all);
void print_targets(const struct verdicts *all);
json_t *json_comparisons(const struct figures *all);
json_t *json_targets(const struct verdicts *all);

/* ---- Libraries timed in their own runtime (library_runs.c) -------------------- */

/* The node counts those benchmarks measure, and the passes whose best they keep. */
enum { LIBRARY_NODE_SETS = 3, LIBRARY_PASSES = 5 };
extern const size_t library_node_counts[LIBRARY_NODE_SETS];
#define KEYS_PATH_SIZE 64

/* The best of LIBRARY_PASSES passes of id lookups of the first COUNT keys on SNAPSHOT,
 * in ns per lookup; NAN if a lookup fails. */
double snapshot_id_lookup_ns(const shmring_snapshot_t *snapshot,
                             const struct keyset *keys, size_t count);
/* Writes the first COUNT keys, one a line in hexadecimal, to a new file whose name it
 * puts in PATH (the caller unlinks it). */
int keys_file_write(const struct keyset *keys, size_t count, char path[KEYS_PATH_SIZE]);
/* Runs COMMAND and reads its "NODES NS" lines into OUT, at the index of each node
 * count; 0, or -1 if it could not run or did not exit 0. */
int library_costs_read(const char *command, double out[LIBRARY_NODE_SETS]);
/* A table's heading row: "nodes" and each node count. */
void library_heading_print(int label_width);
/* A table row: LABEL, then each node count's figure, with its ratio to BASELINE's
 * when BASELINE is not NULL ("-" for a figure not measured). */
void library_row_print(int label_width, const char *label, const double *values,
                       const double *baseline);

/* ---- Benchmarks (benchmark-*.c, listed in benchmark-list.h) ------------------- */

struct benchmark {
    /* Its name, for --only: the ID of BENCHMARK(ID). */
    const char *name;
    /* Runs before the key sets are allocated (see benchmark-ringctl.c). */
    bool early;
    /* Measures; COLD is NULL for an early benchmark. Returns 0 or -1 (reported). */
    int (*run)(const struct config *cfg, const struct keyset *cold);
    /* Prints the benchmark's table(s). */
    void (*print)(const struct config *cfg);
    /* Adds the figures that comparisons and targets read; may be NULL. */
    void (*derive)(const struct config *cfg, struct figures *out);
    /* Adds the benchmark's members to the JSON output. */
    void (*json)(const struct config *cfg, json_t *root);
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Defines benchmark_NAME (declared in benchmark-list.h) from its file's static run,
 * print and json functions and the other members given: ".early = true",
 * ".derive = derive". Its targets are lines of targets.tsv.
 */
#define BENCHMARK(id, ...)                                                               \
    const struct benchmark benchmark_##id = {                                            \
        .name = #id, .run = run, .print = print, .json = json, __VA_ARGS__}

#endif
