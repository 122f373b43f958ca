/*
 * Reading an HAProxy configuration (HAProxy 2.6): one `backend` or `listen` section
 * of a hash balance with `hash-type consistent`, as a node set of the `haproxy`
 * algorithm.
 *
 * The file is split as HAProxy's readcfgfile() splits it: one directive a line,
 * words separated by blanks, '#' starting a comment outside quotes, words quoted
 * with '"' or '\'', and outside single quotes a backslash escaping a blank, '#',
 * a quote, '$' or itself (\r, \n and \t are translated; before any other character
 * it stays). Environment variables ("${NAME}" in double quotes, "$NAME" outside quotes)
 * are refused: their values are not in the file. A line whose first word names a
 * section (global, defaults, frontend, backend, listen, and the other sections 2.6
 * knows) starts that section.
 *
 * A backend takes `balance` and `hash-type` from the defaults section before it (or
 * the one named by `from NAME`), and its servers take `default-server` options from
 * there and from the backend itself. Read and kept: `balance` of a hashed key (hdr,
 * uri, url_param, source, rdp-cookie: what the key is, is the caller's to give in a
 * lookup), `hash-type consistent [FUNCTION [avalanche]]`, `hash-balance-factor 0`,
 * and `server NAME ADDRESS` with `weight N` (1-256), `id N`, `disabled`, `enabled`
 * and the health-check and connection options that do not move keys while every
 * server is up. Refused, with the line and directive named: another balance
 * algorithm, `hash-type map-based` (HAProxy's default when no hash-type is given), a
 * bounded load (`hash-balance-factor` above 0), `backup` servers, `weight 0`,
 * `server-template`, what chooses a server before the hash (`use-server`, `cookie`,
 * `stick`), and any server option this reader does not know. The node of a server
 * is named by the server's name and addressed by its address as written; an `id`
 * becomes the node's hash key (see placement_haproxy.c for the ids of the others).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"

/* More words than a server line of this reader's options needs. */
#define LINE_WORDS_MAX 64
#define HAPROXY_WEIGHT_MAX 256u
#define HAPROXY_ID_MAX 2147483647u
/* Defaults sections remembered for `from NAME`. */
#define DEFAULTS_MAX 16

struct word {
    const char *text; /* NUL-terminated, in the line buffer */
    size_t len;
};

struct line {
    struct word words[LINE_WORDS_MAX];
    size_t count;
    int number;
};

/* What a proxy takes from a defaults section, or sets itself. */
struct settings {
    /* 0: no balance given; 1: a hashed key; 2: another algorithm (its line in
     * balance_line, its word in balance_word). */
    int balance;
    int balance_line;
    char balance_word[64];
    /* 0: no hash-type given (map-based); 1: consistent; 2: map-based given. */
    int hash_type;
    int hash_type_line;
    shmring_hash_t hash;
    uint32_t default_weight;
    bool default_disabled;
};

struct defaults {
    char name[128];
    struct settings settings;
};

/* One backend or listen section. */
struct proxy {
    struct import_section section; /* first: shmring__import_take() walks these */
    struct settings settings;
};

struct reader {
    struct proxy *proxies;
    size_t count;
    size_t capacity;
    struct defaults defaults[DEFAULTS_MAX];
    size_t defaults_count;
    struct settings last_defaults;
    /* The named defaults section being read, or NULL. */
    struct defaults *named;
    shmring_import_error_t *error;
};

static bool word_is(const struct word *word, const char *text)
{
    return word->len == strlen(text) && memcmp(word->text, text, word->len) == 0;
}

static const char *quote(char *quoted, const struct word *word)
{
    return shmring__import_quote(quoted, word->text, word->len);
}

/*
 * Splits the line of LEN bytes at TEXT into LINE's words, unescaped into BUFFER (LEN +
 * LINE_WORDS_MAX bytes at least). Returns 0 or SHMRING_EINVAL with *error filled.
 */
