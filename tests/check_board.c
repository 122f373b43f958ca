/*
 * Tests of bounded-load leases and the load board (lib/board.c, lib/board_admin.c and
 * the leases of lib/reader.c) on real System V shared memory, real processes and
 * real users: capacities and candidate orders worked out by hand, the group's
 * permission model with root acting as an outsider and as a member of the workers'
 * group, boards damaged by hand, and workers killed at chosen instants (seeded and
 * logged, so that a failure can be replayed with SHMRING_TEST_SEED).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "board_internal.h"
#include "control_internal.h"
#include "test_support.h"

/* The workers' group of the tests' boards: any gid will do for root, which can give
 * files to any group and become a member of any. */
#define WORKERS_GROUP ((gid_t)4242)
#define OUTSIDER_GROUP ((gid_t)65534)

static char ring[SHMRING_RING_NAME_MAX + 1];
static shmring_writer_t *writer;

static void setup(void)
{
    snprintf(ring, sizeof(ring), "%s", test_ring_name("board"));
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer), 0);
}

/* The ring's board segment, or -1 when it has none (or no ring is left). */
static int board_shmid_or_none(void)
{
    int fd = open(test_object_path(ring, "control"), O_RDONLY);
    if (fd < 0)
        return -1;
    void *control = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    ck_assert_ptr_ne(control, MAP_FAILED);
    struct board_record record;
    int shmid = shmring__board_record(control, &record) == 0 ? record.shmid : -1;
    munmap(control, CONTROL_SIZE);
    return shmid;
}

static void teardown(void)
{
    shmring_writer_close(writer);
    int shmid = board_shmid_or_none();
    int err = shmring_ring_destroy(ring, NULL);
    ck_assert(err == 0 || err == SHMRING_ENOENT);
    ck_assert_int_eq(test_ring_entries(ring), 0);
    /* destroy removed the board, whatever was written into it. */
    struct shmid_ds segment;
    if (shmid >= 0)
        ck_assert_int_eq(shmctl(shmid, IPC_STAT, &segment), -1);
}

/* A node of a hand-made node set. */
struct node_spec {
    const char *name;
    uint32_t weight;
    shmring_state_t state;
};

/* Publishes NODES (COUNT) with ALGORITHM as the ring's next version. */
static void publish(shmring_algorithm_t algorithm, const struct node_spec *nodes,
                    size_t count)
{
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_nodeset_new(&set), 0);
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = algorithm;
    params.hash = shmring_algorithm_default_hash(algorithm);
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    for (size_t i = 0; i < count; i++)
        ck_assert_int_eq(shmring_nodeset_add(set, nodes[i].name, NULL, nodes[i].weight,
                                             nodes[i].state, NULL),
                         0);
    ck_assert_int_eq(shmring_writer_publish(writer, set, NULL), 0);
    shmring_nodeset_free(set);
}

static void board(uint32_t percent)
{
    ck_assert_int_eq(shmring_writer_set_board(writer, WORKERS_GROUP, percent), 0);
}

/* The in-flight count of node ID and of the ring, as shmring_ring_board() reads
 * them (the node's capacity into *capacity when not NULL). */
static uint64_t in_flight(uint32_t id, uint64_t *total, uint64_t *capacity)
{
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    uint64_t count = UINT64_MAX;
    for (size_t i = 0; i < info.node_count; i++) {
        if (info.nodes[i].id == id) {
            count = info.nodes[i].in_flight;
            if (capacity != NULL)
                *capacity = info.nodes[i].capacity;
        }
    }
    if (total != NULL)
        *total = info.in_flight;
    shmring_board_info_free(&info);
    return count;
}

static uint64_t ring_in_flight(void)
{
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    uint64_t total = info.in_flight;
    shmring_board_info_free(&info);
    return total;
}

/* A key whose candidates (shmring_lookup_n) are the node ids FIRST, SECOND, ...
 * (COUNT of them, in that order): the first of "key-0", "key-1", ... */
static size_t key_with_order(shmring_t *r, const uint32_t *order, size_t count, char *key)
{
    for (uint64_t i = 0; i < 100000; i++) {
        size_t len = test_key(key, i);
        shmring_node_t nodes[8];
        int n = shmring_lookup_n(r, key, len, nodes, count);
        ck_assert_int_eq(n, (int)count);
        size_t same = 0;
        while (same < count && nodes[same].id == order[same])
            same++;
        if (same == count)
            return len;
    }
    ck_abort_msg("no key has the wanted candidate order");
    return 0;
}

START_TEST(test_capacity_formula)
{
    /* ceil(c x (in-flight + 1) x weight / up weight), in percent, by hand. */
    ck_assert_uint_eq(shmring__board_capacity(125, 0, 1, 4), 1);  /* 0.3125 */
    ck_assert_uint_eq(shmring__board_capacity(125, 10, 1, 4), 4); /* 3.4375 */
    ck_assert_uint_eq(shmring__board_capacity(150, 9, 1, 6), 3);  /* 2.5 */
    ck_assert_uint_eq(shmring__board_capacity(150, 9, 2, 6), 5);  /* 5 exactly */
    ck_assert_uint_eq(shmring__board_capacity(150, 9, 3, 6), 8);  /* 7.5 */
    ck_assert_uint_eq(shmring__board_capacity(200, 5, 2, 4), 6);  /* 6 exactly */
    ck_assert_uint_eq(shmring__board_capacity(100, 0, 1, 1), 1);  /* one node */
    ck_assert_uint_eq(shmring__board_capacity(100, 99, 1, 1), 100);
    /* The largest values a board can hold do not overflow. */
    ck_assert_uint_eq(shmring__board_capacity(10000, UINT32_MAX, 65535, 65535),
                      (uint64_t)100 * ((uint64_t)UINT32_MAX + 1));
}
END_TEST

START_TEST(test_balance_factor_parse)
{
    uint32_t percent = 7;
    ck_assert_int_eq(shmring_balance_factor_parse("1.25", &percent), 0);
    ck_assert_uint_eq(percent, 125);
    ck_assert_int_eq(shmring_balance_factor_parse("2", &percent), 0);
    ck_assert_uint_eq(percent, 200);
    ck_assert_int_eq(shmring_balance_factor_parse("1.5", &percent), 0);
    ck_assert_uint_eq(percent, 150);
    ck_assert_int_eq(shmring_balance_factor_parse("0", &percent), 0);
    ck_assert_uint_eq(percent, 0);
    ck_assert_int_eq(shmring_balance_factor_parse("100", &percent), 0);
    ck_assert_uint_eq(percent, 10000);
    percent = 7;
    const char *bad[] = {"",     "0.5", "0.99", "1.255", "100.01", "1e3",
                         "-1.5", "1.",  ".5",   "1,5",   "abc",    "1.25x"};
    for (size_t i = 0; i < COUNT_OF(bad); i++)
        ck_assert_int_eq(shmring_balance_factor_parse(bad[i], &percent),
                         SHMRING_EBADFACTOR);
    ck_assert_uint_eq(percent, 7);
    ck_assert_int_eq(shmring_writer_set_board(writer, WORKERS_GROUP, 99),
                     SHMRING_EBADFACTOR);
    ck_assert_int_eq(shmring_writer_set_board(writer, WORKERS_GROUP, 10001),
                     SHMRING_EBADFACTOR);
}
END_TEST

