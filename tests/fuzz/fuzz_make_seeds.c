/*
 * Writes the seed corpus of fuzz_snapshot into a directory: small real snapshots of
 * every algorithm (with down nodes, gaps in the ids, addresses of every shape and
 * UTF-8 names), and recipes for its structure-aware path. Run once by hand; the
 * output is committed in tests/fuzz/corpus/snapshot/:
 *
 *   cmake --build build-fuzz --target fuzz_make_seeds
 *   build-fuzz/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus/snapshot
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmring_ctl.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct seed_node {
    const char *name;
    const char *address;
    uint32_t weight;
    shmring_state_t state;
};

static int write_file(const char *dir, const char *name, const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    bool written = f != NULL && fwrite(data, 1, size, f) == size;
    if (f != NULL && fclose(f) != 0)
        written = false;
    if (!written) {
        fprintf(stderr, "fuzz_make_seeds: error: cannot write '%s'\n", path);
        return 1;
    }
    return 0;
}

/* Writes BUFFER to DIR/NAME, and, when FOREIGN is not NULL, to DIR/FOREIGN with its
 * magic byte-swapped, as a writer of the other byte order would have left it. */
static int write_buffer(const char *dir, const char *name, const char *foreign,
                        unsigned char *buffer, size_t size)
{
    int failed = write_file(dir, name, buffer, size);
    if (foreign != NULL && size >= sizeof(uint64_t)) {
        uint64_t magic;
        memcpy(&magic, buffer, sizeof(magic));
        magic = __builtin_bswap64(magic);
        memcpy(buffer, &magic, sizeof(magic));
        failed |= write_file(dir, foreign, buffer, size);
    }
    return failed;
}

/* Builds the snapshot of NODES (COUNT of them) with PARAMS, the node called REMOVED
 * (if any) taken out again after all were added, and writes it with write_buffer(). */
