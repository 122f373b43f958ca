/*
 * Reading an nginx configuration: the `upstream` block of `hash KEY consistent`
 * (ngx_http_upstream_hash_module, and its stream twin) as a node set of the `nginx`
 * algorithm.
 *
 * The file is split into words as nginx's ngx_conf_read_token() splits it: words
 * separated by white space, directives ended by ';' or by a block's '{', '}' closing
 * a block, '#' starting a comment where a word could start, and words quoted with
 * '"' or '\'' in which a backslash escapes the next character (\t, \r and \n are
 * translated). Every block is walked; directives outside upstream blocks do not
 * place keys and are skipped. Each upstream block is read into its own node set or
 * its own error, so that an upstream of another balancing method does not stop the
 * import of the one asked for.
 *
 * Inside the upstream: `hash KEY consistent` (required), `server ADDRESS [weight=N]
 * [down] [max_fails=N] [fail_timeout=T] [max_conns=N]`, and the connection settings
 * keepalive, keepalive_requests, keepalive_time, keepalive_timeout and zone. A node
 * is named and addressed by the server's address exactly as written: that string,
 * not what it resolves to, is what nginx hashes into the server's points.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"

/* More words than any upstream directive has: a longer one is an error. */
#define DIRECTIVE_WORDS_MAX 64
/* Deeper nesting than any configuration needs; it bounds the recursion. */
#define BLOCK_DEPTH_MAX 32

struct word {
    const char *text; /* NUL-terminated, in the lexer's scratch buffer */
    size_t len;
};

struct directive {
    struct word words[DIRECTIVE_WORDS_MAX];
    size_t count;
    /* The line of the first word (of the terminator when there is no word). */
    int line;
    /* ';', '{', '}', or 0 at the end of the file. */
    char terminator;
};

struct lexer {
    const char *p;
    const char *end;
    int line;
    /* Unescaped words of the current directive: never longer than the text they
     * come from, plus one NUL each, so twice the file's length always suffices. */
    char *scratch;
    size_t used;
};

/* One upstream block: its node set, or the first problem found in it. */
struct upstream {
    struct import_section section; /* first: shmring__import_take() walks these */
    bool has_hash;
};