/*
 * Three nodes of weight 1, c = 1.25, one key acquired again and again without
 * release. With N in flight every capacity is ceil(1.25 (N + 1) / 3):
 *   N:        0  1  2  3  4  5  6  7
 *   capacity: 1  1  2  2  3  3  3  4
 * so the key's candidates take, in turn, the first, second, first, second, first,
 * second, third (both full at 3) and first.
 */
static void check_three_nodes(shmring_algorithm_t algorithm)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP},
                                      {"c", 1, SHMRING_STATE_UP}};
    publish(algorithm, nodes, 3);
    board(125);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    char key[64];
    shmring_node_t order[3];
    size_t len = test_key(key, 1);
    ck_assert_int_eq(shmring_lookup_n(r, key, len, order, 3), 3);
    const int expected_position[] = {0, 1, 0, 1, 0, 1, 2, 0};
    const uint64_t expected_capacity[] = {1, 1, 2, 2, 3, 3, 3, 4};
    shmring_lease_t leases[8];
    for (int n = 0; n < 8; n++) {
        uint64_t total, capacity;
        in_flight(order[0].id, &total, &capacity);
        ck_assert_uint_eq(total, (uint64_t)n);
        ck_assert_uint_eq(capacity, expected_capacity[n]);
        ck_assert_int_eq(shmring_acquire(r, key, len, &leases[n]), 0);
        ck_assert_uint_eq(leases[n].counted, 1);
        ck_assert_uint_eq(leases[n].id, order[expected_position[n]].id);
        ck_assert_uint_eq(leases[n].candidates, (uint32_t)expected_position[n] + 1);
    }
    ck_assert_uint_eq(in_flight(order[0].id, NULL, NULL), 4);
    ck_assert_uint_eq(in_flight(order[1].id, NULL, NULL), 3);
    ck_assert_uint_eq(in_flight(order[2].id, NULL, NULL), 1);
    for (int n = 0; n < 8; n++)
        ck_assert_int_eq(shmring_release(r, &leases[n]), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    ck_assert_uint_eq(in_flight(order[0].id, NULL, NULL), 0);
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    ck_assert_uint_eq(info.acquires, 8);
    ck_assert_uint_eq(info.first_candidate, 4);
    ck_assert_uint_eq(info.candidates_tried, 1 + 2 + 1 + 2 + 1 + 2 + 3 + 1);
    ck_assert_uint_eq(info.workers, 1);
    ck_assert_uint_eq(info.balance_percent, 125);
    ck_assert_uint_eq(info.group, WORKERS_GROUP);
    shmring_board_info_free(&info);
    shmring_close(r);
}

START_TEST(test_three_nodes_ring)
{
    check_three_nodes(SHMRING_ALGORITHM_RING);
}
END_TEST

START_TEST(test_three_nodes_maglev)
{
    check_three_nodes(SHMRING_ALGORITHM_MAGLEV);
}
END_TEST

START_TEST(test_three_nodes_ketama)
{
    check_three_nodes(SHMRING_ALGORITHM_KETAMA);
}
END_TEST

START_TEST(test_three_nodes_rendezvous)
{
    check_three_nodes(SHMRING_ALGORITHM_RENDEZVOUS);
}
END_TEST

START_TEST(test_three_nodes_jump)
{
    check_three_nodes(SHMRING_ALGORITHM_JUMP);
}
END_TEST

/*
 * Weights 3 and 1 (up weight 4), c = 1.25: the heavy node's capacity with N in flight
 * is ceil(0.9375 (N + 1)), above N until N = 15 (capacity 15), so a key whose first
 * candidate is the heavy node takes it 15 times, then the light one (capacity
 * ceil(1.25 x 16 / 4) = 5), then the heavy one again (N = 16: ceil(15.9375) = 16).
 */
START_TEST(test_weights)
{
    const struct node_spec nodes[] = {{"heavy", 3, SHMRING_STATE_UP},
                                      {"light", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 2);
    board(125);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    char key[64];
    size_t len = key_with_order(r, (const uint32_t[]){0, 1}, 2, key);
    shmring_lease_t leases[17];
    for (int n = 0; n < 17; n++) {
        ck_assert_int_eq(shmring_acquire(r, key, len, &leases[n]), 0);
        ck_assert_uint_eq(leases[n].id, n == 15 ? 1 : 0);
    }
    uint64_t capacity;
    ck_assert_uint_eq(in_flight(1, NULL, &capacity), 1);
    ck_assert_uint_eq(capacity, 6); /* ceil(1.25 x 18 / 4) = ceil(5.625) */
    ck_assert_uint_eq(in_flight(0, NULL, &capacity), 16);
    ck_assert_uint_eq(capacity, 17); /* ceil(1.25 x 18 x 3 / 4) = ceil(16.875) */
    for (int n = 0; n < 17; n++)
        ck_assert_int_eq(shmring_release(r, &leases[n]), 0);
    shmring_close(r);
}
END_TEST

/* A down node is never a candidate: the key goes from its first candidate to the
 * next up one, and down nodes have no capacity. */
START_TEST(test_down_nodes)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_DOWN},
                                      {"c", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 3);
    board(150);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    char key[64];
    size_t len = key_with_order(r, (const uint32_t[]){0, 2}, 2, key);
    /* Up weight 2, c = 1.5: capacities ceil(0.75 (N + 1)) = 1, 2, 3, 3, 4 for N = 0
     * to 4: a, a, a, c (a full at 3), a. */
    const uint32_t expected[] = {0, 0, 0, 2, 0};
    shmring_lease_t leases[5];
    for (int n = 0; n < 5; n++) {
        ck_assert_int_eq(shmring_acquire(r, key, len, &leases[n]), 0);
        ck_assert_uint_eq(leases[n].id, expected[n]);
    }
    uint64_t capacity = 7;
    ck_assert_uint_eq(in_flight(1, NULL, &capacity), 0);
    ck_assert_uint_eq(capacity, 0);
    for (int n = 0; n < 5; n++)
        ck_assert_int_eq(shmring_release(r, &leases[n]), 0);
    shmring_close(r);
}
END_TEST

