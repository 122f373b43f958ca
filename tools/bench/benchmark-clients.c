/*
 * The client libraries' rings against the libraries themselves: `dalli` against Ruby
 * Dalli's Ring (server_for_hash_key of hash_for, the continuum search of
 * server_for_key) and `groupcache` (50 replicas, HTTPPool's) against Go groupcache's
 * consistenthash.Map.Get, in ns per id lookup on an in-process snapshot of 10, 100
 * and 500 nodes, on the same keys and server strings, as ratios measured in the same
 * run. A library that is missing is reported as such, never failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringbench.h"

enum { NODE_SETS = LIBRARY_NODE_SETS, SUBJECTS = 2 };
enum subject { SUBJECT_DALLI, SUBJECT_GROUPCACHE };

static const shmring_algorithm_t subjects[SUBJECTS] = {SHMRING_ALGORITHM_DALLI,
                                                       SHMRING_ALGORITHM_GROUPCACHE};

#define GROUPCACHE_REPLICAS 50
#define LOOKUP_KEYS 200000
#define LIBRARY_KEYS 200000

/* ns per lookup; NAN where not measured. */
static double cost[SUBJECTS][NODE_SETS];
static double library_cost[SUBJECTS][NODE_SETS];
static char library_note[SUBJECTS][160];

/* Dalli's client ring over node_address()'s servers: ns per key of the continuum
 * search that Ring#server_for_key makes before its alive? check. */
static const char dalli_script[] =
    "require 'dalli'\n"
    "keys = File.readlines(ARGV[0], chomp: true).map { |l| [l].pack('H*') }\n"
    "ARGV[1..].map(&:to_i).each do |n|\n"
    "  servers = (0...n).map { |i| format('10.%d.%d.%d:11211', i >> 16 & 255, "
    "i >> 8 & 255, i & 255) }\n"
    "  ring = Dalli::Client.new(servers, threadsafe: false).send(:ring)\n"
    "  best = 1e30\n"
    "  3.times do\n"
    "    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)\n"
    "    keys.each { |k| ring.send(:server_for_hash_key, ring.send(:hash_for, k)) }\n"
    "    best = [best, (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) / "
    "keys.size].min\n"
    "  end\n"
    "  puts \"#{n} #{best * 1e9}\"\n"
    "  STDOUT.flush\n"
    "end\n";

static const char groupcache_program[] =
    "package main\n"
    "import (\n"
    "\t\"bufio\"\n\t\"encoding/hex\"\n\t\"fmt\"\n\t\"os\"\n\t\"strconv\"\n\t\"time\"\n"
    "\t\"github.com/golang/groupcache/consistenthash\"\n"
    ")\n"
    "func main() {\n"
    "\tf, _ := os.Open(os.Args[1])\n"
    "\tvar keys []string\n"
    "\tin := bufio.NewScanner(f)\n"
    "\tfor in.Scan() {\n"
    "\t\tk, _ := hex.DecodeString(in.Text())\n"
    "\t\tkeys = append(keys, string(k))\n"
    "\t}\n"
    "\tsum := 0\n"
    "\tfor _, a := range os.Args[2:] {\n"
    "\t\tn, _ := strconv.Atoi(a)\n"
    "\t\tm := consistenthash.New(50, nil)\n"
    "\t\tfor i := 0; i < n; i++ {\n"
    "\t\t\tm.Add(fmt.Sprintf(\"10.%d.%d.%d:11211\", i>>16&255, i>>8&255, i&255))\n"
    "\t\t}\n"
    "\t\tbest := 1e30\n"
    "\t\tfor pass := 0; pass < 5; pass++ {\n"
    "\t\t\tt := time.Now()\n"
    "\t\t\tfor _, k := range keys {\n"
    "\t\t\t\tsum += len(m.Get(k))\n"
    "\t\t\t}\n"
    "\t\t\tns := float64(time.Since(t).Nanoseconds()) / float64(len(keys))\n"
    "\t\t\tif ns < best {\n"
    "\t\t\t\tbest = ns\n"
    "\t\t\t}\n"
    "\t\t}\n"
    "\t\tfmt.Println(n, best)\n"
    "\t}\n"
    "\tif sum == 42 {\n"
    "\t\tfmt.Fprintln(os.Stderr)\n"
    "\t}\n"
    "}\n";

static void run_dalli(const char *keys_path)
{
    char *note = library_note[SUBJECT_DALLI];
    if (system("ruby -e \"require 'dalli'\" >/dev/null 2>&1") != 0) {
        snprintf(note, 160, "Dalli not installed (Debian: ruby-dalli)");
        return;
    }
    FILE *script = fopen("/tmp/ringbench-dalli.rb", "w");
    if (script == NULL || fputs(dalli_script, script) < 0 || fclose(script) != 0) {
        snprintf(note, 160, "cannot write its script");
        return;
    }
    char command[1024];
    snprintf(command, sizeof(command), "ruby /tmp/ringbench-dalli.rb %s %zu %zu %zu",
             keys_path, library_node_counts[0], library_node_counts[1],
             library_node_counts[2]);
    if (library_costs_read(command, library_cost[SUBJECT_DALLI]) != 0)
        snprintf(note, 160, "its run failed");
    unlink("/tmp/ringbench-dalli.rb");
}

