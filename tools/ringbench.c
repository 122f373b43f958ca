/*
 * ringbench: measures shmring on the machine at hand, next to its floors and its peers.
 *
 * One section per measurement:
 *   1. the cost of a lookup through the reader library, for each algorithm and node
 *      count, on hot and on cold keys, three ways (the whole node, its id only, ids
 *      in batches), in the same runs as its floors (the key hash alone; the same
 *      call on an in-process copy of the same snapshot) and its peers (libmemcached's
 *      weighted ketama, a textbook ring);
 *   2. lookups per second with 1, 2 and nproc worker processes sharing one ring;
 *   3. publish time;
 *   4. ringctl's peak memory while it loads a large node set;
 *   5. balance and 6. disruption of each algorithm.
 * Every comparison is a ratio of two figures measured in this run, and each target of
 * issue 5 is printed with PASS or MISS. Misses are results, not failures: the exit
 * status is 0 whenever the benchmark ran, 1 on an error and 2 on a usage error.
 *
 * Every contender runs over the same key arrays. Keys are 8-64 random bytes from
 * splitmix64 with a fixed seed; the hot set is the first 1,024 keys (it stays in L1),
 * the cold set is millions of keys in one buffer, read on from where the previous
 * measurement stopped so that no measurement finds its keys in the cache. Nothing is
 * pinned: the figures are what an unpinned worker would see.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <nettle/md5.h>
/* The floor is xxh3 as the library compiles it: inlined, not called. */
#define XXH_INLINE_ALL
#include <xxhash.h>
#ifdef RINGBENCH_HAVE_LIBMEMCACHED
#include <libmemcached/memcached.h>
#endif

#include "shmring.h"
#include "shmring_ctl.h"

#ifndef RINGBENCH_RINGCTL
#error "RINGBENCH_RINGCTL must name the ringctl binary (tools/CMakeLists.txt sets it)"
#endif

enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1,
    EXIT_USAGE = 2,
};

#define SEED UINT64_C(0x5eed0005)
#define KEY_MIN 8
#define KEY_MAX 64
#define HOT_KEYS 1024
/* 4M keys of 36 bytes on average: about 150 MiB, far beyond any last-level cache. */
#define COLD_KEYS (4u << 20)
#define QUICK_COLD_KEYS (1u << 20)
/* Cold measurements read this many consecutive keys between two clock readings. */
#define COLD_CHUNK 16384
#define NODE_COUNTS_MAX 16
#define REPS_MAX 5
#define WORKERS_MAX 256
#define WORKER_COUNTS_MAX 3
/* libmemcached's ketama is compared up to this many servers. */
#define LIBMEMCACHED_SERVERS_MAX 100
#define TEXTBOOK_VNODES 160
#define DISRUPTION_NODES 100
#define DISRUPTION_KEYS 1000000
/* Keys compared between implementations that must agree key for key. */
#define AGREEMENT_KEYS 100000
/* Publications at most this large are timed several times, larger ones once. */
#define PUBLISH_REPEAT_MAX 10000

static const size_t default_node_counts[] = {10, 100, 1000, 10000, 100000};
static const size_t quick_node_counts[] = {10, 1000};
static const size_t ringctl_node_counts[] = {10000, 100000};
static const size_t quick_ringctl_node_counts[] = {10000};

/* ---- Configuration and results ------------------------------------------- */

enum algorithm_index {
    ALG_RING,
    ALG_MAGLEV,
    ALG_KETAMA,
    ALGORITHMS,
};

static const shmring_algorithm_t algorithms[ALGORITHMS] = {
    SHMRING_ALGORITHM_RING, SHMRING_ALGORITHM_MAGLEV, SHMRING_ALGORITHM_KETAMA};

/*
 * How section 1 calls each algorithm: through the reader library or on an in-process
 * copy of the same snapshot, asking for the whole node (strings copied), its id only,
 * or the ids of BATCH_KEYS keys per call.
 */
enum lookup_kind {
    K_READER,
    K_READER_ID,
    K_READER_BATCH,
    K_LOCAL,
    K_LOCAL_ID,
    K_LOCAL_BATCH,
    KINDS,
};

#define BATCH_KEYS 16

/* Everything that section 1 times, in the order it prints them. */
enum contender_id {
    C_XXH3_FLOOR,
    C_MD5_FLOOR,
    C_ALGORITHM_FIRST,
    C_TEXTBOOK = C_ALGORITHM_FIRST + ALGORITHMS * KINDS,
    C_LIBMEMCACHED,
    CONTENDERS,
};

static const char *const contender_names[CONTENDERS] = {
    "xxh3 floor",         "md5 floor",           "ring reader",
    "ring reader id",     "ring reader batch",   "ring in-process",
    "ring in-process id", "ring in-proc. batch", "maglev reader",
    "maglev reader id",   "maglev reader batch", "maglev in-process",
    "maglev in-proc. id", "maglev in-p. batch",  "ketama reader",
    "ketama reader id",   "ketama reader batch", "ketama in-process",
    "ketama in-proc. id", "ketama in-p. batch",  "textbook ring",
    "libmemcached",
};

static const char *const contender_keys[CONTENDERS] = {
    "xxh3_floor",           "md5_floor",
    "ring_reader",          "ring_reader_id",
    "ring_reader_batch",    "ring_in_process",
    "ring_in_process_id",   "ring_in_process_batch",
    "maglev_reader",        "maglev_reader_id",
    "maglev_reader_batch",  "maglev_in_process",
    "maglev_in_process_id", "maglev_in_process_batch",
    "ketama_reader",        "ketama_reader_id",
    "ketama_reader_batch",  "ketama_in_process",
    "ketama_in_process_id", "ketama_in_process_batch",
    "textbook_ring",        "libmemcached_ketama",
};

static enum contender_id contender_of(int alg, enum lookup_kind kind)
{
    return (enum contender_id)(C_ALGORITHM_FIRST + alg * KINDS + kind);
}

/* The key-hash floor of an algorithm: ketama hashes keys with MD5, the others xxh3. */
static enum contender_id floor_of(int alg)
{
    return alg == ALG_KETAMA ? C_MD5_FLOOR : C_XXH3_FLOOR;
}

enum temperature {
    HOT,
    COLD,
    TEMPERATURES,
};

static const char *const temperature_names[TEMPERATURES] = {"hot", "cold"};

struct config {
    bool quick;
    bool json;
    size_t node_counts[NODE_COUNTS_MAX];
    size_t node_count_n;
    size_t publish_counts[NODE_COUNTS_MAX];
    size_t publish_count_n;
    size_t ringctl_counts[NODE_COUNTS_MAX];
    size_t ringctl_count_n;
    size_t cold_keys;
    /* Section 1: runs per figure (the median is kept), seconds per run. */
    int reps;
    double run_seconds;
    double warmup_seconds;
    /* Section 3: timed publications (the median is kept) of sets of up to
     * PUBLISH_REPEAT_MAX nodes; larger sets are timed once. */
    int publish_reps;
    /* Section 2: windows per worker count (the median is kept), seconds each. */
    int window_reps;
    double window_seconds;
    long cpus;
};

struct publish_result {
    bool measured;
    double seconds;
    uint64_t bytes;
    uint32_t points;
};

struct ringctl_result {
    double seconds;
    long max_rss_kib;
};

struct disruption_result {
    double added;
    double removed;
};

struct agreement {
    uint64_t keys;
    uint64_t equal;
};

struct results {
    /* Section 1: ns per lookup; NAN where not measured. */
    double cost[TEMPERATURES][NODE_COUNTS_MAX][CONTENDERS];
    struct agreement ketama_libmemcached;
    struct agreement ring_textbook;
    double balance[ALGORITHMS][NODE_COUNTS_MAX];
    /* Section 2. */
    size_t worker_counts[WORKER_COUNTS_MAX];
    size_t worker_count_n;
    double worker_rate[WORKER_COUNTS_MAX];
    /* Sections 3, 4 and 6. */
    struct publish_result publish[ALGORITHMS][NODE_COUNTS_MAX];
    struct ringctl_result ringctl[NODE_COUNTS_MAX];
    struct disruption_result disruption[ALGORITHMS];
};

/* ---- Small helpers --------------------------------------------------------- */

