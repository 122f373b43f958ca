/*
 * A reader's switch to a new version: the first lookup through an open reader after
 * a publication, which maps the new version object and validates it whole, next to
 * its floor measured in the same run on the same object: mapping it and reading its
 * bytes once.
 *
 * Every timed switch is to a version just published from the same node set, so each
 * maps fresh pages of the same size. The floor maps the object the way the cheapest
 * reader of every byte would (MAP_POPULATE, then 8-byte words summed), so a switch
 * costs no more than it when validation keeps up with memory. Which of the two runs
 * first alternates between repetitions: the first to touch the object may warm the
 * cache for the second.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringbench.h"

/* Switches are timed at least this many times (the median is kept). */
#define SWITCH_REPS_MIN 3

/* One switch measured: its algorithm and node count, and the times. */
struct switch_result {
    shmring_algorithm_t algorithm;
    size_t nodes;
    double switch_seconds;
    double read_seconds;
    uint64_t bytes;
};

/* The switches measured, algorithm by algorithm and each at every publish size. */
static struct switch_result results[ALGORITHMS * NODE_COUNTS_MAX];
static size_t result_count;

/* Maps version GENERATION of RING and reads each of its bytes once; returns the
 * seconds taken, or a negative number (reported). */
static double read_once(const char *ring, uint64_t generation)
{
    char path[SHMRING_DIRECTORY_MAX + SHMRING_RING_NAME_MAX + 64];
    snprintf(path, sizeof(path), "%s/shmring.%s/version.%llu", SHMRING_DEFAULT_DIRECTORY,
             ring, (unsigned long long)generation);
    double start = now_seconds();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fail("cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1.0;
    }
    size_t size = (size_t)st.st_size;
    const uint64_t *words = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (words == MAP_FAILED) {
        fail("cannot map %s: %s", path, strerror(errno));
        return -1.0;
    }
    /* Four sums, so that the loop waits for memory rather than for additions. */
    uint64_t sums[4] = {0, 0, 0, 0};
    size_t count = size / sizeof(*words);
    for (size_t i = 0; i + 4 <= count; i += 4) {
        sums[0] += words[i];
        sums[1] += words[i + 1];
        sums[2] += words[i + 2];
        sums[3] += words[i + 3];
    }
    munmap((void *)words, size);
    double seconds = now_seconds() - start;
    sink += sums[0] + sums[1] + sums[2] + sums[3];
    return seconds;
}

/* Times the switch of READER to the generation just published; returns the seconds
 * taken, or a negative number (reported). */
static double switch_once(shmring_t *reader, uint64_t generation)
{
    static const char key[] = "switch";
    uint32_t id;
    double start = now_seconds();
    int err = shmring_lookup_id(reader, key, sizeof(key) - 1, &id);
    double seconds = now_seconds() - start;
    if (err != 0 || shmring_generation(reader) != generation) {
        fail("the reader did not switch to generation %llu: %s",
             (unsigned long long)generation, shmring_strerror(err));
        return -1.0;
    }
    sink += id;
    return seconds;
}

static int switch_time(const struct config *cfg, shmring_algorithm_t algorithm,
                       size_t nodes, struct switch_result *out)
{
    const char *ring = scratch_ring(RING_SWITCH);
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, nodes, &set) != 0)
        return -1;
    int reps = cfg->publish_reps > SWITCH_REPS_MIN ? cfg->publish_reps : SWITCH_REPS_MIN;
    if (reps > REPS_MAX)
        reps = REPS_MAX;
    double switches[REPS_MAX], reads[REPS_MAX];
    scratch_lock();
    shmring_writer_t *writer = NULL;
    shmring_t *reader = NULL;
    uint64_t generation = 0;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer);
    if (err == 0)
        err = shmring_writer_publish(writer, set, &generation);
    if (err == 0)
        err = shmring_open(ring, &reader);
    bool timed = err == 0 && switch_once(reader, generation) >= 0;
    for (int rep = 0; rep < reps && timed; rep++) {
        err = shmring_writer_publish(writer, set, &generation);
        if (err != 0)
            break;
        if (rep % 2 == 0) {
            reads[rep] = read_once(ring, generation);
            switches[rep] = switch_once(reader, generation);
        } else {
            switches[rep] = switch_once(reader, generation);
            reads[rep] = read_once(ring, generation);
        }
        timed = reads[rep] >= 0 && switches[rep] >= 0;
    }
    const shmring_snapshot_t *snapshot;
    if (err == 0 && timed)
        err = shmring_writer_snapshot(writer, &snapshot);
    if (err == 0 && timed) {
        shmring_snapshot_info_t info;
        shmring_snapshot_info(snapshot, &info);
        *out = (struct switch_result){.algorithm = algorithm,
                                      .nodes = nodes,
                                      .switch_seconds = median(switches, reps),
                                      .read_seconds = median(reads, reps),
                                      .bytes = info.size};
    }
    shmring_close(reader);
    shmring_writer_close(writer);
    int destroyed = shmring_ring_destroy(ring, NULL);
    (void)destroyed;
    scratch_unlock();
    shmring_nodeset_free(set);
    if (err != 0)
        fail("cannot publish %zu %s nodes: %s", nodes, shmring_algorithm_name(algorithm),
             shmring_strerror(err));
    return err == 0 && timed ? 0 : -1;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cold;
    result_count = 0;
    for (int a = 0; a < ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->publish_count_n; n++) {
            if (switch_time(cfg, algorithms[a], cfg->publish_counts[n],
                            &results[result_count]) != 0)
                return -1;
            result_count++;
        }
    }
    return 0;
}

static double ratio(const struct switch_result *r)
{
    return r->switch_seconds / r->read_seconds;
}

static void print(const struct config *cfg)
{
    printf("\n3b. Reader switch to a new version: the first lookup after a publication "
           "(map + validate), next to mapping the same object and reading its bytes "
           "once (median of %d)\n",
           cfg->publish_reps > SWITCH_REPS_MIN ? cfg->publish_reps : SWITCH_REPS_MIN);
    printf("%-13s%10s%14s%12s%12s%10s\n", "algorithm", "nodes", "snapshot MiB",
           "switch ms", "read ms", "ratio");
    for (size_t i = 0; i < result_count; i++) {
        const struct switch_result *r = &results[i];
        char nodes[32];
        printf("%-13s%10s%14.1f%12.3f%12.3f%9.2fx\n",
               shmring_algorithm_name(r->algorithm), group_digits(r->nodes, nodes),
               (double)r->bytes / 1048576.0, r->switch_seconds * 1e3,
               r->read_seconds * 1e3, ratio(r));
    }
}

static void derive(const struct config *cfg, struct figures *out)
{
    (void)cfg;
    for (size_t i = 0; i < result_count; i++)
        figure_add(out, FIGURE_VALUE, results[i].nodes, ratio(&results[i]), 0.0,
                   "switch %s@%zu over reading its bytes",
                   shmring_algorithm_name(results[i].algorithm), results[i].nodes);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *switches = json_array();
    for (size_t i = 0; i < result_count; i++) {
        const struct switch_result *r = &results[i];
        json_array_append_new(switches,
                              json_pack("{sssIsososI}", "algorithm",
                                        shmring_algorithm_name(r->algorithm), "nodes",
                                        (json_int_t)r->nodes, "switch_seconds",
                                        json_number(r->switch_seconds), "read_seconds",
                                        json_number(r->read_seconds), "snapshot_bytes",
                                        (json_int_t)r->bytes));
    }
    json_object_set_new(root, "switch", switches);
}

BENCHMARK(switch, .derive = derive);
