/*
 * ringctl sync: keeps a ring equal to an etcd key, an etcd prefix or a file. ringctl
 * recognises the command and executes the helper ringctl-sync (cmd_sync.c), which
 * parses the same command line and runs it (sync_run.c, sync_main.c; its help is
 * written by output_sync.c).
 */
#ifndef RINGCTL_CMD_SYNC_H
#define RINGCTL_CMD_SYNC_H

#include <stdbool.h>
#include <stddef.h>

/* sync's options, one row each for getopt_long and the usage text alike. A row with
 * an argument keeps its value in the text field at VALUE of sync_run.c's struct
 * sync_arguments; one without sets the bool there. */
struct sync_option {
    const char *name;
    int letter;
    const char *argument;
    size_t value;
    const char *help;
};

/* Whether the command line asks for sync (its first word that is not an option or
 * the value of -r/--ring/--dir is "sync"): sync parses its own options. */
bool ringctl_sync_requested(int argc, char **argv);

/* In ringctl: executes the helper with ARGV, `ringctl [-r RING] [--dir DIR] sync
 * ...` unchanged. Returns only if no helper could be run, with EXIT_FAILED, having
 * said why. */
int ringctl_sync_main(int argc, char **argv);

/* In ringctl-sync: runs `ringctl [-r RING] [--dir DIR] sync ...`; returns the exit
 * status. */
int ringctl_sync_command(int argc, char **argv);

#endif
