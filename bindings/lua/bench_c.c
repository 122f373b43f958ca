/*
 * The C side of bench.lua: the same shmring_lookup_id() loop as the Lua side, over
 * the same keys and the same handle, loaded into the LuaJIT process through the FFI
 * so that both figures come from one run.
 */
#include <stddef.h>
#include <stdint.h>

#include "shmring.h"

__attribute__((visibility("default"))) int
lua_bench_lookup_id_loop(shmring_t *r, const char *const *keys, const size_t *lens,
                         size_t count, size_t rounds, uint64_t *checksum);

/*
 * Looks each of the COUNT keys up ROUNDS times, one shmring_lookup_id() call each,
 * and adds the ids to *CHECKSUM (so that no call can be optimized away). Returns 0
 * or the first error.
 */
int lua_bench_lookup_id_loop(shmring_t *r, const char *const *keys, const size_t *lens,
                             size_t count, size_t rounds, uint64_t *checksum)
{
    uint64_t sum = 0;
    for (size_t round = 0; round < rounds; round++) {
        for (size_t i = 0; i < count; i++) {
            uint32_t id;
            int err = shmring_lookup_id(r, keys[i], lens[i], &id);
            if (err != 0)
                return err;
            sum += id;
        }
    }
    *checksum += sum;
    return 0;
}