static int split_line(const char *text, size_t len, char *buffer, struct line *line,
                      shmring_import_error_t *error)
{
    size_t i = 0, out = 0;
    line->count = 0;
    for (;;) {
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
            i++;
        if (i == len || text[i] == '#')
            return 0;
        if (line->count == LINE_WORDS_MAX)
            return shmring__import_fail(error, line->number,
                                        "more than %d words on one line", LINE_WORDS_MAX);
        char *start = buffer + out;
        char in_quote = 0;
        while (i < len) {
            char c = text[i];
            if (in_quote == 0 && (c == ' ' || c == '\t' || c == '\r' || c == '#'))
                break;
            if (c == in_quote) {
                in_quote = 0;
                i++;
                continue;
            }
            if (in_quote == 0 && (c == '"' || c == '\'')) {
                in_quote = c;
                i++;
                continue;
            }
            if (in_quote != '\'' && c == '$')
                return shmring__import_fail(
                    error, line->number,
                    "an environment variable: its value is not in the file");
            if (in_quote != '\'' && c == '\\' && i + 1 < len) {
                /* HAProxy's escapes (tools.c parse_line()); a backslash before any
                 * other character stays as it is. */
                char next = text[i + 1];
                if (next == ' ' || next == '\\' || next == '#' || next == '\'' ||
                    next == '"' || next == '$') {
                    c = next;
                    i++;
                } else if (next == 'r' || next == 'n' || next == 't') {
                    c = next == 'r' ? '\r' : next == 'n' ? '\n' : '\t';
                    i++;
                } else if (next == 'x') {
                    return shmring__import_fail(error, line->number,
                                                "a '\\x' escape: not supported by this "
                                                "reader");
                }
            }
            buffer[out++] = c;
            i++;
        }
        if (in_quote != 0)
            return shmring__import_fail(error, line->number, "an unterminated quote");
        buffer[out++] = '\0';
        line->words[line->count].text = start;
        line->words[line->count].len = (size_t)(buffer + out - 1 - start);
        line->count++;
    }
}

static bool starts_section(const struct word *word)
{
    static const char *const sections[] = {
        "global",   "defaults", "frontend", "backend",     "listen", "peers", "resolvers",
        "userlist", "mailers",  "program",  "http-errors", "ring",   "cache", "fcgi-app"};
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        if (word_is(word, sections[i]))
            return true;
    }
    return false;
}

/* HAProxy's hash functions by `hash-type consistent` words, avalanche or not. */
static int hash_of(const struct word *function, bool avalanche, shmring_hash_t *hash)
{
    static const struct {
        const char *name;
        shmring_hash_t plain, avalanche;
    } functions[] = {
        {"sdbm", SHMRING_HASH_SDBM, SHMRING_HASH_SDBM_AVALANCHE},
        {"djb2", SHMRING_HASH_DJB2, SHMRING_HASH_DJB2_AVALANCHE},
        {"wt6", SHMRING_HASH_WT6, SHMRING_HASH_WT6_AVALANCHE},
        {"crc32", SHMRING_HASH_CRC32, SHMRING_HASH_CRC32_AVALANCHE},
    };
    for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
        if (word_is(function, functions[i].name)) {
            *hash = avalanche ? functions[i].avalanche : functions[i].plain;
            return 0;
        }
    }
    return -1;
}

/* `balance ...` into SETTINGS. */
static int read_balance(const struct line *line, struct settings *settings,
                        shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (line->count < 2)
        return shmring__import_fail(error, line->number,
                                    "'balance' without an algorithm");
    const struct word *method = &line->words[1];
    bool hashed = (method->len > 4 && memcmp(method->text, "hdr(", 4) == 0 &&
                   method->text[method->len - 1] == ')') ||
                  word_is(method, "uri") || word_is(method, "url_param") ||
                  word_is(method, "source") || word_is(method, "rdp-cookie") ||
                  (method->len > 11 && memcmp(method->text, "rdp-cookie(", 11) == 0 &&
                   method->text[method->len - 1] == ')');
    settings->balance = hashed ? 1 : 2;
    settings->balance_line = line->number;
    snprintf(settings->balance_word, sizeof(settings->balance_word), "%s",
             quote(quoted, method));
    return 0;
}

