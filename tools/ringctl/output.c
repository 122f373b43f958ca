/*
 * The rules everything ringctl writes shares: diagnostics on stderr, and results on
 * stdout as text or JSON, with one set of rules for both (how keys are escaped, how
 * records end, how many digits a number gets, which keys are null); and the results
 * that need no file of their own (lookup's answers, dump's and import's documents,
 * --version) and the help's word wrapping. Each command's own report is formatted
 * in its output_*.c file (see output.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringctl.h"

/* ---- Diagnostics ---------------------------------------------------------------- */

/*
 * The length of the UTF-8 sequence at TEXT (LEN > 0 bytes left) if it encodes a
 * printable character, else 0. Valid means as RFC 3629 says: shortest form, no
 * surrogates, nothing above U+10FFFF. The C0 and C1 controls and DEL are not
 * printable: a terminal would act on them.
 */
static size_t printable_length(const unsigned char *text, size_t len)
{
    unsigned char lead = text[0];
    if (lead < 0x80)
        return lead >= 0x20 && lead != 0x7f ? 1 : 0;
    /* The sequence's length and the smallest code point it may encode (anything
     * less is an overlong form), from its lead byte. */
    size_t length;
    uint32_t least;
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        least = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        least = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        least = 0x10000;
    } else {
        return 0;
    }
    uint32_t code = lead & (0x7fu >> length);
    if (len < length)
        return 0;
    for (size_t i = 1; i < length; i++) {
        if ((text[i] & 0xc0) != 0x80)
            return 0;
        code = code << 6 | (text[i] & 0x3f);
    }
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ||
        code <= 0x9f)
        return 0;
    return length;
}

/* Prints "ringctl: [KIND: ]MESSAGE" as one line on stderr. Every byte that is not
 * part of a printable UTF-8 character (controls, C1 controls such as CSI, invalid
 * UTF-8: from a key, a node name or a file name) is shown as '?', so the message
 * stays one line and a terminal acts on none of it. */
