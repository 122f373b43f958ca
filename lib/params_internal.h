#ifndef SHMRING_PARAMS_INTERNAL_H
#define SHMRING_PARAMS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "algorithm_internal.h"
#include "shmring_ctl.h"

bool shmring__is_prime(uint32_t n);

/* The default maglev table size for UP_COUNT up nodes, or 0 when none is large
 * enough. */
uint32_t shmring__maglev_default_size(uint32_t up_count);

/* Envoy's limits and defaults: MaglevTable::DefaultTableSize and the largest table
 * size MaglevLbConfig takes; RingHashLoadBalancer's DefaultMinRingSize and the largest
 * ring size RingHashLbConfig takes (also DefaultMaxRingSize). */
#define ENVOY_MAGLEV_DEFAULT_TABLE_SIZE 65537u
#define ENVOY_MAGLEV_TABLE_SIZE_MAX 5000011u
#define ENVOY_DEFAULT_MIN_RING_SIZE 1024u
#define ENVOY_RING_SIZE_MAX 8388608u

/* `envoy-ring`'s minimum and maximum ring sizes, the defaults standing for 0. */
uint32_t shmring__envoy_min_ring_size(const shmring_params_t *params);
uint32_t shmring__envoy_max_ring_size(const shmring_params_t *params);

#endif
