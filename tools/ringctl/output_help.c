/*
 * The help, made from the command and option tables: `ringctl --help` and `ringctl
 * help` print all of it, `ringctl help COMMAND` and `ringctl COMMAND --help` one
 * command's usage; and the usage line that diagnostics quote. Summaries are single
 * lines in the tables, wrapped here.
 */
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "ringctl.h"

/* Where descriptions start, and the last column text may use. */
#define HELP_COLUMN 27
#define HELP_WIDTH 79

static const char commands_intro[][160] = {
    [GROUP_CHANGE] = "Commands that change a ring (each publishes exactly one new "
                     "generation, or\nnothing at all on error; only the ring's owner "
                     "can change it):\n",
    [GROUP_READ] = "Commands that read a ring (no lock; read permission is enough):\n",
    [GROUP_OTHER] = "Other commands:\n",
};

static const char change_note[] =
    "  (weight, down and up publish nothing when the node already is as asked; load,\n"
    "  when the file gives the ring's node set and parameters, and its node order where\n"
    "  the algorithm depends on it: ketama, libketama, envoy-ring, nginx,\n"
    "  haproxy, uhashring, hashring, dalli, spymemcached, groupcache.)\n";

static const char keys_note[] =
    "Keys in lookup's output are escaped, so that every answer is one line of\n"
    "tab-separated fields: a backslash is printed as \\\\, TAB, LF and CR as \\t, \\n\n"
    "and \\r, and every other control byte (0x00-0x1f, 0x7f, and the bytes of the\n"
    "UTF-8 controls U+0080-U+009F) and every byte that is not part of valid UTF-8 as\n"
    "\\xHH (two lowercase hex digits). A key that no node can take (the ring has no\n"
    "nodes, or none is up) is answered as the key, an empty field and the reason.\n"
    "With --json, \"key\" holds the key exactly as a JSON string; a key that is not\n"
    "valid UTF-8 is given instead as \"key_base64\", its bytes in base64.\n";

static const char closing_note[] =
    "Options may come before or after the command; put -- before arguments that\n"
    "begin with '-'. 'ringctl help COMMAND' or 'ringctl COMMAND --help' prints one\n"
    "command's usage.\n"
    "\n"
    "Exit status: 0 success, 1 the operation failed, 2 usage error.\n";

/* Prints LABEL, then TEXT from HELP_COLUMN (on the next line if LABEL is too long). */
static void print_entry(const char *label, const char *text)
{
    int len = printf("%s", label);
    if (len > HELP_COLUMN - 2)
        len = printf("\n") - 1;
    printf("%*s", HELP_COLUMN - len, "");
    output_wrapped(HELP_COLUMN, HELP_COLUMN, HELP_WIDTH, text);
}

/* Prints "  SYNOPSIS" wrapped (continuation lines under the first argument), then
 * TEXT as print_entry() does. */
static void print_synopsis(const char *synopsis, const char *text)
{
    int indent = 2 + (int)strcspn(synopsis, " ") + 1;
    char line[LINE_MAX_BYTES];
    int len = snprintf(line, sizeof(line), "  ");
    const char *word = synopsis;
    while (*word != '\0') {
        int word_len = (int)strcspn(word, " ");
        bool fresh = len == 2 || len == indent;
        if (!fresh && len + 1 + word_len > HELP_WIDTH) {
            printf("%s\n", line);
            len = snprintf(line, sizeof(line), "%*s", indent, "");
            fresh = true;
        }
        len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%.*s",
                        fresh ? "" : " ", word_len, word);
        word += word_len;
        while (*word == ' ')
            word++;
    }
    if (text != NULL)
        print_entry(line, text);
    else
        printf("%s\n", line);
}

static void print_command(const struct ringctl_command *command)
{
    for (size_t i = 0; i < SYNOPSIS_MAX && command->synopsis[i] != NULL; i++) {
        bool last = i + 1 == SYNOPSIS_MAX || command->synopsis[i + 1] == NULL;
        print_synopsis(command->synopsis[i], last ? command->summary : NULL);
    }
}

/* "  -r, --ring RING", "      --dir DIR", "  -n N" into OUT. */
static void option_label(const struct ringctl_option *o, char *out, size_t size)
{
    int len = o->letter != 0
                  ? snprintf(out, size, "  -%c%s", o->letter, o->name != NULL ? ", " : "")
                  : snprintf(out, size, "      ");
    if (o->name != NULL)
        len += snprintf(out + len, size - (size_t)len, "--%s", o->name);
    if (o->argument != NULL)
        snprintf(out + len, size - (size_t)len, " %s", o->argument);
}

/* How many commands take the option of BIT, and the last of them. */
static size_t commands_taking(option_bits_t bit, const struct ringctl_command **last)
{
    size_t count = 0;
    for (size_t i = 0; i < ringctl_command_count; i++) {
        if (ringctl_commands[i].options & bit) {
            count++;
            *last = &ringctl_commands[i];
        }
    }
    return count;
}

