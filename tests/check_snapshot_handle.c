/*
 * Tests of lib/snapshot_handle.c: a validated snapshot is made once from bytes (a
 * private copy, validated) or from a node set, lent by a writer, or copied from a ring,
 * and is what the reading calls take. What the validator refuses is check_snapshot's;
 * what the lookups answer is check_placement's.
 */
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static shmring_nodeset_t *small_set(void)
{
    return test_nodeset(5, SHMRING_ALGORITHM_RING, SHMRING_HASH_XXH3);
}

/* The snapshot holds its own copy: the bytes it came from may change or go. */
START_TEST(new_keeps_a_private_copy)
{
    shmring_nodeset_t *set = small_set();
    size_t size;
    unsigned char *bytes = test_build(set, &size);
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_snapshot_new(bytes, size, &snapshot), 0);
    size_t data_size = 0;
    const unsigned char *data = shmring_snapshot_data(snapshot, &data_size);
    ck_assert_ptr_ne(data, bytes);
    ck_assert_uint_eq(data_size, size);
    ck_assert_mem_eq(data, bytes, size);
    ck_assert_ptr_eq(shmring_snapshot_data(snapshot, NULL), data);

    shmring_node_t before;
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "key", 3, &before), 0);
    memset(bytes, 0xa5, size);
    free(bytes);
    shmring_node_t after;
    ck_assert_int_eq(shmring_snapshot_lookup(snapshot, "key", 3, &after), 0);
    ck_assert_uint_eq(after.id, before.id);
    ck_assert_str_eq(after.name, before.name);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(snapshot, &info);
    ck_assert_uint_eq(info.node_count, 5);
    ck_assert_uint_eq(info.size, size);
    shmring_snapshot_free(snapshot);
    shmring_snapshot_free(NULL);
    shmring_nodeset_free(set);
}
END_TEST

/* Bytes at any address: the copy is aligned for the lookups. */
START_TEST(new_accepts_unaligned_bytes)
{
    shmring_nodeset_t *set = small_set();
    size_t size;
    void *bytes = test_build(set, &size);
    unsigned char *shifted = malloc(size + 3);
    ck_assert_ptr_nonnull(shifted);
    memcpy(shifted + 3, bytes, size);
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_snapshot_new(shifted + 3, size, &snapshot), 0);
    ck_assert_mem_eq(shmring_snapshot_data(snapshot, NULL), bytes, size);
    shmring_snapshot_free(snapshot);
    free(shifted);
    free(bytes);
    shmring_nodeset_free(set);
}
END_TEST

/* Refused bytes give the validator's code and no snapshot (*out untouched). */
START_TEST(new_refusals)
{
    shmring_nodeset_t *set = small_set();
    size_t size;
    unsigned char *bytes = test_build(set, &size);
    shmring_snapshot_t *untouched = (shmring_snapshot_t *)&size;
    shmring_snapshot_t *out = untouched;
    ck_assert_int_eq(shmring_snapshot_new(NULL, size, &out), SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring_snapshot_new(bytes, 255, &out), SHMRING_ETRUNCATED);
    ck_assert_int_eq(shmring_snapshot_new(bytes, size - 1, &out), SHMRING_ETRUNCATED);
    bytes[size - 1] ^= 1;
    ck_assert_int_eq(shmring_snapshot_new(bytes, size, &out), SHMRING_ECHECKSUM);
    bytes[size - 1] ^= 1;
    bytes[0] ^= 1;
    ck_assert_int_eq(shmring_snapshot_new(bytes, size, &out), SHMRING_EBADMAGIC);
    ck_assert_ptr_eq(out, untouched);
    free(bytes);
    shmring_nodeset_free(set);
}
END_TEST

/* Built straight into a snapshot: the builder's bytes, or its error and no snapshot. */
START_TEST(nodeset_snapshot_is_the_build)
{
    shmring_nodeset_t *set = small_set();
    size_t size;
    void *bytes = test_build(set, &size);
    shmring_snapshot_t *snapshot = NULL;
    ck_assert_int_eq(shmring_nodeset_snapshot(set, &snapshot), 0);
    size_t snapshot_size;
    const void *data = shmring_snapshot_data(snapshot, &snapshot_size);
    ck_assert_uint_eq(snapshot_size, size);
    ck_assert_mem_eq(data, bytes, size);
    shmring_snapshot_free(snapshot);
    free(bytes);

    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    params.vnodes = SHMRING_VNODES_MAX;
    ck_assert_int_eq(shmring_nodeset_set_params(set, &params), 0);
    ck_assert_int_eq(shmring_nodeset_set_weight(set, "node-0", SHMRING_WEIGHT_MAX), 0);
    shmring_snapshot_t *untouched = (shmring_snapshot_t *)&size;
    snapshot = untouched;
    ck_assert_int_eq(shmring_nodeset_snapshot(set, &snapshot), SHMRING_ELIMIT);
    ck_assert_ptr_eq(snapshot, untouched);
    shmring_nodeset_free(set);
}
END_TEST

/*
 * A writer lends its current version: the same snapshot until it publishes again,
 * byte for byte what a reader's copy holds; after a publication, the new one.
 */
START_TEST(writer_lends_its_current_version)
{
    const char *ring = test_ring_name("handle");
    shmring_writer_t *w;
    ck_assert_int_eq(shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &w), 0);
    const shmring_snapshot_t *lent = NULL;
    ck_assert_int_eq(shmring_writer_snapshot(w, &lent), SHMRING_ENOENT);
    ck_assert_ptr_null(lent);
    shmring_nodeset_t *set = small_set();
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    ck_assert_int_eq(shmring_writer_snapshot(w, &lent), 0);
    const shmring_snapshot_t *again = NULL;
    ck_assert_int_eq(shmring_writer_snapshot(w, &again), 0);
    ck_assert_ptr_eq(again, lent);

    uint64_t generation;
    shmring_snapshot_t *copy;
    ck_assert_int_eq(shmring_ring_snapshot(ring, NULL, &generation, &copy), 0);
    ck_assert_uint_eq(generation, 1);
    size_t lent_size, copy_size;
    const void *lent_bytes = shmring_snapshot_data(lent, &lent_size);
    const void *copy_bytes = shmring_snapshot_data(copy, &copy_size);
    ck_assert_uint_eq(lent_size, copy_size);
    ck_assert_mem_eq(lent_bytes, copy_bytes, copy_size);
    shmring_snapshot_free(copy);

    ck_assert_int_eq(shmring_nodeset_remove(set, "node-0"), 0);
    ck_assert_int_eq(shmring_writer_publish(w, set, NULL), 0);
    ck_assert_int_eq(shmring_writer_snapshot(w, &lent), 0);
    shmring_snapshot_info_t info;
    shmring_snapshot_info(lent, &info);
    ck_assert_uint_eq(info.node_count, 4);
    shmring_writer_close(w);
    shmring_nodeset_free(set);
    ck_assert_int_eq(shmring_ring_destroy(ring, NULL), 0);
}
END_TEST

static Suite *snapshot_handle_suite(void)
{
    Suite *s = suite_create("snapshot_handle");
    TEST_CASE(s, "new", new_keeps_a_private_copy, new_accepts_unaligned_bytes,
              new_refusals, nodeset_snapshot_is_the_build);
    TEST_CASE(s, "lent", writer_lends_its_current_version);
    return s;
}

int main(void)
{
    return test_run_suite(snapshot_handle_suite());
}
