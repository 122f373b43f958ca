/* ringctl list: every ring of the ring directory, one line (or object) each. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl.h"

/* What list shows of one ring. */
struct list_entry {
    uint64_t generation;
    /* The header of the current version (zero when nothing is published). */
    shmring_snapshot_info_t info;
    bool published;
};

/* Reads what list shows of RING: the control object and the current version's
 * header alone. Returns 0 or a library error. */
static int list_read(const struct ringctl *ctl, const char *ring, struct list_entry *out)
{
    memset(out, 0, sizeof(*out));
    shmring_ring_info_t info;
    int err = shmring_ring_info(ring, &ctl->open, &info);
    if (err != 0)
        return err;
    out->generation = info.status.generation;
    out->info = info.version;
    out->published = info.status.generation != 0;
    return 0;
}

/* Says why RING (listed, then refused with ERR) is skipped, unless it was destroyed
 * since it was listed. Another user's ring, or something else that has a ring's name,
 * is no reason to fail the listing of the others. */
static void skip(const struct ringctl *ctl, const char *ring, int err)
{
    char detail[LINE_MAX_BYTES];
    bool described =
        (err == SHMRING_EOWNER || err == SHMRING_ENOTRING || err == SHMRING_ENOENT) &&
        describe_occupant(ctl, ring, err, detail, sizeof(detail));
    if (described)
        warn("ring '%s': skipped: %s", ring, detail);
    else if (err != SHMRING_ENOENT)
        warn("ring '%s': skipped: %s", ring, shmring_strerror(err));
}

static json_t *entry_json(const char *ring, const struct list_entry *entry)
{
    json_t *object = json_object();
    json_object_set_new(object, "ring", json_str(ring));
    json_object_set_new(object, "generation", json_uint(entry->generation));
    json_object_set_new(object, "nodes", json_uint(entry->info.node_count));
    json_object_set_new(object, "up", json_uint(entry->info.up_count));
    json_object_set_new(object, "algorithm",
                        entry->published ? json_string(shmring_algorithm_name(
                                               entry->info.params.algorithm))
                                         : json_null());
    return object;
}

int ringctl_cmd_list(struct ringctl *ctl)
{
    char **names;
    size_t count;
    int err = shmring_ring_list(ctl->directory, &names, &count);
    if (err != 0)
        return fail(EXIT_FAILED, "cannot list rings in %s: %s",
                    ctl->directory != NULL ? ctl->directory : SHMRING_DEFAULT_DIRECTORY,
                    err > -1000 ? strerror(-err) : shmring_strerror(err));
    json_t *array = ctl->json ? json_array() : NULL;
    for (size_t i = 0; i < count; i++) {
        struct list_entry entry;
        err = list_read(ctl, names[i], &entry);
        if (err != 0) {
            skip(ctl, names[i], err);
            continue;
        }
        if (array != NULL)
            json_array_append_new(array, entry_json(names[i], &entry));
        else
            printf("%s\t%" PRIu64 "\t%" PRIu32 "\t%s\n", names[i], entry.generation,
                   entry.info.node_count,
                   entry.published ? shmring_algorithm_name(entry.info.params.algorithm)
                                   : "-");
    }
    shmring_ring_list_free(names);
    return array != NULL ? output_json(array, true) : EXIT_OK;
}
