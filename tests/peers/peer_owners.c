/*
 * peer_owners: the owners that the library gives keys. Usage:
 *
 *   peer_owners NODESET.json < KEYS
 *
 * reads the JSON node set, builds its snapshot, and for each line of standard input
 * (a key in hexadecimal; an empty line is the empty key) prints the name of the
 * node that owns it. Keys travel in hexadecimal so that any bytes, newlines
 * included, reach the lookup as they are. Exits 1 with a message on any error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmring_ctl.h"

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: peer_owners NODESET.json < KEYS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    static char text[1 << 24];
    size_t length = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    shmring_nodeset_t *set;
    shmring_json_error_t error;
    int err = shmring_nodeset_from_json(text, length, NULL, &set, &error);
    if (err != 0) {
        fprintf(stderr, "peer_owners: %s: %s\n", argv[1], shmring_strerror(err));
        return 1;
    }
    shmring_snapshot_t *snapshot;
    err = shmring_nodeset_snapshot(set, &snapshot);
    if (err != 0) {
        fprintf(stderr, "peer_owners: cannot build: %s\n", shmring_strerror(err));
        return 1;
    }
    static char line[1 << 16];
    static unsigned char key[1 << 15];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        size_t n = strcspn(line, "\n");
        if (n % 2 != 0) {
            fprintf(stderr, "peer_owners: odd hex line\n");
            return 1;
        }
        for (size_t i = 0; i < n / 2; i++) {
            int high = hex_value(line[2 * i]), low = hex_value(line[2 * i + 1]);
            if (high < 0 || low < 0) {
                fprintf(stderr, "peer_owners: bad hex line\n");
                return 1;
            }
            key[i] = (unsigned char)(high << 4 | low);
        }
        shmring_node_t node;
        err = shmring_snapshot_lookup(snapshot, key, n / 2, &node);
        if (err != 0) {
            fprintf(stderr, "peer_owners: lookup: %s\n", shmring_strerror(err));
            return 1;
        }
        printf("%s\n", node.name);
    }
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
    return 0;
}
