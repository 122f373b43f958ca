/*
 * The contenders of the lookup measurements: one loop each over keys
 * [first, first + count) (the key-hash floors, each algorithm's lookups through the
 * reader and on an in-process copy, the peers), the subjects they look keys up in, and
 * the interleaved timing of all of them.
 */
#include <math.h>
#include <nettle/md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The floors are the library's own hashes: xxh3 as it compiles it (inlined, not
 * called, hash_internal.h), CRC-32 from lib/crc32.c, built into ringbench too. */
#include "hash_internal.h"
#include "ringbench.h"

/* Measurements read this many consecutive keys between two clock readings. */
#define CHUNK_KEYS 16384

const char *contender_names[CONTENDERS];
const char *contender_keys[CONTENDERS];

void contender_names_init(void)
{
    static const char *const floor_names[C_ALGORITHM_FIRST] = {
        "xxh3 floor", "md5 floor", "xxh64 floor", "crc32 floor", "fnv1a_64 floor"};
    static const char *const floor_keys[C_ALGORITHM_FIRST] = {
        "xxh3_floor", "md5_floor", "xxh64_floor", "crc32_floor", "fnv1a_64_floor"};
    /* Each kind's row label and JSON key. */
    static const struct {
        const char *name, *key;
    } kinds[KINDS] = {
        [K_READER] = {"reader", "reader"},
        [K_READER_ID] = {"reader id", "reader_id"},
        [K_READER_BATCH] = {"reader batch", "reader_batch"},
        [K_LOCAL] = {"in-process", "in_process"},
        [K_LOCAL_ID] = {"in-proc. id", "in_process_id"},
        [K_LOCAL_BATCH] = {"in-proc. batch", "in_process_batch"},
        [K_SERIAL] = {"serialized", "serialized"},
        [K_SERIAL_ID] = {"serialized id", "serialized_id"},
    };
    static char names[ALGORITHMS * KINDS][ROW_LABEL_WIDTH];
    static char keys[ALGORITHMS * KINDS][40];
    for (int c = 0; c < C_ALGORITHM_FIRST; c++) {
        contender_names[c] = floor_names[c];
        contender_keys[c] = floor_keys[c];
    }
    for (int a = 0; a < ALGORITHMS; a++) {
        const char *algorithm = shmring_algorithm_name(algorithms[a]);
        for (int k = 0; k < KINDS; k++) {
            int i = a * KINDS + k;
            snprintf(names[i], sizeof(names[i]), "%s %s", algorithm, kinds[k].name);
            /* JSON keys in snake case: envoy-maglev is envoy_maglev. */
            int length =
                snprintf(keys[i], sizeof(keys[i]), "%s_%s", algorithm, kinds[k].key);
            for (int j = 0; j < length; j++)
                keys[i][j] = keys[i][j] == '-' ? '_' : keys[i][j];
            contender_names[contender_of(a, (enum lookup_kind)k)] = names[i];
            contender_keys[contender_of(a, (enum lookup_kind)k)] = keys[i];
        }
    }
    contender_names[C_TEXTBOOK] = "textbook ring";
    contender_keys[C_TEXTBOOK] = "textbook_ring";
    contender_names[C_LIBMEMCACHED] = "libmemcached";
    contender_keys[C_LIBMEMCACHED] = "libmemcached_ketama";
    contender_names[C_CHASE_FLOOR] = "one-miss floor";
    contender_keys[C_CHASE_FLOOR] = "one_miss_floor";
}

enum contender_id contender_of(int alg, enum lookup_kind kind)
{
    return (enum contender_id)(C_ALGORITHM_FIRST + alg * KINDS + kind);
}

enum contender_id floor_of(int alg)
{
    switch (alg) {
    case ALG_KETAMA:
    case ALG_LIBKETAMA:
        return C_MD5_FLOOR;
    case ALG_NGINX:
        return C_CRC32_FLOOR;
    case ALG_TWEMPROXY:
        return C_FNV1A_64_FLOOR;
    case ALG_ENVOY_MAGLEV:
    case ALG_ENVOY_RING:
        return C_XXH64_FLOOR;
    default:
        return C_XXH3_FLOOR;
    }
}

/* One key's lookup: the answer to add up, 0 if it failed. */
typedef uint64_t (*key_fn)(const void *subject, const uint8_t *key, size_t len);

/*
 * Looks the keys up one at a time with LOOKUP. Inline, and always called with a
 * constant LOOKUP, so that the call it makes is direct (and the hash floors inline),
 * as a caller's would be.
 */
