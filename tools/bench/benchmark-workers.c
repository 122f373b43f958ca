/*
 * Worker scaling: lookups per second of 1, 2 and nproc worker processes sharing one
 * ring, each opening it itself as a prefork worker would, all started at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "ringbench.h"

#define WORKERS_MAX 256
#define WORKER_COUNTS_MAX 3

static size_t worker_counts[WORKER_COUNTS_MAX];
static size_t worker_count_n;
static double worker_rate[WORKER_COUNTS_MAX];

/* What a worker writes into the report pipe: once when ready, once when done. */
struct worker_report {
    int64_t error;
    uint64_t lookups;
    uint64_t ns;
};

/* Reads (WRITING false) or writes SIZE bytes at BUFFER through FD whole, across
 * short transfers and EINTR. Returns 0, or -1 on an error or at end of file. */
static int transfer_full(int fd, void *buffer, size_t size, bool writing)
{
    uint8_t *p = buffer;
    while (size > 0) {
        ssize_t done = writing ? write(fd, p, size) : read(fd, p, size);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return -1;
        p += done;
        size -= (size_t)done;
    }
    return 0;
}

/*
 * A worker process: opens the ring itself, reports that it is ready, waits for the
 * start (the end of the start pipe), looks keys up for WINDOW seconds and reports how
 * many it did.
 */
static void worker_main(const char *ring, const struct keyset *keys, double window,
                        int start_fd, int report_fd)
{
    child_signals_restore();
    struct worker_report report = {0, 0, 0};
    shmring_t *r = NULL;
    report.error = shmring_open(ring, &r);
    if (report.error == 0)
        sink += run_reader_id(r, keys, 0, keys->count);
    if (transfer_full(report_fd, &report, sizeof(report), true) != 0 || report.error != 0)
        _exit(EXIT_FAILED);
    char byte;
    while (read(start_fd, &byte, 1) < 0 && errno == EINTR)
        ;
    uint64_t sum = 0, lookups = 0;
    double start = now_seconds(), elapsed;
    do {
        sum += run_reader_id(r, keys, 0, keys->count);
        lookups += keys->count;
        elapsed = now_seconds() - start;
    } while (elapsed < window);
    sink += sum;
    report.lookups = lookups;
    report.ns = (uint64_t)(elapsed * 1e9);
    shmring_close(r);
    _exit(transfer_full(report_fd, &report, sizeof(report), true) == 0 ? EXIT_OK
                                                                       : EXIT_FAILED);
}

/* Runs WORKERS processes for one window; *RATE gets their summed lookups per second. */
static int workers_run(const char *ring, const struct keyset *keys, size_t workers,
                       double window, double *rate)
{
    int start_pipe[2], report_pipe[2];
    if (pipe2(start_pipe, O_CLOEXEC) != 0)
        goto pipe_failed;
    if (pipe2(report_pipe, O_CLOEXEC) != 0) {
        close(start_pipe[0]);
        close(start_pipe[1]);
        goto pipe_failed;
    }
    fflush(stdout);
    pid_t pids[WORKERS_MAX];
    size_t started = 0;
    int status = 0;
    for (; started < workers; started++) {
        pids[started] = fork();
        if (pids[started] < 0) {
            fail("cannot fork a worker: %s", strerror(errno));
            status = -1;
            break;
        }
        if (pids[started] == 0) {
            close(start_pipe[1]);
            close(report_pipe[0]);
            worker_main(ring, keys, window, start_pipe[0], report_pipe[1]);
        }
    }
    close(start_pipe[0]);
    close(report_pipe[1]);
    struct worker_report report;
    for (size_t i = 0; i < started && status == 0; i++) {
        if (transfer_full(report_pipe[0], &report, sizeof(report), false) != 0 ||
            report.error != 0) {
            fail("a worker could not open ring '%s': %s", ring,
                 shmring_strerror(report.error != 0 ? (int)report.error : SHMRING_EIO));
            status = -1;
        }
    }
    /* All workers are ready: closing the start pipe starts them at once. */
    close(start_pipe[1]);
    double total = 0.0;
    for (size_t i = 0; i < started && status == 0; i++) {
        if (transfer_full(report_pipe[0], &report, sizeof(report), false) != 0) {
            fail("a worker did not report");
            status = -1;
        } else {
            total += (double)report.lookups / ((double)report.ns * 1e-9);
        }
    }
    close(report_pipe[0]);
    for (size_t i = 0; i < started; i++) {
        int wstatus;
        while (waitpid(pids[i], &wstatus, 0) < 0 && errno == EINTR)
            ;
    }
    *rate = total;
    return status;
pipe_failed:
    fail("cannot create a pipe: %s", strerror(errno));
    return -1;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    const char *ring = scratch_ring(RING_WORKERS);
    if (ring_publish_new(ring, SHMRING_ALGORITHM_RING, 100) != 0)
        return -1;
    struct keyset hot = keyset_prefix(cold, HOT_KEYS);
    size_t counts[WORKER_COUNTS_MAX] = {1, 2, (size_t)cfg->cpus};
    if (counts[2] > WORKERS_MAX)
        counts[2] = WORKERS_MAX;
    worker_count_n = 0;
    for (int i = 0; i < WORKER_COUNTS_MAX; i++) {
        if (i == 0 || counts[i] > worker_counts[worker_count_n - 1])
            worker_counts[worker_count_n++] = counts[i];
    }
    /* Rounds of one window per worker count, as the lookup measurements interleave
     * their contenders: a slow phase of the shared host falls on every count alike. */
    double rates[WORKER_COUNTS_MAX][REPS_MAX];
    for (int rep = 0; rep < cfg->window_reps; rep++) {
        for (size_t w = 0; w < worker_count_n; w++) {
            if (workers_run(ring, &hot, worker_counts[w], cfg->window_seconds,
                            &rates[w][rep]) != 0)
                return -1;
        }
    }
    for (size_t w = 0; w < worker_count_n; w++)
        worker_rate[w] = median(rates[w], cfg->window_reps);
    scratch_ring_remove(RING_WORKERS);
    return 0;
}

static void print(const struct config *cfg)
{
    printf("\n2. Lookups per second, worker processes sharing ring@100 (hot keys, "
           "%.2f s windows, median of %d interleaved rounds)\n",
           cfg->window_seconds, cfg->window_reps);
    printf("%-10s%16s%16s%14s\n", "workers", "lookups/s", "per worker", "vs 1 worker");
    for (size_t w = 0; w < worker_count_n; w++) {
        double rate = worker_rate[w];
        printf("%-10zu%16.0f%16.0f%13.2fx\n", worker_counts[w], rate,
               rate / (double)worker_counts[w], rate / worker_rate[0]);
    }
}

static void derive(const struct config *cfg, struct figures *out)
{
    (void)cfg;
    for (size_t w = 1; w < worker_count_n; w++)
        figure_add(out, FIGURE_THROUGHPUT, worker_counts[w],
                   worker_rate[w] / worker_rate[0], 0.0, "%zu workers vs 1 worker",
                   worker_counts[w]);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *workers = json_array();
    for (size_t w = 0; w < worker_count_n; w++)
        json_array_append_new(workers,
                              json_pack("{sIso}", "workers", (json_int_t)worker_counts[w],
                                        "lookups_per_second", json_real(worker_rate[w])));
    json_object_set_new(root, "processes", workers);
}

BENCHMARK(workers, .derive = derive);
