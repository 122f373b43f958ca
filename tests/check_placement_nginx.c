/*
 * Unit tests of lib/placement_nginx.c, the continuum of nginx's `hash ... consistent`:
 * point counts (down servers placed, then their points dropped), the CRC-32 chain of
 * a server's points (pinned by values computed apart with Python's zlib), how the
 * server string splits into host and port, equal points merged in favour of the
 * earlier server, the wrap, and the point limit counting down servers too.
 * Verification against nginx itself belongs to its own test.
 */
#include <stdbool.h>

#include "test_placement.h"
#include "test_support.h"

static shmring_nodeset_t *nginx_set(void)
{
    return test_empty_set(SHMRING_ALGORITHM_NGINX, SHMRING_HASH_CRC32, 160);
}

static void add_server(shmring_nodeset_t *set, const char *name, const char *address,
                       uint32_t weight, shmring_state_t state)
{
    ck_assert_int_eq(shmring_nodeset_add(set, name, address, weight, state, NULL), 0);
}

/* Whether SNAPSHOT has a point of 32-bit value VALUE. */
static bool has_point(const shmring_snapshot_t *snapshot, uint32_t value)
{
    for (uint32_t p = 0; p < test_point_count(snapshot); p++) {
        if (test_point(snapshot, p) == (uint64_t)value << 32)
            return true;
    }
    return false;
}

/* SET's snapshot has 160 points, and its node NAME owns the whole keyspace
 * (test_check_sole_owner()). */
static void check_sole_owner_of(const shmring_nodeset_t *set, const char *name)
{
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 160);
    test_check_sole_owner(snapshot, name);
    shmring_snapshot_free(snapshot);
}

