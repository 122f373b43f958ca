/*
 * A multi-threaded worker: THREADS threads share one reader handle and route keys
 * as fast as they can. Once a second the main thread prints the lookup rate, the
 * generation in use and how the keys of the last second were spread over the nodes
 * (by node id, which is how a worker would index its connection pools).
 *
 *   threaded_worker RING [THREADS [SECONDS]]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmring.h>

#define MAX_IDS 256

static shmring_t *ring;
static atomic_bool stop;
static atomic_ulong lookups;
static atomic_ulong errors;
static atomic_ulong per_id[MAX_IDS];

static void *route_keys(void *arg)
{
    unsigned long seed = (unsigned long)(size_t)arg * 2654435761u + 1;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        char key[32];
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int len = snprintf(key, sizeof(key), "session:%lu", (seed >> 33) % 1000000);
        /* The id is all a worker needs to pick its connection pool: the id-only
         * lookup copies no strings. */
        uint32_t id;
        if (shmring_lookup_id(ring, key, (size_t)len, &id) != 0) {
            atomic_fetch_add_explicit(&errors, 1, memory_order_relaxed);
            continue;
        }
        atomic_fetch_add_explicit(&lookups, 1, memory_order_relaxed);
        if (id < MAX_IDS)
            atomic_fetch_add_explicit(&per_id[id], 1, memory_order_relaxed);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s RING [THREADS [SECONDS]]\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    int seconds = argc > 3 ? atoi(argv[3]) : 10;
    if (threads < 1 || threads > 64 || seconds < 1) {
        fprintf(stderr, "%s: THREADS must be 1-64 and SECONDS at least 1\n", argv[0]);
        return 2;
    }
    int err = shmring_open(argv[1], &ring);
    if (err != 0) {
        fprintf(stderr, "%s: cannot open ring '%s': %s\n", argv[0], argv[1],
                shmring_strerror(err));
        return 1;
    }
    pthread_t ids[64];
    int started = 0;
    for (; started < threads; started++) {
        err = pthread_create(&ids[started], NULL, route_keys, (void *)(size_t)started);
        if (err != 0) {
            fprintf(stderr, "%s: cannot start thread %d: %s\n", argv[0], started,
                    strerror(err));
            seconds = 0; /* stop the threads already started */
            break;
        }
    }

    for (int s = 0; s < seconds; s++) {
        sleep(1);
        unsigned long n = atomic_exchange(&lookups, 0);
        char line[4096];
        int used = snprintf(line, sizeof(line), "generation %llu: %lu lookups/s, by id:",
                            (unsigned long long)shmring_generation(ring), n);
        for (int id = 0; id < MAX_IDS; id++) {
            unsigned long c = atomic_exchange(&per_id[id], 0);
            if (c > 0 && used < (int)sizeof(line))
                used += snprintf(line + used, sizeof(line) - (size_t)used, " %d=%.1f%%",
                                 id, 100.0 * (double)c / (double)(n ? n : 1));
        }
        puts(line);
        fflush(stdout);
    }
    atomic_store(&stop, true);
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
    shmring_close(ring);
    unsigned long e = atomic_load(&errors);
    if (e > 0)
        fprintf(stderr, "%s: %lu lookups failed\n", argv[0], e);
    return e > 0 || started < threads ? 1 : 0;
}