struct reader {
    struct lexer lex;
    struct upstream *upstreams;
    size_t count;
    size_t capacity;
    shmring_import_error_t *error;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool word_is(const struct word *word, const char *text)
{
    return word->len == strlen(text) && memcmp(word->text, text, word->len) == 0;
}

static bool word_starts(const struct word *word, const char *prefix)
{
    size_t len = strlen(prefix);
    return word->len >= len && memcmp(word->text, prefix, len) == 0;
}

static const char *quote(char *quoted, const struct word *word)
{
    return shmring__import_quote(quoted, word->text, word->len);
}

/* Reads one word starting at the lexer's position into the scratch buffer. */
static int read_word(struct lexer *lex, struct word *word, shmring_import_error_t *error)
{
    char *out = lex->scratch + lex->used;
    size_t len = 0;
    char quote_char = 0;
    int start_line = lex->line;
    if (*lex->p == '"' || *lex->p == '\'')
        quote_char = *lex->p++;
    for (;;) {
        if (lex->p == lex->end) {
            if (quote_char != 0)
                return shmring__import_fail(error, start_line,
                                            "unexpected end of file in a quoted word");
            break;
        }
        char c = *lex->p;
        if (quote_char != 0 && c == quote_char) {
            lex->p++;
            /* nginx wants a quoted word to end where a word can end. */
            if (lex->p != lex->end && !is_space(*lex->p) && *lex->p != ';' &&
                *lex->p != '{' && *lex->p != '}')
                return shmring__import_fail(error, lex->line,
                                            "unexpected character after a quoted word");
            break;
        }
        if (quote_char == 0 && (is_space(c) || c == ';' || c == '{' || c == '}'))
            break;
        if (quote_char == 0 && c == '$' && lex->p + 1 < lex->end && lex->p[1] == '{') {
            /* "${name}": the braces belong to the variable, not to a block. */
            const char *close = memchr(lex->p, '}', (size_t)(lex->end - lex->p));
            if (close == NULL)
                return shmring__import_fail(error, lex->line,
                                            "unterminated variable name '${'");
            size_t n = (size_t)(close - lex->p) + 1;
            for (size_t i = 0; i < n; i++)
                lex->line += lex->p[i] == '\n';
            memcpy(out + len, lex->p, n);
            len += n;
            lex->p += n;
            continue;
        }
        if (c == '\\' && lex->p + 1 < lex->end) {
            char next = lex->p[1];
            lex->p += 2;
            switch (next) {
            case 't':
                out[len++] = '\t';
                break;
            case 'r':
                out[len++] = '\r';
                break;
            case 'n':
                out[len++] = '\n';
                break;
            case '"':
            case '\'':
            case '\\':
                out[len++] = next;
                break;
            default:
                out[len++] = '\\';
                out[len++] = next;
                lex->line += next == '\n';
                break;
            }
            continue;
        }
        lex->line += c == '\n';
        out[len++] = c;
        lex->p++;
    }
    out[len] = '\0';
    word->text = out;
    word->len = len;
    lex->used += len + 1;
    return 0;
}

/* Reads the next directive: its words and what ends it. */
static int read_directive(struct lexer *lex, struct directive *d,
                          shmring_import_error_t *error)
{
    d->count = 0;
    d->line = 0;
    lex->used = 0;
    for (;;) {
        while (lex->p < lex->end && is_space(*lex->p))
            lex->line += *lex->p++ == '\n';
        if (d->line == 0)
            d->line = lex->line;
        if (lex->p == lex->end) {
            d->terminator = 0;
            return 0;
        }
        char c = *lex->p;
        if (c == '#') {
            while (lex->p < lex->end && *lex->p != '\n')
                lex->p++;
            continue;
        }
        if (c == ';' || c == '{' || c == '}') {
            lex->p++;
            d->terminator = c;
            return 0;
        }
        if (d->count == DIRECTIVE_WORDS_MAX)
            return shmring__import_fail(
                error, d->line, "a directive of more than %d words", DIRECTIVE_WORDS_MAX);
        int err = read_word(lex, &d->words[d->count], error);
        if (err != 0)
            return err;
        d->count++;
    }
}

/* `server ADDRESS [PARAMETER...]`. Returns 0 or SHMRING_ENOMEM. */
static int upstream_server(struct upstream *u, const struct directive *d)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (d->count < 2)
        return shmring__import_fail_once(&u->section, d->line,
                                         "'server' needs an address");
    const struct word *address = &d->words[1];
    uint32_t weight = 1;
    shmring_state_t state = SHMRING_STATE_UP;
    for (size_t i = 2; i < d->count; i++) {
        const struct word *parameter = &d->words[i];
        if (word_starts(parameter, "weight=")) {
            if (!shmring__import_number(parameter->text + 7, parameter->len - 7,
                                        SHMRING_WEIGHT_MAX, &weight))
                return shmring__import_fail_once(
                    &u->section, d->line,
                    "'%s': the weight must be an integer from 1 to %d",
                    quote(quoted, parameter), SHMRING_WEIGHT_MAX);
        } else if (word_is(parameter, "down")) {
            state = SHMRING_STATE_DOWN;
        } else if ((word_starts(parameter, "max_fails=") ||
                    word_starts(parameter, "fail_timeout=") ||
                    word_starts(parameter, "max_conns=")) &&
                   parameter->text[parameter->len - 1] != '=') {
            /* They act only while servers fail or are full: no key moves for them
             * while every server answers. */
        } else if (word_is(parameter, "backup")) {
            return shmring__import_fail_once(
                &u->section, d->line,
                "'backup' is not supported: nginx refuses it with 'hash'");
        } else {
            return shmring__import_fail_once(&u->section, d->line,
                                             "server parameter '%s' is not supported",
                                             quote(quoted, parameter));
        }
    }
    if (u->section.failed)
        return 0;
    int err = shmring__import_add(u->section.set, address->text, address->text, weight,
                                  state, NULL, d->line, &u->section.error);
    if (err == SHMRING_EINVAL) {
        u->section.failed = true;
        return 0;
    }
    u->section.servers++;
    return err;
}

/* One directive of an upstream block. Returns 0 or SHMRING_ENOMEM. */
static int upstream_directive(struct upstream *u, const struct directive *d)
{
    char quoted[IMPORT_QUOTE_SIZE];
    const struct word *name = &d->words[0];
    if (u->section.failed)
        return 0;
    if (d->terminator == '{')
        return shmring__import_fail_once(&u->section, d->line,
                                         "a block ('%s {') inside an upstream",
                                         quote(quoted, name));
    if (word_is(name, "server"))
        return upstream_server(u, d);
    if (word_is(name, "hash")) {
        if (u->has_hash)
            return shmring__import_fail_once(&u->section, d->line,
                                             "'hash' is given twice");
        if (d->count == 2)
            return shmring__import_fail_once(
                &u->section, d->line,
                "'hash' without 'consistent' is not supported: nginx "
                "then picks a server by the hash modulo the servers");
        if (d->count != 3 || !word_is(&d->words[2], "consistent"))
            return shmring__import_fail_once(
                &u->section, d->line,
                "'hash' takes a key and 'consistent', nothing else");
        u->has_hash = true;
        return 0;
    }
    static const char *const balancers[] = {"ip_hash",    "least_conn", "random",
                                            "least_time", "sticky",     "ntlm"};
    for (size_t i = 0; i < sizeof(balancers) / sizeof(balancers[0]); i++) {
        if (word_is(name, balancers[i]))
            return shmring__import_fail_once(
                &u->section, d->line,
                "'%s' is not supported: only 'hash KEY consistent' "
                "places keys on a continuum",
                balancers[i]);
    }
    /* Connection settings: they never choose a server. */
    static const char *const connection[] = {
        "keepalive", "keepalive_requests", "keepalive_time", "keepalive_timeout", "zone"};
    for (size_t i = 0; i < sizeof(connection) / sizeof(connection[0]); i++) {
        if (word_is(name, connection[i]))
            return 0;
    }
    return shmring__import_fail_once(&u->section, d->line,
                                     "'%s' is not supported in an upstream",
                                     quote(quoted, name));
}

