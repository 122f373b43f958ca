/*
 * ringbench: measures shmring on the machine at hand, next to its floors and its peers.
 *
 * The runner: it reads the command line, runs the benchmarks of benchmark-list.h in
 * order (one measurement a file, benchmark-*.c), prints their tables, then the
 * comparisons and the targets (each benchmark's own rows, judged on the figures the
 * benchmarks derive). Every comparison is a ratio of two figures measured in this
 * run. Misses are results, not failures: the exit status is 0 whenever the benchmark
 * ran, 1 on an error and 2 on a usage error.
 *
 * Every contender runs over the same key arrays (keys.c); nothing is pinned: the
 * figures are what an unpinned worker would see.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchmark-list.h"

/* Fills a list of node counts and its length from one list, so they cannot disagree. */
#define NODE_COUNTS(list, ...)                                                           \
    .list##s = {__VA_ARGS__}, .list##_n = sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t)

/* How long the lookup runs, their warm-up and the worker windows last: the full
 * run's times over DIVISOR. */
#define RUN_TIMES(divisor)                                                               \
    .run_seconds = 0.2 / (divisor), .warmup_seconds = 0.05 / (divisor),                  \
    .window_seconds = 1.0 / (divisor)

/*
 * The full run, and the smoke run (--quick) that CI does: the same measurements on
 * fewer node counts and keys, with runs ten times shorter and fewer repetitions.
 */
static const struct config full_preset = {
    NODE_COUNTS(node_count, 10, 100, 1000, 10000, 100000),
    NODE_COUNTS(publish_count, 10, 100, 1000, 10000, 100000),
    NODE_COUNTS(ringctl_count, 10000, 100000),
    .cold_keys = COLD_KEYS,
    .reps = 5,
    .publish_reps = 3,
    .window_reps = 3,
    RUN_TIMES(1),
};

static const struct config quick_preset = {
    .quick = true,
    NODE_COUNTS(node_count, 10, 1000),
    NODE_COUNTS(publish_count, 10000),
    NODE_COUNTS(ringctl_count, 10000),
    .cold_keys = QUICK_COLD_KEYS,
    .reps = 3,
    .publish_reps = 1,
    .window_reps = 1,
    RUN_TIMES(10),
};

