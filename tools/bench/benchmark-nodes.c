/*
 * The node algorithms: `rendezvous` (one hash per up node) and `jump` (O(log n)
 * steps) against `ring`, in ns per id lookup on an in-process snapshot of 10, 100 and
 * 500 nodes, as ratios measured in the same run; and against the libraries they
 * reproduce, run on the same keys and nodes where installed: pymemcache's
 * HashClient.hasher.get_node() through Debian's python3, and Guava's
 * consistentHash(murmur3_128().hashBytes(key), n) through a Java class compiled here.
 * A library that is missing is reported as such, never failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringbench.h"

enum { NODE_SETS = LIBRARY_NODE_SETS, SUBJECTS = 3 };
enum subject { SUBJECT_RING, SUBJECT_RENDEZVOUS, SUBJECT_JUMP };

static const shmring_algorithm_t subjects[SUBJECTS] = {
    SHMRING_ALGORITHM_RING, SHMRING_ALGORITHM_RENDEZVOUS, SHMRING_ALGORITHM_JUMP};

/* Node-hash evaluations a rendezvous measurement spends (keys x nodes), and keys of
 * the others. The pure-Python library gets far fewer. */
#define RENDEZVOUS_EVALUATIONS 4000000u
#define LOOKUP_KEYS 100000
#define PYMEMCACHE_EVALUATIONS 300000
#define GUAVA_KEYS 200000

/* ns per lookup; NAN where not measured. */
static double cost[SUBJECTS][NODE_SETS];
static double pymemcache_cost[NODE_SETS];
static double guava_cost[NODE_SETS];
static char pymemcache_note[160], guava_note[160];

/* pymemcache's HashClient over node_address()'s servers, on the keys of KEYS_PATH as
 * strs (surrogate escapes for bytes that are not UTF-8): ns per get_node(). */
static const char pymemcache_script[] =
    "import sys, time\n"
    "from pymemcache.client.hash import HashClient\n"
    "keys = [bytes.fromhex(l.strip()).decode('utf-8', 'surrogateescape')"
    " for l in open(sys.argv[1])]\n"
    "for n in map(int, sys.argv[3:]):\n"
    "    c = HashClient(['10.%d.%d.%d:11211' % (i >> 16 & 255, i >> 8 & 255, i & 255)"
    " for i in range(n)])\n"
    "    ks = keys[:max(20, int(sys.argv[2]) // n)]\n"
    "    best = 1e30\n"
    "    for _ in range(3):\n"
    "        t = time.perf_counter()\n"
    "        for k in ks: c.hasher.get_node(k)\n"
    "        best = min(best, (time.perf_counter() - t) / len(ks))\n"
    "    print(n, best * 1e9, flush=True)\n";

static const char guava_class[] =
    "import com.google.common.hash.Hashing;\n"
    "import java.nio.file.*;\n"
    "import java.util.*;\n"
    "public class RingbenchJump {\n"
    "  public static void main(String[] a) throws Exception {\n"
    "    List<String> lines = Files.readAllLines(Paths.get(a[0]));\n"
    "    byte[][] keys = new byte[lines.size()][];\n"
    "    for (int i = 0; i < keys.length; i++) {\n"
    "      String l = lines.get(i); keys[i] = new byte[l.length() / 2];\n"
    "      for (int b = 0; b < keys[i].length; b++)\n"
    "        keys[i][b] = (byte) Integer.parseInt(l.substring(2 * b, 2 * b + 2), 16);\n"
    "    }\n"
    "    long sum = 0;\n"
    "    for (int x = 1; x < a.length; x++) {\n"
    "      int n = Integer.parseInt(a[x]); double best = 1e30;\n"
    "      for (int pass = 0; pass < 10; pass++) {\n"
    "        long t = System.nanoTime();\n"
    "        for (byte[] k : keys)\n"
    "          sum += Hashing.consistentHash(Hashing.murmur3_128().hashBytes(k), n);\n"
    "        best = Math.min(best, (System.nanoTime() - t) / (double) keys.length);\n"
    "      }\n"
    "      System.out.println(n + \" \" + best);\n"
    "    }\n"
    "    if (sum == 42) System.err.println();\n"
    "  }\n"
    "}\n";

static void run_pymemcache(const char *keys_path, int evaluations)
{
    if (system("/usr/bin/python3 -c 'import pymemcache' >/dev/null 2>&1") != 0) {
        snprintf(pymemcache_note, sizeof(pymemcache_note),
                 "pymemcache not installed (Debian: python3-pymemcache)");
        return;
    }
    char command[1024];
    FILE *script = fopen("/tmp/ringbench-pymemcache.py", "w");
    if (script == NULL || fputs(pymemcache_script, script) < 0 || fclose(script) != 0) {
        snprintf(pymemcache_note, sizeof(pymemcache_note), "cannot write its script");
        return;
    }
    snprintf(command, sizeof(command),
             "/usr/bin/python3 /tmp/ringbench-pymemcache.py %s %d %zu %zu %zu", keys_path,
             evaluations, library_node_counts[0], library_node_counts[1],
             library_node_counts[2]);
    if (library_costs_read(command, pymemcache_cost) != 0)
        snprintf(pymemcache_note, sizeof(pymemcache_note), "its run failed");
    unlink("/tmp/ringbench-pymemcache.py");
}

