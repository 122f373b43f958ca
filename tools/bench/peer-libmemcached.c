/*
 * libmemcached with weighted ketama over the same servers: node i is 10.a.b.c port
 * 11211, weight 1. shmring's ketama places the same points, so the two must agree key
 * for key. Without libmemcached at build time, the peer is never built and its row
 * stays empty.
 */
#include "ringbench.h"

#ifdef RINGBENCH_HAVE_LIBMEMCACHED
#include <libmemcached/memcached.h>

const bool libmemcached_built_in = true;

/* Ketama is switched on after the servers are added, because libmemcached rebuilds
 * its whole continuum on every add once it is on. */
int libmemcached_open(size_t servers, struct memcached_st **out)
{
    memcached_st *mc = memcached_create(NULL);
    if (mc == NULL) {
        fail("memcached_create failed");
        return -1;
    }
    memcached_return_t rc = MEMCACHED_SUCCESS;
    for (size_t i = 0; i < servers && rc == MEMCACHED_SUCCESS; i++) {
        char host[32];
        node_host(i, host);
        rc = memcached_server_add_with_weight(mc, host, 11211, 1);
    }
    if (rc == MEMCACHED_SUCCESS)
        rc = memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                    MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
    if (rc == MEMCACHED_SUCCESS)
        rc = memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    if (rc != MEMCACHED_SUCCESS) {
        fail("libmemcached with %zu servers: %s", servers, memcached_strerror(mc, rc));
        memcached_free(mc);
        return -1;
    }
    *out = mc;
    return 0;
}

void libmemcached_close(struct memcached_st *mc)
{
    if (mc != NULL)
        memcached_free(mc);
}

uint32_t libmemcached_owner(const struct memcached_st *mc, const uint8_t *key, size_t len)
{
    return memcached_generate_hash(mc, (const char *)key, len);
}

uint64_t run_libmemcached(const void *context, const struct keyset *keys, size_t first,
                          size_t count)
{
    const memcached_st *mc = context;
    uint64_t sum = 0;
    for (size_t i = first; i < first + count; i++)
        sum +=
            memcached_generate_hash(mc, (const char *)key_at(keys, i), keys->length[i]);
    return sum;
}

#else

const bool libmemcached_built_in = false;

int libmemcached_open(size_t servers, struct memcached_st **out)
{
    (void)servers;
    *out = NULL;
    return 0;
}

void libmemcached_close(struct memcached_st *mc)
{
    (void)mc;
}

uint32_t libmemcached_owner(const struct memcached_st *mc, const uint8_t *key, size_t len)
{
    (void)mc;
    (void)key;
    (void)len;
    return UINT32_MAX;
}

uint64_t run_libmemcached(const void *context, const struct keyset *keys, size_t first,
                          size_t count)
{
    (void)context;
    (void)keys;
    (void)first;
    (void)count;
    return 0;
}

#endif
