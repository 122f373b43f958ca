/*
 * Importing a peer's configuration: the public entry point, which checks what every
 * format needs (no NUL byte) and hands the text to the format's reader
 * (import_nginx.c, import_twemproxy.c, import_libketama.c, import_haproxy.c), and what
 * those readers
 * share.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "import_internal.h"
#include "text_internal.h"

int shmring_import_format_parse(const char *name, shmring_import_format_t *out)
{
    static const struct {
        const char *name;
        shmring_import_format_t format;
    } formats[] = {{"nginx", SHMRING_IMPORT_NGINX},
                   {"twemproxy", SHMRING_IMPORT_TWEMPROXY},
                   {"libketama", SHMRING_IMPORT_LIBKETAMA},
                   {"haproxy", SHMRING_IMPORT_HAPROXY}};
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        if (strcmp(name, formats[i].name) == 0) {
            *out = formats[i].format;
            return 0;
        }
    }
    return SHMRING_EINVAL;
}

static void record(shmring_import_error_t *error, int line, const char *format,
                   va_list args) __attribute__((format(printf, 3, 0)));

static void record(shmring_import_error_t *error, int line, const char *format,
                   va_list args)
{
    memset(error, 0, sizeof(*error));
    error->line = line;
    vsnprintf(error->text, sizeof(error->text), format, args);
}

int shmring__import_fail(shmring_import_error_t *error, int line, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    record(error, line, format, args);
    va_end(args);
    return SHMRING_EINVAL;
}

int shmring__import_fail_once(struct import_section *section, int line,
                              const char *format, ...)
{
    if (section->failed)
        return 0;
    section->failed = true;
    va_list args;
    va_start(args, format);
    record(&section->error, line, format, args);
    va_end(args);
    return 0;
}

/* The I-th of sections SIZE bytes apart, each beginning with a struct import_section. */
static struct import_section *section_at(void *sections, size_t size, size_t i)
{
    /* Through void *: each section is an element of an array of a type that begins
     * with a struct import_section, so the address is aligned for one, which the
     * char * arithmetic cannot tell the compiler. */
    return (void *)((char *)sections + i * size);
}

int shmring__import_section_new(void **sections, size_t *count, size_t *capacity,
                                size_t size, const char *name, size_t name_len, int line,
                                const struct import_section_kind *kind,
                                shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    for (size_t i = 0; i < *count; i++) {
        const struct import_section *other = section_at(*sections, size, i);
        if (strlen(other->name) == name_len && memcmp(other->name, name, name_len) == 0)
            return shmring__import_fail(
                error, line, "%s '%s' is given twice (first on line %d)", kind->one,
                shmring__import_quote(quoted, name, name_len), other->line);
    }
    if (*count == *capacity) {
        size_t grown_capacity = *capacity ? *capacity * 2 : 4;
        void *grown = realloc(*sections, grown_capacity * size);
        if (grown == NULL)
            return SHMRING_ENOMEM;
        *sections = grown;
        *capacity = grown_capacity;
    }
    struct import_section *section = section_at(*sections, size, *count);
    memset(section, 0, size);
    section->line = line;
    section->name = strndup(name, name_len);
    if (section->name == NULL)
        return SHMRING_ENOMEM;
    /* Counted from here on, so that the name and node set are freed with the rest. */
    (*count)++;
    return shmring__import_nodeset(
        kind->algorithm, shmring_algorithm_default_hash(kind->algorithm), &section->set);
}

int shmring__import_take(void *sections, size_t count, size_t size, const char *wanted,
                         const struct import_section_kind *kind,
                         shmring_nodeset_t **chosen, shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    struct import_section *section = NULL;
    if (wanted != NULL) {
        for (size_t i = 0; i < count && section == NULL; i++) {
            if (strcmp(section_at(sections, size, i)->name, wanted) == 0)
                section = section_at(sections, size, i);
        }
        if (section == NULL)
            return shmring__import_fail(
                error, 0, "no %s '%s'", kind->one,
                shmring__import_quote(quoted, wanted, strlen(wanted)));
    } else if (count == 1) {
        section = section_at(sections, size, 0);
    } else if (count == 0) {
        return shmring__import_fail(error, 0, "%s", kind->none);
    } else {
        const struct import_section *first = section_at(sections, size, 0);
        return shmring__import_fail(
            error, 0, "%zu %s (the first '%s' on line %d): name the one to import", count,
            kind->many, shmring__import_quote(quoted, first->name, strlen(first->name)),
            first->line);
    }
    /* A problem anywhere in the chosen section spoils its node set; problems of the
     * sections not chosen do not matter. */
    if (section->failed) {
        *error = section->error;
        return SHMRING_EINVAL;
    }
    *chosen = section->set;
    section->set = NULL;
    return 0;
}

void shmring__import_sections_free(void *sections, size_t count, size_t size)
{
    for (size_t i = 0; i < count; i++) {
        free(section_at(sections, size, i)->name);
        shmring_nodeset_free(section_at(sections, size, i)->set);
    }
    free(sections);
}

