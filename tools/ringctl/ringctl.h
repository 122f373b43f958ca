/*
 * ringctl's private declarations: the parsed command line that every command reads,
 * the command table's row type, and the calls the command files share (options,
 * library failures in an operator's words, the changing-command machinery).
 *
 * Shaped as Knot DNS's knotc: main.c parses options and dispatches through one table
 * (command_table.h), each command is a file of thin calls into libshmringctl, and
 * its results are formatted, and diagnostics written, by the output module that
 * output.h declares (included here).
 */
#ifndef RINGCTL_H
#define RINGCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shmring.h"
#include "shmring_ctl.h"

#include "output.h"

enum ringctl_exit {
    EXIT_OK = 0,
    EXIT_FAILED = 1,
    EXIT_USAGE = 2,
};

/* Room for one line of a report or diagnostic: a ring name, a node name and a path
 * fit many times over. */
#define LINE_MAX_BYTES 8192

/* Algorithm values are a byte in a snapshot: the ones to try when listing them. */
#define RINGCTL_ALGORITHM_VALUES 256u

/* The longest key `lookup --stdin` looks up (the library has no limit of its own): a
 * longer one is answered with an error that quotes its first LOOKUP_KEY_QUOTED
 * bytes, and the stream goes on in the same bounded memory. */
#define LOOKUP_KEY_MAX 65536
#define LOOKUP_KEY_QUOTED 64
/* The largest JSON document load, check and import read (sync's and etcd's cap too):
 * a larger one, or a file that never ends (a link to /dev/zero), is refused. */
#define INPUT_DOCUMENT_MAX ((size_t)256 << 20)

/* Options that only some commands accept, one bit each (see options.c for their
 * spellings and help); a command's row says which it accepts. -r, --dir, --json and
 * --help go with every command. One a line: clang-format does not settle on a layout
 * of this macro when several share lines. */
/* clang-format off */
#define OPTION_BITS(XX)                                                                  \
    XX(DRY_RUN)                                                                          \
    XX(ALGORITHM)                                                                        \
    XX(HASH)                                                                             \
    XX(VNODES)                                                                           \
    XX(TABLE_SIZE)                                                                       \
    XX(MODE)                                                                             \
    XX(GROUP)                                                                            \
    XX(WEIGHT)                                                                           \
    XX(COUNT)                                                                            \
    XX(STDIN)                                                                            \
    XX(WAIT)                                                                             \
    XX(OWNER)                                                                            \
    XX(NUL)                                                                              \
    XX(ALL)                                                                              \
    XX(RING_SIZE)                                                                        \
    XX(HASH_KEY)                                                                         \
    XX(UPSTREAM)                                                                         \
    XX(POOL)                                                                             \
    XX(BACKEND)                                                                          \
    XX(ETCD)                                                                             \
    XX(KEY)                                                                              \
    XX(PREFIX)                                                                           \
    XX(FILE)                                                                             \
    XX(STATE)                                                                            \
    XX(METRICS)                                                                          \
    XX(ONCE)                                                                             \
    XX(BACKOFF_MAX)                                                                      \
    XX(CACERT)                                                                           \
    XX(CERT)                                                                             \
    XX(CERT_KEY)                                                                         \
    XX(USER)                                                                             \
    XX(PASSWORD_FILE)                                                                    \
    XX(WORKERS_GROUP)                                                                    \
    XX(BALANCE_FACTOR)                                                                   \
    XX(MIN_READER)                                                                       \
    XX(BOARD_NODES)                                                                      \
    XX(BOARD_SLOTS)
/* clang-format on */

/* OPTION_INDEX_DRY_RUN = 0, ..., one for each option that only some commands take. */
enum option_index {
#define OPTION_INDEX(name_) OPTION_INDEX_##name_,
    OPTION_BITS(OPTION_INDEX)
#undef OPTION_INDEX
        OPTION_BIT_TOTAL
};
/* A set of those options, as a command's row and a command line name them: one bit
 * each, OPTION(DRY_RUN) = 1 << OPTION_INDEX_DRY_RUN, ... A function-like macro makes a
 * constant expression of the wider type, which the static tables need and an
 * enumeration constant (an int: 31 bits) cannot give. */
typedef uint64_t option_bits_t;
#define OPTION(name_) ((option_bits_t)1 << OPTION_INDEX_##name_)
_Static_assert(OPTION_BIT_TOTAL <= 64, "the option bits no longer fit in option_bits_t");