/* What every measured loop adds its answers to, so that no loop is optimized away. */
static volatile uint64_t sink;

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("ringbench: error: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The 1-minute load average: other work on the machine skews every figure. */
static double load_average(void)
{
    double load[1];
    return getloadavg(load, 1) == 1 ? load[0] : NAN;
}

/* splitmix64 (Steele, Lea and Flood): a fixed seed gives the same keys every run. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double median(double *values, int count)
{
    for (int i = 1; i < count; i++) {
        double v = values[i];
        int j = i;
        for (; j > 0 && values[j - 1] > v; j--)
            values[j] = values[j - 1];
        values[j] = v;
    }
    return count % 2 ? values[count / 2]
                     : (values[count / 2 - 1] + values[count / 2]) / 2.0;
}

/* Writes COUNT with thousands separators ("100,000"). */
static const char *group_digits(size_t count, char buffer[32])
{
    char digits[24];
    int length = snprintf(digits, sizeof(digits), "%zu", count);
    char *out = buffer;
    for (int i = 0; i < length; i++) {
        if (i > 0 && (length - i) % 3 == 0)
            *out++ = ',';
        *out++ = digits[i];
    }
    *out = '\0';
    return buffer;
}

static void node_name(size_t index, char name[32])
{
    snprintf(name, 32, "node-%zu", index);
}

static void node_host(size_t index, char host[32])
{
    snprintf(host, 32, "10.%u.%u.%u", (unsigned)(index >> 16) & 255,
             (unsigned)(index >> 8) & 255, (unsigned)index & 255);
}

static void node_address(size_t index, char address[48])
{
    char host[32];
    node_host(index, host);
    snprintf(address, 48, "%s:11211", host);
}

/* ---- Rings of this run, and their removal on exit or on a signal ----------- */

enum ring_kind {
    RING_LOOKUP_RING,
    RING_LOOKUP_MAGLEV,
    RING_LOOKUP_KETAMA,
    RING_WORKERS,
    RING_PUBLISH,
    RING_RINGCTL,
    RING_KINDS,
};

static const char *const ring_suffixes[RING_KINDS] = {"ring",    "maglev",  "ketama",
                                                      "workers", "publish", "ringctl"};

static char ring_names[RING_KINDS][64];

/*
 * Held by the main thread while it holds a writer, runs ringctl or owns a temporary
 * file, and by the signal thread while it cleans up: shmring_ring_destroy() waits for
 * the ring's writer lock, so cleaning up in the middle of the main thread's own
 * publication would wait forever.
 */
static pthread_mutex_t cleanup_lock = PTHREAD_MUTEX_INITIALIZER;
/* The node-set file handed to ringctl, while it exists. */
static char temporary_path[64];
/* The signal mask of the process before ringbench blocked the signals it handles;
 * child processes get it back. */
static sigset_t original_mask;

static void ring_names_init(void)
{
    for (int i = 0; i < RING_KINDS; i++)
        snprintf(ring_names[i], sizeof(ring_names[i]), "ringbench-%ld-%s", (long)getpid(),
                 ring_suffixes[i]);
}

/* Removes every ring of this run and the temporary file; the caller holds the lock. */
static void cleanup_locked(void)
{
    for (int i = 0; i < RING_KINDS; i++) {
        int err = shmring_ring_destroy(ring_names[i], NULL);
        (void)err; /* SHMRING_ENOENT: this run never created it, or it is gone. */
    }
    if (temporary_path[0] != '\0')
        unlink(temporary_path);
    temporary_path[0] = '\0';
}

/* Removes one ring of this run once its section is done, to give back its memory. */
static void ring_remove(enum ring_kind kind)
{
    pthread_mutex_lock(&cleanup_lock);
    int err = shmring_ring_destroy(ring_names[kind], NULL);
    (void)err;
    pthread_mutex_unlock(&cleanup_lock);
}

static void cleanup(void)
{
    pthread_mutex_lock(&cleanup_lock);
    cleanup_locked();
    pthread_mutex_unlock(&cleanup_lock);
}

/* Waits for SIGINT, SIGTERM or SIGHUP, removes what the run created and exits. */
static void *signal_thread(void *arg)
{
    const sigset_t *handled = arg;
    int sig;
    if (sigwait(handled, &sig) != 0)
        return NULL;
    pthread_mutex_lock(&cleanup_lock);
    cleanup_locked();
    _exit(128 + sig);
}

static int signals_start(void)
{
    static sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGHUP);
    int err = pthread_sigmask(SIG_BLOCK, &handled, &original_mask);
    pthread_t thread;
    if (err == 0)
        err = pthread_create(&thread, NULL, signal_thread, &handled);
    if (err == 0)
        err = pthread_detach(thread);
    if (err != 0) {
        fail("cannot start the signal thread: %s", strerror(err));
        return -1;
    }
    return 0;
}

/* In a forked child: the default reaction to signals again. */
static void child_signals_restore(void)
{
    pthread_sigmask(SIG_SETMASK, &original_mask, NULL);
}

/* ---- Keys ------------------------------------------------------------------ */

/* Keys back to back in one buffer; key i is bytes[offset[i] .. + length[i]). */
struct keyset {
    uint8_t *bytes;
    uint32_t *offset;
    uint8_t *length;
    size_t count;
    size_t total_bytes;
};

static inline const uint8_t *key_at(const struct keyset *keys, size_t i)
{
    return keys->bytes + keys->offset[i];
}

static int keyset_make(size_t count, struct keyset *out)
{
    uint64_t state = SEED;
    memset(out, 0, sizeof(*out));
    out->offset = malloc(count * sizeof(*out->offset));
    out->length = malloc(count);
    if (out->offset == NULL || out->length == NULL)
        goto nomem;
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        out->length[i] =
            (uint8_t)(KEY_MIN + splitmix64(&state) % (KEY_MAX - KEY_MIN + 1));
        out->offset[i] = (uint32_t)total;
        total += out->length[i];
    }
    out->bytes = malloc(total + sizeof(uint64_t));
    if (out->bytes == NULL)
        goto nomem;
    for (size_t at = 0; at < total; at += sizeof(uint64_t)) {
        uint64_t word = splitmix64(&state);
        memcpy(out->bytes + at, &word, sizeof(word));
    }
    out->count = count;
    out->total_bytes = total;
    return 0;
nomem:
    free(out->offset);
    free(out->length);
    memset(out, 0, sizeof(*out));
    fail("cannot allocate %zu keys", count);
    return -1;
}

static void keyset_free(struct keyset *keys)
{
    free(keys->bytes);
    free(keys->offset);
    free(keys->length);
}

/* The first COUNT keys of ALL, as a key set of their own. */
static struct keyset keyset_prefix(const struct keyset *all, size_t count)
{
    struct keyset prefix = *all;
    prefix.count = count;
    prefix.total_bytes = count < all->count ? all->offset[count] : all->total_bytes;
    return prefix;
}

/* ---- Node sets and rings --------------------------------------------------- */

static int nodeset_make(shmring_algorithm_t algorithm, size_t nodes,
                        shmring_nodeset_t **out)
{
    shmring_nodeset_t *set;
    int err = shmring_nodeset_new(&set);
    if (err != 0) {
        fail("cannot create a node set: %s", shmring_strerror(err));
        return -1;
    }
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = algorithm;
    if (algorithm == SHMRING_ALGORITHM_KETAMA)
        params.hash = SHMRING_HASH_MD5;
    err = shmring_nodeset_set_params(set, &params);
    for (size_t i = 0; i < nodes && err == 0; i++) {
        char name[32], address[48];
        node_name(i, name);
        node_address(i, address);
        err = shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL);
    }
    if (err != 0) {
        fail("cannot make a %s node set of %zu nodes: %s",
             shmring_algorithm_name(algorithm), nodes, shmring_strerror(err));
        shmring_nodeset_free(set);
        return -1;
    }
    *out = set;
    return 0;
}

/* Publishes SET as the next generation of RING, creating the ring if needed. */
static int ring_publish(const char *ring, const shmring_nodeset_t *set)
{
    pthread_mutex_lock(&cleanup_lock);
    shmring_writer_t *writer;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer);
    if (err == 0) {
        err = shmring_writer_publish(writer, set, NULL);
        shmring_writer_close(writer);
    }
    pthread_mutex_unlock(&cleanup_lock);
    if (err != 0) {
        fail("cannot publish ring '%s': %s", ring, shmring_strerror(err));
        return -1;
    }
    return 0;
}

static int ring_publish_new(const char *ring, shmring_algorithm_t algorithm, size_t nodes)
{
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, nodes, &set) != 0)
        return -1;
    int err = ring_publish(ring, set);
    shmring_nodeset_free(set);
    return err;
}

/* ---- Contenders: one loop each, over keys [first, first + count) ----------- */

typedef uint64_t (*batch_fn)(const void *context, const struct keyset *keys, size_t first,
                             size_t count);

struct contender {
    batch_fn run; /* NULL: not measured */
    const void *context;
};

static uint64_t run_xxh3_floor(const void *context, const struct keyset *keys,
                               size_t first, size_t count)
{
    (void)context;
    uint64_t sum = 0;
    for (size_t i = first; i < first + count; i++)
        sum += XXH3_64bits(key_at(keys, i), keys->length[i]);
    return sum;
}

static uint32_t md5_word(const uint8_t *key, size_t len)
{
    struct md5_ctx ctx;
    uint8_t digest[MD5_DIGEST_SIZE];
    md5_init(&ctx);
    md5_update(&ctx, len, key);
    md5_digest(&ctx, MD5_DIGEST_SIZE, digest);
    return (uint32_t)digest[0] | (uint32_t)digest[1] << 8 | (uint32_t)digest[2] << 16 |
           (uint32_t)digest[3] << 24;
}

static uint64_t run_md5_floor(const void *context, const struct keyset *keys,
                              size_t first, size_t count)
{
    (void)context;
    uint64_t sum = 0;
    for (size_t i = first; i < first + count; i++)
        sum += md5_word(key_at(keys, i), keys->length[i]);
    return sum;
}

static uint64_t run_reader(const void *context, const struct keyset *keys, size_t first,
                           size_t count)
{
    shmring_t *ring = (shmring_t *)(uintptr_t)context;
    uint64_t sum = 0;
    shmring_node_t node;
    for (size_t i = first; i < first + count; i++) {
        if (shmring_lookup(ring, key_at(keys, i), keys->length[i], &node) == 0)
            sum += node.id;
    }
    return sum;
}

