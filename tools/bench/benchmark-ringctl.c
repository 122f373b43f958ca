/*
 * ringctl's memory: the built ringctl loads a JSON node set into a new ring, and its
 * peak resident set size comes from wait4()'s resource usage.
 *
 * Runs before anything large is allocated (the runner starts it early). A forked child
 * starts with its parent's resident pages, and exec() folds that high-water mark into
 * the ru_maxrss that wait4() reports, so ringctl started from a grown ringbench would
 * report ringbench's size instead of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ringbench.h"

#ifndef RINGBENCH_RINGCTL
#error "RINGBENCH_RINGCTL must name the ringctl binary (tools/CMakeLists.txt sets it)"
#endif

struct ringctl_result {
    double seconds;
    long max_rss_kib;
    /* The size of the snapshot it published, read from the ring's header. */
    uint64_t snapshot_bytes;
};

static struct ringctl_result results[NODE_COUNTS_MAX];

/* Writes a JSON node set of NODES nodes (algorithm ring) to the open file F. */
static int node_file_write(FILE *f, size_t nodes)
{
    fputs("{\"algorithm\": \"ring\", \"nodes\": [\n", f);
    for (size_t i = 0; i < nodes; i++) {
        char name[32], address[48];
        node_name(i, name);
        node_address(i, address);
        fprintf(f, "  {\"name\": \"%s\", \"address\": \"%s\"}%s\n", name, address,
                i + 1 < nodes ? "," : "");
    }
    fputs("]}\n", f);
    return ferror(f) ? -1 : 0;
}

/* Runs ringctl to load a node set of NODES nodes into a new scratch ring. */
static int ringctl_load(const char *ring, size_t nodes, struct ringctl_result *out)
{
    int status = -1;
    scratch_lock();
    const char *path;
    FILE *f = scratch_file_create(&path);
    if (f == NULL)
        goto out;
    int written = node_file_write(f, nodes);
    if (fclose(f) != 0 || written != 0) {
        fail("cannot write %s", path);
        goto out;
    }
    /* execve() takes writable strings. */
    char program[] = "ringctl", ring_option[] = "-r", command[] = "load";
    char ring_name[SHMRING_RING_NAME_MAX + 1], file[64];
    snprintf(ring_name, sizeof(ring_name), "%s", ring);
    snprintf(file, sizeof(file), "%s", path);
    char *const argv[] = {program, ring_option, ring_name, command, file, NULL};
    fflush(stdout);
    double start = now_seconds();
    pid_t pid = fork();
    if (pid < 0) {
        fail("cannot fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls between fork and exec. */
        child_signals_restore();
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDOUT_FILENO);
        execve(RINGBENCH_RINGCTL, argv, environ);
        _exit(127);
    }
    int wstatus;
    struct rusage resources;
    while (wait4(pid, &wstatus, 0, &resources) < 0) {
        if (errno != EINTR) {
            fail("wait4: %s", strerror(errno));
            goto out;
        }
    }
    out->seconds = now_seconds() - start;
    out->max_rss_kib = resources.ru_maxrss;
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
        shmring_ring_info_t info;
        int err = shmring_ring_info(ring, NULL, &info);
        if (err == 0) {
            out->snapshot_bytes = info.version.size;
            status = 0;
        } else {
            fail("cannot read ring '%s' after ringctl load: %s", ring,
                 shmring_strerror(err));
        }
    } else if (WIFEXITED(wstatus))
        fail("%s load of %zu nodes exited with status %d", RINGBENCH_RINGCTL, nodes,
             WEXITSTATUS(wstatus));
    else
        fail("%s load of %zu nodes was killed by signal %d", RINGBENCH_RINGCTL, nodes,
             WTERMSIG(wstatus));
out:
    scratch_cleanup_locked();
    scratch_unlock();
    return status;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cold;
    for (size_t n = 0; n < cfg->ringctl_count_n; n++) {
        if (ringctl_load(scratch_ring(RING_RINGCTL), cfg->ringctl_counts[n],
                         &results[n]) != 0)
            return -1;
    }
    return 0;
}

/* The peak resident size of load N over the size of the snapshot it published. */
static double peak_over_snapshot(size_t n)
{
    return results[n].snapshot_bytes > 0 ? (double)results[n].max_rss_kib * 1024.0 /
                                               (double)results[n].snapshot_bytes
                                         : NAN;
}

static void print(const struct config *cfg)
{
    printf("\n4. ringctl load of a JSON node set into a new ring (algorithm ring): "
           "peak memory from wait4() (measured first, while ringbench was small)\n");
    printf("%-10s%16s%16s%14s%12s\n", "nodes", "peak RSS MiB", "snapshot MiB",
           "x snapshot", "seconds");
    for (size_t n = 0; n < cfg->ringctl_count_n; n++) {
        char nodes[32];
        printf("%-10s%16.1f%16.1f%13.2fx%12.3f\n",
               group_digits(cfg->ringctl_counts[n], nodes),
               (double)results[n].max_rss_kib / 1024.0,
               (double)results[n].snapshot_bytes / 1048576.0, peak_over_snapshot(n),
               results[n].seconds);
    }
}

static void derive(const struct config *cfg, struct figures *out)
{
    for (size_t n = 0; n < cfg->ringctl_count_n; n++)
        figure_add(out, FIGURE_VALUE, cfg->ringctl_counts[n], peak_over_snapshot(n), 0.0,
                   "ringctl load@%zu, peak RSS over the snapshot",
                   cfg->ringctl_counts[n]);
}

static void json(const struct config *cfg, json_t *root)
{
    json_t *ringctl = json_array();
    for (size_t n = 0; n < cfg->ringctl_count_n; n++)
        json_array_append_new(
            ringctl, json_pack("{sIsIsIso}", "nodes", (json_int_t)cfg->ringctl_counts[n],
                               "max_rss_bytes", (json_int_t)results[n].max_rss_kib * 1024,
                               "snapshot_bytes", (json_int_t)results[n].snapshot_bytes,
                               "seconds", json_real(results[n].seconds)));
    json_object_set_new(root, "ringctl_load", ringctl);
}

BENCHMARK(ringctl, .early = true, .derive = derive);
