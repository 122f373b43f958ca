/* ringctl board: give a ring a load board for bounded-load leases, change its
 * balance factor, or remove the board (docs/bounded-loads.md); also what init and
 * load do with --workers-group and --balance-factor. */
#include <string.h>

#include "ringctl.h"

int ringctl_board_apply(struct ringctl *ctl, bool with_group, bool with_factor,
                        uint32_t balance_percent)
{
    if (ctl->dry_run || (!with_group && !with_factor))
        return EXIT_OK;
    ctl->writing = true;
    shmring_writer_t *w;
    int err = shmring_writer_open(ctl->ring, 0, &ctl->writer, &w);
    if (err != 0)
        return ringctl_library_failure("open", ctl, err);
    if (with_group)
        err = shmring_writer_set_board_sized(
            w, ctl->workers_group, with_factor ? balance_percent : SHMRING_BALANCE_KEEP,
            ctl->board_entries, ctl->board_slots);
    else
        err = shmring_writer_set_balance_factor(w, balance_percent);
    shmring_writer_close(w);
    if (err == SHMRING_EPERM)
        return ringctl_fail(EXIT_FAILED,
                            "cannot give ring '%s' a load board for group %lu: only "
                            "a member of the group (or root) may give it files",
                            ctl->ring, (unsigned long)ctl->workers_group);
    if (err != 0)
        return ringctl_library_failure("give a load board to", ctl, err);
    return EXIT_OK;
}

/* "board none": the ring's leases become plain lookups, and the board's segment and
 * file go. */
static int board_remove(struct ringctl *ctl)
{
    if (ctl->given & OPTION(BALANCE_FACTOR))
        return ringctl_fail(EXIT_USAGE, "board none takes no --balance-factor: a ring "
                                        "without a board has no balance factor");
    if (ctl->given & (OPTION(BOARD_NODES) | OPTION(BOARD_SLOTS)))
        return ringctl_fail(EXIT_USAGE, "board none takes no --nodes or --slots: it "
                                        "removes the board");
    if (ctl->dry_run)
        return EXIT_OK;
    ctl->writing = true;
    shmring_writer_t *w;
    int err = shmring_writer_open(ctl->ring, 0, &ctl->writer, &w);
    if (err != 0)
        return ringctl_library_failure("open", ctl, err);
    err = shmring_writer_remove_board(w);
    shmring_writer_close(w);
    if (err != 0)
        return ringctl_library_failure("remove the load board of", ctl, err);
    return EXIT_OK;
}

int ringctl_cmd_board(struct ringctl *ctl)
{
    if (strcmp(ctl->args[0], "none") == 0)
        return board_remove(ctl);
    int status = ringctl_parse_group(ctl->args[0], &ctl->workers_group);
    if (status != EXIT_OK)
        return status;
    if (ctl->board_entries != 0 && ctl->board_slots != 0 &&
        (uint64_t)ctl->board_entries * ctl->board_slots > SHMRING_BOARD_CELLS_MAX)
        return ringctl_fail(EXIT_USAGE,
                            "--nodes x --slots must be at most %u (the board's cells): "
                            "%u x %u",
                            SHMRING_BOARD_CELLS_MAX, ctl->board_entries,
                            ctl->board_slots);
    return ringctl_board_apply(ctl, true, (ctl->given & OPTION(BALANCE_FACTOR)) != 0,
                               ctl->balance_percent);
}
