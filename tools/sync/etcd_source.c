/*
 * Following etcd: a full read, then a watch from the next revision, keeping a local
 * copy of the keys (one key, or every key under a prefix) from which the node set is
 * rebuilt after every change. A compacted watch leads to a full re-read; a lost
 * connection to a watch resumed from the last revision seen, on another endpoint,
 * after a capped, jittered wait, the ring keeping its last good version meanwhile. When
 * no endpoint answers at start, the ring is restored from the state file.
 *
 * Prefix mode: every key under the prefix is one node, its value the node's JSON
 * object ("name" defaults to the rest of the key); the key equal to the prefix
 * itself, if present, holds the parameters (algorithm, hash, vnodes, table_size,
 * min_ring_size, max_ring_size: the node-set format's) as a JSON object. Nodes are taken
 * in key order, the same on every host.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd.h"

/* The keys sync follows, as etcd last said. */
struct view {
    struct sync_context *ctx;
    bool prefix_mode;
    const char *name;
    size_t name_len;
    /* Sorted by key, bytewise (etcd's order). */
    struct etcd_kv *kvs;
    size_t count;
    int64_t revision;
    /* For messages about the node at index I of the last document: its key. */
    char **node_keys;
    size_t node_key_count;
    char *params_key;
};

static void view_clear(struct view *v)
{
    for (size_t i = 0; i < v->count; i++)
        etcd_kv_clear(&v->kvs[i]);
    free(v->kvs);
    v->kvs = NULL;
    v->count = 0;
}

/* Takes over the COUNT keys of a full read (sorted, as etcd returns them). */
static void view_replace(struct view *v, struct etcd_kv *kvs, size_t count,
                         int64_t revision)
{
    view_clear(v);
    v->kvs = kvs;
    v->count = count;
    v->revision = revision;
}

static void forget_node_keys(struct view *v)
{
    for (size_t i = 0; i < v->node_key_count; i++)
        free(v->node_keys[i]);
    free(v->node_keys);
    v->node_keys = NULL;
    v->node_key_count = 0;
    free(v->params_key);
    v->params_key = NULL;
}

