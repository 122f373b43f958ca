/*
 * ringctl: inspect and change shmring rings from the command line.
 *
 * A thin layer over libshmringctl: it parses the command line, calls the library and
 * prints what the library answers. Every changing command follows the same steps:
 * take the ring's writer lock, read the current node set, change it, publish exactly
 * one new generation. Any error before the publication leaves the ring as it was.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "shmring.h"
#include "shmring_ctl.h"

enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1,
    EXIT_USAGE = 2,
};

/* Keys that --dry-run looks up in the current and the new snapshot. */
#define DRY_RUN_SAMPLES 100000
/* The permission bits of a ring that init creates without --mode (the library's). */
#define DEFAULT_RING_MODE 0644
/* Room for one line of a report or diagnostic: a ring name, a node name and a
 * path fit many times over. */
#define LINE_MAX_BYTES 8192

/* Options a command may accept, one bit each; also which ones were given. */
enum option_bit {
    OPTION_DRY_RUN = 1u << 0,
    OPTION_ALGORITHM = 1u << 1,
    OPTION_HASH = 1u << 2,
    OPTION_VNODES = 1u << 3,
    OPTION_TABLE_SIZE = 1u << 4,
    OPTION_MODE = 1u << 5,
    OPTION_GROUP = 1u << 6,
    OPTION_WEIGHT = 1u << 7,
    OPTION_COUNT = 1u << 8,
    OPTION_STDIN = 1u << 9,
};

#define OPTIONS_INIT                                                                     \
    (OPTION_DRY_RUN | OPTION_ALGORITHM | OPTION_HASH | OPTION_VNODES |                   \
     OPTION_TABLE_SIZE | OPTION_MODE | OPTION_GROUP)

/* Spellings of the option bits, in bit order, for diagnostics. */
static const char *const option_bit_names[] = {
    "--dry-run", "--algorithm", "--hash",   "--vnodes", "--table-size",
    "--mode",    "--group",     "--weight", "-n",       "--stdin",
};

/* getopt_long codes of the options that have no short form. */
enum option_code {
    CODE_JSON = 256,
    CODE_DRY_RUN,
    CODE_ALGORITHM,
    CODE_HASH,
    CODE_VNODES,
    CODE_TABLE_SIZE,
    CODE_MODE,
    CODE_GROUP,
    CODE_WEIGHT,
    CODE_STDIN,
};

static const struct option long_options[] = {
    {"ring", required_argument, NULL, 'r'},
    {"json", no_argument, NULL, CODE_JSON},
    {"dry-run", no_argument, NULL, CODE_DRY_RUN},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"algorithm", required_argument, NULL, CODE_ALGORITHM},
    {"hash", required_argument, NULL, CODE_HASH},
    {"vnodes", required_argument, NULL, CODE_VNODES},
    {"table-size", required_argument, NULL, CODE_TABLE_SIZE},
    {"mode", required_argument, NULL, CODE_MODE},
    {"group", required_argument, NULL, CODE_GROUP},
    {"weight", required_argument, NULL, CODE_WEIGHT},
    {"stdin", no_argument, NULL, CODE_STDIN},
    {NULL, 0, NULL, 0},
};

/* A leading ':' makes getopt_long report a missing argument as ':', not '?'. */
static const char short_options[] = ":r:hVn:";

/* The parsed command line. */
struct cli {
    const char *ring;
    bool json;
    bool dry_run;
    unsigned given; /* enum option_bit */
    /* init */
    shmring_params_t params;
    shmring_create_options_t create;
    /* add */
    uint32_t weight;
    /* lookup */
    size_t count;
    /* The command's arguments. */
    char **args;
    size_t arg_count;
};

struct command {
    const char *name;
    /* Its arguments and options, for diagnostics. */
    const char *synopsis;
    size_t min_args;
    size_t max_args;
    unsigned options; /* enum option_bit */
    int (*run)(struct cli *cli);
};

static const char usage_text[] =
    "Usage: ringctl [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Inspect and change shmring consistent-hash rings in POSIX shared memory.\n"
    "\n"
    "Commands that change a ring (each publishes exactly one new generation, or\n"
    "nothing at all on error):\n"
    "  init [--algorithm A] [--hash H] [--vnodes N] [--table-size P] [--mode M]\n"
    "       [--group G]         create the ring and publish it, empty, as generation 1\n"
    "  load FILE|-              replace the whole node set with a JSON node set read\n"
    "                           from FILE (- for standard input; an empty node set\n"
    "                           is refused); nodes that stay keep their ids;\n"
    "                           parameters the file leaves out are kept; creates\n"
    "                           the ring (mode 0644) if it does not exist\n"
    "  add NAME ADDRESS [--weight W]\n"
    "                           add an up node with weight W (default 1)\n"
    "  remove NAME              remove a node\n"
    "  weight NAME W            change a node's weight (1-65535)\n"
    "  down NAME                mark a node down: its keys move to the other nodes\n"
    "  up NAME                  mark a node up again\n"
    "  (weight, down and up publish nothing when the node already is as asked; load,\n"
    "  when the file gives the ring's node set, in its order, and its parameters.)\n"
    "\n"
    "Commands that read a ring (no lock; read permission is enough):\n"
    "  show                     status, parameters and nodes, with each node's share\n"
    "                           of the keyspace\n"
    "  lookup [-n N] KEY...     print KEY, then the name and address of the node that\n"
    "                           owns it (-n: of its first N nodes), tab-separated\n"
    "  lookup [-n N] --stdin    the same for each line of standard input, answered as\n"
    "                           it arrives and following new generations live\n"
    "  dump                     print the node set as JSON, as 'load' reads it\n"
    "  list                     print every ring of this host, one per line:\n"
    "                           name, generation, nodes, algorithm (tab-separated)\n"
    "\n"
    "Other commands:\n"
    "  destroy                  remove the ring; readers keep their last version\n"
    "\n"
    "Options:\n"
    "  -r, --ring RING          the ring to use (default: $SHMRING_RING, else\n"
    "                           \"default\"); 1-200 characters of A-Z a-z 0-9 _ . -\n"
    "      --json               print results as JSON\n"
    "      --dry-run            (changing commands and destroy) publish nothing; say\n"
    "                           what would change and which fraction of 100000\n"
    "                           sampled keys would move to another node\n"
    "  -h, --help               print this help and exit\n"
    "  -V, --version            print the version and exit\n"
    "\n"
    "Options of init:\n"
    "      --algorithm A        ring (default), maglev or ketama\n"
    "      --hash H             xxh3 (default), md5, crc32, fnv1a or murmur3;\n"
    "                           ketama always uses md5\n"
    "      --vnodes N           ring points per unit of weight, 1-65535 (default 160)\n"
    "      --table-size P       maglev table size: a prime, or 0 (default) to size\n"
    "                           the table from the number of up nodes\n"
    "      --mode M             octal read/write bits of the ring, within 0666 (default "
    "0644)\n"
    "      --group G            group of the ring, by name or number\n"
    "Options of add:\n"
    "      --weight W           the new node's weight, 1-65535 (default 1)\n"
    "Options of lookup:\n"
    "  -n N                     print the first N distinct up nodes (1-64) in the\n"
    "                           ring's preference order\n"
    "      --stdin              read keys from standard input, one per line\n"
    "\n"
    "Options may come before or after the command; put -- before arguments that\n"
    "begin with '-'.\n"
    "\n"
    "Exit status: 0 success, 1 the operation failed, 2 usage error.\n";

