/*
 * Lookup cost on the case real traffic looks like: a stream of STREAM_KEYS distinct
 * keys, each looked up once per pass in the order they were drawn (random), against
 * rings of 100 nodes (in the cache) and 10,000 (a ring's 41 MiB are not). Unlike the hot
 * keys of benchmark-lookup.c, which repeat 1,024 keys and let the branch predictor learn
 * their paths through a binary search, no key here comes back before a million others
 * have passed.
 */
#include "ringbench.h"

#define STREAM_KEYS 1000000
/* Its own seed, so that these keys share nothing with the hot and cold ones. */
#define STREAM_SEED UINT64_C(0x57ea4005)

static const size_t stream_node_counts[] = {100, 10000};
static const size_t quick_stream_node_counts[] = {100};

/* The rows of the table: the key hashes' floors, then the id calls one key at a time and
 * batched, and one key at a time through a serialized handle. */
static const enum lookup_kind stream_kinds[] = {K_READER_ID, K_READER_BATCH, K_LOCAL_ID,
                                                K_LOCAL_BATCH, K_SERIAL_ID};

static double cost[ARRAY_SIZE(stream_node_counts)][CONTENDERS];
static size_t node_count_n;
static struct {
    size_t count;
    double mib;
} stream;

static const size_t *node_counts(const struct config *cfg)
{
    return cfg->quick ? quick_stream_node_counts : stream_node_counts;
}

static bool measured(enum contender_id c)
{
    for (int a = 0; a < ALGORITHMS; a++) {
        /* Each algorithm's key hash alone, on the same stream. */
        if (c == floor_of(a))
            return true;
        for (size_t k = 0; k < ARRAY_SIZE(stream_kinds); k++) {
            if (c == contender_of(a, stream_kinds[k]))
                return true;
        }
    }
    return false;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cold;
    struct keyset keys;
    if (keyset_make(STREAM_KEYS, STREAM_SEED, true, &keys) != 0)
        return -1;
    stream.count = keys.count;
    stream.mib = keyset_mib(&keys);
    node_count_n = cfg->quick ? ARRAY_SIZE(quick_stream_node_counts)
                              : ARRAY_SIZE(stream_node_counts);
    size_t cursor = 0;
    int status = 0;
    for (size_t n = 0; n < node_count_n && status == 0; n++) {
        struct lookup_subjects subjects;
        status = lookup_subjects_open(node_counts(cfg)[n], false, &subjects);
        if (status != 0)
            break;
        struct contender contenders[CONTENDERS];
        lookup_contenders(&subjects, contenders);
        for (int c = 0; c < CONTENDERS; c++) {
            if (!measured((enum contender_id)c))
                contenders[c].run = NULL;
        }
        contest(cfg, contenders, &keys, &cursor, cost[n]);
        lookup_subjects_close(&subjects);
    }
    for (int a = 0; a < ALGORITHMS; a++)
        scratch_ring_remove((enum ring_kind)(RING_LOOKUP_RING + a));
    keyset_free(&keys);
    return status;
}

static void print(const struct config *cfg)
{
    char count[32];
    printf("\n1c. Lookup cost, ns per lookup, streamed keys as in real traffic (%s "
           "distinct keys, %.1f MiB, in random order, none repeated within a pass: "
           "unlike 1a's 1,024 hot keys, the branch predictor cannot learn them)\n",
           group_digits(stream.count, count), stream.mib);
    print_nodes_row(node_counts(cfg), node_count_n);
    for (int c = 0; c < CONTENDERS; c++) {
        if (measured((enum contender_id)c))
            print_cost_row(contender_names[c], &cost[0][c], CONTENDERS, node_count_n);
    }
}

static void json(const struct config *cfg, json_t *root)
{
    json_t *array = json_array();
    for (size_t n = 0; n < node_count_n; n++) {
        json_t *costs = json_object();
        for (int c = 0; c < CONTENDERS; c++) {
            if (measured((enum contender_id)c))
                json_object_set_new(costs, contender_keys[c], json_number(cost[n][c]));
        }
        json_array_append_new(
            array,
            json_pack("{sIso}", "nodes", (json_int_t)node_counts(cfg)[n], "ns", costs));
    }
    json_object_set_new(root, "lookup_stream",
                        json_pack("{sIsIso}", "keys", (json_int_t)stream.count, "seed",
                                  (json_int_t)STREAM_SEED, "lookup_ns", array));
}

/* Ring over maglev on the stream, one key a call and batched (issue 15: a ring as
 * fast as maglev on real traffic). */
static void derive(const struct config *cfg, struct figures *out)
{
    static const enum lookup_kind kinds[] = {K_READER_ID, K_READER_BATCH};
    static const char *const labels[] = {"id", "batch"};
    for (size_t n = 0; n < node_count_n; n++) {
        size_t nodes = node_counts(cfg)[n];
        for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
            double ring = cost[n][contender_of(ALG_RING, kinds[k])];
            double maglev = cost[n][contender_of(ALG_MAGLEV, kinds[k])];
            figure_add(out, FIGURE_VALUE, nodes, ring / maglev, 0.0,
                       "stream ring@%zu (%s) over maglev@%zu", nodes, labels[k], nodes);
        }
    }
}

BENCHMARK(stream, .derive = derive);
