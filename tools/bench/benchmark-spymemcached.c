/*
 * `spymemcached` against the library it reproduces: id lookups on an in-process
 * snapshot of 10, 100 and 500 nodes, with KETAMA_HASH (md5, the default) and
 * NATIVE_HASH (native, ConnectionFactoryBuilder's), and spymemcached's own
 * KetamaNodeLocator.getPrimary() on the same servers and keys, through a Java class
 * compiled here against Debian's jar; as ratios measured in the same run. The keys
 * are text, as a Java client's are: the hexadecimal of the run's cold keys. A
 * library that is missing is reported as such, never failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringbench.h"

enum { NODE_SETS = LIBRARY_NODE_SETS, HASHES = 2 };

static const shmring_hash_t hashes[HASHES] = {SHMRING_HASH_MD5, SHMRING_HASH_NATIVE};
static const char *const java_hashes[HASHES] = {"KETAMA_HASH", "NATIVE_HASH"};

#define KEYS 200000
#define JAR "/usr/share/java/spymemcached.jar"

/* ns per lookup; NAN where not measured. */
static double cost[HASHES][NODE_SETS];
static double library_cost[HASHES][NODE_SETS];
static char library_note[160];

/* The text keys: key i is the hexadecimal of cold key i. */
struct text_keys {
    char *text;
    size_t *offset;
    size_t count;
};

static int text_keys_make(const struct keyset *cold, size_t count, struct text_keys *out)
{
    size_t total = 0;
    for (size_t i = 0; i < count; i++)
        total += 2 * (size_t)cold->length[i] + 1;
    out->text = malloc(total ? total : 1);
    out->offset = malloc((count + 1) * sizeof(*out->offset));
    out->count = count;
    if (out->text == NULL || out->offset == NULL)
        return -1;
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        out->offset[i] = at;
        const uint8_t *key = key_at(cold, i);
        for (size_t b = 0; b < cold->length[i]; b++)
            at += (size_t)sprintf(out->text + at, "%02x", key[b]);
        out->text[at++] = '\0';
    }
    out->offset[count] = at;
    return 0;
}

/* The best of LIBRARY_PASSES passes over the keys, in ns per lookup. */
static double time_lookups(const shmring_snapshot_t *snapshot,
                           const struct text_keys *keys)
{
    double best = INFINITY;
    for (int pass = 0; pass < LIBRARY_PASSES; pass++) {
        uint64_t sum = 0;
        double start = now_seconds();
        for (size_t i = 0; i < keys->count; i++) {
            uint32_t id = 0;
            const char *key = keys->text + keys->offset[i];
            size_t length = keys->offset[i + 1] - keys->offset[i] - 1;
            if (shmring_snapshot_lookup_id(snapshot, key, length, &id) != 0)
                return NAN;
            sum += id;
        }
        double ns = (now_seconds() - start) * 1e9 / (double)keys->count;
        sink += sum;
        best = ns < best ? ns : best;
    }
    return best;
}

/* spymemcached over node_address()'s servers: "HASH NODES NS" per hash and set. */
static const char java_class[] =
    "import java.net.InetSocketAddress;\n"
    "import java.nio.channels.SocketChannel;\n"
    "import java.nio.file.*;\n"
    "import java.util.*;\n"
    "import net.spy.memcached.*;\n"
    "public class RingbenchSpymemcached {\n"
    "  public static void main(String[] a) throws Exception {\n"
    "    String[] keys = Files.readAllLines(Paths.get(a[0])).toArray(new String[0]);\n"
    "    long sum = 0;\n"
    "    for (int h = 1; h < a.length; h++) {\n"
    "      String[] spec = a[h].split(\":\");\n"
    "      HashAlgorithm hash = DefaultHashAlgorithm.valueOf(spec[0]);\n"
    "      int n = Integer.parseInt(spec[1]);\n"
    "      StringBuilder list = new StringBuilder();\n"
    "      for (int i = 0; i < n; i++)\n"
    "        list.append(String.format(\"10.%d.%d.%d:11211 \", i >> 16 & 255, i >> 8 & "
    "255,"
    " i & 255));\n"
    "      KetamaConnectionFactory f = new KetamaConnectionFactory(16, 16384, 1000, "
    "hash,\n"
    "          KetamaNodeKeyFormatter.Format.SPYMEMCACHED, new HashMap<>());\n"
    "      List<MemcachedNode> nodes = new ArrayList<>();\n"
    "      List<SocketChannel> channels = new ArrayList<>();\n"
    "      for (InetSocketAddress address : AddrUtil.getAddresses(list.toString())) {\n"
    "        SocketChannel channel = SocketChannel.open();\n"
    "        channels.add(channel);\n"
    "        nodes.add(f.createMemcachedNode(address, channel, 16384));\n"
    "      }\n"
    "      NodeLocator locator = f.createLocator(nodes);\n"
    "      double best = 1e30;\n"
    "      for (int pass = 0; pass < 10; pass++) {\n"
    "        long t = System.nanoTime();\n"
    "        for (String k : keys) sum += locator.getPrimary(k).hashCode();\n"
    "        best = Math.min(best, (System.nanoTime() - t) / (double) keys.length);\n"
    "      }\n"
    "      System.out.println(spec[0] + \" \" + n + \" \" + best);\n"
    "      for (SocketChannel channel : channels) channel.close();\n"
    "    }\n"
    "    if (sum == 42) System.err.println();\n"
    "  }\n"
    "}\n";