/* ---- Diagnostics and parsing --------------------------------------------------- */

/* Prints "ringctl: error: MESSAGE" as one line on stderr and returns STATUS. Control
 * characters (from a key or a file name) are shown as '?' to keep it one line. */
static int fail(int status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(int status, const char *format, ...)
{
    char message[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, format);
    vsnprintf(message, sizeof(message), format, ap);
    va_end(ap);
    for (char *p = message; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    }
    fprintf(stderr, "ringctl: error: %s\n", message);
    return status;
}

/*
 * Parses TEXT as a number in BASE from MIN to MAX, strictly: digits only (no sign,
 * no spaces, no exponent, nothing after them), and no overflow.
 */
static bool parse_number(const char *text, int base, unsigned long min, unsigned long max,
                         unsigned long *out)
{
    if (text[0] < '0' || text[0] > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long value = strtoul(text, &end, base);
    if (errno != 0 || *end != '\0' || value < min || value > max)
        return false;
    *out = value;
    return true;
}

static int parse_weight(const char *text, uint32_t *weight)
{
    unsigned long value;
    if (!parse_number(text, 10, 1, SHMRING_WEIGHT_MAX, &value))
        return fail(EXIT_USAGE, "weight must be an integer from 1 to %d: '%s'",
                    SHMRING_WEIGHT_MAX, text);
    *weight = (uint32_t)value;
    return EXIT_OK;
}

static int parse_group(const char *text, gid_t *out)
{
    unsigned long value;
    if (parse_number(text, 10, 0, (gid_t)-1 - 1, &value)) {
        *out = (gid_t)value;
        return EXIT_OK;
    }
    const struct group *group = getgrnam(text);
    if (group == NULL)
        return fail(EXIT_USAGE, "unknown group '%s'", text);
    *out = group->gr_gid;
    return EXIT_OK;
}

/* Handles one option that getopt_long returned. */
static int parse_option(struct cli *cli, int code, const char *value)
{
    unsigned long number;
    switch (code) {
    case 'r':
        cli->ring = value;
        return EXIT_OK;
    case CODE_JSON:
        cli->json = true;
        return EXIT_OK;
    case CODE_DRY_RUN:
        cli->given |= OPTION_DRY_RUN;
        cli->dry_run = true;
        return EXIT_OK;
    case CODE_ALGORITHM:
        cli->given |= OPTION_ALGORITHM;
        if (shmring_algorithm_parse(value, &cli->params.algorithm) != 0)
            return fail(EXIT_USAGE, "unknown algorithm '%s' (use ring, maglev or ketama)",
                        value);
        return EXIT_OK;
    case CODE_HASH:
        cli->given |= OPTION_HASH;
        if (shmring_hash_parse(value, &cli->params.hash) != 0)
            return fail(EXIT_USAGE,
                        "unknown hash '%s' (use xxh3, md5, crc32, fnv1a or murmur3)",
                        value);
        return EXIT_OK;
    case CODE_VNODES:
        cli->given |= OPTION_VNODES;
        if (!parse_number(value, 10, 1, SHMRING_VNODES_MAX, &number))
            return fail(EXIT_USAGE, "vnodes must be an integer from 1 to %d: '%s'",
                        SHMRING_VNODES_MAX, value);
        cli->params.vnodes = (uint32_t)number;
        return EXIT_OK;
    case CODE_TABLE_SIZE:
        cli->given |= OPTION_TABLE_SIZE;
        if (!parse_number(value, 10, 0, SHMRING_POINTS_MAX, &number))
            return fail(EXIT_USAGE,
                        "table size must be 0 or a prime number up to %u: '%s'",
                        SHMRING_POINTS_MAX, value);
        cli->params.table_size = (uint32_t)number;
        return EXIT_OK;
    case CODE_MODE:
        cli->given |= OPTION_MODE;
        /* Read and write bits only: the library refuses the others. */
        if (!parse_number(value, 8, 0, 0666, &number) || (number & ~0666) != 0)
            return fail(EXIT_USAGE,
                        "mode must be octal read and write bits within 0666: '%s'",
                        value);
        cli->create.mode = (mode_t)number;
        return EXIT_OK;
    case CODE_GROUP:
        cli->given |= OPTION_GROUP;
        return parse_group(value, &cli->create.group);
    case CODE_WEIGHT:
        cli->given |= OPTION_WEIGHT;
        return parse_weight(value, &cli->weight);
    case 'n':
        cli->given |= OPTION_COUNT;
        if (!parse_number(value, 10, 1, SHMRING_LOOKUP_N_MAX, &number))
            return fail(EXIT_USAGE, "-n must be an integer from 1 to %d: '%s'",
                        SHMRING_LOOKUP_N_MAX, value);
        cli->count = number;
        return EXIT_OK;
    case CODE_STDIN:
        cli->given |= OPTION_STDIN;
        return EXIT_OK;
    default:
        return fail(EXIT_USAGE, "unexpected option code %d", code);
    }
}

/* Reports what getopt_long could not parse: the option as the user typed it. */
static int option_error(int code, char **argv)
{
    const char *typed = argv[optind - 1];
    char name[LINE_MAX_BYTES];
    if (strncmp(typed, "--", 2) == 0) {
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(typed, "="), typed);
    } else {
        snprintf(name, sizeof(name), "-%c", optopt);
    }
    if (code == ':')
        return fail(EXIT_USAGE, "option '%s' needs an argument", name);
    if (optopt != 0 && strncmp(typed, "--", 2) == 0)
        return fail(EXIT_USAGE, "option '%s' takes no argument", name);
    return fail(EXIT_USAGE, "unknown option '%s'", name);
}

/* ---- JSON output --------------------------------------------------------------- */

/*
 * A JSON string of TEXT. Names and addresses are UTF-8, but lookup keys are any bytes
 * (Jansson refuses anything but UTF-8): text that is not valid UTF-8 is written with
 * each non-ASCII byte as '?', so that the output is always valid JSON.
 */
static json_t *json_text(const char *text, size_t len)
{
    json_t *value = json_stringn(text, len);
    if (value != NULL)
        return value;
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++)
        copy[i] = (unsigned char)text[i] >= 0x80 || text[i] == '\0' ? '?' : text[i];
    value = json_stringn(copy, len);
    free(copy);
    return value;
}

static json_t *json_str(const char *text)
{
    return json_text(text, strlen(text));
}

static json_t *json_uint(uint64_t value)
{
    return json_integer((json_int_t)value);
}

/* Prints VALUE as one line (or indented, for the larger objects) and frees it. */
static int json_print(json_t *value, size_t flags)
{
    char *text = value != NULL ? json_dumps(value, flags) : NULL;
    json_decref(value);
    if (text == NULL)
        return fail(EXIT_FAILED, "cannot format JSON output: %s",
                    shmring_strerror(SHMRING_ENOMEM));
    puts(text);
    free(text);
    return EXIT_OK;
}

static const char *state_name(shmring_state_t state)
{
    return state == SHMRING_STATE_UP ? "up" : "down";
}

