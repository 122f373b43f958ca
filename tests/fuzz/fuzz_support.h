/*
 * Checks shared by the fuzz targets. A broken invariant aborts with a message, which
 * libFuzzer reports as a crash and saves the input that caused it.
 */
#ifndef SHMRING_FUZZ_SUPPORT_H
#define SHMRING_FUZZ_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shmring.h"
#include "shmring_ctl.h"

/* Builds that would place more points or table slots than this are skipped, so that
 * one input never takes long. */
#define FUZZ_BUILD_COST_MAX 200000u

/* Prints the message and aborts. */
__attribute__((noreturn, format(printf, 3, 4))) void fuzz_fail(const char *file, int line,
                                                               const char *format, ...);

#define FUZZ_REQUIRE(cond, ...)                                                          \
    do {                                                                                 \
        if (!(cond))                                                                     \
            fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);                                  \
    } while (0)

/*
 * What building SET's snapshot costs, in ring points or maglev table slots (an upper
 * bound that needs no placement).
 */
uint64_t fuzz_build_cost(const shmring_nodeset_t *set);

/*
 * Runs every read-only call on SNAPSHOT (accepted by shmring_snapshot_new()) and
 * checks the answers against its bytes: info against the header, shares against the
 * points or table, lookups against a plain binary search of the points, the share
 * that moves to itself (none) and from nothing (all, if a node is up). Lookup keys
 * are cut from KEYS.
 */
void fuzz_check_snapshot(const shmring_snapshot_t *snapshot, const uint8_t *keys,
                         size_t keys_len);

/*
 * Recreates the node set of an accepted snapshot, writes it as JSON and reads it
 * back, and builds and validates its snapshot again unless that would cost more than
 * COST_MAX (see fuzz_build_cost()). When EXACT (SNAPSHOT's bytes came from
 * shmring_snapshot_build() untouched), every step must succeed and the rebuilt
 * snapshot must equal SNAPSHOT byte for byte.
 */
void fuzz_check_rebuild(const shmring_snapshot_t *snapshot, bool exact,
                        uint64_t cost_max);

/* Makes a snapshot of BUFFER with shmring_snapshot_new(), which must accept it when
 * EXACT (fresh from the builder) and otherwise return 0 or a listed code; returns
 * NULL when it refused. */
shmring_snapshot_t *fuzz_snapshot_new(const void *buffer, size_t size, bool exact);

/*
 * Writes SET as JSON, reads that back with default parameters and writes it again:
 * the two texts must be byte-identical and the node sets equal.
 */
void fuzz_check_json_round_trip(const shmring_nodeset_t *set);

/* Requires TEXT, a failure's message in a buffer of SIZE bytes, to be one non-empty
 * line: terminated within the buffer, and without control characters. */
void fuzz_check_error_text(const char *text, size_t size);

#endif /* SHMRING_FUZZ_SUPPORT_H */
