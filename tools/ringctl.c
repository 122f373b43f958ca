/*
 * ringctl: inspect and change shmring rings from the command line.
 *
 * A thin layer over libshmringctl: it parses the command line, calls the library and
 * prints what the library answers. Every changing command follows the same steps:
 * take the ring's writer lock, read the current node set, change it, publish exactly
 * one new generation. Any error before the publication leaves the ring as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "shmring.h"
#include "ringctl_ops.h"
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
/* The longest --wait, in seconds: the library takes milliseconds in an int. */
#define WAIT_SECONDS_MAX (INT_MAX / 1000)
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
    OPTION_WAIT = 1u << 10,
    OPTION_OWNER = 1u << 11,
    OPTION_ALL = 1u << 12,
};

#define OPTIONS_INIT                                                                     \
    (OPTION_DRY_RUN | OPTION_WAIT | OPTION_ALGORITHM | OPTION_HASH | OPTION_VNODES |     \
     OPTION_TABLE_SIZE | OPTION_MODE | OPTION_GROUP)
/* What every command that changes a ring (or destroys it) accepts. */
#define OPTIONS_CHANGE (OPTION_DRY_RUN | OPTION_WAIT)

/* Spellings of the option bits, in bit order, for diagnostics. */
static const char *const option_bit_names[] = {
    "--dry-run", "--algorithm", "--hash",   "--vnodes", "--table-size",
    "--mode",    "--group",     "--weight", "-n",       "--stdin",
    "--wait",    "--owner",     "--all",
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
    CODE_DIR,
    CODE_WAIT,
    CODE_OWNER,
    CODE_ALL,
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
    {"dir", required_argument, NULL, CODE_DIR},
    {"wait", required_argument, NULL, CODE_WAIT},
    {"owner", required_argument, NULL, CODE_OWNER},
    {"all", no_argument, NULL, CODE_ALL},
    {NULL, 0, NULL, 0},
};

/* A leading ':' makes getopt_long report a missing argument as ':', not '?'. */
static const char short_options[] = ":r:hVn:";