START_TEST(nginx_point_counts)
{
    /* weight x 160 points a server (these servers' CRCs do not collide). */
    shmring_nodeset_t *set = nginx_set();
    add_server(set, "a", "10.0.0.1:80", 1, SHMRING_STATE_UP);
    add_server(set, "b", "10.0.0.2:80", 3, SHMRING_STATE_UP);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 160 + 480);
    shmring_snapshot_free(snapshot);

    /* A down server is placed, then its points are skipped. */
    ck_assert_int_eq(shmring_nodeset_set_state(set, "b", SHMRING_STATE_DOWN), 0);
    snapshot = test_snapshot(set);
    ck_assert_uint_eq(test_point_count(snapshot), 160);
    for (uint32_t p = 0; p < 160; p++)
        ck_assert_uint_eq(test_point_owner(snapshot, p), 0);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(nginx_point_chain)
{
    /* Point j is CRC-32("10.0.0.1" NUL "80" le32(point j - 1)), point -1 being 0. */
    shmring_snapshot_t *snapshot =
        test_one_node_snapshot(SHMRING_ALGORITHM_NGINX, "10.0.0.1:80", NULL);
    ck_assert(has_point(snapshot, 0xa2ad5d56));
    ck_assert(has_point(snapshot, 0x0bdeb0ab));
    ck_assert_uint_eq(test_point(snapshot, 0), UINT64_C(0x00393daa) << 32);
    ck_assert_uint_eq(test_point(snapshot, 159), UINT64_C(0xfff8114a) << 32);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(nginx_server_strings)
{
    /* No port after the last colon: all of it is the host, the port empty. */
    shmring_snapshot_t *snapshot =
        test_one_node_snapshot(SHMRING_ALGORITHM_NGINX, "backend", NULL);
    ck_assert(has_point(snapshot, 0x1ae70921));
    shmring_snapshot_free(snapshot);

    /* "unix:PATH" hashes PATH, as a hash_key "PATH" (no port) does. */
    snapshot = test_one_node_snapshot(SHMRING_ALGORITHM_NGINX, "unix:/tmp/a", NULL);
    ck_assert(has_point(snapshot, 0x7a608df6));
    shmring_snapshot_t *by_key =
        test_one_node_snapshot(SHMRING_ALGORITHM_NGINX, "10.9.9.9:80", "/tmp/a");
    test_check_same_points(by_key, snapshot);
    shmring_snapshot_free(by_key);
    shmring_snapshot_free(snapshot);
}
END_TEST

START_TEST(nginx_equal_points_go_to_the_earlier_server)
{
    /* Two servers of one address have the same 160 points; of equal points nginx
     * keeps the first, the earlier server's, so it owns every key. */
    for (int order = 0; order < 2; order++) {
        shmring_nodeset_t *set = nginx_set();
        add_server(set, order == 0 ? "a" : "b", "10.0.0.7:80", 1, SHMRING_STATE_UP);
        add_server(set, order == 0 ? "b" : "a", "10.0.0.7:80", 1, SHMRING_STATE_UP);
        check_sole_owner_of(set, order == 0 ? "a" : "b");
        shmring_nodeset_free(set);
    }
}
END_TEST

START_TEST(nginx_up_server_hidden_by_a_down_one_refused)
{
    /* A down server listed first keeps every point it shares with a later up server
     * of the same address, so the up server gets none: nginx would pick it by round
     * robin, which no snapshot reproduces. The build refuses the node set (found by
     * fuzz_snapshot: the builder used to make a snapshot the validator refused). */
    shmring_nodeset_t *set = nginx_set();
    add_server(set, "a", "10.0.0.7:80", 1, SHMRING_STATE_DOWN);
    add_server(set, "b", "10.0.0.7:80", 1, SHMRING_STATE_UP);
    void *buffer = NULL;
    size_t size = 0;
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, &size), SHMRING_EBADADDRESS);
    ck_assert_ptr_null(buffer);
    shmring_nodeset_free(set);

    /* The up server listed first keeps the points and owns every key. */
    set = nginx_set();
    add_server(set, "b", "10.0.0.7:80", 1, SHMRING_STATE_UP);
    add_server(set, "a", "10.0.0.7:80", 1, SHMRING_STATE_DOWN);
    check_sole_owner_of(set, "b");
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(nginx_lookup_wraps)
{
    /* The first point >= the key's CRC-32, wrapping to the first. */
    shmring_nodeset_t *set = nginx_set();
    add_server(set, "a", "10.0.0.1:80", 1, SHMRING_STATE_UP);
    add_server(set, "b", "10.0.0.2:80", 1, SHMRING_STATE_UP);
    shmring_snapshot_t *snapshot = test_snapshot(set);
    test_check_wrap(snapshot);
    shmring_snapshot_free(snapshot);
    shmring_nodeset_free(set);
}
END_TEST

START_TEST(nginx_point_limit_counts_down_servers)
{
    /* Two servers of the largest weight would place 2 x 65535 x 160 points, past
     * SHMRING_POINTS_MAX, even with one of them down: nginx places down servers too. */
    shmring_nodeset_t *set = nginx_set();
    add_server(set, "a", "10.0.0.1:80", SHMRING_WEIGHT_MAX, SHMRING_STATE_UP);
    add_server(set, "b", "10.0.0.2:80", SHMRING_WEIGHT_MAX, SHMRING_STATE_DOWN);
    void *buffer = NULL;
    size_t size = 0;
    ck_assert_int_eq(shmring_snapshot_build(set, &buffer, &size), SHMRING_ELIMIT);
    ck_assert_ptr_null(buffer);
    shmring_nodeset_free(set);
}
END_TEST

static Suite *placement_nginx_suite(void)
{
    Suite *s = suite_create("placement_nginx");
    TEST_CASE(s, "nginx", nginx_point_counts, nginx_point_chain, nginx_server_strings,
              nginx_equal_points_go_to_the_earlier_server,
              nginx_up_server_hidden_by_a_down_one_refused, nginx_lookup_wraps,
              nginx_point_limit_counts_down_servers);
    return s;
}

int main(void)
{
    return test_run_suite(placement_nginx_suite());
}
