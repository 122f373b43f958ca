/*
 * etcd v3 through its JSON gateway. Every request is a POST of a JSON body; the
 * watch answers with one JSON object per message on a stream that stays open. The
 * gateway path /v3/ is the one etcd 3.4 (Debian 12's etcd-server) and later serve.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/ssl.h>

#include "etcd.h"

#define CONNECT_TIMEOUT_MS 2000L
/* A range of 10,000 nodes is a few megabytes: this bounds a stuck server, not work. */
#define REQUEST_TIMEOUT_MS 30000L
/* TCP keepalive notices a peer that vanished without closing the watch stream. */
#define KEEPALIVE_SECONDS 5L
/* Bodies larger than this are refused rather than buffered. */
#define BODY_MAX (256u << 20)
#define READ_BUFFER_BYTES (512L * 1024)
/* How often a transfer looks at the stop flag: sync must exit within a second. */
#define STOP_POLL_MS 200

struct etcd_client {
    struct sync_context *ctx;
    CURL *curl;
    size_t endpoint;
    /* Whether the server of the last transfer asked for a client certificate. */
    bool certificate_requested;
    /* The authentication token for the current endpoint (NULL: none yet). */
    char *token;
    size_t token_endpoint;
};

void etcd_kv_clear(struct etcd_kv *kv)
{
    free(kv->key);
    free(kv->value);
    *kv = (struct etcd_kv){0};
}

int etcd_client_new(struct sync_context *ctx, struct etcd_client **out)
{
    static bool initialized;
    if (!initialized) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            return SHMRING_ENOMEM;
        initialized = true;
    }
    struct etcd_client *client = calloc(1, sizeof(*client));
    if (client == NULL)
        return SHMRING_ENOMEM;
    client->ctx = ctx;
    client->curl = curl_easy_init();
    if (client->curl == NULL) {
        free(client);
        return SHMRING_ENOMEM;
    }
    *out = client;
    return 0;
}

void etcd_client_free(struct etcd_client *client)
{
    if (client == NULL)
        return;
    curl_easy_cleanup(client->curl);
    free(client->token);
    free(client);
}

const char *etcd_client_endpoint(const struct etcd_client *client)
{
    return client->ctx->config->endpoints[client->endpoint];
}

void etcd_client_fail_over(struct etcd_client *client)
{
    client->endpoint = (client->endpoint + 1) % client->ctx->config->endpoint_count;
}

/* ---- HTTP ----------------------------------------------------------------- */

struct body {
    char *text;
    size_t len;
    /* For a stream: called for every complete line, false ending the transfer; then
     * ON_LINES_END once the lines that arrived together are all handed over (after
     * each round of reading: libcurl hands over each HTTP chunk on its own, and
     * etcd's gateway sends every message as a chunk). */
    bool (*on_line)(void *data, const char *line, size_t len);
    bool (*on_lines_end)(void *data);
    void *line_data;
    bool lines_pending;
    bool too_large;
};

static size_t receive(char *bytes, size_t size, size_t count, void *userdata)
{
    struct body *body = userdata;
    size_t n = size * count;
    if (body->len + n > BODY_MAX) {
        body->too_large = true;
        return 0;
    }
    char *grown = realloc(body->text, body->len + n + 1);
    if (grown == NULL)
        return 0;
    body->text = grown;
    memcpy(body->text + body->len, bytes, n);
    body->len += n;
    body->text[body->len] = '\0';
    if (body->on_line == NULL)
        return n;
    /* Hand over every complete line and keep the rest for the next chunk. */
    char *start = body->text;
    char *newline;
    while ((newline = memchr(start, '\n', body->len - (size_t)(start - body->text)))) {
        *newline = '\0';
        bool go_on = body->on_line(body->line_data, start, (size_t)(newline - start));
        start = newline + 1;
        body->lines_pending = true;
        if (!go_on)
            return 0;
    }
    size_t rest = body->len - (size_t)(start - body->text);
    memmove(body->text, start, rest);
    body->len = rest;
    body->text[rest] = '\0';
    return n;
}

