/*
 * Balance against points per node: the question the classic consistent-hashing
 * tutorials ask ("how many virtual nodes do I need?"), answered for every algorithm
 * that places points or fills a table, at VNODES_NODES nodes of weight 1.
 *
 * The algorithms whose point count a parameter sets (ring and groupcache: vnodes;
 * maglev and envoy-maglev: the table size; envoy-ring: the minimum ring size) are
 * measured at each count of POINTS_PER_NODE. The peers' rings have a fixed count (160
 * points a server for ketama, nginx, twemproxy, libketama and dalli; haproxy's own):
 * one figure each, at the count the snapshot reports. Both figures are exact, from
 * shmring_snapshot_shares():
 * the largest share over the mean share, and the coefficient of variation of the
 * shares (their standard deviation over their mean), which the tutorials plot.
 */
#include <math.h>
#include <stdlib.h>

#include "ringbench.h"

#define VNODES_NODES 100
#define VNODES_ROWS 64

enum vnodes_knob {
    KNOB_FIXED,
    KNOB_VNODES,
    KNOB_TABLE_SIZE,
    KNOB_MIN_RING_SIZE,
};

static const struct {
    shmring_algorithm_t algorithm;
    enum vnodes_knob knob;
} measured[] = {
    {SHMRING_ALGORITHM_RING, KNOB_VNODES},
    {SHMRING_ALGORITHM_MAGLEV, KNOB_TABLE_SIZE},
    {SHMRING_ALGORITHM_ENVOY_RING, KNOB_MIN_RING_SIZE},
    {SHMRING_ALGORITHM_ENVOY_MAGLEV, KNOB_TABLE_SIZE},
    {SHMRING_ALGORITHM_KETAMA, KNOB_FIXED},
    {SHMRING_ALGORITHM_NGINX, KNOB_FIXED},
    {SHMRING_ALGORITHM_TWEMPROXY, KNOB_FIXED},
    {SHMRING_ALGORITHM_LIBKETAMA, KNOB_FIXED},
    {SHMRING_ALGORITHM_HAPROXY, KNOB_FIXED},
    {SHMRING_ALGORITHM_GROUPCACHE, KNOB_VNODES},
    {SHMRING_ALGORITHM_DALLI, KNOB_FIXED},
};

#define MEASURED (sizeof(measured) / sizeof(measured[0]))

static const uint32_t points_per_node[] = {1, 2, 5, 10, 20, 50, 100, 160, 200, 500, 1000};
static const uint32_t quick_points_per_node[] = {1, 10, 100, 160, 1000};

struct vnodes_row {
    shmring_algorithm_t algorithm;
    /* The points (or table slots) per node the snapshot holds. */
    double points_per_node;
    double max_over_mean;
    double cv;
};

static struct vnodes_row rows[VNODES_ROWS];
static size_t row_count;

static uint32_t prime_at_least(uint32_t n)
{
    for (;; n++) {
        bool prime = n >= 2;
        for (uint32_t d = 2; prime && (uint64_t)d * d <= n; d++)
            prime = n % d != 0;
        if (prime)
            return n;
    }
}

/* Sets the parameter KNOB of PARAMS to give about POINTS points per node. */
static void knob_set(enum vnodes_knob knob, uint32_t points, shmring_params_t *params)
{
    uint32_t total = points * VNODES_NODES;
    switch (knob) {
    case KNOB_VNODES:
        params->vnodes = points;
        break;
    case KNOB_TABLE_SIZE:
        params->table_size = prime_at_least(total);
        break;
    case KNOB_MIN_RING_SIZE:
        params->min_ring_size = total;
        break;
    case KNOB_FIXED:
        break;
    }
}

static int measure(shmring_algorithm_t algorithm, enum vnodes_knob knob, uint32_t points)
{
    if (row_count == VNODES_ROWS) {
        fail("vnodes: more than %d rows", VNODES_ROWS);
        return -1;
    }
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, VNODES_NODES, &set) != 0)
        return -1;
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    knob_set(knob, points, &params);
    int err = shmring_nodeset_set_params(set, &params);
    if (err != 0) {
        fail("vnodes: %s with %u points per node: %s", shmring_algorithm_name(algorithm),
             points, shmring_strerror(err));
        shmring_nodeset_free(set);
        return -1;
    }
    shmring_snapshot_t *snapshot;
    err = snapshot_make(set, &snapshot);
    shmring_nodeset_free(set);
    if (err != 0)
        return -1;
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    double shares[VNODES_NODES];
    err = shmring_snapshot_shares(snapshot, shares, VNODES_NODES);
    shmring_snapshot_free(snapshot);
    if (err != 0) {
        fail("vnodes: the shares of %s: %s", shmring_algorithm_name(algorithm),
             shmring_strerror(err));
        return -1;
    }
    double largest = 0.0, sum = 0.0, squares = 0.0;
    for (size_t i = 0; i < VNODES_NODES; i++) {
        largest = shares[i] > largest ? shares[i] : largest;
        sum += shares[i];
    }
    double mean = sum / VNODES_NODES;
    for (size_t i = 0; i < VNODES_NODES; i++)
        squares += (shares[i] - mean) * (shares[i] - mean);
    rows[row_count++] = (struct vnodes_row){
        .algorithm = algorithm,
        .points_per_node = (double)info.point_count / info.up_count,
        .max_over_mean = largest / mean,
        .cv = sqrt(squares / VNODES_NODES) / mean,
    };
    return 0;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cold;
    const uint32_t *counts = cfg->quick ? quick_points_per_node : points_per_node;
    size_t count_n = cfg->quick ? sizeof(quick_points_per_node) / sizeof(uint32_t)
                                : sizeof(points_per_node) / sizeof(uint32_t);
    row_count = 0;
    for (size_t a = 0; a < MEASURED; a++) {
        size_t n = measured[a].knob == KNOB_FIXED ? 1 : count_n;
        for (size_t i = 0; i < n; i++) {
            if (measure(measured[a].algorithm, measured[a].knob, counts[i]) != 0)
                return -1;
        }
    }
    return 0;
}

static void print(const struct config *cfg)
{
    (void)cfg;
    printf("\n5b. Balance against points per node, %d nodes of weight 1: largest / mean "
           "share, and the\n    shares' standard deviation / mean "
           "(shmring_snapshot_shares, exact)\n",
           VNODES_NODES);
    printf("%-20s%16s%16s%10s\n", "algorithm", "points per node", "largest / mean",
           "sd / mean");
    for (size_t r = 0; r < row_count; r++)
        printf("%-20s%16.1f%16.3f%10.3f\n", shmring_algorithm_name(rows[r].algorithm),
               rows[r].points_per_node, rows[r].max_over_mean, rows[r].cv);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *array = json_array();
    for (size_t r = 0; r < row_count; r++)
        json_array_append_new(
            array, json_pack("{sssIsoso}", "algorithm",
                             shmring_algorithm_name(rows[r].algorithm), "nodes",
                             (json_int_t)VNODES_NODES, "points_per_node",
                             json_number(rows[r].points_per_node), "max_over_mean",
                             json_number(rows[r].max_over_mean), "sd_over_mean",
                             json_number(rows[r].cv)));
    json_object_set_new(root, "balance_vnodes", array);
}

BENCHMARK(vnodes, .early = false);
