/*
 * ringctl sync against a real etcd (Debian's etcd-server), started here on loopback
 * with a temporary data directory and stopped at the end; skipped, saying so, where
 * etcd is not installed.
 *
 * - put-to-publish: three `ringctl sync --key` processes follow one key; each put of
 *   a new 100-node set is timed until a reader handle of each ring answers from the
 *   new generation (shmring_generation(), what a worker's next lookup sees). Per ring
 *   (three samples a put) and until all three have it (one a put): p50 and p99.
 * - full re-read: `ringctl sync --once --prefix` of 10,000 keys into a new ring (the
 *   range, the node set built from 10,000 JSON values, the publication, the
 *   process's start and exit), the best and the median of a few runs.
 *
 * Runs early, before the key sets make ringbench large, so that forking the sync
 * processes copies little.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "ringbench.h"

#ifndef RINGBENCH_RINGCTL
#error "RINGBENCH_RINGCTL must name the ringctl binary (tools/CMakeLists.txt sets it)"
#endif
#ifndef RINGBENCH_ETCD
#error "RINGBENCH_ETCD must name etcd's binary or be empty (tools/CMakeLists.txt)"
#endif

#define SYNCED_RINGS 3
#define PUT_NODES 100
/* etcd's default limit of operations in one transaction. */
#define TXN_OPS 128
/* Waits for etcd and for a publication: generous, they only bound a broken run. */
#define START_SECONDS 30.0
#define PUBLISH_SECONDS 10.0
/* Timed puts and re-reads of the full run, and of --quick's. */
#define PUTS_MAX 100
#define PUTS_QUICK 20
#define REREADS_MAX 3
#define REREADS_QUICK 1
#define REREAD_NODES 10000

static struct {
    /* Why the benchmark did not run (empty: it ran). */
    char skipped[160];
    size_t puts;
    double per_ring_ms[PUTS_MAX * SYNCED_RINGS];
    double all_rings_ms[PUTS_MAX];
    size_t reread_nodes;
    int rereads;
    double reread_ms[REREADS_MAX];
} result;

/* What the run started, for the cleanup. */
static struct {
    pid_t etcd;
    pid_t syncs[SYNCED_RINGS];
    char data_dir[64];
    char url[64];
    CURL *curl;
} run_state;

/* ---- Processes ---------------------------------------------------------------- */

/* Starts ARGV[0] with its output to /dev/null; it dies with ringbench, whatever
 * ends ringbench. */