static void run_groupcache(const char *keys_path)
{
    char *note = library_note[SUBJECT_GROUPCACHE];
    if (access("/usr/share/gocode/src/github.com/golang/groupcache/consistenthash",
               R_OK) != 0 ||
        system("go version >/dev/null 2>&1") != 0) {
        snprintf(note, 160,
                 "groupcache or go not installed (Debian: "
                 "golang-github-golang-groupcache-dev, golang-go)");
        return;
    }
    char directory[] = "/tmp/ringbench-groupcache-XXXXXX";
    if (mkdtemp(directory) == NULL) {
        snprintf(note, 160, "cannot make a directory");
        return;
    }
    char path[96], command[1024];
    snprintf(path, sizeof(path), "%s/bench.go", directory);
    FILE *source = fopen(path, "w");
    bool ok =
        source != NULL && fputs(groupcache_program, source) >= 0 && fclose(source) == 0;
    /* Offline, in GOPATH mode over Debian's packages. */
    snprintf(command, sizeof(command),
             "cd %s && GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= "
             "GOCACHE=%s/cache HOME=%s go build -o bench bench.go >/dev/null 2>&1",
             directory, directory, directory);
    ok = ok && system(command) == 0;
    snprintf(command, sizeof(command), "%s/bench %s %zu %zu %zu", directory, keys_path,
             library_node_counts[0], library_node_counts[1], library_node_counts[2]);
    if (!ok || library_costs_read(command, library_cost[SUBJECT_GROUPCACHE]) != 0)
        snprintf(note, 160, "its build or run failed");
    snprintf(command, sizeof(command), "rm -rf %s", directory);
    if (system(command) != 0)
        fail("cannot remove %s", directory);
}

static int run(const struct config *cfg, const struct keyset *cold)
{
    for (int s = 0; s < SUBJECTS; s++) {
        for (int n = 0; n < NODE_SETS; n++)
            cost[s][n] = library_cost[s][n] = NAN;
        library_note[s][0] = '\0';
    }
    size_t available = cold->count;
    for (int n = 0; n < NODE_SETS; n++) {
        for (int s = 0; s < SUBJECTS; s++) {
            shmring_nodeset_t *set;
            if (nodeset_make(subjects[s], library_node_counts[n], &set) != 0)
                return -1;
            shmring_params_t params;
            shmring_nodeset_params(set, &params);
            params.vnodes = GROUPCACHE_REPLICAS;
            int err = shmring_nodeset_set_params(set, &params);
            shmring_snapshot_t *snapshot = NULL;
            if (err == 0)
                err = snapshot_make(set, &snapshot);
            shmring_nodeset_free(set);
            if (err != 0)
                return -1;
            size_t count = cfg->quick ? LOOKUP_KEYS / 10 : LOOKUP_KEYS;
            count = count < available ? count : available;
            cost[s][n] = snapshot_id_lookup_ns(snapshot, cold, count);
            shmring_snapshot_free(snapshot);
        }
    }
    char keys_path[KEYS_PATH_SIZE];
    size_t library_keys = LIBRARY_KEYS < available ? LIBRARY_KEYS : available;
    if (cfg->quick)
        library_keys /= 10;
    if (keys_file_write(cold, library_keys, keys_path) != 0) {
        fail("cannot write the libraries' keys");
        return -1;
    }
    run_dalli(keys_path);
    run_groupcache(keys_path);
    unlink(keys_path);
    return 0;
}

static void print(const struct config *cfg)
{
    (void)cfg;
    printf("\n6c. Client libraries' rings: id lookups, in-process snapshot; x: over the "
           "row named\n");
    library_heading_print(28);
    library_row_print(28, "dalli", cost[SUBJECT_DALLI], NULL);
    library_row_print(28, "Dalli, Ruby (x dalli)", library_cost[SUBJECT_DALLI],
                      cost[SUBJECT_DALLI]);
    if (library_note[SUBJECT_DALLI][0] != '\0')
        printf("  Dalli: %s\n", library_note[SUBJECT_DALLI]);
    library_row_print(28, "groupcache (50 replicas)", cost[SUBJECT_GROUPCACHE], NULL);
    library_row_print(28, "groupcache, Go (x ours)", library_cost[SUBJECT_GROUPCACHE],
                      cost[SUBJECT_GROUPCACHE]);
    if (library_note[SUBJECT_GROUPCACHE][0] != '\0')
        printf("  groupcache: %s\n", library_note[SUBJECT_GROUPCACHE]);
}

static void json(const struct config *cfg, json_t *root)
{
    (void)cfg;
    json_t *array = json_array();
    for (int n = 0; n < NODE_SETS; n++) {
        json_array_append_new(
            array,
            json_pack("{sIsosososo}", "nodes", (json_int_t)library_node_counts[n],
                      "dalli_ns", json_number(cost[SUBJECT_DALLI][n]), "dalli_ruby_ns",
                      json_number(library_cost[SUBJECT_DALLI][n]), "groupcache_ns",
                      json_number(cost[SUBJECT_GROUPCACHE][n]), "groupcache_go_ns",
                      json_number(library_cost[SUBJECT_GROUPCACHE][n])));
    }
    json_object_set_new(root, "client_rings", array);
}

BENCHMARK(clients, .early = false);
