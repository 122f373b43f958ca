/*
 * peer_addresses: the client addresses that test nginx's stream upstream at the edges
 * of its continuum. Usage:
 *
 *   peer_addresses FIRST_POINT LAST_POINT COUNT
 *
 * nginx's `hash $remote_addr consistent` hashes the client's address as text with
 * CRC-32, and the test connects from addresses 127.B.C.D (B 1-254, so that none is
 * the front's 127.0.0.1; C 0-255; D 1-254). An address cannot be forged onto a hash
 * as a free-form key can, so this program enumerates all 16,516,096 of them, which
 * takes a few seconds, where a random draw could miss the few hundred that lie at
 * an edge. It prints, one a line:
 *
 *   past ADDRESS    up to COUNT addresses whose hash is above LAST_POINT, the keys
 *                   that wrap around to the first point: the highest of all
 *                   candidates and the COUNT - 1 nearest above LAST_POINT;
 *   below ADDRESS   up to COUNT addresses whose hash is at or below FIRST_POINT: the
 *                   lowest of all candidates and the COUNT - 1 nearest at or below
 *                   FIRST_POINT (FIRST_POINT itself included, the lookup's >=).
 *
 * Fewer than COUNT of a kind are printed only when fewer exist; none when the edge
 * lies beyond every candidate's hash (the candidates' hashes span 0x000001a9 to
 * 0xffffffb4), which the test then avoids by moving the server that owns it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_COUNT 1000

/* The COUNT candidates nearest to an edge, kept in order of distance from it. */
struct nearest {
    uint32_t hashes[MAX_COUNT];
    char addresses[MAX_COUNT][16];
    size_t used;
    size_t count;
};

/* Adds ADDRESS whose DISTANCE from the edge is given, if it is among the nearest. */
static void nearest_offer(struct nearest *set, uint32_t distance, const char *address)
{
    size_t at = set->used;
    while (at > 0 && set->hashes[at - 1] > distance)
        at--;
    if (at >= set->count)
        return;
    size_t last = set->used < set->count ? set->used : set->count - 1;
    memmove(&set->hashes[at + 1], &set->hashes[at], (last - at) * sizeof(set->hashes[0]));
    memmove(&set->addresses[at + 1], &set->addresses[at],
            (last - at) * sizeof(set->addresses[0]));
    set->hashes[at] = distance;
    snprintf(set->addresses[at], sizeof(set->addresses[at]), "%s", address);
    if (set->used < set->count)
        set->used++;
}

static bool parse_u32(const char *text, uint32_t *value)
{
    char *end;
    unsigned long long parsed = strtoull(text, &end, 0);
    if (*text == '\0' || *end != '\0' || parsed > UINT32_MAX)
        return false;
    *value = (uint32_t)parsed;
    return true;
}

static void print_set(const char *kind, struct nearest *nearest, const char *extreme,
                      bool extreme_found)
{
    /* The extreme candidate takes the place of the farthest of the nearest ones,
     * unless it is one of them already. */
    bool extreme_listed = false;
    for (size_t i = 0; i < nearest->used; i++)
        extreme_listed |= strcmp(nearest->addresses[i], extreme) == 0;
    if (extreme_found && !extreme_listed) {
        size_t at = nearest->used < nearest->count ? nearest->used++ : nearest->used - 1;
        memcpy(nearest->addresses[at], extreme, sizeof(nearest->addresses[at]));
    }
    for (size_t i = 0; i < nearest->used; i++)
        printf("%s %s\n", kind, nearest->addresses[i]);
}

int main(int argc, char **argv)
{
    uint32_t first_point, last_point, count;
    if (argc != 4 || !parse_u32(argv[1], &first_point) ||
        !parse_u32(argv[2], &last_point) || !parse_u32(argv[3], &count) || count == 0 ||
        count > MAX_COUNT) {
        fprintf(stderr,
                "usage: peer_addresses FIRST_POINT LAST_POINT COUNT "
                "(COUNT 1-%d)\n",
                MAX_COUNT);
        return 2;
    }
    static struct nearest past, below;
    past.count = below.count = count;
    char highest[16] = "", lowest[16] = "";
    uint32_t highest_hash = 0, lowest_hash = UINT32_MAX;
    bool any_past = false, any_below = false;
    char address[16];
    for (int b = 1; b <= 254; b++) {
        for (int c = 0; c <= 255; c++) {
            for (int d = 1; d <= 254; d++) {
                int length = snprintf(address, sizeof(address), "127.%d.%d.%d", b, c, d);
                uint32_t hash =
                    (uint32_t)crc32(0, (const unsigned char *)address, (uInt)length);
                if (hash > last_point) {
                    nearest_offer(&past, hash - last_point, address);
                    if (!any_past || hash > highest_hash) {
                        highest_hash = hash;
                        memcpy(highest, address, sizeof(highest));
                    }
                    any_past = true;
                } else if (hash <= first_point) {
                    nearest_offer(&below, first_point - hash, address);
                    if (!any_below || hash < lowest_hash) {
                        lowest_hash = hash;
                        memcpy(lowest, address, sizeof(lowest));
                    }
                    any_below = true;
                }
            }
        }
    }
    print_set("past", &past, highest, any_past);
    print_set("below", &below, lowest, any_below);
    return fflush(stdout) == 0 ? 0 : 1;
}