static uint64_t run_reader_id(const void *context, const struct keyset *keys,
                              size_t first, size_t count)
{
    shmring_t *ring = (shmring_t *)(uintptr_t)context;
    uint64_t sum = 0;
    uint32_t id;
    for (size_t i = first; i < first + count; i++) {
        if (shmring_lookup_id(ring, key_at(keys, i), keys->length[i], &id) == 0)
            sum += id;
    }
    return sum;
}

/* Fills the arrays a batch call takes for the keys FIRST .. FIRST + COUNT - 1. */
static void batch_prepare(const struct keyset *keys, size_t first, size_t count,
                          const void **pointers, size_t *lengths)
{
    for (size_t i = 0; i < count; i++) {
        pointers[i] = key_at(keys, first + i);
        lengths[i] = keys->length[first + i];
    }
}

/* A batch lookup through the reader or on an in-process copy. */
typedef int (*ids_fn)(const void *subject, const void *const *keys, const size_t *lens,
                      size_t count, uint32_t *ids);

static int reader_ids(const void *subject, const void *const *keys, const size_t *lens,
                      size_t count, uint32_t *ids)
{
    return shmring_lookup_ids((shmring_t *)(uintptr_t)subject, keys, lens, count, ids);
}

/*
 * Looks the keys up BATCH_KEYS at a time with LOOKUP. Inline, and always called with
 * a constant LOOKUP, so that the call it makes is direct, as a caller's would be.
 */
static inline __attribute__((always_inline)) uint64_t
run_batches(ids_fn lookup, const void *subject, const struct keyset *keys, size_t first,
            size_t count)
{
    const void *pointers[BATCH_KEYS];
    size_t lengths[BATCH_KEYS];
    uint32_t ids[BATCH_KEYS];
    uint64_t sum = 0;
    for (size_t at = first; at < first + count; at += BATCH_KEYS) {
        size_t batch = first + count - at < BATCH_KEYS ? first + count - at : BATCH_KEYS;
        batch_prepare(keys, at, batch, pointers, lengths);
        if (lookup(subject, pointers, lengths, batch, ids) == 0) {
            for (size_t i = 0; i < batch; i++)
                sum += ids[i];
        }
    }
    return sum;
}

static uint64_t run_reader_batch(const void *context, const struct keyset *keys,
                                 size_t first, size_t count)
{
    return run_batches(reader_ids, context, keys, first, count);
}

static uint64_t run_in_process(const void *context, const struct keyset *keys,
                               size_t first, size_t count)
{
    uint64_t sum = 0;
    shmring_node_t node;
    for (size_t i = first; i < first + count; i++) {
        if (shmring_snapshot_lookup(context, key_at(keys, i), keys->length[i], &node) ==
            0)
            sum += node.id;
    }
    return sum;
}

static uint64_t run_in_process_id(const void *context, const struct keyset *keys,
                                  size_t first, size_t count)
{
    uint64_t sum = 0;
    uint32_t id;
    for (size_t i = first; i < first + count; i++) {
        if (shmring_snapshot_lookup_id(context, key_at(keys, i), keys->length[i], &id) ==
            0)
            sum += id;
    }
    return sum;
}

static uint64_t run_in_process_batch(const void *context, const struct keyset *keys,
                                     size_t first, size_t count)
{
    return run_batches(shmring_snapshot_lookup_ids, context, keys, first, count);
}

/*
 * The textbook ring: TEXTBOOK_VNODES points per node at xxh3(name || le32(i)), one
 * sorted array of points, the owners in a parallel array, a lookup by binary search
 * for the first point >= xxh3(key), wrapping to the first point.
 */
struct textbook {
    uint64_t *points;
    uint32_t *owners;
    size_t count;
};

struct textbook_point {
    uint64_t point;
    uint32_t owner;
};

static int textbook_point_compare(const void *a, const void *b)
{
    const struct textbook_point *x = a, *y = b;
    if (x->point != y->point)
        return x->point < y->point ? -1 : 1;
    return (x->owner > y->owner) - (x->owner < y->owner);
}

static int textbook_build(size_t nodes, struct textbook *t)
{
    size_t count = nodes * TEXTBOOK_VNODES;
    if (count == 0) {
        fail("a textbook ring needs at least one node");
        return -1;
    }
    struct textbook_point *all = malloc(count * sizeof(*all));
    t->points = malloc(count * sizeof(*t->points));
    t->owners = malloc(count * sizeof(*t->owners));
    t->count = count;
    if (all == NULL || t->points == NULL || t->owners == NULL) {
        free(all);
        free(t->points);
        free(t->owners);
        fail("cannot allocate a textbook ring of %zu points", count);
        return -1;
    }
    size_t k = 0;
    for (size_t n = 0; n < nodes; n++) {
        uint8_t text[40];
        char name[32];
        node_name(n, name);
        size_t length = strlen(name);
        memcpy(text, name, length);
        for (uint32_t v = 0; v < TEXTBOOK_VNODES; v++) {
            text[length] = (uint8_t)v;
            text[length + 1] = (uint8_t)(v >> 8);
            text[length + 2] = (uint8_t)(v >> 16);
            text[length + 3] = (uint8_t)(v >> 24);
            all[k].point = XXH3_64bits(text, length + 4);
            all[k].owner = (uint32_t)n;
            k++;
        }
    }
    qsort(all, count, sizeof(*all), textbook_point_compare);
    for (size_t i = 0; i < count; i++) {
        t->points[i] = all[i].point;
        t->owners[i] = all[i].owner;
    }
    free(all);
    return 0;
}

static void textbook_free(struct textbook *t)
{
    free(t->points);
    free(t->owners);
    memset(t, 0, sizeof(*t));
}

static uint32_t textbook_owner(const struct textbook *t, uint64_t hash)
{
    size_t low = 0, high = t->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (t->points[middle] < hash)
            low = middle + 1;
        else
            high = middle;
    }
    return t->owners[low == t->count ? 0 : low];
}

static uint64_t run_textbook(const void *context, const struct keyset *keys, size_t first,
                             size_t count)
{
    const struct textbook *t = context;
    uint64_t sum = 0;
    for (size_t i = first; i < first + count; i++)
        sum += textbook_owner(t, XXH3_64bits(key_at(keys, i), keys->length[i]));
    return sum;
}

#ifdef RINGBENCH_HAVE_LIBMEMCACHED
/*
 * libmemcached with weighted ketama over the same servers: node i is 10.a.b.c port
 * 11211, weight 1. Ketama is switched on after the servers are added, because
 * libmemcached rebuilds its whole continuum on every add once it is on.
 */
static int libmemcached_make(size_t servers, memcached_st **out)
{
    memcached_st *mc = memcached_create(NULL);
    if (mc == NULL) {
        fail("memcached_create failed");
        return -1;
    }
    memcached_return_t rc = MEMCACHED_SUCCESS;
    for (size_t i = 0; i < servers && rc == MEMCACHED_SUCCESS; i++) {
        char host[32];
        node_host(i, host);
        rc = memcached_server_add_with_weight(mc, host, 11211, 1);
    }
    if (rc == MEMCACHED_SUCCESS)
        rc = memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                    MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
    if (rc == MEMCACHED_SUCCESS)
        rc = memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    if (rc != MEMCACHED_SUCCESS) {
        fail("libmemcached with %zu servers: %s", servers, memcached_strerror(mc, rc));
        memcached_free(mc);
        return -1;
    }
    *out = mc;
    return 0;
}

static uint64_t run_libmemcached(const void *context, const struct keyset *keys,
                                 size_t first, size_t count)
{
    const memcached_st *mc = context;
    uint64_t sum = 0;
    for (size_t i = first; i < first + count; i++)
        sum +=
            memcached_generate_hash(mc, (const char *)key_at(keys, i), keys->length[i]);
    return sum;
}
#endif

/* ---- Timing ------------------------------------------------------------------ */

/*
 * Runs C over KEYS for at least SECONDS and returns ns per lookup. Keys are taken in
 * chunks from *CURSOR on, wrapping at the end of the set; the clock is read once per
 * chunk.
 */
static double measure(const struct contender *c, const struct keyset *keys,
                      size_t *cursor, double seconds)
{
    size_t chunk = keys->count < COLD_CHUNK ? keys->count : COLD_CHUNK;
    uint64_t lookups = 0, sum = 0;
    double start = now_seconds(), elapsed;
    do {
        if (*cursor + chunk > keys->count)
            *cursor = 0;
        sum += c->run(c->context, keys, *cursor, chunk);
        *cursor += chunk;
        lookups += chunk;
        elapsed = now_seconds() - start;
    } while (elapsed < seconds);
    sink += sum;
    return elapsed * 1e9 / (double)lookups;
}

/*
 * Times every contender on the same keys: a warm-up run each, then REPS rounds in
 * which each contender runs once, so that a slow phase of the machine falls on all
 * of them alike. NS gets each contender's median (NAN if it has no loop).
 */
static void contest(const struct config *cfg, const struct contender *contenders,
                    const struct keyset *keys, size_t *cursor, double *ns)
{
    double samples[CONTENDERS][REPS_MAX];
    for (int i = 0; i < CONTENDERS; i++) {
        if (contenders[i].run != NULL)
            (void)measure(&contenders[i], keys, cursor, cfg->warmup_seconds);
    }
    for (int rep = 0; rep < cfg->reps; rep++) {
        for (int i = 0; i < CONTENDERS; i++) {
            if (contenders[i].run != NULL)
                samples[i][rep] = measure(&contenders[i], keys, cursor, cfg->run_seconds);
        }
    }
    for (int i = 0; i < CONTENDERS; i++)
        ns[i] = contenders[i].run != NULL ? median(samples[i], cfg->reps) : NAN;
}