static int progress(void *data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                    curl_off_t ulnow)
{
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    /* libcurl calls this about once a second even on an idle stream, so a stop
     * request ends a watch within a second. */
    return sync__stopping(data) ? 1 : 0;
}

/* Runs one transfer, looking at the stop flag every STOP_POLL_MS even while the
 * stream is idle (libcurl's progress callback comes only about once a second), and
 * telling a stream's reader when what arrived so far is handed over: a watch that
 * fell behind takes its whole backlog in one round and publishes once. */
static CURLcode perform(struct sync_context *ctx, CURL *curl, struct body *body)
{
    CURLM *multi = curl_multi_init();
    if (multi == NULL || curl_multi_add_handle(multi, curl) != CURLM_OK) {
        curl_multi_cleanup(multi);
        return CURLE_OUT_OF_MEMORY;
    }
    CURLcode code = CURLE_OK;
    int running = 1;
    while (running) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) {
            code = CURLE_RECV_ERROR;
            break;
        }
        if (body->lines_pending) {
            body->lines_pending = false;
            if (!body->on_lines_end(body->line_data)) {
                code = CURLE_WRITE_ERROR;
                break;
            }
        }
        if (!running)
            break;
        if (sync__stopping(ctx)) {
            code = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        curl_multi_poll(multi, NULL, 0, STOP_POLL_MS, NULL);
    }
    int left;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &left)) != NULL) {
        if (message->msg == CURLMSG_DONE)
            code = message->data.result;
    }
    curl_multi_remove_handle(multi, curl);
    curl_multi_cleanup(multi);
    return code;
}

/*
 * Without a client certificate, a server that requires one ends the connection with
 * an alert that, under TLS 1.3, arrives only after the handshake, as whichever read
 * or write error comes first. OpenSSL asks this callback when the server requests a
 * certificate, so the failure can be named for what it is.
 */
static int certificate_index = -1;

static int note_certificate_request(SSL *ssl, X509 **certificate, EVP_PKEY **key)
{
    (void)certificate;
    (void)key;
    struct etcd_client *client =
        SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), certificate_index);
    if (client != NULL)
        client->certificate_requested = true;
    return 0; /* none to give */
}

static CURLcode prepare_tls(CURL *curl, void *ssl_ctx, void *data)
{
    (void)curl;
    if (certificate_index < 0)
        certificate_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    if (certificate_index >= 0 && SSL_CTX_set_ex_data(ssl_ctx, certificate_index, data))
        SSL_CTX_set_client_cert_cb(ssl_ctx, note_certificate_request);
    return CURLE_OK;
}

/* POSTs BODY to PATH on the current endpoint; fills *reply. Returns the HTTP status,
 * or 0 with ERROR filled when no HTTP answer came. */
static long post(struct etcd_client *client, const char *path, const char *request,
                 bool stream, struct body *reply, char *error, size_t size)
{
    const shmring_sync_config_t *c = client->ctx->config;
    CURL *curl = client->curl;
    char url[2048];
    snprintf(url, sizeof(url), "%s%s", etcd_client_endpoint(client), path);
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    if (!stream)
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, KEEPALIVE_SECONDS);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, KEEPALIVE_SECONDS);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, client->ctx);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, receive);
    /* Large reads, so that a watch that fell behind (a busy host) takes its backlog
     * in one round of reading. */
    curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, READ_BUFFER_BYTES);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, reply);
    /* Only the URLs given: no redirects to elsewhere. */
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (c->ca_file != NULL)
        curl_easy_setopt(curl, CURLOPT_CAINFO, c->ca_file);
    if (c->cert_file != NULL)
        curl_easy_setopt(curl, CURLOPT_SSLCERT, c->cert_file);
    if (c->key_file != NULL)
        curl_easy_setopt(curl, CURLOPT_SSLKEY, c->key_file);
    client->certificate_requested = false;
    if (c->cert_file == NULL && strncmp(url, "https://", 8) == 0) {
        curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, prepare_tls);
        curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, client);
    }
    struct curl_slist *headers =
        curl_slist_append(NULL, "Content-Type: application/json");
    if (client->token != NULL) {
        /* curl_slist_append() keeps a copy. */
        char authorization[4096];
        /* etcd's gateway takes the bare token in the Authorization header. */
        snprintf(authorization, sizeof(authorization), "Authorization: %s",
                 client->token);
        headers = curl_slist_append(headers, authorization);
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    char curl_error[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
    if (!stream)
        error[0] = '\0';
    CURLcode code = perform(client->ctx, curl, reply);
    curl_slist_free_all(headers);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK) {
        /* A watch's own reason (set by its callback) wins over libcurl's. */
        if (error[0] == '\0' && reply->too_large)
            snprintf(error, size, "answer larger than %u bytes", BODY_MAX);
        else if (error[0] == '\0' && client->certificate_requested)
            snprintf(error, size,
                     "etcd wants a client certificate and none was given (--cert, "
                     "--cert-key)");
        else if (error[0] == '\0')
            snprintf(error, size, "%s",
                     curl_error[0] ? curl_error : curl_easy_strerror(code));
        if (status == 0 || !stream)
            return 0;
    }
    return status;
}

