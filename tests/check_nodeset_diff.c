/*
 * Tests of lib/nodeset_diff.c: every kind of difference between two node sets, with
 * exactly the fields that differ, in the documented order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_expect.h"
#include "test_support.h"

static shmring_nodeset_diff_t *diff_of(const shmring_nodeset_t *before,
                                       const shmring_nodeset_t *after)
{
    shmring_nodeset_diff_t *diff = NULL;
    ck_assert_int_eq(shmring_nodeset_diff(before, after, &diff), 0);
    ck_assert_ptr_nonnull(diff);
    return diff;
}

/* Checks the difference at INDEX: its kind, fields and node names (NULL: none). */
static void check_difference(const shmring_nodeset_diff_t *diff, size_t index,
                             shmring_difference_kind_t kind, unsigned fields,
                             const char *before_name, const char *after_name)
{
    shmring_difference_t d;
    ck_assert_int_eq(shmring_nodeset_diff_get(diff, index, &d), 0);
    ck_assert_int_eq(d.kind, kind);
    ck_assert_uint_eq(d.fields, fields);
    if (before_name == NULL)
        ck_assert_ptr_null(d.before.name);
    else
        ck_assert_str_eq(d.before.name, before_name);
    if (after_name == NULL)
        ck_assert_ptr_null(d.after.name);
    else
        ck_assert_str_eq(d.after.name, after_name);
}

START_TEST(test_same_sets_have_no_difference)
{
    const char *text = "{\"nodes\": [{\"name\": \"a\", \"id\": 3}, {\"name\": \"b\"}]}";
    shmring_nodeset_t *before = test_parse_json(text, NULL),
                      *after = test_parse_json(text, NULL);
    shmring_nodeset_diff_t *diff = diff_of(before, after);
    ck_assert_uint_eq(shmring_nodeset_diff_count(diff), 0);
    shmring_difference_counts_t counts;
    memset(&counts, 0x55, sizeof(counts));
    shmring_nodeset_diff_counts(diff, &counts);
    ck_assert_uint_eq(counts.added, 0);
    ck_assert_uint_eq(counts.removed, 0);
    ck_assert_uint_eq(counts.changed, 0);
    ck_assert(!counts.params_changed);
    ck_assert(!counts.order_changed);
    ck_assert_uint_eq(counts.reserved[0], 0);
    shmring_difference_t d;
    ck_assert_int_eq(shmring_nodeset_diff_get(diff, 0, &d), SHMRING_EINVAL);
    shmring_nodeset_diff_free(diff);
    shmring_nodeset_diff_free(NULL);
    shmring_nodeset_free(before);
    shmring_nodeset_free(after);
}
END_TEST