/* What every command that changes a ring (or destroys it) accepts. */
#define OPTIONS_CHANGE (OPTION(DRY_RUN) | OPTION(WAIT))
/* sync's own options, which its helper ringctl-sync reads (tools/sync/). */
#define OPTIONS_SYNC                                                                     \
    (OPTION(ETCD) | OPTION(KEY) | OPTION(PREFIX) | OPTION(FILE) | OPTION(STATE) |        \
     OPTION(METRICS) | OPTION(ONCE) | OPTION(BACKOFF_MAX) | OPTION(CACERT) |             \
     OPTION(CERT) | OPTION(CERT_KEY) | OPTION(USER) | OPTION(PASSWORD_FILE))

/* The parsed command line: the inputs of the command (read-only for it but for the
 * outcome fields at the end, which say what it did for main's last words). */
struct ringctl {
    const char *ring;
    /* Whether -r named the ring (metrics takes -r or --all, not both). */
    bool ring_given;
    /* The directory holding the rings (NULL: the library's default). */
    const char *directory;
    bool json;
    bool dry_run;
    option_bits_t given;
    /* Where to read rings and whom to trust (--dir, --owner). */
    shmring_open_options_t open;
    /* How to change rings: --dir, --wait and, for init, --mode and --group. */
    shmring_writer_options_t writer;
    /* --wait in seconds; -1: as long as it takes. */
    int wait_seconds;
    /* init: --algorithm, --hash, --vnodes, --table-size, --min-ring-size,
     * --max-ring-size. */
    shmring_params_t params;
    /* init and board: --workers-group; init, load and board: --balance-factor, in
     * percent. */
    gid_t workers_group;
    uint32_t balance_percent;
    /* board: --nodes and --slots, the board's sizes (0: automatic). */
    uint32_t board_entries, board_slots;
    /* init and load: --min-reader MAJOR.MINOR (docs/upgrading.md). */
    unsigned min_reader_major, min_reader_minor;
    /* add: --weight, and --hash-key (NULL: none). */
    uint32_t weight;
    const char *hash_key;
    /* lookup: -n, and -z (records end in NUL rather than a newline). */
    size_t count;
    bool nul;
    /* import: --upstream or --pool, the section of the peer's file (NULL: its only
     * one). */
    const char *section;
    /* The command's arguments. */
    char **args;
    size_t arg_count;
    /* The whole command line, as getopt_long left it: sync hands it to its helper,
     * which reads sync's own options from it with the same table. */
    char **argv;

    /* The outcome. Whether the "waiting for another writer" line was printed (once
     * at most); whether the command changes rings, for messages about whose ring it
     * is; what it did before reporting it: the generation it published (0: none) or
     * that it destroyed the ring. */
    bool said_waiting;
    bool writing;
    uint64_t published;
    bool destroyed;
};

/* How a command appears in the full help. */
enum command_group {
    GROUP_CHANGE, /* changes a ring */
    GROUP_READ,   /* reads a ring */
    GROUP_OTHER,
};

/* The most synopsis lines a command has (lookup: keys, or --stdin). */
#define SYNOPSIS_MAX 4

/* One row of the command table: everything dispatch and help know of a command. */
struct ringctl_command {
    const char *name;
    int (*run)(struct ringctl *ctl);
    enum command_group group;
    /* How the command is called, without "ringctl ", one way per line. */
    const char *synopsis[SYNOPSIS_MAX];
    /* What it does, one sentence or two, for the help (wrapped when printed). */
    const char *summary;
    size_t min_args;
    size_t max_args;
    option_bits_t options;
    /* Whether it acts on one ring (-r, $SHMRING_RING): all but list and help. */
    bool names_ring;
};

#define UNLIMITED ((size_t)-1)

/* Each command's handler, ringctl_cmd_NAME, declared from its row of the table. */
#define COMMAND(name_, ...) int ringctl_cmd_##name_(struct ringctl *ctl);
#include "command_table.h"
#undef COMMAND

/* The command table (commands.c, from command_table.h), and its length. */
extern const struct ringctl_command ringctl_commands[];
extern const size_t ringctl_command_count;

/* The row of NAME, or NULL. */
const struct ringctl_command *ringctl_command_find(const char *name);
/* Reports NAME as an unknown command, suggesting the nearest one. Returns
 * EXIT_USAGE. */
int ringctl_unknown_command(const char *name);

/* ---- options.c ------------------------------------------------------------------ */

/* The spelling of an option bit ("--weight"), for diagnostics. */
const char *ringctl_option_name(option_bits_t bit);
/* Parses a weight, or says why not (returns EXIT_USAGE). */
int ringctl_parse_weight(const char *text, uint32_t *weight);
/* A group by name or number, into *GROUP. Returns an exit status, having said why on
 * failure. */