/* ---- Section 1: lookup cost ------------------------------------------------- */

/* Everything the contenders of one node count look keys up in. */
struct lookup_subjects {
    shmring_t *readers[ALGORITHMS];
    void *copies[ALGORITHMS];
    struct textbook textbook;
#ifdef RINGBENCH_HAVE_LIBMEMCACHED
    memcached_st *libmemcached;
#endif
};

static void lookup_subjects_close(struct lookup_subjects *s)
{
    for (int a = 0; a < ALGORITHMS; a++) {
        shmring_close(s->readers[a]);
        free(s->copies[a]);
    }
    textbook_free(&s->textbook);
#ifdef RINGBENCH_HAVE_LIBMEMCACHED
    if (s->libmemcached != NULL)
        memcached_free(s->libmemcached);
#endif
    memset(s, 0, sizeof(*s));
}

/*
 * Publishes each algorithm's ring of NODES nodes, opens it through the reader library
 * and copies its snapshot into this process; builds the textbook ring and
 * libmemcached's continuum over the same nodes.
 */
static int lookup_subjects_open(size_t nodes, struct lookup_subjects *s)
{
    memset(s, 0, sizeof(*s));
    for (int a = 0; a < ALGORITHMS; a++) {
        const char *ring = ring_names[RING_LOOKUP_RING + a];
        if (ring_publish_new(ring, algorithms[a], nodes) != 0)
            goto fail;
        int err = shmring_open(ring, &s->readers[a]);
        if (err != 0) {
            fail("cannot open ring '%s': %s", ring, shmring_strerror(err));
            goto fail;
        }
        uint64_t generation;
        size_t size;
        err = shmring_ring_snapshot(ring, NULL, &generation, &s->copies[a], &size);
        if (err == 0 && s->copies[a] == NULL)
            err = SHMRING_EEMPTY;
        if (err != 0) {
            fail("cannot copy ring '%s': %s", ring, shmring_strerror(err));
            goto fail;
        }
    }
    if (textbook_build(nodes, &s->textbook) != 0)
        goto fail;
#ifdef RINGBENCH_HAVE_LIBMEMCACHED
    if (nodes <= LIBMEMCACHED_SERVERS_MAX &&
        libmemcached_make(nodes, &s->libmemcached) != 0)
        goto fail;
#endif
    return 0;
fail:
    lookup_subjects_close(s);
    return -1;
}

static void lookup_contenders(const struct lookup_subjects *s,
                              struct contender contenders[CONTENDERS])
{
    memset(contenders, 0, CONTENDERS * sizeof(*contenders));
    contenders[C_XXH3_FLOOR].run = run_xxh3_floor;
    contenders[C_MD5_FLOOR].run = run_md5_floor;
    static const batch_fn runs[KINDS] = {
        [K_READER] = run_reader,
        [K_READER_ID] = run_reader_id,
        [K_READER_BATCH] = run_reader_batch,
        [K_LOCAL] = run_in_process,
        [K_LOCAL_ID] = run_in_process_id,
        [K_LOCAL_BATCH] = run_in_process_batch,
    };
    for (int a = 0; a < ALGORITHMS; a++) {
        for (int k = 0; k < KINDS; k++) {
            const void *subject =
                k < K_LOCAL ? (const void *)s->readers[a] : s->copies[a];
            contenders[contender_of(a, (enum lookup_kind)k)] =
                (struct contender){runs[k], subject};
        }
    }
    contenders[C_TEXTBOOK] = (struct contender){run_textbook, &s->textbook};
#ifdef RINGBENCH_HAVE_LIBMEMCACHED
    if (s->libmemcached != NULL)
        contenders[C_LIBMEMCACHED] =
            (struct contender){run_libmemcached, s->libmemcached};
#endif
}

/*
 * Checks that the implementations that must agree do: shmring's ketama with
 * libmemcached (node i is server i), shmring's ring with the textbook ring (same
 * points; they could differ only where two points are equal).
 */
static void check_agreement(const struct lookup_subjects *s, const struct keyset *keys,
                            struct results *res)
{
    size_t count = keys->count;
    if (count > AGREEMENT_KEYS)
        count = AGREEMENT_KEYS;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *key = key_at(keys, i);
        size_t len = keys->length[i];
        shmring_node_t node;
        if (shmring_snapshot_lookup(s->copies[ALG_RING], key, len, &node) == 0) {
            res->ring_textbook.keys++;
            res->ring_textbook.equal +=
                node.id == textbook_owner(&s->textbook, XXH3_64bits(key, len));
        }
#ifdef RINGBENCH_HAVE_LIBMEMCACHED
        if (s->libmemcached != NULL &&
            shmring_snapshot_lookup(s->copies[ALG_KETAMA], key, len, &node) == 0) {
            res->ketama_libmemcached.keys++;
            res->ketama_libmemcached.equal +=
                node.id ==
                memcached_generate_hash(s->libmemcached, (const char *)key, len);
        }
#endif
    }
}

/* Largest keyspace share over the mean share (1 / node count) of a snapshot. */
static double balance_of(const void *snapshot)
{
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    double *shares = malloc(info.node_count * sizeof(*shares));
    if (shares == NULL)
        return NAN;
    shmring_snapshot_shares(snapshot, shares);
    double largest = 0.0;
    for (uint32_t i = 0; i < info.node_count; i++)
        largest = shares[i] > largest ? shares[i] : largest;
    free(shares);
    return largest * (double)info.up_count;
}

static void print_cost_table(const struct config *cfg, const struct results *res,
                             enum temperature t, const struct keyset *keys)
{
    char count[32];
    printf("\n1%c. Lookup cost, ns per lookup, %s keys (%s keys, %.1f MiB)\n",
           t == HOT ? 'a' : 'b', temperature_names[t], group_digits(keys->count, count),
           (double)keys->total_bytes / 1048576.0);
    printf("%-20s", "nodes");
    for (size_t n = 0; n < cfg->node_count_n; n++)
        printf("%10s", group_digits(cfg->node_counts[n], count));
    printf("\n");
    for (int c = 0; c < CONTENDERS; c++) {
        printf("%-20s", contender_names[c]);
        for (size_t n = 0; n < cfg->node_count_n; n++) {
            double ns = res->cost[t][n][c];
            if (isnan(ns))
                printf("%10s", "-");
            else
                printf("%10.1f", ns);
        }
        printf("\n");
    }
}

static int section_lookups(const struct config *cfg, const struct keyset *cold,
                           struct results *res)
{
    struct keyset hot = keyset_prefix(cold, HOT_KEYS);
    size_t cold_cursor = 0;
    for (size_t n = 0; n < cfg->node_count_n; n++) {
        struct lookup_subjects subjects;
        if (lookup_subjects_open(cfg->node_counts[n], &subjects) != 0)
            return -1;
        struct contender contenders[CONTENDERS];
        lookup_contenders(&subjects, contenders);
        size_t hot_cursor = 0;
        contest(cfg, contenders, &hot, &hot_cursor, res->cost[HOT][n]);
        contest(cfg, contenders, cold, &cold_cursor, res->cost[COLD][n]);
        if (cfg->node_counts[n] <= LIBMEMCACHED_SERVERS_MAX)
            check_agreement(&subjects, cold, res);
        for (int a = 0; a < ALGORITHMS; a++)
            res->balance[a][n] = balance_of(subjects.copies[a]);
        lookup_subjects_close(&subjects);
    }
    for (int a = 0; a < ALGORITHMS; a++)
        ring_remove((enum ring_kind)(RING_LOOKUP_RING + a));
    if (!cfg->json) {
        print_cost_table(cfg, res, HOT, &hot);
        print_cost_table(cfg, res, COLD, cold);
        if (res->ring_textbook.keys > 0)
            printf("agreement: shmring ring = textbook ring on %" PRIu64 " of %" PRIu64
                   " keys\n",
                   res->ring_textbook.equal, res->ring_textbook.keys);
        if (res->ketama_libmemcached.keys > 0)
            printf("agreement: shmring ketama = libmemcached on %" PRIu64 " of %" PRIu64
                   " keys\n",
                   res->ketama_libmemcached.equal, res->ketama_libmemcached.keys);
        fflush(stdout);
    }
    return 0;
}

/* ---- Section 2: worker processes ------------------------------------------- */

/* What a worker writes into the report pipe: once when ready, once when done. */
struct worker_report {
    int64_t error;
    uint64_t lookups;
    uint64_t ns;
};