/* One node takes every lease: its capacity ceil(c (N + 1)) is always above N. */
START_TEST(test_one_node)
{
    const struct node_spec nodes[] = {{"only", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 1);
    board(100);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_lease_t leases[50];
    for (int n = 0; n < 50; n++) {
        ck_assert_int_eq(shmring_acquire(r, "k", 1, &leases[n]), 0);
        ck_assert_uint_eq(leases[n].id, 0);
        ck_assert_uint_eq(leases[n].candidates, 1);
    }
    ck_assert_uint_eq(in_flight(0, NULL, NULL), 50);
    for (int n = 0; n < 50; n++)
        ck_assert_int_eq(shmring_release(r, &leases[n]), 0);
    ck_assert_uint_eq(in_flight(0, NULL, NULL), 0);
    shmring_close(r);
}
END_TEST

/* Attaches the ring's board as the owner, for tests that write it by hand. */
static void board_attach(struct board *b)
{
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_close(r);
    int fd = open(test_object_path(ring, "control"), O_RDONLY);
    ck_assert_int_ge(fd, 0);
    void *control = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    ck_assert_ptr_ne(control, MAP_FAILED);
    struct board_record record;
    ck_assert_int_eq(shmring__board_record(control, &record), 0);
    munmap(control, CONTROL_SIZE);
    ck_assert_int_eq(shmring__board_attach(&record, geteuid(), b), 0);
}

/* The entry of node ID on board B. */
static uint32_t entry_of(const struct board *b, uint32_t id)
{
    for (uint32_t e = 0; e < b->entry_count; e++) {
        uint64_t tag = atomic_load(&b->entries[e].tag);
        if ((tag & ENTRY_PRESENT) != 0 && (uint32_t)tag == id)
            return e;
    }
    ck_abort_msg("node %u has no entry", id);
    return 0;
}

/*
 * Every candidate full: counts written by hand into a slot nobody holds (a, b, c:
 * 10, 4, 7 leases; the slot's total 0, so every capacity is ceil(1.25 / 3) = 1). The
 * lease goes to the least loaded candidate, b; with b weighing 3, to b still
 * (4 / 3 < 7 / 1); never a refusal.
 */
START_TEST(test_all_full)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP},
                                      {"c", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 3);
    board(125);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    char key[64];
    size_t len = key_with_order(r, (const uint32_t[]){0, 1, 2}, 3, key);
    shmring_lease_t lease;
    ck_assert_int_eq(shmring_acquire(r, key, len, &lease), 0); /* makes the entries */
    ck_assert_uint_eq(lease.id, 0);
    ck_assert_int_eq(shmring_release(r, &lease), 0);
    struct board b;
    board_attach(&b);
    const uint32_t counts[] = {10, 4, 7};
    uint32_t slot = b.slot_count - 1;
    for (uint32_t id = 0; id < 3; id++) {
        uint32_t e = entry_of(&b, id);
        uint32_t incarnation = (uint32_t)(atomic_load(&b.entries[e].tag) >> 32) & 0xffu;
        atomic_store(&b.cells[(size_t)e * b.slot_count + slot],
                     incarnation << 24 | counts[id]);
    }
    atomic_store(&b.header->slot_high, b.slot_count);
    /* The slot is not claimed: a sweep leaves it alone. */
    ck_assert_int_eq(shmring_acquire(r, key, len, &lease), 0);
    ck_assert_uint_eq(lease.id, 1);
    ck_assert_uint_eq(lease.candidates, 3);
    ck_assert_int_eq(shmring_release(r, &lease), 0);
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    ck_assert_uint_eq(info.nodes[0].overflow, 1);
    ck_assert_uint_eq(info.nodes[1].overflow, 1);
    ck_assert_uint_eq(info.nodes[2].overflow, 1);
    ck_assert_uint_eq(info.nodes[1].in_flight, 4);
    shmring_board_info_free(&info);
    shmring__board_detach(&b);
    shmring_close(r);
}
END_TEST

START_TEST(test_plain_without_board)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP},
                                      {"c", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 3);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), SHMRING_ENOBOARD);
    for (uint64_t i = 0; i < 200; i++) {
        char key[64];
        size_t len = test_key(key, i);
        uint32_t id;
        ck_assert_int_eq(shmring_lookup_id(r, key, len, &id), 0);
        shmring_lease_t lease;
        ck_assert_int_eq(shmring_acquire(r, key, len, &lease), 0);
        ck_assert_uint_eq(lease.id, id);
        ck_assert_uint_eq(lease.counted, 0);
        ck_assert_int_eq(shmring_release(r, &lease), 0);
        ck_assert_int_eq(shmring_release(r, &lease), SHMRING_ELEASE);
    }
    shmring_close(r);
}
END_TEST

/* Without a balance factor every lease is the lookup's answer, and counted. */
START_TEST(test_no_factor)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP},
                                      {"c", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 3);
    board(0);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_lease_t leases[100];
    for (uint64_t i = 0; i < 100; i++) {
        uint32_t id;
        ck_assert_int_eq(shmring_lookup_id(r, "hot", 3, &id), 0);
        ck_assert_int_eq(shmring_acquire(r, "hot", 3, &leases[i]), 0);
        ck_assert_uint_eq(leases[i].id, id);
        ck_assert_uint_eq(leases[i].counted, 1);
    }
    ck_assert_uint_eq(ring_in_flight(), 100);
    for (uint64_t i = 0; i < 100; i++)
        ck_assert_int_eq(shmring_release(r, &leases[i]), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_close(r);
}
END_TEST

/* A lease is released once: the second release and a lease never acquired are
 * refused, and count nothing down. */
START_TEST(test_double_release)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 2);
    board(200);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_lease_t first, second;
    ck_assert_int_eq(shmring_acquire(r, "k", 1, &first), 0);
    ck_assert_int_eq(shmring_acquire(r, "k", 1, &second), 0);
    ck_assert_uint_eq(ring_in_flight(), 2);
    ck_assert_int_eq(shmring_release(r, &first), 0);
    ck_assert_int_eq(shmring_release(r, &first), SHMRING_ELEASE);
    ck_assert_uint_eq(ring_in_flight(), 1);
    shmring_lease_t never = {0};
    ck_assert_int_eq(shmring_release(r, &never), SHMRING_ELEASE);
    ck_assert_uint_eq(ring_in_flight(), 1);
    ck_assert_int_eq(shmring_release(r, &second), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_close(r);
}
END_TEST

/* Counts follow nodes by id across versions: a node kept keeps its count, a removed
 * node's count is dropped (its late release counts nothing down), a new node starts
 * at 0. */