static pid_t spawn(char *const argv[])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fail("cannot fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        child_signals_restore();
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Sends SIGTERM and reaps; returns the exit status, or -1. */
static int stop(pid_t *pid)
{
    if (*pid <= 0)
        return -1;
    kill(*pid, SIGTERM);
    int status;
    while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    *pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* ---- etcd through its JSON gateway ------------------------------------------- */

static size_t discard(char *bytes, size_t size, size_t count, void *data)
{
    (void)bytes;
    (void)data;
    return size * count;
}

/* POSTs BODY to PATH; true on HTTP 200. */
static bool post(const char *path, const char *body)
{
    char url[128];
    snprintf(url, sizeof(url), "%s%s", run_state.url, path);
    CURL *curl = run_state.curl;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
    long status = 0;
    if (curl_easy_perform(curl) != CURLE_OK)
        return false;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return status == 200;
}

/* {"key": ..., "value": ...} of a put, the bytes in base64. */
static json_t *put_request(const char *key, const char *value)
{
    char *key64 = NULL, *value64 = NULL;
    json_t *request = NULL;
    if (shmring_base64_encode(key, strlen(key), &key64) == 0 &&
        shmring_base64_encode(value, strlen(value), &value64) == 0)
        request = json_pack("{ssss}", "key", key64, "value", value64);
    free(key64);
    free(value64);
    return request;
}

/* Sends REQUEST (taken over) to PATH. */
static bool post_json(const char *path, json_t *request)
{
    char *body = request != NULL ? json_dumps(request, JSON_COMPACT) : NULL;
    json_decref(request);
    bool ok = body != NULL && post(path, body);
    free(body);
    return ok;
}

/* Two ports the kernel had free a moment ago. */
static bool free_ports(int ports[2])
{
    int fds[2] = {-1, -1};
    bool ok = true;
    for (int i = 0; i < 2 && ok; i++) {
        struct sockaddr_in address = {.sin_family = AF_INET,
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(address);
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ok = fds[i] >= 0 && bind(fds[i], (struct sockaddr *)&address, len) == 0 &&
             getsockname(fds[i], (struct sockaddr *)&address, &len) == 0;
        ports[i] = ntohs(address.sin_port);
    }
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
    }
    return ok;
}

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    nanosleep(&ts, NULL);
}

static bool etcd_start(void)
{
    int ports[2];
    snprintf(run_state.data_dir, sizeof(run_state.data_dir),
             "/tmp/ringbench-etcd-XXXXXX");
    if (!free_ports(ports) || mkdtemp(run_state.data_dir) == NULL) {
        fail("cannot prepare etcd: %s", strerror(errno));
        run_state.data_dir[0] = '\0';
        return false;
    }
    snprintf(run_state.url, sizeof(run_state.url), "http://127.0.0.1:%d", ports[0]);
    char peer[64], cluster[80];
    snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", ports[1]);
    snprintf(cluster, sizeof(cluster), "b=%s", peer);
    char *const argv[] = {(char *)RINGBENCH_ETCD,
                          (char *)"--name=b",
                          (char *)"--data-dir",
                          run_state.data_dir,
                          (char *)"--listen-client-urls",
                          run_state.url,
                          (char *)"--advertise-client-urls",
                          run_state.url,
                          (char *)"--listen-peer-urls",
                          peer,
                          (char *)"--initial-advertise-peer-urls",
                          peer,
                          (char *)"--initial-cluster",
                          cluster,
                          NULL};
    run_state.etcd = spawn(argv);
    if (run_state.etcd < 0)
        return false;
    /* etcd answers a range once it has a leader. */
    double deadline = now_seconds() + START_SECONDS;
    while (!post("/v3/kv/range", "{\"key\":\"AA==\"}")) {
        if (now_seconds() > deadline) {
            fail("etcd did not answer on %s within %.0f s", run_state.url, START_SECONDS);
            return false;
        }
        sleep_ms(50);
    }
    return true;
}

/* ---- The measurements ----------------------------------------------------------- */

/* A 100-node set that differs with VERSION (every address moves). */
static char *node_set_text(size_t version)
{
    json_t *nodes = json_array();
    for (size_t i = 0; i < PUT_NODES; i++) {
        char name[32], address[48];
        node_name(i, name);
        snprintf(address, sizeof(address), "10.0.%zu.%zu:%zu", i >> 8, i & 255,
                 11211 + version % 1000);
        json_array_append_new(nodes, json_pack("{sssssI}", "name", name, "address",
                                               address, "id", (json_int_t)i + 1));
    }
    json_t *root = json_pack("{so}", "nodes", nodes);
    char *text = root != NULL ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return text;
}

static bool put_node_set(size_t version)
{
    char *text = node_set_text(version);
    bool ok = text != NULL && post_json("/v3/kv/put", put_request("/bench/doc", text));
    free(text);
    return ok;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank percentile Q (0-1) of COUNT sorted values. */
static double percentile(const double *sorted, size_t count, double q)
{
    size_t rank = (size_t)ceil(q * (double)count);
    return sorted[rank > 0 ? rank - 1 : 0];
}

static int measure_put_to_publish(size_t puts)
{
    shmring_t *readers[SYNCED_RINGS] = {NULL};
    int status = -1;
    if (!put_node_set(0)) {
        fail("cannot put into etcd at %s", run_state.url);
        return -1;
    }
    for (int r = 0; r < SYNCED_RINGS; r++) {
        char *const argv[] = {(char *)RINGBENCH_RINGCTL,
                              (char *)"-r",
                              (char *)scratch_ring((enum ring_kind)(RING_SYNC_A + r)),
                              (char *)"sync",
                              (char *)"--etcd",
                              run_state.url,
                              (char *)"--key",
                              (char *)"/bench/doc",
                              NULL};
        run_state.syncs[r] = spawn(argv);
        if (run_state.syncs[r] < 0)
            goto out;
    }
    /* Each ring appears with the first publication of its sync. */
    double deadline = now_seconds() + START_SECONDS;
    for (int r = 0; r < SYNCED_RINGS; r++) {
        while (shmring_open(scratch_ring((enum ring_kind)(RING_SYNC_A + r)),
                            &readers[r]) != 0) {
            if (now_seconds() > deadline) {
                fail("ringctl sync did not publish ring '%s'",
                     scratch_ring((enum ring_kind)(RING_SYNC_A + r)));
                goto out;
            }
            sleep_ms(10);
        }
    }
    for (size_t n = 1; n <= puts; n++) {
        uint64_t before[SYNCED_RINGS];
        for (int r = 0; r < SYNCED_RINGS; r++)
            before[r] = shmring_generation(readers[r]);
        double start = now_seconds();
        if (!put_node_set(n)) {
            fail("cannot put into etcd at %s", run_state.url);
            goto out;
        }
        int pending = SYNCED_RINGS;
        bool seen[SYNCED_RINGS] = {false};
        while (pending > 0) {
            double now = now_seconds();
            for (int r = 0; r < SYNCED_RINGS; r++) {
                if (!seen[r] && shmring_generation(readers[r]) != before[r]) {
                    seen[r] = true;
                    pending--;
                    result.per_ring_ms[(n - 1) * SYNCED_RINGS + (size_t)r] =
                        (now - start) * 1000;
                }
            }
            if (pending == 0)
                result.all_rings_ms[n - 1] = (now - start) * 1000;
            else if (now - start > PUBLISH_SECONDS) {
                fail("put %zu reached only %d of %d rings in %.0f s", n,
                     SYNCED_RINGS - pending, SYNCED_RINGS, PUBLISH_SECONDS);
                goto out;
            }
            /* Polls as a worker's lookups would, without taking a core from sync. */
            sleep_ms(0.05);
        }
    }
    result.puts = puts;
    status = 0;
out:
    for (int r = 0; r < SYNCED_RINGS; r++) {
        shmring_close(readers[r]);
        stop(&run_state.syncs[r]);
    }
    return status;
}

static int measure_reread(size_t nodes, int reps)
{
    json_t *ops = json_array();
    for (size_t i = 0; i < nodes; i++) {
        char key[32], address[48], value[96];
        snprintf(key, sizeof(key), "/big/node-%05zu", i);
        node_address(i, address);
        snprintf(value, sizeof(value), "{\"address\": \"%s\", \"id\": %zu}", address,
                 i + 1);
        json_array_append_new(ops,
                              json_pack("{so}", "request_put", put_request(key, value)));
        if (json_array_size(ops) == TXN_OPS || i + 1 == nodes) {
            if (!post_json("/v3/kv/txn", json_pack("{so}", "success", ops))) {
                fail("cannot write %zu keys into etcd", nodes);
                return -1;
            }
            ops = json_array();
        }
    }
    json_decref(ops);
    const char *ring = scratch_ring(RING_SYNC_BIG);
    for (int rep = 0; rep < reps; rep++) {
        int err = shmring_ring_destroy(ring, NULL);
        (void)err; /* SHMRING_ENOENT the first time */
        char *const argv[] = {(char *)RINGBENCH_RINGCTL,
                              (char *)"-r",
                              (char *)ring,
                              (char *)"sync",
                              (char *)"--once",
                              (char *)"--etcd",
                              run_state.url,
                              (char *)"--prefix",
                              (char *)"/big/",
                              NULL};
        double start = now_seconds();
        pid_t pid = spawn(argv);
        int status = 0;
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        result.reread_ms[rep] = (now_seconds() - start) * 1000;
        if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fail("ringctl sync --once of %zu keys failed", nodes);
            return -1;
        }
    }
    result.reread_nodes = nodes;
    result.rereads = reps;
    return 0;
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    (void)cold;
    if (RINGBENCH_ETCD[0] == '\0' || access(RINGBENCH_ETCD, X_OK) != 0) {
        snprintf(result.skipped, sizeof(result.skipped),
                 "etcd is not installed (Debian: etcd-server)");
        return 0;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    run_state.curl = curl_easy_init();
    int status = -1;
    if (run_state.curl != NULL && etcd_start() &&
        measure_put_to_publish(cfg->quick ? PUTS_QUICK : PUTS_MAX) == 0 &&
        measure_reread(REREAD_NODES, cfg->quick ? REREADS_QUICK : REREADS_MAX) == 0)
        status = 0;
    stop(&run_state.etcd);
    if (run_state.data_dir[0] != '\0')
        nftw(run_state.data_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    curl_easy_cleanup(run_state.curl);
    scratch_ring_remove(RING_SYNC_BIG);
    for (int r = 0; r < SYNCED_RINGS; r++)
        scratch_ring_remove((enum ring_kind)(RING_SYNC_A + r));
    return status;
}

static void print(const struct config *cfg)
{
    (void)cfg;
    printf("\n7. ringctl sync following a local etcd (one member on loopback)\n");
    if (result.skipped[0] != '\0') {
        printf("skipped: %s\n", result.skipped);
        return;
    }
    size_t samples = result.puts * SYNCED_RINGS;
    qsort(result.per_ring_ms, samples, sizeof(double), compare_doubles);
    qsort(result.all_rings_ms, result.puts, sizeof(double), compare_doubles);
    printf("put-to-publish of a %d-node set, %zu puts, %d synced rings (until a reader "
           "handle answers from the new generation):\n",
           PUT_NODES, result.puts, SYNCED_RINGS);
    printf("%-24s%10s%10s%10s\n", "", "p50 ms", "p99 ms", "max ms");
    printf("%-24s%10.2f%10.2f%10.2f\n", "each ring",
           percentile(result.per_ring_ms, samples, 0.5),
           percentile(result.per_ring_ms, samples, 0.99),
           result.per_ring_ms[samples - 1]);
    printf("%-24s%10.2f%10.2f%10.2f\n", "all three rings",
           percentile(result.all_rings_ms, result.puts, 0.5),
           percentile(result.all_rings_ms, result.puts, 0.99),
           result.all_rings_ms[result.puts - 1]);
    char nodes[32];
    double reread[REREADS_MAX];
    memcpy(reread, result.reread_ms, sizeof(reread));
    qsort(reread, (size_t)result.rereads, sizeof(double), compare_doubles);
    printf("full re-read of a %s-key prefix (ringctl sync --once into a new ring, "
           "process start to exit): best %.0f ms, median %.0f ms of %d\n",
           group_digits(result.reread_nodes, nodes), reread[0],
           reread[result.rereads / 2], result.rereads);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    if (result.skipped[0] != '\0') {
        json_object_set_new(root, "sync", json_pack("{ss}", "skipped", result.skipped));
        return;
    }
    size_t samples = result.puts * SYNCED_RINGS;
    qsort(result.per_ring_ms, samples, sizeof(double), compare_doubles);
    qsort(result.all_rings_ms, result.puts, sizeof(double), compare_doubles);
    json_t *reread = json_array();
    for (int i = 0; i < result.rereads; i++)
        json_array_append_new(reread, json_real(result.reread_ms[i] / 1000));
    json_object_set_new(
        root, "sync",
        json_pack(
            "{sIsIs{soso}s{soso}sIso}", "nodes", (json_int_t)PUT_NODES, "puts",
            (json_int_t)result.puts, "put_to_publish_each_ring_seconds", "p50",
            json_real(percentile(result.per_ring_ms, samples, 0.5) / 1000), "p99",
            json_real(percentile(result.per_ring_ms, samples, 0.99) / 1000),
            "put_to_publish_all_rings_seconds", "p50",
            json_real(percentile(result.all_rings_ms, result.puts, 0.5) / 1000), "p99",
            json_real(percentile(result.all_rings_ms, result.puts, 0.99) / 1000),
            "reread_nodes", (json_int_t)result.reread_nodes, "reread_seconds", reread));
}

BENCHMARK(sync, .early = true);