static int write_snapshot(const char *dir, const char *name, const char *foreign,
                          shmring_params_t params, const struct seed_node *nodes,
                          size_t count, const char *removed)
{
    shmring_nodeset_t *set;
    void *buffer = NULL;
    size_t size = 0;
    int err = shmring_nodeset_new(&set);
    if (err != 0)
        return 1;
    err = shmring_nodeset_set_params(set, &params);
    for (size_t i = 0; err == 0 && i < count; i++)
        err = shmring_nodeset_add(set, nodes[i].name, nodes[i].address, nodes[i].weight,
                                  nodes[i].state, NULL);
    if (err == 0 && removed != NULL)
        err = shmring_nodeset_remove(set, removed);
    if (err == 0)
        err = shmring_snapshot_build(set, &buffer, &size);
    shmring_snapshot_t *snapshot = NULL;
    if (err == 0)
        err = shmring_snapshot_new(buffer, size, &snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
    if (err != 0) {
        fprintf(stderr, "fuzz_make_seeds: error: %s: %s\n", name, shmring_strerror(err));
        free(buffer);
        return 1;
    }
    int failed = write_buffer(dir, name, foreign, buffer, size);
    free(buffer);
    return failed;
}

/*
 * Recipes, in fuzz_snapshot.c's format: 0x80 (or 0xc0: leave the checksum stale),
 * algorithm, hash, vnodes - 1, table size choice, node count; per node a flags byte,
 * its weight, name length - 1 and name bytes (and an address when flag 0x08 is set);
 * the number of tamperings and theirs; lookup keys.
 */
struct recipe_seed {
    const char *name;
    const char *bytes;
    size_t size;
};

#define RECIPE(name, bytes)                                                              \
    {                                                                                    \
        name, bytes, sizeof(bytes) - 1                                                   \
    }

/* The body of four client libraries' recipes: three servers with addresses
 * (10.0.A.B:PORT), the second of weight 3, then the key "key-1". */
#define CLIENT_SERVERS_AND_KEY                                                           \
    "\x08\x00\x02"                                                                       \
    "one"                                                                                \
    "\x00\x01\x02\x39\x30"                                                               \
    "\x08\x02\x02"                                                                       \
    "two"                                                                                \
    "\x00\x03\x04\xeb\x2b"                                                               \
    "\x08\x00\x04"                                                                       \
    "three"                                                                              \
    "\x00\x05\x06\x01\x00"                                                               \
    "\x00"                                                                               \
    "key-1"

static const struct recipe_seed recipes[] = {
    RECIPE("recipe-ring", "\x80\x00\x00\x03\x00\x03"
                          "\x00\x00\x04"
                          "alpha"
                          "\x00\x01\x03"
                          "beta"
                          "\x01\x00\x04"
                          "gamma"
                          "\x00"
                          "key-1"),
    RECIPE("recipe-ketama-addresses", "\x80\x02\x01\x00\x00\x03"
                                      "\x08\x00\x02"
                                      "one"
                                      "\x00\x01\x02\x39\x30"
                                      "\x08\x02\x02"
                                      "two"
                                      "\x01\x03\x04\xeb\x2b"
                                      "\x08\x00\x04"
                                      "three"
                                      "\x03\x05\x06\x01\x00"
                                      "\x00"),
    RECIPE("recipe-maglev", "\x80\x01\x04\x00\x06\x04"
                            "\x00\x00\x01"
                            "m1"
                            "\x02\x10\x00\x01"
                            "m2"
                            "\x10\x00\x01"
                            "m3"
                            "\x01\x00\x01"
                            "m4"
                            "\x00"),
    /* Tampered: vnodes nudged, a point's owner changed, a node's weight set. */
    RECIPE("recipe-ring-tampered", "\x80\x00\x02\x07\x00\x02"
                                   "\x00\x00\x01"
                                   "n1"
                                   "\x00\x00\x01"
                                   "n2"
                                   "\x03"
                                   "\x03\x00\x00\x05\x01\x01"
                                   "\x05\x00\x00\x01\x00\x01\x00\x01"
                                   "\x04\x00\x00\x01\x00\x01\x00\x20"
                                   "key"),
    /* Tampered: a table slot given to another node, the buffer grown by 64 bytes. */
    RECIPE("recipe-maglev-tampered", "\x80\x01\x00\x00\x04\x03"
                                     "\x00\x00\x00"
                                     "x"
                                     "\x00\x00\x00"
                                     "y"
                                     "\x00\x00\x00"
                                     "z"
                                     "\x02"
                                     "\x07\x00\x00\x00\x00\x00\x00\x02"
                                     "\x08\x00\x00\x40\x02"),
    /* Tampered: a bucket answer nudged by one (its split), then one given to the
     * other node (its owner index, the answer's top bits). */
    RECIPE("recipe-ring-answer-tampered", "\x80\x00\x00\x0f\x00\x02"
                                          "\x00\x00\x01"
                                          "p1"
                                          "\x00\x00\x01"
                                          "p2"
                                          "\x02"
                                          "\x07\x00\x00\x01\x03\x00\x01\x01"
                                          "\x07\x00\x00\x01\x05\x00\x03\x00\x10\x00\x00"
                                          "key"),
    /* haproxy and the client libraries' algorithms: three servers with addresses
     * (10.0.A.B:PORT), one of weight 3 but for groupcache (haproxy's third down);
     * haproxy, uhashring, hashring and spymemcached with another hash than their default
     * (djb2, ketama, sha1, fnv1a_64: the hash byte counts among the hashes each takes).
     */
    RECIPE("recipe-haproxy", "\x80\x0a\x02\x0f\x00\x03"
                             "\x08\x00\x02"
                             "one"
                             "\x00\x01\x02\x39\x30"
                             "\x08\x02\x02"
                             "two"
                             "\x00\x03\x04\xeb\x2b"
                             "\x09\x00\x04"
                             "three"
                             "\x00\x05\x06\x01\x00"
                             "\x00"
                             "key-1"),
    RECIPE("recipe-uhashring-ketama", "\x80\x0b\x01\x1f\x00\x03" CLIENT_SERVERS_AND_KEY),
    RECIPE("recipe-hashring-sha1", "\x80\x0c\x01\x1f\x00\x03" CLIENT_SERVERS_AND_KEY),
    RECIPE("recipe-dalli", "\x80\x0d\x00\x00\x00\x03" CLIENT_SERVERS_AND_KEY),
    RECIPE("recipe-spymemcached-native",
           "\x80\x0e\x02\x1f\x00\x03" CLIENT_SERVERS_AND_KEY),
    RECIPE("recipe-groupcache", "\x80\x0f\x00\x07\x00\x03"
                                "\x08\x00\x02"
                                "one"
                                "\x00\x01\x02\x39\x30"
                                "\x08\x00\x02"
                                "two"
                                "\x00\x03\x04\xeb\x2b"
                                "\x08\x00\x04"
                                "three"
                                "\x00\x05\x06\x01\x00"
                                "\x00"
                                "key-1"),
    /* A name one byte shorter than it is: valid text, but no NUL after it. */
    RECIPE("recipe-name-unterminated", "\x80\x00\x00\x00\x00\x01"
                                       "\x00\x00\x01"
                                       "ab"
                                       "\x01"
                                       "\x04\x00\x00\x00\x00\x04\x01\xff"),
    /* A byte of the checksum changed, and the checksum left as it is. */
    RECIPE("recipe-stale-checksum", "\xc0\x00\x00\x00\x00\x01"
                                    "\x00\x00\x00"
                                    "s"
                                    "\x01"
                                    "\x00\x18\x00\x55"),
};

static const struct seed_node small[] = {
    {"alpha", NULL, 1, SHMRING_STATE_UP},
    {"beta", NULL, 2, SHMRING_STATE_UP},
    {"gamma", NULL, 1, SHMRING_STATE_DOWN},
    {"delta", NULL, 1, SHMRING_STATE_UP},
};
static const struct seed_node addressed[] = {
    {"cache-a", "10.0.0.1:11211", 1, SHMRING_STATE_UP},
    {"cache-b", "10.0.0.2:11212", 3, SHMRING_STATE_UP},
    {"cache-c", "[fe80::1]:11211", 1, SHMRING_STATE_UP},
    {"cache-d", "cache-d.example", 2, SHMRING_STATE_DOWN},
};
static const struct seed_node unicode[] = {
    {"caf\xc3\xa9", "caf\xc3\xa9:1", 1, SHMRING_STATE_UP},
    {"\xe8\x8a\x82\xe7\x82\xb9", NULL, 2, SHMRING_STATE_UP},
    {"\xf0\x9f\x90\x98", NULL, 1, SHMRING_STATE_UP},
};
/* Servers every client library takes (dalli and groupcache take no down nodes). */
static const struct seed_node servers[] = {
    {"cache-a", "10.0.0.1:11211", 1, SHMRING_STATE_UP},
    {"cache-b", "10.0.0.2:11212", 3, SHMRING_STATE_UP},
    {"cache-c", "[fe80::1]:11211", 1, SHMRING_STATE_UP},
};
/* groupcache's peers, which take no weights. */
static const struct seed_node peers[] = {
    {"peer-a", NULL, 1, SHMRING_STATE_UP},
    {"peer-b", NULL, 1, SHMRING_STATE_UP},
    {"peer-c", NULL, 1, SHMRING_STATE_UP},
};
static const struct seed_node down[] = {
    {"d1", NULL, 1, SHMRING_STATE_DOWN},
    {"d2", NULL, 1, SHMRING_STATE_DOWN},
};
static const struct seed_node one[] = {{"only", NULL, 1, SHMRING_STATE_UP}};
static const struct seed_node lopsided[] = {
    {"light", NULL, 1, SHMRING_STATE_UP},
    {"heavy", NULL, 65535, SHMRING_STATE_UP},
};

/* The real snapshots: each is NODES built with PARAMS, the node REMOVED (if any) taken
 * out again after all were added, written to NAME and, when FOREIGN is not NULL, to
 * FOREIGN with its magic byte-swapped. */
struct snapshot_seed {
    const char *name;
    const char *foreign;
    shmring_params_t params;
    const struct seed_node *nodes;
    size_t count;
    const char *removed;
};

#define NODES(array) (array), COUNT(array)
#define NO_NODES NULL, 0
#define SNAPSHOT(name, foreign, algorithm, hash, vnodes, table_size, nodes, removed)     \
    {                                                                                    \
        name, foreign,                                                                   \
            {SHMRING_ALGORITHM_##algorithm, SHMRING_HASH_##hash, vnodes, table_size},    \
            nodes, removed                                                               \
    }

static const struct snapshot_seed snapshots[] = {
    SNAPSHOT("ring-xxh3-small.snap", "ring-foreign-byte-order.snap", RING, XXH3, 4, 0,
             NODES(small), NULL),
    SNAPSHOT("ring-crc32-addresses.snap", NULL, RING, CRC32, 8, 0, NODES(addressed),
             NULL),
    SNAPSHOT("ring-fnv1a-unicode.snap", NULL, RING, FNV1A, 5, 0, NODES(unicode), NULL),
    SNAPSHOT("ring-murmur3-one.snap", NULL, RING, MURMUR3, 1, 0, NODES(one), NULL),
    SNAPSHOT("ring-md5-id-gap.snap", NULL, RING, MD5, 3, 0, NODES(small), "beta"),
    SNAPSHOT("ring-xxh3-all-down.snap", NULL, RING, XXH3, 160, 0, NODES(down), NULL),
    SNAPSHOT("ring-xxh3-empty.snap", NULL, RING, XXH3, 160, 0, NO_NODES, NULL),
    SNAPSHOT("ketama-addresses.snap", NULL, KETAMA, MD5, 160, 0, NODES(addressed), NULL),
    SNAPSHOT("ketama-lopsided.snap", NULL, KETAMA, MD5, 160, 0, NODES(lopsided), NULL),
    SNAPSHOT("ketama-all-down.snap", NULL, KETAMA, MD5, 160, 0, NODES(down), NULL),
    SNAPSHOT("maglev-xxh3-13.snap", NULL, MAGLEV, XXH3, 160, 13, NODES(small), NULL),
    SNAPSHOT("maglev-murmur3-101-unicode.snap", NULL, MAGLEV, MURMUR3, 160, 101,
             NODES(unicode), NULL),
    SNAPSHOT("maglev-crc32-lopsided-7.snap", NULL, MAGLEV, CRC32, 160, 7, NODES(lopsided),
             NULL),
    SNAPSHOT("maglev-all-down.snap", NULL, MAGLEV, FNV1A, 160, 0, NODES(down), NULL),
    SNAPSHOT("haproxy-addresses.snap", NULL, HAPROXY, SDBM_AVALANCHE, 160, 0,
             NODES(addressed), NULL),
    SNAPSHOT("uhashring-ketama-servers.snap", NULL, UHASHRING, KETAMA, 160, 0,
             NODES(servers), NULL),
    SNAPSHOT("hashring-md5-servers.snap", NULL, HASHRING, MD5, 160, 0, NODES(servers),
             NULL),
    SNAPSHOT("dalli-servers.snap", NULL, DALLI, CRC32, 160, 0, NODES(servers), NULL),
    SNAPSHOT("spymemcached-md5-servers.snap", NULL, SPYMEMCACHED, MD5, 160, 0,
             NODES(servers), NULL),
    SNAPSHOT("groupcache-peers.snap", NULL, GROUPCACHE, CRC32, 50, 0, NODES(peers), NULL),
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_make_seeds DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    int failed = 0;
    for (size_t i = 0; i < COUNT(snapshots); i++) {
        const struct snapshot_seed *seed = &snapshots[i];
        failed |= write_snapshot(dir, seed->name, seed->foreign, seed->params,
                                 seed->nodes, seed->count, seed->removed);
    }
    for (size_t i = 0; i < COUNT(recipes); i++)
        failed |= write_file(dir, recipes[i].name, recipes[i].bytes, recipes[i].size);
    return failed;
}