static json_t *json_node_info(const shmring_node_info_t *node)
{
    json_t *object = json_object();
    json_object_set_new(object, "id", json_uint(node->id));
    json_object_set_new(object, "name", json_str(node->name));
    json_object_set_new(object, "address", json_str(node->address));
    json_object_set_new(object, "weight", json_uint(node->weight));
    json_object_set_new(object, "state", json_string(state_name(node->state)));
    return object;
}

/* ---- Changing commands --------------------------------------------------------- */

/* What a changing command did to the node set, for its report. */
struct change {
    /* "added node-3 (id 3) to ring 'cache'", or why nothing changed. */
    char done[LINE_MAX_BYTES];
    /* "would add node-3 (id 3)" */
    char would[LINE_MAX_BYTES];
    /* Nothing to do: `done` says why, and nothing is published. */
    bool unchanged;
    /* Whether a dry run samples the keys that would move. */
    bool sample;
    /* The details of the change, for --json. */
    json_t *json;
};

/* Changes *SET (or replaces it) as the command asks. Returns an exit status, having
 * said why on failure. */
typedef int (*change_fn)(struct cli *cli, shmring_nodeset_t **set, struct change *out);

/* Finds NAME in SET or says there is no such node. */
static int find_node(const struct cli *cli, const shmring_nodeset_t *set,
                     const char *name, shmring_node_info_t *node)
{
    size_t index;
    if (shmring_nodeset_find(set, name, &index) != 0 ||
        shmring_nodeset_get(set, index, node) != 0) {
        fail(EXIT_FAILED, "no node named '%s' in ring '%s'", name, cli->ring);
        return EXIT_FAILED; /* spelled out: *node is not filled on this path */
    }
    return EXIT_OK;
}

static int library_failure(const char *what, const struct cli *cli, int err)
{
    return fail(EXIT_FAILED, "cannot %s ring '%s': %s", what, cli->ring,
                shmring_strerror(err));
}

static void describe_params(const shmring_params_t *params, char *out, size_t size)
{
    const char *algorithm = shmring_algorithm_name(params->algorithm);
    const char *hash = shmring_hash_name(params->hash);
    if (params->algorithm == SHMRING_ALGORITHM_RING)
        snprintf(out, size, "%s, %s, %" PRIu32 " vnodes", algorithm, hash,
                 params->vnodes);
    else if (params->algorithm == SHMRING_ALGORITHM_MAGLEV && params->table_size != 0)
        snprintf(out, size, "%s, %s, table size %" PRIu32, algorithm, hash,
                 params->table_size);
    else
        snprintf(out, size, "%s, %s", algorithm, hash);
}

static int change_init(struct cli *cli, shmring_nodeset_t **set, struct change *out)
{
    int err = shmring_nodeset_set_params(*set, &cli->params);
    if (err != 0)
        return library_failure("create", cli, err);
    char params[256];
    describe_params(&cli->params, params, sizeof(params));
    snprintf(out->done, sizeof(out->done), "created ring '%s' (%s)", cli->ring, params);
    snprintf(out->would, sizeof(out->would), "would create ring '%s' (%s)", cli->ring,
             params);
    out->sample = false;
    out->json = json_object();
    json_object_set_new(out->json, "action", json_string("init"));
    json_object_set_new(out->json, "algorithm",
                        json_string(shmring_algorithm_name(cli->params.algorithm)));
    json_object_set_new(out->json, "hash",
                        json_string(shmring_hash_name(cli->params.hash)));
    json_object_set_new(out->json, "vnodes", json_uint(cli->params.vnodes));
    json_object_set_new(out->json, "table_size", json_uint(cli->params.table_size));
    return EXIT_OK;
}

static int change_add(struct cli *cli, shmring_nodeset_t **set, struct change *out)
{
    const char *name = cli->args[0], *address = cli->args[1];
    uint32_t id;
    int err =
        shmring_nodeset_add(*set, name, address, cli->weight, SHMRING_STATE_UP, &id);
    if (err == SHMRING_EDUPLICATE)
        return fail(EXIT_FAILED, "node '%s' already exists in ring '%s'", name,
                    cli->ring);
    if (err != 0)
        return fail(EXIT_FAILED, "cannot add node '%s' to ring '%s': %s", name, cli->ring,
                    shmring_strerror(err));
    snprintf(out->done, sizeof(out->done), "added %s (id %" PRIu32 ") to ring '%s'", name,
             id, cli->ring);
    snprintf(out->would, sizeof(out->would), "would add %s (id %" PRIu32 ")", name, id);
    shmring_node_info_t node = {.id = id,
                                .weight = cli->weight,
                                .state = SHMRING_STATE_UP,
                                .name = name,
                                .address = address};
    out->json = json_object();
    json_object_set_new(out->json, "action", json_string("add"));
    json_object_set_new(out->json, "node", json_node_info(&node));
    return EXIT_OK;
}

static int change_remove(struct cli *cli, shmring_nodeset_t **set, struct change *out)
{
    shmring_node_info_t node;
    int status = find_node(cli, *set, cli->args[0], &node);
    if (status != EXIT_OK)
        return status;
    /* The node's strings belong to the set: describe it before removing it. */
    snprintf(out->done, sizeof(out->done), "removed %s (id %" PRIu32 ") from ring '%s'",
             node.name, node.id, cli->ring);
    snprintf(out->would, sizeof(out->would), "would remove %s (id %" PRIu32 ")",
             node.name, node.id);
    out->json = json_object();
    json_object_set_new(out->json, "action", json_string("remove"));
    json_object_set_new(out->json, "node", json_node_info(&node));
    int err = shmring_nodeset_remove(*set, cli->args[0]);
    if (err != 0)
        return library_failure("change", cli, err);
    return EXIT_OK;
}

static int change_weight(struct cli *cli, shmring_nodeset_t **set, struct change *out)
{
    shmring_node_info_t node;
    int status = find_node(cli, *set, cli->args[0], &node);
    if (status != EXIT_OK)
        return status;
    out->json = json_object();
    json_object_set_new(out->json, "action", json_string("weight"));
    if (node.weight == cli->weight) {
        out->unchanged = true;
        snprintf(out->done, sizeof(out->done), "node '%s' already has weight %" PRIu32,
                 node.name, node.weight);
        json_object_set_new(out->json, "node", json_node_info(&node));
        return EXIT_OK;
    }
    snprintf(out->done, sizeof(out->done),
             "changed weight of %s (id %" PRIu32 ") from %" PRIu32 " to %" PRIu32
             " in ring '%s'",
             node.name, node.id, node.weight, cli->weight, cli->ring);
    snprintf(out->would, sizeof(out->would),
             "would change weight of %s (id %" PRIu32 ") from %" PRIu32 " to %" PRIu32,
             node.name, node.id, node.weight, cli->weight);
    json_object_set_new(out->json, "previous_weight", json_uint(node.weight));
    node.weight = cli->weight;
    json_object_set_new(out->json, "node", json_node_info(&node));
    int err = shmring_nodeset_set_weight(*set, cli->args[0], cli->weight);
    if (err != 0)
        return library_failure("change", cli, err);
    return EXIT_OK;
}