static inline __attribute__((always_inline)) uint64_t run_keys(key_fn lookup,
                                                               const void *subject,
                                                               const struct keyset *keys,
                                                               size_t first, size_t count)
{
    uint64_t sum = 0;
    for (size_t i = first; i < first + count; i++)
        sum += lookup(subject, key_at(keys, i), keys->length[i]);
    return sum;
}

static uint64_t xxh3_of(const void *subject, const uint8_t *key, size_t len)
{
    (void)subject;
    return XXH3_64bits(key, len);
}

static uint64_t xxh64_of(const void *subject, const uint8_t *key, size_t len)
{
    (void)subject;
    return XXH64(key, len, 0);
}

static uint64_t crc32_of(const void *subject, const uint8_t *key, size_t len)
{
    (void)subject;
    return shmring__crc32(key, len);
}

/* twemproxy's fnv1a_64: FNV-1a over 64 bits, kept to its low 32. */
static uint64_t fnv1a_64_of(const void *subject, const uint8_t *key, size_t len)
{
    (void)subject;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= key[i];
        h *= UINT64_C(0x100000001b3);
    }
    return (uint32_t)h;
}

static uint64_t md5_of(const void *subject, const uint8_t *key, size_t len)
{
    (void)subject;
    struct md5_ctx ctx;
    uint8_t digest[MD5_DIGEST_SIZE];
    md5_init(&ctx);
    md5_update(&ctx, len, key);
    md5_digest(&ctx, MD5_DIGEST_SIZE, digest);
    return (uint32_t)digest[0] | (uint32_t)digest[1] << 8 | (uint32_t)digest[2] << 16 |
           (uint32_t)digest[3] << 24;
}

static inline __attribute__((always_inline)) uint64_t
reader_node(const void *subject, const uint8_t *key, size_t len)
{
    shmring_node_t node;
    return shmring_lookup((shmring_t *)(uintptr_t)subject, key, len, &node) == 0 ? node.id
                                                                                 : 0;
}

static uint64_t reader_id(const void *subject, const uint8_t *key, size_t len)
{
    uint32_t id;
    return shmring_lookup_id((shmring_t *)(uintptr_t)subject, key, len, &id) == 0 ? id
                                                                                  : 0;
}

static inline __attribute__((always_inline)) uint64_t
in_process_node(const void *subject, const uint8_t *key, size_t len)
{
    shmring_node_t node;
    return shmring_snapshot_lookup(subject, key, len, &node) == 0 ? node.id : 0;
}

static uint64_t in_process_id(const void *subject, const uint8_t *key, size_t len)
{
    uint32_t id;
    return shmring_snapshot_lookup_id(subject, key, len, &id) == 0 ? id : 0;
}

/* Fills the arrays a batch call takes for the keys FIRST .. FIRST + COUNT - 1. */
static void batch_prepare(const struct keyset *keys, size_t first, size_t count,
                          const void **pointers, size_t *lengths)
{
    for (size_t i = 0; i < count; i++) {
        pointers[i] = key_at(keys, first + i);
        lengths[i] = keys->length[first + i];
    }
}

/* A batch lookup through the reader or on an in-process copy. */
typedef int (*ids_fn)(const void *subject, const void *const *keys, const size_t *lens,
                      size_t count, uint32_t *ids);

static int in_process_ids(const void *subject, const void *const *keys,
                          const size_t *lens, size_t count, uint32_t *ids)
{
    return shmring_snapshot_lookup_ids(subject, keys, lens, count, ids);
}

static int reader_ids(const void *subject, const void *const *keys, const size_t *lens,
                      size_t count, uint32_t *ids)
{
    return shmring_lookup_ids((shmring_t *)(uintptr_t)subject, keys, lens, count, ids);
}

/*
 * Looks the keys up BATCH_KEYS at a time with LOOKUP. Inline, and always called with
 * a constant LOOKUP, so that the call it makes is direct, as a caller's would be.
 */
static inline __attribute__((always_inline)) uint64_t
run_batches(ids_fn lookup, const void *subject, const struct keyset *keys, size_t first,
            size_t count)
{
    const void *pointers[BATCH_KEYS];
    size_t lengths[BATCH_KEYS];
    uint32_t ids[BATCH_KEYS];
    uint64_t sum = 0;
    for (size_t at = first; at < first + count; at += BATCH_KEYS) {
        size_t batch = first + count - at < BATCH_KEYS ? first + count - at : BATCH_KEYS;
        batch_prepare(keys, at, batch, pointers, lengths);
        if (lookup(subject, pointers, lengths, batch, ids) == 0) {
            for (size_t i = 0; i < batch; i++)
                sum += ids[i];
        }
    }
    return sum;
}

