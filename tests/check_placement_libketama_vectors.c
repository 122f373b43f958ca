/*
 * `libketama` (lib/placement_libketama.c) against libketama's own published
 * expectations. libketama cannot be installed here (Debian does not package it), so
 * the expected answers come from its repository (github.com/RJ/ketama):
 *
 * - libketama/test.sh runs libketama/ketama_test.c on ketama.servers (8 servers,
 *   memory 100 to 1000) and requires the MD5 of its output to be
 *   5672b131391f5aa2b280936aec1eea74. The output is ketama_error() (empty after a
 *   successful ketama_roll) and a newline, then for each key "0" to "999999" the line
 *   "KEYHASH POINT ADDRESS": ketama_hashi(key), the point ketama_get_server() picked
 *   and that server's address. The test below prints the same lines from our ring
 *   and compares the MD5: all 1,000,000 answers (hash, point and server) at once.
 * - python_ketama/tests.py: with 127.0.0.1:11211 (600) and 127.0.0.1:11212 (400),
 *   hashi("test") is 3446378249, get_server("test") is (3454255383,
 *   "127.0.0.1:11211"), and the continuum has 160 x 2 points.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/md5.h>

#include "hash_internal.h"
#include "snapshot_internal.h"
#include "test_expect.h"
#include "test_support.h"

struct server {
    const char *address;
    uint32_t memory;
};

/* ketama.servers, in its order. */
static const struct server ketama_servers[] = {
    {"10.0.1.1:11211", 600}, {"10.0.1.2:11211", 300},  {"10.0.1.3:11211", 200},
    {"10.0.1.4:11211", 350}, {"10.0.1.5:11211", 1000}, {"10.0.1.6:11211", 800},
    {"10.0.1.7:11211", 950}, {"10.0.1.8:11211", 100}};

static shmring_snapshot_t *libketama_snapshot(const struct server *servers, size_t count)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params = {.algorithm = SHMRING_ALGORITHM_LIBKETAMA,
                               .hash = SHMRING_HASH_MD5,
                               .vnodes = SHMRING_DEFAULT_VNODES};
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    for (size_t i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof(name), "s%zu", i);
        ck_assert_int_eq(shmring_nodeset_add(set, name, servers[i].address,
                                             servers[i].memory, SHMRING_STATE_UP, NULL),
                         0);
    }
    shmring_snapshot_t *snapshot;
    ck_assert_int_eq(shmring_nodeset_snapshot(set, &snapshot), 0);
    shmring_nodeset_free(set);
    return snapshot;
}

/* What ketama_get_server(KEY) answers: the point it picked and its server's index. */
struct answer {
    uint32_t key_hash;
    uint32_t point;
    uint32_t node_index;
    /* The first point >= the hash was past the last one: the wrap to point 0. */
    bool wrapped;
};

static struct answer answer_of(const void *buffer, const char *key)
{
    size_t len = strlen(key);
    uint64_t hash = shmring__snapshot_key_hash(buffer, key, len);
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_point *points = snapshot_section_at(buffer, &h->points);
    uint32_t i = shmring__snapshot_first_point(buffer, hash);
    return (struct answer){.key_hash = (uint32_t)(hash >> 32),
                           .point = (uint32_t)(points[i].point >> 32),
                           .node_index = points[i].node_index,
                           .wrapped = hash > points[h->point_count - 1].point};
}

START_TEST(ketama_test_output_md5)
{
    shmring_snapshot_t *snapshot =
        libketama_snapshot(ketama_servers, COUNT_OF(ketama_servers));
    size_t size;
    const void *buffer = shmring_snapshot_data(snapshot, &size);
    struct md5_ctx md5;
    md5_init(&md5);
    /* ketama_error() after a successful roll: "". */
    md5_update(&md5, 1, (const uint8_t *)"\n");
    uint32_t wrapped = 0;
    for (uint32_t i = 0; i < 1000000; i++) {
        char key[16], line[64];
        snprintf(key, sizeof(key), "%" PRIu32, i);
        struct answer a = answer_of(buffer, key);
        int length = snprintf(line, sizeof(line), "%" PRIu32 " %" PRIu32 " %s\n",
                              a.key_hash, a.point, ketama_servers[a.node_index].address);
        md5_update(&md5, (size_t)length, (const uint8_t *)line);
        wrapped += a.wrapped;
        /* The public lookup answers the same server. */
        if (i % 1000 == 0) {
            shmring_node_t node;
            ck_assert_int_eq(shmring_snapshot_lookup(snapshot, key, strlen(key), &node),
                             0);
            EXPECT_STR_EQ(node.address, ketama_servers[a.node_index].address);
        }
    }
    uint8_t digest[MD5_DIGEST_SIZE];
    md5_digest(&md5, sizeof(digest), digest);
    char hex[2 * MD5_DIGEST_SIZE + 1];
    for (size_t b = 0; b < sizeof(digest); b++)
        snprintf(hex + 2 * b, 3, "%02x", digest[b]);
    ck_assert_str_eq(hex, "5672b131391f5aa2b280936aec1eea74");
    /* The keys past the last point, which libketama sends to the first: the
     * wrap-around is among what the digest covers. */
    ck_assert_uint_eq(wrapped, 307);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(python_tests)
{
    static const struct server servers[] = {{"127.0.0.1:11211", 600},
                                            {"127.0.0.1:11212", 400}};
    shmring_snapshot_t *snapshot = libketama_snapshot(servers, COUNT_OF(servers));
    size_t size;
    const void *buffer = shmring_snapshot_data(snapshot, &size);
    /* test_hashi */
    ck_assert_uint_eq(shmring__ketama_key_hash("test", 4), 3446378249u);
    /* test_hashing */
    struct answer a = answer_of(buffer, "test");
    ck_assert_uint_eq(a.point, 3454255383u);
    ck_assert_str_eq(servers[a.node_index].address, "127.0.0.1:11211");
    /* test_points */
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.point_count, 160 * 2);
    shmring_snapshot_free(snapshot);
}
END_TEST

static const struct test_fixture slow = {NULL, NULL, 300};

static Suite *libketama_vectors_suite(void)
{
    Suite *s = suite_create("placement_libketama_vectors");
    TEST_CASE_WITH(s, "published", &slow, ketama_test_output_md5, python_tests);
    return s;
}

int main(void)
{
    return test_run_suite(libketama_vectors_suite());
}