/* The message of an error answer ({"error": ..., "message": ...}), or the status. */
static void answer_error(long status, const struct body *reply, char *error, size_t size)
{
    json_t *root = reply->text != NULL ? json_loads(reply->text, 0, NULL) : NULL;
    const char *message = json_string_value(json_object_get(root, "message"));
    if (message == NULL)
        message = json_string_value(json_object_get(root, "error"));
    if (message != NULL)
        snprintf(error, size, "HTTP %ld: %s", status, message);
    else
        snprintf(error, size, "HTTP %ld", status);
    json_decref(root);
}

/* REQUEST (taken over; NULL when building it ran out of memory) as the text of a
 * request body, or NULL with ERROR saying why. */
static char *request_text(json_t *request, char *error, size_t size)
{
    char *text = request != NULL ? json_dumps(request, JSON_COMPACT) : NULL;
    json_decref(request);
    if (text == NULL)
        snprintf(error, size, "%s", shmring_strerror(SHMRING_ENOMEM));
    return text;
}

/* Logs in with the configured user, once per endpoint, keeping the token. */
static bool authenticate(struct etcd_client *client, char *error, size_t size)
{
    const shmring_sync_config_t *c = client->ctx->config;
    if (c->user == NULL ||
        (client->token != NULL && client->token_endpoint == client->endpoint))
        return true;
    free(client->token);
    client->token = NULL;
    char *text = request_text(json_pack("{s:s, s:s}", "name", c->user, "password",
                                        c->password != NULL ? c->password : ""),
                              error, size);
    if (text == NULL)
        return false;
    struct body reply = {0};
    long status = post(client, "/v3/auth/authenticate", text, false, &reply, error, size);
    free(text);
    bool ok = false;
    if (status == 200) {
        json_t *root = json_loads(reply.text, 0, NULL);
        const char *token = json_string_value(json_object_get(root, "token"));
        if (token != NULL && strchr(token, '\n') == NULL && strchr(token, '\r') == NULL) {
            client->token = strdup(token);
            client->token_endpoint = client->endpoint;
            ok = client->token != NULL;
        }
        if (!ok)
            snprintf(error, size, "authentication answer without a token");
        json_decref(root);
    } else if (status != 0) {
        char reason[512];
        answer_error(status, &reply, reason, sizeof(reason));
        snprintf(error, size, "authentication as '%s' failed: %s", c->user, reason);
    }
    free(reply.text);
    return ok;
}

/* Forgets the token, so that the next request logs in again (tokens expire). */
static void forget_token(struct etcd_client *client)
{
    free(client->token);
    client->token = NULL;
}

/* ---- JSON of the gateway --------------------------------------------------- */

/* A 64-bit integer that the gateway writes as a string (or, rarely, a number). */
static int64_t int64_of(const json_t *value)
{
    if (json_is_integer(value))
        return json_integer_value(value);
    const char *text = json_string_value(value);
    return text != NULL ? strtoll(text, NULL, 10) : 0;
}

