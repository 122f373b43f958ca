/*
 * Reading a libketama server file (ketama.c, read_server_definitions): one server a
 * line, "ADDRESS MEMORY" separated by blanks, lines starting with '#' and empty
 * lines skipped. A node per server, named and addressed by ADDRESS, weighted by
 * MEMORY, in file order: the `libketama` algorithm's point strings are built from
 * the address as the file gives it.
 *
 * libketama keeps an address in 22 bytes (21 and a NUL) and reads a line into 128,
 * so longer ones are refused here rather than cut as libketama would cut them.
 */
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"

/* libketama's server address buffer holds 21 bytes and the NUL. */
#define LIBKETAMA_ADDRESS_MAX 21
/* libketama reads lines with fgets() into 128 bytes. */
#define LIBKETAMA_LINE_MAX 126

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* The next blank-separated field of LINE from *at, or a zero length. */
static size_t field(const char *line, size_t len, size_t *at, const char **start)
{
    while (*at < len && is_blank(line[*at]))
        (*at)++;
    *start = line + *at;
    size_t begin = *at;
    while (*at < len && !is_blank(line[*at]))
        (*at)++;
    return *at - begin;
}

static int server_line(shmring_nodeset_t *set, const char *line, size_t len, int number,
                       shmring_import_error_t *error)
{
    char quoted[IMPORT_QUOTE_SIZE];
    if (len > LIBKETAMA_LINE_MAX)
        return shmring__import_fail(error, number,
                                    "a line longer than %d bytes, which libketama cuts",
                                    LIBKETAMA_LINE_MAX);
    size_t at = 0;
    const char *address, *memory, *extra;
    size_t address_len = field(line, len, &at, &address);
    size_t memory_len = field(line, len, &at, &memory);
    size_t extra_len = field(line, len, &at, &extra);
    if (address_len == 0 || memory_len == 0 || extra_len != 0)
        return shmring__import_fail(error, number, "expected 'ADDRESS MEMORY', not '%s'",
                                    shmring__import_quote(quoted, line, len));
    if (address_len > LIBKETAMA_ADDRESS_MAX)
        return shmring__import_fail(error, number,
                                    "address '%s' is longer than the %d bytes libketama "
                                    "keeps",
                                    shmring__import_quote(quoted, address, address_len),
                                    LIBKETAMA_ADDRESS_MAX);
    uint32_t weight;
    if (!shmring__import_number(memory, memory_len, SHMRING_WEIGHT_MAX, &weight))
        return shmring__import_fail(
            error, number, "memory '%s' must be an integer from 1 to %d",
            shmring__import_quote(quoted, memory, memory_len), SHMRING_WEIGHT_MAX);
    char *name = strndup(address, address_len);
    if (name == NULL)
        return SHMRING_ENOMEM;
    int err = shmring__import_add(set, name, name, weight, SHMRING_STATE_UP, NULL, number,
                                  error);
    free(name);
    return err;
}

int shmring__import_libketama(const char *text, size_t len, shmring_nodeset_t **out,
                              shmring_import_error_t *error)
{
    shmring_nodeset_t *set;
    int err = shmring__import_nodeset(
        SHMRING_ALGORITHM_LIBKETAMA,
        shmring_algorithm_default_hash(SHMRING_ALGORITHM_LIBKETAMA), &set);
    if (err != 0)
        return err;
    int number = 0;
    for (const char *line = text; err == 0 && line < text + len;) {
        const char *newline = memchr(line, '\n', (size_t)(text + len - line));
        size_t line_len =
            newline != NULL ? (size_t)(newline - line) : (size_t)(text + len - line);
        number++;
        size_t content = line_len;
        while (content > 0 && is_blank(line[content - 1]))
            content--;
        if (content != 0 && line[0] != '#')
            err = server_line(set, line, content, number, error);
        line = newline != NULL ? newline + 1 : text + len;
    }
    if (err == 0 && shmring_nodeset_count(set) == 0)
        err = shmring__import_fail(error, 0, "no servers");
    if (err != 0) {
        shmring_nodeset_free(set);
        return err;
    }
    *out = set;
    return 0;
}
