/* Tests of the reader library (lib/reader.c) against real shared memory, real
 * threads and real processes. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/uatomic.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "control_internal.h"
#include "reader_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_internal.h"
#include "test_support.h"

static char ring[SHMRING_RING_NAME_MAX + 1];
static shmring_writer_t *writer;

static void setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("reader"));
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer), 0);
}

static void teardown(void)
{
    shmring_writer_close(writer);
    int err = shmring_ring_destroy(ring, NULL);
    ck_assert(err == 0 || err == SHMRING_ENOENT);
    ck_assert_int_eq(test_ring_entries(ring), 0);
}

static uint64_t publish(shmring_nodeset_t *set)
{
    uint64_t gen = 0;
    ck_assert_int_eq(shmring_writer_publish(writer, set, &gen), 0);
    return gen;
}

/* Publishes SET as the ring's generation 1 and opens a reader of it. */
static shmring_t *open_first_version(shmring_nodeset_t *set)
{
    ck_assert_uint_eq(publish(set), 1);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    return r;
}

START_TEST(test_open_errors)
{
    shmring_t *r = NULL;
    ck_assert_int_eq(shmring_open("no-such-ring-for-this-test", &r), SHMRING_ENOENT);
    ck_assert_int_eq(shmring_open("bad/name", &r), SHMRING_EBADRING);
    ck_assert_int_eq(shmring_open("x.5", &r), SHMRING_EBADRING);
    ck_assert_ptr_null(r);
    shmring_close(NULL);
}
END_TEST

START_TEST(test_nothing_published_yet)
{
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    ck_assert_uint_eq(shmring_generation(r), 0);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, "k", 1, &node), SHMRING_EEMPTY);
    ck_assert_int_eq(shmring_lookup_n(r, "k", 1, &node, 1), SHMRING_EEMPTY);
    const void *keys[1] = {"k"};
    size_t lens[1] = {1};
    uint32_t id = 7;
    ck_assert_int_eq(shmring_lookup_id(r, "k", 1, &id), SHMRING_EEMPTY);
    ck_assert_int_eq(shmring_lookup_ids(r, keys, lens, 1, &id), SHMRING_EEMPTY);
    ck_assert_uint_eq(id, 7);

    shmring_nodeset_t *set = test_nodeset(3, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(publish(set), 1);
    ck_assert_int_eq(shmring_lookup(r, "k", 1, &node), 0);
    ck_assert_uint_eq(shmring_generation(r), 1);

    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-0", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-1", SHMRING_STATE_DOWN), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-2", SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 2);
    ck_assert_int_eq(shmring_lookup(r, "k", 1, &node), SHMRING_EALLDOWN);
    ck_assert_int_eq(shmring_lookup_id(r, "k", 1, &id), SHMRING_EALLDOWN);
    ck_assert_int_eq(shmring_lookup_ids(r, keys, lens, 1, &id), SHMRING_EALLDOWN);
    ck_assert_uint_eq(id, 7);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

/* Asserts that NODE is the node set's node INFO, field by field. */
static void assert_same_node(const shmring_node_t *node, const shmring_node_info_t *info)
{
    ck_assert_uint_eq(node->id, info->id);
    ck_assert_uint_eq(node->weight, info->weight);
    ck_assert_str_eq(node->name, info->name);
    ck_assert_str_eq(node->address, info->address);
}

/*
 * shmring_node(), shmring_nodes() and shmring_fingerprint(): what a worker routing by
 * id needs to know about ids, from the version it answers from. Ids are made sparse
 * (removed nodes) and nodes have distinct weights, so a wrong index shows.
 */
START_TEST(test_nodes_by_id)
{
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_node_t node = {.id = 99};
    uint64_t fingerprint = 7;
    ck_assert_int_eq(shmring_node(r, 0, &node), SHMRING_EEMPTY);
    ck_assert_uint_eq(node.id, 99);
    ck_assert_int_eq(shmring_fingerprint(r, &fingerprint), SHMRING_EEMPTY);
    ck_assert_uint_eq(fingerprint, 7);
    shmring_nodes_t all;
    ck_assert_int_eq(shmring_nodes(r, &all), 0);
    ck_assert_uint_eq(all.generation, 0);
    ck_assert_uint_eq(all.fingerprint, 0);
    ck_assert_uint_eq(all.count, 0);
    ck_assert_ptr_null(all.nodes);
    shmring_nodes_free(&all);

    shmring_nodeset_t *set = test_nodeset(40, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    for (int i = 0; i < 40; i += 3) {
        char name[32];
        snprintf(name, sizeof(name), "node-%d", i);
        ck_assert_int_eq(shmring_nodeset_remove(set, name), 0);
    }
    for (size_t i = 0; i < shmring_nodeset_count(set); i++) {
        shmring_node_info_t info;
        ck_assert_int_eq(shmring_nodeset_get(set, i, &info), 0);
        ck_assert_int_eq(shmring_nodeset_set_weight(set, info.name, 1 + (uint32_t)i), 0);
    }
    ck_assert_uint_eq(publish(set), 1);
    shmring_snapshot_t *buffer = test_snapshot(set);
    shmring_snapshot_info_t snapshot;
    shmring_snapshot_info(buffer, &snapshot);
    shmring_snapshot_free(buffer);

    ck_assert_int_eq(shmring_nodes(r, &all), 0);
    ck_assert_uint_eq(all.generation, 1);
    ck_assert_uint_eq(all.fingerprint, snapshot.fingerprint);
    ck_assert_uint_eq(all.count, 26);
    ck_assert_int_eq(shmring_fingerprint(r, &fingerprint), 0);
    ck_assert_uint_eq(fingerprint, snapshot.fingerprint);
    for (size_t i = 0; i < shmring_nodeset_count(set); i++) {
        shmring_node_info_t info;
        ck_assert_int_eq(shmring_nodeset_get(set, i, &info), 0);
        assert_same_node(&all.nodes[i], &info);
        ck_assert_int_eq(shmring_node(r, info.id, &node), 0);
        assert_same_node(&node, &info);
    }
    shmring_nodes_free(&all);
    ck_assert_ptr_null(all.nodes);
    ck_assert_uint_eq(all.count, 0);
    shmring_nodes_free(NULL);
    /* Removed ids, an id never given and the largest id are no nodes. */
    static const uint32_t absent[] = {0, 3, 39, 40, 1000, UINT32_MAX};
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
        ck_assert_int_eq(shmring_node(r, absent[i], &node), SHMRING_ENODE);

    /* A new node is known by id from the next call on. */
    shmring_node_info_t added;
    ck_assert_int_eq(
        shmring_nodeset_add(set, "late", "10.9.9.9:1", 9, SHMRING_STATE_UP, &added.id),
        0);
    ck_assert_uint_eq(publish(set), 2);
    ck_assert_int_eq(shmring_node(r, added.id, &node), 0);
    ck_assert_str_eq(node.name, "late");
    ck_assert_str_eq(node.address, "10.9.9.9:1");
    ck_assert_uint_eq(node.weight, 9);
    ck_assert_int_eq(shmring_nodes(r, &all), 0);
    ck_assert_uint_eq(all.generation, 2);
    ck_assert_uint_eq(all.count, 27);
    ck_assert_uint_ne(all.fingerprint, snapshot.fingerprint);
    shmring_nodes_free(&all);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

/* The node set of COUNT nodes of the algorithm a loop test's turn I takes (ring,
 * maglev, ketama), with its usual hash. */
static shmring_nodeset_t *loop_nodeset(size_t count, int i)
{
    static const shmring_algorithm_t algorithms[] = {
        SHMRING_ALGORITHM_RING, SHMRING_ALGORITHM_MAGLEV, SHMRING_ALGORITHM_KETAMA};
    ck_assert_int_lt(i, (int)COUNT_OF(algorithms));
    return test_nodeset(count, algorithms[i], test_usual_hash(algorithms[i]));
}

/* Every algorithm: the reader answers exactly what the snapshot it maps answers. */
START_TEST(test_lookups_match_snapshot)
{
    shmring_nodeset_t *set = loop_nodeset(50, _i);
    publish(set);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    enum { BATCH = 20 };
    static char batch_keys[BATCH][32];
    const void *batch[BATCH];
    size_t batch_lens[BATCH];
    uint32_t batch_want[BATCH];
    for (uint64_t i = 0; i < 20000; i++) {
        char key[32];
        size_t len = test_key(key, i);
        shmring_node_t got, want;
        ck_assert_int_eq(shmring_lookup(r, key, len, &got), 0);
        ck_assert_int_eq(shmring_snapshot_lookup(snapshot, key, len, &want), 0);
        ck_assert_uint_eq(got.id, want.id);
        ck_assert_str_eq(got.name, want.name);
        ck_assert_str_eq(got.address, want.address);
        uint32_t id = UINT32_MAX;
        ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), 0);
        ck_assert_uint_eq(id, want.id);

        /* Every BATCH keys, the same keys once more as one batch. */
        memcpy(batch_keys[i % BATCH], key, len);
        batch[i % BATCH] = batch_keys[i % BATCH];
        batch_lens[i % BATCH] = len;
        batch_want[i % BATCH] = want.id;
        if (i % BATCH == BATCH - 1) {
            uint32_t batch_got[BATCH];
            ck_assert_int_eq(shmring_lookup_ids(r, batch, batch_lens, BATCH, batch_got),
                             0);
            ck_assert_mem_eq(batch_got, batch_want, sizeof(batch_got));
        }

        shmring_node_t three[3];
        ck_assert_int_eq(shmring_lookup_n(r, key, len, three, 3), 3);
        ck_assert_uint_eq(three[0].id, want.id);
        ck_assert_uint_ne(three[1].id, three[0].id);
        ck_assert_uint_ne(three[2].id, three[0].id);
        ck_assert_uint_ne(three[2].id, three[1].id);
    }
    shmring_node_t many[SHMRING_LOOKUP_N_MAX];
    ck_assert_int_eq(shmring_lookup_n(r, "k", 1, many, 0), SHMRING_EINVAL);
    ck_assert_int_eq(shmring_lookup_n(r, "k", 1, many, SHMRING_LOOKUP_N_MAX), 50);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

/* Finds a key whose owner is NAME under SET. */
static size_t key_owned_by(const shmring_nodeset_t *set, const char *name, char *key)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    for (uint64_t i = 0;; i++) {
        size_t len = test_key(key, i);
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(snapshot, key, len, &node), 0);
        if (strcmp(node.name, name) == 0) {
            shmring_snapshot_free(snapshot);
            return len;
        }
    }
}