/* `hash-type ...` into SETTINGS. */
static int read_hash_type(const struct line *line, struct settings *settings,
                          shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (line->count < 2 || line->count > 4)
        return shmring__import_fail(
            error, line->number,
            "'hash-type' takes 'consistent' or 'map-based', a function and 'avalanche'");
    settings->hash_type_line = line->number;
    if (word_is(&line->words[1], "map-based")) {
        settings->hash_type = 2;
        return 0;
    }
    if (!word_is(&line->words[1], "consistent"))
        return shmring__import_fail(error, line->number,
                                    "'hash-type %s': only 'consistent' places keys on a "
                                    "tree, as 'haproxy' does",
                                    quote(quoted, &line->words[1]));
    settings->hash_type = 1;
    /* `hash-type consistent` alone is sdbm with avalanche (cfgparse-listen.c). */
    if (line->count == 2) {
        settings->hash = SHMRING_HASH_SDBM_AVALANCHE;
        return 0;
    }
    bool avalanche = line->count == 4;
    if (avalanche && !word_is(&line->words[3], "avalanche"))
        return shmring__import_fail(error, line->number,
                                    "'hash-type' modifier '%s': only 'avalanche' exists",
                                    quote(quoted, &line->words[3]));
    if (hash_of(&line->words[2], avalanche, &settings->hash) != 0)
        return shmring__import_fail(error, line->number,
                                    "'hash-type' function '%s': HAProxy has sdbm, djb2, "
                                    "wt6 and crc32",
                                    quote(quoted, &line->words[2]));
    return 0;
}

/* Server options that do not move keys while every server is up, with whether
 * each takes a value. */
static int inert_option(const struct word *word)
{
    static const char *const flags[] = {"check",       "no-check",      "observe-layer4",
                                        "send-proxy",  "no-send-proxy", "tfo",
                                        "agent-check", "no-agent-check"};
    static const char *const valued[] = {
        "inter",        "fastinter",      "downinter",
        "rise",         "fall",           "maxconn",
        "maxqueue",     "minconn",        "port",
        "addr",         "slowstart",      "observe",
        "error-limit",  "on-error",       "on-marked-down",
        "on-marked-up", "pool-max-conn",  "pool-purge-delay",
        "max-reuse",    "check-proto",    "proto",
        "agent-port",   "agent-inter",    "agent-addr",
        "resolvers",    "resolve-prefer", "init-addr",
        "source"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        if (word_is(word, flags[i]))
            return 1;
    }
    for (size_t i = 0; i < sizeof(valued) / sizeof(valued[0]); i++) {
        if (word_is(word, valued[i]))
            return 2;
    }
    return 0;
}

/*
 * Reads the options of a `server` (from word FIRST of LINE) or a `default-server`
 * line: *WEIGHT, *ID (0: none) and *DISABLED. Returns 0 or SHMRING_EINVAL.
 */