static int change_state(struct cli *cli, shmring_nodeset_t **set, struct change *out,
                        shmring_state_t state)
{
    shmring_node_info_t node;
    int status = find_node(cli, *set, cli->args[0], &node);
    if (status != EXIT_OK)
        return status;
    const char *word = state_name(state);
    out->json = json_object();
    json_object_set_new(out->json, "action", json_string(word));
    if (node.state == state) {
        out->unchanged = true;
        snprintf(out->done, sizeof(out->done), "node '%s' is already %s", node.name,
                 word);
        json_object_set_new(out->json, "node", json_node_info(&node));
        return EXIT_OK;
    }
    snprintf(out->done, sizeof(out->done), "marked %s (id %" PRIu32 ") %s in ring '%s'",
             node.name, node.id, word, cli->ring);
    snprintf(out->would, sizeof(out->would), "would mark %s (id %" PRIu32 ") %s",
             node.name, node.id, word);
    node.state = state;
    json_object_set_new(out->json, "node", json_node_info(&node));
    int err = shmring_nodeset_set_state(*set, cli->args[0], state);
    if (err != 0)
        return library_failure("change", cli, err);
    return EXIT_OK;
}

static int change_down(struct cli *cli, shmring_nodeset_t **set, struct change *out)
{
    return change_state(cli, set, out, SHMRING_STATE_DOWN);
}

static int change_up(struct cli *cli, shmring_nodeset_t **set, struct change *out)
{
    return change_state(cli, set, out, SHMRING_STATE_UP);
}

/* The JSON text that `load` read, before the writer lock is taken. */
static struct {
    char *text;
    size_t len;
    const char *label; /* the file name, for diagnostics */
} load_input;

static int read_load_input(const char *path)
{
    bool from_stdin = strcmp(path, "-") == 0;
    load_input.label = from_stdin ? "<stdin>" : path;
    FILE *file = from_stdin ? stdin : fopen(path, "rb");
    if (file == NULL)
        return fail(EXIT_FAILED, "cannot read '%s': %s", path, strerror(errno));
    size_t capacity = 65536, len = 0;
    char *text = malloc(capacity);
    int status = text == NULL ? fail(EXIT_FAILED, "cannot read '%s': %s",
                                     load_input.label, strerror(ENOMEM))
                              : EXIT_OK;
    while (status == EXIT_OK) {
        if (len == capacity) {
            char *grown = realloc(text, capacity * 2);
            if (grown == NULL) {
                status = fail(EXIT_FAILED, "cannot read '%s': %s", load_input.label,
                              strerror(ENOMEM));
                break;
            }
            text = grown;
            capacity *= 2;
        }
        size_t n = fread(text + len, 1, capacity - len, file);
        len += n;
        if (n == 0) {
            if (ferror(file))
                status = fail(EXIT_FAILED, "cannot read '%s': %s", load_input.label,
                              strerror(errno));
            break;
        }
    }
    if (!from_stdin)
        fclose(file);
    if (status != EXIT_OK) {
        free(text);
        return status;
    }
    load_input.text = text;
    load_input.len = len;
    return EXIT_OK;
}

/* Which nodes of AFTER are new or changed compared with BEFORE, and how many of
 * BEFORE are gone. */
static void count_differences(const shmring_nodeset_t *before,
                              const shmring_nodeset_t *after, size_t *added,
                              size_t *removed, size_t *changed)
{
    *added = *removed = *changed = 0;
    size_t kept = 0;
    for (size_t i = 0; i < shmring_nodeset_count(after); i++) {
        shmring_node_info_t node, old;
        size_t index;
        if (shmring_nodeset_get(after, i, &node) != 0)
            continue;
        if (shmring_nodeset_find(before, node.name, &index) != 0 ||
            shmring_nodeset_get(before, index, &old) != 0) {
            ++*added;
            continue;
        }
        kept++;
        if (node.weight != old.weight || node.state != old.state ||
            strcmp(node.address, old.address) != 0)
            ++*changed;
    }
    *removed = shmring_nodeset_count(before) - kept;
}

/* Do BEFORE and AFTER list the same node names in the same order? */
static bool same_order(const shmring_nodeset_t *before, const shmring_nodeset_t *after)
{
    size_t count = shmring_nodeset_count(after);
    if (shmring_nodeset_count(before) != count)
        return false;
    for (size_t i = 0; i < count; i++) {
        shmring_node_info_t old, node;
        if (shmring_nodeset_get(before, i, &old) != 0 ||
            shmring_nodeset_get(after, i, &node) != 0 || strcmp(old.name, node.name) != 0)
            return false;
    }
    return true;
}

static int change_load(struct cli *cli, shmring_nodeset_t **set, struct change *out)
{
    shmring_params_t base, params;
    shmring_nodeset_params(*set, &base);
    shmring_nodeset_t *loaded;
    shmring_json_error_t error;
    memset(&error, 0, sizeof(error));
    int err = shmring_nodeset_from_json(load_input.text, load_input.len, &base, &loaded,
                                        &error);
    if (err == SHMRING_EJSON)
        return fail(EXIT_FAILED, "%s: %s", load_input.label, error.text);
    if (err != 0)
        return fail(EXIT_FAILED, "%s: %s", load_input.label, shmring_strerror(err));
    /* Publishing no nodes would make every worker's lookup fail at once: almost
     * always a truncated or wrong file. Starting over is destroy and init. */
    if (shmring_nodeset_count(loaded) == 0) {
        shmring_nodeset_free(loaded);
        return fail(EXIT_FAILED,
                    "%s: nodes: the node set is empty; a ring without nodes routes no "
                    "key (to start over, use destroy and init)",
                    load_input.label);
    }
    err = shmring_nodeset_inherit_ids(loaded, *set);
    if (err != 0) {
        shmring_nodeset_free(loaded);
        return fail(EXIT_FAILED, "%s: cannot give the new nodes ids: %s",
                    load_input.label, shmring_strerror(err));
    }

    size_t added, removed, changed;
    count_differences(*set, loaded, &added, &removed, &changed);
    shmring_nodeset_params(loaded, &params);
    bool params_changed = memcmp(&params, &base, sizeof(params)) != 0;
    size_t count = shmring_nodeset_count(loaded);
    char summary[256];
    snprintf(summary, sizeof(summary), "%zu added, %zu removed, %zu changed%s", added,
             removed, changed, params_changed ? ", new parameters" : "");
    snprintf(out->done, sizeof(out->done), "loaded %zu node%s into ring '%s' (%s)", count,
             count == 1 ? "" : "s", cli->ring, summary);
    snprintf(out->would, sizeof(out->would), "would load %zu node%s (%s)", count,
             count == 1 ? "" : "s", summary);
    out->json = json_object();
    json_object_set_new(out->json, "action", json_string("load"));
    json_object_set_new(out->json, "nodes", json_uint(count));
    json_object_set_new(out->json, "added", json_uint(added));
    json_object_set_new(out->json, "removed", json_uint(removed));
    json_object_set_new(out->json, "changed_nodes", json_uint(changed));
    json_object_set_new(out->json, "params_changed", json_boolean(params_changed));
    /* The same file loaded again (a configuration run, say) publishes nothing, as
     * weight, up and down do when nothing changes: every worker would otherwise map
     * and validate a new version for no change. Node order counts, as the snapshot
     * keeps it. */
    if (added == 0 && removed == 0 && changed == 0 && !params_changed &&
        same_order(*set, loaded)) {
        out->unchanged = true;
        snprintf(out->done, sizeof(out->done),
                 "ring '%s' already has this node set (%zu node%s)", cli->ring, count,
                 count == 1 ? "" : "s");
        shmring_nodeset_free(loaded);
        return EXIT_OK;
    }
    shmring_nodeset_free(*set);
    *set = loaded;
    return EXIT_OK;
}