START_TEST(test_follows_new_versions)
{
    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_t *r = open_first_version(set);
    char key[32];
    size_t len = key_owned_by(set, "node-4", key);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, key, len, &node), 0);
    ck_assert_str_eq(node.name, "node-4");

    uint32_t node4 = node.id;

    /* Each kind of lookup switches to the new version when it is the first call to
     * see it. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-4", SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 2);
    const void *keys[1] = {key};
    size_t lens[1] = {len};
    uint32_t id;
    ck_assert_int_eq(shmring_lookup_ids(r, keys, lens, 1, &id), 0);
    ck_assert_uint_ne(id, node4);
    ck_assert_int_eq(shmring_lookup(r, key, len, &node), 0);
    ck_assert_str_ne(node.name, "node-4");
    ck_assert_uint_eq(shmring_generation(r), 2);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-4", SHMRING_STATE_UP), 0);
    ck_assert_uint_eq(publish(set), 3);
    ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), 0);
    ck_assert_uint_eq(id, node4);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-4", SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 4);
    ck_assert_int_eq(shmring_lookup(r, key, len, &node), 0);
    ck_assert_str_ne(node.name, "node-4");

    /* Several versions published between two lookups: the reader jumps to the
     * newest. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-4", SHMRING_STATE_UP), 0);
    publish(set);
    publish(set);
    ck_assert_uint_eq(publish(set), 7);
    ck_assert_int_eq(shmring_lookup(r, key, len, &node), 0);
    ck_assert_str_eq(node.name, "node-4");
    ck_assert_uint_eq(shmring_generation(r), 7);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

/* Stores GEN into the ring's control object, bypassing the publisher. */
static void store_generation(uint64_t gen)
{
    int fd = open(test_object_path(ring, CONTROL_FILE), O_RDWR | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    struct control_block *control =
        mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(control, MAP_FAILED);
    close(fd);
    uatomic_set(&control->generation, gen);
    munmap(control, CONTROL_SIZE);
}

/* Makes generation GEN current with an object holding BYTES, as a hostile or broken
 * writer could, bypassing the publisher. */
static void publish_raw_mode(uint64_t gen, const void *bytes, size_t size, mode_t mode)
{
    int fd =
        open(test_version_path(ring, gen), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bytes, size), (ssize_t)size);
    ck_assert_int_eq(fchmod(fd, mode), 0);
    close(fd);
    store_generation(gen);
}

/* The same, read-only as the publisher leaves its versions. */
static void publish_raw(uint64_t gen, const void *bytes, size_t size)
{
    publish_raw_mode(gen, bytes, size, 0444);
}

/* Sets the owner of version GEN of the ring (as root only). */
static void chown_version(uint64_t gen, uid_t owner)
{
    ck_assert_int_eq(chown(test_version_path(ring, gen), owner, (gid_t)-1), 0);
}

/*
 * Hostile and broken version objects published through real shared memory: each is
 * refused by a new reader with its specific code, while a reader that has a good
 * version keeps answering from it, at its generation, without crashing.
 */
