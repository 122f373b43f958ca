/*
 * ringctl's output: everything the tool writes is formatted by the output files and
 * nowhere else. A command computes its result (the report types below, or the
 * library's own) and hands it to one call here, which writes it as text or, with
 * --json, as JSON. output.c holds the rules every command shares (diagnostics, the
 * stdout stream that keeps write errors, key escaping, the precision of reals); each
 * output_*.c file formats the results of one command or a few related ones.
 */
#ifndef RINGCTL_OUTPUT_H
#define RINGCTL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "shmring.h"
#include "shmring_ctl.h"

struct ringctl;

/* ---- output.c: diagnostics, the stdout stream, the shared rules ----------------- */

/* Prints "ringctl: error: MESSAGE" on stderr and returns STATUS. */
int ringctl_fail(int status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints "ringctl: warning: MESSAGE", for a problem that does not fail the command. */
void ringctl_warn(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Prints "ringctl: MESSAGE", a note that is no error. */
void ringctl_note(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Makes stdout a stream that keeps why a write failed; output_errno() says it. */
void output_open(void);
int output_errno(void);
/* Prints VALUE, as one line or indented, then frees it. Reals are printed with the
 * digits they carry. Returns an exit status. */
int output_json(json_t *value, bool indented);

/* JSON values of what the commands report. */
json_t *ringctl_json_str(const char *text);
json_t *ringctl_json_uint(uint64_t value);
json_t *ringctl_json_node_info(const shmring_node_info_t *node);
const char *ringctl_state_name(shmring_state_t state);
/* Writes "ring, xxh3, 160 vnodes" and the like into OUT. */
void ringctl_describe_params(const shmring_params_t *params, char *out, size_t size);
/* output_user.c: writes "uid UID (NAME)", or "uid UID" for a uid without a user name,
 * into OUT: how every diagnostic of ringctl and its sync helper names a file's owner. */
void ringctl_describe_user(uid_t uid, char *out, size_t size);

/* lookup's answer for KEY: FOUND nodes, or (FOUND < 0) the error record. Returns an
 * exit status. */
int output_lookup(const struct ringctl *ctl, const char *key, size_t len,
                  const shmring_node_t *nodes, int found);
/* lookup's error record for a key longer than LOOKUP_KEY_MAX, of which KEY holds the
 * first LEN bytes. Returns an exit status. */
int output_lookup_too_long(const struct ringctl *ctl, const char *key, size_t len);
/* Writes what stdout holds (lookup --stdin answers each key as it comes), or says
 * why it cannot. Returns an exit status. */
int output_flush(void);
/* Prints TEXT, a JSON document of the library's (dump, import), ending in a newline. */
void output_document(const char *text);
/* Prints "ringctl VERSION" for --version. */
void output_version(void);
/* Prints TEXT's words from column AT (where the cursor is), wrapped before column
 * WIDTH with continuation lines indented to COLUMN, then a newline: the help's
 * paragraphs. */
void output_wrapped(int at, int column, int width, const char *text);

/* ---- output_readers.c: readers, and show's readers line ------------------------- */

/* Prints the census of the ring's readers. Returns an exit status. */
int output_readers(const struct ringctl *ctl, const shmring_ring_readers_t *census);
/* show's summary of the census: one line of text, or a JSON object; ERR is the
 * census's failure (0: none), said in the line, null in JSON. */
void output_readers_line(const shmring_ring_readers_t *census, int err);
json_t *output_readers_summary(const shmring_ring_readers_t *census, int err);
/* For a publication of RING that found no space: runs the census (OPTIONS as for
 * shmring_ring_readers()) and writes into OUT who holds superseded versions, "3
 * superseded versions (34.0 MiB) are held by pid 4242 (uid 1001)" (at most 8
 * processes named, then "and N more"). Returns false, OUT empty, when the census
 * fails or finds nothing held. ringctl's errors and sync's log lines both say it. */
bool output_space_holders(const char *ring, const shmring_open_options_t *options,
                          char *out, size_t size);

/* ---- output_show.c: show and list ----------------------------------------------- */

/* What show reports: the status and, when something is published, the header of
 * the version of the same generation, its node set and each node's share of the
 * keyspace; then the census of the ring's readers. */
struct show_report {
    const shmring_ring_status_t *status;
    bool published;
    const shmring_snapshot_info_t *info; /* zero when nothing is published */
    const shmring_nodeset_t *set;        /* NULL when nothing is published */
    const double *shares;
    const shmring_ring_readers_t *readers;
    int readers_error; /* the census's failure (0: none, READERS is filled) */
    /* The load board (NULL: none, or not readable by the caller); its nodes are the
     * version's, in the same order as SET's. */
    const shmring_board_info_t *board;
};

/* Prints SHOW. Returns an exit status. */
int output_show(const struct ringctl *ctl, const struct show_report *show);

/* What list shows of one ring. */
/* What list shows of a ring, and metrics with its readers: the ring's status and
 * its current version's header (zero when nothing is published), read from the
 * control object and the header alone by ringctl_ring_summary_read() (cmd_list.c). */
struct ring_summary {
    const char *ring;
    shmring_ring_status_t status;
    shmring_snapshot_info_t info;
    bool published;
};

/* list's output, written ring by ring: the text a line each as the rings come, the
 * JSON array whole at the end. */
struct list_output {
    json_t *array; /* with --json, the rings so far; else NULL */
};

void output_list_start(const struct ringctl *ctl, struct list_output *output);
void output_list_ring(struct list_output *output, const struct ring_summary *ring);
/* Ends the listing. Returns an exit status. */
int output_list_end(struct list_output *output);

/* ---- output_check.c: check ------------------------------------------------------ */

/* Prints the differences DIFF between the ring (parameters RING) and the file
 * (parameters FILE), seen from the ring. Returns an exit status. */
int output_check(const struct ringctl *ctl, const shmring_nodeset_diff_t *diff,
                 const shmring_params_t *ring, const shmring_params_t *file);

/* ---- output_change.c: what a changing command did ------------------------------- */

struct change;

/* Reports CHANGE (destroy's too), done or, with --dry-run, what it would do:
 * GENERATION is the one published (or, dry run, the current one), MOVED_FRACTION the
 * share of the keyspace that would move (NULL: not estimated). Returns an exit
 * status. */
int output_change(const struct ringctl *ctl, const struct change *change,
                  uint64_t generation, const double *moved_fraction);

/* ---- output_metrics.c: metrics -------------------------------------------------- */

/* What one ring's metrics come from. */
struct metrics_sample {
    struct ring_summary summary;
    shmring_ring_readers_t census;
    /* The load board, when the ring has one the caller may read (board.present). */
    shmring_board_info_t board;
};

/* Prints the metrics of COUNT rings in the Prometheus text format; with ALL (every
 * ring of the directory), also how many rings could not be read (UNREADABLE). */
void output_metrics(const struct metrics_sample *samples, size_t count, size_t unreadable,
                    bool all);

/* ---- output_help.c: the help, from the command and option tables ---------------- */

struct ringctl_command;

/* Prints the whole help, or one command's. */
void output_help(void);
void output_help_command(const struct ringctl_command *command);
/* Writes "ringctl SYNOPSIS" (each synopsis line, joined by " or ") into OUT. */
void ringctl_usage_line(const struct ringctl_command *command, char *out, size_t size);

#endif
