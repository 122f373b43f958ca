/*
 * The targets: targets.tsv, embedded in ringbench by the build (the bytes are in
 * targets-data.c, generated from the file), parsed once at start.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ringbench.h"

/* targets.tsv's bytes, NUL-terminated (targets-data.c.in). */
extern const char ringbench_targets_tsv[];

#define FIELDS 5

/* Cuts LINE at its tabs into FIELDS fields; false if it has another number of them. */
static bool split_fields(char *line, char *fields[FIELDS])
{
    char *field = line;
    for (size_t i = 0; i < FIELDS; i++) {
        fields[i] = field;
        char *tab = strchr(field, '\t');
        if (tab == NULL)
            return i == FIELDS - 1;
        *tab = '\0';
        field = tab + 1;
    }
    /* A tab after the last field. */
    return false;
}

static bool parse_bound(const char *text, enum bound *out)
{
    if (strcmp(text, "at-most") == 0)
        *out = AT_MOST;
    else if (strcmp(text, "at-least") == 0)
        *out = AT_LEAST;
    else
        return false;
    return true;
}

static bool parse_limit(const char *text, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return end != text && *end == '\0' && errno == 0 && isfinite(*out) && *out > 0.0;
}

/* Reads LINE (number NUMBER) into ROW, or says what is wrong with it. */
static int parse_row(char *line, int number, bool (*is_benchmark)(const char *name),
                     struct target_row *row)
{
    char *fields[FIELDS];
    if (!split_fields(line, fields)) {
        fail("targets.tsv:%d: expected %d fields separated by tabs", number, FIELDS);
        return -1;
    }
    for (size_t i = 0; i < FIELDS; i++) {
        if (fields[i][0] == '\0') {
            fail("targets.tsv:%d: field %zu is empty", number, i + 1);
            return -1;
        }
    }
    *row = (struct target_row){
        .benchmark = fields[0], .figure = fields[1], .text = fields[4], .line = number};
    if (!is_benchmark(row->benchmark)) {
        fail("targets.tsv:%d: no benchmark '%s'", number, row->benchmark);
        return -1;
    }
    if (!parse_bound(fields[2], &row->bound)) {
        fail("targets.tsv:%d: the bound '%s' is not at-most or at-least", number,
             fields[2]);
        return -1;
    }
    if (!parse_limit(fields[3], &row->limit)) {
        fail("targets.tsv:%d: the limit '%s' is not a positive number", number,
             fields[3]);
        return -1;
    }
    return 0;
}

int targets_parse(struct targets *out, bool (*is_benchmark)(const char *name))
{
    *out = (struct targets){.count = 0};
    out->text = strdup(ringbench_targets_tsv);
    if (out->text == NULL) {
        fail("out of memory");
        return -1;
    }
    int number = 0;
    for (char *line = out->text; *line != '\0';) {
        number++;
        char *end = strchr(line, '\n');
        char *next = end != NULL ? end + 1 : line + strlen(line);
        if (end != NULL)
            *end = '\0';
        if (line[0] != '\0' && line[0] != '#') {
            if (out->count == TARGETS_MAX) {
                fail("targets.tsv:%d: more than %d targets: raise TARGETS_MAX", number,
                     TARGETS_MAX);
                targets_free(out);
                return -1;
            }
            if (parse_row(line, number, is_benchmark, &out->rows[out->count]) != 0) {
                targets_free(out);
                return -1;
            }
            out->count++;
        }
        line = next;
    }
    return 0;
}

void targets_free(struct targets *targets)
{
    free(targets->text);
    targets->text = NULL;
    targets->count = 0;
}
