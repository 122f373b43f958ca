#ifndef SHMRING_PARAMS_INTERNAL_H
#define SHMRING_PARAMS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shmring_ctl.h"

bool shmring__is_prime(uint32_t n);

/* The default maglev table size for UP_COUNT up nodes, or 0 when none is large
 * enough. */
uint32_t shmring__maglev_default_size(uint32_t up_count);

#endif
