/*
 * The option table and the parsing of option values: strict numbers, users and
 * groups, modes, parameters. Each bad value is a usage error naming it.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* The longest --wait, in seconds: the library takes milliseconds in an int. */
#define WAIT_SECONDS_MAX (INT_MAX / 1000)

const struct ringctl_option ringctl_options[] = {
    {"ring", 'r', "RING", 'r', 0,
     "the ring to use (default: $SHMRING_RING, else \"default\"); 1-200 characters of "
     "A-Z a-z 0-9 _ . -"},
    {"dir", 0, "DIR", CODE_DIR, 0,
     "the directory holding the rings (default: $SHMRING_DIR, else /dev/shm); use a "
     "directory only root can write, such as /run/shmring, for system rings"},
    {"json", 0, NULL, CODE_JSON, 0,
     "print results as JSON (each command's keys are listed in the manual, "
     "docs/json-output.md)"},
    {"dry-run", 0, NULL, CODE_DRY_RUN, OPTION(DRY_RUN),
     "publish nothing; say what would change and the exact share of the keyspace "
     "that would move to another node"},
    {"wait", 0, "SECONDS", CODE_WAIT, OPTION(WAIT),
     "wait at most SECONDS for another writer of the ring to finish, then fail; 0 "
     "fails at once (default: wait as long as it takes, saying so once on standard "
     "error)"},
    {"owner", 0, "USER", CODE_OWNER, OPTION(OWNER),
     "also accept rings owned by USER (a name or a uid); rings of root and of yourself "
     "are always accepted, other users' only this way"},
    {"all", 0, NULL, CODE_ALL, OPTION(ALL), "every ring in the ring directory"},
    {"help", 'h', NULL, 'h', 0, "print this help and exit"},
    {"version", 'V', NULL, 'V', 0, "print the version and exit"},
    {"algorithm", 0, "A", CODE_ALGORITHM, OPTION(ALGORITHM),
     "the placement algorithm (the manual's docs/peers.md), one of:"},
    {"hash", 0, "H", CODE_HASH, OPTION(HASH),
     "xxh3 (default), md5, crc32, fnv1a or murmur3; ketama and libketama always use "
     "md5, nginx crc32, envoy-maglev xxh64; envoy-ring xxh64 (default) or murmur2; "
     "twemproxy one of its hash: names (default fnv1a_64); haproxy sdbm, djb2, wt6 or "
     "crc32, each also with _avalanche (default sdbm_avalanche, as hash-type consistent "
     "alone); rendezvous always murmur3_32 (pymemcache's), jump murmur3_128 (Guava's); "
     "uhashring md5 (default) or ketama (hash_fn=\"ketama\"); hashring md5 (default), "
     "sha1, sha256 or sha512; dalli and groupcache always crc32; spymemcached md5 "
     "(default), crc32, native, fnv1_64, fnv1a_64, fnv1_32 or fnv1a_32 in its meaning"},
    {"vnodes", 0, "N", CODE_VNODES, OPTION(VNODES),
     "ring points per unit of weight, 1-65535 (default 160); uhashring's and "
     "hashring's points per node (docs/peers.md); groupcache's replicas; "
     "spymemcached's repetitions per node"},
    {"table-size", 0, "P", CODE_TABLE_SIZE, OPTION(TABLE_SIZE),
     "maglev table size: a prime, or 0 (default) to size the table from the number of "
     "up nodes; envoy-maglev: a prime up to 5000011, 0 for Envoy's 65537"},
    {"min-ring-size", 0, "N", CODE_MIN_RING_SIZE, OPTION(RING_SIZE),
     "envoy-ring's minimum_ring_size, 1-8388608 (default Envoy's 1024)"},
    {"max-ring-size", 0, "N", CODE_MAX_RING_SIZE, OPTION(RING_SIZE),
     "envoy-ring's maximum_ring_size, 1-8388608 (default Envoy's 8388608)"},
    {"mode", 0, "M", CODE_MODE, OPTION(MODE),
     "who may read the ring: 0644 (default: everyone), 0640 (its group), 0604 (others, "
     "not the group) or 0600 (you only); nobody but you can ever change it"},
    {"group", 0, "G", CODE_GROUP, OPTION(GROUP), "group of the ring, by name or number"},
    {"weight", 0, "W", CODE_WEIGHT, OPTION(WEIGHT),
     "the new node's weight, 1-65535 (default 1)"},
    {"hash-key", 0, "K", CODE_HASH_KEY, OPTION(HASH_KEY),
     "the new node's hash key: the string hashed into its points in place of its name "
     "(ring, maglev) or of what a peer algorithm derives from its address (Envoy's "
     "hash_key metadata, a named twemproxy server), so that it can be renamed or "
     "re-addressed without moving keys; the rules of an address"},
    {NULL, 'n', "N", 'n', OPTION(COUNT),
     "print the first N distinct up nodes (1-64) in the ring's preference order"},
    {"stdin", 0, NULL, CODE_STDIN, OPTION(STDIN),
     "read keys from standard input, one per line"},
    {NULL, 'z', NULL, 'z', OPTION(NUL),
     "keys and answers end in a NUL byte rather than a newline (as with xargs -0 and "
     "sort -z), so that a key read from standard input may hold any byte but NUL"},
    {"upstream", 0, "NAME", CODE_UPSTREAM, OPTION(UPSTREAM),
     "the nginx upstream block to import (default: the file's only one)"},
    {"pool", 0, "NAME", CODE_POOL, OPTION(POOL),
     "the twemproxy pool to import (default: the file's only one)"},
    {"backend", 0, "NAME", CODE_BACKEND, OPTION(BACKEND),
     "the HAProxy backend or listen section to import (default: the file's only one)"},
    {"etcd", 0, "URL[,URL...]", CODE_ETCD, OPTION(ETCD),
     "etcd's client URLs (http:// or https://), tried in turn; with --key or --prefix"},
    {"key", 0, "KEY", CODE_KEY, OPTION(KEY), "the JSON node set is the value of KEY"},
    {"prefix", 0, "PREFIX", CODE_PREFIX, OPTION(PREFIX),
     "one node per key under PREFIX, the value the node's JSON object; the key PREFIX "
     "itself may hold the parameters"},
    {"file", 0, "PATH", CODE_FILE, OPTION(FILE),
     "the JSON node set in PATH, followed with inotify"},
    {"state", 0, "PATH", CODE_STATE, OPTION(STATE),
     "keep the last applied node set in PATH (atomically) and restore the ring from it "
     "when the source is unreachable"},
    {"metrics", 0, "PATH", CODE_METRICS, OPTION(METRICS),
     "keep sync's own metrics (revision applied, publications, refusals, errors) in "
     "PATH, a Prometheus textfile for node_exporter's textfile collector (atomically)"},
    {"once", 0, NULL, CODE_ONCE, OPTION(ONCE), "sync once and exit: 0 in step, 1 not"},
    {"backoff-max", 0, "MS", CODE_BACKOFF_MAX, OPTION(BACKOFF_MAX),
     "longest wait between attempts to reach etcd, 100-3600000 (default 5000)"},
    {"cacert", 0, "FILE", CODE_CACERT, OPTION(CACERT), "CA bundle for https endpoints"},
    {"cert", 0, "FILE", CODE_CERT, OPTION(CERT), "client certificate (with --cert-key)"},
    {"cert-key", 0, "FILE", CODE_CERT_KEY, OPTION(CERT_KEY),
     "the client certificate's key"},
    {"user", 0, "NAME", CODE_USER, OPTION(USER),
     "etcd user; the password is the first line of --password-file's FILE, else "
     "$SHMRING_ETCD_PASSWORD, never an argument (ps shows arguments to everyone)"},
    {"password-file", 0, "FILE", CODE_PASSWORD_FILE, OPTION(PASSWORD_FILE),
     "where --user's password is"},
    {"workers-group", 0, "G", CODE_WORKERS_GROUP, OPTION(WORKERS_GROUP),
     "give the ring a load board for bounded-load leases that the group G (by name or "
     "number: the workers') may write, and nobody else; see docs/bounded-loads.md"},
    {"balance-factor", 0, "C", CODE_BALANCE_FACTOR, OPTION(BALANCE_FACTOR),
     "bounded-load leases send no node more than C times the average in-flight load: "
     "1 to 100 with at most two decimals, 0 for none (the load board counts anyway)"},
    {"min-reader", 0, "V", CODE_MIN_READER, OPTION(MIN_READER),
     "publish for readers of release V (MAJOR.MINOR) and later: 0.4 publishes snapshot "
     "format 4, which 0.3 readers refuse; 0.0, the default, the oldest format that "
     "expresses the ring (docs/upgrading.md)"},
    {"nodes", 0, "N", CODE_NODES, OPTION(BOARD_NODES),
     "the load board's node entries, 1024-65536 (default: twice the ring's nodes "
     "rounded up to a power of two, at least 1024); nodes beyond them take plain "
     "lookups"},
    {"slots", 0, "M", CODE_SLOTS, OPTION(BOARD_SLOTS),
     "the load board's slots (worker handles), 1-1024 (default 128), with --nodes x "
     "--slots at most 16777216; handles beyond them take plain lookups"},
};