static int read_server_options(const struct line *line, size_t first, uint32_t *weight,
                               uint32_t *id, bool *disabled,
                               shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    for (size_t i = first; i < line->count; i++) {
        const struct word *option = &line->words[i];
        const struct word *value = i + 1 < line->count ? &line->words[i + 1] : NULL;
        if (word_is(option, "weight") || word_is(option, "id")) {
            bool is_weight = option->text[0] == 'w';
            uint32_t number;
            if (value == NULL)
                return shmring__import_fail(error, line->number, "'%s' without a value",
                                            option->text);
            if (is_weight && word_is(value, "0"))
                return shmring__import_fail(
                    error, line->number,
                    "'weight 0': a server that takes no keys cannot be a node");
            if (!shmring__import_number(value->text, value->len,
                                        is_weight ? HAPROXY_WEIGHT_MAX : HAPROXY_ID_MAX,
                                        &number))
                return shmring__import_fail(error, line->number,
                                            is_weight ? "'weight %s': HAProxy's weights "
                                                        "are 1 to 256"
                                                      : "'id %s': an id is 1 to "
                                                        "2147483647",
                                            quote(quoted, value));
            if (is_weight)
                *weight = number;
            else
                *id = number;
            i++;
        } else if (word_is(option, "disabled")) {
            *disabled = true;
        } else if (word_is(option, "enabled")) {
            *disabled = false;
        } else if (word_is(option, "backup")) {
            return shmring__import_fail(error, line->number,
                                        "'backup': backup servers take keys only while "
                                        "no other server is up, which a node set cannot "
                                        "say");
        } else {
            int kind = inert_option(option);
            if (kind == 0)
                return shmring__import_fail(error, line->number,
                                            "server option '%s' is not known to this "
                                            "reader",
                                            quote(quoted, option));
            if (kind == 2) {
                if (value == NULL)
                    return shmring__import_fail(error, line->number,
                                                "'%s' without a value",
                                                quote(quoted, option));
                i++;
            }
        }
    }
    return 0;
}

static int read_server(struct proxy *proxy, const struct line *line)
{
    char quoted[IMPORT_QUOTE_SIZE];
    struct import_section *section = &proxy->section;
    if (line->count < 3)
        return shmring__import_fail_once(section, line->number,
                                         "'server' needs a name and an address");
    uint32_t weight = proxy->settings.default_weight, id = 0;
    bool disabled = proxy->settings.default_disabled;
    shmring_import_error_t problem;
    if (read_server_options(line, 3, &weight, &id, &disabled, &problem) != 0)
        return shmring__import_fail_once(section, line->number, "%s", problem.text);
    char id_text[16];
    if (id != 0) {
        snprintf(id_text, sizeof(id_text), "%u", (unsigned)id);
        /* HAProxy refuses an id given twice in a backend ("custom id already
         * used"). */
        for (size_t i = 0; i < shmring_nodeset_count(section->set); i++) {
            shmring_node_info_t node;
            if (shmring_nodeset_get(section->set, i, &node) == 0 &&
                node.hash_key != NULL && strcmp(node.hash_key, id_text) == 0)
                return shmring__import_fail_once(
                    section, line->number, "'id %s' is already server '%s''s", id_text,
                    shmring__import_quote(quoted, node.name, strlen(node.name)));
        }
    }
    int err =
        shmring__import_add(section->set, line->words[1].text, line->words[2].text,
                            weight, disabled ? SHMRING_STATE_DOWN : SHMRING_STATE_UP,
                            id != 0 ? id_text : NULL, line->number, &problem);
    if (err == SHMRING_EINVAL)
        return shmring__import_fail_once(section, line->number, "%s", problem.text);
    if (err != 0)
        return err;
    section->servers++;
    return 0;
}