START_TEST(test_refuses_hostile_versions)
{
    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_t *r = open_first_version(set);
    shmring_node_t before, after;
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &before), 0);
    size_t size;
    unsigned char *good = test_build(set, &size);
    unsigned char *bytes = malloc(size + 4096);

    struct hostile {
        const char *what;
        size_t size;
        size_t offset; /* byte to change, or SIZE_MAX */
        uint64_t value;
        int width;
        int expected;
    } cases[] = {
        {"truncated by one byte", size - 1, SIZE_MAX, 0, 0, SHMRING_ETRUNCATED},
        {"truncated to the header", 256, SIZE_MAX, 0, 0, SHMRING_ETRUNCATED},
        {"truncated below a header", 100, SIZE_MAX, 0, 0, SHMRING_ETRUNCATED},
        {"extended by a page", size + 4096, SIZE_MAX, 0, 0, SHMRING_ETRUNCATED},
        {"wrong magic", size, 0, 0x4141414141414141u, 8, SHMRING_EBADMAGIC},
        {"an older format version", size, 8, 2, 4, SHMRING_EFORMAT},
        {"a newer format version", size, 8, 99, 4, SHMRING_ENEWFORMAT},
        {"node section out of range", size, offsetof(struct snapshot_header, nodes),
         UINT64_C(1) << 40, 8, SHMRING_EBADSECTION},
        {"node count out of range", size, offsetof(struct snapshot_header, node_count),
         0xffffffffu, 4, SHMRING_EBADPARAMS},
        {"point count too large", size, offsetof(struct snapshot_header, point_count),
         0x7fffffffu, 4, SHMRING_EBADPARAMS},
        {"up count over node count", size, offsetof(struct snapshot_header, up_count), 11,
         4, SHMRING_EBADPARAMS},
        {"one flipped bit in the points", size, size / 2, 0, -1, SHMRING_ECHECKSUM},
        {"empty object", 0, SIZE_MAX, 0, 0, SHMRING_ETRUNCATED},
    };
    uint64_t gen = 2;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++, gen++) {
        memset(bytes, 0, size + 4096);
        memcpy(bytes, good, size);
        if (cases[c].width == -1)
            bytes[cases[c].offset] ^= 0x01;
        else if (cases[c].width > 0)
            memcpy(bytes + cases[c].offset, &cases[c].value, (size_t)cases[c].width);
        publish_raw(gen, bytes, cases[c].size);
        shmring_t *fresh = NULL;
        ck_assert_msg(shmring_open(ring, &fresh) == cases[c].expected, "%s: %s",
                      cases[c].what, shmring_strerror(shmring_open(ring, &fresh)));
        ck_assert_int_eq(shmring_lookup(r, "some key", 8, &after), 0);
        ck_assert_uint_eq(after.id, before.id);
        ck_assert_uint_eq(shmring_generation(r), 1);
    }
    /* A valid version that someone could still write to after readers validated it:
     * writable by its owner, its group or anyone. */
    static const mode_t writable[] = {0644, 0464, 0446};
    for (size_t m = 0; m < sizeof(writable) / sizeof(writable[0]); m++, gen++) {
        publish_raw_mode(gen, good, size, writable[m]);
        shmring_t *fresh = NULL;
        ck_assert_int_eq(shmring_open(ring, &fresh), SHMRING_EOWNER);
        ck_assert_int_eq(shmring_lookup(r, "some key", 8, &after), 0);
        ck_assert_uint_eq(shmring_generation(r), 1);
    }
    /* What is not a regular file at the version's name: a symbolic link to a good
     * version, a FIFO (opening it must not block), a directory. */
    for (int kind = 0; kind < 3; kind++, gen++) {
        char path[600];
        snprintf(path, sizeof(path), "%s", test_version_path(ring, gen));
        if (kind == 0)
            ck_assert_int_eq(symlink(test_version_path(ring, 1), path), 0);
        else if (kind == 1)
            ck_assert_int_eq(mkfifo(path, 0444), 0);
        else
            ck_assert_int_eq(mkdir(path, 0555), 0);
        store_generation(gen);
        shmring_t *fresh = NULL;
        ck_assert_int_eq(shmring_open(ring, &fresh), SHMRING_ENOTRING);
        ck_assert_int_eq(shmring_lookup(r, "some key", 8, &after), 0);
        ck_assert_uint_eq(after.id, before.id);
        ck_assert_uint_eq(shmring_generation(r), 1);
        /* Destroying the ring empties its directory of files, nothing else. */
        ck_assert_int_eq(remove(path), 0);
    }
    /* A valid version that another user planted. */
    if (geteuid() == 0) {
        publish_raw(gen, good, size);
        chown_version(gen, 65534);
        shmring_t *fresh = NULL;
        ck_assert_int_eq(shmring_open(ring, &fresh), SHMRING_EOWNER);
        ck_assert_int_eq(shmring_lookup(r, "some key", 8, &after), 0);
        ck_assert_uint_eq(shmring_generation(r), 1);
    }
    free(bytes);
    free(good);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

START_TEST(test_keeps_last_good_version)
{
    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_t *r = open_first_version(set);
    shmring_node_t before, after;
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &before), 0);

    /* A corrupt version 2: one flipped byte in a valid snapshot. */
    size_t size;
    unsigned char *bytes = test_build(set, &size);
    bytes[size - 1] ^= 0x40;
    publish_raw(2, bytes, size);
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &after), 0);
    ck_assert_uint_eq(after.id, before.id);
    ck_assert_uint_eq(shmring_generation(r), 1);
    /* A new reader refuses the corrupt version with the validator's code. */
    shmring_t *fresh;
    ck_assert_int_eq(shmring_open(ring, &fresh), SHMRING_ECHECKSUM);

    /* A version that vanished before the reader could open it. */
    ck_assert_int_eq(unlink(test_version_path(ring, 2)), 0);
    publish_raw(3, bytes, 10);
    ck_assert_int_eq(unlink(test_version_path(ring, 3)), 0);
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &after), 0);
    ck_assert_uint_eq(after.id, before.id);
    ck_assert_uint_eq(shmring_generation(r), 1);
    free(bytes);

    /* The next good publication is picked up (after the retry interval). */
    shmring_writer_close(writer);
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &writer), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, before.name, SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 4);
    test_wait_for_generation(r, 4);
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &after), 0);
    ck_assert_uint_ne(after.id, before.id);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

/* STATUS says the handle answers from GENERATION (FINGERPRINT), the one published, to
 * which it switched between AFTER and BEFORE, and that no version failed. */
static void assert_switched_status(const shmring_status_t *status, uint64_t generation,
                                   uint64_t fingerprint, int64_t after, int64_t before)
{
    ck_assert_uint_eq(status->generation, generation);
    ck_assert_uint_eq(status->fingerprint, fingerprint);
    ck_assert_uint_eq(status->published_generation, generation);
    ck_assert_int_ge(status->switched_at_ns, after);
    ck_assert_int_le(status->switched_at_ns, before);
    ck_assert_uint_eq(status->failed_generation, 0);
    ck_assert_int_eq(status->failed_error, 0);
    ck_assert_int_eq(status->failed_at_ns, 0);
}

static int64_t unix_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * shmring_status() says which version a handle answers from, that a newer one is
 * published, and, once a lookup tried it, that it is corrupt and why; a good
 * publication afterwards clears the failure.
 */
