/*
 * ringctl's options: one table (options.c) gives each option's spellings, its bit
 * (which commands take it, from the command table) and its help, so that getopt_long,
 * the "does not apply" check and the help all read the same rows.
 */
#ifndef RINGCTL_OPTIONS_H
#define RINGCTL_OPTIONS_H

#include <getopt.h>

#include "ringctl.h"

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
    CODE_MIN_RING_SIZE,
    CODE_MAX_RING_SIZE,
    CODE_HASH_KEY,
    CODE_UPSTREAM,
    CODE_POOL,
    CODE_BACKEND,
    /* sync's own options, read by its helper (tools/sync/). */
    CODE_ETCD,
    CODE_KEY,
    CODE_PREFIX,
    CODE_FILE,
    CODE_STATE,
    CODE_METRICS,
    CODE_ONCE,
    CODE_BACKOFF_MAX,
    CODE_CACERT,
    CODE_CERT,
    CODE_CERT_KEY,
    CODE_USER,
    CODE_PASSWORD_FILE,
    CODE_WORKERS_GROUP,
    CODE_BALANCE_FACTOR,
    CODE_MIN_READER,
    CODE_NODES,
    CODE_SLOTS,
};

struct ringctl_option {
    /* The long name (NULL: short only), the short letter (0: long only), and the
     * argument's name in the help (NULL: none). */
    const char *name;
    int letter;
    const char *argument;
    /* What getopt_long returns for it. */
    int code;
    /* Which commands take it (OPTION(...)); 0: every command. */
    option_bits_t bit;
    const char *help;
};

extern const struct ringctl_option ringctl_options[];
extern const size_t ringctl_option_count;

/* The most options the table may hold (checked where it is defined). */
#define OPTION_TABLE_MAX 48

/* getopt_long's tables, made from ringctl_options: LONG_OPTIONS has room for
 * OPTION_TABLE_MAX + 1 entries, SHORT_OPTIONS for 3 * OPTION_TABLE_MAX + 2 bytes. */
void ringctl_getopt_tables(struct option *long_options, char *short_options);
/* Handles one option that getopt_long returned. Returns an exit status. */
int ringctl_parse_option(struct ringctl *ctl, int code, const char *value);
/* Reports what getopt_long could not parse (CODE '?' or ':'). Returns EXIT_USAGE. */
int ringctl_option_error(int code, char **argv);

#endif
