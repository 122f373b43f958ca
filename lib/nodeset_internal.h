#ifndef SHMRING_NODESET_INTERNAL_H
#define SHMRING_NODESET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "shmring_ctl.h"

struct nodeset_node {
    char *name;
    char *address;
    /* The string peer algorithms hash instead of the address, or NULL. */
    char *hash_key;
    uint32_t id;
    uint32_t weight;
    shmring_state_t state;
    uint16_t name_length;
    uint16_t address_length;
};

struct shmring_nodeset {
    shmring_params_t params;
    struct nodeset_node *nodes;
    size_t count;
    size_t capacity;
    uint32_t next_id;
    /* Open-addressing index by name: slot value is node index + 1, 0 is empty. */
    uint32_t *slots;
    size_t slot_mask;
};

/* Sets the id counter (used when a node set is recreated from a snapshot). */
void shmring__nodeset_set_next_id(shmring_nodeset_t *set, uint32_t next_id);

/* Appends a node with a given id (ids must stay unique; the caller ensures it). */
int shmring__nodeset_add_with_id(shmring_nodeset_t *set, const char *name,
                                 const char *address, uint32_t weight,
                                 shmring_state_t state, uint32_t id);

#endif
