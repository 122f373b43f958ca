/* Placement parameters: defaults, names and checks. */
#include <string.h>

#include "params_internal.h"

static const char *const algorithm_names[] = {"ring",         "maglev",    "ketama",
                                              "twemproxy",    "nginx",     "libketama",
                                              "envoy-maglev", "envoy-ring"};
/* Indexed by shmring_hash_t; twemproxy's own hashes carry its `hash:` names. */
static const char *const hash_names[] = {
    "xxh3",    "md5",    "crc32",         "fnv1a",   "murmur3",  "fnv1a_64",
    "crc16",   "crc32a", "fnv1_32",       "fnv1_64", "fnv1a_32", "hsieh",
    "jenkins", "murmur", "one_at_a_time", "xxh64",   "murmur2"};

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
    if ((unsigned)algorithm < COUNT_OF(algorithm_names))
        return algorithm_names[algorithm];
    return "unknown";
}

const char *shmring_hash_name(shmring_hash_t hash)
{
    if ((unsigned)hash < COUNT_OF(hash_names))
        return hash_names[hash];
    return "unknown";
}

int shmring_algorithm_parse(const char *name, shmring_algorithm_t *out)
{
    for (size_t i = 0; i < COUNT_OF(algorithm_names); i++) {
        if (strcmp(name, algorithm_names[i]) == 0) {
            *out = (shmring_algorithm_t)i;
            return 0;
        }
    }
    return SHMRING_EBADALGORITHM;
}

int shmring_hash_parse(const char *name, shmring_hash_t *out)
{
    for (size_t i = 0; i < COUNT_OF(hash_names); i++) {
        if (strcmp(name, hash_names[i]) == 0) {
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
    switch (algorithm) {
    case SHMRING_ALGORITHM_KETAMA:
    case SHMRING_ALGORITHM_LIBKETAMA:
        return SHMRING_HASH_MD5;
    case SHMRING_ALGORITHM_NGINX:
        return SHMRING_HASH_CRC32;
    case SHMRING_ALGORITHM_TWEMPROXY:
        /* nutcracker's default `hash:` (nc_conf.c, CONF_DEFAULT_HASH). */
        return SHMRING_HASH_FNV1A_64;
    case SHMRING_ALGORITHM_ENVOY_MAGLEV:
    case SHMRING_ALGORITHM_ENVOY_RING:
        /* Envoy's HashUtil::xxHash64; ring_hash's hash_function default XX_HASH. */
        return SHMRING_HASH_XXH64;
    default:
        return SHMRING_HASH_XXH3;
    }
}

/*
 * Whether ALGORITHM takes HASH. Each peer algorithm is defined by its peer's hash:
 * ketama and libketama hash with MD5, nginx with CRC-32, twemproxy with the twelve
 * functions of its `hash:` option (md5 and crc32 in twemproxy's meaning),
 * envoy-maglev with xxHash64, envoy-ring with xxHash64 or murmur2 (ring_hash's
 * hash_function; its key hash is xxHash64 either way). Ring and
 * maglev take the 64-bit hashes only: their bucket index and table slot need well
 * mixed top bits, which twemproxy's 32-bit hashes do not give.
 */
static bool algorithm_takes(shmring_algorithm_t algorithm, shmring_hash_t hash)
{
    switch (algorithm) {
    case SHMRING_ALGORITHM_KETAMA:
    case SHMRING_ALGORITHM_LIBKETAMA:
        return hash == SHMRING_HASH_MD5;
    case SHMRING_ALGORITHM_NGINX:
        return hash == SHMRING_HASH_CRC32;
    case SHMRING_ALGORITHM_TWEMPROXY:
        return hash == SHMRING_HASH_MD5 || hash == SHMRING_HASH_CRC32 ||
               (hash >= SHMRING_HASH_FNV1A_64 && hash <= SHMRING_HASH_ONE_AT_A_TIME);
    case SHMRING_ALGORITHM_ENVOY_MAGLEV:
        return hash == SHMRING_HASH_XXH64;
    case SHMRING_ALGORITHM_ENVOY_RING:
        return hash == SHMRING_HASH_XXH64 || hash == SHMRING_HASH_MURMUR2;
    default:
        return hash <= SHMRING_HASH_MURMUR3;
    }
}

int shmring_params_check(const shmring_params_t *params)
{
    if ((unsigned)params->algorithm >= COUNT_OF(algorithm_names))
        return SHMRING_EBADALGORITHM;
    if ((unsigned)params->hash >= COUNT_OF(hash_names))
        return SHMRING_EBADHASH;
    if (!algorithm_takes(params->algorithm, params->hash))
        return SHMRING_EBADHASH;
    if (params->vnodes < 1 || params->vnodes > SHMRING_VNODES_MAX)
        return SHMRING_EBADVNODES;
    if (params->table_size != 0 && (params->table_size > SHMRING_POINTS_MAX ||
                                    !shmring__is_prime(params->table_size)))
        return SHMRING_EINVAL;
    /* Envoy refuses a larger maglev table (MaglevLbConfig's table_size rule). */
    if (params->algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV &&
        params->table_size > ENVOY_MAGLEV_TABLE_SIZE_MAX)
        return SHMRING_EINVAL;
    /* Envoy refuses ring sizes past 8M (RingHashLbConfig's rules), and a minimum above
     * the maximum (RingHashLoadBalancer's constructor). */
    if (params->min_ring_size > ENVOY_RING_SIZE_MAX ||
        params->max_ring_size > ENVOY_RING_SIZE_MAX ||
        shmring__envoy_min_ring_size(params) > shmring__envoy_max_ring_size(params))
        return SHMRING_EINVAL;
    return 0;
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
