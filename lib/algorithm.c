/*
 * The table of placement algorithms, by shmring_algorithm_t: each row is the
 * description that its algorithm file exports. Adding an algorithm is one file, one
 * row here and its test program (docs/hacking.md, "Adding an algorithm"). A value
 * that no algorithm has (yet) is a NULL row, which every reader of the table skips.
 */
#include <string.h>

#include "algorithm_internal.h"

const struct placement_algorithm *const shmring__algorithms[] = {
    [SHMRING_ALGORITHM_RING] = &shmring__placement_ring,
    [SHMRING_ALGORITHM_MAGLEV] = &shmring__placement_maglev,
    [SHMRING_ALGORITHM_KETAMA] = &shmring__placement_ketama,
    [SHMRING_ALGORITHM_TWEMPROXY] = &shmring__placement_twemproxy,
    [SHMRING_ALGORITHM_NGINX] = &shmring__placement_nginx,
    [SHMRING_ALGORITHM_LIBKETAMA] = &shmring__placement_libketama,
    [SHMRING_ALGORITHM_ENVOY_MAGLEV] = &shmring__placement_envoy_maglev,
    [SHMRING_ALGORITHM_ENVOY_RING] = &shmring__placement_envoy_ring,
    [SHMRING_ALGORITHM_RENDEZVOUS] = &shmring__placement_rendezvous,
    [SHMRING_ALGORITHM_JUMP] = &shmring__placement_jump,
    [SHMRING_ALGORITHM_HAPROXY] = &shmring__placement_haproxy,
    [SHMRING_ALGORITHM_UHASHRING] = &shmring__placement_uhashring,
    [SHMRING_ALGORITHM_HASHRING] = &shmring__placement_hashring,
    [SHMRING_ALGORITHM_DALLI] = &shmring__placement_dalli,
    [SHMRING_ALGORITHM_SPYMEMCACHED] = &shmring__placement_spymemcached,
    [SHMRING_ALGORITHM_GROUPCACHE] = &shmring__placement_groupcache,
};

#define ALGORITHM_COUNT (sizeof(shmring__algorithms) / sizeof(shmring__algorithms[0]))

size_t shmring__algorithm_count(void)
{
    return ALGORITHM_COUNT;
}

const struct placement_algorithm *shmring__algorithm(unsigned algorithm)
{
    return algorithm < ALGORITHM_COUNT ? shmring__algorithms[algorithm] : NULL;
}

const struct placement_algorithm *shmring__algorithm_find(const char *name)
{
    for (size_t i = 0; i < ALGORITHM_COUNT; i++) {
        if (shmring__algorithms[i] != NULL &&
            strcmp(name, shmring__algorithms[i]->name) == 0)
            return shmring__algorithms[i];
    }
    return NULL;
}

/*
 * What each placement does with node-set order, read from its code (each
 * description's `order`):
 * - `ring` and `maglev` take the nodes by hash key (their hash_key, else their
 *   name), then by name; `envoy-maglev` by key (hash_key, else address), then by
 *   name; `twemproxy` by nutcracker's server name, then by node name. Equal points
 *   are then ordered by that sort, so node-set order never reaches an answer.
 * - `ketama` and `libketama` emit the up nodes' points in node-set order and keep
 *   that order among equal points (the peers' server order: continuum_item_cmp,
 *   glibc's merge-sort qsort()); `envoy-ring` also sums the up hosts' weights in
 *   that order, which decides how many points each host gets. Down nodes are left
 *   out of all three.
 * - `nginx` places every node, down ones included, in node-set order, and of equal
 *   points keeps the first: a down node listed before an up node with an equal point
 *   (the same address, say) takes that point from it.
 * - `uhashring` and `hashring` emit the up nodes' points in node-set order; of equal
 *   points uhashring's dict keeps the last written, hashring's stable sort the
 *   first. uhashring's ketama ring also counts every up node in each node's share.
 * - `rendezvous` ranks the up nodes by their hashes with the key, ties by node
 *   string: no order. `jump`'s bucket i is the i-th up node (all are up).
 * - `spymemcached` gives an equal point to the last of its up nodes in node-set
 *   order (a TreeMap's put() replaces), so their order counts.
 */
enum placement_order shmring__placement_order(const shmring_params_t *params)
{
    return shmring__algorithm_valid((unsigned)params->algorithm)->order;
}
