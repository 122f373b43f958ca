/*
 * What every changing command shares: take the ring's writer lock, read the current
 * node set, change it, publish exactly one new generation (or nothing), and report
 * it. Any error before the publication leaves the ring as it was. With --dry-run the
 * same steps read the current version without the lock and publish nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringctl.h"

/* The state of one changing command. */
struct session {
    shmring_writer_t *writer;
    /* For --dry-run: a copy of the current version (NULL: nothing published). */
    shmring_snapshot_t *current;
    shmring_nodeset_t *set;
    uint64_t generation;
};

void ringctl_change_keep_node(struct change *change, const shmring_node_info_t *node)
{
    snprintf(change->node_name, sizeof(change->node_name), "%s", node->name);
    snprintf(change->node_address, sizeof(change->node_address), "%s", node->address);
    change->node = *node;
    change->node.name = change->node_name;
    change->node.address = change->node_address;
}

int ringctl_dry_run_owner_check(const shmring_ring_status_t *status)
{
    return status->owner == geteuid() ? 0 : SHMRING_EOWNER;
}

/* Opens the ring for writing and reads its node set. */
static int session_open_writer(struct ringctl *ctl, enum open_mode mode,
                               struct session *s)
{
    /* A ring this command creates appears only with its first publication: if the
     * command fails before, no trace of it is left, and no other writer's ring is
     * ever removed in its place. Without EXCL, a ring that exists when the library
     * looks is opened instead (see SHMRING_WRITER_CREATE). */
    const unsigned create = SHMRING_WRITER_CREATE | SHMRING_WRITER_ATOMIC_CREATE;
    unsigned flags = 0;
    if (mode == OPEN_EXCLUSIVE)
        flags = create | SHMRING_WRITER_EXCL;
    else if (mode == OPEN_CREATE)
        flags = create;
    int err = shmring_writer_open(ctl->ring, flags, &ctl->writer, &s->writer);
    if (err == SHMRING_EEXIST && mode == OPEN_EXCLUSIVE)
        return ringctl_fail(EXIT_FAILED, "ring '%s' already exists", ctl->ring);
    if (err != 0)
        return ringctl_library_failure(mode == OPEN_EXCLUSIVE ? "create" : "open", ctl,
                                       err);
    s->generation = shmring_writer_generation(s->writer);
    err = shmring_writer_nodeset(s->writer, &s->set);
    if (err != 0)
        return ringctl_library_failure("read", ctl, err);
    return EXIT_OK;
}

/* For --dry-run: reads the current version without the writer lock, and fails where
 * the command itself would fail to open the ring. */
static int session_open_readonly(struct ringctl *ctl, enum open_mode mode,
                                 struct session *s)
{
    shmring_ring_status_t status;
    int err =
        shmring_ring_snapshot_with_status(ctl->ring, &ctl->open, &status, &s->current);
    if (err == 0) {
        s->generation = status.generation;
        err = ringctl_dry_run_owner_check(&status);
    }
    if (err == 0 && mode == OPEN_EXCLUSIVE)
        return ringctl_fail(EXIT_FAILED, "ring '%s' already exists", ctl->ring);
    if (err == SHMRING_ENOENT && mode != OPEN_EXISTING) {
        s->generation = 0;
        s->current = NULL;
        err = 0;
    }
    if (err != 0)
        return ringctl_library_failure("open", ctl, err);
    err = s->current != NULL ? shmring_nodeset_from_snapshot(s->current, &s->set)
                             : shmring_nodeset_new(&s->set);
    if (err != 0)
        return ringctl_library_failure("read", ctl, err);
    return EXIT_OK;
}

/* Builds the version SET would publish and computes the exact share of the keyspace
 * that would move to it from CURRENT (NULL: nothing published). */
static int estimate_moved(const struct ringctl *ctl, const shmring_snapshot_t *current,
                          const shmring_nodeset_t *set, double *fraction)
{
    shmring_snapshot_t *next = NULL;
    int err = shmring_nodeset_snapshot(set, &next);
    if (err == 0)
        err = shmring_snapshot_moved_share(current, next, fraction);
    shmring_snapshot_free(next);
    if (err != 0)
        return ringctl_library_failure("build", ctl, err);
    return EXIT_OK;
}

/* Publishes the changed node set, or (dry run, nothing to do) does not, and reports
 * it. */
static int publish_and_report(struct ringctl *ctl, struct session *s,
                              const struct change *change)
{
    if (change->unchanged)
        return output_change(ctl, change, s->generation, NULL);
    if (ctl->dry_run) {
        double fraction;
        int status =
            change->sample ? estimate_moved(ctl, s->current, s->set, &fraction) : EXIT_OK;
        if (status != EXIT_OK)
            return status;
        return output_change(ctl, change, s->generation,
                             change->sample ? &fraction : NULL);
    }
    int err = shmring_writer_publish(s->writer, s->set, &s->generation);
    if (err != 0)
        return ringctl_library_failure("publish", ctl, err);
    ctl->published = s->generation; /* from now on, the ring has changed */
    return output_change(ctl, change, s->generation, NULL);
}

/* Gives SET the minimum reader of --min-reader; a different one than it had is a
 * change. */
static int set_min_reader(const struct ringctl *ctl, shmring_nodeset_t *set,
                          struct change *change)
{
    unsigned major, minor;
    shmring_nodeset_min_reader(set, &major, &minor);
    if (shmring_nodeset_set_min_reader(set, ctl->min_reader_major,
                                       ctl->min_reader_minor) != 0)
        return ringctl_fail(EXIT_USAGE, "minimum reader %u.%u is after this release",
                            ctl->min_reader_major, ctl->min_reader_minor);
    if (major != ctl->min_reader_major || minor != ctl->min_reader_minor)
        change->unchanged = false;
    return EXIT_OK;
}

int ringctl_run_change(struct ringctl *ctl, enum open_mode mode, change_fn apply,
                       const void *input)
{
    struct session s = {0};
    struct change change = {.sample = true};
    ctl->writing = true;
    int status = ctl->dry_run ? session_open_readonly(ctl, mode, &s)
                              : session_open_writer(ctl, mode, &s);
    if (status == EXIT_OK)
        status = apply(ctl, input, &s.set, &change);
    /* The node set read from the ring keeps its minimum reader; the flag changes it,
     * which is a change to publish even when the nodes stay as they are. */
    if (status == EXIT_OK && (ctl->given & OPTION(MIN_READER)))
        status = set_min_reader(ctl, s.set, &change);
    if (status == EXIT_OK)
        status = publish_and_report(ctl, &s, &change);
    shmring_writer_close(s.writer);
    shmring_snapshot_free(s.current);
    shmring_nodeset_free(s.set);
    return status;
}