static int read_full(int fd, void *buffer, size_t size)
{
    uint8_t *p = buffer;
    while (size > 0) {
        ssize_t got = read(fd, p, size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        size -= (size_t)got;
    }
    return 0;
}

static int write_full(int fd, const void *buffer, size_t size)
{
    const uint8_t *p = buffer;
    while (size > 0) {
        ssize_t put = write(fd, p, size);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return -1;
        p += put;
        size -= (size_t)put;
    }
    return 0;
}

/*
 * A worker process: opens the ring itself, as a prefork worker would, reports that it
 * is ready, waits for the start (the end of the start pipe), looks keys up for
 * WINDOW seconds and reports how many it did.
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
    if (write_full(report_fd, &report, sizeof(report)) != 0 || report.error != 0)
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
    _exit(write_full(report_fd, &report, sizeof(report)) == 0 ? EXIT_OK : EXIT_FAILED);
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
        if (read_full(report_pipe[0], &report, sizeof(report)) != 0 ||
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
        if (read_full(report_pipe[0], &report, sizeof(report)) != 0) {
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

static int section_workers(const struct config *cfg, const struct keyset *cold,
                           struct results *res)
{
    const char *ring = ring_names[RING_WORKERS];
    if (ring_publish_new(ring, SHMRING_ALGORITHM_RING, 100) != 0)
        return -1;
    struct keyset hot = keyset_prefix(cold, HOT_KEYS);
    size_t counts[WORKER_COUNTS_MAX] = {1, 2, (size_t)cfg->cpus};
    if (counts[2] > WORKERS_MAX)
        counts[2] = WORKERS_MAX;
    res->worker_count_n = 0;
    for (int i = 0; i < WORKER_COUNTS_MAX; i++) {
        if (i == 0 || counts[i] > res->worker_counts[res->worker_count_n - 1])
            res->worker_counts[res->worker_count_n++] = counts[i];
    }
    /* Rounds of one window per worker count, as section 1 interleaves its
     * contenders: a slow phase of the shared host falls on every count alike. */
    double rates[WORKER_COUNTS_MAX][REPS_MAX];
    for (int rep = 0; rep < cfg->window_reps; rep++) {
        for (size_t w = 0; w < res->worker_count_n; w++) {
            if (workers_run(ring, &hot, res->worker_counts[w], cfg->window_seconds,
                            &rates[w][rep]) != 0)
                return -1;
        }
    }
    for (size_t w = 0; w < res->worker_count_n; w++)
        res->worker_rate[w] = median(rates[w], cfg->window_reps);
    ring_remove(RING_WORKERS);
    if (!cfg->json) {
        printf("\n2. Lookups per second, worker processes sharing ring@100 (hot keys, "
               "%.2f s windows, median of %d interleaved rounds)\n",
               cfg->window_seconds, cfg->window_reps);
        printf("%-10s%16s%16s%14s\n", "workers", "lookups/s", "per worker",
               "vs 1 worker");
        for (size_t w = 0; w < res->worker_count_n; w++) {
            double rate = res->worker_rate[w];
            printf("%-10zu%16.0f%16.0f%13.2fx\n", res->worker_counts[w], rate,
                   rate / (double)res->worker_counts[w], rate / res->worker_rate[0]);
        }
        fflush(stdout);
    }
    return 0;
}

/* ---- Section 3: publish time -------------------------------------------------- */

/*
 * Times shmring_writer_publish() of a prepared node set: building the snapshot,
 * writing the version object, swapping the generation and unlinking the superseded
 * version. A first, untimed publication makes every timed one replace a version of
 * the same size, as a live update does.
 */
static int publish_time(const struct config *cfg, const char *ring,
                        shmring_algorithm_t algorithm, size_t nodes,
                        struct publish_result *out)
{
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, nodes, &set) != 0)
        return -1;
    int reps = nodes <= PUBLISH_REPEAT_MAX ? cfg->publish_reps : 1;
    double seconds[REPS_MAX];
    pthread_mutex_lock(&cleanup_lock);
    shmring_writer_t *writer = NULL;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer);
    if (err == 0)
        err = shmring_writer_publish(writer, set, NULL);
    for (int rep = 0; rep < reps && err == 0; rep++) {
        double start = now_seconds();
        err = shmring_writer_publish(writer, set, NULL);
        seconds[rep] = now_seconds() - start;
    }
    const void *snapshot;
    size_t size;
    if (err == 0)
        err = shmring_writer_snapshot(writer, &snapshot, &size);
    if (err == 0) {
        shmring_snapshot_info_t info;
        shmring_snapshot_info(snapshot, &info);
        out->points = info.point_count;
        out->bytes = size;
        out->seconds = median(seconds, reps);
        out->measured = true;
    }
    shmring_writer_close(writer);
    int destroyed = shmring_ring_destroy(ring, NULL);
    (void)destroyed;
    pthread_mutex_unlock(&cleanup_lock);
    shmring_nodeset_free(set);
    if (err != 0) {
        fail("cannot publish %zu %s nodes: %s", nodes, shmring_algorithm_name(algorithm),
             shmring_strerror(err));
        return -1;
    }
    return 0;
}

static int section_publish(const struct config *cfg, struct results *res)
{
    for (int a = 0; a < ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->publish_count_n; n++) {
            if (publish_time(cfg, ring_names[RING_PUBLISH], algorithms[a],
                             cfg->publish_counts[n], &res->publish[a][n]) != 0)
                return -1;
        }
    }
    if (!cfg->json) {
        printf(
            "\n3. Publish time: shmring_writer_publish of a prepared node set replacing "
            "a version of the same size (build + write + swap; median of %d up to "
            "10,000 nodes, else 1 run)\n",
            cfg->publish_reps);
        printf("%-10s%10s%14s%14s%12s\n", "algorithm", "nodes", "points/slots",
               "snapshot MiB", "seconds");
        for (int a = 0; a < ALGORITHMS; a++) {
            for (size_t n = 0; n < cfg->publish_count_n; n++) {
                const struct publish_result *p = &res->publish[a][n];
                char nodes[32], points[32];
                printf("%-10s%10s%14s%14.1f%12.4f\n",
                       shmring_algorithm_name(algorithms[a]),
                       group_digits(cfg->publish_counts[n], nodes),
                       group_digits(p->points, points), (double)p->bytes / 1048576.0,
                       p->seconds);
            }
        }
        fflush(stdout);
    }
    return 0;
}

/* ---- Section 4: ringctl's peak memory --------------------------------------- */

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

/*
 * Runs the built ringctl to load a node set of NODES nodes into a new scratch ring
 * and reads its peak resident set size from wait4()'s resource usage.
 */
static int ringctl_load(const char *ring, size_t nodes, struct ringctl_result *out)
{
    int status = -1;
    pthread_mutex_lock(&cleanup_lock);
    snprintf(temporary_path, sizeof(temporary_path), "/tmp/ringbench-%ld-XXXXXX",
             (long)getpid());
    int fd = mkstemp(temporary_path);
    if (fd < 0) {
        fail("cannot create a temporary file: %s", strerror(errno));
        temporary_path[0] = '\0';
        goto out;
    }
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        fail("cannot write %s: %s", temporary_path, strerror(errno));
        goto out;
    }
    int written = node_file_write(f, nodes);
    if (fclose(f) != 0 || written != 0) {
        fail("cannot write %s", temporary_path);
        goto out;
    }
    /* execve() takes writable strings. */
    char program[] = "ringctl", ring_option[] = "-r", command[] = "load";
    char ring_name[SHMRING_RING_NAME_MAX + 1];
    snprintf(ring_name, sizeof(ring_name), "%s", ring);
    char *const argv[] = {program, ring_option, ring_name, command, temporary_path, NULL};
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
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
        status = 0;
    else if (WIFEXITED(wstatus))
        fail("%s load of %zu nodes exited with status %d", RINGBENCH_RINGCTL, nodes,
             WEXITSTATUS(wstatus));
    else
        fail("%s load of %zu nodes was killed by signal %d", RINGBENCH_RINGCTL, nodes,
             WTERMSIG(wstatus));
out:
    cleanup_locked();
    pthread_mutex_unlock(&cleanup_lock);
    return status;
}

/*
 * Runs before anything large is allocated. A forked child starts with its parent's
 * resident pages, and exec() folds that high-water mark into the ru_maxrss that
 * wait4() reports, so ringctl started from a grown ringbench would report
 * ringbench's size instead of its own.
 */
static int section_ringctl_measure(const struct config *cfg, struct results *res)
{
    for (size_t n = 0; n < cfg->ringctl_count_n; n++) {
        if (ringctl_load(ring_names[RING_RINGCTL], cfg->ringctl_counts[n],
                         &res->ringctl[n]) != 0)
            return -1;
    }
    return 0;
}

static void section_ringctl_print(const struct config *cfg, const struct results *res)
{
    if (cfg->json)
        return;
    printf("\n4. ringctl load of a JSON node set into a new ring (algorithm ring): "
           "peak memory from wait4() (measured first, while ringbench was small)\n");
    printf("%-10s%16s%12s\n", "nodes", "peak RSS MiB", "seconds");
    for (size_t n = 0; n < cfg->ringctl_count_n; n++) {
        char nodes[32];
        printf("%-10s%16.1f%12.3f\n", group_digits(cfg->ringctl_counts[n], nodes),
               (double)res->ringctl[n].max_rss_kib / 1024.0, res->ringctl[n].seconds);
    }
    fflush(stdout);
}

/* ---- Sections 5 and 6: balance and disruption ------------------------------- */

static void print_balance(const struct config *cfg, const struct results *res)
{
    char count[32];
    printf("\n5. Balance: largest / mean keyspace share (shmring_snapshot_shares)\n");
    printf("%-20s", "nodes");
    for (size_t n = 0; n < cfg->node_count_n; n++)
        printf("%10s", group_digits(cfg->node_counts[n], count));
    printf("\n");
    for (int a = 0; a < ALGORITHMS; a++) {
        printf("%-20s", shmring_algorithm_name(algorithms[a]));
        for (size_t n = 0; n < cfg->node_count_n; n++)
            printf("%10.3f", res->balance[a][n]);
        printf("\n");
    }
}

