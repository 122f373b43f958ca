/*
 * `libketama`: the continuum of last.fm's libketama (ketama.c,
 * ketama_create_continuum and ketama_get_server), reproduced bit for bit:
 *
 * - a server of memory m (our weight) gets floorf(pct x 40.0 x servers) digests,
 *   four points each, pct = (float)m / (float)total memory: pct is single
 *   precision, but 40.0 is a double literal, so the product is taken in double and
 *   rounded to float only for floorf() (seven equal servers get 40 digests this
 *   way, 39 in double throughout); this file is built with -ffp-contract=off;
 * - the point strings are "address-k" with the address exactly as the server file
 *   gives it (port included, whatever it is), k counting from 0; each MD5 digest
 *   gives four points, its little-endian 32-bit words;
 * - points are sorted with qsort() (glibc's merge sort keeps equal points in server
 *   order, as our stable sort does);
 * - ketama_get_server()'s bisection returns the point p[i] with
 *   p[i-1] < hash <= p[i] (p[-1] read as 0), and the first point when no point
 *   qualifies: past the last point, and for a hash of 0. That is the first point >=
 *   the hash, wrapping to the first, which is our lookup.
 *
 * The server file lists no down servers; our down nodes are simply left out.
 * libketama formats point strings into a 30-byte buffer, so an address longer than
 * about 24 bytes overflows it there: such rings are computed as the arithmetic
 * says, which libketama itself does not reliably do.
 */
#include <math.h>
#include <string.h>

#include "placement_internal.h"

static uint32_t digests_for(uint32_t memory, uint64_t total_memory, uint32_t servers)
{
    float pct = (float)memory / (float)total_memory;
    return (uint32_t)floorf((float)(pct * 40.0 * (float)servers));
}

static int size(struct placement_input *input, uint64_t *size)
{
    uint64_t total = shmring__placement_total_weight(input->up, input->up_count);
    *size = 0;
    for (size_t i = 0; i < input->up_count; i++)
        *size += 4 * (uint64_t)digests_for(input->up[i].weight, total,
                                           (uint32_t)input->up_count);
    return 0;
}

static int place(const struct placement_input *input, uint64_t size, void *points)
{
    (void)size;
    uint64_t total = shmring__placement_total_weight(input->up, input->up_count);
    size_t next = 0;
    for (size_t n = 0; n < input->up_count; n++) {
        const struct placement_node *server = &input->up[n];
        const char *address =
            server->hash_key != NULL ? server->hash_key : server->address;
        shmring__points_add_md5_labels(
            points, &next, address, strlen(address),
            digests_for(server->weight, total, (uint32_t)input->up_count), SIZE_MAX,
            server->node_index);
    }
    return shmring__points_sort(points, next);
}

/* ketama.c hashes with MD5 alone (ketama_hashi); its points follow server order
 * (glibc's qsort() is a stable merge sort). */
const struct placement_algorithm shmring__placement_libketama = {
    .name = "libketama",
    .id = SHMRING_ALGORITHM_LIBKETAMA,
    .peer = true,
    .default_hash = SHMRING_HASH_MD5,
    .hashes = PLACEMENT_HASH_BIT(SHMRING_HASH_MD5),
    .parameters = 0,
    .key_hash = KEY_HASH_KETAMA,
    .order = PLACEMENT_ORDER_UP,
    .lookup = PLACEMENT_LOOKUP_POINTS,
    .candidates = PLACEMENT_CANDIDATES_CLOCKWISE,
    .size = size,
    .place = place,
};
