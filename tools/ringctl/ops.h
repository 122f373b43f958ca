/*
 * ringctl's operator commands, `readers` and `metrics`, each in its own file, and
 * the readers summary that `show` prints. They see only this much of the command
 * line (struct ringctl_scope).
 */
#ifndef RINGCTL_OPS_H
#define RINGCTL_OPS_H

#include <stdbool.h>

#include <jansson.h>

#include "shmring_ctl.h"

struct ringctl;

struct ringctl_scope {
    /* The ring (-r, $SHMRING_RING or "default"); ignored by `metrics --all`. */
    const char *ring;
    /* The ring directory (NULL: the library's default) and whom to trust. */
    const char *directory;
    const shmring_open_options_t *open;
    bool json;
    /* `metrics --all`: every ring in the directory. */
    bool all;
    /* Reports the library error ERR of the ring as ringctl reports every such error
     * (one line on stderr) and returns the exit status; WHAT is the verb ("open"). */
    int (*library_failure)(const char *what, int err, void *context);
    void *context;
};

/* `ringctl metrics`: the ring's (or, with --all, every ring's) metrics in the
 * Prometheus text exposition format. Returns an exit status. */
int ringctl_metrics(const struct ringctl_scope *scope);

/* The operator commands' view of ringctl's command line. */
struct ringctl_scope ringctl_ops_scope(const struct ringctl *ctl);

#endif
