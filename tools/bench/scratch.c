/*
 * The scratch rings and the scratch file of this run, their removal on exit or on a
 * signal, and the node sets published into them.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringbench.h"

/* In the order of enum algorithm_index (ALG_RING, ALG_MAGLEV, ...). */
const shmring_algorithm_t algorithms[ALGORITHMS] = {
    SHMRING_ALGORITHM_RING,         SHMRING_ALGORITHM_MAGLEV,
    SHMRING_ALGORITHM_KETAMA,       SHMRING_ALGORITHM_TWEMPROXY,
    SHMRING_ALGORITHM_NGINX,        SHMRING_ALGORITHM_LIBKETAMA,
    SHMRING_ALGORITHM_ENVOY_MAGLEV, SHMRING_ALGORITHM_ENVOY_RING};
/* The lookup rings are named after their algorithms. */
static const char *const ring_suffixes[RING_KINDS - RING_WORKERS] = {
    "workers", "publish", "switch",   "ringctl", "sync-a",
    "sync-b",  "sync-c",  "sync-big", "bounded"};

static char ring_names[RING_KINDS][64];

static pthread_mutex_t cleanup_lock = PTHREAD_MUTEX_INITIALIZER;
/* The scratch file (the node set handed to ringctl), while it exists. */
static char scratch_path[64];
/* The signal mask of the process before ringbench blocked the signals it handles;
 * child processes get it back. */
static sigset_t original_mask;

const char *scratch_ring(enum ring_kind kind)
{
    return ring_names[kind];
}

void scratch_lock(void)
{
    pthread_mutex_lock(&cleanup_lock);
}

void scratch_unlock(void)
{
    pthread_mutex_unlock(&cleanup_lock);
}

FILE *scratch_file_create(const char **path)
{
    snprintf(scratch_path, sizeof(scratch_path), "/tmp/ringbench-%ld-XXXXXX",
             (long)getpid());
    int fd = mkstemp(scratch_path);
    if (fd < 0) {
        fail("cannot create a temporary file: %s", strerror(errno));
        scratch_path[0] = '\0';
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        fail("cannot write %s: %s", scratch_path, strerror(errno));
        return NULL;
    }
    *path = scratch_path;
    return f;
}

void scratch_cleanup_locked(void)
{
    for (int i = 0; i < RING_KINDS; i++) {
        int err = shmring_ring_destroy(ring_names[i], NULL);
        (void)err; /* SHMRING_ENOENT: this run never created it, or it is gone. */
    }
    if (scratch_path[0] != '\0')
        unlink(scratch_path);
    scratch_path[0] = '\0';
}

void scratch_ring_remove(enum ring_kind kind)
{
    pthread_mutex_lock(&cleanup_lock);
    int err = shmring_ring_destroy(ring_names[kind], NULL);
    (void)err;
    pthread_mutex_unlock(&cleanup_lock);
}

void scratch_cleanup(void)
{
    pthread_mutex_lock(&cleanup_lock);
    scratch_cleanup_locked();
    pthread_mutex_unlock(&cleanup_lock);
}

/* Waits for SIGINT, SIGTERM or SIGHUP, removes what the run created and exits. */
static void *signal_thread(void *arg)
{
    const sigset_t *handled = arg;
    int sig;
    if (sigwait(handled, &sig) != 0)
        return NULL;
    pthread_mutex_lock(&cleanup_lock);
    scratch_cleanup_locked();
    _exit(128 + sig);
}

int scratch_start(void)
{
    for (int i = 0; i < RING_KINDS; i++)
        snprintf(ring_names[i], sizeof(ring_names[i]), "ringbench-%ld-%s", (long)getpid(),
                 i < RING_WORKERS ? shmring_algorithm_name(algorithms[i])
                                  : ring_suffixes[i - RING_WORKERS]);
    static sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGHUP);
    int err = pthread_sigmask(SIG_BLOCK, &handled, &original_mask);
    pthread_t thread;
    if (err == 0)
        err = pthread_create(&thread, NULL, signal_thread, &handled);
    if (err == 0)
        err = pthread_detach(thread);
    if (err != 0) {
        fail("cannot start the signal thread: %s", strerror(err));
        return -1;
    }
    return 0;
}

void child_signals_restore(void)
{
    pthread_sigmask(SIG_SETMASK, &original_mask, NULL);
}

int nodeset_make(shmring_algorithm_t algorithm, size_t nodes, shmring_nodeset_t **out)
{
    shmring_nodeset_t *set;
    int err = shmring_nodeset_new(&set);
    if (err != 0) {
        fail("cannot create a node set: %s", shmring_strerror(err));
        return -1;
    }
    shmring_params_t params;
    shmring_params_default(&params);
    params.algorithm = algorithm;
    params.hash = shmring_algorithm_default_hash(algorithm);
    err = shmring_nodeset_set_params(set, &params);
    for (size_t i = 0; i < nodes && err == 0; i++) {
        char name[32], address[48];
        node_name(i, name);
        node_address(i, address);
        err = shmring_nodeset_add(set, name, address, 1, SHMRING_STATE_UP, NULL);
    }
    if (err != 0) {
        fail("cannot make a %s node set of %zu nodes: %s",
             shmring_algorithm_name(algorithm), nodes, shmring_strerror(err));
        shmring_nodeset_free(set);
        return -1;
    }
    *out = set;
    return 0;
}

int snapshot_make(const shmring_nodeset_t *set, shmring_snapshot_t **out)
{
    int err = shmring_nodeset_snapshot(set, out);
    if (err != 0)
        fail("cannot build a snapshot: %s", shmring_strerror(err));
    return err != 0 ? -1 : 0;
}

int ring_publish_new(const char *ring, shmring_algorithm_t algorithm, size_t nodes)
{
    shmring_nodeset_t *set;
    if (nodeset_make(algorithm, nodes, &set) != 0)
        return -1;
    pthread_mutex_lock(&cleanup_lock);
    shmring_writer_t *writer;
    int err = shmring_writer_open(ring, SHMRING_WRITER_CREATE, NULL, &writer);
    if (err == 0) {
        err = shmring_writer_publish(writer, set, NULL);
        shmring_writer_close(writer);
    }
    pthread_mutex_unlock(&cleanup_lock);
    shmring_nodeset_free(set);
    if (err != 0) {
        fail("cannot publish ring '%s': %s", ring, shmring_strerror(err));
        return -1;
    }
    return 0;
}