START_TEST(test_every_kind_in_order)
{
    shmring_nodeset_t *before =
        test_parse_json("{\"algorithm\": \"ring\", \"vnodes\": 100, \"nodes\": ["
                        "{\"name\": \"gone\", \"id\": 0},"
                        "{\"name\": \"same\", \"id\": 1, \"address\": \"x\"},"
                        "{\"name\": \"moved\", \"id\": 2, \"address\": \"10.0.0.1\"},"
                        "{\"name\": \"heavier\", \"id\": 3},"
                        "{\"name\": \"renumbered\", \"id\": 4},"
                        "{\"name\": \"also-gone\", \"id\": 5}]}",
                        NULL);
    shmring_nodeset_t *after = test_parse_json(
        "{\"algorithm\": \"maglev\", \"hash\": \"murmur3\", \"vnodes\": 100, "
        "\"nodes\": ["
        "{\"name\": \"new\", \"id\": 9},"
        "{\"name\": \"same\", \"id\": 1, \"address\": \"x\"},"
        "{\"name\": \"moved\", \"id\": 2, \"address\": \"10.0.0.2\", "
        "\"state\": \"down\"},"
        "{\"name\": \"heavier\", \"id\": 3, \"weight\": 5},"
        "{\"name\": \"renumbered\", \"id\": 7}]}",
        NULL);
    shmring_nodeset_diff_t *diff = diff_of(before, after);
    ck_assert_uint_eq(shmring_nodeset_diff_count(diff), 7);
    check_difference(diff, 0, SHMRING_DIFFERENCE_PARAMS,
                     SHMRING_DIFF_ALGORITHM | SHMRING_DIFF_HASH, NULL, NULL);
    check_difference(diff, 1, SHMRING_DIFFERENCE_ADDED, 0, NULL, "new");
    check_difference(diff, 2, SHMRING_DIFFERENCE_CHANGED,
                     SHMRING_DIFF_ADDRESS | SHMRING_DIFF_STATE, "moved", "moved");
    check_difference(diff, 3, SHMRING_DIFFERENCE_CHANGED, SHMRING_DIFF_WEIGHT, "heavier",
                     "heavier");
    check_difference(diff, 4, SHMRING_DIFFERENCE_CHANGED, SHMRING_DIFF_ID, "renumbered",
                     "renumbered");
    check_difference(diff, 5, SHMRING_DIFFERENCE_REMOVED, 0, "gone", NULL);
    check_difference(diff, 6, SHMRING_DIFFERENCE_REMOVED, 0, "also-gone", NULL);
    shmring_difference_t d;
    ck_assert_int_eq(shmring_nodeset_diff_get(diff, 2, &d), 0);
    ck_assert_str_eq(d.before.address, "10.0.0.1");
    ck_assert_str_eq(d.after.address, "10.0.0.2");
    ck_assert_int_eq(d.after.state, SHMRING_STATE_DOWN);
    ck_assert_int_eq(shmring_nodeset_diff_get(diff, 4, &d), 0);
    ck_assert_uint_eq(d.before.id, 4);
    ck_assert_uint_eq(d.after.id, 7);

    shmring_difference_counts_t counts;
    shmring_nodeset_diff_counts(diff, &counts);
    ck_assert_uint_eq(counts.added, 1);
    ck_assert_uint_eq(counts.removed, 2);
    ck_assert_uint_eq(counts.changed, 3);
    ck_assert(counts.params_changed);
    ck_assert(!counts.order_changed);
    shmring_nodeset_diff_free(diff);
    shmring_nodeset_free(before);
    shmring_nodeset_free(after);
}
END_TEST

/* Table size and vnodes are compared as the node sets hold them. */
START_TEST(test_params_fields)
{
    shmring_nodeset_t *before =
        test_parse_json("{\"algorithm\": \"maglev\", \"nodes\": []}", NULL);
    shmring_nodeset_t *after =
        test_parse_json("{\"algorithm\": \"maglev\", \"vnodes\": 7, "
                        "\"table_size\": 65537, \"nodes\": []}",
                        NULL);
    shmring_nodeset_diff_t *diff = diff_of(before, after);
    ck_assert_uint_eq(shmring_nodeset_diff_count(diff), 1);
    check_difference(diff, 0, SHMRING_DIFFERENCE_PARAMS,
                     SHMRING_DIFF_VNODES | SHMRING_DIFF_TABLE_SIZE, NULL, NULL);
    shmring_nodeset_diff_free(diff);
    shmring_nodeset_free(before);
    shmring_nodeset_free(after);
}
END_TEST

/* A node set of ALGORITHM holding a (weight 2), b and c (down) in the order NODES
 * gives ("abc", "bac", "acb"...). */
static shmring_nodeset_t *ordered_set(const char *algorithm, const char *nodes)
{
    char text[1024];
    size_t used = (size_t)snprintf(text, sizeof(text),
                                   "{\"algorithm\": \"%s\", \"nodes\": [", algorithm);
    for (const char *n = nodes; *n != '\0'; n++) {
        static const char *const node_json[] = {
            "{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", \"weight\": "
            "2}",
            "{\"name\": \"b\", \"id\": 1, \"address\": \"10.0.0.2:11211\"}",
            "{\"name\": \"c\", \"id\": 2, \"address\": \"10.0.0.3:11211\", \"state\": "
            "\"down\"}"};
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s",
                                 n == nodes ? "" : ", ", node_json[*n - 'a']);
    }
    snprintf(text + used, sizeof(text) - used, "]}");
    return test_parse_json(text, NULL);
}

/*
 * Node order is a difference exactly where the algorithm's answers may depend on it
 * (lib/placement.c, shmring__placement_order()): never for ring, maglev,
 * envoy-maglev and twemproxy; the up nodes' order for ketama, libketama and
 * envoy-ring (a down node moving is no difference); every node's order for nginx,
 * which places down nodes too.
 */
