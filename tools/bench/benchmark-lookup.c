/*
 * Lookup cost: each algorithm through the reader library, three ways (the whole node,
 * its id only, ids in batches), at each node count, on hot keys (the first HOT_KEYS
 * keys, repeated: they stay in L1 and the branch predictor learns them) and on cold
 * keys (millions, read on from where the previous measurement stopped, so that none
 * is found in the cache). In the same runs: the floors (the key hash alone; the same
 * calls on an in-process copy of the same snapshot) and the peers (libmemcached's
 * weighted ketama, a textbook ring), which must also agree with shmring key for key.
 */
#include <inttypes.h>
#include <math.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ringbench.h"

/* Keys compared between implementations that must agree key for key. */
#define AGREEMENT_KEYS 100000

struct agreement {
    uint64_t keys;
    uint64_t equal;
};

/* ns per lookup; NAN where not measured. */
static double cost[TEMPERATURES][NODE_COUNTS_MAX][CONTENDERS];
static struct agreement ketama_libmemcached;
static struct agreement ring_textbook;
static struct keyset hot_keys, cold_keys;

/*
 * Checks that the implementations that must agree do: shmring's ketama with
 * libmemcached (node i is server i), shmring's ring with the textbook ring (same
 * points; they could differ only where two points are equal).
 */
static void check_agreement(const struct lookup_subjects *s, const struct keyset *keys)
{
    size_t count = keys->count < AGREEMENT_KEYS ? keys->count : AGREEMENT_KEYS;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *key = key_at(keys, i);
        size_t len = keys->length[i];
        shmring_node_t node;
        if (shmring_snapshot_lookup(s->copies[ALG_RING], key, len, &node) == 0) {
            ring_textbook.keys++;
            ring_textbook.equal +=
                node.id == textbook_owner(&s->textbook, XXH3_64bits(key, len));
        }
        if (s->libmemcached != NULL &&
            shmring_snapshot_lookup(s->copies[ALG_KETAMA], key, len, &node) == 0) {
            ketama_libmemcached.keys++;
            ketama_libmemcached.equal +=
                node.id == libmemcached_owner(s->libmemcached, key, len);
        }
    }
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    hot_keys = keyset_prefix(cold, HOT_KEYS);
    cold_keys = *cold;
    size_t cold_cursor = 0;
    for (size_t n = 0; n < cfg->node_count_n; n++) {
        struct lookup_subjects subjects;
        if (lookup_subjects_open(cfg->node_counts[n], true, &subjects) != 0)
            return -1;
        struct contender contenders[CONTENDERS];
        lookup_contenders(&subjects, contenders);
        size_t hot_cursor = 0;
        contest(cfg, contenders, &hot_keys, &hot_cursor, cost[HOT][n]);
        contest(cfg, contenders, cold, &cold_cursor, cost[COLD][n]);
        if (cfg->node_counts[n] <= LIBMEMCACHED_SERVERS_MAX)
            check_agreement(&subjects, cold);
        lookup_subjects_close(&subjects);
    }
    for (int a = 0; a < ALGORITHMS; a++)
        scratch_ring_remove((enum ring_kind)(RING_LOOKUP_RING + a));
    return 0;
}

static void print_table(const struct config *cfg, enum temperature t,
                        const struct keyset *keys)
{
    char count[32];
    printf("\n1%c. Lookup cost, ns per lookup, %s keys (%s keys, %.1f MiB)\n",
           t == HOT ? 'a' : 'b', temperature_names[t], group_digits(keys->count, count),
           keyset_mib(keys));
    print_nodes_row(cfg->node_counts, cfg->node_count_n);
    for (int c = 0; c < CONTENDERS; c++)
        print_cost_row(contender_names[c], &cost[t][0][c], CONTENDERS, cfg->node_count_n);
}

static void print(const struct config *cfg)
{
    print_table(cfg, HOT, &hot_keys);
    print_table(cfg, COLD, &cold_keys);
    if (ring_textbook.keys > 0)
        printf("agreement: shmring ring = textbook ring on %" PRIu64 " of %" PRIu64
               " keys\n",
               ring_textbook.equal, ring_textbook.keys);
    if (ketama_libmemcached.keys > 0)
        printf("agreement: shmring ketama = libmemcached on %" PRIu64 " of %" PRIu64
               " keys\n",
               ketama_libmemcached.equal, ketama_libmemcached.keys);
}

/* Adds the figure US against THEM at node count N, if both were measured. */
static void compare(struct figures *out, const struct config *cfg, size_t n,
                    enum figure_kind kind, enum contender_id us, enum contender_id them,
                    const char *name)
{
    if (isnan(cost[HOT][n][us]) || isnan(cost[HOT][n][them]))
        return;
    double value[TEMPERATURES];
    for (int t = 0; t < TEMPERATURES; t++) {
        double ours = cost[t][n][us], theirs = cost[t][n][them];
        value[t] = kind == FIGURE_SPEEDUP ? theirs / ours : ours / theirs;
    }
    figure_add(out, kind, cfg->node_counts[n], value[HOT], value[COLD], "%s", name);
}