const char *shmring__import_quote(char *quoted, const char *word, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *bytes = (const unsigned char *)word;
    size_t shown = len < IMPORT_QUOTE_MAX ? len : IMPORT_QUOTE_MAX;
    size_t out = 0;
    for (size_t i = 0; i < shown;) {
        size_t sequence = bytes[i] >= 0x80 ? shmring__utf8_sequence(bytes + i, shown - i)
                                           : (bytes[i] >= 0x20 && bytes[i] < 0x7f);
        /* C1 controls (U+0080-U+009F) are valid UTF-8 but not printable. */
        if (sequence == 2 && bytes[i] == 0xc2 && bytes[i + 1] < 0xa0)
            sequence = 0;
        if (sequence > 0) {
            memcpy(quoted + out, bytes + i, sequence);
            out += sequence;
            i += sequence;
        } else {
            quoted[out++] = '\\';
            quoted[out++] = 'x';
            quoted[out++] = hex[bytes[i] >> 4];
            quoted[out++] = hex[bytes[i] & 15];
            i++;
        }
    }
    if (shown < len) {
        memcpy(quoted + out, "...", 3);
        out += 3;
    }
    quoted[out] = '\0';
    return quoted;
}

bool shmring__import_number(const char *text, size_t len, uint32_t max, uint32_t *out)
{
    if (len == 0 || len > 10 || text[0] == '0')
        return false;
    uint64_t value = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        value = value * 10 + (uint64_t)(text[i] - '0');
    }
    if (value > max)
        return false;
    *out = (uint32_t)value;
    return true;
}

int shmring__import_add(shmring_nodeset_t *set, const char *name, const char *address,
                        uint32_t weight, shmring_state_t state, const char *hash_key,
                        int line, shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (hash_key != NULL && shmring_node_name_check(name) != 0)
        return shmring__import_fail(
            error, line, "server name '%s': a name must be 1-255 bytes of UTF-8 text",
            shmring__import_quote(quoted, name, strlen(name)));
    int err = shmring_nodeset_add(set, name, address, weight, state, NULL);
    if (err == SHMRING_EDUPLICATE)
        return shmring__import_fail(error, line,
                                    "server '%s' is given twice: the peer would merge "
                                    "their points, a node set cannot hold both",
                                    shmring__import_quote(quoted, name, strlen(name)));
    if (err == SHMRING_EBADNAME || err == SHMRING_EBADADDRESS)
        return shmring__import_fail(
            error, line, "server '%s': a server must be 1-255 bytes of UTF-8 text",
            shmring__import_quote(quoted, address, strlen(address)));
    if (err == 0 && hash_key != NULL) {
        err = shmring_nodeset_set_hash_key(set, name, hash_key);
        if (err == SHMRING_EBADADDRESS)
            return shmring__import_fail(
                error, line, "server name '%s': a name must be 1-255 bytes of UTF-8 text",
                shmring__import_quote(quoted, hash_key, strlen(hash_key)));
    }
    if (err == SHMRING_ELIMIT)
        return shmring__import_fail(error, line, "too many servers");
    return err;
}

int shmring__import_nodeset(shmring_algorithm_t algorithm, shmring_hash_t hash,
                            shmring_nodeset_t **out)
{
    shmring_nodeset_t *set;
    int err = shmring_nodeset_new(&set);
    if (err != 0)
        return err;
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = algorithm;
    params.hash = hash;
    err = shmring_nodeset_set_params(set, &params);
    if (err != 0) {
        shmring_nodeset_free(set);
        return err;
    }
    *out = set;
    return 0;
}

int shmring_nodeset_import(shmring_import_format_t format, const char *text, size_t len,
                           const char *section, shmring_nodeset_t **out,
                           shmring_import_error_t *error)
{
    /* Every reader below works on lengths, but a NUL byte in a configuration file
     * means it is not the text file the peer reads. */
    const char *nul = memchr(text, '\0', len);
    if (nul != NULL) {
        int line = 1;
        for (const char *p = text; p < nul; p++)
            line += *p == '\n';
        return shmring__import_fail(error, line, "a NUL byte: not a text file");
    }
    switch (format) {
    case SHMRING_IMPORT_NGINX:
        return shmring__import_nginx(text, len, section, out, error);
    case SHMRING_IMPORT_TWEMPROXY:
        return shmring__import_twemproxy(text, len, section, out, error);
    case SHMRING_IMPORT_HAPROXY:
        return shmring__import_haproxy(text, len, section, out, error);
    case SHMRING_IMPORT_LIBKETAMA:
        if (section != NULL)
            return shmring__import_fail(error, 0,
                                        "a libketama server file has no sections: "
                                        "nothing to choose");
        return shmring__import_libketama(text, len, out, error);
    }
    return shmring__import_fail(error, 0, "unknown configuration format %d", (int)format);
}