/*
 * The fraction of DRY_RUN_SAMPLES fixed keys ("key-0", "key-1", ...) whose node (by
 * name) differs between BEFORE (NULL: nothing published) and AFTER. A key that one
 * version can answer and the other cannot (no node up) counts as moved.
 */
static double moved_fraction(const void *before, const void *after)
{
    unsigned moved = 0;
    for (int i = 0; i < DRY_RUN_SAMPLES; i++) {
        char key[32];
        size_t len = (size_t)snprintf(key, sizeof(key), "key-%d", i);
        shmring_node_t old, now;
        int old_err = before != NULL ? shmring_snapshot_lookup(before, key, len, &old)
                                     : SHMRING_EEMPTY;
        int now_err = shmring_snapshot_lookup(after, key, len, &now);
        if ((old_err == 0) != (now_err == 0) ||
            (old_err == 0 && strcmp(old.name, now.name) != 0))
            moved++;
    }
    return (double)moved / DRY_RUN_SAMPLES;
}

static json_t *json_report(const struct cli *cli, uint64_t generation)
{
    json_t *object = json_object();
    json_object_set_new(object, "ring", json_str(cli->ring));
    json_object_set_new(object, "generation", json_uint(generation));
    return object;
}

static int report_dry_run(const struct cli *cli, const struct change *change,
                          const void *current, const shmring_nodeset_t *set,
                          uint64_t generation)
{
    double fraction = 0.0;
    if (change->sample) {
        void *next;
        size_t size;
        int err = shmring_snapshot_build(set, &next, &size);
        if (err == 0)
            err = shmring_snapshot_validate(next, size);
        if (err != 0) {
            free(next);
            return library_failure("build", cli, err);
        }
        fraction = moved_fraction(current, next);
        free(next);
    }
    if (cli->json) {
        json_t *object = json_report(cli, generation);
        json_object_set_new(object, "dry_run", json_true());
        json_object_update(object, change->json);
        if (change->sample) {
            json_object_set_new(object, "moved_fraction", json_real(fraction));
            json_object_set_new(object, "sampled_keys", json_integer(DRY_RUN_SAMPLES));
        }
        return json_print(object, JSON_COMPACT);
    }
    if (change->sample)
        printf("%s: %.2f%% of keys would move (sampled %d keys)\n", change->would,
               fraction * 100.0, DRY_RUN_SAMPLES);
    else
        printf("%s\n", change->would);
    return EXIT_OK;
}

static int report_done(const struct cli *cli, const struct change *change,
                       uint64_t generation)
{
    if (cli->json) {
        json_t *object = json_report(cli, generation);
        json_object_update(object, change->json);
        if (change->unchanged)
            json_object_set_new(object, "changed", json_false());
        return json_print(object, JSON_COMPACT);
    }
    if (change->unchanged)
        printf("%s\n", change->done);
    else
        printf("%s: generation %" PRIu64 "\n", change->done, generation);
    return EXIT_OK;
}

/* How a changing command opens its ring. */
enum open_mode {
    OPEN_EXISTING, /* the ring must exist */
    OPEN_CREATE,   /* create it (default mode) if it does not exist */
    OPEN_EXCLUSIVE /* create it; it must not exist */
};

/* The state of one changing command. */
struct session {
    shmring_writer_t *writer;
    /* Whether this command created the ring (and so removes it on failure). */
    bool created;
    /* For --dry-run: a copy of the current version (NULL: nothing published). */
    void *current;
    shmring_nodeset_t *set;
    uint64_t generation;
};

/* Opens the ring for writing and reads its node set. */
static int session_open_writer(struct cli *cli, enum open_mode mode, struct session *s)
{
    int err;
    if (mode == OPEN_EXCLUSIVE) {
        err = shmring_writer_open(cli->ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL,
                                  &cli->create, &s->writer);
        s->created = err == 0;
        if (err == SHMRING_EEXIST)
            return fail(EXIT_FAILED, "ring '%s' already exists", cli->ring);
        if (err != 0)
            return library_failure("create", cli, err);
    } else {
        err = shmring_writer_open(cli->ring, 0, NULL, &s->writer);
        if (err == SHMRING_ENOENT && mode == OPEN_CREATE) {
            /* Create it exclusively, so that we know whether to remove it again if
             * the command fails; if another process just created it, use that. */
            err = shmring_writer_open(
                cli->ring, SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL, NULL, &s->writer);
            s->created = err == 0;
            if (err == SHMRING_EEXIST)
                err = shmring_writer_open(cli->ring, 0, NULL, &s->writer);
        }
        if (err != 0)
            return library_failure("open", cli, err);
    }
    s->generation = shmring_writer_generation(s->writer);
    err = shmring_writer_nodeset(s->writer, &s->set);
    if (err != 0)
        return library_failure("read", cli, err);
    return EXIT_OK;
}

/* For --dry-run: reads the current version without the writer lock. */
static int session_open_readonly(struct cli *cli, enum open_mode mode, struct session *s)
{
    size_t size;
    int err = shmring_ring_snapshot(cli->ring, &s->generation, &s->current, &size);
    if (err == 0 && mode == OPEN_EXCLUSIVE)
        return fail(EXIT_FAILED, "ring '%s' already exists", cli->ring);
    if (err == SHMRING_ENOENT && mode != OPEN_EXISTING) {
        s->generation = 0;
        s->current = NULL;
        err = 0;
    }
    if (err != 0)
        return library_failure("open", cli, err);
    err = s->current != NULL ? shmring_nodeset_from_snapshot(s->current, &s->set)
                             : shmring_nodeset_new(&s->set);
    if (err != 0)
        return library_failure("read", cli, err);
    return EXIT_OK;
}

static int run_change(struct cli *cli, enum open_mode mode, change_fn apply)
{
    struct session s = {0};
    struct change change = {.sample = true};
    int status = cli->dry_run ? session_open_readonly(cli, mode, &s)
                              : session_open_writer(cli, mode, &s);
    if (status == EXIT_OK)
        status = apply(cli, &s.set, &change);
    if (status == EXIT_OK) {
        if (change.unchanged) {
            status = report_done(cli, &change, s.generation);
        } else if (cli->dry_run) {
            status = report_dry_run(cli, &change, s.current, s.set, s.generation);
        } else {
            int err = shmring_writer_publish(s.writer, s.set, &s.generation);
            status = err != 0 ? library_failure("publish", cli, err)
                              : report_done(cli, &change, s.generation);
        }
    }
    shmring_writer_close(s.writer);
    if (s.created && status != EXIT_OK) {
        /* Leave no empty ring behind from a command that failed. The lock is released
         * first: shmring_ring_destroy() takes it too. */
        int err = shmring_ring_destroy(cli->ring);
        (void)err; /* the failure that matters has been reported */
    }
    free(s.current);
    shmring_nodeset_free(s.set);
    json_decref(change.json);
    return status;
}

