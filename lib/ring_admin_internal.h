/*
 * What the tests of lib/ring_admin.c need to see of it.
 */
#ifndef SHMRING_RING_ADMIN_INTERNAL_H
#define SHMRING_RING_ADMIN_INTERNAL_H

#include <stdint.h>

/* How many times a status and the version it names are read before the calls that
 * need both give up with SHMRING_ESTALE: each retry means that a writer published
 * meanwhile, so only writers publishing without pause exhaust them. */
#define RING_READ_ATTEMPTS 100

/* Called, when not NULL, after a ring's status has been read and before the version
 * of GENERATION that it names is opened: where a publication by another process
 * makes the two reads disagree. A hidden symbol: only the static test library
 * exposes it. */
extern void (*shmring__ring_read_hook)(uint64_t generation);

#endif
