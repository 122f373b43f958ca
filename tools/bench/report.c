/*
 * The figures the benchmarks derive from their measurements, the comparisons among
 * them, and the targets judged on them.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ringbench.h"

const char *const temperature_names[TEMPERATURES] = {"hot", "cold"};

static const char *const verdict_names[] = {"PASS", "MISS", "SKIP"};

void figure_add(struct figures *all, enum figure_kind kind, size_t nodes, double hot,
                double cold, const char *format, ...)
{
    if (all->count == FIGURES_MAX) {
        fprintf(stderr, "ringbench: more than %d figures: raise FIGURES_MAX\n",
                FIGURES_MAX);
        abort();
    }
    struct figure *f = &all->items[all->count++];
    va_list args;
    va_start(args, format);
    vsnprintf(f->name, sizeof(f->name), format, args);
    va_end(args);
    f->kind = kind;
    f->nodes = nodes;
    f->value[HOT] = hot;
    f->value[COLD] = cold;
}

static const struct figure *figure_find(const struct figures *all, const char *name)
{
    for (size_t i = 0; i < all->count; i++) {
        if (strcmp(all->items[i].name, name) == 0)
            return &all->items[i];
    }
    return NULL;
}

void targets_judge(const struct targets *targets, const struct figures *all,
                   struct verdicts *out)
{
    /* targets_parse() refuses more rows than a verdict list holds. */
    for (size_t i = 0; i < targets->count; i++) {
        const struct target_row *row = &targets->rows[i];
        const struct figure *f = figure_find(all, row->figure);
        double value = f != NULL ? f->value[HOT] : NAN;
        enum verdict verdict = SKIP;
        if (!isnan(value))
            verdict = (row->bound == AT_MOST ? value <= row->limit : value >= row->limit)
                          ? PASS
                          : MISS;
        out->items[out->count].row = row;
        out->items[out->count].value = value;
        out->items[out->count].verdict = verdict;
        out->count++;
    }
}

static void comparison_text(enum figure_kind kind, double value, char *out, size_t size)
{
    if (kind == FIGURE_RATIO)
        snprintf(out, size, "%.2fx", value);
    else if (value >= 1.0)
        snprintf(out, size, "%.2fx faster", value);
    else
        snprintf(out, size, "%.2fx slower", 1.0 / value);
}

void print_comparisons(const struct figures *all)
{
    printf("\nComparisons, measured in this run (hot keys; cold keys in brackets)\n");
    for (size_t i = 0; i < all->count; i++) {
        const struct figure *f = &all->items[i];
        char hot[32], cold[32];
        switch (f->kind) {
        case FIGURE_SPEEDUP:
        case FIGURE_RATIO:
            comparison_text(f->kind, f->value[HOT], hot, sizeof(hot));
            comparison_text(f->kind, f->value[COLD], cold, sizeof(cold));
            printf("  %s: %s [%s]\n", f->name, hot, cold);
            break;
        case FIGURE_THROUGHPUT:
            printf("  %s: %.2fx the lookups per second\n", f->name, f->value[HOT]);
            break;
        case FIGURE_VALUE:
            break;
        }
    }
}

void print_targets(const struct verdicts *all)
{
    printf("\nTargets of issues 5 and 15 (lookups on hot keys where a target names no "
           "other)\n");
    for (size_t i = 0; i < all->count; i++) {
        const struct target_row *row = all->items[i].row;
        enum verdict verdict = all->items[i].verdict;
        if (verdict == SKIP)
            printf("  SKIP  %s: not measured in this run\n", row->text);
        else
            printf("  %s  %s: %.3f (%s %.2f)\n", verdict_names[verdict], row->text,
                   all->items[i].value, row->bound == AT_MOST ? "<=" : ">=", row->limit);
    }
}

json_t *json_comparisons(const struct figures *all)
{
    json_t *array = json_array();
    for (size_t i = 0; i < all->count; i++) {
        const struct figure *f = &all->items[i];
        if (f->kind == FIGURE_SPEEDUP || f->kind == FIGURE_RATIO)
            json_array_append_new(
                array, json_pack("{sssssIsoso}", "name", f->name, "kind",
                                 f->kind == FIGURE_SPEEDUP ? "speedup" : "ratio", "nodes",
                                 (json_int_t)f->nodes, "hot", json_number(f->value[HOT]),
                                 "cold", json_number(f->value[COLD])));
        else if (f->kind == FIGURE_THROUGHPUT)
            json_array_append_new(array, json_pack("{ssssso}", "name", f->name, "kind",
                                                   "throughput", "value",
                                                   json_real(f->value[HOT])));
    }
    return array;
}

json_t *json_targets(const struct verdicts *all)
{
    json_t *array = json_array();
    for (size_t i = 0; i < all->count; i++) {
        const struct target_row *row = all->items[i].row;
        json_array_append_new(array, json_pack("{sssososbss}", "name", row->text, "value",
                                               json_number(all->items[i].value), "limit",
                                               json_number(row->limit), "at_most",
                                               row->bound == AT_MOST, "result",
                                               verdict_names[all->items[i].verdict]));
    }
    return array;
}