START_TEST(test_counts_follow_ids)
{
    const struct node_spec before[] = {{"a", 1, SHMRING_STATE_UP},
                                       {"b", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, before, 2);
    board(0);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    char key_a[64], key_b[64];
    size_t len_a = key_with_order(r, (const uint32_t[]){0}, 1, key_a);
    size_t len_b = key_with_order(r, (const uint32_t[]){1}, 1, key_b);
    shmring_lease_t on_a[3], on_b[2];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(shmring_acquire(r, key_a, len_a, &on_a[i]), 0);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(shmring_acquire(r, key_b, len_b, &on_b[i]), 0);
    /* b removed, c added (id 2). */
    shmring_nodeset_t *set;
    ck_assert_int_eq(shmring_writer_nodeset(writer, &set), 0);
    ck_assert_int_eq(shmring_nodeset_remove(set, "b"), 0);
    ck_assert_int_eq(shmring_nodeset_add(set, "c", NULL, 1, SHMRING_STATE_UP, NULL), 0);
    ck_assert_int_eq(shmring_writer_publish(writer, set, NULL), 0);
    shmring_nodeset_free(set);
    /* The next lease switches the handle, and its sweep (a new handle sweeps at its
     * first lease) drops b's entry. */
    shmring_t *other;
    ck_assert_int_eq(shmring_open(ring, &other), 0);
    shmring_lease_t lease;
    ck_assert_int_eq(shmring_acquire(other, key_a, len_a, &lease), 0);
    ck_assert_int_eq(shmring_release(other, &lease), 0);
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    ck_assert_uint_eq(info.node_count, 2);
    ck_assert_uint_eq(info.nodes[0].id, 0);
    ck_assert_uint_eq(info.nodes[0].in_flight, 3);
    ck_assert_uint_eq(info.nodes[1].id, 2);
    ck_assert_uint_eq(info.nodes[1].in_flight, 0);
    shmring_board_info_free(&info);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(shmring_release(r, &on_b[i]), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(shmring_release(r, &on_a[i]), 0);
    ck_assert_uint_eq(in_flight(0, NULL, NULL), 0);
    ck_assert_uint_eq(in_flight(2, NULL, NULL), 0);
    shmring_close(other);
    shmring_close(r);
}
END_TEST

/* ---- the group's permission model ------------------------------------------------ */

static int board_shmid(void)
{
    int fd = open(test_object_path(ring, "control"), O_RDONLY);
    ck_assert_int_ge(fd, 0);
    void *control = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    struct board_record record;
    ck_assert_int_eq(shmring__board_record(control, &record), 0);
    munmap(control, CONTROL_SIZE);
    return record.shmid;
}

static int attack_shmid;
static char attack_board_path[512];

/* What a process may do to the board: a bit for each of attach for writing, remove
 * it, change its mode or group, open the board file for writing, truncate it,
 * remove it, and get a counted lease. */
enum attack_bits {
    ATTACK_ATTACHED = 1,
    ATTACK_REMOVED = 2,
    ATTACK_CHANGED = 4,
    ATTACK_FILE_WRITABLE = 8,
    ATTACK_FILE_TRUNCATED = 16,
    ATTACK_FILE_REMOVED = 32,
    ATTACK_COUNTED = 64,
};

static int attack(void)
{
    int done = 0;
    void *base = shmat(attack_shmid, NULL, 0);
    if (base != (void *)-1) {
        done |= ATTACK_ATTACHED;
        shmdt(base);
    }
    if (shmctl(attack_shmid, IPC_RMID, NULL) == 0)
        done |= ATTACK_REMOVED;
    struct shmid_ds segment;
    memset(&segment, 0, sizeof(segment));
    segment.shm_perm.uid = getuid();
    segment.shm_perm.gid = getgid();
    segment.shm_perm.mode = 0666;
    if (shmctl(attack_shmid, IPC_SET, &segment) == 0)
        done |= ATTACK_CHANGED;
    int fd = open(attack_board_path, O_RDWR);
    if (fd >= 0) {
        done |= ATTACK_FILE_WRITABLE;
        close(fd);
    }
    if (truncate(attack_board_path, 1 << 20) == 0)
        done |= ATTACK_FILE_TRUNCATED;
    if (unlink(attack_board_path) == 0)
        done |= ATTACK_FILE_REMOVED;
    shmring_t *r;
    if (shmring_open_with(ring, &(shmring_open_options_t){.trusted_owner = 0}, &r) == 0) {
        shmring_lease_t lease;
        if (shmring_acquire(r, "k", 1, &lease) == 0 && lease.counted)
            done |= ATTACK_COUNTED;
        shmring_close(r);
    }
    return done;
}

START_TEST(test_permissions)
{
    if (geteuid() != 0)
        return; /* acting as other users needs root */
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 2);
    board(125);
    attack_shmid = board_shmid();
    snprintf(attack_board_path, sizeof(attack_board_path), "%s",
             test_object_path(ring, BOARD_FILE));
    struct stat st;
    ck_assert_int_eq(stat(attack_board_path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    ck_assert_uint_eq(st.st_gid, WORKERS_GROUP);
    /* A member of the group may write the counts and get counted leases; nothing
     * else. (Root trusts a ring of root: the members open it as trusted_owner 0.) */
    ck_assert_int_eq(test_as_user(TEST_NOBODY, WORKERS_GROUP, attack),
                     ATTACK_ATTACHED | ATTACK_COUNTED);
    /* Anyone else may do none of it, and gets plain lookups. */
    ck_assert_int_eq(test_as_user(TEST_NOBODY, OUTSIDER_GROUP, attack), 0);
    /* The board is as it was. */
    struct shmid_ds segment;
    ck_assert_int_eq(shmctl(attack_shmid, IPC_STAT, &segment), 0);
    ck_assert_uint_eq(segment.shm_perm.mode & 0777, 0660);
    ck_assert_uint_eq(segment.shm_perm.gid, WORKERS_GROUP);
    ck_assert_uint_eq(segment.shm_segsz, 549632);
    ck_assert_uint_eq(shmring__board_size(BOARD_SLOTS_DEFAULT, BOARD_ENTRIES_DEFAULT),
                      549632);
    ck_assert_int_eq(stat(attack_board_path, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    /* The member's lease was never released: its slot is reclaimed at the next
     * acquire of a worker (the member exited). */
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_lease_t lease;
    ck_assert_int_eq(shmring_acquire(r, "k", 1, &lease), 0);
    ck_assert_uint_eq(ring_in_flight(), 1);
    ck_assert_int_eq(shmring_release(r, &lease), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_close(r);
    /* destroy removes the segment. */
    shmring_writer_close(writer);
    writer = NULL;
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
    ck_assert_int_eq(shmctl(attack_shmid, IPC_STAT, &segment), -1);
    ck_assert(errno == EINVAL || errno == EIDRM);
}
END_TEST

/* A board damaged by hand: a group member (here, root as the test) rewrites every
 * byte past the header with random values, then the header too. Leases still name
 * only the key's up candidates and never crash; a wrong header makes them plain. */
static void damaged_board(bool header_too)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_DOWN},
                                      {"c", 2, SHMRING_STATE_UP},
                                      {"d", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 4);
    board(125);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_lease_t lease;
    ck_assert_int_eq(shmring_acquire(r, "k", 1, &lease), 0);
    ck_assert_int_eq(shmring_release(r, &lease), 0);
    struct board b;
    board_attach(&b);
    uint64_t seed = 20261202;
    unsigned char *bytes = (unsigned char *)b.header;
    size_t start = header_too ? 0 : sizeof(struct board_header);
    for (size_t i = start; i < b.size; i += 8) {
        uint64_t value = test_random(&seed);
        memcpy(bytes + i, &value, 8);
    }
    /* A new handle attaches the damaged board (or, without its header, refuses it). */
    shmring_t *fresh;
    ck_assert_int_eq(shmring_open(ring, &fresh), 0);
    shmring_t *handles[2] = {r, fresh};
    for (uint64_t i = 0; i < 2000; i++) {
        char key[64];
        size_t len = test_key(key, i);
        shmring_node_t candidates[3];
        ck_assert_int_eq(shmring_lookup_n(r, key, len, candidates, 3), 3);
        shmring_lease_t l;
        ck_assert_int_eq(shmring_acquire(handles[i % 2], key, len, &l), 0);
        ck_assert(l.id == candidates[0].id || l.id == candidates[1].id ||
                  l.id == candidates[2].id);
        ck_assert_uint_ne(l.id, 1);
        if (header_too && i % 2 == 1)
            ck_assert_uint_eq(l.counted, 0);
        int err = shmring_release(handles[i % 2], &l);
        ck_assert_int_eq(err, 0);
    }
    shmring__board_detach(&b);
    shmring_close(fresh);
    shmring_close(r);
}

START_TEST(test_damaged_counts)
{
    damaged_board(false);
}
END_TEST

START_TEST(test_damaged_header)
{
    damaged_board(true);
}
END_TEST

/* ---- board sizes ------------------------------------------------------------------ */

/* The ring's board segment's size, as IPC_STAT reports it. */
static size_t board_segment_size(void)
{
    struct shmid_ds segment;
    ck_assert_int_eq(shmctl(board_shmid_or_none(), IPC_STAT, &segment), 0);
    return segment.shm_segsz;
}

/*
 * A ring of 3,000 nodes gets an automatic board of 8,192 entries (3,000 rounded up to
 * 4,096, doubled) and 128 slots: 256 + 68 x 128 + 16 x 8,192 + 4 x 8,192 x 128 bytes.
 * Every lease is counted, on nodes past the 1,024th too, and each node's in-flight
 * count is exactly its leases.
 */
START_TEST(test_large_ring)
{
    enum { NODES = 3000, LEASES = 3000 };
    static char names[NODES][16];
    static struct node_spec nodes[NODES];
    for (int i = 0; i < NODES; i++) {
        snprintf(names[i], sizeof(names[i]), "n-%d", i);
        nodes[i] = (struct node_spec){names[i], 1, SHMRING_STATE_UP};
    }
    publish(SHMRING_ALGORITHM_JUMP, nodes, NODES);
    board(0);
    ck_assert_uint_eq(board_segment_size(), 4334336);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    static shmring_lease_t leases[LEASES];
    static uint64_t expected[NODES];
    memset(expected, 0, sizeof(expected));
    unsigned past_default = 0;
    for (int i = 0; i < LEASES; i++) {
        char key[64];
        size_t len = test_key(key, (uint64_t)i);
        ck_assert_int_eq(shmring_acquire(r, key, len, &leases[i]), 0);
        ck_assert_uint_eq(leases[i].counted, 1);
        ck_assert_uint_lt(leases[i].id, NODES);
        if (expected[leases[i].id]++ == 0 && leases[i].id >= 1024)
            past_default++;
    }
    /* Jump spreads 3,000 keys over about 1,900 of the 3,000 nodes, two thirds of
     * them past the 1,024th. */
    ck_assert_uint_gt(past_default, 1000);
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    ck_assert_uint_eq(info.entry_count, 8192);
    ck_assert_uint_eq(info.slot_count, 128);
    ck_assert_uint_eq(info.in_flight, LEASES);
    ck_assert_uint_eq(info.node_count, NODES);
    for (size_t i = 0; i < info.node_count; i++)
        ck_assert_uint_eq(info.nodes[i].in_flight, expected[info.nodes[i].id]);
    shmring_board_info_free(&info);
    for (int i = 0; i < LEASES; i++)
        ck_assert_int_eq(shmring_release(r, &leases[i]), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_close(r);
}
END_TEST

/*
 * A ring of up to 512 nodes gets the default board, laid out as 0.4 readers expect
 * it (they check its size, 549,632 bytes, and its counts). Asking for the sizes it
 * has changes only the factor; other sizes replace it, counts from 0; sizes out of
 * the limits are refused.
 */
START_TEST(test_sizes)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP},
                                      {"c", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 3);
    board(0);
    ck_assert_uint_eq(board_segment_size(), 549632);
    struct board b;
    board_attach(&b);
    ck_assert_uint_eq(b.slot_count, 128);
    ck_assert_uint_eq(b.entry_count, 1024);
    ck_assert_uint_eq((unsigned char *)b.totals - (unsigned char *)b.header, 8448);
    ck_assert_uint_eq((unsigned char *)b.entries - (unsigned char *)b.header, 8960);
    ck_assert_uint_eq((unsigned char *)b.cells - (unsigned char *)b.header, 25344);
    shmring__board_detach(&b);
    int shmid = board_shmid_or_none();
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_lease_t lease;
    ck_assert_int_eq(shmring_acquire(r, "k", 1, &lease), 0);
    ck_assert_uint_eq(ring_in_flight(), 1);
    /* The same sizes, given or automatic: the same board, only the factor changes. */
    ck_assert_int_eq(
        shmring_writer_set_board_sized(writer, WORKERS_GROUP, 150, 1024, 128), 0);
    ck_assert_int_eq(shmring_writer_set_board_sized(writer, WORKERS_GROUP, 125, 0, 0), 0);
    ck_assert_int_eq(board_shmid_or_none(), shmid);
    ck_assert_uint_eq(ring_in_flight(), 1);
    /* Out of the limits: refused, and the board is as it was. */
    ck_assert_int_eq(shmring_writer_set_board_sized(writer, WORKERS_GROUP, 125, 1023, 0),
                     SHMRING_ELIMIT);
    ck_assert_int_eq(shmring_writer_set_board_sized(writer, WORKERS_GROUP, 125, 65537, 0),
                     SHMRING_ELIMIT);
    ck_assert_int_eq(shmring_writer_set_board_sized(writer, WORKERS_GROUP, 125, 0, 1025),
                     SHMRING_ELIMIT);
    ck_assert_int_eq(
        shmring_writer_set_board_sized(writer, WORKERS_GROUP, 125, 65536, 1024),
        SHMRING_ELIMIT);
    ck_assert_int_eq(board_shmid_or_none(), shmid);
    /* Other sizes: a new board, counts from 0; the old lease counts nothing down. */
    ck_assert_int_eq(shmring_writer_set_board_sized(writer, WORKERS_GROUP, 125, 2048, 3),
                     0);
    ck_assert_int_ne(board_shmid_or_none(), shmid);
    /* 256 + 68 x 3 + 4 (padding) + 16 x 2,048 + 4 x 2,048 x 3 bytes. */
    ck_assert_uint_eq(board_segment_size(), 57808);
    ck_assert_uint_eq(ring_in_flight(), 0);
    ck_assert_int_eq(shmring_release(r, &lease), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_lease_t leases[2];
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(shmring_acquire(r, "k", 1, &leases[i]), 0);
        ck_assert_uint_eq(leases[i].counted, 1);
    }
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    ck_assert_uint_eq(info.entry_count, 2048);
    ck_assert_uint_eq(info.slot_count, 3);
    ck_assert_uint_eq(info.in_flight, 2);
    ck_assert_uint_eq(info.workers, 1);
    shmring_board_info_free(&info);
    /* Automatic sizes keep this board's own. */
    ck_assert_int_eq(shmring_writer_set_board(writer, WORKERS_GROUP, 200), 0);
    ck_assert_uint_eq(ring_in_flight(), 2);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(shmring_release(r, &leases[i]), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_close(r);
}
END_TEST

/*
 * The entries of a version's nodes in one pass: each id takes its lowest present
 * entry, and the ids that have none the lowest free entries in id order; a later
 * call finds what an earlier one claimed.
 */
START_TEST(test_entries_find)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 1);
    board(0);
    struct board b;
    board_attach(&b);
    uint32_t entries[3];
    uint64_t tags[3];
    ck_assert_int_eq(
        shmring__board_entries_find(&b, (const uint32_t[]){9, 5, 7}, 3, entries, tags),
        0);
    ck_assert_uint_eq(entries[0], 2);
    ck_assert_uint_eq(entries[1], 0);
    ck_assert_uint_eq(entries[2], 1);
    ck_assert_uint_eq(tags[2], ENTRY_PRESENT | 7);
    ck_assert_int_eq(
        shmring__board_entries_find(&b, (const uint32_t[]){7, 11}, 2, entries, tags), 0);
    ck_assert_uint_eq(entries[0], 1);
    ck_assert_uint_eq(tags[0], ENTRY_PRESENT | 7);
    ck_assert_uint_eq(entries[1], 3);
    /* A second entry claiming id 5 (a group member's) is not the one taken. */
    atomic_store(&b.entries[10].tag, ENTRY_PRESENT | 5);
    ck_assert_int_eq(
        shmring__board_entries_find(&b, (const uint32_t[]){13, 11, 5}, 3, entries, tags),
        0);
    ck_assert_uint_eq(entries[0], 4);
    ck_assert_uint_eq(entries[1], 3);
    ck_assert_uint_eq(entries[2], 0);
    /* Every entry taken: no entry for a node that has none. */
    for (uint32_t e = 0; e < b.entry_count; e++) {
        uint64_t t = atomic_load(&b.entries[e].tag);
        if ((t & ENTRY_PRESENT) == 0)
            atomic_store(&b.entries[e].tag, ENTRY_PRESENT | (100000 + e));
    }
    ck_assert_int_eq(
        shmring__board_entries_find(&b, (const uint32_t[]){5, 99}, 2, entries, tags), 0);
    ck_assert_uint_eq(entries[0], 0);
    ck_assert_uint_eq(entries[1], UINT32_MAX);
    shmring__board_detach(&b);
}
END_TEST

/*
 * A group member rewrites the header's counts: larger than the segment holds, or
 * other counts whose layout is not the segment's size. Whoever attaches next
 * refuses the board (SHMRING_EBOARD, as for any damaged header): its leases are
 * plain lookups.
 */
START_TEST(test_hostile_counts)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 2);
    board(125);
    const uint32_t claims[][2] = {
        {65536, 256}, {1024, 1024}, {2048, 64}, {UINT32_MAX, UINT32_MAX}, {1024, 0}};
    for (size_t c = 0; c < sizeof(claims) / sizeof(claims[0]); c++) {
        struct board b;
        board_attach(&b);
        b.header->entry_count = claims[c][0];
        b.header->slot_count = claims[c][1];
        struct board refused;
        int fd = open(test_object_path(ring, "control"), O_RDONLY);
        ck_assert_int_ge(fd, 0);
        void *control = mmap(NULL, CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        ck_assert_ptr_ne(control, MAP_FAILED);
        struct board_record record;
        ck_assert_int_eq(shmring__board_record(control, &record), 0);
        munmap(control, CONTROL_SIZE);
        ck_assert_int_eq(shmring__board_attach(&record, geteuid(), &refused),
                         SHMRING_EBOARD);
        shmring_board_info_t info;
        ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), SHMRING_EBOARD);
        shmring_t *r;
        ck_assert_int_eq(shmring_open(ring, &r), 0);
        shmring_lease_t lease;
        ck_assert_int_eq(shmring_acquire(r, "k", 1, &lease), 0);
        ck_assert_uint_eq(lease.counted, 0);
        ck_assert_int_eq(shmring_release(r, &lease), 0);
        shmring_close(r);
        b.header->entry_count = 1024;
        b.header->slot_count = 128;
        shmring__board_detach(&b);
    }
}
END_TEST