const size_t ringctl_option_count = sizeof(ringctl_options) / sizeof(ringctl_options[0]);
_Static_assert(sizeof(ringctl_options) / sizeof(ringctl_options[0]) <= OPTION_TABLE_MAX,
               "getopt_long's tables are too small for the option table");

void ringctl_getopt_tables(struct option *long_options, char *short_options)
{
    size_t longs = 0, shorts = 0;
    /* A leading ':' makes getopt_long report a missing argument as ':', not '?'. */
    short_options[shorts++] = ':';
    for (size_t i = 0; i < ringctl_option_count; i++) {
        const struct ringctl_option *o = &ringctl_options[i];
        int has_argument = o->argument != NULL ? required_argument : no_argument;
        if (o->name != NULL)
            long_options[longs++] = (struct option){o->name, has_argument, NULL, o->code};
        if (o->letter != 0) {
            short_options[shorts++] = (char)o->letter;
            if (o->argument != NULL)
                short_options[shorts++] = ':';
        }
    }
    long_options[longs] = (struct option){NULL, 0, NULL, 0};
    short_options[shorts] = '\0';
}

const char *ringctl_option_name(option_bits_t bit)
{
    static char letter[3];
    for (size_t i = 0; i < ringctl_option_count; i++) {
        const struct ringctl_option *o = &ringctl_options[i];
        if (o->bit != bit)
            continue;
        if (o->name != NULL) {
            /* Every long name is spelled with its dashes in the diagnostics. */
            static char spelled[64];
            snprintf(spelled, sizeof(spelled), "--%s", o->name);
            return spelled;
        }
        snprintf(letter, sizeof(letter), "-%c", o->letter);
        return letter;
    }
    return "?";
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

/* Parses TEXT as a count from 1 to MAX, or says that WHAT must be one. */
static int parse_count(const char *text, const char *what, unsigned long max,
                       unsigned long *out)
{
    if (!parse_number(text, 10, 1, max, out))
        return ringctl_fail(EXIT_USAGE, "%s must be an integer from 1 to %lu: '%s'", what,
                            max, text);
    return EXIT_OK;
}

/* Parses TEXT as a number from 0 to MAX, or says RULE. */
static int parse_up_to(const char *text, unsigned long max, const char *rule,
                       unsigned long *out)
{
    if (!parse_number(text, 10, 0, max, out))
        return ringctl_fail(EXIT_USAGE, "%s: '%s'", rule, text);
    return EXIT_OK;
}

int ringctl_parse_weight(const char *text, uint32_t *weight)
{
    unsigned long value = 0;
    int status = parse_count(text, "weight", SHMRING_WEIGHT_MAX, &value);
    *weight = (uint32_t)value;
    return status;
}

/* A user (GROUP false) or group by number or by name, into *OUT. uid_t and gid_t
 * are both unsigned int here; (id_t)-1 means "none" to the system calls. */
static int parse_account(const char *text, bool group, unsigned long *out)
{
    if (parse_number(text, 10, 0, (unsigned long)(id_t)-1 - 1, out))
        return EXIT_OK;
    const struct group *by_group = group ? getgrnam(text) : NULL;
    const struct passwd *by_user = group ? NULL : getpwnam(text);
    if (by_group != NULL)
        *out = by_group->gr_gid;
    else if (by_user != NULL)
        *out = by_user->pw_uid;
    else
        return ringctl_fail(EXIT_USAGE, "unknown %s '%s'", group ? "group" : "user",
                            text);
    return EXIT_OK;
}

int ringctl_parse_group(const char *text, gid_t *group)
{
    unsigned long number = 0;
    int status = parse_account(text, true, &number);
    *group = (gid_t)number;
    return status;
}

/* The modes the library accepts: the owner reads and writes, the group and others
 * may read; anything more would let another user write, anything less would lock
 * the owner out. */
static bool mode_valid(unsigned long mode)
{
    return mode == 0600 || mode == 0640 || mode == 0604 || mode == 0644;
}

/* EXIT_OK when PARSE_RESULT (a library parse call's) is 0, else the usage error that
 * names WHAT, the VALUE given and the CHOICES. */
static int known_name(int parse_result, const char *what, const char *value,
                      const char *choices)
{
    if (parse_result != 0)
        return ringctl_fail(EXIT_USAGE, "unknown %s '%s' (use %s)", what, value, choices);
    return EXIT_OK;
}

/* "ring, maglev, ... or jump": the library's algorithms, in the order of its table,
 * so that a new algorithm is named here without a line in ringctl. Their values fit
 * the snapshot's byte, and a value without an algorithm is skipped. */
static void algorithm_choices(char *out, size_t size)
{
    size_t len = 0;
    unsigned last = 0, named = 0;
    for (unsigned i = 0; i < RINGCTL_ALGORITHM_VALUES; i++) {
        if (strcmp(shmring_algorithm_name((shmring_algorithm_t)i), "unknown") != 0)
            last = i;
    }
    out[0] = '\0';
    for (unsigned i = 0; i <= last && len < size; i++) {
        const char *name = shmring_algorithm_name((shmring_algorithm_t)i);
        if (strcmp(name, "unknown") == 0)
            continue;
        int added = snprintf(out + len, size - len, "%s%s",
                             named++ == 0 ? "" : (i == last ? " or " : ", "), name);
        len += added > 0 ? (size_t)added : 0;
    }
}

/* The options that set a parameter of init or a value of the command. */
static int parse_value(struct ringctl *ctl, int code, const char *value)
{
    unsigned long number = 0;
    char rule[128];
    char choices[512];
    switch (code) {
    case CODE_ALGORITHM:
        algorithm_choices(choices, sizeof(choices));
        return known_name(shmring_algorithm_parse(value, &ctl->params.algorithm),
                          "algorithm", value, choices);
    case CODE_HASH:
        return known_name(shmring_hash_parse(value, &ctl->params.hash), "hash", value,
                          "xxh3, md5, crc32, fnv1a or murmur3, one of twemproxy's hash: "
                          "names, Envoy's xxh64 or murmur2, HAProxy's sdbm, djb2, wt6 or "
                          "crc32, each also with _avalanche, pymemcache's murmur3_32, "
                          "Guava's murmur3_128, uhashring's ketama, hashring's sha1, "
                          "sha256 or sha512, or spymemcached's native");
    case CODE_VNODES: {
        int status = parse_count(value, "vnodes", SHMRING_VNODES_MAX, &number);
        ctl->params.vnodes = (uint32_t)number;
        return status;
    }
    case CODE_TABLE_SIZE: {
        snprintf(rule, sizeof(rule), "table size must be 0 or a prime number up to %u",
                 SHMRING_POINTS_MAX);
        int status = parse_up_to(value, SHMRING_POINTS_MAX, rule, &number);
        ctl->params.table_size = (uint32_t)number;
        return status;
    }
    case CODE_MIN_RING_SIZE:
    case CODE_MAX_RING_SIZE: {
        bool minimum = code == CODE_MIN_RING_SIZE;
        int status = parse_count(value, minimum ? "--min-ring-size" : "--max-ring-size",
                                 8388608, &number);
        *(minimum ? &ctl->params.min_ring_size : &ctl->params.max_ring_size) =
            (uint32_t)number;
        return status;
    }
    case CODE_HASH_KEY:
        if (shmring_node_address_check(value) != 0)
            return ringctl_fail(EXIT_USAGE,
                                "hash key must be 1-255 bytes of UTF-8 without control "
                                "characters: '%s'",
                                value);
        ctl->hash_key = value;
        return EXIT_OK;
    case CODE_MODE:
        if (!parse_number(value, 8, 0, 07777, &number) || !mode_valid(number))
            return ringctl_fail(EXIT_USAGE, "mode must be 0600, 0640, 0604 or 0644: '%s'",
                                value);
        ctl->writer.mode = (mode_t)number;
        return EXIT_OK;
    case CODE_GROUP: {
        int status = parse_account(value, true, &number);
        ctl->writer.group = (gid_t)number;
        return status;
    }
    case CODE_WORKERS_GROUP:
        return ringctl_parse_group(value, &ctl->workers_group);
    case CODE_BALANCE_FACTOR:
        if (shmring_balance_factor_parse(value, &ctl->balance_percent) != 0)
            return ringctl_fail(EXIT_USAGE,
                                "balance factor must be 0 (none) or from 1 to 100 with "
                                "at most two decimals: '%s'",
                                value);
        return EXIT_OK;
    case CODE_NODES:
        if (!parse_number(value, 10, SHMRING_BOARD_ENTRIES_MIN, SHMRING_BOARD_ENTRIES_MAX,
                          &number))
            return ringctl_fail(
                EXIT_USAGE, "--nodes must be an integer from %u to %u: '%s'",
                SHMRING_BOARD_ENTRIES_MIN, SHMRING_BOARD_ENTRIES_MAX, value);
        ctl->board_entries = (uint32_t)number;
        return EXIT_OK;
    case CODE_SLOTS: {
        int status = parse_count(value, "--slots", SHMRING_BOARD_SLOTS_MAX, &number);
        ctl->board_slots = (uint32_t)number;
        return status;
    }
    case CODE_MIN_READER: {
        char extra;
        if (sscanf(value, "%u.%u%c", &ctl->min_reader_major, &ctl->min_reader_minor,
                   &extra) != 2 ||
            ctl->min_reader_major > SHMRING_VERSION_MAJOR ||
            (ctl->min_reader_major == SHMRING_VERSION_MAJOR &&
             ctl->min_reader_minor > SHMRING_VERSION_MINOR))
            return ringctl_fail(EXIT_USAGE,
                                "minimum reader must be a release MAJOR.MINOR up to this "
                                "one, %d.%d: '%s'",
                                SHMRING_VERSION_MAJOR, SHMRING_VERSION_MINOR, value);
        return EXIT_OK;
    }
    case CODE_OWNER: {
        int status = parse_account(value, false, &number);
        ctl->open.trusted_owner = (uid_t)number;
        return status;
    }
    case CODE_WEIGHT:
        return ringctl_parse_weight(value, &ctl->weight);
    case 'n': {
        int status = parse_count(value, "-n", SHMRING_LOOKUP_N_MAX, &number);
        ctl->count = number;
        return status;
    }
    case CODE_WAIT: {
        snprintf(rule, sizeof(rule),
                 "--wait must be a whole number of seconds from 0 to %d",
                 WAIT_SECONDS_MAX);
        int status = parse_up_to(value, WAIT_SECONDS_MAX, rule, &number);
        ctl->wait_seconds = (int)number;
        return status;
    }
    default:
        return ringctl_fail(EXIT_USAGE, "unexpected option code %d", code);
    }
}

int ringctl_parse_option(struct ringctl *ctl, int code, const char *value)
{
    for (size_t i = 0; i < ringctl_option_count; i++) {
        if (ringctl_options[i].code == code)
            ctl->given |= ringctl_options[i].bit;
    }
    switch (code) {
    case 'r':
        ctl->ring = value;
        ctl->ring_given = true;
        return EXIT_OK;
    case CODE_DIR:
        if (value[0] == '\0')
            return ringctl_fail(EXIT_USAGE, "option '--dir' needs a directory, not ''");
        ctl->directory = value;
        return EXIT_OK;
    case CODE_JSON:
        ctl->json = true;
        return EXIT_OK;
    case CODE_DRY_RUN:
        ctl->dry_run = true;
        return EXIT_OK;
    case CODE_STDIN:
    case CODE_ALL:
        return EXIT_OK; /* its bit in ctl->given says it */
    case CODE_ETCD:
    case CODE_KEY:
    case CODE_PREFIX:
    case CODE_FILE:
    case CODE_STATE:
    case CODE_METRICS:
    case CODE_ONCE:
    case CODE_BACKOFF_MAX:
    case CODE_CACERT:
    case CODE_CERT:
    case CODE_CERT_KEY:
    case CODE_USER:
    case CODE_PASSWORD_FILE:
        return EXIT_OK; /* sync's helper reads them from the command line */
    case 'z':
        ctl->nul = true;
        return EXIT_OK;
    case CODE_UPSTREAM:
    case CODE_POOL:
    case CODE_BACKEND:
        ctl->section = value;
        return EXIT_OK;
    default:
        return parse_value(ctl, code, value);
    }
}

int ringctl_option_error(int code, char **argv)
{
    const char *typed = argv[optind - 1];
    char name[LINE_MAX_BYTES];
    if (strncmp(typed, "--", 2) == 0) {
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(typed, "="), typed);
    } else {
        snprintf(name, sizeof(name), "-%c", optopt);
    }
    if (code == ':')
        return ringctl_fail(EXIT_USAGE, "option '%s' needs an argument", name);
    if (optopt != 0 && strncmp(typed, "--", 2) == 0)
        return ringctl_fail(EXIT_USAGE, "option '%s' takes no argument", name);
    return ringctl_fail(EXIT_USAGE, "unknown option '%s'", name);
}
