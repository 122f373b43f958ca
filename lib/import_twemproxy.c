/*
 * Reading a nutcracker (twemproxy) configuration: one pool of `distribution: ketama`
 * as a node set of the `twemproxy` algorithm, with the pool's `hash:`.
 *
 * nutcracker reads its file with libyaml, but what it accepts is one shape: pools
 * as top-level keys, each a mapping of scalar options and one `servers:` list of
 * scalars. This reader takes that shape line by line: comments ('#' at the start of
 * a line or after a blank), one indentation for a pool's keys, `- ` items under
 * `servers:`, plain or quoted scalars. YAML beyond it (flow collections, anchors,
 * aliases, tags, block scalars, tabs in indentation) is refused by name.
 *
 * A server is "HOST:PORT:WEIGHT [NAME]" or "PATH:WEIGHT [NAME]" (a Unix socket).
 * The node's address is HOST:PORT (or PATH); its name is NAME when given, else the
 * address; a given NAME is also its hash key, since nutcracker hashes the name into
 * the points (the `twemproxy` placement derives the string it hashes for an unnamed
 * server from the address, as nutcracker does).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"

/* A pool's options that do not move keys while every server answers: the listener,
 * timeouts, connection counts, the protocol, and ejection (which acts only on
 * failures). Ejected servers are our down nodes, set by whoever watches them. */
static const char *const ignored_keys[] = {"listen",
                                           "timeout",
                                           "backlog",
                                           "preconnect",
                                           "redis",
                                           "redis_auth",
                                           "redis_db",
                                           "server_connections",
                                           "auto_eject_hosts",
                                           "server_retry_timeout",
                                           "server_failure_limit",
                                           "client_connections",
                                           "tcpkeepalive"};

struct pool {
    struct import_section section; /* first: shmring__import_take() walks these */
    /* Keys seen, to refuse a key given twice as nutcracker does. */
    char seen[32][24];
    size_t seen_count;
    /* The indentation of the pool's keys (0: none read yet). */
    size_t key_indent;
    bool in_servers;
};

struct reader {
    struct pool *pools;
    size_t count;
    size_t capacity;
    shmring_import_error_t *error;
};