static int snapshot_of(const shmring_nodeset_t *set, void **out)
{
    size_t size;
    int err = shmring_snapshot_build(set, out, &size);
    if (err != 0)
        fail("cannot build a snapshot: %s", shmring_strerror(err));
    return err != 0 ? -1 : 0;
}

/*
 * The fraction of KEYS that move when node-100 joins DISRUPTION_NODES nodes, and when
 * node-0 leaves them. All three snapshots come from one node set, so a node keeps its
 * id through the changes and answers compare by id.
 */
static int disruption_of(shmring_algorithm_t algorithm, const struct keyset *keys,
                         struct disruption_result *out)
{
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, DISRUPTION_NODES, &set) != 0)
        return -1;
    void *before = NULL, *added = NULL, *removed = NULL;
    char name[32], address[48];
    node_name(DISRUPTION_NODES, name);
    node_address(DISRUPTION_NODES, address);
    int status = -1;
    if (snapshot_of(set, &before) != 0)
        goto out;
    int err = shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL);
    if (err == 0 && snapshot_of(set, &added) != 0)
        goto out;
    if (err == 0)
        err = shmring_nodeset_remove(set, name);
    if (err == 0)
        err = shmring_nodeset_remove(set, "node-0");
    if (err != 0) {
        fail("cannot change the node set: %s", shmring_strerror(err));
        goto out;
    }
    if (snapshot_of(set, &removed) != 0)
        goto out;
    uint64_t moved_added = 0, moved_removed = 0;
    for (size_t i = 0; i < keys->count; i++) {
        const uint8_t *key = key_at(keys, i);
        size_t len = keys->length[i];
        shmring_node_t a, b, c;
        if (shmring_snapshot_lookup(before, key, len, &a) != 0 ||
            shmring_snapshot_lookup(added, key, len, &b) != 0 ||
            shmring_snapshot_lookup(removed, key, len, &c) != 0) {
            fail("a lookup failed");
            goto out;
        }
        moved_added += a.id != b.id;
        moved_removed += a.id != c.id;
    }
    out->added = (double)moved_added / (double)keys->count;
    out->removed = (double)moved_removed / (double)keys->count;
    status = 0;
out:
    free(before);
    free(added);
    free(removed);
    shmring_nodeset_free(set);
    return status;
}

static int section_disruption(const struct config *cfg, const struct keyset *cold,
                              struct results *res)
{
    struct keyset sample = keyset_prefix(
        cold, cold->count < DISRUPTION_KEYS ? cold->count : DISRUPTION_KEYS);
    for (int a = 0; a < ALGORITHMS; a++) {
        if (disruption_of(algorithms[a], &sample, &res->disruption[a]) != 0)
            return -1;
    }
    if (!cfg->json) {
        print_balance(cfg, res);
        char count[32];
        printf("\n6. Disruption: share of %s sampled keys that move when node-100 "
               "joins 100 nodes or node-0 leaves them\n",
               group_digits(sample.count, count));
        printf("%-10s%12s%10s%10s%14s%10s%10s\n", "algorithm", "add: moved", "ideal",
               "ratio", "remove: moved", "ideal", "ratio");
        const double ideal_add = 1.0 / (DISRUPTION_NODES + 1);
        const double ideal_remove = 1.0 / DISRUPTION_NODES;
        for (int a = 0; a < ALGORITHMS; a++) {
            const struct disruption_result *d = &res->disruption[a];
            printf("%-10s%11.3f%%%9.3f%%%9.2fx%13.3f%%%9.3f%%%9.2fx\n",
                   shmring_algorithm_name(algorithms[a]), 100.0 * d->added,
                   100.0 * ideal_add, d->added / ideal_add, 100.0 * d->removed,
                   100.0 * ideal_remove, d->removed / ideal_remove);
        }
        fflush(stdout);
    }
    return 0;
}

/* ---- Comparisons and targets -------------------------------------------------- */

enum comparison_kind {
    /* THEM / US in time: "7.90x faster" (or "1.30x slower"). */
    SPEEDUP,
    /* US / THEM in time: "2.10x". */
    RATIO,
};

#define COMPARISONS_MAX (NODE_COUNTS_MAX * 24)

struct comparison {
    char name[96];
    enum comparison_kind kind;
    size_t nodes;
    double value[TEMPERATURES];
};

struct comparisons {
    struct comparison items[COMPARISONS_MAX];
    size_t count;
};

static void compare_costs(struct comparisons *out, const struct config *cfg,
                          const struct results *res, size_t n, enum comparison_kind kind,
                          enum contender_id us, enum contender_id them, const char *name)
{
    if (isnan(res->cost[HOT][n][us]) || isnan(res->cost[HOT][n][them]) ||
        out->count == COMPARISONS_MAX)
        return;
    struct comparison *c = &out->items[out->count++];
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->kind = kind;
    c->nodes = cfg->node_counts[n];
    for (int t = 0; t < TEMPERATURES; t++) {
        double ours = res->cost[t][n][us], theirs = res->cost[t][n][them];
        c->value[t] = kind == SPEEDUP ? theirs / ours : ours / theirs;
    }
}

/* The lookup kinds that comparisons name, and how they name them. */
static const enum lookup_kind compared_kinds[] = {K_READER, K_READER_ID, K_READER_BATCH};
static const char *const kind_labels[KINDS] = {
    [K_READER] = "node", [K_READER_ID] = "id", [K_READER_BATCH] = "batch"};

static void comparisons_make(const struct config *cfg, const struct results *res,
                             struct comparisons *out)
{
    out->count = 0;
    char name[96];
    for (size_t n = 0; n < cfg->node_count_n; n++) {
        size_t nodes = cfg->node_counts[n];
        for (int a = 0; a < ALGORITHMS; a++) {
            const char *alg = shmring_algorithm_name(algorithms[a]);
            snprintf(name, sizeof(name), "%s@%zu (id) vs libmemcached@%zu", alg, nodes,
                     nodes);
            compare_costs(out, cfg, res, n, SPEEDUP, contender_of(a, K_READER_ID),
                          C_LIBMEMCACHED, name);
        }
        snprintf(name, sizeof(name), "ring@%zu (id) vs textbook ring@%zu", nodes, nodes);
        compare_costs(out, cfg, res, n, SPEEDUP, contender_of(ALG_RING, K_READER_ID),
                      C_TEXTBOOK, name);
        for (int a = 0; a < ALGORITHMS; a++) {
            for (size_t k = 0; k < sizeof(compared_kinds) / sizeof(compared_kinds[0]);
                 k++) {
                enum lookup_kind kind = compared_kinds[k];
                snprintf(name, sizeof(name), "%s@%zu (%s) vs %s",
                         shmring_algorithm_name(algorithms[a]), nodes, kind_labels[kind],
                         contender_names[floor_of(a)]);
                compare_costs(out, cfg, res, n, RATIO, contender_of(a, kind), floor_of(a),
                              name);
            }
        }
        for (int a = 0; a < ALGORITHMS; a++) {
            for (size_t k = 0; k < sizeof(compared_kinds) / sizeof(compared_kinds[0]);
                 k++) {
                enum lookup_kind kind = compared_kinds[k];
                snprintf(name, sizeof(name), "reader vs in-process, %s@%zu (%s)",
                         shmring_algorithm_name(algorithms[a]), nodes, kind_labels[kind]);
                /* Each reader kind against the same call on the in-process copy. */
                compare_costs(out, cfg, res, n, RATIO, contender_of(a, kind),
                              contender_of(a, (enum lookup_kind)(kind + K_LOCAL)), name);
            }
        }
    }
}

static const struct comparison *comparison_find(const struct comparisons *all,
                                                const char *name)
{
    for (size_t i = 0; i < all->count; i++) {
        if (strcmp(all->items[i].name, name) == 0)
            return &all->items[i];
    }
    return NULL;
}

static void comparison_text(enum comparison_kind kind, double value, char *out,
                            size_t size)
{
    if (kind == RATIO)
        snprintf(out, size, "%.2fx", value);
    else if (value >= 1.0)
        snprintf(out, size, "%.2fx faster", value);
    else
        snprintf(out, size, "%.2fx slower", 1.0 / value);
}

static void print_comparisons(const struct comparisons *all, const struct results *res)
{
    printf("\nComparisons, measured in this run (hot keys; cold keys in brackets)\n");
    for (size_t i = 0; i < all->count; i++) {
        const struct comparison *c = &all->items[i];
        char hot[32], cold[32];
        comparison_text(c->kind, c->value[HOT], hot, sizeof(hot));
        comparison_text(c->kind, c->value[COLD], cold, sizeof(cold));
        printf("  %s: %s [%s]\n", c->name, hot, cold);
    }
    for (size_t w = 1; w < res->worker_count_n; w++)
        printf("  %zu workers vs 1 worker: %.2fx the lookups per second\n",
               res->worker_counts[w], res->worker_rate[w] / res->worker_rate[0]);
}

enum verdict {
    PASS,
    MISS,
    SKIP,
};

static const char *const verdict_names[] = {"PASS", "MISS", "SKIP"};

#define TARGETS_MAX 24

struct target {
    char name[96];
    /* The measured value, and the bound it must meet (at most or at least). */
    double value;
    double limit;
    bool at_most;
    enum verdict verdict;
};

struct targets {
    struct target items[TARGETS_MAX];
    size_t count;
};

