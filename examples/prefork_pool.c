/*
 * A prefork worker pool: the parent forks WORKERS processes that share one ring.
 * Each worker routes the same set of keys once a second and reports how many of
 * them each node owns, so the output shows every worker agreeing, and all of them
 * following `ringctl add` / `remove` live.
 *
 *   prefork_pool RING [WORKERS [SECONDS]]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmring.h>

#define KEYS 100000
#define MAX_NODES 64

struct tally {
    char name[SHMRING_NAME_MAX + 1];
    unsigned keys;
};

/*
 * Routes the key set once and prints one line: worker, generation, keys per node.
 * A ring with every node down (or none yet) is a passing state that a server rides
 * out: such keys are counted as unrouted and the worker carries on.
 */
static void report(shmring_t *ring, int worker)
{
    struct tally tally[MAX_NODES];
    size_t nodes = 0;
    unsigned unrouted = 0;
    int last_error = 0;
    for (unsigned i = 0; i < KEYS; i++) {
        char key[32];
        int len = snprintf(key, sizeof(key), "user:%u", i);
        shmring_node_t node;
        int err = shmring_lookup(ring, key, (size_t)len, &node);
        if (err != 0) {
            unrouted++;
            last_error = err;
            continue;
        }
        size_t t = 0;
        while (t < nodes && strcmp(tally[t].name, node.name) != 0)
            t++;
        if (t == nodes && nodes < MAX_NODES) {
            strcpy(tally[nodes].name, node.name);
            tally[nodes++].keys = 0;
        }
        if (t < nodes)
            tally[t].keys++;
    }
    char line[4096];
    int used = snprintf(line, sizeof(line), "worker %d (pid %d) generation %llu:", worker,
                        (int)getpid(), (unsigned long long)shmring_generation(ring));
    for (size_t t = 0; t < nodes && used < (int)sizeof(line); t++)
        used += snprintf(line + used, sizeof(line) - (size_t)used, " %s=%u",
                         tally[t].name, tally[t].keys);
    if (unrouted > 0 && used < (int)sizeof(line))
        snprintf(line + used, sizeof(line) - (size_t)used, " unrouted=%u (%s)", unrouted,
                 shmring_strerror(last_error));
    puts(line);
    fflush(stdout);
}

static void worker_main(shmring_t *ring, int worker, int seconds)
{
    for (int s = 0; s < seconds; s++) {
        report(ring, worker);
        sleep(1);
    }
    shmring_close(ring);
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s RING [WORKERS [SECONDS]]\n", argv[0]);
        return 2;
    }
    int workers = argc > 2 ? atoi(argv[2]) : 3;
    int seconds = argc > 3 ? atoi(argv[3]) : 10;
    if (workers < 1 || workers > 64 || seconds < 1) {
        fprintf(stderr, "%s: WORKERS must be 1-64 and SECONDS at least 1\n", argv[0]);
        return 2;
    }

    /* Open once in the parent: every forked worker inherits the handle, which keeps
     * following new versions in each child independently. Each worker is one thread
     * that makes one call at a time, so the handle can be a serialized one, the
     * cheapest for one key per call. */
    shmring_open_options_t options = {.flags = SHMRING_OPEN_SERIALIZED};
    shmring_t *ring;
    int err = shmring_open_with(argv[1], &options, &ring);
    if (err != 0) {
        fprintf(stderr, "%s: cannot open ring '%s': %s\n", argv[0], argv[1],
                shmring_strerror(err));
        return 1;
    }
    int started = 0, failed = 0;
    for (; started < workers; started++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            failed++; /* the workers already started still get reaped below */
            break;
        }
        if (pid == 0)
            worker_main(ring, started, seconds);
    }
    for (int w = 0; w < started; w++) {
        int status;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
    }
    shmring_close(ring);
    return failed ? 1 : 0;
}