START_TEST(test_status_names_a_bad_version)
{
    shmring_nodeset_t *set = test_nodeset(4, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(publish(set), 1);
    int64_t opened_after = unix_coarse_ns();
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    int64_t opened_before = unix_coarse_ns();
    uint64_t fingerprint;
    ck_assert_int_eq(shmring_fingerprint(r, &fingerprint), 0);
    shmring_status_t status;
    memset(&status, 0xff, sizeof(status));
    shmring_status(r, &status);
    assert_switched_status(&status, 1, fingerprint, opened_after, opened_before);
    ck_assert_uint_eq(status.failed_format, 0);
    ck_assert_uint_eq(status.reserved0, 0);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq(status.reserved[i], 0);
    int64_t opened_at = status.switched_at_ns;

    /* A corrupt version 2 (one flipped byte): published, not yet tried. */
    size_t size;
    unsigned char *bytes = test_build(set, &size);
    bytes[size - 1] ^= 0x40;
    publish_raw(2, bytes, size);
    free(bytes);
    shmring_status(r, &status);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_uint_eq(status.published_generation, 2);
    ck_assert_uint_eq(status.failed_generation, 0);

    /* A lookup tries it, refuses it and keeps answering from version 1. */
    int64_t tried_after = unix_coarse_ns();
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &node), 0);
    int64_t tried_before = unix_coarse_ns();
    shmring_status(r, &status);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_uint_eq(status.fingerprint, fingerprint);
    ck_assert_uint_eq(status.published_generation, 2);
    ck_assert_int_eq(status.switched_at_ns, opened_at);
    ck_assert_uint_eq(status.failed_generation, 2);
    ck_assert_int_eq(status.failed_error, SHMRING_ECHECKSUM);
    ck_assert_int_ge(status.failed_at_ns, tried_after);
    ck_assert_int_le(status.failed_at_ns, tried_before);

    /* A good publication after it: the handle switches and the failure is gone. */
    ck_assert_int_eq(unlink(test_version_path(ring, 2)), 0);
    shmring_writer_close(writer);
    ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &writer), 0);
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-0", SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 3);
    int64_t switched_after = unix_coarse_ns();
    test_wait_for_generation(r, 3);
    int64_t switched_before = unix_coarse_ns();
    ck_assert_int_eq(shmring_fingerprint(r, &fingerprint), 0);
    shmring_status(r, &status);
    assert_switched_status(&status, 3, fingerprint, switched_after, switched_before);

    /* Destroyed under the handle: the next try fails with SHMRING_ENOENT. */
    shmring_writer_close(writer);
    writer = NULL;
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &node), 0);
    shmring_status(r, &status);
    ck_assert_uint_eq(status.generation, 3);
    ck_assert_uint_eq(status.failed_generation, UINT64_MAX);
    ck_assert_int_eq(status.failed_error, SHMRING_ENOENT);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

/* Builds SET's snapshot with header fields of a newer writer: FORMAT and FEATURES,
 * checksum recomputed, and publishes it raw as generation GEN. */
static void publish_newer(shmring_nodeset_t *set, uint64_t gen, uint32_t format,
                          uint32_t features)
{
    size_t size;
    unsigned char *bytes = test_build(set, &size);
    struct snapshot_header *h = (struct snapshot_header *)(void *)bytes;
    h->format_version = format;
    h->features = features;
    h->checksum = 0;
    h->checksum = XXH3_64bits(bytes, size);
    publish_raw(gen, bytes, size);
    free(bytes);
}

/*
 * Skew (docs/upgrading.md): a version of a newer format, or of a feature this reader
 * does not know, is refused with SHMRING_ENEWFORMAT or SHMRING_EFEATURE, and the
 * status names the refused format while the handle keeps answering from its version;
 * a new handle cannot open such a ring at all.
 */
START_TEST(test_status_names_a_newer_format)
{
    shmring_nodeset_t *set = test_nodeset(4, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(publish(set), 1);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_node_t before;
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &before), 0);

    publish_newer(set, 2, SNAPSHOT_FORMAT_VERSION + 1, 0);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &node), 0);
    ck_assert_uint_eq(node.id, before.id);
    shmring_status_t status;
    shmring_status(r, &status);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_uint_eq(status.published_generation, 2);
    ck_assert_uint_eq(status.failed_generation, 2);
    ck_assert_int_eq(status.failed_error, SHMRING_ENEWFORMAT);
    ck_assert_uint_eq(status.failed_format, SNAPSHOT_FORMAT_VERSION + 1);
    shmring_t *fresh;
    ck_assert_int_eq(shmring_open(ring, &fresh), SHMRING_ENEWFORMAT);

    /* Format 4 with a feature bit no release knows yet. */
    ck_assert_int_eq(unlink(test_version_path(ring, 2)), 0);
    publish_newer(set, 3, SNAPSHOT_FORMAT_VERSION, UINT32_C(1) << 31);
    ck_assert_int_eq(shmring_lookup(r, "some key", 8, &node), 0);
    ck_assert_uint_eq(node.id, before.id);
    shmring_status(r, &status);
    ck_assert_uint_eq(status.generation, 1);
    ck_assert_int_eq(status.failed_error, SHMRING_EFEATURE);
    ck_assert_uint_eq(status.failed_format, SNAPSHOT_FORMAT_VERSION);
    ck_assert_int_eq(shmring_open(ring, &fresh), SHMRING_EFEATURE);

    /* A version this release reads: the handle switches and the skew is gone. */
    ck_assert_int_eq(unlink(test_version_path(ring, 3)), 0);
    publish_newer(set, 4, SNAPSHOT_FORMAT_VERSION, 0);
    test_wait_for_generation(r, 4);
    shmring_status(r, &status);
    ck_assert_int_eq(status.failed_error, 0);
    ck_assert_uint_eq(status.failed_format, 0);
    shmring_close(r);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(test_survives_destroy_and_recreate)
{
    shmring_nodeset_t *set = test_nodeset(5, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    publish(set);
    publish(set);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, "k", 1, &node), 0);
    ck_assert_uint_eq(shmring_generation(r), 2);

    shmring_writer_close(writer);
    writer = NULL;
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
    /* Destroyed: the reader keeps answering from what it mapped. */
    ck_assert_int_eq(shmring_lookup(r, "k", 1, &node), 0);
    ck_assert_uint_eq(shmring_generation(r), 2);

    /* Re-created, with a different node set, starting again at generation 1. */
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer), 0);
    shmring_nodeset_t *other =
        test_nodeset(1, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(publish(other), 1);
    test_wait_for_generation(r, 1);
    ck_assert_int_eq(shmring_lookup(r, "k", 1, &node), 0);
    ck_assert_str_eq(node.name, "node-0");
    shmring_nodeset_free(set);
    shmring_nodeset_free(other);
    shmring_close(r);
}
END_TEST

/* Counts this process's open file descriptors. */
static int open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    int count = 0;
    while (readdir(dir) != NULL)
        count++;
    closedir(dir);
    return count;
}