static int cmd_init(struct cli *cli)
{
    if (!(cli->given & OPTION_MODE))
        cli->create.mode = DEFAULT_RING_MODE;
    /* Without --hash, the algorithm's own (ketama takes only md5: use it rather than
     * refuse). */
    if (!(cli->given & OPTION_HASH))
        cli->params.hash = shmring_algorithm_default_hash(cli->params.algorithm);
    int err = shmring_params_check(&cli->params);
    if (err == SHMRING_EBADHASH)
        return fail(EXIT_USAGE, "hash '%s' cannot be used with algorithm '%s'",
                    shmring_hash_name(cli->params.hash),
                    shmring_algorithm_name(cli->params.algorithm));
    if (err == SHMRING_EINVAL)
        return fail(EXIT_USAGE,
                    "table size must be 0 or a prime number up to %u: '%" PRIu32 "'",
                    SHMRING_POINTS_MAX, cli->params.table_size);
    if (err != 0)
        return fail(EXIT_USAGE, "%s", shmring_strerror(err));
    return run_change(cli, OPEN_EXCLUSIVE, change_init);
}

static int cmd_load(struct cli *cli)
{
    int status = read_load_input(cli->args[0]);
    if (status != EXIT_OK)
        return status;
    status = run_change(cli, OPEN_CREATE, change_load);
    free(load_input.text);
    return status;
}

static int cmd_add(struct cli *cli)
{
    if (shmring_node_name_check(cli->args[0]) != 0)
        return fail(EXIT_USAGE,
                    "invalid node name '%s': it must have 1 to %d bytes of UTF-8 "
                    "and no control characters",
                    cli->args[0], SHMRING_NAME_MAX);
    if (shmring_node_address_check(cli->args[1]) != 0)
        return fail(EXIT_USAGE,
                    "invalid address '%s': it must have 1 to %d bytes of UTF-8 "
                    "and no control characters",
                    cli->args[1], SHMRING_ADDRESS_MAX);
    return run_change(cli, OPEN_EXISTING, change_add);
}

static int cmd_remove(struct cli *cli)
{
    return run_change(cli, OPEN_EXISTING, change_remove);
}

static int cmd_weight(struct cli *cli)
{
    int status = parse_weight(cli->args[1], &cli->weight);
    if (status != EXIT_OK)
        return status;
    return run_change(cli, OPEN_EXISTING, change_weight);
}

static int cmd_down(struct cli *cli)
{
    return run_change(cli, OPEN_EXISTING, change_down);
}

static int cmd_up(struct cli *cli)
{
    return run_change(cli, OPEN_EXISTING, change_up);
}

/* ---- Reading commands ---------------------------------------------------------- */

static void format_time(int64_t seconds, char *out, size_t size)
{
    time_t t = (time_t)seconds;
    struct tm tm;
    if (seconds == 0 || gmtime_r(&t, &tm) == NULL ||
        strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, size, "never");
}

static size_t digits_of(uint64_t value)
{
    size_t digits = 1;
    while (value >= 10) {
        value /= 10;
        digits++;
    }
    return digits;
}

static void show_table(const shmring_nodeset_t *set, const double *shares)
{
    size_t count = shmring_nodeset_count(set);
    int id_width = 2, name_width = 4, address_width = 7;
    for (size_t i = 0; i < count; i++) {
        shmring_node_info_t node;
        if (shmring_nodeset_get(set, i, &node) != 0)
            continue;
        if ((int)digits_of(node.id) > id_width)
            id_width = (int)digits_of(node.id);
        if ((int)strlen(node.name) > name_width)
            name_width = (int)strlen(node.name);
        if ((int)strlen(node.address) > address_width)
            address_width = (int)strlen(node.address);
    }
    printf("%-*s  %-*s  %-*s  WEIGHT  STATE  SHARE\n", id_width, "ID", name_width, "NAME",
           address_width, "ADDRESS");
    for (size_t i = 0; i < count; i++) {
        shmring_node_info_t node;
        if (shmring_nodeset_get(set, i, &node) != 0)
            continue;
        printf("%-*" PRIu32 "  %-*s  %-*s  %-6" PRIu32 "  %-5s  %.2f%%\n", id_width,
               node.id, name_width, node.name, address_width, node.address, node.weight,
               state_name(node.state), shares[i] * 100.0);
    }
}

static json_t *json_show(const struct cli *cli, const shmring_ring_status_t *status,
                         const void *snapshot, const shmring_nodeset_t *set,
                         const double *shares)
{
    char when[64], mode[16];
    json_t *object = json_report(cli, status->generation);
    if (snapshot != NULL) {
        shmring_snapshot_info_t info;
        shmring_snapshot_info(snapshot, &info);
        char fingerprint[17];
        snprintf(fingerprint, sizeof(fingerprint), "%016" PRIx64, info.fingerprint);
        json_object_set_new(object, "algorithm",
                            json_string(shmring_algorithm_name(info.params.algorithm)));
        json_object_set_new(object, "hash",
                            json_string(shmring_hash_name(info.params.hash)));
        json_object_set_new(object, "vnodes", json_uint(info.params.vnodes));
        json_object_set_new(object, "table_size", json_uint(info.params.table_size));
        json_object_set_new(object, "points", json_uint(info.point_count));
        json_object_set_new(object, "fingerprint", json_string(fingerprint));
        json_object_set_new(object, "size", json_uint(info.size));
        json_object_set_new(object, "up", json_uint(info.up_count));
    }
    json_object_set_new(object, "publish_count", json_uint(status->publish_count));
    format_time(status->published_at, when, sizeof(when));
    json_object_set_new(object, "publisher_pid",
                        status->published_at != 0 ? json_integer(status->publisher_pid)
                                                  : json_null());
    json_object_set_new(object, "published_at",
                        status->published_at != 0 ? json_string(when) : json_null());
    json_object_set_new(object, "owner", json_uint(status->owner));
    snprintf(mode, sizeof(mode), "%04o", (unsigned)status->mode);
    json_object_set_new(object, "mode", json_string(mode));
    json_t *nodes = json_array();
    for (size_t i = 0; set != NULL && i < shmring_nodeset_count(set); i++) {
        shmring_node_info_t node;
        if (shmring_nodeset_get(set, i, &node) != 0)
            continue;
        json_t *entry = json_node_info(&node);
        json_object_set_new(entry, "share", json_real(shares[i]));
        json_array_append_new(nodes, entry);
    }
    json_object_set_new(object, "nodes", nodes);
    return object;
}