static void run_guava(const char *keys_path)
{
    if (access("/usr/share/java/guava.jar", R_OK) != 0 ||
        system("javac -version >/dev/null 2>&1") != 0) {
        snprintf(guava_note, sizeof(guava_note),
                 "Guava or javac not installed (Debian: libguava-java, "
                 "default-jdk-headless)");
        return;
    }
    char directory[] = "/tmp/ringbench-guava-XXXXXX";
    if (mkdtemp(directory) == NULL) {
        snprintf(guava_note, sizeof(guava_note), "cannot make a directory");
        return;
    }
    char path[96], command[1024];
    snprintf(path, sizeof(path), "%s/RingbenchJump.java", directory);
    FILE *source = fopen(path, "w");
    bool ok = source != NULL && fputs(guava_class, source) >= 0 && fclose(source) == 0;
    snprintf(command, sizeof(command),
             "javac -nowarn -cp /usr/share/java/guava.jar -d %s %s >/dev/null 2>&1",
             directory, path);
    ok = ok && system(command) == 0;
    snprintf(command, sizeof(command),
             "java -cp /usr/share/java/guava.jar:%s RingbenchJump %s %zu %zu %zu",
             directory, keys_path, library_node_counts[0], library_node_counts[1],
             library_node_counts[2]);
    if (!ok || library_costs_read(command, guava_cost) != 0)
        snprintf(guava_note, sizeof(guava_note), "its build or run failed");
    snprintf(command, sizeof(command), "rm -rf %s", directory);
    if (system(command) != 0)
        fail("cannot remove %s", directory);
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    for (int s = 0; s < SUBJECTS; s++) {
        for (int n = 0; n < NODE_SETS; n++) {
            cost[s][n] = NAN;
            pymemcache_cost[n] = guava_cost[n] = NAN;
        }
    }
    size_t available = cold->count;
    for (int n = 0; n < NODE_SETS; n++) {
        for (int s = 0; s < SUBJECTS; s++) {
            shmring_nodeset_t *set;
            if (nodeset_make(subjects[s], library_node_counts[n], &set) != 0)
                return -1;
            shmring_snapshot_t *snapshot;
            int err = snapshot_make(set, &snapshot);
            shmring_nodeset_free(set);
            if (err != 0)
                return -1;
            size_t count = s == SUBJECT_RENDEZVOUS
                               ? RENDEZVOUS_EVALUATIONS / library_node_counts[n]
                               : LOOKUP_KEYS;
            if (cfg->quick)
                count /= 10;
            count = count < available ? count : available;
            cost[s][n] = snapshot_id_lookup_ns(snapshot, cold, count);
            shmring_snapshot_free(snapshot);
        }
    }
    char keys_path[KEYS_PATH_SIZE];
    size_t library_keys = GUAVA_KEYS < available ? GUAVA_KEYS : available;
    if (cfg->quick)
        library_keys /= 10;
    if (keys_file_write(cold, library_keys, keys_path) != 0) {
        fail("cannot write the libraries' keys");
        return -1;
    }
    run_pymemcache(keys_path,
                   cfg->quick ? PYMEMCACHE_EVALUATIONS / 10 : PYMEMCACHE_EVALUATIONS);
    run_guava(keys_path);
    unlink(keys_path);
    return 0;
}

static void print(const struct config *cfg)
{
    (void)cfg;
    printf("\n6b. Node algorithms: id lookups, in-process snapshot; x: over the row "
           "named\n");
    library_heading_print(28);
    library_row_print(28, "ring", cost[SUBJECT_RING], NULL);
    library_row_print(28, "rendezvous (x ring)", cost[SUBJECT_RENDEZVOUS],
                      cost[SUBJECT_RING]);
    library_row_print(28, "jump (x ring)", cost[SUBJECT_JUMP], cost[SUBJECT_RING]);
    library_row_print(28, "pymemcache (x rendezvous)", pymemcache_cost,
                      cost[SUBJECT_RENDEZVOUS]);
    if (pymemcache_note[0] != '\0')
        printf("  pymemcache: %s\n", pymemcache_note);
    library_row_print(28, "Guava (x jump)", guava_cost, cost[SUBJECT_JUMP]);
    if (guava_note[0] != '\0')
        printf("  Guava: %s\n", guava_note);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *array = json_array();
    for (int n = 0; n < NODE_SETS; n++) {
        json_array_append_new(
            array,
            json_pack("{sIsosososososo}", "nodes", (json_int_t)library_node_counts[n],
                      "ring_ns", json_number(cost[SUBJECT_RING][n]), "rendezvous_ns",
                      json_number(cost[SUBJECT_RENDEZVOUS][n]), "jump_ns",
                      json_number(cost[SUBJECT_JUMP][n]), "pymemcache_ns",
                      json_number(pymemcache_cost[n]), "guava_ns",
                      json_number(guava_cost[n]), "rendezvous_over_ring",
                      json_number(cost[SUBJECT_RENDEZVOUS][n] / cost[SUBJECT_RING][n])));
    }
    json_object_set_new(root, "node_algorithms", array);
}

BENCHMARK(nodes, .early = false);