static void target_add(struct targets *out, const char *name, bool measured, double value,
                       bool at_most, double limit)
{
    struct target *t = &out->items[out->count++];
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->value = measured ? value : NAN;
    t->limit = limit;
    t->at_most = at_most;
    if (!measured || isnan(value))
        t->verdict = SKIP;
    else
        t->verdict = (at_most ? value <= limit : value >= limit) ? PASS : MISS;
}

/* Adds the target that comparison NAME (hot keys) meets LIMIT. */
static void target_compare(struct targets *out, const struct comparisons *all,
                           const char *name, const char *text, bool at_most, double limit)
{
    const struct comparison *c = comparison_find(all, name);
    target_add(out, text, c != NULL, c != NULL ? c->value[HOT] : NAN, at_most, limit);
}

static const struct publish_result *
publish_find(const struct config *cfg, const struct results *res, int alg, size_t nodes)
{
    for (size_t n = 0; n < cfg->publish_count_n; n++) {
        if (cfg->publish_counts[n] == nodes && res->publish[alg][n].measured)
            return &res->publish[alg][n];
    }
    return NULL;
}

static void targets_make(const struct config *cfg, const struct results *res,
                         const struct comparisons *all, struct targets *out)
{
    out->count = 0;
    /* Lookup targets are judged on the id lookups: what a worker routing keys to its
     * own connection pools calls, one key at a time and in batches. */
    target_compare(out, all, "ring@100 (id) vs libmemcached@100",
                   "ring@100 at least 5x faster than libmemcached@100 (id)", false, 5.0);
    target_compare(out, all, "ring@100 (id) vs xxh3 floor",
                   "ring@100 within 3x of the xxh3 floor (id)", true, 3.0);
    target_compare(out, all, "ring@100 (batch) vs xxh3 floor",
                   "ring@100 within 3x of the xxh3 floor (batch)", true, 3.0);
    target_compare(out, all, "maglev@100 (id) vs xxh3 floor",
                   "maglev@100 within 2x of the xxh3 floor (id)", true, 2.0);
    target_compare(out, all, "maglev@100 (batch) vs xxh3 floor",
                   "maglev@100 within 2x of the xxh3 floor (batch)", true, 2.0);
    target_compare(out, all, "ketama@10 (id) vs libmemcached@10",
                   "ketama@10 faster than libmemcached@10 (id)", false, 1.0);
    target_compare(out, all, "ketama@100 (id) vs libmemcached@100",
                   "ketama@100 faster than libmemcached@100 (id)", false, 1.0);
    for (int a = 0; a < ALGORITHMS; a++) {
        static const enum lookup_kind judged[] = {K_READER_ID, K_READER_BATCH};
        for (size_t k = 0; k < sizeof(judged) / sizeof(judged[0]); k++) {
            char name[96], text[96];
            const char *alg = shmring_algorithm_name(algorithms[a]);
            const char *label = kind_labels[judged[k]];
            snprintf(name, sizeof(name), "reader vs in-process, %s@100 (%s)", alg, label);
            snprintf(text, sizeof(text), "reader at most 1.1x in-process, %s@100 (%s)",
                     alg, label);
            target_compare(out, all, name, text, true, 1.1);
        }
    }
    bool two = res->worker_count_n > 1 && res->worker_counts[1] == 2;
    target_add(out, "2 worker processes at least 1.8x the lookups/s of 1", two,
               two ? res->worker_rate[1] / res->worker_rate[0] : NAN, false, 1.8);
    const struct publish_result *p = publish_find(cfg, res, ALG_RING, 10000);
    target_add(out, "publish ring@10000 in at most 0.5 s", p != NULL,
               p != NULL ? p->seconds : NAN, true, 0.5);
    p = publish_find(cfg, res, ALG_RING, 100000);
    target_add(out, "publish ring@100000 works (seconds, no bound)", p != NULL,
               p != NULL ? p->seconds : NAN, true, INFINITY);
    const double ideal = 1.0 / (DISRUPTION_NODES + 1);
    target_add(out, "ring: adding 1 node to 100 moves at most 1.1x the ideal", true,
               res->disruption[ALG_RING].added / ideal, true, 1.1);
    target_add(out, "maglev: adding 1 node to 100 moves at most 2x the ideal", true,
               res->disruption[ALG_MAGLEV].added / ideal, true, 2.0);
}

static void print_targets(const struct targets *all)
{
    printf("\nTargets of issue 5 (lookup targets on hot keys)\n");
    for (size_t i = 0; i < all->count; i++) {
        const struct target *t = &all->items[i];
        if (t->verdict == SKIP)
            printf("  SKIP  %s: not measured in this run\n", t->name);
        else if (isinf(t->limit))
            printf("  %s  %s: %.3f\n", verdict_names[t->verdict], t->name, t->value);
        else
            printf("  %s  %s: %.3f (%s %.2f)\n", verdict_names[t->verdict], t->name,
                   t->value, t->at_most ? "<=" : ">=", t->limit);
    }
}

/* ---- JSON output ------------------------------------------------------------- */

static json_t *json_number(double value)
{
    return isnan(value) || isinf(value) ? json_null() : json_real(value);
}

static json_t *json_lookups(const struct config *cfg, const struct results *res)
{
    json_t *array = json_array();
    for (size_t n = 0; n < cfg->node_count_n; n++) {
        json_t *entry = json_object();
        json_object_set_new(entry, "nodes",
                            json_integer((json_int_t)cfg->node_counts[n]));
        for (int t = 0; t < TEMPERATURES; t++) {
            json_t *costs = json_object();
            for (int c = 0; c < CONTENDERS; c++)
                json_object_set_new(costs, contender_keys[c],
                                    json_number(res->cost[t][n][c]));
            json_object_set_new(entry, temperature_names[t], costs);
        }
        json_array_append_new(array, entry);
    }
    return array;
}

static json_t *json_agreement(const struct agreement *a)
{
    return json_pack("{sIsI}", "keys", (json_int_t)a->keys, "equal",
                     (json_int_t)a->equal);
}

static json_t *json_results(const struct config *cfg, const struct keyset *cold,
                            const struct results *res, const struct comparisons *comps,
                            const struct targets *targets, double load_at_start)
{
    json_t *root = json_object();
    json_object_set_new(root, "shmring_version", json_string(shmring_version()));
    json_object_set_new(root, "quick", json_boolean(cfg->quick));
    json_object_set_new(root, "cpus", json_integer(cfg->cpus));
    json_object_set_new(root, "load_average",
                        json_pack("{soso}", "start", json_number(load_at_start), "end",
                                  json_number(load_average())));
    json_object_set_new(root, "method",
                        json_pack("{sisososs}", "runs", cfg->reps, "run_seconds",
                                  json_real(cfg->run_seconds), "warmup_seconds",
                                  json_real(cfg->warmup_seconds), "statistic", "median"));
    json_object_set_new(root, "keys",
                        json_pack("{sIsisisIsIsI}", "seed", (json_int_t)SEED,
                                  "min_length", KEY_MIN, "max_length", KEY_MAX, "hot",
                                  (json_int_t)HOT_KEYS, "cold", (json_int_t)cold->count,
                                  "cold_bytes", (json_int_t)cold->total_bytes));
    json_object_set_new(root, "lookup_ns", json_lookups(cfg, res));
    json_object_set_new(
        root, "agreement",
        json_pack("{soso}", "ring_textbook", json_agreement(&res->ring_textbook),
                  "ketama_libmemcached", json_agreement(&res->ketama_libmemcached)));

    json_t *workers = json_array();
    for (size_t w = 0; w < res->worker_count_n; w++)
        json_array_append_new(
            workers, json_pack("{sIso}", "workers", (json_int_t)res->worker_counts[w],
                               "lookups_per_second", json_real(res->worker_rate[w])));
    json_object_set_new(root, "processes", workers);

    json_t *publish = json_array();
    for (int a = 0; a < ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->publish_count_n; n++) {
            const struct publish_result *p = &res->publish[a][n];
            json_array_append_new(
                publish, json_pack("{sssIsosIsI}", "algorithm",
                                   shmring_algorithm_name(algorithms[a]), "nodes",
                                   (json_int_t)cfg->publish_counts[n], "seconds",
                                   json_real(p->seconds), "points", (json_int_t)p->points,
                                   "snapshot_bytes", (json_int_t)p->bytes));
        }
    }
    json_object_set_new(root, "publish", publish);

    json_t *ringctl = json_array();
    for (size_t n = 0; n < cfg->ringctl_count_n; n++)
        json_array_append_new(
            ringctl,
            json_pack("{sIsIso}", "nodes", (json_int_t)cfg->ringctl_counts[n],
                      "max_rss_bytes", (json_int_t)res->ringctl[n].max_rss_kib * 1024,
                      "seconds", json_real(res->ringctl[n].seconds)));
    json_object_set_new(root, "ringctl_load", ringctl);

    json_t *balance = json_array();
    for (int a = 0; a < ALGORITHMS; a++) {
        for (size_t n = 0; n < cfg->node_count_n; n++)
            json_array_append_new(
                balance,
                json_pack("{sssIso}", "algorithm", shmring_algorithm_name(algorithms[a]),
                          "nodes", (json_int_t)cfg->node_counts[n], "max_over_mean",
                          json_number(res->balance[a][n])));
    }
    json_object_set_new(root, "balance", balance);

    json_t *disruption = json_array();
    for (int a = 0; a < ALGORITHMS; a++)
        json_array_append_new(
            disruption,
            json_pack("{sssisosososo}", "algorithm",
                      shmring_algorithm_name(algorithms[a]), "nodes", DISRUPTION_NODES,
                      "add_moved", json_real(res->disruption[a].added), "add_ideal",
                      json_real(1.0 / (DISRUPTION_NODES + 1)), "remove_moved",
                      json_real(res->disruption[a].removed), "remove_ideal",
                      json_real(1.0 / DISRUPTION_NODES)));
    json_object_set_new(root, "disruption", disruption);

    json_t *comparisons = json_array();
    for (size_t i = 0; i < comps->count; i++) {
        const struct comparison *c = &comps->items[i];
        json_array_append_new(comparisons,
                              json_pack("{sssssIsoso}", "name", c->name, "kind",
                                        c->kind == SPEEDUP ? "speedup" : "ratio", "nodes",
                                        (json_int_t)c->nodes, "hot",
                                        json_number(c->value[HOT]), "cold",
                                        json_number(c->value[COLD])));
    }
    for (size_t w = 1; w < res->worker_count_n; w++) {
        char name[64];
        snprintf(name, sizeof(name), "%zu workers vs 1 worker", res->worker_counts[w]);
        json_array_append_new(
            comparisons,
            json_pack("{ssssso}", "name", name, "kind", "throughput", "value",
                      json_real(res->worker_rate[w] / res->worker_rate[0])));
    }
    json_object_set_new(root, "comparisons", comparisons);

    json_t *target_array = json_array();
    for (size_t i = 0; i < targets->count; i++) {
        const struct target *t = &targets->items[i];
        json_array_append_new(target_array,
                              json_pack("{sssososbss}", "name", t->name, "value",
                                        json_number(t->value), "limit",
                                        json_number(t->limit), "at_most", t->at_most,
                                        "result", verdict_names[t->verdict]));
    }
    json_object_set_new(root, "targets", target_array);
    return root;
}