static void usage(FILE *out)
{
    fputs("Usage: ringbench [OPTIONS]\n"
          "\n"
          "Measure shmring on this machine: lookup cost through the reader library\n"
          "next to its floors (the key hash alone, the same lookup in-process) and its\n"
          "peers (libmemcached's ketama, a textbook ring), on hot, cold and streamed\n"
          "keys; a reader's switch to a new version, worker-process scaling, publish\n"
          "time, ringctl's peak memory, balance (against nodes and points per node),\n"
          "disruption, and ringctl sync's put-to-publish latency and full re-read\n"
          "against a local etcd (skipped without etcd). Prints each comparison as a\n"
          "ratio and each target of issues 5 and 15 with PASS or MISS.\n"
          "\n"
          "Options:\n"
          "      --quick         smoke mode (< 30 s): 10 and 1,000 nodes, short runs,\n"
          "                      10,000-node publication only\n"
          "      --json          print one JSON object with every figure\n"
          "      --nodes LIST    node counts to measure lookups and publication at,\n"
          "                      comma-separated (default 10,100,1000,10000,100000)\n"
          "      --only LIST     run only these benchmarks, comma-separated: lookup,\n"
          "                      stream, cold, switch, workers, publish, ringctl,\n"
          "                      balance, vnodes, disruption, nodes, clients,\n"
          "                      spymemcached, bounded, sync\n"
          "                      (targets of the others SKIP)\n"
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
    CODE_ONLY,
};

static const struct option long_options[] = {
    {"quick", no_argument, NULL, CODE_QUICK},
    {"json", no_argument, NULL, CODE_JSON},
    {"nodes", required_argument, NULL, CODE_NODES},
    {"only", required_argument, NULL, CODE_ONLY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Is NAME one of the comma-separated names of LIST? */
static bool listed(const char *list, const char *name)
{
    size_t length = strlen(name);
    for (const char *p = list;; p++) {
        if (strncmp(p, name, length) == 0 && (p[length] == ',' || p[length] == '\0'))
            return true;
        p = strchr(p, ',');
        if (p == NULL)
            return false;
    }
}

/* Does every name of LIST name a benchmark? */
static bool only_valid(const char *list)
{
    for (const char *p = list; p != NULL;
         p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        size_t length = strcspn(p, ",");
        bool known = false;
        for (size_t i = 0; i < ARRAY_SIZE(benchmark_list); i++) {
            const char *name = benchmark_list[i]->name;
            known |= strlen(name) == length && strncmp(p, name, length) == 0;
        }
        if (!known)
            return false;
    }
    return true;
}

static bool selected(const struct config *cfg, const struct benchmark *b)
{
    return cfg->only == NULL || listed(cfg->only, b->name);
}

/* Whether NAME is a benchmark's: every target names the one whose run gives its
 * figure. */
static bool is_benchmark(const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(benchmark_list); i++) {
        if (strcmp(benchmark_list[i]->name, name) == 0)
            return true;
    }
    return false;
}

static void copy_counts(size_t *to, size_t *to_n, const size_t *from, size_t from_n)
{
    memcpy(to, from, from_n * sizeof(*from));
    *to_n = from_n;
}

/* Returns 0, or the exit status to leave with. */
static int parse_command_line(int argc, char **argv, struct config *cfg, bool *done)
{
    const char *nodes = NULL, *only = NULL;
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
        case CODE_ONLY:
            only = optarg;
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
    bool json = cfg->json;
    *cfg = cfg->quick ? quick_preset : full_preset;
    cfg->json = json;
    cfg->only = only;
    if (only != NULL && !only_valid(only)) {
        fprintf(stderr, "ringbench: error: --only wants benchmark names, not '%s'\n",
                only);
        return EXIT_USAGE;
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
           libmemcached_built_in ? "" : " (libmemcached not built in)");
    printf("keys: %d-%d random bytes (splitmix64, seed 0x%" PRIx64
           "); hot: the first %d keys; cold: %s keys (%.1f MiB)\n",
           KEY_MIN, KEY_MAX, SEED, HOT_KEYS, group_digits(cold->count, count),
           keyset_mib(cold));
    printf("method: median of %d runs of >= %.2f s each, contenders interleaved, "
           "CLOCK_MONOTONIC, nothing pinned; load average %.2f at the start\n",
           cfg->reps, cfg->run_seconds, load_average());
    fflush(stdout);
}

static json_t *json_results(const struct config *cfg, const struct keyset *cold,
                            const struct figures *figures,
                            const struct verdicts *verdicts, double load_at_start)
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
    for (size_t i = 0; i < ARRAY_SIZE(benchmark_list); i++) {
        if (selected(cfg, benchmark_list[i]))
            benchmark_list[i]->json(cfg, root);
    }
    json_object_set_new(root, "comparisons", json_comparisons(figures));
    json_object_set_new(root, "targets", json_targets(verdicts));
    return root;
}

/* Runs the early benchmarks, makes the cold keys, then runs and prints the rest. */
static int run_all(const struct config *cfg, struct keyset *cold)
{
    for (size_t i = 0; i < ARRAY_SIZE(benchmark_list); i++) {
        if (benchmark_list[i]->early && selected(cfg, benchmark_list[i]) &&
            benchmark_list[i]->run(cfg, NULL) != 0)
            return -1;
    }
    if (keyset_make(cfg->cold_keys, SEED, false, cold) != 0)
        return -1;
    if (!cfg->json)
        print_header(cfg, cold);
    for (size_t i = 0; i < ARRAY_SIZE(benchmark_list); i++) {
        const struct benchmark *b = benchmark_list[i];
        if (!selected(cfg, b))
            continue;
        if (!b->early && b->run(cfg, cold) != 0)
            return -1;
        if (!cfg->json) {
            b->print(cfg);
            fflush(stdout);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct config cfg;
    double started = now_seconds();
    double load_at_start = load_average();
    bool done = false;
    int status = parse_command_line(argc, argv, &cfg, &done);
    if (status != EXIT_OK || done)
        return status;
    contender_names_init();
    /* Parsed before anything runs, so a malformed line costs no run. */
    static struct targets targets;
    if (targets_parse(&targets, is_benchmark) != 0)
        return EXIT_FAILED;
    if (scratch_start() != 0) {
        targets_free(&targets);
        return EXIT_FAILED;
    }

    status = EXIT_FAILED;
    struct keyset cold = {NULL, NULL, NULL, 0, 0};
    if (run_all(&cfg, &cold) != 0)
        goto out;

    static struct figures figures;
    static struct verdicts verdicts;
    for (size_t i = 0; i < ARRAY_SIZE(benchmark_list); i++) {
        const struct benchmark *b = benchmark_list[i];
        if (b->derive != NULL && selected(&cfg, b))
            b->derive(&cfg, &figures);
    }
    targets_judge(&targets, &figures, &verdicts);
    if (cfg.json) {
        json_t *root = json_results(&cfg, &cold, &figures, &verdicts, load_at_start);
        if (root == NULL || json_dumpf(root, stdout, JSON_INDENT(2)) != 0) {
            fail("cannot write the JSON results");
            json_decref(root);
            goto out;
        }
        json_decref(root);
        putchar('\n');
    } else {
        print_comparisons(&figures);
        print_targets(&verdicts);
        printf("\nringbench ran for %.1f s; load average %.2f at the end\n",
               now_seconds() - started, load_average());
    }
    status = fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED;
out:
    scratch_cleanup();
    keyset_free(&cold);
    targets_free(&targets);
    return status;
}