/* The lookup kinds that comparisons name, and how they name them. */
static const enum lookup_kind compared_kinds[] = {K_READER, K_READER_ID, K_READER_BATCH};
static const char *const kind_labels[KINDS] = {
    [K_READER] = "node", [K_READER_ID] = "id", [K_READER_BATCH] = "batch"};

static void derive(const struct config *cfg, struct figures *out)
{
    char name[96];
    for (size_t n = 0; n < cfg->node_count_n; n++) {
        size_t nodes = cfg->node_counts[n];
        /* Cold id lookups over one dependent random read of the ring's size (issue 15:
         * one cache miss a lookup). Judged cold, so a value of its own. */
        double chase = cost[COLD][n][C_CHASE_FLOOR];
        for (int a = 0; a < ALGORITHMS && !isnan(chase); a++) {
            double id = cost[COLD][n][contender_of(a, K_READER_ID)];
            if (!isnan(id))
                figure_add(out, FIGURE_VALUE, nodes, id / chase, 0.0,
                           "%s@%zu cold (id) over the one-miss floor",
                           shmring_algorithm_name(algorithms[a]), nodes);
        }
        for (int a = 0; a < ALGORITHMS; a++) {
            const char *alg = shmring_algorithm_name(algorithms[a]);
            snprintf(name, sizeof(name), "%s@%zu (id) vs libmemcached@%zu", alg, nodes,
                     nodes);
            compare(out, cfg, n, FIGURE_SPEEDUP, contender_of(a, K_READER_ID),
                    C_LIBMEMCACHED, name);
        }
        snprintf(name, sizeof(name), "ring@%zu (id) vs textbook ring@%zu", nodes, nodes);
        compare(out, cfg, n, FIGURE_SPEEDUP, contender_of(ALG_RING, K_READER_ID),
                C_TEXTBOOK, name);
        for (int a = 0; a < ALGORITHMS; a++) {
            for (size_t k = 0; k < ARRAY_SIZE(compared_kinds); k++) {
                enum lookup_kind kind = compared_kinds[k];
                snprintf(name, sizeof(name), "%s@%zu (%s) vs %s",
                         shmring_algorithm_name(algorithms[a]), nodes, kind_labels[kind],
                         contender_names[floor_of(a)]);
                compare(out, cfg, n, FIGURE_RATIO, contender_of(a, kind), floor_of(a),
                        name);
            }
        }
        for (int a = 0; a < ALGORITHMS; a++) {
            for (size_t k = 0; k < ARRAY_SIZE(compared_kinds); k++) {
                enum lookup_kind kind = compared_kinds[k];
                snprintf(name, sizeof(name), "reader vs in-process, %s@%zu (%s)",
                         shmring_algorithm_name(algorithms[a]), nodes, kind_labels[kind]);
                /* Each reader kind against the same call on the in-process copy. */
                compare(out, cfg, n, FIGURE_RATIO, contender_of(a, kind),
                        contender_of(a, (enum lookup_kind)(kind + K_LOCAL)), name);
            }
            /* The serialized handle's one-key calls against the same two. */
            for (enum lookup_kind kind = K_SERIAL; kind <= K_SERIAL_ID; kind++) {
                const char *alg = shmring_algorithm_name(algorithms[a]);
                enum lookup_kind plain = (enum lookup_kind)(kind - K_SERIAL + K_READER);
                snprintf(name, sizeof(name), "serialized vs in-process, %s@%zu (%s)", alg,
                         nodes, kind_labels[plain]);
                compare(out, cfg, n, FIGURE_RATIO, contender_of(a, kind),
                        contender_of(a, (enum lookup_kind)(plain + K_LOCAL)), name);
                snprintf(name, sizeof(name), "serialized vs reader, %s@%zu (%s)", alg,
                         nodes, kind_labels[plain]);
                compare(out, cfg, n, FIGURE_RATIO, contender_of(a, kind),
                        contender_of(a, plain), name);
            }
        }
    }
}

static json_t *json_agreement(const struct agreement *a)
{
    return json_pack("{sIsI}", "keys", (json_int_t)a->keys, "equal",
                     (json_int_t)a->equal);
}

static void json(const struct config *cfg, json_t *root)
{
    json_t *array = json_array();
    for (size_t n = 0; n < cfg->node_count_n; n++) {
        json_t *entry = json_object();
        json_object_set_new(entry, "nodes",
                            json_integer((json_int_t)cfg->node_counts[n]));
        for (int t = 0; t < TEMPERATURES; t++) {
            json_t *costs = json_object();
            for (int c = 0; c < CONTENDERS; c++)
                json_object_set_new(costs, contender_keys[c], json_number(cost[t][n][c]));
            json_object_set_new(entry, temperature_names[t], costs);
        }
        json_array_append_new(array, entry);
    }
    json_object_set_new(root, "lookup_ns", array);
    json_object_set_new(root, "agreement",
                        json_pack("{soso}", "ring_textbook",
                                  json_agreement(&ring_textbook), "ketama_libmemcached",
                                  json_agreement(&ketama_libmemcached)));
}

BENCHMARK(lookup, .derive = derive);