/* ---- Command line -------------------------------------------------------------- */

static void usage(FILE *out)
{
    fputs("Usage: ringbench [OPTIONS]\n"
          "\n"
          "Measure shmring on this machine: lookup cost through the reader library\n"
          "next to its floors (the key hash alone, the same lookup in-process) and its\n"
          "peers (libmemcached's ketama, a textbook ring), worker-process scaling,\n"
          "publish time, ringctl's peak memory, balance and disruption. Prints each\n"
          "comparison as a ratio and each target of issue 5 with PASS or MISS.\n"
          "\n"
          "Options:\n"
          "      --quick         smoke mode (< 30 s): 10 and 1,000 nodes, short runs,\n"
          "                      10,000-node publication only\n"
          "      --json          print one JSON object with every figure\n"
          "      --nodes LIST    node counts to measure lookups and publication at,\n"
          "                      comma-separated (default 10,100,1000,10000,100000)\n"
          "  -h, --help          print this help and exit\n"
          "\n"
          "Exit status: 0 the benchmark ran (misses are results), 1 an error, 2 usage\n"
          "error.\n",
          out);
}

static int parse_nodes(const char *text, struct config *cfg)
{
    cfg->node_count_n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        unsigned long value = strtoul(p, &end, 10);
        if (end == p || errno != 0 || value < 1 || value > SHMRING_NODES_MAX ||
            (*end != ',' && *end != '\0') || cfg->node_count_n == NODE_COUNTS_MAX ||
            *p == '-' || *p == '+' || *p == ' ')
            return -1;
        cfg->node_counts[cfg->node_count_n++] = value;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

enum option_code {
    CODE_QUICK = 256,
    CODE_JSON,
    CODE_NODES,
};

static const struct option long_options[] = {
    {"quick", no_argument, NULL, CODE_QUICK},
    {"json", no_argument, NULL, CODE_JSON},
    {"nodes", required_argument, NULL, CODE_NODES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void copy_counts(size_t *to, size_t *to_n, const size_t *from, size_t from_n)
{
    memcpy(to, from, from_n * sizeof(*from));
    *to_n = from_n;
}

/* Returns 0, or the exit status to leave with. */
static int parse_command_line(int argc, char **argv, struct config *cfg, bool *done)
{
    const char *nodes = NULL;
    int code;
    opterr = 0;
    while ((code = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (code) {
        case CODE_QUICK:
            cfg->quick = true;
            break;
        case CODE_JSON:
            cfg->json = true;
            break;
        case CODE_NODES:
            nodes = optarg;
            break;
        case 'h':
            usage(stdout);
            *done = true;
            return EXIT_OK;
        case ':':
            fprintf(stderr, "ringbench: error: option '%s' needs an argument\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        default:
            fprintf(stderr, "ringbench: error: unknown option '%s'\n", argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ringbench: error: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (cfg->quick) {
        copy_counts(cfg->node_counts, &cfg->node_count_n, quick_node_counts,
                    sizeof(quick_node_counts) / sizeof(quick_node_counts[0]));
        cfg->publish_counts[0] = 10000;
        cfg->publish_count_n = 1;
        copy_counts(cfg->ringctl_counts, &cfg->ringctl_count_n, quick_ringctl_node_counts,
                    1);
        cfg->cold_keys = QUICK_COLD_KEYS;
        cfg->reps = 3;
        cfg->run_seconds = 0.02;
        cfg->warmup_seconds = 0.005;
        cfg->publish_reps = 1;
        cfg->window_reps = 1;
        cfg->window_seconds = 0.1;
    } else {
        copy_counts(cfg->node_counts, &cfg->node_count_n, default_node_counts,
                    sizeof(default_node_counts) / sizeof(default_node_counts[0]));
        copy_counts(cfg->publish_counts, &cfg->publish_count_n, default_node_counts,
                    sizeof(default_node_counts) / sizeof(default_node_counts[0]));
        copy_counts(cfg->ringctl_counts, &cfg->ringctl_count_n, ringctl_node_counts,
                    sizeof(ringctl_node_counts) / sizeof(ringctl_node_counts[0]));
        cfg->cold_keys = COLD_KEYS;
        cfg->reps = 5;
        cfg->run_seconds = 0.2;
        cfg->warmup_seconds = 0.05;
        cfg->publish_reps = 3;
        cfg->window_reps = 3;
        cfg->window_seconds = 1.0;
    }
    if (nodes != NULL) {
        if (parse_nodes(nodes, cfg) != 0) {
            fprintf(stderr,
                    "ringbench: error: --nodes wants up to %d comma-separated counts "
                    "from 1 to %u, not '%s'\n",
                    NODE_COUNTS_MAX, SHMRING_NODES_MAX, nodes);
            return EXIT_USAGE;
        }
        if (!cfg->quick)
            copy_counts(cfg->publish_counts, &cfg->publish_count_n, cfg->node_counts,
                        cfg->node_count_n);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->cpus = cpus > 0 ? cpus : 1;
    return EXIT_OK;
}

static void print_header(const struct config *cfg, const struct keyset *cold)
{
    char count[32];
    printf("ringbench: shmring %s, %ld CPUs, %s mode%s\n", shmring_version(), cfg->cpus,
           cfg->quick ? "quick" : "full",
#ifdef RINGBENCH_HAVE_LIBMEMCACHED
           ""
#else
           " (libmemcached not built in)"
#endif
    );
    printf("keys: %d-%d random bytes (splitmix64, seed 0x%" PRIx64
           "); hot: the first %d keys; cold: %s keys (%.1f MiB)\n",
           KEY_MIN, KEY_MAX, SEED, HOT_KEYS, group_digits(cold->count, count),
           (double)cold->total_bytes / 1048576.0);
    printf("method: median of %d runs of >= %.2f s each, contenders interleaved, "
           "CLOCK_MONOTONIC, nothing pinned; load average %.2f at the start\n",
           cfg->reps, cfg->run_seconds, load_average());
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static struct config cfg;
    static struct results res;
    double started = now_seconds();
    double load_at_start = load_average();
    bool done = false;
    int status = parse_command_line(argc, argv, &cfg, &done);
    if (status != EXIT_OK || done)
        return status;
    ring_names_init();
    if (signals_start() != 0)
        return EXIT_FAILED;

    status = EXIT_FAILED;
    struct keyset cold = {NULL, NULL, NULL, 0, 0};
    if (section_ringctl_measure(&cfg, &res) != 0 ||
        keyset_make(cfg.cold_keys, &cold) != 0)
        goto out;
    if (!cfg.json)
        print_header(&cfg, &cold);

    if (section_lookups(&cfg, &cold, &res) != 0 ||
        section_workers(&cfg, &cold, &res) != 0 || section_publish(&cfg, &res) != 0)
        goto out;
    section_ringctl_print(&cfg, &res);
    if (section_disruption(&cfg, &cold, &res) != 0)
        goto out;

    static struct comparisons comps;
    static struct targets targets;
    comparisons_make(&cfg, &res, &comps);
    targets_make(&cfg, &res, &comps, &targets);
    if (cfg.json) {
        json_t *root = json_results(&cfg, &cold, &res, &comps, &targets, load_at_start);
        if (root == NULL || json_dumpf(root, stdout, JSON_INDENT(2)) != 0) {
            fail("cannot write the JSON results");
            json_decref(root);
            goto out;
        }
        json_decref(root);
        putchar('\n');
    } else {
        print_comparisons(&comps, &res);
        print_targets(&targets);
        printf("\nringbench ran for %.1f s; load average %.2f at the end\n",
               now_seconds() - started, load_average());
    }
    status = fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED;
out:
    cleanup();
    keyset_free(&cold);
    return status;
}