static void show_text(const struct cli *cli, const shmring_ring_status_t *status,
                      const void *snapshot, const shmring_nodeset_t *set,
                      const double *shares)
{
    char when[64];
    format_time(status->published_at, when, sizeof(when));
    printf("ring:          %s\n", cli->ring);
    printf("generation:    %" PRIu64 "\n", status->generation);
    shmring_snapshot_info_t info;
    if (snapshot != NULL) {
        shmring_snapshot_info(snapshot, &info);
        printf("algorithm:     %s\n", shmring_algorithm_name(info.params.algorithm));
        printf("hash:          %s\n", shmring_hash_name(info.params.hash));
        if (info.params.algorithm == SHMRING_ALGORITHM_RING)
            printf("vnodes:        %" PRIu32 "\n", info.params.vnodes);
        else if (info.params.algorithm == SHMRING_ALGORITHM_MAGLEV)
            printf("table size:    %" PRIu32 "\n", info.point_count);
        printf("points:        %" PRIu32 "\n", info.point_count);
        printf("fingerprint:   %016" PRIx64 "\n", info.fingerprint);
    }
    printf("publishes:     %" PRIu64 "\n", status->publish_count);
    if (status->published_at != 0)
        printf("last publish:  %s by pid %" PRId64 "\n", when, status->publisher_pid);
    else
        printf("last publish:  never\n");
    printf("owner:         uid %lu\n", (unsigned long)status->owner);
    printf("mode:          %04o\n", (unsigned)status->mode);
    if (snapshot == NULL) {
        printf("nodes:         0 (nothing published yet)\n");
        return;
    }
    printf("nodes:         %" PRIu32 " (%" PRIu32 " up)\n", info.node_count,
           info.up_count);
    if (info.node_count > 0) {
        printf("\n");
        show_table(set, shares);
    }
}

static int cmd_show(struct cli *cli)
{
    shmring_ring_status_t status;
    void *snapshot = NULL;
    size_t size;
    uint64_t generation = 0;
    /* The status and the version are read separately: read again if a publication
     * came in between, so that both describe the same generation. */
    for (int attempt = 0; attempt < 10; attempt++) {
        free(snapshot);
        int err = shmring_ring_snapshot(cli->ring, &generation, &snapshot, &size);
        if (err == 0)
            err = shmring_ring_status(cli->ring, &status);
        if (err != 0) {
            free(snapshot);
            return library_failure("open", cli, err);
        }
        if (status.generation == generation)
            break;
    }
    status.generation = generation;

    shmring_nodeset_t *set = NULL;
    double *shares = NULL;
    if (snapshot != NULL) {
        int err = shmring_nodeset_from_snapshot(snapshot, &set);
        shmring_snapshot_info_t info;
        shmring_snapshot_info(snapshot, &info);
        shares = calloc(info.node_count + 1, sizeof(*shares));
        if (err == 0 && shares == NULL)
            err = SHMRING_ENOMEM;
        if (err != 0) {
            free(snapshot);
            free(shares);
            shmring_nodeset_free(set);
            return library_failure("read", cli, err);
        }
        shmring_snapshot_shares(snapshot, shares);
    }
    int result = EXIT_OK;
    if (cli->json)
        result =
            json_print(json_show(cli, &status, snapshot, set, shares), JSON_INDENT(2));
    else
        show_text(cli, &status, snapshot, set, shares);
    free(snapshot);
    free(shares);
    shmring_nodeset_free(set);
    return result;
}

/* Prints the answer for one key. */
static int lookup_one(struct cli *cli, shmring_t *reader, const char *key, size_t len)
{
    shmring_node_t nodes[SHMRING_LOOKUP_N_MAX];
    int found = shmring_lookup_n(reader, key, len, nodes, cli->count);
    if (found < 0)
        return fail(EXIT_FAILED, "cannot look up keys in ring '%s': %s", cli->ring,
                    shmring_strerror(found));
    if (cli->json) {
        json_t *object = json_object();
        json_object_set_new(object, "key", json_text(key, len));
        json_t *array = json_array();
        for (int i = 0; i < found; i++) {
            json_t *node = json_object();
            json_object_set_new(node, "id", json_uint(nodes[i].id));
            json_object_set_new(node, "name", json_str(nodes[i].name));
            json_object_set_new(node, "address", json_str(nodes[i].address));
            json_object_set_new(node, "weight", json_uint(nodes[i].weight));
            json_array_append_new(array, node);
        }
        json_object_set_new(object, "nodes", array);
        int status = json_print(object, JSON_COMPACT);
        if (status != EXIT_OK)
            return status;
    } else {
        fwrite(key, 1, len, stdout);
        for (int i = 0; i < found; i++)
            printf("\t%s\t%s", nodes[i].name, nodes[i].address);
        putchar('\n');
    }
    return EXIT_OK;
}

static int cmd_lookup(struct cli *cli)
{
    bool from_stdin = cli->given & OPTION_STDIN;
    if (from_stdin && cli->arg_count > 0)
        return fail(EXIT_USAGE, "lookup takes either keys or --stdin, not both");
    if (!from_stdin && cli->arg_count == 0)
        return fail(EXIT_USAGE, "missing arguments for 'lookup' (usage: ringctl lookup "
                                "[-n N] KEY... or ringctl lookup [-n N] --stdin)");
    shmring_t *reader;
    int err = shmring_open(cli->ring, &reader);
    if (err != 0)
        return library_failure("open", cli, err);
    int status = EXIT_OK;
    if (!from_stdin) {
        for (size_t i = 0; i < cli->arg_count && status == EXIT_OK; i++)
            status = lookup_one(cli, reader, cli->args[i], strlen(cli->args[i]));
    } else {
        /* One long-lived handle answers every line as it arrives, so the answers
         * follow new generations; each answer is flushed for the reader on the other
         * end of a pipe. */
        char *line = NULL;
        size_t capacity = 0;
        ssize_t len;
        while (status == EXIT_OK && (len = getline(&line, &capacity, stdin)) >= 0) {
            if (len > 0 && line[len - 1] == '\n')
                len--;
            status = lookup_one(cli, reader, line, (size_t)len);
            if (fflush(stdout) != 0)
                status = fail(EXIT_FAILED, "cannot write output: %s", strerror(errno));
        }
        if (status == EXIT_OK && ferror(stdin))
            status = fail(EXIT_FAILED, "cannot read standard input: %s", strerror(errno));
        free(line);
    }
    shmring_close(reader);
    return status;
}

static int cmd_dump(struct cli *cli)
{
    uint64_t generation;
    void *snapshot;
    size_t size;
    int err = shmring_ring_snapshot(cli->ring, &generation, &snapshot, &size);
    if (err != 0)
        return library_failure("open", cli, err);
    shmring_nodeset_t *set = NULL;
    err = snapshot != NULL ? shmring_nodeset_from_snapshot(snapshot, &set)
                           : shmring_nodeset_new(&set);
    char *text = NULL;
    if (err == 0)
        err = shmring_nodeset_to_json(set, &text);
    free(snapshot);
    shmring_nodeset_free(set);
    if (err != 0)
        return library_failure("read", cli, err);
    size_t len = strlen(text);
    fputs(text, stdout);
    if (len == 0 || text[len - 1] != '\n')
        putchar('\n');
    free(text);
    return EXIT_OK;
}

