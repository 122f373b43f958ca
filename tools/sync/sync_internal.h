/* Declarations shared by the modules of lib/sync/; never installed. */
#ifndef SHMRING_SYNC_INTERNAL_H
#define SHMRING_SYNC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sync.h"

/* Room for one log line; longer ones are cut. */
#define SYNC_LINE_MAX 1024

/* What sync's metrics file reports (metrics.c). */
struct sync_metrics {
    int64_t applied_revision;
    int64_t applied_at;
    uint64_t publications;
    uint64_t refusals;
    uint64_t errors;
};

/* One run of sync. */
struct sync_context {
    const shmring_sync_config_t *config;
    /* Whether systemd was told READY=1. */
    bool ready;
    /* Whether the ring holds the last node set read from the source. */
    bool in_step;
    /* Whether the state file already holds what the ring holds. */
    bool state_current;
    /* A state of the jitter's pseudo-random sequence. */
    uint64_t random;
    /* The etcd revision of the document being applied (0: not from etcd). */
    int64_t revision;
    struct sync_metrics metrics;
    /* Whether the last write of the metrics file failed (said once). */
    bool metrics_failed;
};

/* ---- sync.c ---- */

/* Logs one line: "ring 'RING': MESSAGE" on the config's log. */
void sync__log(struct sync_context *ctx, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
bool sync__stopping(const struct sync_context *ctx);

/* ---- apply.c ---- */

enum sync_outcome {
    SYNC_PUBLISHED,
    SYNC_UNCHANGED,
    /* The document was refused (logged): the ring is as it was. */
    SYNC_REFUSED,
    /* The ring could not be changed (logged): try again later. */
    SYNC_FAILED,
};

/*
 * Makes the ring hold the JSON node set TEXT (LEN bytes) as `ringctl load` would,
 * publishing only when something differs, then keeps it in the state file. ORIGIN
 * names where TEXT comes from in log lines ("key /a at revision 7"). Refusals name
 * ORIGIN and the error; KEY_OF_NODE (may be NULL) maps a node index of TEXT to the
 * name of the etcd key it came from, for messages about one node.
 */
enum sync_outcome sync__apply(struct sync_context *ctx, const char *text, size_t len,
                              const char *origin,
                              const char *(*key_of_node)(void *data, size_t index),
                              void *key_data);

/* Restores the ring from the state file when there is one (logs what it did);
 * returns whether the ring now holds the state file's node set. */
bool sync__restore(struct sync_context *ctx);

/* ---- state_file.c ---- */

/* The largest document sync reads, from etcd or from a file (etcd's own cap on a
 * value): larger is refused with -EFBIG, before it can exhaust memory. */
#define SYNC_DOCUMENT_MAX ((size_t)256 << 20)

/* sync__state_read()'s code for a file it would not trust (not an errno value). */
#define SYNC_STATE_REFUSED 1

/* Replaces PATH by TEXT atomically: a temporary file of a fresh name beside PATH
 * (created exclusively), given MODE and GROUP ((gid_t)-1: the creator's) before it
 * is written, fsynced, renamed over PATH, and the directory fsynced. Returns 0 or
 * a negated errno value. */
int sync__state_write(const char *path, const char *text, size_t len, mode_t mode,
                      gid_t group);
/* Reads PATH whole into a new NUL-terminated buffer. 0, -EFBIG (larger than
 * SYNC_DOCUMENT_MAX) or another negated errno value. */
int sync__file_read(const char *path, char **text, size_t *len);
/* What a negated errno value ERR of reading or writing a file means, in the
 * system's words ("No such file or directory"), or "larger than 268435456 bytes"
 * for -EFBIG: never the library's ring texts. Static. */
const char *sync__file_error(int err);
/* Reads the state file PATH as sync__file_read() does, if it can be trusted: a
 * regular file (never through a symbolic link) owned by this process's user (the
 * ring's owner) or root, that neither its group nor others can write. Anything else
 * is not read and SYNC_STATE_REFUSED returned, with REFUSAL (SIZE bytes) saying
 * what the path holds and whose it is, never what it contains. */
int sync__state_read(const char *path, char **text, size_t *len, char *refusal,
                     size_t size);

/* ---- metrics.c ---- */

enum sync_event {
    SYNC_EVENT_PUBLISHED, /* the ring took the source's node set, publishing */
    SYNC_EVENT_APPLIED,   /* the ring already held it */
    SYNC_EVENT_REFUSED,   /* a bad value, refused */
    SYNC_EVENT_ERROR,     /* the source or the ring could not be reached */
};

/* Counts EVENT and rewrites the metrics file (when the config names one). */
void sync__event(struct sync_context *ctx, enum sync_event event);
/* Rewrites the metrics file as the counts stand. */
void sync__metrics_write(struct sync_context *ctx);

/* ---- backoff.c ---- */

struct sync_backoff {
    unsigned attempt;
};

/* The next wait of BACKOFF, in milliseconds: a capped exponential backoff with jitter
 * (100 ms, then doubling up to CAP_MS, each wait drawn from the upper half of its
 * delay, from the xorshift state *RANDOM, which must not be 0). Counts the attempt. */
unsigned sync__backoff_next_ms(struct sync_backoff *backoff, unsigned cap_ms,
                               uint64_t *random);
/* Sleeps the next wait of BACKOFF, the cap being the config's maximum (5 s when it
 * gives none). Returns false when sync is stopping. */
bool sync__backoff_wait(struct sync_context *ctx, struct sync_backoff *backoff);
/* Sleeps MS milliseconds, waking early when sync is stopping; false then. */
bool sync__sleep_ms(struct sync_context *ctx, unsigned ms);

/* ---- etcd_source.c, file_source.c ---- */

int sync__follow_etcd(struct sync_context *ctx);
int sync__follow_file(struct sync_context *ctx);

#endif