START_TEST(test_old_mappings_released)
{
    shmring_nodeset_t *set = test_nodeset(20, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    publish(set);
    /* The writer in this process maps the control object too. */
    int baseline = test_ring_mappings(ring);
    int fds = open_fds();
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_node_t node;
    /* A lookup that switches versions unmaps the old view before it returns
     * (reader.c's refresh()), so a single version left mapped or descriptor left
     * open shows in the exact counts below: 100 publications are enough to prove
     * release, and take seconds even in a sanitizer build on a busy machine. */
    const int publications = 100;
    int failures = 0;
    for (int i = 0; i < publications; i++) {
        publish(set);
        failures += shmring_lookup(r, "k", 1, &node) != 0;
    }
    ck_assert_int_eq(failures, 0);
    ck_assert_uint_eq(shmring_generation(r), (uint64_t)publications + 1);
    /* The control object and the current version: nothing older stays mapped. */
    ck_assert_int_eq(test_ring_mappings(ring), baseline + 2);
    /* A reader keeps no descriptor open: objects are mapped, then closed. */
    ck_assert_int_eq(open_fds(), fds);
    shmring_close(r);
    ck_assert_int_eq(test_ring_mappings(ring), baseline);
    ck_assert_int_eq(open_fds(), fds);
    shmring_nodeset_free(set);
}
END_TEST

/* Opens the test's ring as a serialized handle (SHMRING_OPEN_SERIALIZED). */
static shmring_t *open_serialized(void)
{
    shmring_open_options_t options = {.flags = SHMRING_OPEN_SERIALIZED};
    shmring_t *r = NULL;
    ck_assert_int_eq(shmring_open_with(ring, &options, &r), 0);
    return r;
}

/*
 * shmring_lookup_id_versioned() answers shmring_lookup_id()'s id with the fingerprint
 * of the version that answered, on both kinds of handle: the same id and the same
 * fingerprint as the separate calls, the new version's after a publication, and
 * nothing written on an error.
 */
START_TEST(test_lookup_id_versioned)
{
    shmring_t *handles[2];
    ck_assert_int_eq(shmring_open(ring, &handles[0]), 0);
    handles[1] = open_serialized();
    uint32_t id = 7;
    uint64_t fingerprint = 9;
    for (int h = 0; h < 2; h++)
        ck_assert_int_eq(
            shmring_lookup_id_versioned(handles[h], "k", 1, &id, &fingerprint),
            SHMRING_EEMPTY);
    ck_assert_uint_eq(id, 7);
    ck_assert_uint_eq(fingerprint, 9);

    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    ck_assert_uint_eq(publish(set), 1);
    char key[32];
    size_t len = key_owned_by(set, "node-4", key);
    uint64_t first = 0;
    for (int h = 0; h < 2; h++) {
        uint32_t expected_id;
        uint64_t expected_fingerprint;
        ck_assert_int_eq(
            shmring_lookup_id_versioned(handles[h], key, len, &id, &fingerprint), 0);
        ck_assert_int_eq(shmring_lookup_id(handles[h], key, len, &expected_id), 0);
        ck_assert_int_eq(shmring_fingerprint(handles[h], &expected_fingerprint), 0);
        ck_assert_uint_eq(id, expected_id);
        ck_assert_uint_eq(fingerprint, expected_fingerprint);
        first = fingerprint;
    }

    /* node-4 down: the first call to see version 2 answers from it, with its
     * fingerprint. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-4", SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 2);
    for (int h = 0; h < 2; h++) {
        uint32_t node4 = id;
        ck_assert_int_eq(
            shmring_lookup_id_versioned(handles[h], key, len, &id, &fingerprint), 0);
        uint64_t expected_fingerprint;
        ck_assert_int_eq(shmring_fingerprint(handles[h], &expected_fingerprint), 0);
        ck_assert_uint_ne(fingerprint, first);
        ck_assert_uint_eq(fingerprint, expected_fingerprint);
        ck_assert_uint_eq(shmring_generation(handles[h]), 2);
        shmring_node_t node;
        ck_assert_int_eq(shmring_node(handles[h], id, &node), 0);
        ck_assert_str_ne(node.name, "node-4");
        id = node4;
    }

    /* Every node down: SHMRING_EALLDOWN, and neither out parameter is written. */
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof(name), "node-%d", i);
        ck_assert_int_eq(shmring_nodeset_set_state(set, name, SHMRING_STATE_DOWN), 0);
    }
    ck_assert_uint_eq(publish(set), 3);
    for (int h = 0; h < 2; h++) {
        id = 7;
        fingerprint = 9;
        ck_assert_int_eq(
            shmring_lookup_id_versioned(handles[h], key, len, &id, &fingerprint),
            SHMRING_EALLDOWN);
        ck_assert_uint_eq(id, 7);
        ck_assert_uint_eq(fingerprint, 9);
        shmring_close(handles[h]);
    }
    shmring_nodeset_free(set);
}
END_TEST

/* ---- Threads sharing one handle ------------------------------------------- */

#define THREADS 4
#define KEYS 64

/* Threads looking keys up through one handle while two node sets whose answers
 * differ are published in turn: every answer must be one of theirs. */
struct shared_test {
    shmring_t *reader;
    /* With a mutex, the threads take turns on the handle under it (a serialized
     * handle); without, they share it freely. */
    pthread_mutex_t *turn;
    uint32_t answer_a[KEYS];
    uint32_t answer_b[KEYS];
    atomic_int stop;
    /* Reader threads that have made their first lookup. */
    atomic_int started;
    long lookups[THREADS];
    int wrong[THREADS];
    int backwards[THREADS];
};

struct thread_arg {
    struct shared_test *test;
    int index;
};

static void *reader_thread(void *p)
{
    struct thread_arg *arg = p;
    struct shared_test *t = arg->test;
    uint64_t last_gen = 0;
    for (uint64_t i = 0; !atomic_load(&t->stop); i++) {
        char key[32];
        size_t len = test_key(key, i % KEYS);
        uint32_t id = 0;
        int err;
        uint64_t gen;
        if (t->turn != NULL) {
            pthread_mutex_lock(t->turn);
            err = shmring_lookup_id(t->reader, key, len, &id);
            gen = shmring_generation(t->reader);
            pthread_mutex_unlock(t->turn);
        } else {
            shmring_node_t node;
            err = shmring_lookup(t->reader, key, len, &node);
            if (err == 0)
                id = node.id;
            gen = shmring_generation(t->reader);
        }
        if (err != 0 || (id != t->answer_a[i % KEYS] && id != t->answer_b[i % KEYS]))
            t->wrong[arg->index]++;
        if (gen < last_gen)
            t->backwards[arg->index]++;
        last_gen = gen;
        if (t->lookups[arg->index]++ == 0)
            atomic_fetch_add(&t->started, 1);
    }
    return NULL;
}

static void answers(const shmring_nodeset_t *set, uint32_t *ids)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    for (uint64_t k = 0; k < KEYS; k++) {
        char key[32];
        size_t len = test_key(key, k);
        shmring_node_t node;
        ck_assert_int_eq(shmring_snapshot_lookup(snapshot, key, len, &node), 0);
        ids[k] = node.id;
    }
    shmring_snapshot_free(snapshot);
}

/*
 * Runs THREADS reader threads (taking turns under TURN, unless NULL) on one handle
 * while 300 versions of two node sets are published in turn; each thread must get
 * only right answers, never refused, never from an older version than before.
 * Returns how many lookups they made in all.
 */
static long look_up_while_publishing(pthread_mutex_t *turn)
{
    shmring_nodeset_t *a = test_nodeset(30, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    shmring_nodeset_t *b = test_nodeset(30, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    for (int i = 0; i < 30; i += 2) {
        char name[32];
        snprintf(name, sizeof(name), "node-%d", i);
        ck_assert_int_eq(shmring_nodeset_set_state(b, name, SHMRING_STATE_DOWN), 0);
    }
    struct shared_test *t = calloc(1, sizeof(*t));
    t->turn = turn;
    answers(a, t->answer_a);
    answers(b, t->answer_b);
    publish(a);
    int baseline = test_ring_mappings(ring);
    if (turn != NULL)
        t->reader = open_serialized();
    else
        ck_assert_int_eq(shmring_open(ring, &t->reader), 0);

    pthread_t threads[THREADS];
    struct thread_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (struct thread_arg){t, i};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, reader_thread, &args[i]), 0);
    }
    /* Every thread looks keys up before the first publication, however late the
     * scheduler runs it. */
    while (atomic_load(&t->started) < THREADS)
        sched_yield();
    for (int v = 0; v < 300; v++) {
        publish(v % 2 ? a : b);
        if (v % 16 == 0)
            test_sleep_ms(1);
    }
    atomic_store(&t->stop, 1);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        ck_assert_int_eq(t->wrong[i], 0);
        ck_assert_int_eq(t->backwards[i], 0);
        ck_assert_int_gt(t->lookups[i], 0);
        total += t->lookups[i];
    }
    ck_assert_uint_eq(shmring_generation(t->reader), 301);
    ck_assert_int_eq(test_ring_mappings(ring), baseline + 2);
    shmring_close(t->reader);
    free(t);
    shmring_nodeset_free(a);
    shmring_nodeset_free(b);
    return total;
}

