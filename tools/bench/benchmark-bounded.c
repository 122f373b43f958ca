/*
 * Bounded loads (docs/bounded-loads.md): 8 worker processes send requests for keys
 * drawn from a Zipf distribution over 1,000,000 distinct keys to 20 nodes, each
 * holding its node for an exponentially distributed time, and the in-flight count of
 * every node is sampled from outside, every 2 ms, from what the workers log in shared
 * memory (and, for shared bounding, checked against the load board). Three modes:
 * plain consistent hashing (the key's first candidate), each process bounding its own
 * requests with counters in its own memory (what a per-worker balancer can do), and
 * shmring_acquire()'s bound shared by all workers through the board; for c = 1.25
 * and 2. Also the cost of acquire + release over a plain id lookup, in 1 process and
 * in 8, on a stream of distinct keys.
 */
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ringbench.h"

#define BOUNDED_WORKERS 8
#define BOUNDED_NODES 20
#define BOUNDED_KEYS 1000000
/* Requests each worker keeps in flight, and their mean hold time. */
#define IN_FLIGHT_PER_WORKER 16
#define HOLD_MEAN_NS 200000.0
#define SAMPLE_NS 2000000
#define WARMUP_NS 200000000
#define ZIPF_COUNT 2
#define MODES 3
#define FACTORS 2

enum mode { MODE_PLAIN, MODE_LOCAL, MODE_SHARED };
static const char *const mode_names[MODES] = {
    "plain consistent hashing", "per-process bound", "shared bound (board)"};
static const double zipf_s[ZIPF_COUNT] = {0.99, 1.2};
static const uint32_t factor_percent[FACTORS] = {125, 200};

/* What the workers log, in memory shared with the parent: each worker's in-flight
 * count on each node, and what its requests did. */
struct request_log {
    _Atomic int64_t in_flight[BOUNDED_WORKERS][BOUNDED_NODES];
    _Atomic uint64_t requests[BOUNDED_WORKERS];
    _Atomic uint64_t first[BOUNDED_WORKERS];
    _Atomic uint64_t tried[BOUNDED_WORKERS];
    _Atomic int ready;
    _Atomic int stop;
};

struct load_result {
    double peak;          /* the peak over samples of max in-flight / mean */
    double peak_plus_one; /* the same, with one request more allowed per node */
    double first_share;
    double tried_mean;
    bool board_agrees;
};

static struct load_result results[ZIPF_COUNT][MODES][FACTORS];
static double moved_share[FACTORS];
static double cost_lookup_ns[2], cost_lease_ns[2];
/* max / mean over time, s = 0.99, c = 1.25, each mode: for the plot. */
#define SERIES_MAX 4096
static double series[MODES][SERIES_MAX];
static size_t series_count[MODES];

static double *zipf_cdf;

static int zipf_prepare(double s)
{
    if (zipf_cdf == NULL && (zipf_cdf = malloc(BOUNDED_KEYS * sizeof(double))) == NULL)
        return -1;
    double sum = 0.0;
    for (size_t k = 0; k < BOUNDED_KEYS; k++) {
        sum += pow((double)(k + 1), -s);
        zipf_cdf[k] = sum;
    }
    for (size_t k = 0; k < BOUNDED_KEYS; k++)
        zipf_cdf[k] /= sum;
    return 0;
}