/* A key made printable for a log line: control bytes become '?'. */
static char *printable_key(const char *key, size_t len)
{
    char *text = malloc(len + 1);
    if (text == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        text[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    text[len] = '\0';
    return text;
}

static int compare_keys(const char *a, size_t a_len, const char *b, size_t b_len)
{
    int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
    if (c != 0)
        return c;
    return (a_len > b_len) - (a_len < b_len);
}

/* The index of KEY, or where it would go; *found says which. */
static size_t view_find(const struct view *v, const char *key, size_t len, bool *found)
{
    size_t low = 0, high = v->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        int c = compare_keys(v->kvs[middle].key, v->kvs[middle].key_len, key, len);
        if (c < 0)
            low = middle + 1;
        else
            high = middle;
    }
    *found = low < v->count &&
             compare_keys(v->kvs[low].key, v->kvs[low].key_len, key, len) == 0;
    return low;
}

/* Applies one event, taking over its key and value (cleared in *KV). */
static bool view_apply(struct view *v, bool deleted, struct etcd_kv *kv)
{
    bool found;
    size_t at = view_find(v, kv->key, kv->key_len, &found);
    if (deleted) {
        if (found) {
            etcd_kv_clear(&v->kvs[at]);
            memmove(&v->kvs[at], &v->kvs[at + 1], (v->count - at - 1) * sizeof(*v->kvs));
            v->count--;
        }
        etcd_kv_clear(kv);
        return true;
    }
    if (found) {
        etcd_kv_clear(&v->kvs[at]);
        v->kvs[at] = *kv;
        *kv = (struct etcd_kv){0};
        return true;
    }
    /* One more each time: a new key is rare (a node joining), and the move below
     * costs as much as the copy a larger step would save. */
    struct etcd_kv *grown = realloc(v->kvs, (v->count + 1) * sizeof(*grown));
    if (grown == NULL)
        return false;
    v->kvs = grown;
    memmove(&v->kvs[at + 1], &v->kvs[at], (v->count - at) * sizeof(*v->kvs));
    v->kvs[at] = *kv;
    v->count++;
    *kv = (struct etcd_kv){0};
    return true;
}

static const char *key_of_node(void *data, size_t index)
{
    struct view *v = data;
    if (index == SIZE_MAX)
        return v->params_key;
    return index < v->node_key_count ? v->node_keys[index] : NULL;
}

/* Builds the prefix mode's JSON document into *TEXT, or logs why not. */
static bool prefix_document(struct view *v, const char *origin, char **text)
{
    struct sync_context *ctx = v->ctx;
    json_t *root = json_object();
    json_t *nodes = json_array();
    v->node_keys = calloc(v->count ? v->count : 1, sizeof(*v->node_keys));
    bool ok = root != NULL && nodes != NULL && v->node_keys != NULL;
    for (size_t i = 0; ok && i < v->count; i++) {
        const struct etcd_kv *kv = &v->kvs[i];
        char *shown = printable_key(kv->key, kv->key_len);
        json_error_t syntax;
        json_t *value =
            json_loadb(kv->value, kv->value_len, JSON_REJECT_DUPLICATES, &syntax);
        bool is_params = kv->key_len == v->name_len;
        if (value == NULL) {
            /* Where in the value, as key mode and file mode say it of a document. */
            sync__log(ctx,
                      "refused %s: key %s (revision %" PRId64
                      "): line %d, column %d: %s; ring unchanged",
                      origin, shown != NULL ? shown : "?", kv->mod_revision, syntax.line,
                      syntax.column, syntax.text);
            ok = false;
        } else if (!json_is_object(value)) {
            sync__log(ctx,
                      "refused %s: key %s (revision %" PRId64
                      "): must be a JSON object; ring unchanged",
                      origin, shown != NULL ? shown : "?", kv->mod_revision);
            ok = false;
        } else if (is_params) {
            const char *field;
            json_t *member;
            json_object_foreach(value, field, member)
            {
                if (strcmp(field, "nodes") == 0) {
                    sync__log(ctx,
                              "refused %s: key %s (revision %" PRId64
                              "): the parameters key holds no nodes; ring unchanged",
                              origin, shown != NULL ? shown : "?", kv->mod_revision);
                    ok = false;
                    break;
                }
                json_object_set(root, field, member);
            }
            v->params_key = shown;
            shown = NULL;
        } else {
            /* The node's name defaults to the rest of its key. */
            if (json_object_get(value, "name") == NULL) {
                json_t *name =
                    json_stringn(kv->key + v->name_len, kv->key_len - v->name_len);
                if (name == NULL) {
                    sync__log(ctx,
                              "refused %s: key %s (revision %" PRId64
                              "): name: the rest of the key is not valid UTF-8; give "
                              "\"name\"; ring unchanged",
                              origin, shown != NULL ? shown : "?", kv->mod_revision);
                    ok = false;
                } else {
                    json_object_set_new(value, "name", name);
                }
            }
            if (ok) {
                json_array_append(nodes, value);
                v->node_keys[v->node_key_count++] = shown;
                shown = NULL;
            }
        }
        json_decref(value);
        free(shown);
    }
    if (ok)
        ok = json_object_set(root, "nodes", nodes) == 0;
    if (ok) {
        *text = json_dumps(root, JSON_COMPACT);
        ok = *text != NULL;
    }
    json_decref(nodes);
    json_decref(root);
    return ok;
}

/* Makes the ring hold what the view says. */
static enum sync_outcome publish_view(struct view *v)
{
    struct sync_context *ctx = v->ctx;
    char *shown = printable_key(v->name, v->name_len);
    char origin[SYNC_LINE_MAX];
    snprintf(origin, sizeof(origin), "%s %s at revision %" PRId64,
             v->prefix_mode ? "prefix" : "key", shown != NULL ? shown : "?", v->revision);
    free(shown);
    forget_node_keys(v);
    ctx->revision = v->revision;
    if (!v->prefix_mode) {
        if (v->count == 0) {
            sync__log(ctx, "refused %s: the key does not exist; ring unchanged", origin);
            sync__event(ctx, SYNC_EVENT_REFUSED);
            return SYNC_REFUSED;
        }
        return sync__apply(ctx, v->kvs[0].value, v->kvs[0].value_len, origin, NULL, NULL);
    }
    char *text = NULL;
    if (!prefix_document(v, origin, &text)) {
        sync__event(ctx, SYNC_EVENT_REFUSED);
        return SYNC_REFUSED;
    }
    enum sync_outcome outcome =
        sync__apply(ctx, text, strlen(text), origin, key_of_node, v);
    free(text);
    return outcome;
}

static bool on_message(void *data, const struct etcd_watch_event *events, size_t count,
                       int64_t revision)
{
    struct view *v = data;
    for (size_t i = 0; i < count; i++) {
        /* The view takes the key and value over; the watcher frees what is left. */
        struct etcd_kv kv = events[i].kv;
        struct etcd_kv copy = {0};
        copy.key = malloc(kv.key_len + 1);
        copy.value = malloc(kv.value_len + 1);
        if (copy.key == NULL || copy.value == NULL) {
            etcd_kv_clear(&copy);
            return false;
        }
        memcpy(copy.key, kv.key, kv.key_len + 1);
        memcpy(copy.value, kv.value, kv.value_len + 1);
        copy.key_len = kv.key_len;
        copy.value_len = kv.value_len;
        copy.mod_revision = kv.mod_revision;
        if (!view_apply(v, events[i].deleted, &copy)) {
            etcd_kv_clear(&copy);
            return false;
        }
    }
    v->revision = revision;
    return true;
}

/* The view holds everything that arrived: publish it (once for a whole backlog). */
static bool on_caught_up(void *data)
{
    struct view *v = data;
    publish_view(v);
    return !sync__stopping(v->ctx);
}

/* etcd's prefix range end: the prefix with its last byte below 0xff incremented
 * and what follows dropped; "\0" (every key) when there is none. */
static size_t prefix_range_end(const char *prefix, size_t len, char *out)
{
    memcpy(out, prefix, len);
    for (size_t i = len; i > 0; i--) {
        if ((unsigned char)out[i - 1] < 0xff) {
            out[i - 1] = (char)((unsigned char)out[i - 1] + 1);
            return i;
        }
    }
    out[0] = '\0';
    return 1;
}

int sync__follow_etcd(struct sync_context *ctx)
{
    const shmring_sync_config_t *c = ctx->config;
    struct view v = {.ctx = ctx,
                     .prefix_mode = c->source == SHMRING_SYNC_ETCD_PREFIX,
                     .name = c->name,
                     .name_len = strlen(c->name)};
    char *range_end = malloc(v.name_len + 1);
    struct etcd_client *client = NULL;
    if (range_end == NULL || etcd_client_new(ctx, &client) != 0) {
        free(range_end);
        sync__log(ctx, "cannot start: %s", shmring_strerror(SHMRING_ENOMEM));
        return 2;
    }
    size_t range_end_len =
        v.prefix_mode ? prefix_range_end(v.name, v.name_len, range_end) : 0;
    char *shown = printable_key(v.name, v.name_len);
    struct sync_backoff backoff = {0};
    size_t failures = 0;
    bool restore_tried = false;
    /* Whether the view must come from a full read rather than the watch resume. */
    bool read_needed = true;
    int status = 0;
    char error[SYNC_LINE_MAX];
    while (!sync__stopping(ctx)) {
        if (read_needed) {
            struct etcd_kv *kvs = NULL;
            size_t count = 0;
            int64_t revision = 0;
            if (!etcd_range(client, v.name, v.name_len, v.prefix_mode ? range_end : NULL,
                            range_end_len, &kvs, &count, &revision, error,
                            sizeof(error))) {
                sync__log(ctx, "cannot read %s from %s: %s", shown != NULL ? shown : "?",
                          etcd_client_endpoint(client), error);
                sync__event(ctx, SYNC_EVENT_ERROR);
                etcd_client_fail_over(client);
                /* Every endpoint failed once: bring back the last node set now, so
                 * that workers have a ring while etcd is away. */
                if (++failures >= c->endpoint_count && !restore_tried && !ctx->in_step) {
                    restore_tried = true;
                    sync__restore(ctx);
                }
                if (c->once && failures >= c->endpoint_count) {
                    status = 1;
                    break;
                }
                if (!sync__backoff_wait(ctx, &backoff))
                    break;
                continue;
            }
            failures = 0;
            backoff.attempt = 0;
            view_replace(&v, kvs, count, revision);
            sync__log(ctx, "read %zu key%s at revision %" PRId64 " from %s", v.count,
                      v.count == 1 ? "" : "s", revision, etcd_client_endpoint(client));
            enum sync_outcome outcome = publish_view(&v);
            if (c->once) {
                status = outcome == SYNC_PUBLISHED || outcome == SYNC_UNCHANGED ? 0 : 1;
                break;
            }
            read_needed = false;
        }
        int64_t watched = v.revision;
        enum etcd_watch_end end = etcd_watch(
            client, v.name, v.name_len, v.prefix_mode ? range_end : NULL, range_end_len,
            v.revision + 1, on_message, on_caught_up, &v, error, sizeof(error));
        if (sync__stopping(ctx))
            break;
        if (v.revision > watched)
            backoff.attempt = 0;
        if (end == ETCD_WATCH_COMPACTED) {
            /* What happened between the view's revision and the compaction is gone:
             * only a full read can say what the keys are now. */
            sync__log(ctx, "%s; reading %s again", error, shown != NULL ? shown : "?");
            read_needed = true;
            continue;
        }
        if (end == ETCD_WATCH_CANCELED) {
            sync__log(ctx, "%s; reading %s again", error, shown != NULL ? shown : "?");
            read_needed = true;
        } else {
            /* The view stays good up to its revision: the next watch resumes from
             * there, on another endpoint if there is one (revisions are the
             * cluster's), and etcd replays what was missed or says it compacted. */
            sync__log(ctx,
                      "lost the watch on %s at revision %" PRId64
                      ": %s; ring kept, resuming",
                      etcd_client_endpoint(client), v.revision, error);
        }
        sync__event(ctx, SYNC_EVENT_ERROR);
        etcd_client_fail_over(client);
        if (!sync__backoff_wait(ctx, &backoff))
            break;
    }
    free(shown);
    forget_node_keys(&v);
    view_clear(&v);
    free(range_end);
    etcd_client_free(client);
    return status;
}