START_TEST(test_threads_share_one_handle)
{
    ck_assert_int_gt(look_up_while_publishing(NULL), 0);
}
END_TEST

/* ---- Other processes ------------------------------------------------------ */

/* What the status-watching thread shares with the test. */
struct status_watch {
    shmring_t *reader;
    uint64_t fingerprints[2]; /* of good generations 1, 5, 9, ... and 3, 7, 11, ... */
    atomic_int started;
    atomic_int stop;
    long observations;
    long inconsistent;
};

static void *status_watcher(void *p)
{
    struct status_watch *w = p;
    while (!atomic_load(&w->stop)) {
        shmring_status_t st;
        shmring_status(w->reader, &st);
        bool failed = st.failed_generation != 0;
        /* One version: a good (odd) generation with its own fingerprint. One failure:
         * all three fields or none, for a corrupt (even) generation. */
        if (st.generation % 2 != 1 ||
            st.fingerprint != w->fingerprints[(st.generation - 1) / 2 % 2] ||
            failed != (st.failed_error != 0) || failed != (st.failed_at_ns != 0) ||
            (failed &&
             (st.failed_generation % 2 != 0 || st.failed_error != SHMRING_ECHECKSUM)))
            w->inconsistent++;
        if (w->observations++ == 0)
            atomic_store(&w->started, 1);
    }
    return NULL;
}

/*
 * shmring_status() from another thread while the handle keeps failing on corrupt
 * versions and switching to good ones: every answer is one version and one failure,
 * never a mix of two.
 */
START_TEST(test_status_consistent_while_switching)
{
    shmring_nodeset_t *sets[2] = {
        test_nodeset(8, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3),
        test_nodeset(9, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3)};
    struct status_watch *w = calloc(1, sizeof(*w));
    size_t size;
    for (int i = 0; i < 2; i++) {
        shmring_snapshot_t *snapshot = test_snapshot(sets[i]);
        shmring_snapshot_info_t info;
        shmring_snapshot_info(snapshot, &info);
        w->fingerprints[i] = info.fingerprint;
        shmring_snapshot_free(snapshot);
    }
    unsigned char *corrupt = test_build(sets[0], &size);
    corrupt[size - 1] ^= 0x40;
    ck_assert_uint_eq(publish(sets[0]), 1);
    ck_assert_int_eq(shmring_open(ring, &w->reader), 0);
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, status_watcher, w), 0);
    while (!atomic_load(&w->started))
        sched_yield();
    shmring_node_t node;
    for (uint64_t k = 1; k <= 30; k++) {
        publish_raw(2 * k, corrupt, size);
        ck_assert_int_eq(shmring_lookup(w->reader, "k", 1, &node), 0);
        ck_assert_uint_eq(shmring_generation(w->reader), 2 * k - 1);
        ck_assert_int_eq(unlink(test_version_path(ring, 2 * k)), 0);
        shmring_writer_close(writer);
        ck_assert_int_eq(shmring_writer_open(ring, 0, NULL, &writer), 0);
        ck_assert_uint_eq(publish(sets[k % 2]), 2 * k + 1);
        /* A generation other than the failed one is tried at once. */
        ck_assert_int_eq(shmring_lookup(w->reader, "k", 1, &node), 0);
        ck_assert_uint_eq(shmring_generation(w->reader), 2 * k + 1);
    }
    atomic_store(&w->stop, 1);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_int_gt(w->observations, 0);
    ck_assert_int_eq(w->inconsistent, 0);
    shmring_close(w->reader);
    free(w);
    free(corrupt);
    shmring_nodeset_free(sets[0]);
    shmring_nodeset_free(sets[1]);
}
END_TEST

START_TEST(test_forked_child_keeps_working)
{
    shmring_nodeset_t *set =
        test_nodeset(10, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    shmring_t *r = open_first_version(set);
    char key[32];
    size_t len = key_owned_by(set, "node-7", key);
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, key, len, &node), 0);
    ck_assert_str_eq(node.name, "node-7");

    struct test_piped_child child = test_fork_piped();
    if (child.pid == 0) {
        /* The child uses the handle it inherited: before a publication (then it
         * reports, and the parent publishes only after that report) and after it. */
        char go;
        bool ok = shmring_lookup(r, key, len, &node) == 0 &&
                  strcmp(node.name, "node-7") == 0 && shmring_generation(r) == 1;
        char result = ok ? 'y' : 'n';
        if (write(child.answers, &result, 1) != 1)
            _exit(3);
        if (read(child.commands, &go, 1) != 1)
            _exit(2);
        ok = shmring_lookup(r, key, len, &node) == 0 &&
             strcmp(node.name, "node-7") != 0 && shmring_generation(r) == 2;
        result = ok ? 'y' : 'n';
        _exit(write(child.answers, &result, 1) == 1 ? 0 : 3);
    }
    char result = 0;
    ck_assert_int_eq(read(child.answers, &result, 1), 1);
    ck_assert_msg(result == 'y', "the child's lookup before the publication failed");
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-7", SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 2);
    ck_assert_int_eq(write(child.commands, "g", 1), 1);
    result = 0;
    ck_assert_int_eq(read(child.answers, &result, 1), 1);
    ck_assert_msg(result == 'y', "the child's lookup after the publication failed");
    int status;
    ck_assert_int_eq(waitpid(child.pid, &status, 0), child.pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    shmring_nodeset_free(set);
    shmring_close(r);
}
END_TEST

