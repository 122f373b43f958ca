/* Placement parameters: defaults, names and checks. */
#include <string.h>

#include "algorithm_internal.h"
#include "params_internal.h"

/* Indexed by shmring_hash_t; twemproxy's own hashes carry its `hash:` names, HAProxy's
 * its `hash-type` names, spymemcached's NATIVE_HASH its word. A value that no hash has
 * (yet) is NULL. */
static const char *const hash_names[] = {
    "xxh3", "md5", "crc32", "fnv1a", "murmur3", "fnv1a_64", "crc16", "crc32a", "fnv1_32",
    "fnv1_64", "fnv1a_32", "hsieh", "jenkins", "murmur", "one_at_a_time", "xxh64",
    "murmur2", "murmur3_32", "murmur3_128",
    /* HAProxy's, the `avalanche` modifier spelt as a suffix. */
    "sdbm", "djb2", "wt6", "sdbm_avalanche", "djb2_avalanche", "wt6_avalanche",
    "crc32_avalanche",
    /* uhashring's ketama ring; the digests npm's hashring names. */
    "ketama", "sha1", "sha256", "sha512", [SHMRING_HASH_NATIVE] = "native"};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Maglev table sizes: primes, each roughly twice the one before. The default is the
 * first that is at least max(65537, 100 x up nodes), which keeps every node's share
 * of the table within about 1% of its ideal (Eisenbud et al., section 5.3).
 */
static const uint32_t maglev_primes[] = {65537,   131071,  262139,  524287,  1048573,
                                         2097143, 4194301, 8388593, 16777213};

void shmring_params_default(shmring_params_t *params)
{
    /* Whole, reserved fields included (see shmring.h's rule for public structs). */
    *params = (shmring_params_t){.algorithm = SHMRING_ALGORITHM_RING,
                                 .hash = SHMRING_HASH_XXH3,
                                 .vnodes = SHMRING_DEFAULT_VNODES};
}

const char *shmring_algorithm_name(shmring_algorithm_t algorithm)
{
    const struct placement_algorithm *description =
        shmring__algorithm((unsigned)algorithm);
    return description != NULL ? description->name : "unknown";
}

const char *shmring_hash_name(shmring_hash_t hash)
{
    if ((unsigned)hash < COUNT_OF(hash_names) && hash_names[hash] != NULL)
        return hash_names[hash];
    return "unknown";
}

int shmring_algorithm_parse(const char *name, shmring_algorithm_t *out)
{
    const struct placement_algorithm *description = shmring__algorithm_find(name);
    if (description == NULL)
        return SHMRING_EBADALGORITHM;
    *out = description->id;
    return 0;
}

int shmring_hash_parse(const char *name, shmring_hash_t *out)
{
    for (size_t i = 0; i < COUNT_OF(hash_names); i++) {
        if (hash_names[i] != NULL && strcmp(name, hash_names[i]) == 0) {
            *out = (shmring_hash_t)i;
            return 0;
        }
    }
    return SHMRING_EBADHASH;
}

bool shmring__is_prime(uint32_t n)
{
    if (n < 2)
        return false;
    if (n % 2 == 0)
        return n == 2;
    for (uint32_t d = 3; (uint64_t)d * d <= n; d += 2) {
        if (n % d == 0)
            return false;
    }
    return true;
}

shmring_hash_t shmring_algorithm_default_hash(shmring_algorithm_t algorithm)
{
    const struct placement_algorithm *description =
        shmring__algorithm((unsigned)algorithm);
    return description != NULL ? description->default_hash : SHMRING_HASH_XXH3;
}

int shmring_params_check(const shmring_params_t *params)
{
    /* Each algorithm's hashes and its own checks are in its description
     * (algorithm_internal.h); the ring sizes are checked whatever the algorithm. */
    const struct placement_algorithm *description =
        shmring__algorithm((unsigned)params->algorithm);
    if (description == NULL)
        return SHMRING_EBADALGORITHM;
    if ((unsigned)params->hash >= COUNT_OF(hash_names) ||
        (description->hashes & PLACEMENT_HASH_BIT(params->hash)) == 0)
        return SHMRING_EBADHASH;
    if (params->vnodes < 1 || params->vnodes > SHMRING_VNODES_MAX)
        return SHMRING_EBADVNODES;
    if (params->table_size != 0 && (params->table_size > SHMRING_POINTS_MAX ||
                                    !shmring__is_prime(params->table_size)))
        return SHMRING_EINVAL;
    /* Envoy refuses ring sizes past 8M (RingHashLbConfig's rules), and a minimum above
     * the maximum (RingHashLoadBalancer's constructor). */
    if (params->min_ring_size > ENVOY_RING_SIZE_MAX ||
        params->max_ring_size > ENVOY_RING_SIZE_MAX ||
        shmring__envoy_min_ring_size(params) > shmring__envoy_max_ring_size(params))
        return SHMRING_EINVAL;
    return description->check != NULL ? description->check(params) : 0;
}

uint32_t shmring__envoy_min_ring_size(const shmring_params_t *params)
{
    return params->min_ring_size ? params->min_ring_size : ENVOY_DEFAULT_MIN_RING_SIZE;
}

uint32_t shmring__envoy_max_ring_size(const shmring_params_t *params)
{
    return params->max_ring_size ? params->max_ring_size : ENVOY_RING_SIZE_MAX;
}

uint32_t shmring__maglev_default_size(uint32_t up_count)
{
    uint64_t wanted = (uint64_t)up_count * 100;
    for (size_t i = 0; i < COUNT_OF(maglev_primes); i++) {
        if (maglev_primes[i] >= wanted)
            return maglev_primes[i];
    }
    return 0;
}