/* ---- workers killed at chosen instants -------------------------------------------- */

static uint64_t random_state;
static enum board_step stop_step;
static unsigned stop_occurrence;
static unsigned seen_occurrences;
static int stopped_pipe = -1;

/* Stops this process (a worker about to be killed) at the chosen occurrence of the
 * chosen step: tells the test, then waits to be killed. */
static void stop_hook(enum board_step step)
{
    if (step != stop_step || ++seen_occurrences != stop_occurrence)
        return;
    char byte = 1;
    if (write(stopped_pipe, &byte, 1) != 1)
        _exit(3);
    for (;;)
        pause();
}

/* A worker that holds HELD leases and then acquires and releases until it is
 * stopped at the test's instant. */
static pid_t worker_start(unsigned held, uint64_t seed)
{
    int stopped[2];
    ck_assert_int_eq(pipe(stopped), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(stopped[0]);
        stopped_pipe = stopped[1];
        seen_occurrences = 0;
        shmring__board_hook = stop_hook;
        shmring_t *r;
        if (shmring_open(ring, &r) != 0)
            _exit(4);
        shmring_lease_t lease;
        for (unsigned i = 0; i < held; i++) {
            char key[64];
            size_t len = test_key(key, test_random(&seed) % 1000);
            if (shmring_acquire(r, key, len, &lease) != 0)
                _exit(5);
        }
        for (uint64_t i = 0;; i++) {
            char key[64];
            size_t len = test_key(key, test_random(&seed) % 1000);
            if (shmring_acquire(r, key, len, &lease) != 0 ||
                shmring_release(r, &lease) != 0)
                _exit(6);
        }
    }
    close(stopped[1]);
    char byte;
    ck_assert_int_eq(read(stopped[0], &byte, 1), 1);
    close(stopped[0]);
    return pid;
}