int ringctl_parse_group(const char *text, gid_t *group);
/* Gives the ring a load board for CTL's --workers-group (GROUP) and sets its balance
 * factor (--balance-factor, or the one the ring has), or, without a group, sets the
 * factor alone: after init, load and for `board`. Returns an exit status. */
int ringctl_board_apply(struct ringctl *ctl, bool with_group, bool with_factor,
                        uint32_t balance_percent);

/* ---- failure.c ------------------------------------------------------------------ */

/*
 * Reports a library error about the ring, as "cannot WHAT ring 'R': MESSAGE" or,
 * where that would leave the operator guessing, a precise line (who holds the lock,
 * what has the ring's name, a missing ring directory). Returns EXIT_FAILED.
 */
int ringctl_library_failure(const char *what, const struct ringctl *ctl, int err);
/* Says, into OUT, what has RING's path when the library refused it with ERR; false
 * when what is there explains nothing. */
bool ringctl_describe_occupant(const struct ringctl *ctl, const char *ring, int err,
                               char *out, size_t size);

/* ---- cmd_list.c ------------------------------------------------------------------ */

/* Reads RING's summary (output.h) for list and metrics. Returns 0 or a library
 * error. */
int ringctl_ring_summary_read(const struct ringctl *ctl, const char *ring,
                              struct ring_summary *out);

/* ---- descriptors.c -------------------------------------------------------------- */

/* Opens /dev/null on whichever of descriptors 0-2 is closed, so that no file opened
 * later takes a standard stream's number; false if /dev/null cannot be opened. */
bool ringctl_standard_descriptors_valid(void);

/* ---- change.c: what every changing command shares ------------------------------- */

/* What a changing command does to the node set, for its report (text and JSON). */
enum change_action {
    ACTION_INIT,
    ACTION_LOAD,
    ACTION_ADD,
    ACTION_REMOVE,
    ACTION_WEIGHT,
    ACTION_DOWN,
    ACTION_UP,
    ACTION_DESTROY,
};

struct change {
    enum change_action action;
    /* Nothing to do: nothing is published. */
    bool unchanged;
    /* Whether a dry run estimates the keys that would move. */
    bool sample;
    /* add, remove, weight, down, up: the node after the change (its strings are
     * copies, valid after the node set changed). */
    shmring_node_info_t node;
    char node_name[SHMRING_NAME_MAX + 1];
    char node_address[SHMRING_ADDRESS_MAX + 1];
    uint32_t previous_weight;
    /* init: the parameters; load: the parameters loaded. */
    shmring_params_t params;
    /* load: the node count and which nodes it adds, removes and changes. */
    size_t node_count;
    shmring_difference_counts_t diff;
    bool params_changed;
};

/* Changes *SET (or replaces it) as the command asks, with INPUT its own data. Returns
 * an exit status, having said why on failure. */
typedef int (*change_fn)(const struct ringctl *ctl, const void *input,
                         shmring_nodeset_t **set, struct change *out);

/* How a changing command opens its ring. */
enum open_mode {
    OPEN_EXISTING, /* the ring must exist */
    OPEN_CREATE,   /* create it (default mode) if it does not exist */
    OPEN_EXCLUSIVE /* create it; it must not exist */
};

/*
 * Takes the ring's writer lock (or, with --dry-run, reads its current version),
 * reads the node set, lets APPLY change it, publishes exactly one new generation
 * (or nothing) and reports it. Returns an exit status.
 */
int ringctl_run_change(struct ringctl *ctl, enum open_mode mode, change_fn apply,
                       const void *input);
/* Keeps NODE in CHANGE with copies of its strings. */
void ringctl_change_keep_node(struct change *change, const shmring_node_info_t *node);

/* The JSON text that load and check read, before the writer lock is taken. */
struct load_input {
    char *text;
    size_t len;
    const char *label; /* the file name, or "<stdin>", for diagnostics */
    /* The balance factor the node set gives, in percent (UINT32_MAX: none), filled
     * by load's change. */
    uint32_t *balance_percent;
};

/* Reads PATH ("-": standard input) whole into *IN (text freed by the caller). Returns
 * an exit status, having said why on failure. */
int ringctl_read_load_input(const char *path, struct load_input *in);
/* Refuses (SHMRING_EOWNER) to pretend to change a ring of another user. */
int ringctl_dry_run_owner_check(const shmring_ring_status_t *status);

#endif
