/*
 * Disruption: the share of the keyspace that moves when node-100 joins
 * DISRUPTION_NODES nodes, and when node-0 leaves them, next to the ideal share. The
 * shares are exact (shmring_snapshot_moved_share(): the lookup structures compared
 * arc by arc or slot by slot), so no keys are sampled.
 */
#include "ringbench.h"

struct disruption_result {
    double added;
    double removed;
};

static struct disruption_result results[OWN_ALGORITHMS];

static int disruption_of(shmring_algorithm_t algorithm, struct disruption_result *out)
{
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, DISRUPTION_NODES, &set) != 0)
        return -1;
    shmring_snapshot_t *before = NULL, *added = NULL, *removed = NULL;
    char name[32], address[48];
    node_name(DISRUPTION_NODES, name);
    node_address(DISRUPTION_NODES, address);
    int status = -1;
    if (snapshot_make(set, &before) != 0)
        goto out;
    int err = shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL);
    if (err == 0 && snapshot_make(set, &added) != 0)
        goto out;
    if (err == 0)
        err = shmring_nodeset_remove(set, name);
    if (err == 0)
        err = shmring_nodeset_remove(set, "node-0");
    if (err != 0) {
        fail("cannot change the node set: %s", shmring_strerror(err));
        goto out;
    }
    if (snapshot_make(set, &removed) != 0)
        goto out;
    err = shmring_snapshot_moved_share(before, added, &out->added);
    if (err == 0)
        err = shmring_snapshot_moved_share(before, removed, &out->removed);
    if (err != 0) {
        fail("cannot compare snapshots: %s", shmring_strerror(err));
        goto out;
    }
    status = 0;
out:
    shmring_snapshot_free(before);
    shmring_snapshot_free(added);
    shmring_snapshot_free(removed);
    shmring_nodeset_free(set);
    return status;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cfg;
    (void)cold;
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        if (disruption_of(algorithms[a], &results[a]) != 0)
            return -1;
    }
    return 0;
}

static const double ideal_add = 1.0 / (DISRUPTION_NODES + 1);
static const double ideal_remove = 1.0 / DISRUPTION_NODES;

static void print(const struct config *cfg)
{
    (void)cfg;
    printf("\n6. Disruption: share of the keyspace that moves when node-100 joins 100 "
           "nodes or node-0 leaves them (exact)\n");
    printf("%-10s%12s%10s%10s%14s%10s%10s\n", "algorithm", "add: moved", "ideal", "ratio",
           "remove: moved", "ideal", "ratio");
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        const struct disruption_result *d = &results[a];
        printf("%-10s%11.3f%%%9.3f%%%9.2fx%13.3f%%%9.3f%%%9.2fx\n",
               shmring_algorithm_name(algorithms[a]), 100.0 * d->added, 100.0 * ideal_add,
               d->added / ideal_add, 100.0 * d->removed, 100.0 * ideal_remove,
               d->removed / ideal_remove);
    }
}

static void derive(const struct config *cfg, struct figures *out)
{
    (void)cfg;
    for (int a = 0; a < OWN_ALGORITHMS; a++)
        figure_add(out, FIGURE_VALUE, DISRUPTION_NODES, results[a].added / ideal_add, 0.0,
                   "%s: add 1 node to %d, moved / ideal",
                   shmring_algorithm_name(algorithms[a]), DISRUPTION_NODES);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *disruption = json_array();
    for (int a = 0; a < OWN_ALGORITHMS; a++)
        json_array_append_new(
            disruption,
            json_pack("{sssisosososo}", "algorithm",
                      shmring_algorithm_name(algorithms[a]), "nodes", DISRUPTION_NODES,
                      "add_moved", json_real(results[a].added), "add_ideal",
                      json_real(ideal_add), "remove_moved", json_real(results[a].removed),
                      "remove_ideal", json_real(ideal_remove)));
    json_object_set_new(root, "disruption", disruption);
}

BENCHMARK(disruption, .derive = derive);
