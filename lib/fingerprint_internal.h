#ifndef SHMRING_FINGERPRINT_INTERNAL_H
#define SHMRING_FINGERPRINT_INTERNAL_H

#include <stdint.h>

#include "shmring_ctl.h"

/*
 * The content fingerprint of SET placed with TABLE_SIZE maglev slots (the size the
 * snapshot uses, 0 for the other algorithms): see lib/fingerprint.c for exactly what
 * it covers. Returns 0 and fills *out, or SHMRING_ENOMEM.
 */
int shmring__fingerprint(const shmring_nodeset_t *set, uint32_t table_size,
                         uint64_t *out);

#endif
