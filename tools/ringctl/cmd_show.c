/* ringctl show: a ring's status, parameters and nodes, with each node's share. */
#include <stdlib.h>

#include "ringctl.h"

/* What show reports: the status and, when something is published, the version of
 * the same generation, its node set and each node's share of the keyspace. */
struct show {
    shmring_ring_status_t status;
    shmring_snapshot_t *snapshot; /* NULL: nothing published yet */
    shmring_snapshot_info_t info;
    shmring_nodeset_t *set;
    double *shares;
};

static void show_free(struct show *show)
{
    shmring_snapshot_free(show->snapshot);
    free(show->shares);
    shmring_nodeset_free(show->set);
}

/* Reads the published version's header, node set and shares. */
static int read_nodes(struct show *show)
{
    shmring_snapshot_info(show->snapshot, &show->info);
    int err = shmring_nodeset_from_snapshot(show->snapshot, &show->set);
    show->shares = calloc(show->info.node_count + 1, sizeof(*show->shares));
    if (err == 0 && show->shares == NULL)
        err = SHMRING_ENOMEM;
    if (err == 0)
        err = shmring_snapshot_shares(show->snapshot, show->shares,
                                      show->info.node_count + 1);
    return err;
}

int ringctl_cmd_show(struct ringctl *ctl)
{
    struct show show = {0};
    int err = shmring_ring_snapshot_with_status(ctl->ring, &ctl->open, &show.status,
                                                &show.snapshot);
    if (err != 0) {
        show_free(&show);
        return ringctl_library_failure("open", ctl, err);
    }
    err = show.snapshot != NULL ? read_nodes(&show) : 0;
    if (err != 0) {
        show_free(&show);
        return ringctl_library_failure("read", ctl, err);
    }
    /* The readers' census is part of the report; its failure is said in it, not
     * fatal. */
    shmring_ring_readers_t census = {0};
    struct show_report report = {
        .status = &show.status,
        .published = show.snapshot != NULL,
        .info = &show.info,
        .set = show.set,
        .shares = show.shares,
        .readers = &census,
    };
    report.readers_error = shmring_ring_readers(ctl->ring, &ctl->open, &census);
    /* The board, when there is one that the caller may read, and that describes the
     * version shown. */
    shmring_board_info_t board = {0};
    if (shmring_ring_board(ctl->ring, &ctl->open, &board) == 0 &&
        board.generation == show.status.generation)
        report.board = &board;
    int status = output_show(ctl, &report);
    shmring_board_info_free(&board);
    if (report.readers_error == 0)
        shmring_ring_readers_free(&census);
    show_free(&show);
    return status;
}
