/*
 * ringctl sync: keeps one ring equal to a source of truth (an etcd key, an etcd
 * prefix with one node per key, or a JSON file), publishing only when the content
 * changes. The modules of the helper ringctl-sync, linked by it alone: they need
 * libcurl and libsystemd, which neither libshmringctl (linked by every publisher) nor
 * ringctl's other commands may drag in. Not installed.
 */
#ifndef RINGCTL_SYNC_H
#define RINGCTL_SYNC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "shmring_ctl.h"

typedef enum ringctl_sync_source {
    /* The whole JSON node set is the value of one etcd key. */
    RINGCTL_SYNC_ETCD_KEY,
    /* One node per key under a prefix; the key equal to the prefix, if any, holds
     * the parameters (see docs/fleet.md). */
    RINGCTL_SYNC_ETCD_PREFIX,
    /* A JSON node set in a file, followed with inotify. */
    RINGCTL_SYNC_FILE,
} ringctl_sync_source_t;

typedef struct ringctl_sync_config {
    const char *ring;
    /* The ring directory, mode and group for a ring sync creates (NULL: defaults). */
    const shmring_writer_options_t *writer;
    ringctl_sync_source_t source;
    /* etcd: base URLs such as "http://127.0.0.1:2379", tried in turn. */
    const char *const *endpoints;
    size_t endpoint_count;
    /* etcd: the key or the prefix; file: the path. */
    const char *name;
    /* Where the last applied node set is kept (NULL: nowhere). */
    const char *state_path;
    /* A Prometheus textfile kept current with sync's own metrics (NULL: none). */
    const char *metrics_path;
    /* etcd over TLS: a CA bundle to trust, and a client certificate and its key
     * (NULL: none); user and password for etcd's authentication (NULL: none). */
    const char *ca_file;
    const char *cert_file;
    const char *key_file;
    const char *user;
    const char *password;
    /* Sync once and return instead of following the source. */
    bool once;
    /* The longest wait between two attempts to reach the source, in ms. */
    unsigned backoff_max_ms;
    /* Set (from a signal handler) to make the run return within a second. */
    volatile sig_atomic_t *stop;
    /* When a publication finds no space: writes into OUT (SIZE bytes) who holds
     * the ring's memory and returns true, or returns false when it has nothing to
     * say (NULL: nothing is said). ringctl's own text, so that sync's log line and
     * ringctl's error say it alike; the library stays free of its wording. */
    bool (*describe_no_space)(const char *ring, const shmring_writer_options_t *writer,
                              char *out, size_t size);
    /* Receives each log line (no newline); NULL: standard error. */
    void (*log)(void *data, const char *line);
    void *log_data;
} ringctl_sync_config_t;

/*
 * Follows the source until *config->stop is set (returns 0), or syncs once with
 * config->once (returns 0 when the ring then equals the source, 1 when not). Logs
 * one line per event. Tells systemd (sd_notify READY=1) once the ring first holds
 * the source's node set, or the state file's when the source cannot be reached,
 * and STOPPING=1 when *config->stop ends the run. Returns 2 when the configuration cannot
 * work at all (one log line says why).
 */
int ringctl_sync_run(const ringctl_sync_config_t *config);

#endif