/* The last ':' of the LEN bytes at TEXT, or NULL. */
static const char *last_colon(const char *text, size_t len)
{
    for (size_t i = len; i > 0; i--) {
        if (text[i - 1] == ':')
            return text + i - 1;
    }
    return NULL;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The length of LINE without its comment and trailing blanks. */
static size_t content_length(const char *line, size_t len)
{
    char quote = 0;
    size_t end = len;
    for (size_t i = 0; i < len; i++) {
        char c = line[i];
        if (quote != 0) {
            if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '#' && (i == 0 || is_blank(line[i - 1]))) {
            end = i;
            break;
        }
    }
    while (end > 0 && (is_blank(line[end - 1]) || line[end - 1] == '\r'))
        end--;
    return end;
}

/* Copies a scalar of LEN bytes at TEXT, without its quotes, into a new string;
 * *problem names YAML this reader does not take. Returns NULL on failure. */
static char *scalar(const char *text, size_t len, const char **problem)
{
    *problem = NULL;
    if (len > 0 && strchr("[{&*!|>%@`", text[0]) != NULL) {
        *problem = "YAML beyond plain and quoted scalars";
        return NULL;
    }
    if (len >= 2 && (text[0] == '"' || text[0] == '\'') && text[len - 1] == text[0]) {
        text++;
        len -= 2;
        /* Escapes would need YAML's rules: refuse rather than guess. */
        if (memchr(text, '\\', len) != NULL || memchr(text, text[-1], len) != NULL) {
            *problem = "a backslash or inner quote in a quoted scalar";
            return NULL;
        }
    } else if (len > 0 && (text[0] == '"' || text[0] == '\'')) {
        *problem = "an unterminated quoted scalar";
        return NULL;
    }
    return strndup(text, len);
}

/* A `servers:` item: "HOST:PORT:WEIGHT [NAME]" or "PATH:WEIGHT [NAME]". */
static int pool_server(struct pool *pool, const char *item, int line)
{
    char quoted[IMPORT_QUOTE_SIZE];
    size_t len = strlen(item);
    const char *space = memchr(item, ' ', len);
    size_t spec_len = space != NULL ? (size_t)(space - item) : len;
    const char *name = NULL;
    if (space != NULL) {
        name = space;
        while (*name == ' ')
            name++;
        if (*name == '\0' || strpbrk(name, " \t") != NULL)
            return shmring__import_fail_once(
                &pool->section, line,
                "server '%s': expected 'HOST:PORT:WEIGHT [NAME]' with a "
                "name without blanks",
                shmring__import_quote(quoted, item, len));
    }
    const char *weight_colon = last_colon(item, spec_len);
    uint32_t weight;
    if (weight_colon == NULL ||
        !shmring__import_number(weight_colon + 1,
                                spec_len - (size_t)(weight_colon + 1 - item),
                                SHMRING_WEIGHT_MAX, &weight))
        return shmring__import_fail_once(
            &pool->section, line,
            "server '%s': expected 'HOST:PORT:WEIGHT [NAME]' with a weight "
            "from 1 to %d",
            shmring__import_quote(quoted, item, len), SHMRING_WEIGHT_MAX);
    size_t address_len = (size_t)(weight_colon - item);
    if (item[0] != '/') {
        const char *port_colon = last_colon(item, address_len);
        uint32_t port;
        if (port_colon == NULL || port_colon == item ||
            !shmring__import_number(port_colon + 1,
                                    address_len - (size_t)(port_colon + 1 - item), 65535,
                                    &port))
            return shmring__import_fail_once(
                &pool->section, line,
                "server '%s': expected 'HOST:PORT:WEIGHT [NAME]' with a "
                "port from 1 to 65535",
                shmring__import_quote(quoted, item, len));
    }
    char *address = strndup(item, address_len);
    if (address == NULL)
        return SHMRING_ENOMEM;
    int err =
        shmring__import_add(pool->section.set, name != NULL ? name : address, address,
                            weight, SHMRING_STATE_UP, name, line, &pool->section.error);
    free(address);
    if (err == SHMRING_EINVAL) {
        pool->section.failed = true;
        return 0;
    }
    pool->section.servers++;
    return err;
}

/* A `KEY: VALUE` line of a pool (VALUE may be empty). */
static int pool_key(struct pool *pool, const char *key, size_t key_len, const char *value,
                    int line)
{
    char quoted[IMPORT_QUOTE_SIZE];
    const char *shown = shmring__import_quote(quoted, key, key_len);
    for (size_t i = 0; i < pool->seen_count; i++) {
        if (strlen(pool->seen[i]) == key_len && memcmp(pool->seen[i], key, key_len) == 0)
            return shmring__import_fail_once(&pool->section, line, "'%s' is given twice",
                                             shown);
    }
    if (key_len < sizeof(pool->seen[0]) &&
        pool->seen_count < sizeof(pool->seen) / sizeof(pool->seen[0])) {
        memcpy(pool->seen[pool->seen_count], key, key_len);
        pool->seen[pool->seen_count++][key_len] = '\0';
    }
    pool->in_servers = false;
    bool is_servers = key_len == 7 && memcmp(key, "servers", 7) == 0;
    if (is_servers) {
        if (value[0] != '\0')
            return shmring__import_fail_once(&pool->section, line,
                                             "'servers' must be a list of '- ' items");
        pool->in_servers = true;
        return 0;
    }
    if (value[0] == '\0')
        return shmring__import_fail_once(&pool->section, line, "'%s' has no value",
                                         shown);
#define KEY_IS(text) (key_len == strlen(text) && memcmp(key, text, key_len) == 0)
    if (KEY_IS("hash")) {
        shmring_params_t params;
        shmring_params_default(&params);
        params.algorithm = SHMRING_ALGORITHM_TWEMPROXY;
        if (shmring_hash_parse(value, &params.hash) != 0 ||
            shmring_params_check(&params) != 0)
            return shmring__import_fail_once(
                &pool->section, line, "hash '%s' is not one of twemproxy's",
                shmring__import_quote(quoted, value, strlen(value)));
        shmring_params_t set_params;
        shmring_nodeset_params(pool->section.set, &set_params);
        set_params.hash = params.hash;
        return shmring_nodeset_set_params(pool->section.set, &set_params);
    }
    if (KEY_IS("distribution")) {
        if (strcmp(value, "ketama") != 0)
            return shmring__import_fail_once(
                &pool->section, line,
                "distribution '%s' is not supported: only ketama places "
                "keys on a continuum",
                shmring__import_quote(quoted, value, strlen(value)));
        return 0;
    }
    if (KEY_IS("hash_tag"))
        return shmring__import_fail_once(
            &pool->section, line,
            "'hash_tag' is not supported: nutcracker then hashes only part "
            "of each key");
    for (size_t i = 0; i < sizeof(ignored_keys) / sizeof(ignored_keys[0]); i++) {
        if (KEY_IS(ignored_keys[i]))
            return 0;
    }
#undef KEY_IS
    return shmring__import_fail_once(&pool->section, line,
                                     "'%s' is not supported in a pool", shown);
}

/* One indented line of POOL: a key or a `servers:` item. */
static int pool_line(struct pool *pool, const char *line, size_t indent, size_t len,
                     int number)
{
    char quoted[IMPORT_QUOTE_SIZE];
    const char *text = line + indent;
    size_t text_len = len - indent;
    const char *problem;
    if (pool->section.failed)
        return 0;
    if (text[0] == '-' && (text_len == 1 || is_blank(text[1]))) {
        if (!pool->in_servers || indent < pool->key_indent)
            return shmring__import_fail_once(&pool->section, number,
                                             "a list item outside 'servers:'");
        size_t skip = 1;
        while (skip < text_len && is_blank(text[skip]))
            skip++;
        char *item = scalar(text + skip, text_len - skip, &problem);
        if (item == NULL)
            return problem != NULL
                       ? shmring__import_fail_once(&pool->section, number,
                                                   "%s is not supported", problem)
                       : SHMRING_ENOMEM;
        int err = pool_server(pool, item, number);
        free(item);
        return err;
    }
    if (pool->key_indent == 0)
        pool->key_indent = indent;
    if (indent != pool->key_indent)
        return shmring__import_fail_once(
            &pool->section, number,
            "indented by %zu, not %zu as the pool's other keys: nested "
            "mappings are not supported",
            indent, pool->key_indent);
    const char *colon = NULL;
    for (size_t i = 0; i < text_len; i++) {
        if (text[i] == ':' && (i + 1 == text_len || is_blank(text[i + 1]))) {
            colon = text + i;
            break;
        }
    }
    if (colon == NULL || colon == text)
        return shmring__import_fail_once(&pool->section, number,
                                         "expected 'KEY: VALUE', not '%s'",
                                         shmring__import_quote(quoted, text, text_len));
    const char *value = colon + 1;
    while (value < text + text_len && is_blank(*value))
        value++;
    char *scalar_value = scalar(value, (size_t)(text + text_len - value), &problem);
    if (scalar_value == NULL)
        return problem != NULL ? shmring__import_fail_once(&pool->section, number,
                                                           "%s is not supported", problem)
                               : SHMRING_ENOMEM;
    int err = pool_key(pool, text, (size_t)(colon - text), scalar_value, number);
    free(scalar_value);
    return err;
}

/* Sections are named in messages as nutcracker's own messages name pools. */
static const struct import_section_kind pool_kind = {
    .one = "pool",
    .many = "pools",
    .none = "no pool",
    .algorithm = SHMRING_ALGORITHM_TWEMPROXY,
};

/* A top-level `NAME:` line: a new pool. */
static int new_pool(struct reader *r, const char *text, size_t len, int number)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (len < 2 || text[len - 1] != ':' || memchr(text, ':', len - 1) != NULL)
        return shmring__import_fail(r->error, number,
                                    "expected a pool ('NAME:'), not '%s'",
                                    shmring__import_quote(quoted, text, len));
    void *pools = r->pools;
    int err =
        shmring__import_section_new(&pools, &r->count, &r->capacity, sizeof(r->pools[0]),
                                    text, len - 1, number, &pool_kind, r->error);
    r->pools = pools;
    return err;
}