static uint64_t next_random(uint64_t *state)
{
    /* splitmix64 */
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double uniform(uint64_t *state)
{
    return ((double)(next_random(state) >> 11) + 0.5) / 9007199254740992.0;
}

static size_t zipf_rank(uint64_t *state)
{
    double u = uniform(state);
    size_t low = 0, high = BOUNDED_KEYS - 1;
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (zipf_cdf[mid] < u)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One request a worker holds. */
struct held {
    int64_t until;
    uint32_t node;
    shmring_lease_t lease;
};

/* Picks a node for KEY as a per-process balancer would: the first candidate whose
 * count in this process is below this process's capacity. */
static uint32_t local_choose(shmring_t *r, const char *key, size_t len,
                             const int64_t *mine, uint32_t percent, uint32_t *tried)
{
    int64_t total = 0;
    for (int n = 0; n < BOUNDED_NODES; n++)
        total += mine[n];
    uint64_t capacity =
        (uint64_t)((percent * (uint64_t)(total + 1) + 100 * BOUNDED_NODES - 1) /
                   (100 * BOUNDED_NODES));
    uint32_t id = 0;
    if (shmring_lookup_id(r, key, len, &id) != 0)
        return 0;
    *tried = 1;
    if ((uint64_t)mine[id] < capacity)
        return id;
    shmring_node_t nodes[BOUNDED_NODES];
    int count = shmring_lookup_n(r, key, len, nodes, BOUNDED_NODES);
    uint32_t least = id;
    for (int i = 1; i < count; i++) {
        *tried = (uint32_t)i + 1;
        if ((uint64_t)mine[nodes[i].id] < capacity)
            return nodes[i].id;
        if (mine[nodes[i].id] < mine[least])
            least = nodes[i].id;
    }
    return least;
}

static void worker(const char *ring, enum mode mode, uint32_t percent, int index,
                   struct request_log *requests_log)
{
    child_signals_restore();
    shmring_t *r;
    if (shmring_open(ring, &r) != 0)
        _exit(EXIT_FAILED);
    uint64_t state = SEED + (uint64_t)index * 7919;
    struct held held[IN_FLIGHT_PER_WORKER];
    int64_t mine[BOUNDED_NODES] = {0};
    atomic_fetch_add(&requests_log->ready, 1);
    while (atomic_load(&requests_log->ready) < BOUNDED_WORKERS)
        ;
    for (int h = 0; h < IN_FLIGHT_PER_WORKER; h++)
        held[h].until = 0;
    bool started[IN_FLIGHT_PER_WORKER] = {false};
    while (!atomic_load_explicit(&requests_log->stop, memory_order_relaxed)) {
        int64_t now = monotonic_ns();
        for (int h = 0; h < IN_FLIGHT_PER_WORKER; h++) {
            if (held[h].until > now)
                continue;
            if (started[h]) {
                atomic_fetch_sub_explicit(&requests_log->in_flight[index][held[h].node],
                                          1, memory_order_relaxed);
                mine[held[h].node]--;
                if (mode == MODE_SHARED && shmring_release(r, &held[h].lease) != 0)
                    _exit(EXIT_FAILED);
            }
            char key[32];
            size_t len = (size_t)snprintf(key, sizeof(key), "k%zu", zipf_rank(&state));
            uint32_t node = 0, tried = 1;
            if (mode == MODE_SHARED) {
                if (shmring_acquire(r, key, len, &held[h].lease) != 0)
                    _exit(EXIT_FAILED);
                node = held[h].lease.id;
                tried = held[h].lease.candidates;
            } else if (mode == MODE_LOCAL) {
                node = local_choose(r, key, len, mine, percent, &tried);
            } else if (shmring_lookup_id(r, key, len, &node) != 0) {
                _exit(EXIT_FAILED);
            }
            held[h].node = node % BOUNDED_NODES;
            mine[held[h].node]++;
            atomic_fetch_add_explicit(&requests_log->in_flight[index][held[h].node], 1,
                                      memory_order_relaxed);
            atomic_fetch_add_explicit(&requests_log->requests[index], 1,
                                      memory_order_relaxed);
            atomic_fetch_add_explicit(&requests_log->tried[index], tried,
                                      memory_order_relaxed);
            if (tried == 1)
                atomic_fetch_add_explicit(&requests_log->first[index], 1,
                                          memory_order_relaxed);
            held[h].until = now + (int64_t)(-log(uniform(&state)) * HOLD_MEAN_NS);
            started[h] = true;
        }
    }
    for (int h = 0; h < IN_FLIGHT_PER_WORKER; h++) {
        if (started[h]) {
            atomic_fetch_sub(&requests_log->in_flight[index][held[h].node], 1);
            if (mode == MODE_SHARED && shmring_release(r, &held[h].lease) != 0)
                _exit(EXIT_FAILED);
        }
    }
    shmring_close(r);
    _exit(EXIT_OK);
}

/* Publishes NODES nodes (node-0 ...) into RING with the board's factor PERCENT. */
static int ring_prepare(const char *ring, size_t nodes, uint32_t percent)
{
    shmring_writer_t *w;
    if (shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w) != 0)
        return -1;
    shmring_nodeset_t *set;
    int err = nodeset_make(SHMRING_ALGORITHM_RING, nodes, &set);
    if (err == 0) {
        err = shmring_writer_publish(w, set, NULL);
        shmring_nodeset_free(set);
    }
    if (err == 0)
        err = shmring_writer_set_board(w, getegid(), percent);
    shmring_writer_close(w);
    return err == 0 ? 0 : -1;
}

/* Runs one mode for SECONDS: fills *out, and SERIES (when not NULL) with max/mean
 * over time. */
static int load_run(const char *ring, enum mode mode, uint32_t percent, double seconds,
                    struct load_result *out, double *series_out, size_t *series_n)
{
    struct request_log *log = mmap(NULL, sizeof(*log), PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (log == MAP_FAILED)
        return -1;
    pid_t pids[BOUNDED_WORKERS];
    for (int w = 0; w < BOUNDED_WORKERS; w++) {
        pids[w] = fork();
        if (pids[w] < 0)
            return -1;
        if (pids[w] == 0)
            worker(ring, mode, percent, w, log);
    }
    while (atomic_load(&log->ready) < BOUNDED_WORKERS)
        usleep(1000);
    int64_t start = monotonic_ns(), end = start + (int64_t)(seconds * 1e9);
    double peak = 0.0, peak_plus_one = 0.0;
    size_t samples = 0;
    for (int64_t now = start; now < end; now = monotonic_ns()) {
        struct timespec pause = {0, SAMPLE_NS};
        nanosleep(&pause, NULL);
        int64_t per_node[BOUNDED_NODES] = {0}, total = 0, largest = 0;
        for (int n = 0; n < BOUNDED_NODES; n++) {
            for (int w = 0; w < BOUNDED_WORKERS; w++)
                per_node[n] +=
                    atomic_load_explicit(&log->in_flight[w][n], memory_order_relaxed);
            total += per_node[n];
            largest = per_node[n] > largest ? per_node[n] : largest;
        }
        if (total <= 0)
            continue;
        double mean = (double)total / BOUNDED_NODES;
        double ratio = (double)largest / mean;
        if (series_out != NULL && samples < SERIES_MAX)
            series_out[samples] = ratio;
        samples++;
        if (now - start < WARMUP_NS)
            continue;
        peak = ratio > peak ? ratio : peak;
        double slack = (double)(largest - 1) / mean;
        peak_plus_one = slack > peak_plus_one ? slack : peak_plus_one;
    }
    if (series_n != NULL)
        *series_n = samples < SERIES_MAX ? samples : SERIES_MAX;
    atomic_store(&log->stop, 1);
    int failed = 0;
    for (int w = 0; w < BOUNDED_WORKERS; w++) {
        int status;
        waitpid(pids[w], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    uint64_t requests = 0, first = 0, tried = 0;
    for (int w = 0; w < BOUNDED_WORKERS; w++) {
        requests += log->requests[w];
        first += log->first[w];
        tried += log->tried[w];
    }
    out->peak = peak;
    out->peak_plus_one = peak_plus_one;
    out->first_share = requests ? (double)first / (double)requests : NAN;
    out->tried_mean = requests ? (double)tried / (double)requests : NAN;
    /* Every worker released everything: the board, counted by the library, agrees
     * with the log, counted here, at zero. */
    shmring_board_info_t info;
    out->board_agrees = false;
    if (shmring_ring_board(ring, NULL, &info) == 0) {
        out->board_agrees = info.in_flight == 0;
        shmring_board_info_free(&info);
    }
    munmap(log, sizeof(*log));
    return failed ? -1 : 0;
}

/* Cost of acquire + release and of lookup_id over a stream of distinct keys, in
 * WORKERS processes at once; the per-operation ns of one process. */
static int cost_run(const char *ring, int workers, const struct keyset *keys,
                    double *lookup_ns, double *lease_ns)
{
    int pipes[2];
    if (pipe(pipes) != 0)
        return -1;
    for (int w = 0; w < workers; w++) {
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid != 0)
            continue;
        child_signals_restore();
        shmring_t *r;
        if (shmring_open(ring, &r) != 0)
            _exit(EXIT_FAILED);
        double figures[3];
        size_t count = keys->count;
        /* Pass 0 only warms up (page faults of the key set, the ring's pages), so
         * that neither measured pass pays for them. */
        for (int pass = -1; pass < 2; pass++) {
            double t0 = now_seconds();
            for (size_t i = 0; i < count; i++) {
                const uint8_t *key = key_at(keys, i);
                if (pass <= 0) {
                    uint32_t id;
                    if (shmring_lookup_id(r, key, keys->length[i], &id) != 0)
                        _exit(EXIT_FAILED);
                    sink += id;
                } else {
                    shmring_lease_t lease;
                    if (shmring_acquire(r, key, keys->length[i], &lease) != 0 ||
                        shmring_release(r, &lease) != 0)
                        _exit(EXIT_FAILED);
                    sink += lease.id;
                }
            }
            figures[pass + 1] = (now_seconds() - t0) * 1e9 / (double)count;
        }
        figures[0] = figures[1];
        figures[1] = figures[2];
        if (write(pipes[1], figures, 2 * sizeof(double)) != 2 * sizeof(double))
            _exit(EXIT_FAILED);
        shmring_close(r);
        _exit(EXIT_OK);
    }
    close(pipes[1]);
    double sum[2] = {0, 0};
    int got = 0;
    for (int w = 0; w < workers; w++) {
        double figures[2];
        if (read(pipes[0], figures, sizeof(figures)) == sizeof(figures)) {
            sum[0] += figures[0];
            sum[1] += figures[1];
            got++;
        }
    }
    close(pipes[0]);
    while (wait(NULL) > 0)
        ;
    if (got != workers)
        return -1;
    *lookup_ns = sum[0] / workers;
    *lease_ns = sum[1] / workers;
    return 0;
}

/* The share of requests that go elsewhere once a 21st node is added under load:
 * the same Zipf stream acquired on 20 nodes, then on 21, with the same in-flight
 * load held (each request of the stream replaces the oldest of 128 in flight). */
static double moved_run(const char *ring, uint32_t percent)
{
    uint64_t state = SEED;
    enum { STREAM = 200000, HELD = BOUNDED_WORKERS * IN_FLIGHT_PER_WORKER };
    uint32_t *before = malloc(STREAM * sizeof(*before));
    size_t *ranks = malloc(STREAM * sizeof(*ranks));
    if (before == NULL || ranks == NULL)
        return NAN;
    for (size_t i = 0; i < STREAM; i++)
        ranks[i] = zipf_rank(&state);
    double share = NAN;
    for (int phase = 0; phase < 2; phase++) {
        if (ring_prepare(ring, BOUNDED_NODES + (size_t)phase, percent) != 0)
            break;
        shmring_t *r;
        if (shmring_open(ring, &r) != 0)
            break;
        shmring_lease_t held[HELD];
        size_t moved = 0;
        for (size_t i = 0; i < STREAM; i++) {
            if (i >= HELD && shmring_release(r, &held[i % HELD]) != 0)
                break;
            char key[32];
            size_t len = (size_t)snprintf(key, sizeof(key), "k%zu", ranks[i]);
            if (shmring_acquire(r, key, len, &held[i % HELD]) != 0)
                break;
            if (phase == 0)
                before[i] = held[i % HELD].id;
            else
                moved += before[i] != held[i % HELD].id;
        }
        for (size_t i = 0; i < HELD; i++) {
            if (shmring_release(r, &held[i]) != 0)
                moved = STREAM + 1; /* never: every lease is held once */
        }
        shmring_close(r);
        if (phase == 1)
            share = (double)moved / STREAM;
    }
    free(before);
    free(ranks);
    return share;
}

/*
 * The order in which a full first candidate hands on its request: the key's ring walk
 * (the next distinct nodes clockwise, what shmring_acquire() does, as the paper and
 * HAProxy) against random jumps (Envoy's hash_balance_factor, after arXiv:1908.08762:
 * attempt i looks the key up again hashed with i, the owner of a fresh random point,
 * so that one full node's overflow spreads over the ring instead of cascading onto its
 * neighbours). The library has one order; both are simulated here, in one process,
 * on the same snapshot and the same seeded stream: 128 requests in flight over 20
 * nodes (as the workers hold), exponential holds, the request that ends first
 * replaced by the next of the stream, capacities as shmring_acquire() computes them.
 */
enum order { ORDER_WALK, ORDER_JUMPS, ORDERS };
static const char *const order_names[ORDERS] = {"ring walk", "random jumps"};

struct order_result {
    double peak;         /* the peak of max in flight / mean, after the warm-up */
    double first_share;  /* requests that their first candidate took */
    double tried_mean;   /* candidates tried per request */
    double tried_over_4; /* requests that tried more than 4 */
    uint32_t tried_max;
    double moved_share; /* requests sent elsewhere once a 21st node is added */
};

static struct order_result order_results[ZIPF_COUNT][FACTORS][ORDERS];

#define ORDER_HELD (BOUNDED_WORKERS * IN_FLIGHT_PER_WORKER)
#define ORDER_ATTEMPTS 64

/* The node for KEY among NODES (ids 0 to NODES - 1) with LOAD in flight, TOTAL in
 * all, in ORDER; *TRIED is how many candidates it tried. */
static uint32_t order_choose(const shmring_snapshot_t *snapshot, enum order order,
                             const char *key, size_t len, const uint32_t *load,
                             uint32_t total, uint32_t nodes, uint32_t percent,
                             uint32_t *tried)
{
    uint64_t capacity =
        ((uint64_t)percent * (total + 1) + 100u * nodes - 1) / (100u * nodes);
    uint32_t first = 0;
    if (shmring_snapshot_lookup_id(snapshot, key, len, &first) != 0)
        return 0;
    *tried = 1;
    if (load[first] < capacity)
        return first;
    uint32_t least = first;
    bool seen[BOUNDED_NODES + 1] = {false};
    seen[first] = true;
    if (order == ORDER_WALK) {
        shmring_node_t candidates[BOUNDED_NODES + 1];
        int count = shmring_snapshot_lookup_n(snapshot, key, len, candidates, nodes);
        for (int i = 1; i < count; i++) {
            uint32_t id = candidates[i].id;
            *tried = (uint32_t)i + 1;
            if (load[id] < capacity)
                return id;
            least = load[id] < load[least] ? id : least;
        }
        return least;
    }
    uint32_t distinct = 1;
    for (uint32_t attempt = 1; attempt < ORDER_ATTEMPTS && distinct < nodes; attempt++) {
        char again[48];
        size_t again_len =
            (size_t)snprintf(again, sizeof(again), "%.*s#%u", (int)len, key, attempt);
        uint32_t id = 0;
        if (shmring_snapshot_lookup_id(snapshot, again, again_len, &id) != 0 || seen[id])
            continue;
        seen[id] = true;
        *tried = ++distinct;
        if (load[id] < capacity)
            return id;
        least = load[id] < load[least] ? id : least;
    }
    return least;
}

/* Runs STREAM requests of the ranks in RANKS on NODES nodes in ORDER; fills *out's
 * load figures and, when CHOSEN is not NULL, the node of each request. */
static int order_run(const size_t *ranks, size_t stream, uint32_t nodes, enum order order,
                     uint32_t percent, struct order_result *out, uint32_t *chosen,
                     const uint32_t *before)
{
    shmring_nodeset_t *set;
    if (nodeset_make(SHMRING_ALGORITHM_RING, nodes, &set) != 0)
        return -1;
    shmring_snapshot_t *snapshot;
    int err = snapshot_make(set, &snapshot);
    shmring_nodeset_free(set);
    if (err != 0)
        return -1;
    uint64_t state = SEED ^ UINT64_C(0x0de5);
    double until[ORDER_HELD];
    uint32_t node_of[ORDER_HELD];
    uint32_t load[BOUNDED_NODES + 1] = {0};
    uint32_t total = 0;
    size_t warmup = stream / 10, first = 0, over_4 = 0, moved = 0;
    uint64_t tried_sum = 0;
    double now = 0.0, peak = 0.0;
    uint32_t tried_max = 0;
    for (size_t i = 0; i < stream; i++) {
        size_t slot = i;
        if (i >= ORDER_HELD) {
            slot = 0;
            for (size_t h = 1; h < ORDER_HELD; h++)
                slot = until[h] < until[slot] ? h : slot;
            now = until[slot];
            load[node_of[slot]]--;
            total--;
        }
        char key[32];
        size_t len = (size_t)snprintf(key, sizeof(key), "k%zu", ranks[i]);
        uint32_t tried = 1;
        uint32_t node =
            order_choose(snapshot, order, key, len, load, total, nodes, percent, &tried);
        load[node]++;
        total++;
        node_of[slot] = node;
        until[slot] = now - log(uniform(&state)) * HOLD_MEAN_NS;
        if (chosen != NULL)
            chosen[i] = node;
        if (before != NULL)
            moved += before[i] != node;
        if (i < warmup)
            continue;
        uint32_t busiest = 0;
        for (uint32_t n = 0; n < nodes; n++)
            busiest = load[n] > busiest ? load[n] : busiest;
        double ratio = busiest * (double)nodes / total;
        peak = ratio > peak ? ratio : peak;
        first += tried == 1;
        over_4 += tried > 4;
        tried_sum += tried;
        tried_max = tried > tried_max ? tried : tried_max;
    }
    shmring_snapshot_free(snapshot);
    size_t counted = stream - warmup;
    if (before != NULL) {
        out->moved_share = (double)moved / (double)stream;
        return 0;
    }
    out->peak = peak;
    out->first_share = (double)first / (double)counted;
    out->tried_mean = (double)tried_sum / (double)counted;
    out->tried_over_4 = (double)over_4 / (double)counted;
    out->tried_max = tried_max;
    return 0;
}

/* Both orders, for the current Zipf exponent Z and every factor. */
static int orders_run(int z, size_t stream)
{
    uint64_t state = SEED + (uint64_t)z;
    size_t *ranks = malloc(stream * sizeof(*ranks));
    uint32_t *chosen = malloc(stream * sizeof(*chosen));
    int err = ranks != NULL && chosen != NULL ? 0 : -1;
    for (size_t i = 0; err == 0 && i < stream; i++)
        ranks[i] = zipf_rank(&state);
    for (int f = 0; err == 0 && f < FACTORS; f++) {
        for (int o = 0; err == 0 && o < ORDERS; o++) {
            struct order_result *out = &order_results[z][f][o];
            err = order_run(ranks, stream, BOUNDED_NODES, (enum order)o,
                            factor_percent[f], out, chosen, NULL);
            if (err == 0)
                err = order_run(ranks, stream, BOUNDED_NODES + 1, (enum order)o,
                                factor_percent[f], out, NULL, chosen);
        }
    }
    free(ranks);
    free(chosen);
    return err;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    const char *ring = scratch_ring(RING_BOUNDED);
    double seconds = cfg->quick ? 1.0 : 4.0;
    for (int z = 0; z < ZIPF_COUNT; z++) {
        if (zipf_prepare(zipf_s[z]) != 0)
            return -1;
        if (orders_run(z, cfg->quick ? 50000 : 400000) != 0)
            return -1;
        for (int f = 0; f < FACTORS; f++) {
            if (ring_prepare(ring, BOUNDED_NODES, factor_percent[f]) != 0)
                return -1;
            for (int m = 0; m < MODES; m++) {
                /* Plain hashing does not depend on c: measured once. */
                if (m == MODE_PLAIN && f > 0) {
                    results[z][m][f] = results[z][m][0];
                    continue;
                }
                bool plot = z == 0 && f == 0;
                if (load_run(ring, (enum mode)m, factor_percent[f], seconds,
                             &results[z][m][f], plot ? series[m] : NULL,
                             plot ? &series_count[m] : NULL) != 0)
                    return -1;
            }
        }
    }
    if (zipf_prepare(zipf_s[0]) != 0)
        return -1;
    for (int f = 0; f < FACTORS; f++)
        moved_share[f] = moved_run(ring, factor_percent[f]);
    if (ring_prepare(ring, BOUNDED_NODES, factor_percent[0]) != 0)
        return -1;
    struct keyset stream =
        keyset_prefix(cold, cold->count < 1000000 ? cold->count : 1000000);
    const int workers[2] = {1, BOUNDED_WORKERS};
    for (int i = 0; i < 2; i++) {
        if (cost_run(ring, workers[i], &stream, &cost_lookup_ns[i], &cost_lease_ns[i]) !=
            0)
            return -1;
    }
    scratch_ring_remove(RING_BOUNDED);
    return 0;
}

static void print(const struct config *cfg)
{
    (void)cfg;
    printf("\n10. Bounded loads: %d worker processes, %d nodes, Zipf over %d keys, %d "
           "requests in flight per worker, exponential holds (mean %.0f us)\n",
           BOUNDED_WORKERS, BOUNDED_NODES, BOUNDED_KEYS, IN_FLIGHT_PER_WORKER,
           HOLD_MEAN_NS / 1000);
    printf("%-6s %-5s %-26s %10s %14s %12s %12s %6s\n", "zipf s", "c", "mode",
           "peak max/avg", "(max-1)/avg", "first share", "tried/request", "board");
    for (int z = 0; z < ZIPF_COUNT; z++) {
        for (int f = 0; f < FACTORS; f++) {
            for (int m = 0; m < MODES; m++) {
                const struct load_result *r = &results[z][m][f];
                printf("%-6.2f %-5.2f %-26s %10.3f %14.3f %12.3f %12.3f %6s\n", zipf_s[z],
                       factor_percent[f] / 100.0, mode_names[m], r->peak,
                       r->peak_plus_one, r->first_share, r->tried_mean,
                       m == MODE_SHARED ? (r->board_agrees ? "ok" : "WRONG") : "-");
            }
        }
    }
    for (int f = 0; f < FACTORS; f++)
        printf("moved share when a 21st node is added under load, c = %.2f: %.4f (1/21 = "
               "%.4f)\n",
               factor_percent[f] / 100.0, moved_share[f], 1.0 / 21);
    printf("acquire + release vs lookup_id, distinct keys: 1 process %.1f ns vs %.1f ns "
           "(%.2fx); %d processes %.1f ns vs %.1f ns (%.2fx)\n",
           cost_lease_ns[0], cost_lookup_ns[0], cost_lease_ns[0] / cost_lookup_ns[0],
           BOUNDED_WORKERS, cost_lease_ns[1], cost_lookup_ns[1],
           cost_lease_ns[1] / cost_lookup_ns[1]);
    printf(
        "\n10b. Overflow order, simulated in one process on one snapshot and one seeded "
        "stream: %d requests in flight\n     over %d nodes, exponential holds; moved: "
        "requests sent elsewhere once a 21st node is added\n",
        ORDER_HELD, BOUNDED_NODES);
    printf("%-6s %-5s %-13s %12s %12s %14s %10s %10s %8s\n", "zipf s", "c", "order",
           "peak max/avg", "first share", "tried/request", "tried > 4", "most tried",
           "moved");
    for (int z = 0; z < ZIPF_COUNT; z++) {
        for (int f = 0; f < FACTORS; f++) {
            for (int o = 0; o < ORDERS; o++) {
                const struct order_result *r = &order_results[z][f][o];
                printf("%-6.2f %-5.2f %-13s %12.3f %12.3f %14.3f %10.4f %10u %8.4f\n",
                       zipf_s[z], factor_percent[f] / 100.0, order_names[o], r->peak,
                       r->first_share, r->tried_mean, r->tried_over_4, r->tried_max,
                       r->moved_share);
            }
        }
    }
    /* The plot's data: max/avg every 2 ms for s = 0.99, c = 1.25. */
    FILE *tsv = fopen("bounded-loads.tsv", "w");
    if (tsv != NULL) {
        fprintf(tsv, "ms\tplain\tper_process\tshared\n");
        size_t n = series_count[0];
        for (int m = 1; m < MODES; m++)
            n = series_count[m] < n ? series_count[m] : n;
        for (size_t i = 0; i < n; i++)
            fprintf(tsv, "%zu\t%.4f\t%.4f\t%.4f\n", i * (SAMPLE_NS / 1000000),
                    series[0][i], series[1][i], series[2][i]);
        fclose(tsv);
        printf("max/avg over time (s = 0.99, c = 1.25) written to bounded-loads.tsv\n");
    }
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *array = json_array();
    for (int z = 0; z < ZIPF_COUNT; z++) {
        for (int f = 0; f < FACTORS; f++) {
            for (int m = 0; m < MODES; m++) {
                const struct load_result *r = &results[z][m][f];
                json_array_append_new(
                    array,
                    json_pack("{sososssososososb}", "zipf_s", json_real(zipf_s[z]),
                              "balance_factor", json_real(factor_percent[f] / 100.0),
                              "mode", mode_names[m], "peak_max_over_avg",
                              json_number(r->peak), "first_share",
                              json_number(r->first_share), "tried_mean",
                              json_number(r->tried_mean), "board_agrees",
                              m != MODE_SHARED || r->board_agrees));
            }
        }
    }
    json_object_set_new(root, "bounded_loads", array);
    /* max / avg every SAMPLE_NS, s = 0.99 and c = 1.25, for perf_plots.py. */
    json_t *over_time = json_object();
    const char *keys[MODES] = {"plain", "per_process", "shared"};
    for (int m = 0; m < MODES; m++) {
        json_t *values = json_array();
        for (size_t i = 0; i < series_count[m]; i++)
            json_array_append_new(values, json_number(series[m][i]));
        json_object_set_new(over_time, keys[m], values);
    }
    json_object_set_new(over_time, "sample_ms", json_integer(SAMPLE_NS / 1000000));
    json_object_set_new(root, "bounded_series", over_time);
    json_t *moved = json_array();
    for (int f = 0; f < FACTORS; f++)
        json_array_append_new(moved,
                              json_pack("{soso}", "balance_factor",
                                        json_real(factor_percent[f] / 100.0),
                                        "moved_share", json_number(moved_share[f])));
    json_object_set_new(root, "bounded_moved", moved);
    json_t *orders = json_array();
    for (int z = 0; z < ZIPF_COUNT; z++) {
        for (int f = 0; f < FACTORS; f++) {
            for (int o = 0; o < ORDERS; o++) {
                const struct order_result *r = &order_results[z][f][o];
                json_array_append_new(
                    orders,
                    json_pack("{sososssosososososo}", "zipf_s", json_real(zipf_s[z]),
                              "balance_factor", json_real(factor_percent[f] / 100.0),
                              "order", order_names[o], "peak_max_over_avg",
                              json_number(r->peak), "first_share",
                              json_number(r->first_share), "tried_mean",
                              json_number(r->tried_mean), "tried_over_4_share",
                              json_number(r->tried_over_4), "tried_max",
                              json_integer(r->tried_max), "moved_share",
                              json_number(r->moved_share)));
            }
        }
    }
    json_object_set_new(root, "bounded_order", orders);
    json_object_set_new(root, "bounded_cost",
                        json_pack("{sosososo}", "lookup_ns_1",
                                  json_number(cost_lookup_ns[0]), "lease_ns_1",
                                  json_number(cost_lease_ns[0]), "lookup_ns_8",
                                  json_number(cost_lookup_ns[1]), "lease_ns_8",
                                  json_number(cost_lease_ns[1])));
}

BENCHMARK(bounded, .early = false);