/* The parsed command line, and what the command did that its report must say. */
struct cli {
    const char *ring;
    /* Whether -r named the ring (metrics refuses -r with --all). */
    bool ring_given;
    /* The directory holding the rings (NULL: the library's default). */
    const char *directory;
    bool json;
    bool dry_run;
    unsigned given; /* enum option_bit */
    /* Where to read rings and whom to trust (--dir, --owner). */
    shmring_open_options_t open;
    /* How to change rings: --dir, --wait and, for init, --mode and --group. */
    shmring_writer_options_t writer;
    /* --wait in seconds; -1: as long as it takes. */
    int wait_seconds;
    /* Whether the "waiting for another writer" line was printed (once at most). */
    bool said_waiting;
    /* Whether the command changes the ring, for messages about whose ring it is. */
    bool writing;
    /* What the command did before reporting it: the generation it published (0:
     * none) or that it destroyed the ring. */
    uint64_t published;
    bool destroyed;
    /* init */
    shmring_params_t params;
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
    "nothing at all on error; only the ring's owner can change it):\n"
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
    "  list                     print every ring in the ring directory, one per line:\n"
    "                           name, generation, nodes, algorithm (tab-separated);\n"
    "                           rings it cannot read are skipped, each named in a\n"
    "                           warning on standard error\n"
    "  readers                  every process that maps a version of the ring: pid,\n"
    "                           command, generation, current or superseded, and the\n"
    "                           memory superseded versions keep in use\n"
    "  metrics [--all]          the ring's metrics (--all: every ring's) in the\n"
    "                           Prometheus text format, for node_exporter's textfile\n"
    "                           collector\n"
    "\n"
    "Other commands:\n"
    "  destroy                  remove the ring; readers keep their last version\n"
    "\n"
    "Options:\n"
    "  -r, --ring RING          the ring to use (default: $SHMRING_RING, else\n"
    "                           \"default\"); 1-200 characters of A-Z a-z 0-9 _ . -\n"
    "      --dir DIR            the directory holding the rings (default:\n"
    "                           $SHMRING_DIR, else /dev/shm); use a directory only\n"
    "                           root can write, such as /run/shmring, for system rings\n"
    "      --json               print results as JSON\n"
    "      --dry-run            (changing commands and destroy) publish nothing; say\n"
    "                           what would change and which fraction of 100000\n"
    "                           sampled keys would move to another node\n"
    "      --wait SECONDS       (changing commands and destroy) wait at most SECONDS\n"
    "                           for another writer of the ring to finish, then fail;\n"
    "                           0 fails at once (default: wait as long as it takes,\n"
    "                           saying so once on standard error)\n"
    "      --all                (metrics) every ring in the ring directory\n"
    "      --owner USER         (show, lookup, dump, list, readers, metrics) also\n"
    "                           accept rings owned by USER (a name or a uid); rings\n"
    "                           of root and of yourself are always accepted, other\n"
    "                           users' only this way\n"
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
    "      --mode M             who may read the ring: 0644 (default: everyone),\n"
    "                           0640 (its group), 0604 (others, not the group) or\n"
    "                           0600 (you only); nobody but you can ever change it\n"
    "      --group G            group of the ring, by name or number\n"
    "Options of add:\n"
    "      --weight W           the new node's weight, 1-65535 (default 1)\n"
    "Options of lookup:\n"
    "  -n N                     print the first N distinct up nodes (1-64) in the\n"
    "                           ring's preference order\n"
    "      --stdin              read keys from standard input, one per line\n"
    "\n"
    "Keys in lookup's output are escaped, so that every answer is one line of\n"
    "tab-separated fields: a backslash is printed as \\\\, TAB, LF and CR as \\t, \\n\n"
    "and \\r, and every other control byte (0x00-0x1f, 0x7f, and the bytes of the\n"
    "UTF-8 controls U+0080-U+009F) and every byte that is not part of valid UTF-8 as\n"
    "\\xHH (two lowercase hex digits). With --json, \"key\" holds the key exactly as\n"
    "a JSON string; a key that is not valid UTF-8 is given instead as \"key_base64\",\n"
    "its bytes in base64.\n"
    "\n"
    "Options may come before or after the command; put -- before arguments that\n"
    "begin with '-'.\n"
    "\n"
    "Exit status: 0 success, 1 the operation failed, 2 usage error.\n";

/* ---- Diagnostics and parsing --------------------------------------------------- */

static size_t printable_length(const unsigned char *text, size_t len);

/* Prints "ringctl: KIND: MESSAGE" as one line on stderr. Every byte that is not part
 * of a printable UTF-8 character (controls, C1 controls such as CSI, invalid UTF-8:
 * from a key, a node name or a file name) is shown as '?', so the message stays one
 * line and a terminal acts on none of it. */
static void diagnose(const char *kind, const char *format, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void diagnose(const char *kind, const char *format, va_list ap)
{
    char message[LINE_MAX_BYTES];
    vsnprintf(message, sizeof(message), format, ap);
    const unsigned char *text = (const unsigned char *)message;
    size_t len = strlen(message);
    fprintf(stderr, "ringctl: %s: ", kind);
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

/* Prints "ringctl: error: MESSAGE" and returns STATUS. */
static int fail(int status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(int status, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    diagnose("error", format, ap);
    va_end(ap);
    return status;
}

/* Prints "ringctl: warning: MESSAGE", for a problem that does not fail the command. */
static void warn(const char *format, ...) __attribute__((format(printf, 1, 2)));

static void warn(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    diagnose("warning", format, ap);
    va_end(ap);
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

static int parse_user(const char *text, uid_t *out)
{
    unsigned long value;
    if (parse_number(text, 10, 0, (uid_t)-1 - 1, &value)) {
        *out = (uid_t)value;
        return EXIT_OK;
    }
    const struct passwd *user = getpwnam(text);
    if (user == NULL)
        return fail(EXIT_USAGE, "unknown user '%s'", text);
    *out = user->pw_uid;
    return EXIT_OK;
}

/* The modes the library accepts: the owner reads and writes, the group and others
 * may read; anything more would let another user write, anything less would lock
 * the owner out. */
static bool mode_valid(unsigned long mode)
{
    return mode == 0600 || mode == 0640 || mode == 0604 || mode == 0644;
}

/* Handles one option that getopt_long returned. */
static int parse_option(struct cli *cli, int code, const char *value)
{
    unsigned long number;
    switch (code) {
    case 'r':
        cli->ring = value;
        cli->ring_given = true;
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
        if (!parse_number(value, 8, 0, 07777, &number) || !mode_valid(number))
            return fail(EXIT_USAGE, "mode must be 0600, 0640, 0604 or 0644: '%s'", value);
        cli->writer.mode = (mode_t)number;
        return EXIT_OK;
    case CODE_GROUP:
        cli->given |= OPTION_GROUP;
        return parse_group(value, &cli->writer.group);
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
    case CODE_DIR:
        if (value[0] == '\0')
            return fail(EXIT_USAGE, "option '--dir' needs a directory, not ''");
        cli->directory = value;
        return EXIT_OK;
    case CODE_WAIT:
        cli->given |= OPTION_WAIT;
        if (!parse_number(value, 10, 0, WAIT_SECONDS_MAX, &number))
            return fail(EXIT_USAGE,
                        "--wait must be a whole number of seconds from 0 to %d: '%s'",
                        WAIT_SECONDS_MAX, value);
        cli->wait_seconds = (int)number;
        return EXIT_OK;
    case CODE_OWNER:
        cli->given |= OPTION_OWNER;
        return parse_user(value, &cli->open.trusted_owner);
    case CODE_ALL:
        cli->given |= OPTION_ALL;
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

/* ---- Standard output ------------------------------------------------------------ */

/* The errno value of the first write to stdout that failed (0: none). stdio keeps
 * only an error flag, and the write that failed may be long past when the output is
 * checked: a large --help or dump fails while it is being written. */
static int output_errno;

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
            if (output_errno == 0)
                output_errno = n < 0 ? errno : EIO;
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
static void output_open(void)
{
    FILE *stream = fopencookie(NULL, "w", (cookie_io_functions_t){.write = write_stdout});
    if (stream == NULL)
        return;
    setvbuf(stream, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
    stdout = stream;
}

/* Why writing to stdout failed. */
static int output_error(void)
{
    return output_errno != 0 ? output_errno : EIO;
}

/* ---- JSON output --------------------------------------------------------------- */

/* A JSON string of TEXT: ring names, node names and addresses, which the library
 * keeps to valid UTF-8 (lookup keys, which may be any bytes, go through json_key). */
static json_t *json_str(const char *text)
{
    return json_stringn(text, strlen(text));
}

/* KEY's LEN bytes in base64 (RFC 4648, with padding), as a new JSON string. */
static json_t *json_base64(const unsigned char *key, size_t len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *text = malloc((len + 2) / 3 * 4 + 1);
    if (text == NULL)
        return NULL;
    size_t out = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t group = (uint32_t)key[i] << 16;
        if (i + 1 < len)
            group |= (uint32_t)key[i + 1] << 8;
        if (i + 2 < len)
            group |= key[i + 2];
        text[out++] = alphabet[group >> 18];
        text[out++] = alphabet[(group >> 12) & 63];
        text[out++] = i + 1 < len ? alphabet[(group >> 6) & 63] : '=';
        text[out++] = i + 2 < len ? alphabet[group & 63] : '=';
    }
    text[out] = '\0';
    json_t *value = json_string(text);
    free(text);
    return value;
}

/*
 * Sets OBJECT's "key" to KEY exactly: a JSON string (any byte a JSON string can
 * carry, NUL and control bytes escaped by Jansson) when KEY is valid UTF-8, else
 * "key_base64", its bytes in base64, as --help documents. Rewriting invalid bytes
 * would give two keys one answer line, and the reader no way to tell.
 */
static void json_key(json_t *object, const char *key, size_t len)
{
    json_t *text = json_stringn(key, len); /* NULL when KEY is not valid UTF-8 */
    if (text != NULL)
        json_object_set_new(object, "key", text);
    else
        json_object_set_new(object, "key_base64",
                            json_base64((const unsigned char *)key, len));
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

/* Writes "uid UID (NAME)", or "uid UID" for a uid without a user name, into OUT. */
static void describe_user(uid_t uid, char *out, size_t size)
{
    const struct passwd *user = getpwuid(uid);
    if (user != NULL)
        snprintf(out, size, "uid %lu (%s)", (unsigned long)uid, user->pw_name);
    else
        snprintf(out, size, "uid %lu", (unsigned long)uid);
}

/* Whether a reader with CLI's options accepts a ring of OWNER (as the library
 * decides: root, ourselves, or --owner). */
static bool owner_trusted(const struct cli *cli, uid_t owner)
{
    return owner == 0 || owner == geteuid() ||
           (cli->open.trusted_owner != 0 && owner == cli->open.trusted_owner);
}

/*
 * Says, into OUT, what has RING's path when the library refused it (ERR is
 * SHMRING_EOWNER, SHMRING_ENOTRING or SHMRING_ENOENT): the path, its kind and owner,
 * and what to do, so that an operator can tell another user's squatting file from
 * their own mistake. Returns false when what is there explains nothing (nothing is
 * there, or a ring that looks fine), and the library's message must do.
 */
static bool describe_occupant(const struct cli *cli, const char *ring, int err, char *out,
                              size_t size)
{
    shmring_ring_object_t object;
    if (shmring_ring_object(ring, cli->directory, &object) != 0 || !object.exists)
        return false;
    char owner[64 + LOGIN_NAME_MAX];
    describe_user(object.owner, owner, sizeof(owner));
    if (strcmp(object.kind, "directory") != 0) {
        snprintf(out, size,
                 "%s is a %s owned by %s, not a ring of yours; remove it or use another "
                 "ring name",
                 object.path, object.kind, owner);
        return true;
    }
    if ((object.mode & 0022) != 0) {
        snprintf(out, size,
                 "%s is a directory owned by %s that others can write (mode %04o), not a "
                 "ring; remove it or use another ring name",
                 object.path, owner, (unsigned)object.mode);
        return true;
    }
    if (err == SHMRING_EOWNER && cli->writing && object.owner != geteuid()) {
        snprintf(out, size,
                 "%s is a directory owned by %s: the ring belongs to that user, and only "
                 "its owner can change or destroy it",
                 object.path, owner);
        return true;
    }
    if (err == SHMRING_EOWNER && !owner_trusted(cli, object.owner)) {
        const struct passwd *user = getpwuid(object.owner);
        char name[64 + LOGIN_NAME_MAX];
        if (user != NULL)
            snprintf(name, sizeof(name), "%s", user->pw_name);
        else
            snprintf(name, sizeof(name), "%lu", (unsigned long)object.owner);
        snprintf(out, size,
                 "%s is a directory owned by %s, a user whose rings are not accepted "
                 "(to read it anyway, add --owner %s)",
                 object.path, owner, name);
        return true;
    }
    if (err == SHMRING_ENOENT) {
        /* A ring appears only complete (renamed into place with its control object),
         * so a directory without one is not a ring, whoever made it. */
        snprintf(out, size,
                 "%s is a directory owned by %s that holds no ring; remove it or use "
                 "another ring name",
                 object.path, owner);
        return true;
    }
    return false;
}

/* Says, into OUT, why the library found the ring directory unsafe (SHMRING_EBASEDIR). */
static void describe_base_directory(const struct cli *cli, char *out, size_t size)
{
    const char *path =
        cli->directory != NULL ? cli->directory : SHMRING_DEFAULT_DIRECTORY;
    struct stat st;
    if (stat(path, &st) == 0 && !owner_trusted(cli, st.st_uid)) {
        char owner[64 + LOGIN_NAME_MAX];
        describe_user(st.st_uid, owner, sizeof(owner));
        snprintf(out, size,
                 "the ring directory %s belongs to %s, a user whose rings are not "
                 "accepted",
                 path, owner);
    } else {
        snprintf(out, size,
                 "the ring directory %s is unsafe: others can write it and it is not "
                 "sticky, so anyone could rename or remove rings in it",
                 path);
    }
}

/*
 * Reports a library error about the ring: the library's message, or, where that
 * would leave the operator guessing, a precise one (who holds the lock, what has the
 * ring's name, a missing ring directory).
 */
static int library_failure(const char *what, const struct cli *cli, int err)
{
    char detail[LINE_MAX_BYTES];
    if (err == SHMRING_EBUSY)
        return fail(EXIT_FAILED,
                    "ring '%s': another writer holds the ring's lock (waited %d s)",
                    cli->ring, cli->wait_seconds);
    if ((err == SHMRING_EOWNER || err == SHMRING_ENOTRING || err == SHMRING_ENOENT) &&
        describe_occupant(cli, cli->ring, err, detail, sizeof(detail)))
        return fail(EXIT_FAILED, "ring '%s': %s", cli->ring, detail);
    if (err == SHMRING_EBASEDIR) {
        describe_base_directory(cli, detail, sizeof(detail));
        return fail(EXIT_FAILED, "ring '%s': %s", cli->ring, detail);
    }
    /* The library's ENOENT says "no such ring"; a missing ring directory (a --dir
     * typo) deserves its own words. */
    const char *path =
        cli->directory != NULL ? cli->directory : SHMRING_DEFAULT_DIRECTORY;
    struct stat st;
    if (err == SHMRING_ENOENT && stat(path, &st) != 0 && errno == ENOENT)
        return fail(EXIT_FAILED, "ring '%s': the ring directory %s does not exist",
                    cli->ring, path);
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
    /* For --dry-run: a copy of the current version (NULL: nothing published). */
    void *current;
    shmring_nodeset_t *set;
    uint64_t generation;
};

/* Opens the ring for writing and reads its node set. */
static int session_open_writer(struct cli *cli, enum open_mode mode, struct session *s)
{
    /* A ring this command creates appears only with its first publication: if the
     * command fails before, no trace of it is left, and no other writer's ring is
     * ever removed in its place. */
    const unsigned create =
        SHMRING_WRITER_CREATE | SHMRING_WRITER_EXCL | SHMRING_WRITER_ATOMIC_CREATE;
    int err;
    if (mode == OPEN_EXCLUSIVE) {
        err = shmring_writer_open(cli->ring, create, &cli->writer, &s->writer);
        if (err == SHMRING_EEXIST)
            return fail(EXIT_FAILED, "ring '%s' already exists", cli->ring);
        if (err != 0)
            return library_failure("create", cli, err);
    } else {
        err = shmring_writer_open(cli->ring, 0, &cli->writer, &s->writer);
        if (err == SHMRING_ENOENT && mode == OPEN_CREATE) {
            /* If another process just created it, use that. */
            err = shmring_writer_open(cli->ring, create, &cli->writer, &s->writer);
            if (err == SHMRING_EEXIST)
                err = shmring_writer_open(cli->ring, 0, &cli->writer, &s->writer);
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

/* Refuses, with SHMRING_EOWNER, to pretend to change a ring of another user (who is
 * the only one that can change it), for a dry run that reads STATUS. */
static int dry_run_owner_check(const shmring_ring_status_t *status)
{
    return status->owner == geteuid() ? 0 : SHMRING_EOWNER;
}

/* For --dry-run: reads the current version without the writer lock, and fails where
 * the command itself would fail to open the ring. */
static int session_open_readonly(struct cli *cli, enum open_mode mode, struct session *s)
{
    size_t size;
    shmring_ring_status_t status;
    int err =
        shmring_ring_snapshot(cli->ring, &cli->open, &s->generation, &s->current, &size);
    if (err == 0)
        err = shmring_ring_status(cli->ring, &cli->open, &status);
    if (err == 0)
        err = dry_run_owner_check(&status);
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
    cli->writing = true;
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
            if (err == 0)
                cli->published = s.generation; /* from now on, the ring has changed */
            status = err != 0 ? library_failure("publish", cli, err)
                              : report_done(cli, &change, s.generation);
        }
    }
    shmring_writer_close(s.writer);
    free(s.current);
    shmring_nodeset_free(s.set);
    json_decref(change.json);
    return status;
}

static int cmd_init(struct cli *cli)
{
    if (!(cli->given & OPTION_MODE))
        cli->writer.mode = DEFAULT_RING_MODE;
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

/* The operator commands' view of the command line (tools/ringctl_ops.h). */
static int ops_library_failure(const char *what, int err, void *context)
{
    return library_failure(what, context, err);
}

static struct ringctl_scope ops_scope(const struct cli *cli)
{
    return (struct ringctl_scope){
        .ring = cli->ring,
        .directory = cli->directory,
        .open = &cli->open,
        .json = cli->json,
        .all = (cli->given & OPTION_ALL) != 0,
        .library_failure = ops_library_failure,
        .context = (void *)cli,
    };
}

static int cmd_readers(struct cli *cli)
{
    struct ringctl_scope scope = ops_scope(cli);
    return ringctl_readers(&scope);
}

static int cmd_metrics(struct cli *cli)
{
    if (cli->ring_given && (cli->given & OPTION_ALL))
        return fail(EXIT_USAGE, "'metrics' takes -r RING or --all, not both");
    struct ringctl_scope scope = ops_scope(cli);
    return ringctl_metrics(&scope);
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
    struct ringctl_scope scope = ops_scope(cli);
    json_object_set_new(object, "readers", ringctl_readers_summary_json(&scope));
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
    struct ringctl_scope scope = ops_scope(cli);
    ringctl_readers_summary_text(&scope);
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
        snapshot = NULL;
        int err =
            shmring_ring_snapshot(cli->ring, &cli->open, &generation, &snapshot, &size);
        if (err == 0)
            err = shmring_ring_status(cli->ring, &cli->open, &status);
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

/*
 * Prints KEY escaped as --help documents (\\, \t, \n, \r, \xHH), so that the answer
 * stays one line of tab-separated fields whatever bytes the key holds, and the key
 * can be told from every other key.
 */
static void print_key(const char *key, size_t len)
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
        json_key(object, key, len);
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
        print_key(key, len);
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
    int err = shmring_open_with(cli->ring, &cli->open, &reader);
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
                status = fail(EXIT_FAILED, "cannot write output: %s",
                              strerror(output_error()));
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
    int err = shmring_ring_snapshot(cli->ring, &cli->open, &generation, &snapshot, &size);
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

/* What `list` shows of one ring. */
struct list_entry {
    uint64_t generation;
    /* The header of the current version (zero when nothing is published). */
    shmring_snapshot_info_t info;
    bool published;
};

/*
 * Reads what `list` shows of RING. The status alone says whether the ring can be
 * read and its generation; only a ring with a published version needs its snapshot,
 * for the node count and algorithm. Returns 0 or a library error.
 */
static int list_read(const struct cli *cli, const char *ring, struct list_entry *out)
{
    memset(out, 0, sizeof(*out));
    shmring_ring_status_t status;
    int err = shmring_ring_status(ring, &cli->open, &status);
    if (err != 0 || status.generation == 0)
        return err;
    void *snapshot = NULL;
    size_t size;
    err = shmring_ring_snapshot(ring, &cli->open, &out->generation, &snapshot, &size);
    if (err == 0 && snapshot != NULL) {
        shmring_snapshot_info(snapshot, &out->info);
        out->published = true;
    }
    free(snapshot);
    return err;
}

static int cmd_list(struct cli *cli)
{
    char **names;
    size_t count;
    int err = shmring_ring_list(cli->directory, &names, &count);
    if (err != 0)
        return fail(EXIT_FAILED, "cannot list rings in %s: %s",
                    cli->directory != NULL ? cli->directory : SHMRING_DEFAULT_DIRECTORY,
                    err > -1000 ? strerror(-err) : shmring_strerror(err));
    json_t *array = cli->json ? json_array() : NULL;
    for (size_t i = 0; i < count; i++) {
        struct list_entry entry;
        err = list_read(cli, names[i], &entry);
        char detail[LINE_MAX_BYTES];
        if (err == SHMRING_ENOENT &&
            !describe_occupant(cli, names[i], err, detail, sizeof(detail)))
            continue; /* destroyed since it was listed */
        /* Another user's ring, or something else that has a ring's name, is no
         * reason to fail the listing of the others: name it and go on. */
        if (err != 0) {
            if ((err == SHMRING_EOWNER || err == SHMRING_ENOTRING ||
                 err == SHMRING_ENOENT) &&
                describe_occupant(cli, names[i], err, detail, sizeof(detail)))
                warn("ring '%s': skipped: %s", names[i], detail);
            else
                warn("ring '%s': skipped: %s", names[i], shmring_strerror(err));
            continue;
        }
        const char *algorithm =
            entry.published ? shmring_algorithm_name(entry.info.params.algorithm) : "-";
        if (array != NULL) {
            json_t *object = json_object();
            json_object_set_new(object, "ring", json_str(names[i]));
            json_object_set_new(object, "generation", json_uint(entry.generation));
            json_object_set_new(object, "nodes", json_uint(entry.info.node_count));
            json_object_set_new(object, "up", json_uint(entry.info.up_count));
            json_object_set_new(object, "algorithm",
                                entry.published ? json_string(algorithm) : json_null());
            json_array_append_new(array, object);
        } else {
            printf("%s\t%" PRIu64 "\t%" PRIu32 "\t%s\n", names[i], entry.generation,
                   entry.info.node_count, algorithm);
        }
    }
    shmring_ring_list_free(names);
    return array != NULL ? json_print(array, JSON_INDENT(2)) : EXIT_OK;
}

static int cmd_destroy(struct cli *cli)
{
    cli->writing = true;
    if (cli->dry_run) {
        shmring_ring_status_t status;
        int err = shmring_ring_status(cli->ring, &cli->open, &status);
        if (err == 0)
            err = dry_run_owner_check(&status);
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
    int err = shmring_ring_destroy(cli->ring, &cli->writer);
    if (err != 0)
        return library_failure("destroy", cli, err);
    cli->destroyed = true;
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
    {"load", "load FILE|-", 1, 1, OPTIONS_CHANGE, cmd_load},
    {"add", "add NAME ADDRESS [--weight W]", 2, 2, OPTIONS_CHANGE | OPTION_WEIGHT,
     cmd_add},
    {"remove", "remove NAME", 1, 1, OPTIONS_CHANGE, cmd_remove},
    {"weight", "weight NAME W", 2, 2, OPTIONS_CHANGE, cmd_weight},
    {"down", "down NAME", 1, 1, OPTIONS_CHANGE, cmd_down},
    {"up", "up NAME", 1, 1, OPTIONS_CHANGE, cmd_up},
    {"show", "show", 0, 0, OPTION_OWNER, cmd_show},
    {"lookup", "lookup [-n N] KEY... | --stdin", 0, UNLIMITED,
     OPTION_COUNT | OPTION_STDIN | OPTION_OWNER, cmd_lookup},
    {"dump", "dump", 0, 0, OPTION_OWNER, cmd_dump},
    {"list", "list", 0, 0, OPTION_OWNER, cmd_list},
    {"destroy", "destroy", 0, 0, OPTIONS_CHANGE, cmd_destroy},
    {"readers", "readers", 0, 0, OPTION_OWNER, cmd_readers},
    {"metrics", "metrics [-r RING | --all]", 0, 0, OPTION_OWNER | OPTION_ALL,
     cmd_metrics},
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    }
    return NULL;
}

/* Called by the library once it starts to wait for another writer's lock: says so,
 * once, so that a command that seems to hang explains itself. */
static void say_waiting(const char *ring, void *data)
{
    struct cli *cli = data;
    if (cli->said_waiting)
        return;
    cli->said_waiting = true;
    if (cli->wait_seconds < 0)
        fprintf(stderr,
                "ringctl: waiting for another writer of ring '%s' to finish (--wait "
                "SECONDS bounds this)\n",
                ring);
    else
        fprintf(stderr,
                "ringctl: waiting up to %d s for another writer of ring '%s' to finish\n",
                cli->wait_seconds, ring);
}

/*
 * Takes the ring and the ring directory from the environment unless options named
 * them. A variable that is set but empty is an error, not the default: it is
 * usually a configuration that meant to name something and did not.
 */
static int parse_environment(struct cli *cli, bool ring_given, bool needs_ring)
{
    const char *directory = getenv("SHMRING_DIR");
    if (cli->directory == NULL && directory != NULL) {
        if (directory[0] == '\0')
            return fail(EXIT_USAGE,
                        "SHMRING_DIR is set but empty: unset it (for %s) or "
                        "name a directory",
                        SHMRING_DEFAULT_DIRECTORY);
        cli->directory = directory;
    }
    const char *ring = getenv("SHMRING_RING");
    if (!ring_given && needs_ring && ring != NULL) {
        if (ring[0] == '\0')
            return fail(EXIT_USAGE, "SHMRING_RING is set but empty: unset it (for the "
                                    "ring 'default') or name a ring");
        cli->ring = ring;
    }
    if (cli->directory != NULL && strlen(cli->directory) > SHMRING_DIRECTORY_MAX)
        return fail(EXIT_USAGE, "the ring directory's path is longer than %d bytes",
                    SHMRING_DIRECTORY_MAX);
    cli->open.directory = cli->directory;
    cli->writer.directory = cli->directory;
    return EXIT_OK;
}

/* Parses the command line into *CLI and *COMMAND; *COMMAND stays NULL when the work
 * is done already (--help, --version). Returns an exit status. */
static int parse_command_line(int argc, char **argv, struct cli *cli,
                              const struct command **command)
{
    *command = NULL;
    cli->ring = NULL;
    shmring_params_default(&cli->params);
    shmring_writer_options_default(&cli->writer);
    cli->writer.mode = DEFAULT_RING_MODE;
    cli->writer.on_wait = say_waiting;
    cli->writer.on_wait_data = cli;
    cli->wait_seconds = -1;
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
    bool ring_given = cli->ring != NULL;
    if (!ring_given)
        cli->ring = "default";
    int status = parse_environment(cli, ring_given, found->run != cmd_list);
    if (status != EXIT_OK)
        return status;
    cli->writer.wait_ms = cli->wait_seconds < 0 ? -1 : cli->wait_seconds * 1000;
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

/*
 * Makes descriptors 0, 1 and 2 valid, on /dev/null, where they are closed (as sudo
 * and OpenSSH do). Otherwise the first file this program opens (a ring's directory,
 * its lock, a version being written) would take the number of a closed standard
 * stream, and our output or error messages would be written into it. Returns false
 * if /dev/null cannot be opened.
 */
static bool standard_descriptors_valid(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        /* Every lower descriptor is open by now, so open() returns FD itself. */
        int opened = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        if (opened != fd) {
            if (opened >= 0)
                close(opened);
            return false;
        }
    }
    return true;
}

/*
 * Flushes and closes stdout, and reports output that never reached its destination
 * (a full disk, a closed pipe) as a failure. When the ring changed before, the
 * message says so: whoever reads it must not take the command for one that changed
 * nothing (and, say, run `init` again).
 */
static int finish_output(const struct cli *cli, int status)
{
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    failed = fclose(stdout) != 0 || failed;
    if (!failed)
        return status;
    int error = output_error();
    if (cli->destroyed)
        return fail(EXIT_FAILED,
                    "ring '%s' was destroyed, but its report could not be written: %s",
                    cli->ring, strerror(error));
    if (cli->published != 0)
        return fail(EXIT_FAILED,
                    "ring '%s': generation %" PRIu64
                    " was published, but its report could not be written: %s",
                    cli->ring, cli->published, strerror(error));
    if (status == EXIT_OK)
        return fail(EXIT_FAILED, "cannot write output: %s", strerror(error));
    return status;
}

int main(int argc, char **argv)
{
    /* Before anything else is opened. */
    if (!standard_descriptors_valid())
        return fail(EXIT_FAILED, "cannot open /dev/null: %s", strerror(errno));
    output_open();
    struct cli cli;
    memset(&cli, 0, sizeof(cli));
    const struct command *command;
    int status = parse_command_line(argc, argv, &cli, &command);
    if (status == EXIT_OK && command != NULL)
        status = command->run(&cli);
    return finish_output(&cli, status);
}