static void diagnose(const char *kind, const char *format, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void diagnose(const char *kind, const char *format, va_list ap)
{
    char message[LINE_MAX_BYTES];
    vsnprintf(message, sizeof(message), format, ap);
    const unsigned char *text = (const unsigned char *)message;
    size_t len = strlen(message);
    fprintf(stderr, "ringctl: %s%s", kind, kind[0] != '\0' ? ": " : "");
    for (size_t i = 0; i < len;) {
        size_t printable = printable_length(text + i, len - i);
        if (printable > 0) {
            fwrite(text + i, 1, printable, stderr);
            i += printable;
        } else {
            fputc('?', stderr);
            i++;
        }
    }
    fputc('\n', stderr);
}

int ringctl_fail(int status, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    diagnose("error", format, ap);
    va_end(ap);
    return status;
}

void ringctl_warn(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    diagnose("warning", format, ap);
    va_end(ap);
}

void ringctl_note(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    diagnose("", format, ap);
    va_end(ap);
}

/* ---- Standard output ------------------------------------------------------------ */

/* The errno value of the first write to stdout that failed (0: none). stdio keeps
 * only an error flag, and the write that failed may be long past when the output is
 * checked: a large --help or dump fails while it is being written. This is the state
 * of the process's stdout, not an input of any command. */
static int first_write_errno;

/* Writes stdout's buffered bytes to descriptor 1, keeping the first error. Returns
 * how many bytes it wrote: fopencookie(3) takes 0 as the error (glibc's stdio
 * miscounts a negative value and reads past its buffer). */
static ssize_t write_stdout(void *cookie, const char *buffer, size_t size)
{
    (void)cookie;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(STDOUT_FILENO, buffer + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (first_write_errno == 0)
                first_write_errno = n < 0 ? errno : EIO;
            break;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/*
 * Makes stdout a stream that records why a write failed (glibc's stdin, stdout and
 * stderr are variables a program may set), buffered as the C library would buffer
 * descriptor 1: by line on a terminal, else fully. Without it the original stream
 * stays, and a failed write is reported as an input/output error.
 */
void output_open(void)
{
    FILE *stream = fopencookie(NULL, "w", (cookie_io_functions_t){.write = write_stdout});
    if (stream == NULL)
        return;
    setvbuf(stream, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
    stdout = stream;
}

int output_errno(void)
{
    return first_write_errno != 0 ? first_write_errno : EIO;
}

/* Ends one record of lookup's output: a newline, or a NUL with -z. */
static void output_end_record(const struct ringctl *ctl)
{
    putchar(ctl->nul ? '\0' : '\n');
}

/*
 * Prints KEY escaped, so that an answer stays one line of tab-separated fields
 * whatever bytes the key holds, and every key can be told from every other: \\, \t,
 * \n and \r, and \xHH for every other control byte and every byte that is not part
 * of valid UTF-8.
 */
static void output_key(const char *key, size_t len)
{
    const unsigned char *text = (const unsigned char *)key;
    for (size_t i = 0; i < len;) {
        size_t printable = printable_length(text + i, len - i);
        if (text[i] == '\\') {
            fputs("\\\\", stdout);
        } else if (printable > 0) {
            fwrite(text + i, 1, printable, stdout);
            i += printable;
            continue;
        } else if (text[i] == '\t') {
            fputs("\\t", stdout);
        } else if (text[i] == '\n') {
            fputs("\\n", stdout);
        } else if (text[i] == '\r') {
            fputs("\\r", stdout);
        } else {
            printf("\\x%02x", text[i]);
        }
        i++;
    }
}

/* ---- JSON ----------------------------------------------------------------------- */

json_t *ringctl_json_str(const char *text)
{
    return json_stringn(text, strlen(text));
}

json_t *ringctl_json_uint(uint64_t value)
{
    return json_integer((json_int_t)value);
}

/* KEY's LEN bytes in base64, as a new JSON string (NULL: no memory). */
static json_t *json_base64(const char *key, size_t len)
{
    char *text = NULL;
    if (shmring_base64_encode(key, len, &text) != 0)
        return NULL;
    json_t *value = json_string(text);
    free(text);
    return value;
}

/*
 * KEY exactly: "key" a JSON string (any byte a JSON string can carry, NUL and control
 * bytes escaped by Jansson) when KEY is valid UTF-8, else "key_base64" its bytes in
 * base64; the other one null. Rewriting invalid bytes would give two keys one answer,
 * and the reader no way to tell.
 */
static void json_set_key(json_t *object, const char *key, size_t len)
{
    json_t *text = json_stringn(key, len); /* NULL when KEY is not valid UTF-8 */
    json_object_set_new(object, "key", text != NULL ? text : json_null());
    json_object_set_new(object, "key_base64",
                        text != NULL ? json_null() : json_base64(key, len));
}

const char *ringctl_state_name(shmring_state_t state)
{
    return state == SHMRING_STATE_UP ? "up" : "down";
}

json_t *ringctl_json_node_info(const shmring_node_info_t *node)
{
    json_t *object = json_object();
    json_object_set_new(object, "id", ringctl_json_uint(node->id));
    json_object_set_new(object, "name", ringctl_json_str(node->name));
    json_object_set_new(object, "address", ringctl_json_str(node->address));
    json_object_set_new(object, "weight", ringctl_json_uint(node->weight));
    json_object_set_new(object, "state", json_string(ringctl_state_name(node->state)));
    return object;
}

/* The fewest significant digits (1-17) that print VALUE so that it reads back as
 * the same double: 0.35642, not 0.35642000000000001. */
static int shortest_digits(double value)
{
    char text[64];
    for (int digits = 1; digits < 17; digits++) {
        snprintf(text, sizeof(text), "%.*g", digits, value);
        if (strtod(text, NULL) == value)
            return digits;
    }
    return 17;
}

/* The digits VALUE's reals need: the most any of them needs (Jansson prints every
 * real of a document with one precision). */
static int digits_needed(const json_t *value)
{
    int most = 1;
    if (json_is_real(value) && isfinite(json_real_value(value)))
        return shortest_digits(json_real_value(value));
    if (json_is_array(value)) {
        for (size_t i = 0; i < json_array_size(value); i++) {
            int digits = digits_needed(json_array_get(value, i));
            most = digits > most ? digits : most;
        }
    } else if (json_is_object(value)) {
        const char *key;
        const json_t *member;
        json_object_foreach((json_t *)value, key, member)
        {
            int digits = digits_needed(member);
            most = digits > most ? digits : most;
        }
    }
    return most;
}

/* Prints VALUE, then TERMINATOR, and frees it. */
static int json_emit(json_t *value, bool indented, char terminator)
{
    size_t flags = (indented ? JSON_INDENT(2) : JSON_COMPACT) |
                   JSON_REAL_PRECISION(digits_needed(value));
    char *text = value != NULL ? json_dumps(value, flags) : NULL;
    json_decref(value);
    if (text == NULL)
        return ringctl_fail(EXIT_FAILED, "cannot format JSON output: %s",
                            shmring_strerror(SHMRING_ENOMEM));
    fputs(text, stdout);
    putchar(terminator);
    free(text);
    return EXIT_OK;
}

int output_json(json_t *value, bool indented)
{
    return json_emit(value, indented, '\n');
}

/* Prints VALUE as one line, ending the record as output_end_record() does. */
static int output_json_record(const struct ringctl *ctl, json_t *value)
{
    return json_emit(value, false, ctl->nul ? '\0' : '\n');
}

/* ---- Results written as they are ------------------------------------------------ */

/*
 * Prints the answer for KEY: FOUND nodes, or (FOUND < 0) the error record, as the
 * docs/ringctl.md's "lookup as a routing co-process" says: text "KEY\tNAME\tADDRESS..."
 * or "KEY\t\tMESSAGE" (no node name is empty), or one JSON object; then the record's end.
 */
/* One answer of lookup: FOUND nodes, or (FOUND < 0) the error ERROR. */
static int lookup_record(const struct ringctl *ctl, const char *key, size_t len,
                         const shmring_node_t *nodes, int found, const char *error)
{
    if (ctl->json) {
        json_t *object = json_object();
        json_set_key(object, key, len);
        json_t *array = json_array();
        for (int i = 0; i < found; i++) {
            json_t *node = json_object();
            json_object_set_new(node, "id", ringctl_json_uint(nodes[i].id));
            json_object_set_new(node, "name", ringctl_json_str(nodes[i].name));
            json_object_set_new(node, "address", ringctl_json_str(nodes[i].address));
            json_object_set_new(node, "weight", ringctl_json_uint(nodes[i].weight));
            json_array_append_new(array, node);
        }
        json_object_set_new(object, "nodes", array);
        json_object_set_new(object, "error",
                            found < 0 ? json_string(error) : json_null());
        return output_json_record(ctl, object);
    }
    output_key(key, len);
    if (found < 0)
        printf("\t\t%s", error);
    for (int i = 0; i < found; i++)
        printf("\t%s\t%s", nodes[i].name, nodes[i].address);
    output_end_record(ctl);
    return EXIT_OK;
}

int output_lookup(const struct ringctl *ctl, const char *key, size_t len,
                  const shmring_node_t *nodes, int found)
{
    return lookup_record(ctl, key, len, nodes, found,
                         found < 0 ? shmring_strerror(found) : NULL);
}

int output_lookup_too_long(const struct ringctl *ctl, const char *key, size_t len)
{
    char error[64];
    snprintf(error, sizeof(error), "key longer than %d bytes", LOOKUP_KEY_MAX);
    return lookup_record(ctl, key, len, NULL, -1, error);
}

int output_flush(void)
{
    if (fflush(stdout) != 0)
        return ringctl_fail(EXIT_FAILED, "cannot write output: %s",
                            strerror(output_errno()));
    return EXIT_OK;
}

/* The library's JSON is the output with or without --json. */
void output_document(const char *text)
{
    size_t len = strlen(text);
    fputs(text, stdout);
    if (len == 0 || text[len - 1] != '\n')
        putchar('\n');
}

void output_version(void)
{
    printf("ringctl %s\n", shmring_version());
}

/* ---- Help text ------------------------------------------------------------------ */

void output_wrapped(int at, int column, int width, const char *text)
{
    const char *word = text;
    bool first = true;
    while (*word != '\0') {
        int len = (int)strcspn(word, " ");
        if (!first && at + 1 + len > width) {
            at = printf("\n%*s", column, "") - 1;
        } else if (!first) {
            putchar(' ');
            at++;
        }
        at += printf("%.*s", len, word);
        first = false;
        word += len;
        while (*word == ' ')
            word++;
    }
    putchar('\n');
}

void ringctl_describe_params(const shmring_params_t *params, char *out, size_t size)
{
    const char *algorithm = shmring_algorithm_name(params->algorithm);
    const char *hash = shmring_hash_name(params->hash);
    if (params->algorithm == SHMRING_ALGORITHM_RING ||
        params->algorithm == SHMRING_ALGORITHM_GROUPCACHE)
        snprintf(out, size, "%s, %s, %" PRIu32 " vnodes", algorithm, hash,
                 params->vnodes);
    else if ((params->algorithm == SHMRING_ALGORITHM_MAGLEV ||
              params->algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV) &&
             params->table_size != 0)
        snprintf(out, size, "%s, %s, table size %" PRIu32, algorithm, hash,
                 params->table_size);
    else if (params->algorithm == SHMRING_ALGORITHM_ENVOY_RING &&
             (params->min_ring_size != 0 || params->max_ring_size != 0))
        snprintf(out, size, "%s, %s, ring size %" PRIu32 " to %" PRIu32, algorithm, hash,
                 params->min_ring_size ? params->min_ring_size : 1024,
                 params->max_ring_size ? params->max_ring_size : 8388608);
    else
        snprintf(out, size, "%s, %s", algorithm, hash);
}
