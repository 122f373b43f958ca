/*
 * A client of etcd v3's JSON gateway (grpc-gateway: POST /v3/kv/range, /v3/watch,
 * /v3/auth/authenticate; keys and values in base64, 64-bit integers as strings),
 * over libcurl, with failover between endpoints, TLS and password authentication.
 */
#ifndef SHMRING_SYNC_ETCD_H
#define SHMRING_SYNC_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sync_internal.h"

/* A key and its value, both raw bytes with a NUL after them. */
struct etcd_kv {
    char *key;
    size_t key_len;
    char *value;
    size_t value_len;
    int64_t mod_revision;
};

void etcd_kv_clear(struct etcd_kv *kv);

struct etcd_client;

int etcd_client_new(struct sync_context *ctx, struct etcd_client **out);
void etcd_client_free(struct etcd_client *client);
/* The endpoint in use, for log lines. */
const char *etcd_client_endpoint(const struct etcd_client *client);
/* Moves on to the next endpoint (after a failure). */
void etcd_client_fail_over(struct etcd_client *client);

/*
 * Reads KEY (with RANGE_END: every key from KEY up to RANGE_END, exclusive; NULL:
 * KEY alone), filling a new array of key-values (sorted by key, as etcd returns
 * them; free each with etcd_kv_clear() and the array with free()) and the store's
 * revision. Returns true, or false with ERROR (SIZE bytes) saying why.
 */
bool etcd_range(struct etcd_client *client, const char *key, size_t key_len,
                const char *range_end, size_t range_end_len, struct etcd_kv **kvs,
                size_t *count, int64_t *revision, char *error, size_t size);

/* What a watch message carries, handed to the watcher's callback. */
struct etcd_watch_event {
    bool deleted;
    struct etcd_kv kv;
};

/* Why a watch ended. */
enum etcd_watch_end {
    /* The connection failed or ended: the watch may resume where it was. */
    ETCD_WATCH_LOST,
    /* etcd compacted away revisions the watch had not seen: read everything again. */
    ETCD_WATCH_COMPACTED,
    /* etcd ended it for another reason, or the callback did: read everything again. */
    ETCD_WATCH_CANCELED,
};

/*
 * Watches KEY (RANGE_END as for etcd_range()) from START_REVISION, calling
 * ON_MESSAGE for every message that carries events, with them and the message's
 * revision, then ON_CAUGHT_UP once the messages that arrived together are all
 * handed over (one call after a backlog of many); either returns false to end the
 * watch. Returns when the connection ends, a callback says so, sync is stopping, or
 * etcd cancels the watch, saying which; ERROR says why.
 */
enum etcd_watch_end
etcd_watch(struct etcd_client *client, const char *key, size_t key_len,
           const char *range_end, size_t range_end_len, int64_t start_revision,
           bool (*on_message)(void *data, const struct etcd_watch_event *events,
                              size_t count, int64_t revision),
           bool (*on_caught_up)(void *data), void *data, char *error, size_t size);

#endif
