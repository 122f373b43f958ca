/*
 * peer_keys: the keys the peer tests send. Usage:
 *
 *   peer_keys NODESET.json PREFIX COUNT SEED [EXACT_TRIES]
 *
 * prints COUNT keys, one a line: pseudo-random keys "PREFIX<n>-<suffix>" (some with
 * UTF-8 letters, whose bytes >= 0x80 the peers' hashes must treat as they do), and
 * among them keys chosen on purpose, found by trying candidates against the ring
 * the node set builds: keys that hash past the last point (the wrap-around), and
 * keys that hash exactly onto a point (the lookup's >= boundary; at most EXACT_TRIES
 * candidates are tried, 3000000 unless given: a test that forges such keys itself
 * gives 0). Their numbers go
 * to standard error, so that the tests can say they exercised them.
 *
 * A test helper: it reads the library's internals (the key hash and the points).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "reference_lookup.h"
#include "snapshot_internal.h"

#define WRAP_KEYS 64
#define EXACT_KEYS 4
#define EXACT_TRIES 3000000u

static char *read_file(const char *path, size_t *length)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *text = NULL;
    size_t size = 0, used = 0, n;
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (used + n + 1 > size) {
            size = (used + n + 1) * 2;
            char *bigger = realloc(text, size);
            if (bigger == NULL) {
                free(text);
                fclose(f);
                return NULL;
            }
            text = bigger;
        }
        memcpy(text + used, chunk, n);
        used += n;
    }
    fclose(f);
    if (text != NULL)
        text[used] = '\0';
    *length = used;
    return text;
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Some keys carry two-byte UTF-8 letters (é, ß, ø): bytes 0xc3 0xa9 and the like. */
static size_t make_key(char *buf, const char *prefix, uint64_t n, uint64_t r)
{
    static const char *const letters[] = {"", "\xc3\xa9", "\xc3\x9f", "\xc3\xb8", "x"};
    return (size_t)snprintf(buf, 128, "%s%llu-%s%llx", prefix, (unsigned long long)n,
                            letters[r % 5], (unsigned long long)(r >> 8));
}

/* Whether HASH is exactly one of the points of SNAPSHOT, whose points are POINTS (the
 * first point >= HASH, as the lookup tests' reference finds it). */
static bool on_a_point(const void *snapshot, const struct snapshot_point *points,
                       uint64_t hash)
{
    return points[reference_first_point(snapshot, hash)].point == hash;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr,
                "usage: peer_keys NODESET.json PREFIX COUNT SEED [EXACT_TRIES]\n");
        return 2;
    }
    size_t length;
    char *text = read_file(argv[1], &length);
    shmring_nodeset_t *set;
    shmring_json_error_t error;
    if (text == NULL ||
        shmring_nodeset_from_json(text, length, NULL, &set, &error) != 0) {
        fprintf(stderr, "peer_keys: cannot read %s: %s\n", argv[1],
                text ? error.text : "no such file");
        return 1;
    }
    free(text);
    void *buffer;
    size_t size;
    shmring_snapshot_t *validated = NULL;
    if (shmring_snapshot_build(set, &buffer, &size) != 0 ||
        shmring_snapshot_new(buffer, size, &validated) != 0) {
        fprintf(stderr, "peer_keys: cannot build the ring\n");
        return 1;
    }
    shmring_snapshot_free(validated); /* BUFFER is valid: read its points below */
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    uint64_t last = points[h->point_count - 1].point;
    shmring_params_t params;
    shmring_nodeset_params(set, &params);

    const char *prefix = argv[2];
    uint64_t count = strtoull(argv[3], NULL, 10);
    uint64_t state = strtoull(argv[4], NULL, 10);
    uint64_t exact_tries = argc == 6 ? strtoull(argv[5], NULL, 10) : EXACT_TRIES;
    uint64_t wraps = 0, exact = 0, n = 0;
    char key[128];

    /* Keys on a point: a hash can only equal a point it can reach (twemproxy's
     * crc16 and crc32 give small values). */
    for (uint64_t tries = 0; tries < exact_tries && exact < EXACT_KEYS; tries++) {
        size_t len = make_key(key, prefix, n, next_random(&state));
        uint64_t hash = shmring__key_hash_any(params.algorithm, params.hash, key, len);
        if (on_a_point(buffer, points, hash)) {
            printf("%s\n", key);
            exact++;
        }
        n++;
    }
    uint64_t printed = exact;
    for (uint32_t tries = 0; tries < EXACT_TRIES && wraps < WRAP_KEYS; tries++) {
        size_t len = make_key(key, prefix, n, next_random(&state));
        uint64_t hash = shmring__key_hash_any(params.algorithm, params.hash, key, len);
        if (hash > last) {
            printf("%s\n", key);
            wraps++;
        }
        n++;
    }
    printed += wraps;
    for (; printed < count; printed++) {
        make_key(key, prefix, n++, next_random(&state));
        printf("%s\n", key);
    }
    fprintf(stderr, "wrap %llu exact %llu\n", (unsigned long long)wraps,
            (unsigned long long)exact);
    free(buffer);
    shmring_nodeset_free(set);
    return 0;
}