START_TEST(test_reader_process_sees_live_updates)
{
    /* A separate process opens the ring itself and answers lookups on request. */
    shmring_nodeset_t *set = test_nodeset(8, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    publish(set);
    char key[32];
    size_t len = key_owned_by(set, "node-3", key);
    struct test_piped_child child = test_fork_piped();
    if (child.pid == 0) {
        shmring_t *r;
        if (shmring_open(ring, &r) != 0)
            _exit(2);
        char command;
        while (read(child.commands, &command, 1) == 1) {
            shmring_node_t node;
            if (shmring_lookup(r, key, len, &node) != 0)
                _exit(3);
            if (write(child.answers, &node.id, sizeof(node.id)) != sizeof(node.id))
                _exit(4);
        }
        shmring_close(r);
        _exit(0);
    }
    uint32_t ids[3];
    for (int round = 0; round < 3; round++) {
        if (round == 1)
            ck_assert_int_eq(shmring_nodeset_set_state(set, "node-3", SHMRING_STATE_DOWN),
                             0);
        if (round == 2)
            ck_assert_int_eq(shmring_nodeset_set_state(set, "node-3", SHMRING_STATE_UP),
                             0);
        if (round > 0)
            publish(set);
        ck_assert_int_eq(write(child.commands, "?", 1), 1);
        ck_assert_int_eq(read(child.answers, &ids[round], sizeof(ids[round])),
                         sizeof(ids[round]));
    }
    ck_assert_uint_eq(ids[0], 3);
    ck_assert_uint_ne(ids[1], 3);
    ck_assert_uint_eq(ids[2], 3);
    close(child.commands);
    int status;
    ck_assert_int_eq(waitpid(child.pid, &status, 0), child.pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    shmring_nodeset_free(set);
}
END_TEST

/* ---- Serialized handles (SHMRING_OPEN_SERIALIZED) --------------------------- */

START_TEST(test_serialized_open_flags)
{
    shmring_nodeset_t *set = test_nodeset(5, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    publish(set);
    /* Flags this version does not know are refused, alone or with a known one. */
    static const uint32_t unknown[] = {2, 0x80000000u, SHMRING_OPEN_SERIALIZED | 4,
                                       UINT32_MAX};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        shmring_open_options_t options = {.flags = unknown[i]};
        shmring_t *r = (shmring_t *)&options; /* must stay untouched */
        ck_assert_int_eq(shmring_open_with(ring, &options, &r), SHMRING_EINVAL);
        ck_assert_ptr_eq(r, (shmring_t *)&options);
    }
    /* The flag changes nothing else: a missing ring is still SHMRING_ENOENT. */
    shmring_open_options_t options = {.flags = SHMRING_OPEN_SERIALIZED};
    shmring_t *r = NULL;
    ck_assert_int_eq(shmring_open_with("no-such-ring-serialized", &options, &r),
                     SHMRING_ENOENT);
    ck_assert_str_eq(shmring_strerror(SHMRING_EINUSE),
                     "serialized handle is already in another call");
    shmring_nodeset_free(set);
}
END_TEST

/*
 * A serialized handle answers exactly what the snapshot answers, follows every new
 * version on its next call, and unmaps the old version during that call: after each
 * switch this process maps exactly the control object and the current version.
 */
START_TEST(test_serialized_follows_and_unmaps)
{
    shmring_nodeset_t *set = loop_nodeset(12, _i);
    publish(set);
    int baseline = test_ring_mappings(ring); /* the writer's own control object */
    shmring_t *r = open_serialized();
    ck_assert_int_eq(test_ring_mappings(ring), baseline + 2);
    char key[32];
    size_t len = key_owned_by(set, "node-4", key);
    uint32_t id;
    shmring_node_t node;
    ck_assert_int_eq(shmring_lookup(r, key, len, &node), 0);
    ck_assert_str_eq(node.name, "node-4");
    uint32_t node4 = node.id;
    /* 25 of each of the four kinds of call below, each asserting its switch. */
    const int publications = 100;
    for (int i = 0; i < publications; i++) {
        /* node-4 down on odd generations: every answer says which version it came
         * from. */
        bool down = i % 2 == 0;
        ck_assert_int_eq(shmring_nodeset_set_state(
                             set, "node-4", down ? SHMRING_STATE_DOWN : SHMRING_STATE_UP),
                         0);
        uint64_t gen = publish(set);
        switch (i % 4) {
        case 0:
            ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), 0);
            break;
        case 1: {
            const void *keys[1] = {key};
            size_t lens[1] = {len};
            ck_assert_int_eq(shmring_lookup_ids(r, keys, lens, 1, &id), 0);
            break;
        }
        case 2:
            ck_assert_int_eq(shmring_lookup(r, key, len, &node), 0);
            id = node.id;
            break;
        default:
            ck_assert_int_eq(shmring_lookup_n(r, key, len, &node, 1), 1);
            id = node.id;
            break;
        }
        ck_assert_msg(down ? id != node4 : id == node4, "generation %llu answered %u",
                      (unsigned long long)gen, id);
        ck_assert_uint_eq(shmring_generation(r), gen);
        ck_assert_int_eq(test_ring_mappings(ring), baseline + 2);
    }
    /* Every other call switches too, and unmaps as it does. */
    uint64_t gen = publish(set);
    uint64_t fingerprint;
    ck_assert_int_eq(shmring_fingerprint(r, &fingerprint), 0);
    ck_assert_int_eq(test_ring_mappings(ring), baseline + 2);
    shmring_status_t status;
    shmring_status(r, &status);
    ck_assert_uint_eq(status.generation, gen);
    ck_assert_uint_eq(status.fingerprint, fingerprint);
    ck_assert_int_eq(status.failed_error, 0);
    ck_assert_uint_eq(publish(set), gen + 1);
    ck_assert_int_eq(shmring_node(r, node4, &node), 0);
    ck_assert_str_eq(node.name, "node-4");
    ck_assert_uint_eq(shmring_generation(r), gen + 1);
    ck_assert_uint_eq(publish(set), gen + 2);
    shmring_nodes_t nodes;
    ck_assert_int_eq(shmring_nodes(r, &nodes), 0);
    ck_assert_uint_eq(nodes.generation, gen + 2);
    ck_assert_uint_eq(nodes.count, 12);
    shmring_nodes_free(&nodes);
    ck_assert_int_eq(test_ring_mappings(ring), baseline + 2);
    shmring_close(r);
    ck_assert_int_eq(test_ring_mappings(ring), baseline);
    shmring_nodeset_free(set);
}
END_TEST

/* Holds the call that switches a handle inside it until the test lets it go. */
static sem_t switch_inside, switch_release;

static void hold_switch(void)
{
    sem_post(&switch_inside);
    while (sem_wait(&switch_release) != 0)
        ;
}

struct held_call {
    shmring_t *reader;
    const char *key;
    size_t len;
    int result;
    uint32_t id;
};

static void *held_lookup(void *p)
{
    struct held_call *call = p;
    call->result = shmring_lookup_id(call->reader, call->key, call->len, &call->id);
    return NULL;
}

/* Every call of R fails with SHMRING_EINUSE (0 from shmring_generation(), only
 * failed_error from shmring_status()) and writes nothing. */
static void assert_refused(shmring_t *r, const char *key, size_t len)
{
    uint32_t id = 77;
    shmring_node_t node = {.id = 77};
    const void *keys[1] = {key};
    size_t lens[1] = {len};
    uint64_t fingerprint = 77;
    shmring_nodes_t nodes = {.count = 77};
    ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), SHMRING_EINUSE);
    ck_assert_int_eq(shmring_lookup(r, key, len, &node), SHMRING_EINUSE);
    ck_assert_int_eq(shmring_lookup_ids(r, keys, lens, 1, &id), SHMRING_EINUSE);
    ck_assert_int_eq(shmring_lookup_n(r, key, len, &node, 1), SHMRING_EINUSE);
    ck_assert_int_eq(shmring_node(r, 0, &node), SHMRING_EINUSE);
    ck_assert_int_eq(shmring_nodes(r, &nodes), SHMRING_EINUSE);
    ck_assert_int_eq(shmring_fingerprint(r, &fingerprint), SHMRING_EINUSE);
    ck_assert_uint_eq(shmring_generation(r), 0);
    shmring_status_t status;
    memset(&status, 0xff, sizeof(status));
    shmring_status(r, &status);
    ck_assert_int_eq(status.failed_error, SHMRING_EINUSE);
    ck_assert_uint_eq(status.generation, 0);
    ck_assert_uint_eq(status.failed_generation, 0);
    ck_assert_uint_eq(id, 77);
    ck_assert_uint_eq(node.id, 77);
    ck_assert_uint_eq(fingerprint, 77);
    ck_assert_uint_eq(nodes.count, 77);
}