/* Builds the request of a range or watch: {"key": ..., "range_end": ...}. */
static json_t *key_request(const char *key, size_t key_len, const char *range_end,
                           size_t range_end_len)
{
    char *key64 = NULL, *end64 = NULL;
    json_t *request = NULL;
    if (shmring_base64_encode(key, key_len, &key64) == 0 &&
        (range_end == NULL ||
         shmring_base64_encode(range_end, range_end_len, &end64) == 0)) {
        request = json_pack("{s:s}", "key", key64);
        if (request != NULL && end64 != NULL)
            json_object_set_new(request, "range_end", json_string(end64));
    }
    free(key64);
    free(end64);
    return request;
}

static bool kv_of(const json_t *object, struct etcd_kv *kv)
{
    *kv = (struct etcd_kv){0};
    const char *key = json_string_value(json_object_get(object, "key"));
    const char *value = json_string_value(json_object_get(object, "value"));
    /* A value of zero bytes is left out of the JSON. */
    if (value == NULL)
        value = "";
    if (key == NULL ||
        shmring_base64_decode(key, strlen(key), &kv->key, &kv->key_len) != 0 ||
        shmring_base64_decode(value, strlen(value), &kv->value, &kv->value_len) != 0) {
        etcd_kv_clear(kv);
        return false;
    }
    kv->mod_revision = int64_of(json_object_get(object, "mod_revision"));
    return true;
}

bool etcd_range(struct etcd_client *client, const char *key, size_t key_len,
                const char *range_end, size_t range_end_len, struct etcd_kv **kvs,
                size_t *count, int64_t *revision, char *error, size_t size)
{
    if (!authenticate(client, error, size))
        return false;
    char *text =
        request_text(key_request(key, key_len, range_end, range_end_len), error, size);
    if (text == NULL)
        return false;
    struct body reply = {0};
    long status = post(client, "/v3/kv/range", text, false, &reply, error, size);
    free(text);
    if (status != 200) {
        if (status != 0)
            answer_error(status, &reply, error, size);
        if (status == 401)
            forget_token(client);
        free(reply.text);
        return false;
    }
    json_error_t syntax;
    json_t *root = json_loads(reply.text, 0, &syntax);
    free(reply.text);
    json_t *list = json_object_get(root, "kvs");
    size_t n = json_array_size(list);
    struct etcd_kv *array = calloc(n ? n : 1, sizeof(*array));
    bool ok = root != NULL && array != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = kv_of(json_array_get(list, i), &array[i]);
    if (!ok) {
        snprintf(error, size, "unreadable range answer");
        for (size_t i = 0; array != NULL && i < n; i++)
            etcd_kv_clear(&array[i]);
        free(array);
        json_decref(root);
        return false;
    }
    *revision = int64_of(json_object_get(json_object_get(root, "header"), "revision"));
    json_decref(root);
    *kvs = array;
    *count = n;
    return true;
}

/* ---- Watch ---------------------------------------------------------------- */

struct watch {
    bool (*on_message)(void *data, const struct etcd_watch_event *events, size_t count,
                       int64_t revision);
    bool (*on_caught_up)(void *data);
    void *data;
    /* Whether messages were handed over since the last on_caught_up. */
    bool unsettled;
    int64_t start_revision;
    bool compacted;
    /* etcd canceled the watch, or the callback ended it. */
    bool ended;
    char *error;
    size_t size;
};

