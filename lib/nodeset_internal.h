#ifndef SHMRING_NODESET_INTERNAL_H
#define SHMRING_NODESET_INTERNAL_H

#include <stdbool.h>
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
    /* Whether the node's id was given (a JSON "id") rather than assigned: a given id
     * is kept by shmring_nodeset_inherit_ids(). */
    bool id_given;
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
    /* The balance factor the node set gives (JSON "balance_factor"), in percent;
     * BALANCE_UNSET when it gives none. Kept with the ring's load board, not in its
     * versions (docs/bounded-loads.md). */
    uint32_t balance_percent;
    /* The oldest reader release the ring is published for
     * (SNAPSHOT_VERSION_CODE(); 0: any), kept in format 4's header. */
    uint32_t min_reader;
};
#define BALANCE_UNSET UINT32_MAX

/* Sets the id counter (used when a node set is recreated from a snapshot). */
/* The public form of the node at INDEX, which must be below the set's count. */
shmring_node_info_t shmring__nodeset_node_info(const shmring_nodeset_t *set,
                                               size_t index);

void shmring__nodeset_set_next_id(shmring_nodeset_t *set, uint32_t next_id);

/* Appends a node with a given id (ids must stay unique; the caller ensures it). */
int shmring__nodeset_add_with_id(shmring_nodeset_t *set, const char *name,
                                 const char *address, uint32_t weight,
                                 shmring_state_t state, uint32_t id);

/* Marks the node at INDEX as having been given its id (see nodeset_node.id_given). */
void shmring__nodeset_mark_id_given(shmring_nodeset_t *set, size_t index);

/*
 * Once every node of a document is in SET: finds two nodes with the same given id
 * (returns SHMRING_EDUPLICATE with *first < *second their indexes), else numbers the
 * nodes without a given id after the largest given one, in node-set order (returns
 * SHMRING_ELIMIT with *first the index of the node no id is left for), else 0.
 * SHMRING_ENOMEM is possible too.
 */
int shmring__nodeset_settle_ids(shmring_nodeset_t *set, size_t *first, size_t *second);

#endif
