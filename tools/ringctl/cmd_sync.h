/* ringctl sync: keeps a ring equal to an etcd key, an etcd prefix or a file. */
#ifndef RINGCTL_CMD_SYNC_H
#define RINGCTL_CMD_SYNC_H

#include <stdbool.h>

/* Whether the command line asks for sync (its first word that is not an option or
 * the value of -r/--ring/--dir is "sync"): sync parses its own options. */
bool ringctl_sync_requested(int argc, char **argv);

/* Runs `ringctl [-r RING] [--dir DIR] sync ...`; returns the exit status. */
int ringctl_sync_main(int argc, char **argv);

#endif