static bool watch_line(void *data, const char *line, size_t len)
{
    struct watch *w = data;
    if (len == 0)
        return true;
    json_t *root = json_loadb(line, len, 0, NULL);
    json_t *result = json_object_get(root, "result");
    if (result == NULL) {
        json_t *err = json_object_get(root, "error");
        const char *message = json_string_value(json_object_get(err, "message"));
        snprintf(w->error, w->size, "watch error: %s",
                 message != NULL ? message : "unreadable message");
        json_decref(root);
        /* The gateway's word for a stream that broke (etcd shutting down, a leader
         * lost): the watch resumes from its revision like after any lost stream. */
        return false;
    }
    int64_t compact = int64_of(json_object_get(result, "compact_revision"));
    if (compact > 0 || json_is_true(json_object_get(result, "canceled"))) {
        w->compacted = compact > 0;
        if (compact > 0)
            snprintf(w->error, w->size,
                     "watch fell behind compaction at revision %" PRId64, compact);
        else
            snprintf(w->error, w->size, "watch canceled by etcd: %s",
                     json_string_value(json_object_get(result, "cancel_reason"))
                         ? json_string_value(json_object_get(result, "cancel_reason"))
                         : "no reason given");
        json_decref(root);
        w->ended = true;
        return false;
    }
    /* A cluster rebuilt or restored from an older backup counts revisions from
     * below where the watch resumes: it would wait for revisions that mean other
     * changes, so the view must be read again. */
    int64_t now =
        int64_of(json_object_get(json_object_get(result, "header"), "revision"));
    if (json_is_true(json_object_get(result, "created")) && now < w->start_revision - 1) {
        snprintf(w->error, w->size,
                 "etcd is at revision %" PRId64 ", before the watch's %" PRId64
                 " (a new or restored cluster)",
                 now, w->start_revision);
        json_decref(root);
        w->ended = true;
        return false;
    }
    json_t *list = json_object_get(result, "events");
    size_t n = json_array_size(list);
    bool go_on = true;
    if (n > 0) {
        struct etcd_watch_event *events = calloc(n, sizeof(*events));
        bool ok = events != NULL;
        for (size_t i = 0; ok && i < n; i++) {
            json_t *event = json_array_get(list, i);
            const char *type = json_string_value(json_object_get(event, "type"));
            events[i].deleted = type != NULL && strcmp(type, "DELETE") == 0;
            ok = kv_of(json_object_get(event, "kv"), &events[i].kv);
        }
        if (ok) {
            go_on = w->on_message(w->data, events, n, now);
            w->unsettled = true;
        } else {
            snprintf(w->error, w->size, "unreadable watch event");
            go_on = false;
        }
        for (size_t i = 0; events != NULL && i < n; i++)
            etcd_kv_clear(&events[i].kv);
        free(events);
        if (!go_on)
            w->ended = true;
    }
    json_decref(root);
    return go_on;
}

static bool watch_lines_end(void *data)
{
    struct watch *w = data;
    /* A message that could not be taken whole leaves the view half-changed: the
     * caller reads everything again rather than publish it. */
    if (w->ended)
        return false;
    if (!w->unsettled)
        return true;
    w->unsettled = false;
    if (!w->on_caught_up(w->data)) {
        w->ended = true;
        return false;
    }
    return true;
}

enum etcd_watch_end
etcd_watch(struct etcd_client *client, const char *key, size_t key_len,
           const char *range_end, size_t range_end_len, int64_t start_revision,
           bool (*on_message)(void *data, const struct etcd_watch_event *events,
                              size_t count, int64_t revision),
           bool (*on_caught_up)(void *data), void *data, char *error, size_t size)
{
    if (!authenticate(client, error, size))
        return ETCD_WATCH_LOST;
    json_t *create = key_request(key, key_len, range_end, range_end_len);
    json_t *request = NULL;
    if (create != NULL) {
        char revision[32];
        snprintf(revision, sizeof(revision), "%" PRId64, start_revision);
        json_object_set_new(create, "start_revision", json_string(revision));
        /* Progress notifications keep an idle stream moving. */
        json_object_set_new(create, "progress_notify", json_true());
        request = json_pack("{s:o}", "create_request", create);
    }
    char *text = request_text(request, error, size);
    if (text == NULL)
        return ETCD_WATCH_LOST;
    struct watch w = {.on_message = on_message,
                      .on_caught_up = on_caught_up,
                      .data = data,
                      .start_revision = start_revision,
                      .error = error,
                      .size = size};
    struct body reply = {
        .on_line = watch_line, .on_lines_end = watch_lines_end, .line_data = &w};
    error[0] = '\0';
    long status = post(client, "/v3/watch", text, true, &reply, error, size);
    free(text);
    if (status != 0 && status != 200) {
        answer_error(status, &reply, error, size);
        if (status == 401)
            forget_token(client);
    } else if (!w.ended && error[0] == '\0') {
        snprintf(error, size, "watch stream ended");
    }
    free(reply.text);
    if (w.compacted)
        return ETCD_WATCH_COMPACTED;
    return w.ended ? ETCD_WATCH_CANCELED : ETCD_WATCH_LOST;
}