/* Runs COMMAND and reads its "HASH NODES NS" lines into library_cost. */
static int read_costs(const char *command)
{
    FILE *p = popen(command, "r");
    if (p == NULL)
        return -1;
    char hash[32];
    size_t nodes;
    double ns;
    while (fscanf(p, "%31s %zu %lf", hash, &nodes, &ns) == 3) {
        for (int h = 0; h < HASHES; h++) {
            for (int n = 0; n < NODE_SETS; n++) {
                if (strcmp(hash, java_hashes[h]) == 0 && library_node_counts[n] == nodes)
                    library_cost[h][n] = ns;
            }
        }
    }
    return pclose(p) == 0 ? 0 : -1;
}

static void run_library(const struct text_keys *keys)
{
    if (access(JAR, R_OK) != 0 || system("javac -version >/dev/null 2>&1") != 0) {
        snprintf(library_note, sizeof(library_note),
                 "spymemcached or javac not installed (Debian: libspymemcached-java, "
                 "default-jdk-headless)");
        return;
    }
    char directory[] = "/tmp/ringbench-spymemcached-XXXXXX";
    if (mkdtemp(directory) == NULL) {
        snprintf(library_note, sizeof(library_note), "cannot make a directory");
        return;
    }
    char path[96], keys_path[96], command[1024];
    snprintf(path, sizeof(path), "%s/RingbenchSpymemcached.java", directory);
    snprintf(keys_path, sizeof(keys_path), "%s/keys", directory);
    FILE *source = fopen(path, "w");
    bool ok = source != NULL && fputs(java_class, source) >= 0 && fclose(source) == 0;
    FILE *key_file = ok ? fopen(keys_path, "w") : NULL;
    ok = key_file != NULL;
    for (size_t i = 0; ok && i < keys->count; i++)
        ok = fprintf(key_file, "%s\n", keys->text + keys->offset[i]) > 0;
    ok = key_file != NULL && fclose(key_file) == 0 && ok;
    snprintf(command, sizeof(command), "javac -nowarn -cp %s -d %s %s >/dev/null 2>&1",
             JAR, directory, path);
    ok = ok && system(command) == 0;
    int length =
        snprintf(command, sizeof(command), "java -cp %s:%s RingbenchSpymemcached %s", JAR,
                 directory, keys_path);
    for (int h = 0; h < HASHES; h++) {
        for (int n = 0; n < NODE_SETS; n++)
            length += snprintf(command + length, sizeof(command) - (size_t)length,
                               " %s:%zu", java_hashes[h], library_node_counts[n]);
    }
    if (!ok || read_costs(command) != 0)
        snprintf(library_note, sizeof(library_note), "its build or run failed");
    snprintf(command, sizeof(command), "rm -rf %s", directory);
    if (system(command) != 0)
        fail("cannot remove %s", directory);
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    for (int h = 0; h < HASHES; h++) {
        for (int n = 0; n < NODE_SETS; n++)
            cost[h][n] = library_cost[h][n] = NAN;
    }
    size_t count = KEYS < cold->count ? KEYS : cold->count;
    if (cfg->quick)
        count /= 10;
    struct text_keys keys;
    if (text_keys_make(cold, count, &keys) != 0) {
        fail("cannot make the text keys");
        return -1;
    }
    for (int h = 0; h < HASHES; h++) {
        for (int n = 0; n < NODE_SETS; n++) {
            shmring_nodeset_t *set;
            if (nodeset_make(SHMRING_ALGORITHM_SPYMEMCACHED, library_node_counts[n],
                             &set) != 0)
                return -1;
            shmring_params_t params;
            shmring_nodeset_params(set, &params);
            params.hash = hashes[h];
            shmring_snapshot_t *snapshot;
            int err = shmring_nodeset_set_params(set, &params);
            if (err == 0)
                err = snapshot_make(set, &snapshot);
            shmring_nodeset_free(set);
            if (err != 0)
                return -1;
            cost[h][n] = time_lookups(snapshot, &keys);
            shmring_snapshot_free(snapshot);
        }
    }
    run_library(&keys);
    free(keys.text);
    free(keys.offset);
    return 0;
}

static void print(const struct config *cfg)
{
    (void)cfg;
    printf("\n6d. spymemcached: id lookups on text keys, in-process snapshot; x: over "
           "the row named\n");
    library_heading_print(32);
    library_row_print(32, "spymemcached md5", cost[0], NULL);
    library_row_print(32, "spymemcached native", cost[1], NULL);
    library_row_print(32, "KETAMA_HASH locator (x md5)", library_cost[0], cost[0]);
    library_row_print(32, "NATIVE_HASH locator (x native)", library_cost[1], cost[1]);
    if (library_note[0] != '\0')
        printf("  spymemcached: %s\n", library_note);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *array = json_array();
    for (int n = 0; n < NODE_SETS; n++) {
        json_array_append_new(
            array, json_pack("{sIsosososo}", "nodes", (json_int_t)library_node_counts[n],
                             "md5_ns", json_number(cost[0][n]), "native_ns",
                             json_number(cost[1][n]), "library_md5_ns",
                             json_number(library_cost[0][n]), "library_native_ns",
                             json_number(library_cost[1][n])));
    }
    json_object_set_new(root, "spymemcached", array);
}

BENCHMARK(spymemcached, .early = false);
