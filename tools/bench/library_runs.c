/*
 * What the benchmarks that time a library in its own runtime share (nodes, clients,
 * spymemcached): the node counts they measure, shmring's side timed on an in-process
 * snapshot, the keys handed to the library's program as a file, the program's figures
 * read back, and the table rows with their ratios.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringbench.h"

const size_t library_node_counts[LIBRARY_NODE_SETS] = {10, 100, 500};

double snapshot_id_lookup_ns(const shmring_snapshot_t *snapshot,
                             const struct keyset *keys, size_t count)
{
    double best = INFINITY;
    for (int pass = 0; pass < LIBRARY_PASSES; pass++) {
        uint64_t sum = 0;
        double start = now_seconds();
        for (size_t i = 0; i < count; i++) {
            uint32_t id = 0;
            if (shmring_snapshot_lookup_id(snapshot, key_at(keys, i), keys->length[i],
                                           &id) != 0)
                return NAN;
            sum += id;
        }
        double ns = (now_seconds() - start) * 1e9 / (double)count;
        sink += sum;
        best = ns < best ? ns : best;
    }
    return best;
}

int keys_file_write(const struct keyset *keys, size_t count, char path[KEYS_PATH_SIZE])
{
    snprintf(path, KEYS_PATH_SIZE, "/tmp/ringbench-keys-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        unlink(path);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        const uint8_t *key = key_at(keys, i);
        for (size_t b = 0; b < keys->length[i]; b++)
            fprintf(f, "%02x", key[b]);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

int library_costs_read(const char *command, double out[LIBRARY_NODE_SETS])
{
    FILE *p = popen(command, "r");
    if (p == NULL)
        return -1;
    size_t nodes;
    double ns;
    while (fscanf(p, "%zu %lf", &nodes, &ns) == 2) {
        for (int n = 0; n < LIBRARY_NODE_SETS; n++) {
            if (library_node_counts[n] == nodes)
                out[n] = ns;
        }
    }
    return pclose(p) == 0 ? 0 : -1;
}

void library_heading_print(int label_width)
{
    printf("%-*s", label_width, "nodes");
    for (int n = 0; n < LIBRARY_NODE_SETS; n++)
        printf("%24zu", library_node_counts[n]);
    printf("\n");
}

void library_row_print(int label_width, const char *label, const double *values,
                       const double *baseline)
{
    printf("%-*s", label_width, label);
    for (int n = 0; n < LIBRARY_NODE_SETS; n++) {
        if (isnan(values[n]))
            printf("%24s", "-");
        else if (baseline == NULL)
            printf("%16.1f ns     ", values[n]);
        else
            printf("%12.1f ns %7.1fx", values[n], values[n] / baseline[n]);
    }
    printf("\n");
}
