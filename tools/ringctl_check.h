/*
 * ringctl check: whether a ring holds exactly the node set and parameters of a JSON
 * document, as `ringctl load` of that document would leave it.
 */
#ifndef RINGCTL_CHECK_H
#define RINGCTL_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "shmring_ctl.h"

/* The exit statuses of check: a drift check's, not ringctl's usual ones. */
enum {
    RINGCTL_CHECK_SAME = 0,
    RINGCTL_CHECK_DIFFERS = 1,
    RINGCTL_CHECK_ERROR = 2,
};

/*
 * Compares RING (read with OPEN) with the JSON node set TEXT of LEN bytes, read from
 * LABEL (a file name, or "<stdin>"). Fields and ids the text leaves out are the
 * ring's, as `load` takes them. Prints nothing when the ring matches; otherwise one
 * line per difference on standard output (or one JSON document with JSON); an error
 * as one "ringctl: error: ..." line on standard error. Returns the exit status.
 */
int ringctl_check(const char *ring, const shmring_open_options_t *open, const char *text,
                  size_t len, const char *label, bool json);

#endif