static int read_lines(struct reader *r, const char *text, size_t len)
{
    int number = 0;
    for (const char *line = text; line < text + len;) {
        const char *newline = memchr(line, '\n', (size_t)(text + len - line));
        size_t line_len =
            newline != NULL ? (size_t)(newline - line) : (size_t)(text + len - line);
        const char *next = newline != NULL ? newline + 1 : text + len;
        number++;
        size_t content = content_length(line, line_len);
        size_t indent = 0;
        while (indent < content && line[indent] == ' ')
            indent++;
        int err = 0;
        if (indent < content && line[indent] == '\t') {
            err = shmring__import_fail(
                r->error, number, "a tab in the indentation (YAML allows spaces only)");
        } else if (content == 0) {
            /* blank or comment */
        } else if (indent == 0) {
            if (content == 3 && memcmp(line, "---", 3) == 0 && r->count == 0)
                err = 0;
            else
                err = new_pool(r, line, content, number);
        } else if (r->count == 0) {
            err = shmring__import_fail(r->error, number,
                                       "an indented line before any pool");
        } else {
            err = pool_line(&r->pools[r->count - 1], line, indent, content, number);
        }
        if (err != 0)
            return err;
        line = next;
    }
    return 0;
}

int shmring__import_twemproxy(const char *text, size_t len, const char *section,
                              shmring_nodeset_t **out, shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    struct reader r;
    memset(&r, 0, sizeof(r));
    r.error = error;
    int err = read_lines(&r, text, len);
    /* A pool ends only where the next one begins or the file ends, so an empty one is
     * found here. */
    for (size_t i = 0; err == 0 && i < r.count; i++) {
        struct pool *pool = &r.pools[i];
        if (pool->section.servers == 0)
            shmring__import_fail_once(&pool->section, pool->section.line,
                                      "pool '%s' has no servers",
                                      shmring__import_quote(quoted, pool->section.name,
                                                            strlen(pool->section.name)));
    }
    if (err == 0)
        err = shmring__import_take(r.pools, r.count, sizeof(r.pools[0]), section,
                                   &pool_kind, out, error);
    shmring__import_sections_free(r.pools, r.count, sizeof(r.pools[0]));
    return err;
}