static int cmd_list(struct cli *cli)
{
    char **names;
    size_t count;
    int err = shmring_ring_list(&names, &count);
    if (err != 0)
        return fail(EXIT_FAILED, "cannot list rings: %s", shmring_strerror(err));
    int status = EXIT_OK;
    json_t *array = cli->json ? json_array() : NULL;
    for (size_t i = 0; i < count; i++) {
        uint64_t generation;
        void *snapshot;
        size_t size;
        err = shmring_ring_snapshot(names[i], &generation, &snapshot, &size);
        if (err == SHMRING_ENOENT)
            continue; /* destroyed since it was listed */
        shmring_snapshot_info_t info = {0};
        if (snapshot != NULL)
            shmring_snapshot_info(snapshot, &info);
        free(snapshot);
        const char *algorithm =
            snapshot != NULL ? shmring_algorithm_name(info.params.algorithm) : "-";
        /* Another user's private ring is listed without details; anything else that
         * cannot be read is a problem worth an exit status. */
        if (err != 0 && err != SHMRING_EACCES)
            status = fail(EXIT_FAILED, "cannot read ring '%s': %s", names[i],
                          shmring_strerror(err));
        if (array != NULL) {
            json_t *entry = json_object();
            json_object_set_new(entry, "ring", json_str(names[i]));
            if (err == 0) {
                json_object_set_new(entry, "generation", json_uint(generation));
                json_object_set_new(entry, "nodes", json_uint(info.node_count));
                json_object_set_new(entry, "up", json_uint(info.up_count));
                json_object_set_new(entry, "algorithm",
                                    snapshot != NULL ? json_string(algorithm)
                                                     : json_null());
            } else {
                json_object_set_new(entry, "error", json_string(shmring_strerror(err)));
            }
            json_array_append_new(array, entry);
        } else if (err == 0) {
            printf("%s\t%" PRIu64 "\t%" PRIu32 "\t%s\n", names[i], generation,
                   info.node_count, algorithm);
        } else {
            printf("%s\t-\t-\t-\n", names[i]);
        }
    }
    shmring_ring_list_free(names);
    if (array != NULL) {
        int printed = json_print(array, JSON_INDENT(2));
        if (status == EXIT_OK)
            status = printed;
    }
    return status;
}

static int cmd_destroy(struct cli *cli)
{
    if (cli->dry_run) {
        shmring_ring_status_t status;
        int err = shmring_ring_status(cli->ring, &status);
        if (err != 0)
            return library_failure("open", cli, err);
        if (cli->json) {
            json_t *object = json_report(cli, status.generation);
            json_object_set_new(object, "dry_run", json_true());
            json_object_set_new(object, "action", json_string("destroy"));
            return json_print(object, JSON_COMPACT);
        }
        printf("would destroy ring '%s' (generation %" PRIu64 ")\n", cli->ring,
               status.generation);
        return EXIT_OK;
    }
    int err = shmring_ring_destroy(cli->ring);
    if (err != 0)
        return library_failure("destroy", cli, err);
    if (cli->json) {
        json_t *object = json_object();
        json_object_set_new(object, "ring", json_str(cli->ring));
        json_object_set_new(object, "action", json_string("destroy"));
        return json_print(object, JSON_COMPACT);
    }
    printf("destroyed ring '%s'\n", cli->ring);
    return EXIT_OK;
}

/* ---- Main ---------------------------------------------------------------------- */

#define UNLIMITED ((size_t)-1)

static const struct command commands[] = {
    {"init",
     "init [--algorithm A] [--hash H] [--vnodes N] [--table-size P] [--mode M] "
     "[--group G]",
     0, 0, OPTIONS_INIT, cmd_init},
    {"load", "load FILE|-", 1, 1, OPTION_DRY_RUN, cmd_load},
    {"add", "add NAME ADDRESS [--weight W]", 2, 2, OPTION_DRY_RUN | OPTION_WEIGHT,
     cmd_add},
    {"remove", "remove NAME", 1, 1, OPTION_DRY_RUN, cmd_remove},
    {"weight", "weight NAME W", 2, 2, OPTION_DRY_RUN, cmd_weight},
    {"down", "down NAME", 1, 1, OPTION_DRY_RUN, cmd_down},
    {"up", "up NAME", 1, 1, OPTION_DRY_RUN, cmd_up},
    {"show", "show", 0, 0, 0, cmd_show},
    {"lookup", "lookup [-n N] KEY... | --stdin", 0, UNLIMITED,
     OPTION_COUNT | OPTION_STDIN, cmd_lookup},
    {"dump", "dump", 0, 0, 0, cmd_dump},
    {"list", "list", 0, 0, 0, cmd_list},
    {"destroy", "destroy", 0, 0, OPTION_DRY_RUN, cmd_destroy},
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    }
    return NULL;
}

/* Parses the command line into *CLI and *COMMAND; *COMMAND stays NULL when the work
 * is done already (--help, --version). Returns an exit status. */
static int parse_command_line(int argc, char **argv, struct cli *cli,
                              const struct command **command)
{
    *command = NULL;
    const char *ring = getenv("SHMRING_RING");
    cli->ring = ring != NULL && ring[0] != '\0' ? ring : "default";
    shmring_params_default(&cli->params);
    cli->create.mode = DEFAULT_RING_MODE;
    cli->create.group = (gid_t)-1;
    cli->weight = 1;
    cli->count = 1;

    bool help = false, version = false;
    opterr = 0; /* diagnostics are ours, in our format */
    int code;
    while ((code = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        int status;
        if (code == 'h')
            help = true;
        else if (code == 'V')
            version = true;
        else if (code == '?' || code == ':')
            return option_error(code, argv);
        else if ((status = parse_option(cli, code, optarg)) != EXIT_OK)
            return status;
    }
    if (help) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    if (version) {
        printf("ringctl %s\n", shmring_version());
        return EXIT_OK;
    }
    if (optind >= argc)
        return fail(EXIT_USAGE, "no command given (see 'ringctl --help')");
    const struct command *found = find_command(argv[optind]);
    if (found == NULL)
        return fail(EXIT_USAGE, "unknown command '%s' (see 'ringctl --help')",
                    argv[optind]);
    for (size_t bit = 0; bit < sizeof(option_bit_names) / sizeof(option_bit_names[0]);
         bit++) {
        if ((cli->given & (1u << bit)) && !(found->options & (1u << bit)))
            return fail(EXIT_USAGE, "option '%s' does not apply to '%s'",
                        option_bit_names[bit], found->name);
    }
    cli->args = argv + optind + 1;
    cli->arg_count = (size_t)(argc - optind - 1);
    if (cli->arg_count < found->min_args)
        return fail(EXIT_USAGE, "missing arguments for '%s' (usage: ringctl %s)",
                    found->name, found->synopsis);
    if (cli->arg_count > found->max_args)
        return fail(EXIT_USAGE, "too many arguments for '%s' (usage: ringctl %s)",
                    found->name, found->synopsis);
    if (found->run != cmd_list && shmring_ring_name_check(cli->ring) != 0)
        return fail(EXIT_USAGE,
                    "invalid ring name '%s' (1-%d characters of A-Z a-z 0-9 _ . -, "
                    "not ending in a dot and digits)",
                    cli->ring, SHMRING_RING_NAME_MAX);
    *command = found;
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    struct cli cli;
    memset(&cli, 0, sizeof(cli));
    const struct command *command;
    int status = parse_command_line(argc, argv, &cli, &command);
    if (status == EXIT_OK && command != NULL)
        status = command->run(&cli);
    /* Output that never reached its destination (a full disk, a closed pipe) is a
     * failure, not a success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int saved = errno;
        if (status == EXIT_OK)
            status = fail(EXIT_FAILED, "cannot write output: %s", strerror(saved));
    }
    return status;
}