/*
 * Defines NAME, a contender's loop over keys [first, first + count) that calls LOOKUP
 * once per key (LOOP is run_keys) or once per batch (run_batches).
 */
#define CONTENDER_LOOP(name, loop, lookup)                                               \
    uint64_t name(const void *context, const struct keyset *keys, size_t first,          \
                  size_t count)                                                          \
    {                                                                                    \
        return loop(lookup, context, keys, first, count);                                \
    }

/* clang-format off */
static CONTENDER_LOOP(run_xxh3_floor, run_keys, xxh3_of)
static CONTENDER_LOOP(run_md5_floor, run_keys, md5_of)
static CONTENDER_LOOP(run_xxh64_floor, run_keys, xxh64_of)
static CONTENDER_LOOP(run_crc32_floor, run_keys, crc32_of)
static CONTENDER_LOOP(run_fnv1a_64_floor, run_keys, fnv1a_64_of)
static CONTENDER_LOOP(run_reader, run_keys, reader_node)
CONTENDER_LOOP(run_reader_id, run_keys, reader_id)
static CONTENDER_LOOP(run_reader_batch, run_batches, reader_ids)
static CONTENDER_LOOP(run_in_process, run_keys, in_process_node)
static CONTENDER_LOOP(run_in_process_id, run_keys, in_process_id)
static CONTENDER_LOOP(run_in_process_batch, run_batches, in_process_ids)
    /* clang-format on */

    void lookup_subjects_close(struct lookup_subjects *s)
{
    for (int a = 0; a < ALGORITHMS; a++) {
        shmring_close(s->readers[a]);
        shmring_close(s->serialized[a]);
        shmring_snapshot_free(s->copies[a]);
    }
    textbook_free(&s->textbook);
    chase_free(&s->chase);
    libmemcached_close(s->libmemcached);
    memset(s, 0, sizeof(*s));
}

int lookup_subjects_open(size_t nodes, bool peers, struct lookup_subjects *s)
{
    memset(s, 0, sizeof(*s));
    for (int a = 0; a < ALGORITHMS; a++) {
        const char *ring = scratch_ring((enum ring_kind)(RING_LOOKUP_RING + a));
        if (ring_publish_new(ring, algorithms[a], nodes) != 0)
            goto fail;
        shmring_open_options_t serialized = {.flags = SHMRING_OPEN_SERIALIZED};
        int err = shmring_open(ring, &s->readers[a]);
        if (err == 0)
            err = shmring_open_with(ring, &serialized, &s->serialized[a]);
        if (err != 0) {
            fail("cannot open ring '%s': %s", ring, shmring_strerror(err));
            goto fail;
        }
        uint64_t generation;
        err = shmring_ring_snapshot(ring, NULL, &generation, &s->copies[a]);
        if (err == 0 && s->copies[a] == NULL)
            err = SHMRING_EEMPTY;
        if (err != 0) {
            fail("cannot copy ring '%s': %s", ring, shmring_strerror(err));
            goto fail;
        }
    }
    if (peers && textbook_build(nodes, &s->textbook) != 0)
        goto fail;
    shmring_snapshot_info_t ring_info;
    shmring_snapshot_info(s->copies[ALG_RING], &ring_info);
    if (peers && chase_build(ring_info.size, &s->chase) != 0)
        goto fail;
    if (peers && nodes <= LIBMEMCACHED_SERVERS_MAX &&
        libmemcached_open(nodes, &s->libmemcached) != 0)
        goto fail;
    return 0;
fail:
    lookup_subjects_close(s);
    return -1;
}

enum { LINE_WORDS = 64 / sizeof(uint32_t) };

int chase_build(size_t bytes, struct chase *c)
{
    memset(c, 0, sizeof(*c));
    size_t count = bytes / 64 > 2 ? bytes / 64 : 2;
    if (posix_memalign((void **)&c->lines, 64, count * 64) != 0) {
        c->lines = NULL;
        fail("cannot allocate the pointer chase's %zu bytes", count * 64);
        return -1;
    }
    /* Sattolo's shuffle of the identity: one cycle through every line. */
    uint32_t *order = malloc(count * sizeof(*order));
    if (order == NULL) {
        chase_free(c);
        fail("out of memory");
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        order[i] = (uint32_t)i;
    uint64_t state = SEED;
    for (size_t i = count - 1; i > 0; i--) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        size_t j = (size_t)((state >> 33) % i);
        uint32_t swap = order[i];
        order[i] = order[j];
        order[j] = swap;
    }
    for (size_t i = 0; i < count; i++)
        c->lines[(size_t)order[i] * LINE_WORDS] = order[(i + 1) % count];
    free(order);
    c->line_count = count;
    return 0;
}