static int read_block(struct reader *r, int depth, int open_line);

/* Sections are named in messages as nginx names its blocks. */
static const struct import_section_kind upstream_kind = {
    .one = "upstream",
    .many = "upstream blocks",
    .none = "no upstream block",
    .algorithm = SHMRING_ALGORITHM_NGINX,
};

/* Reads an upstream block, its `upstream NAME {` in D, into a new entry. */
static int read_upstream(struct reader *r, const struct directive *d)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (d->count != 2)
        return shmring__import_fail(r->error, d->line, "'upstream' takes one name");
    void *upstreams = r->upstreams;
    int err = shmring__import_section_new(
        &upstreams, &r->count, &r->capacity, sizeof(r->upstreams[0]), d->words[1].text,
        d->words[1].len, d->line, &upstream_kind, r->error);
    r->upstreams = upstreams;
    if (err != 0)
        return err;
    struct upstream *u = &r->upstreams[r->count - 1];

    for (;;) {
        struct directive inner;
        err = read_directive(&r->lex, &inner, r->error);
        if (err != 0)
            return err;
        if (inner.terminator == 0)
            return shmring__import_fail(
                r->error, u->section.line,
                "unexpected end of file: upstream '%s' is not "
                "closed with '}'",
                shmring__import_quote(quoted, u->section.name, strlen(u->section.name)));
        if (inner.terminator == '}') {
            if (inner.count != 0)
                return shmring__import_fail(r->error, inner.line, "unexpected '}'");
            break;
        }
        if (inner.count == 0)
            return shmring__import_fail(r->error, inner.line, "unexpected '%c'",
                                        inner.terminator);
        err = upstream_directive(u, &inner);
        if (err != 0)
            return err;
        if (inner.terminator == '{') {
            /* The block is read to its end (U has already failed): an upstream in it
             * may grow r->upstreams, so U is found again by its index. */
            size_t index = (size_t)(u - r->upstreams);
            err = read_block(r, 1, inner.line);
            if (err != 0)
                return err;
            u = &r->upstreams[index];
        }
    }
    if (!u->section.failed && !u->has_hash)
        shmring__import_fail_once(
            &u->section, u->section.line,
            "upstream '%s' has no 'hash KEY consistent': nginx would balance "
            "it round robin",
            shmring__import_quote(quoted, u->section.name, strlen(u->section.name)));
    if (!u->section.failed && u->section.servers == 0)
        shmring__import_fail_once(
            &u->section, u->section.line, "upstream '%s' has no servers",
            shmring__import_quote(quoted, u->section.name, strlen(u->section.name)));
    return 0;
}

/* Reads a block's directives up to its '}' (DEPTH > 0) or the end of the file. */
static int read_block(struct reader *r, int depth, int open_line)
{
    if (depth > BLOCK_DEPTH_MAX)
        return shmring__import_fail(r->error, open_line,
                                    "blocks nested more than %d deep", BLOCK_DEPTH_MAX);
    for (;;) {
        struct directive d;
        int err = read_directive(&r->lex, &d, r->error);
        if (err != 0)
            return err;
        if (d.terminator == 0) {
            if (d.count != 0)
                return shmring__import_fail(r->error, d.line,
                                            "unexpected end of file, expecting ';'");
            if (depth > 0)
                return shmring__import_fail(r->error, open_line,
                                            "unexpected end of file: the block opened "
                                            "here is not closed with '}'");
            return 0;
        }
        if (d.terminator == '}' && d.count == 0 && depth > 0)
            return 0;
        if (d.terminator == '}' || d.count == 0)
            return shmring__import_fail(r->error, d.line, "unexpected '%c'",
                                        d.terminator);
        if (d.terminator == '{') {
            if (word_is(&d.words[0], "upstream"))
                err = read_upstream(r, &d);
            else
                err = read_block(r, depth + 1, d.line);
            if (err != 0)
                return err;
        }
        /* Other directives do not place keys. */
    }
}

int shmring__import_nginx(const char *text, size_t len, const char *section,
                          shmring_nodeset_t **out, shmring_import_error_t *error)
{
    struct reader r;
    memset(&r, 0, sizeof(r));
    r.error = error;
    r.lex.p = text;
    r.lex.end = text + len;
    r.lex.line = 1;
    r.lex.scratch = malloc(2 * len + 2);
    if (r.lex.scratch == NULL)
        return SHMRING_ENOMEM;
    int err = read_block(&r, 0, 1);
    if (err == 0)
        err = shmring__import_take(r.upstreams, r.count, sizeof(r.upstreams[0]), section,
                                   &upstream_kind, out, error);
    shmring__import_sections_free(r.upstreams, r.count, sizeof(r.upstreams[0]));
    free(r.lex.scratch);
    return err;
}