/*
 * A thread that calls a serialized handle while another thread is inside it (held in
 * the middle of switching to a new version) is refused with SHMRING_EINUSE by every
 * call; a child forked meanwhile is not (its copy of the handle is its own) and
 * switches by itself; once the held call returns, the handle serves the new version.
 */
START_TEST(test_serialized_refuses_overlapping_calls)
{
    shmring_nodeset_t *set = test_nodeset(10, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
    publish(set);
    shmring_t *r = open_serialized();
    char key[32];
    size_t len = key_owned_by(set, "node-7", key);
    uint32_t id;
    ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), 0);
    uint32_t node7 = id;
    ck_assert_int_eq(shmring_nodeset_set_state(set, "node-7", SHMRING_STATE_DOWN), 0);
    ck_assert_uint_eq(publish(set), 2);

    ck_assert_int_eq(sem_init(&switch_inside, 0, 0), 0);
    ck_assert_int_eq(sem_init(&switch_release, 0, 0), 0);
    shmring__reader_switch_hook = hold_switch;
    struct held_call call = {r, key, len, 1, 0};
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, held_lookup, &call), 0);
    while (sem_wait(&switch_inside) != 0)
        ;
    /* The other thread is inside the handle, switching. */
    assert_refused(r, key, len);

    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        shmring__reader_switch_hook = NULL;
        /* The child's handle is the parent's as it was: still on generation 1, which
         * it leaves on its first call. (The view the held thread was making is
         * copied into the child too, never to be used there.) */
        int ok = shmring_lookup_id(r, key, len, &id) == 0 && id != node7 &&
                 shmring_generation(r) == 2;
        shmring_close(r);
        _exit(ok ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the child forked while another thread was inside the handle failed");

    ck_assert_int_eq(sem_post(&switch_release), 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    shmring__reader_switch_hook = NULL;
    ck_assert_int_eq(call.result, 0);
    ck_assert_uint_ne(call.id, node7);
    ck_assert_uint_eq(shmring_generation(r), 2);
    ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), 0);
    ck_assert_uint_eq(id, call.id);
    sem_destroy(&switch_inside);
    sem_destroy(&switch_release);
    shmring_close(r);
    shmring_nodeset_free(set);
}
END_TEST

/*
 * Opened in a parent, used in a child: the child follows new versions on its own
 * and unmaps the versions it leaves, while the parent's handle keeps answering from
 * the version it has until its own next call.
 */
START_TEST(test_serialized_forked_child_follows)
{
    shmring_nodeset_t *set =
        test_nodeset(10, SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_XXH3);
    publish(set);
    int baseline = test_ring_mappings(ring);
    shmring_t *r = open_serialized();
    char key[32];
    size_t len = key_owned_by(set, "node-2", key);
    uint32_t id, node2;
    ck_assert_int_eq(shmring_lookup_id(r, key, len, &node2), 0);

    struct test_piped_child child = test_fork_piped();
    if (child.pid == 0) {
        /* One answer per generation the parent announces: 'y' when the child
         * answers from it, with node-2 down on even generations, and holds exactly
         * the control object and that version. */
        uint64_t gen;
        while (read(child.commands, &gen, sizeof(gen)) == sizeof(gen)) {
            bool ok = shmring_lookup_id(r, key, len, &id) == 0 &&
                      (gen % 2 == 0 ? id != node2 : id == node2) &&
                      shmring_generation(r) == gen &&
                      test_ring_mappings(ring) == baseline + 2;
            char result = ok ? 'y' : 'n';
            if (write(child.answers, &result, 1) != 1)
                _exit(3);
        }
        shmring_close(r);
        _exit(test_ring_mappings(ring) == baseline ? 0 : 4);
    }
    for (uint64_t expected = 2; expected <= 21; expected++) {
        ck_assert_int_eq(shmring_nodeset_set_state(set, "node-2",
                                                   expected % 2 == 0 ? SHMRING_STATE_DOWN
                                                                     : SHMRING_STATE_UP),
                         0);
        uint64_t gen = publish(set);
        ck_assert_uint_eq(gen, expected);
        ck_assert_int_eq(write(child.commands, &gen, sizeof(gen)), sizeof(gen));
        char result = 0;
        ck_assert_int_eq(read(child.answers, &result, 1), 1);
        ck_assert_msg(result == 'y', "the child failed on generation %llu",
                      (unsigned long long)gen);
    }
    close(child.commands);
    int status;
    ck_assert_int_eq(waitpid(child.pid, &status, 0), child.pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The parent's handle did not move meanwhile; its next call switches. */
    shmring_status_t st;
    shmring_status(r, &st);
    ck_assert_uint_eq(st.generation, 1);
    ck_assert_uint_eq(st.published_generation, 21);
    ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), 0);
    ck_assert_uint_eq(id, node2);
    ck_assert_uint_eq(shmring_generation(r), 21);
    ck_assert_int_eq(test_ring_mappings(ring), baseline + 2);
    close(child.answers);
    shmring_close(r);
    shmring_nodeset_free(set);
}
END_TEST

/*
 * The calls of a serialized handle may come from any thread, one at a time: 4
 * threads taking turns under a mutex while 300 versions are published get only
 * right answers, never refused, never from an older version than before (and the
 * ThreadSanitizer build finds no race: the mutex orders every use of the handle).
 */
START_TEST(test_serialized_threads_take_turns)
{
    pthread_mutex_t turn;
    ck_assert_int_eq(pthread_mutex_init(&turn, NULL), 0);
    look_up_while_publishing(&turn);
    pthread_mutex_destroy(&turn);
}
END_TEST

static const struct test_fixture fixture = {setup, teardown, 0};
static const struct test_fixture slow = {setup, teardown, 300};

static Suite *reader_suite(void)
{
    Suite *s = suite_create("reader");
    TCase *core = TEST_CASE_WITH(s, "core", &fixture, test_open_errors,
                                 test_nothing_published_yet, test_nodes_by_id,
                                 test_follows_new_versions, test_lookup_id_versioned);
    tcase_add_loop_test(core, test_lookups_match_snapshot, 0, 3);
    TEST_CASE_WITH(s, "resilience", &slow, test_keeps_last_good_version,
                   test_status_names_a_bad_version, test_status_names_a_newer_format,
                   test_refuses_hostile_versions, test_survives_destroy_and_recreate,
                   test_old_mappings_released);
    TEST_CASE_WITH(s, "concurrency", &slow, test_threads_share_one_handle,
                   test_status_consistent_while_switching,
                   test_forked_child_keeps_working,
                   test_reader_process_sees_live_updates);
    TCase *serialized = TEST_CASE_WITH(s, "serialized", &slow, test_serialized_open_flags,
                                       test_serialized_refuses_overlapping_calls,
                                       test_serialized_forked_child_follows,
                                       test_serialized_threads_take_turns);
    tcase_add_loop_test(serialized, test_serialized_follows_and_unmaps, 0, 3);
    return s;
}

int main(void)
{
    return test_run_suite(reader_suite());
}