START_TEST(test_order_where_it_matters)
{
    static const struct {
        const char *algorithm;
        size_t up_swapped; /* differences of abc -> bac: the up nodes swapped */
        size_t down_moved; /* differences of abc -> acb: the down node moved */
    } cases[] = {{"ring", 0, 0},       {"maglev", 0, 0}, {"envoy-maglev", 0, 0},
                 {"twemproxy", 0, 0},  {"ketama", 1, 0}, {"libketama", 1, 0},
                 {"envoy-ring", 1, 0}, {"nginx", 1, 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        shmring_nodeset_t *abc = ordered_set(cases[i].algorithm, "abc");
        shmring_nodeset_t *bac = ordered_set(cases[i].algorithm, "bac");
        shmring_nodeset_t *acb = ordered_set(cases[i].algorithm, "acb");
        shmring_nodeset_diff_t *diff = diff_of(abc, bac);
        ck_assert_msg(shmring_nodeset_diff_count(diff) == cases[i].up_swapped,
                      "%s: up nodes swapped: %zu differences", cases[i].algorithm,
                      shmring_nodeset_diff_count(diff));
        shmring_difference_counts_t counts;
        shmring_nodeset_diff_counts(diff, &counts);
        ck_assert_int_eq(counts.order_changed, cases[i].up_swapped == 1);
        if (cases[i].up_swapped == 1)
            check_difference(diff, 0, SHMRING_DIFFERENCE_ORDER, 0, NULL, NULL);
        shmring_nodeset_diff_free(diff);

        diff = diff_of(abc, acb);
        ck_assert_msg(shmring_nodeset_diff_count(diff) == cases[i].down_moved,
                      "%s: down node moved: %zu differences", cases[i].algorithm,
                      shmring_nodeset_diff_count(diff));
        if (cases[i].down_moved == 1)
            check_difference(diff, 0, SHMRING_DIFFERENCE_ORDER, 0, NULL, NULL);
        shmring_nodeset_diff_free(diff);
        shmring_nodeset_free(abc);
        shmring_nodeset_free(bac);
        shmring_nodeset_free(acb);
    }
}
END_TEST

/* Order is the relative order of the nodes both sets hold: nodes added or removed
 * around others in order are not an order difference; when the algorithm changes,
 * order counts if it does under either set's parameters. */
START_TEST(test_order)
{
    shmring_nodeset_t *abc = ordered_set("ketama", "abc");
    shmring_nodeset_t *xac = test_parse_json(
        "{\"algorithm\": \"ketama\", \"nodes\": [{\"name\": \"x\", \"id\": 5}, "
        "{\"name\": \"a\", \"id\": 0, \"address\": \"10.0.0.1:11211\", "
        "\"weight\": 2}, {\"name\": \"c\", \"id\": 2, \"address\": "
        "\"10.0.0.3:11211\", \"state\": \"down\"}]}",
        NULL);
    shmring_nodeset_diff_t *diff = diff_of(abc, xac);
    ck_assert_uint_eq(shmring_nodeset_diff_count(diff), 2);
    check_difference(diff, 0, SHMRING_DIFFERENCE_ADDED, 0, NULL, "x");
    check_difference(diff, 1, SHMRING_DIFFERENCE_REMOVED, 0, "b", NULL);
    shmring_nodeset_diff_free(diff);

    shmring_nodeset_t *ring_abc = ordered_set("ring", "abc");
    shmring_nodeset_t *bac = ordered_set("ketama", "bac");
    for (int way = 0; way < 2; way++) {
        diff = way == 0 ? diff_of(ring_abc, bac) : diff_of(bac, ring_abc);
        ck_assert_uint_eq(shmring_nodeset_diff_count(diff), 2);
        check_difference(diff, 0, SHMRING_DIFFERENCE_PARAMS,
                         SHMRING_DIFF_ALGORITHM | SHMRING_DIFF_HASH, NULL, NULL);
        check_difference(diff, 1, SHMRING_DIFFERENCE_ORDER, 0, NULL, NULL);
        shmring_nodeset_diff_free(diff);
    }
    shmring_nodeset_free(abc);
    shmring_nodeset_free(xac);
    shmring_nodeset_free(ring_abc);
    shmring_nodeset_free(bac);
}
END_TEST

static Suite *diff_suite(void)
{
    Suite *suite = suite_create("nodeset_diff");
    TEST_CASE(suite, "core", test_same_sets_have_no_difference, test_every_kind_in_order,
              test_params_fields, test_order, test_order_where_it_matters);
    return suite;
}

int main(void)
{
    return test_run_suite(diff_suite());
}
