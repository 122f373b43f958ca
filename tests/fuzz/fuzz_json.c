/*
 * Fuzzes the JSON node-set reader. Every input is read twice, with the default
 * parameters and with a base that differs from them in every field. What reads must
 * write back to JSON that reads back to byte-identical JSON, and, when it is small
 * enough to build quickly, must build a snapshot that validates and answers lookups
 * (fuzz_support.c). What does not read must fail with SHMRING_EJSON and a one-line
 * message.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bases that differ from the defaults, one of them picked by the input's length. */
static const shmring_params_t bases[] = {
    {SHMRING_ALGORITHM_MAGLEV, SHMRING_HASH_MURMUR3, 40, 101},
    {SHMRING_ALGORITHM_KETAMA, SHMRING_HASH_MD5, 7, 0},
    {SHMRING_ALGORITHM_RING, SHMRING_HASH_FNV1A, 3, 13},
};

static void check_error(int err, const shmring_json_error_t *error)
{
    FUZZ_REQUIRE(err == SHMRING_EJSON || err == SHMRING_ENOMEM,
                 "from_json returned %d (%s)", err, shmring_strerror(err));
    fuzz_check_error_text(error->text, sizeof(error->text));
    FUZZ_REQUIRE((error->line == 0 && error->column == 0) ||
                     (error->line >= 1 && error->column >= 1),
                 "error place %d:%d", error->line, error->column);
}

/* Builds SET's snapshot, which must validate, and looks keys up in it. */
static void check_build(const shmring_nodeset_t *set, const uint8_t *keys,
                        size_t keys_len)
{
    if (fuzz_build_cost(set) > FUZZ_BUILD_COST_MAX)
        return;
    void *buffer = NULL;
    size_t size = 0;
    int err = shmring_snapshot_build(set, &buffer, &size);
    if (err == SHMRING_ELIMIT) {
        /* Only a maglev table smaller than the number of up nodes is refused. */
        shmring_params_t params;
        shmring_nodeset_params(set, &params);
        size_t up = 0;
        for (size_t i = 0; i < shmring_nodeset_count(set); i++) {
            shmring_node_info_t node;
            up +=
                shmring_nodeset_get(set, i, &node) == 0 && node.state == SHMRING_STATE_UP;
        }
        FUZZ_REQUIRE(params.algorithm == SHMRING_ALGORITHM_MAGLEV &&
                         params.table_size != 0 && params.table_size < up,
                     "build refused a small node set with SHMRING_ELIMIT");
        return;
    }
    FUZZ_REQUIRE(err == 0, "build returned %d (%s)", err, shmring_strerror(err));
    shmring_snapshot_t *snapshot = fuzz_snapshot_new(buffer, size, true);
    free(buffer);
    fuzz_check_snapshot(snapshot, keys, keys_len);
    fuzz_check_rebuild(snapshot, true, FUZZ_BUILD_COST_MAX);
    shmring_snapshot_free(snapshot);
}

static void check_read(const uint8_t *data, size_t size, const shmring_params_t *base)
{
    shmring_nodeset_t *set = NULL;
    shmring_json_error_t error;
    int err = shmring_nodeset_from_json((const char *)data, size, base, &set, &error);
    if (err != 0) {
        check_error(err, &error);
        return;
    }
    fuzz_check_json_round_trip(set);
    check_build(set, data, size);
    shmring_nodeset_free(set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_read(data, size, NULL);
    check_read(data, size, &bases[size % (sizeof(bases) / sizeof(bases[0]))]);
    return 0;
}