/* A directive of a backend or listen section; what it does not name is skipped. */
static int read_proxy_line(struct proxy *proxy, const struct line *line)
{
    char quoted[IMPORT_QUOTE_SIZE];
    struct import_section *section = &proxy->section;
    const struct word *keyword = &line->words[0];
    shmring_import_error_t problem;
    if (word_is(keyword, "server"))
        return read_server(proxy, line);
    if (word_is(keyword, "balance")) {
        if (read_balance(line, &proxy->settings, &problem) != 0)
            return shmring__import_fail_once(section, line->number, "%s", problem.text);
        return 0;
    }
    if (word_is(keyword, "hash-type")) {
        if (read_hash_type(line, &proxy->settings, &problem) != 0)
            return shmring__import_fail_once(section, line->number, "%s", problem.text);
        return 0;
    }
    if (word_is(keyword, "default-server")) {
        uint32_t id = 0;
        if (read_server_options(line, 1, &proxy->settings.default_weight, &id,
                                &proxy->settings.default_disabled, &problem) != 0)
            return shmring__import_fail_once(section, line->number, "%s", problem.text);
        if (id != 0)
            return shmring__import_fail_once(section, line->number,
                                             "'default-server' with an 'id'");
        return 0;
    }
    if (word_is(keyword, "hash-balance-factor")) {
        if (line->count == 2 && word_is(&line->words[1], "0"))
            return 0;
        return shmring__import_fail_once(section, line->number,
                                         "'hash-balance-factor': bounded loads move keys "
                                         "by the servers' connections, which a node set "
                                         "cannot follow");
    }
    if (word_is(keyword, "server-template"))
        return shmring__import_fail_once(section, line->number,
                                         "'server-template' is not supported: name each "
                                         "server with 'server'");
    static const char *const choosers[] = {"use-server", "cookie", "stick", "stick-table",
                                           "dynamic-cookie-key"};
    for (size_t i = 0; i < sizeof(choosers) / sizeof(choosers[0]); i++) {
        if (word_is(keyword, choosers[i]))
            return shmring__import_fail_once(
                section, line->number,
                "'%s' is not supported in a backend: it chooses servers by other means "
                "than the hash",
                quote(quoted, keyword));
    }
    return 0;
}

/* Checks, at the end of PROXY's section, that its balance and hash-type place keys
 * on the tree, and gives its node set that hash. */
static int finish_proxy(struct proxy *proxy)
{
    struct import_section *section = &proxy->section;
    const struct settings *s = &proxy->settings;
    char quoted[IMPORT_QUOTE_SIZE];
    if (section->failed)
        return 0;
    if (section->servers == 0)
        return shmring__import_fail_once(
            section, section->line, "backend '%s' has no servers",
            shmring__import_quote(quoted, section->name, strlen(section->name)));
    if (s->balance == 0)
        return shmring__import_fail_once(section, section->line,
                                         "no 'balance': HAProxy's default is roundrobin, "
                                         "which does not hash keys");
    if (s->balance == 2)
        return shmring__import_fail_once(section, s->balance_line,
                                         "'balance %s' does not hash keys: only hdr(), "
                                         "uri, url_param, source and rdp-cookie do",
                                         s->balance_word);
    if (s->hash_type != 1)
        return shmring__import_fail_once(
            section, s->hash_type ? s->hash_type_line : section->line,
            "%s: only 'hash-type consistent' places keys on a tree, as 'haproxy' does",
            s->hash_type ? "'hash-type map-based'"
                         : "no 'hash-type' (HAProxy's default is map-based)");
    shmring_params_t params;
    shmring_nodeset_params(section->set, &params);
    params.hash = s->hash;
    return shmring_nodeset_set_params(section->set, &params);
}

static const struct import_section_kind backend_kind = {
    .one = "backend",
    .many = "backends",
    .none = "no backend or listen section",
    .algorithm = SHMRING_ALGORITHM_HAPROXY,
};

static int start_proxy(struct reader *r, const struct line *line)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (line->count < 2)
        return shmring__import_fail(r->error, line->number, "'%s' without a name",
                                    line->words[0].text);
    int err = shmring__import_section_new(
        (void **)&r->proxies, &r->count, &r->capacity, sizeof(*r->proxies),
        line->words[1].text, line->words[1].len, line->number, &backend_kind, r->error);
    if (err != 0)
        return err;
    struct proxy *proxy = &r->proxies[r->count - 1];
    proxy->settings = r->last_defaults;
    if (line->count == 4 && word_is(&line->words[2], "from")) {
        for (size_t i = 0; i < r->defaults_count; i++) {
            if (strcmp(r->defaults[i].name, line->words[3].text) == 0) {
                proxy->settings = r->defaults[i].settings;
                return 0;
            }
        }
        return shmring__import_fail_once(&proxy->section, line->number,
                                         "no defaults section '%s' before this line",
                                         quote(quoted, &line->words[3]));
    }
    if (line->count != 2)
        return shmring__import_fail_once(
            &proxy->section, line->number, "'%s %s' takes a name and 'from NAME' only",
            line->words[0].text, quote(quoted, &line->words[1]));
    return 0;
}

