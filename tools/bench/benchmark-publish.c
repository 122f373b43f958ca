/*
 * Publish time: shmring_writer_publish() of a prepared node set, for each algorithm
 * and node count: building the snapshot, writing the version object, swapping the
 * generation and unlinking the superseded version.
 */
#include <math.h>

#include "ringbench.h"

/* Publications at most this large are timed several times, larger ones once. */
#define PUBLISH_REPEAT_MAX 10000

struct publish_result {
    bool measured;
    double seconds;
    uint64_t bytes;
    uint32_t points;
};

static struct publish_result results[OWN_ALGORITHMS][NODE_COUNTS_MAX];

/* A first, untimed publication makes every timed one replace a version of the same
 * size, as a live update does. */
static int publish_time(const struct config *cfg, const char *ring,
                        shmring_algorithm_t algorithm, size_t nodes,
                        struct publish_result *out)
{
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, nodes, &set) != 0)
        return -1;
    int reps = nodes <= PUBLISH_REPEAT_MAX ? cfg->publish_reps : 1;
    double seconds[REPS_MAX];
    scratch_lock();
    shmring_writer_t *writer = NULL;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer);
    if (err == 0)
        err = shmring_writer_publish(writer, set, NULL);
    for (int rep = 0; rep < reps && err == 0; rep++) {
        double start = now_seconds();
        err = shmring_writer_publish(writer, set, NULL);
        seconds[rep] = now_seconds() - start;
    }
    const shmring_snapshot_t *snapshot;
    if (err == 0)
        err = shmring_writer_snapshot(writer, &snapshot);
    if (err == 0) {
        shmring_snapshot_info_t info;
        shmring_snapshot_info(snapshot, &info);
        out->points = info.point_count;
        out->bytes = info.size;
        out->seconds = median(seconds, reps);
        out->measured = true;
    }
    shmring_writer_close(writer);
    int destroyed = shmring_ring_destroy(ring, NULL);
    (void)destroyed;
    scratch_unlock();
    shmring_nodeset_free(set);
    if (err != 0) {
        fail("cannot publish %zu %s nodes: %s", nodes, shmring_algorithm_name(algorithm),
             shmring_strerror(err));
        return -1;
    }
    return 0;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cold;
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->publish_count_n; n++) {
            if (publish_time(cfg, scratch_ring(RING_PUBLISH), algorithms[a],
                             cfg->publish_counts[n], &results[a][n]) != 0)
                return -1;
        }
    }
    return 0;
}

static void print(const struct config *cfg)
{
    printf("\n3. Publish time: shmring_writer_publish of a prepared node set replacing "
           "a version of the same size (build + write + swap; median of %d up to "
           "10,000 nodes, else 1 run)\n",
           cfg->publish_reps);
    printf("%-10s%10s%14s%14s%12s\n", "algorithm", "nodes", "points/slots",
           "snapshot MiB", "seconds");
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->publish_count_n; n++) {
            const struct publish_result *p = &results[a][n];
            char nodes[32], points[32];
            printf("%-10s%10s%14s%14.1f%12.4f\n", shmring_algorithm_name(algorithms[a]),
                   group_digits(cfg->publish_counts[n], nodes),
                   group_digits(p->points, points), (double)p->bytes / 1048576.0,
                   p->seconds);
        }
    }
}

static void derive(const struct config *cfg, struct figures *out)
{
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->publish_count_n; n++) {
            if (results[a][n].measured)
                figure_add(out, FIGURE_VALUE, cfg->publish_counts[n],
                           results[a][n].seconds, 0.0, "publish %s@%zu, seconds",
                           shmring_algorithm_name(algorithms[a]), cfg->publish_counts[n]);
        }
    }
}

static void json(const struct config *cfg, json_t *root)
{
    json_t *publish = json_array();
    for (int a = 0; a < OWN_ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->publish_count_n; n++) {
            const struct publish_result *p = &results[a][n];
            json_array_append_new(
                publish, json_pack("{sssIsosIsI}", "algorithm",
                                   shmring_algorithm_name(algorithms[a]), "nodes",
                                   (json_int_t)cfg->publish_counts[n], "seconds",
                                   json_real(p->seconds), "points", (json_int_t)p->points,
                                   "snapshot_bytes", (json_int_t)p->bytes));
        }
    }
    json_object_set_new(root, "publish", publish);
}

BENCHMARK(publish, .derive = derive);
