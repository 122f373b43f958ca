/*
 * Balance: the largest keyspace share of a node over the mean share, for each
 * algorithm and node count, from shmring_snapshot_shares() (exact, not sampled).
 */
#include <math.h>
#include <stdlib.h>

#include "ringbench.h"

static double balance[OWN_ALGORITHMS][NODE_COUNTS_MAX];

/* Largest keyspace share over the mean share (1 / up nodes) of a snapshot. */
static double balance_of(const shmring_snapshot_t *snapshot)
{
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    double *shares = malloc(info.node_count * sizeof(*shares));
    if (shares == NULL ||
        shmring_snapshot_shares(snapshot, shares, info.node_count) != 0) {
        free(shares);
        return NAN;
    }
    double largest = 0.0;
    for (uint32_t i = 0; i < info.node_count; i++)
        largest = shares[i] > largest ? shares[i] : largest;
    free(shares);
    return largest * (double)info.up_count;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cold;
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->node_count_n; n++) {
            shmring_nodeset_t *set;
            if (nodeset_make(algorithms[a], cfg->node_counts[n], &set) != 0)
                return -1;
            shmring_snapshot_t *snapshot;
            int err = snapshot_make(set, &snapshot);
            shmring_nodeset_free(set);
            if (err != 0)
                return -1;
            balance[a][n] = balance_of(snapshot);
            shmring_snapshot_free(snapshot);
        }
    }
    return 0;
}

static void print(const struct config *cfg)
{
    printf("\n5. Balance: largest / mean keyspace share (shmring_snapshot_shares)\n");
    print_nodes_row(cfg->node_counts, cfg->node_count_n);
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        printf("%-20s", shmring_algorithm_name(algorithms[a]));
        for (size_t n = 0; n < cfg->node_count_n; n++)
            printf("%10.3f", balance[a][n]);
        printf("\n");
    }
}

static void json(const struct config *cfg, json_t *root)
{
    json_t *array = json_array();
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->node_count_n; n++)
            json_array_append_new(array,
                                  json_pack("{sssIso}", "algorithm",
                                            shmring_algorithm_name(algorithms[a]),
                                            "nodes", (json_int_t)cfg->node_counts[n],
                                            "max_over_mean", json_number(balance[a][n])));
    }
    json_object_set_new(root, "balance", array);
}

BENCHMARK(balance, .early = false);