/* A directive of a defaults section: the settings a later proxy starts from. */
static int read_defaults_line(struct reader *r, const struct line *line)
{
    const struct word *keyword = &line->words[0];
    struct settings *s = &r->last_defaults;
    uint32_t id = 0;
    int err = 0;
    if (word_is(keyword, "balance"))
        err = read_balance(line, s, r->error);
    else if (word_is(keyword, "hash-type"))
        err = read_hash_type(line, s, r->error);
    else if (word_is(keyword, "default-server"))
        err = read_server_options(line, 1, &s->default_weight, &id, &s->default_disabled,
                                  r->error);
    else if (word_is(keyword, "hash-balance-factor") &&
             !(line->count == 2 && word_is(&line->words[1], "0")))
        err = shmring__import_fail(r->error, line->number,
                                   "'hash-balance-factor': bounded loads move keys by "
                                   "the servers' connections, which a node set cannot "
                                   "follow");
    if (err == 0 && r->named != NULL)
        r->named->settings = *s;
    return err;
}

static const struct settings initial_settings = {.default_weight = 1};

int shmring__import_haproxy(const char *text, size_t len, const char *section,
                            shmring_nodeset_t **out, shmring_import_error_t *error)
{
    struct reader r = {.error = error, .last_defaults = initial_settings};
    char *buffer = malloc(len + LINE_WORDS_MAX + 1);
    if (buffer == NULL)
        return SHMRING_ENOMEM;
    /* 0: outside a section, 1: defaults, 2: backend or listen, 3: any other. */
    int in = 0;
    struct line line;
    line.number = 0;
    int err = 0;
    const char *p = text, *end = text + len;
    while (err == 0 && p < end) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        const char *stop = newline != NULL ? newline : end;
        line.number++;
        err = split_line(p, (size_t)(stop - p), buffer, &line, error);
        p = newline != NULL ? newline + 1 : end;
        if (err != 0 || line.count == 0)
            continue;
        if (starts_section(&line.words[0])) {
            if (in == 2)
                err = finish_proxy(&r.proxies[r.count - 1]);
            if (err != 0)
                break;
            if (word_is(&line.words[0], "defaults")) {
                /* Each defaults section starts again from HAProxy's defaults. */
                in = 1;
                r.last_defaults = initial_settings;
                r.named = NULL;
                if (line.count >= 2) {
                    if (r.defaults_count == DEFAULTS_MAX) {
                        err = shmring__import_fail(error, line.number,
                                                   "more than %d named defaults sections",
                                                   DEFAULTS_MAX);
                        break;
                    }
                    struct defaults *d = &r.defaults[r.defaults_count++];
                    snprintf(d->name, sizeof(d->name), "%s", line.words[1].text);
                    d->settings = initial_settings;
                    r.named = d;
                }
            } else if (word_is(&line.words[0], "backend") ||
                       word_is(&line.words[0], "listen")) {
                in = 2;
                err = start_proxy(&r, &line);
            } else {
                in = 3;
            }
            continue;
        }
        if (in == 1)
            err = read_defaults_line(&r, &line);
        else if (in == 2)
            err = read_proxy_line(&r.proxies[r.count - 1], &line);
    }
    if (err == 0 && in == 2)
        err = finish_proxy(&r.proxies[r.count - 1]);
    free(buffer);
    if (err == 0)
        err = shmring__import_take(r.proxies, r.count, sizeof(*r.proxies), section,
                                   &backend_kind, out, error);
    shmring__import_sections_free(r.proxies, r.count, sizeof(*r.proxies));
    return err;
}