/* " ring (default), maglev, ...": the library's algorithms, in the order of its
 * table, so that a new algorithm is in the help without a line here. */
static void algorithm_list(char *out, size_t size)
{
    shmring_params_t defaults;
    shmring_params_default(&defaults);
    size_t len = 0;
    for (unsigned i = 0; i < RINGCTL_ALGORITHM_VALUES && len < size; i++) {
        const char *name = shmring_algorithm_name((shmring_algorithm_t)i);
        if (strcmp(name, "unknown") == 0)
            continue;
        int added = snprintf(out + len, size - len, "%s %s%s", len == 0 ? "" : ",", name,
                             i == (unsigned)defaults.algorithm ? " (default)" : "");
        len += added > 0 ? (size_t)added : 0;
    }
}

/* Prints option O; with PREFIX, its help begins by naming the commands taking it. */
static void print_option(const struct ringctl_option *o, bool prefix)
{
    char label[128], text[1024];
    option_label(o, label, sizeof(label));
    int len = 0;
    for (size_t i = 0; prefix && i < ringctl_command_count; i++) {
        if (ringctl_commands[i].options & o->bit)
            len += snprintf(text + len, sizeof(text) - (size_t)len, "%s%s",
                            len == 0 ? "(" : ", ", ringctl_commands[i].name);
    }
    len += snprintf(text + len, sizeof(text) - (size_t)len, "%s%s", len > 0 ? ") " : "",
                    o->help);
    if (o->code == CODE_ALGORITHM)
        algorithm_list(text + len, sizeof(text) - (size_t)len);
    print_entry(label, text);
}

void output_help(void)
{
    printf("Usage: ringctl [OPTIONS] COMMAND [ARGS]\n\n"
           "Inspect and change shmring consistent-hash rings in POSIX shared memory.\n");
    for (int group = GROUP_CHANGE; group <= GROUP_OTHER; group++) {
        printf("\n%s", commands_intro[group]);
        for (size_t i = 0; i < ringctl_command_count; i++) {
            if (ringctl_commands[i].group == (enum command_group)group)
                print_command(&ringctl_commands[i]);
        }
        if (group == GROUP_CHANGE)
            fputs(change_note, stdout);
    }
    /* Options every command takes, then those several take, then each command's
     * own. */
    printf("\nOptions:\n");
    const struct ringctl_command *taker;
    for (size_t i = 0; i < ringctl_option_count; i++) {
        const struct ringctl_option *o = &ringctl_options[i];
        if (o->bit == 0 || commands_taking(o->bit, &taker) > 1)
            print_option(o, o->bit != 0);
    }
    for (size_t c = 0; c < ringctl_command_count; c++) {
        bool titled = false;
        for (size_t i = 0; i < ringctl_option_count; i++) {
            const struct ringctl_option *o = &ringctl_options[i];
            if (o->bit == 0 || commands_taking(o->bit, &taker) != 1 ||
                taker != &ringctl_commands[c])
                continue;
            if (!titled)
                printf("Options of %s:\n", taker->name);
            titled = true;
            print_option(o, false);
        }
    }
    printf("\n%s\n%s", keys_note, closing_note);
}

void output_help_command(const struct ringctl_command *command)
{
    for (size_t i = 0; i < SYNOPSIS_MAX && command->synopsis[i] != NULL; i++)
        printf("%s ringctl [OPTIONS] %s\n", i == 0 ? "Usage:" : "      ",
               command->synopsis[i]);
    printf("\n  ");
    output_wrapped(2, 2, HELP_WIDTH, command->summary);
    bool titled = false;
    for (size_t i = 0; i < ringctl_option_count; i++) {
        if (!(ringctl_options[i].bit & command->options))
            continue;
        if (!titled)
            printf("\nOptions of %s:\n", command->name);
        titled = true;
        print_option(&ringctl_options[i], false);
    }
    printf("\nOptions of every command:\n");
    for (size_t i = 0; i < ringctl_option_count; i++) {
        if (ringctl_options[i].bit == 0 && ringctl_options[i].letter != 'V')
            print_option(&ringctl_options[i], false);
    }
    if (command->group == GROUP_READ && (command->options & OPTION(COUNT)))
        printf("\n%s", keys_note);
    printf("\nExit status: 0 success, 1 the operation failed, 2 usage error.\n");
}

void ringctl_usage_line(const struct ringctl_command *command, char *out, size_t size)
{
    int len = 0;
    for (size_t i = 0; i < SYNOPSIS_MAX && command->synopsis[i] != NULL; i++)
        len += snprintf(out + len, size - (size_t)len, "%sringctl %s",
                        i == 0 ? "" : " or ", command->synopsis[i]);
}
