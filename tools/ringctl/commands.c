/*
 * The command table, built from command_table.h, and finding a command by name:
 * exactly, or the nearest one to suggest for a mistyped name.
 */
#include <string.h>

#include "ringctl.h"

const struct ringctl_command ringctl_commands[] = {
#define COMMAND(name_, ...) {.name = #name_, .run = ringctl_cmd_##name_, __VA_ARGS__},
#include "command_table.h"
#undef COMMAND
};

const size_t ringctl_command_count =
    sizeof(ringctl_commands) / sizeof(ringctl_commands[0]);

const struct ringctl_command *ringctl_command_find(const char *name)
{
    for (size_t i = 0; i < ringctl_command_count; i++) {
        if (strcmp(ringctl_commands[i].name, name) == 0)
            return &ringctl_commands[i];
    }
    return NULL;
}

/* Command names are short; a typed name longer than this is no typo of one. */
#define TYPO_LENGTH_MAX 32

/*
 * The optimal string alignment distance between A and B (insertions, deletions,
 * substitutions and swaps of neighbours, each 1): the typos people make. Names
 * longer than TYPO_LENGTH_MAX count as far from everything.
 */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > TYPO_LENGTH_MAX || lb > TYPO_LENGTH_MAX)
        return (size_t)-1;
    size_t d[TYPO_LENGTH_MAX + 1][TYPO_LENGTH_MAX + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

/*
 * The command NAME most likely meant, or NULL: the only command NAME begins (at
 * least two letters), else the nearest within a third of NAME's length (at least
 * one edit), the first in table order on a tie.
 */
static const struct ringctl_command *nearest_command(const char *name)
{
    size_t len = strlen(name);
    const struct ringctl_command *prefixed = NULL;
    size_t prefixes = 0;
    for (size_t i = 0; len >= 2 && i < ringctl_command_count; i++) {
        if (strncmp(ringctl_commands[i].name, name, len) == 0) {
            prefixed = &ringctl_commands[i];
            prefixes++;
        }
    }
    if (prefixes == 1)
        return prefixed;
    const struct ringctl_command *nearest = NULL;
    size_t allowed = len / 3 > 1 ? len / 3 : 1, best = allowed + 1;
    for (size_t i = 0; i < ringctl_command_count; i++) {
        size_t distance = edit_distance(name, ringctl_commands[i].name);
        if (distance < best) {
            best = distance;
            nearest = &ringctl_commands[i];
        }
    }
    return nearest;
}

int ringctl_unknown_command(const char *name)
{
    const struct ringctl_command *nearest = nearest_command(name);
    if (nearest != NULL)
        return ringctl_fail(
            EXIT_USAGE, "unknown command '%s' (did you mean '%s'? see 'ringctl --help')",
            name, nearest->name);
    return ringctl_fail(EXIT_USAGE, "unknown command '%s' (see 'ringctl --help')", name);
}