void chase_free(struct chase *c)
{
    free(c->lines);
    memset(c, 0, sizeof(*c));
}

/* COUNT steps of the chase, each a read that depends on the one before. */
static uint64_t run_chase(const void *context, const struct keyset *keys, size_t first,
                          size_t count)
{
    (void)keys;
    (void)first;
    struct chase *c = (struct chase *)(uintptr_t)context;
    uint32_t at = c->at;
    for (size_t i = 0; i < count; i++)
        at = c->lines[(size_t)at * LINE_WORDS];
    c->at = at;
    return at;
}

void lookup_contenders(const struct lookup_subjects *s,
                       struct contender contenders[CONTENDERS])
{
    memset(contenders, 0, CONTENDERS * sizeof(*contenders));
    contenders[C_XXH3_FLOOR].run = run_xxh3_floor;
    contenders[C_MD5_FLOOR].run = run_md5_floor;
    contenders[C_XXH64_FLOOR].run = run_xxh64_floor;
    contenders[C_CRC32_FLOOR].run = run_crc32_floor;
    contenders[C_FNV1A_64_FLOOR].run = run_fnv1a_64_floor;
    static const batch_fn runs[KINDS] = {
        [K_READER] = run_reader,
        [K_READER_ID] = run_reader_id,
        [K_READER_BATCH] = run_reader_batch,
        [K_LOCAL] = run_in_process,
        [K_LOCAL_ID] = run_in_process_id,
        [K_LOCAL_BATCH] = run_in_process_batch,
        [K_SERIAL] = run_reader,
        [K_SERIAL_ID] = run_reader_id,
    };
    for (int a = 0; a < ALGORITHMS; a++) {
        for (int k = 0; k < KINDS; k++) {
            const void *subject = k < K_LOCAL    ? (const void *)s->readers[a]
                                  : k < K_SERIAL ? (const void *)s->copies[a]
                                                 : (const void *)s->serialized[a];
            contenders[contender_of(a, (enum lookup_kind)k)] =
                (struct contender){runs[k], subject};
        }
    }
    if (s->textbook.count > 0)
        contenders[C_TEXTBOOK] = (struct contender){run_textbook, &s->textbook};
    if (s->chase.line_count > 0)
        contenders[C_CHASE_FLOOR] = (struct contender){run_chase, &s->chase};
    if (s->libmemcached != NULL)
        contenders[C_LIBMEMCACHED] =
            (struct contender){run_libmemcached, s->libmemcached};
}

/*
 * Runs C over KEYS for at least SECONDS and returns ns per lookup. Keys are taken in
 * chunks from *CURSOR on, wrapping at the end of the set; the clock is read once per
 * chunk.
 */
static double measure(const struct contender *c, const struct keyset *keys,
                      size_t *cursor, double seconds)
{
    size_t chunk = keys->count < CHUNK_KEYS ? keys->count : CHUNK_KEYS;
    uint64_t lookups = 0, sum = 0;
    double start = now_seconds(), elapsed;
    do {
        if (*cursor + chunk > keys->count)
            *cursor = 0;
        sum += c->run(c->context, keys, *cursor, chunk);
        *cursor += chunk;
        lookups += chunk;
        elapsed = now_seconds() - start;
    } while (elapsed < seconds);
    sink += sum;
    return elapsed * 1e9 / (double)lookups;
}

void contest(const struct config *cfg, const struct contender *contenders,
             const struct keyset *keys, size_t *cursor, double ns[CONTENDERS])
{
    double samples[CONTENDERS][REPS_MAX];
    for (int i = 0; i < CONTENDERS; i++) {
        if (contenders[i].run != NULL)
            (void)measure(&contenders[i], keys, cursor, cfg->warmup_seconds);
    }
    for (int rep = 0; rep < cfg->reps; rep++) {
        for (int i = 0; i < CONTENDERS; i++) {
            if (contenders[i].run != NULL)
                samples[i][rep] = measure(&contenders[i], keys, cursor, cfg->run_seconds);
        }
    }
    for (int i = 0; i < CONTENDERS; i++)
        ns[i] = contenders[i].run != NULL ? median(samples[i], cfg->reps) : NAN;
}

void print_cost_row(const char *name, const double *ns, size_t stride, size_t count)
{
    printf("%-*s", ROW_LABEL_WIDTH, name);
    for (size_t n = 0; n < count; n++) {
        if (isnan(ns[n * stride]))
            printf("%10s", "-");
        else
            printf("%10.1f", ns[n * stride]);
    }
    printf("\n");
}