static void kill_worker(pid_t pid)
{
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* Acquires and releases on R until the board holds exactly EXPECTED leases in all
 * and on each node (EXPECTED_ON, by node index), and R's is the only slot held,
 * within 10 s; the sweep that
 * reclaims comes at the first acquire SWEEP_INTERVAL_NS after the last one. */
static void wait_recovered(shmring_t *r, uint64_t expected, const uint64_t *expected_on,
                           size_t count)
{
    int64_t deadline = test_now_ms() + 10000;
    for (;;) {
        shmring_lease_t lease;
        ck_assert_int_eq(shmring_acquire(r, "probe", 5, &lease), 0);
        ck_assert_int_eq(shmring_release(r, &lease), 0);
        shmring_board_info_t info;
        ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
        bool done = info.in_flight == expected && info.workers == 1;
        for (size_t i = 0; i < count && i < info.node_count; i++)
            done = done && info.nodes[i].in_flight == expected_on[i];
        shmring_board_info_free(&info);
        if (done)
            return;
        ck_assert_msg(test_now_ms() < deadline, "leases not recovered within 10 s");
        test_sleep_ms(20);
    }
}

START_TEST(test_kill_at_chosen_instants)
{
    const char *seed_text = getenv("SHMRING_TEST_SEED");
    random_state = seed_text != NULL ? strtoull(seed_text, NULL, 10) : 20261202;
    fprintf(stderr, "check_board: kills seeded with SHMRING_TEST_SEED=%llu\n",
            (unsigned long long)random_state);
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 2, SHMRING_STATE_UP},
                                      {"c", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 3);
    board(125);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    /* The test's own leases, held across every kill: they must survive. */
    shmring_lease_t mine[3];
    uint64_t mine_on[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(shmring_acquire(r, test_fmt("mine-%d", i), 6, &mine[i]), 0);
        mine_on[mine[i].id]++;
    }
    uint64_t reclaimed = 0;
    const int trials = 28;
    for (int trial = 0; trial < trials; trial++) {
        uint64_t draw = test_random(&random_state);
        /* Every step in turn, then random ones. */
        stop_step = trial < BOARD_STEP_COUNT ? (enum board_step)trial
                                             : (enum board_step)(draw % BOARD_STEP_COUNT);
        unsigned held = (unsigned)((draw >> 8) % 6);
        stop_occurrence = 1 + (unsigned)((draw >> 16) % 20);
        /* A worker claims once; a new worker sweeps once before its first lease. */
        if (stop_step <= BOARD_STEP_SLOT_CLAIMED || stop_step >= BOARD_STEP_RECLAIMING)
            stop_occurrence = 1;
        fprintf(stderr, "check_board: trial %d: step %d, occurrence %u, %u leases held\n",
                trial, (int)stop_step, stop_occurrence, held);
        if (stop_step >= BOARD_STEP_RECLAIMING) {
            /* A sweeper killed in the middle of reclaiming a dead worker's slot:
             * first a worker killed while holding leases, then a new worker,
             * whose first acquire sweeps, stopped in that sweep. */
            enum board_step sweeper_step = stop_step;
            stop_step = BOARD_STEP_TOTAL_COUNTED;
            stop_occurrence = held + 1;
            kill_worker(worker_start(held, draw));
            stop_step = sweeper_step;
            stop_occurrence = 1;
            seen_occurrences = 0;
            kill_worker(worker_start(0, draw + 1));
        } else {
            kill_worker(worker_start(held, draw));
        }
        wait_recovered(r, 3, mine_on, 3);
        shmring_board_info_t info;
        ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
        ck_assert_uint_eq(info.workers, 1);
        /* Killed holding the lock of a slot it had not claimed, a worker leaves
         * nothing to reclaim. */
        if (stop_step != BOARD_STEP_SLOT_LOCKED)
            ck_assert_uint_ge(info.reclaimed, reclaimed + 1);
        reclaimed = info.reclaimed;
        shmring_board_info_free(&info);
    }
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(shmring_release(r, &mine[i]), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_close(r);
}
END_TEST

/* A forked child takes its own slot: its leases are its own, and its parent's
 * leases released in the child count nothing down. */
START_TEST(test_fork)
{
    const struct node_spec nodes[] = {{"a", 1, SHMRING_STATE_UP},
                                      {"b", 1, SHMRING_STATE_UP}};
    publish(SHMRING_ALGORITHM_RING, nodes, 2);
    board(200);
    shmring_t *r;
    ck_assert_int_eq(shmring_open(ring, &r), 0);
    shmring_lease_t parent;
    ck_assert_int_eq(shmring_acquire(r, "k", 1, &parent), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        shmring_lease_t child;
        int ok = shmring_acquire(r, "k", 1, &child) == 0 && child.counted &&
                 ring_in_flight() == 2 && shmring_release(r, &parent) == 0 &&
                 ring_in_flight() == 2 && shmring_release(r, &child) == 0 &&
                 ring_in_flight() == 1;
        shmring_close(r);
        _exit(ok ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(ring, NULL, &info), 0);
    ck_assert_uint_eq(info.workers, 1);
    ck_assert_uint_eq(info.in_flight, 1);
    shmring_board_info_free(&info);
    ck_assert_int_eq(shmring_release(r, &parent), 0);
    ck_assert_uint_eq(ring_in_flight(), 0);
    shmring_close(r);
}
END_TEST

/* ---- ringctl ---------------------------------------------------------------- */

static bool contains(const char *text, const char *part)
{
    return strstr(text, part) != NULL;
}

START_TEST(test_ringctl)
{
    char name[SHMRING_RING_NAME_MAX + 1];
    snprintf(name, sizeof(name), "%s", test_ring_name("board-ctl"));
    struct test_run r;
    RUN(&r, "-r", name, "init", "--workers-group", "4242", "--balance-factor", "1.25");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    const char *nodes = "{\"balance_factor\": 1.5, \"nodes\": [{\"name\": \"a\"}, "
                        "{\"name\": \"b\", \"weight\": 2}, {\"name\": \"c\"}]}";
    RUN_INPUT(&r, nodes, "-r", name, "load", "-");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    shmring_t *handle;
    ck_assert_int_eq(shmring_open(name, &handle), 0);
    char key[64];
    size_t len = key_with_order(handle, (const uint32_t[]){0}, 1, key);
    shmring_lease_t leases[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(shmring_acquire(handle, key, len, &leases[i]), 0);
    /* Up weight 4, c = 1.5, 2 in flight: capacities ceil(4.5 w / 4) = 2, 3, 2. */
    RUN(&r, "-r", name, "show");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(contains(r.out, "load board:    group 4242, balance factor 1.5, 2 in "
                                  "flight, 1 workers\n"),
                  "unexpected output");
    ck_assert_msg(contains(r.out, "SHARE    IN-FLIGHT  CAPACITY\n"), "unexpected output");
    test_run_free(&r);
    RUN(&r, "-r", name, "--json", "show");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(
        contains(r.out, "\"balance_factor\": 1.5") &&
            contains(r.out, "\"entries\": 1024") && contains(r.out, "\"slots\": 128") &&
            contains(r.out, "\"capacity\": 3") && contains(r.out, "\"in_flight\": 2"),
        "unexpected output");
    test_run_free(&r);
    RUN(&r, "-r", name, "metrics");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(
        contains(r.out, test_fmt("shmring_board_workers{ring=\"%s\"} 1\n", name)) &&
            contains(r.out,
                     test_fmt("shmring_board_node_capacity{ring=\"%s\",node=\"b\"} "
                              "3\n",
                              name)) &&
            contains(r.out, test_fmt("shmring_board_balance_factor{ring=\"%s\"} 1.50\n",
                                     name)) &&
            contains(r.out,
                     test_fmt("shmring_board_acquires_total{ring=\"%s\"} 2\n", name)),
        "unexpected output");
    test_run_free(&r);
    /* The flag wins over the file, and an unchanged node set still sets it. */
    RUN_INPUT(&r, nodes, "-r", name, "load", "-", "--balance-factor", "2");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    RUN(&r, "-r", name, "show");
    ck_assert_msg(contains(r.out, "balance factor 2, 2 in flight"), "unexpected output");
    test_run_free(&r);
    EXPECT(
        2, "",
        "ringctl: error: balance factor must be 0 (none) or from 1 to 100 with at most "
        "two decimals: '0.5'\n",
        "-r", name, "board", "4242", "--balance-factor", "0.5");
    /* Another group: a new board, counts from 0; the old board's leases count
     * nothing down. */
    RUN(&r, "-r", name, "board", "4243");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(shmring_release(handle, &leases[i]), 0);
    RUN(&r, "-r", name, "show");
    ck_assert_msg(contains(r.out, "load board:    group 4243, balance factor 2, 0 in "
                                  "flight, 0 workers\n"),
                  "unexpected output");
    test_run_free(&r);
    /* Sizes: out of range, or too many cells, are usage errors; other sizes replace
     * the board (counts from 0), the same sizes keep it. */
    EXPECT(2, "",
           "ringctl: error: --nodes must be an integer from 1024 to 65536: '512'\n", "-r",
           name, "board", "4243", "--nodes", "512");
    EXPECT(2, "",
           "ringctl: error: --nodes must be an integer from 1024 to 65536: '65537'\n",
           "-r", name, "board", "4243", "--nodes", "65537");
    EXPECT(2, "", "ringctl: error: --slots must be an integer from 1 to 1024: '0'\n",
           "-r", name, "board", "4243", "--slots", "0");
    EXPECT(2, "", "ringctl: error: --slots must be an integer from 1 to 1024: '1025'\n",
           "-r", name, "board", "4243", "--slots", "1025");
    EXPECT(2, "",
           "ringctl: error: --nodes x --slots must be at most 16777216 (the board's "
           "cells): 65536 x 1024\n",
           "-r", name, "board", "4243", "--nodes", "65536", "--slots", "1024");
    EXPECT(2, "",
           "ringctl: error: board none takes no --nodes or --slots: it removes the "
           "board\n",
           "-r", name, "board", "none", "--slots", "8");
    ck_assert_int_eq(shmring_acquire(handle, key, len, &leases[0]), 0);
    ck_assert_uint_eq(leases[0].counted, 1);
    RUN(&r, "-r", name, "board", "4243", "--nodes", "1024", "--slots", "128");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    shmring_board_info_t info;
    ck_assert_int_eq(shmring_ring_board(name, NULL, &info), 0);
    ck_assert_uint_eq(info.in_flight, 1);
    shmring_board_info_free(&info);
    RUN(&r, "-r", name, "board", "4243", "--nodes", "4096", "--slots", "16");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
    ck_assert_int_eq(shmring_ring_board(name, NULL, &info), 0);
    ck_assert_uint_eq(info.in_flight, 0);
    ck_assert_uint_eq(info.entry_count, 4096);
    ck_assert_uint_eq(info.slot_count, 16);
    shmring_board_info_free(&info);
    ck_assert_int_eq(shmring_release(handle, &leases[0]), 0);
    /* "board none" removes the board: leases become plain lookups, counted nowhere,
     * and show names no board. */
    EXPECT(2, "",
           "ringctl: error: board none takes no --balance-factor: a ring without a "
           "board has no balance factor\n",
           "-r", name, "board", "none", "--balance-factor", "2");
    RUN(&r, "-r", name, "board", "none");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "");
    test_run_free(&r);
    RUN(&r, "-r", name, "show");
    ck_assert_msg(!contains(r.out, "load board:"), "unexpected output");
    test_run_free(&r);
    shmring_lease_t plain;
    ck_assert_int_eq(shmring_acquire(handle, "k", 1, &plain), 0);
    ck_assert_uint_eq(plain.counted, 0);
    ck_assert_int_eq(shmring_release(handle, &plain), 0);
    shmring_close(handle);
    RUN(&r, "-r", name, "destroy");
    ck_assert_int_eq(r.status, 0);
    test_run_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("board");
    static const struct test_fixture fixture = {setup, teardown, 120};
    TEST_CASE_WITH(s, "capacity", &fixture, test_capacity_formula,
                   test_balance_factor_parse, test_three_nodes_ring,
                   test_three_nodes_maglev, test_three_nodes_ketama,
                   test_three_nodes_rendezvous, test_three_nodes_jump, test_weights,
                   test_down_nodes, test_one_node, test_all_full);
    TEST_CASE_WITH(s, "leases", &fixture, test_plain_without_board, test_no_factor,
                   test_double_release, test_counts_follow_ids, test_fork);
    TEST_CASE_WITH(s, "security", &fixture, test_permissions, test_damaged_counts,
                   test_damaged_header, test_hostile_counts);
    TEST_CASE_WITH(s, "sizes", &fixture, test_large_ring, test_sizes, test_entries_find);
    TEST_CASE_WITH(s, "crash", &fixture, test_kill_at_chosen_instants);
    TEST_CASE(s, "ringctl", test_ringctl);
    return test_run_suite(s);
}
