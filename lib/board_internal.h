/*
 * The load board: the in-flight counts that every worker process of a host shares,
 * for bounded-load leases (shmring_acquire(), docs/bounded-loads.md).
 *
 * Where it lives. The counts cannot go into a ring's versions, which are read-only,
 * nor into a file the workers' group could write: any member could truncate such a
 * file, and every worker touching its pages would then die of SIGBUS. The board is a
 * System V shared-memory segment instead. Its size is fixed when the owner creates
 * it and nobody can change it; only its creator or owner (or root) can remove it,
 * change its owner or mode; a removed segment stays mapped by whoever attached it.
 * IPC_STAT tells a worker its creator, owner, group, mode and size before it
 * attaches. (A sealed memfd would have the same property, but it must be handed to
 * each worker over a socket by a process of the owner that stays up, and ringctl is
 * no daemon.) The segment's id, a random nonce that its header repeats, its group
 * and size, and the balance factor are in a record in the ring's control object,
 * which only the owner writes and readers of every release map already; releases
 * that do not know the record ignore it (the control object's format is unchanged).
 *
 * Who writes what. A worker process claims one slot of the board for each handle it
 * uses; the board holds, for each node entry and slot, the number of leases that
 * slot holds on that node (a cell), and for each slot its total. A node's in-flight
 * count is the sum of its cells; the ring's is the sum of the slot totals. A worker
 * changes only its own slot's cells, so a worker that dies at any instruction
 * leaves only its own cells wrong, and whoever reclaims its slot sets them to zero:
 * no shared counter ever needs a repair that could race a live worker.
 *
 * Liveness. Each claimed slot is held by an open-file-description read lock on one
 * byte of the ring's `board` file (mode 0640, the workers' group), taken before the
 * claim: the kernel drops it when the holder's last descriptor closes, at exit or
 * kill -9, in whatever pid namespace the holder ran. A sweeper (any worker, at most
 * every SWEEP_INTERVAL_NS, at its next acquire) finds claimed slots whose byte
 * nobody else locks (F_OFD_GETLK) and reclaims them. The slot also records the
 * holder's pid, start time and pid namespace, for `ringctl show` and for a forked
 * child, which must not count on its parent's slot.
 *
 * Node entries follow nodes by id across versions: a worker finds a node's entry by
 * its id, or claims a free one; a sweeper whose version is the published one drops
 * the entries of ids that version does not have. Each entry and each of its cells
 * carry an 8-bit incarnation, bumped when the entry is dropped, so that a lease
 * taken on a removed node is never released into a new node's count.
 *
 * Sizes. The owner chooses the board's slot and entry counts when it creates it
 * (shmring_writer_set_board_sized()) and writes them into the header, which a group
 * member can rewrite: a reader reads them once, at attach, checks them against the
 * limits below and the layout they give against the size the owner recorded in the
 * control object and the size IPC_STAT reports, and uses its own copy from then on.
 *
 * A hostile member of the group can write any of this. Every value read is clamped
 * (counts to BOARD_COUNT_MAX, indexes to the board's bounds as attach read them) and only
 * ever weighs the choice among the key's own candidates, the up nodes of a validated
 * version: it can skew loads among them, never route elsewhere, crash a worker or block
 * one.
 */
#ifndef SHMRING_BOARD_INTERNAL_H
#define SHMRING_BOARD_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shmring_ctl.h"

#define BOARD_MAGIC UINT64_C(0x3164726f62726873) /* "shrbord1" little-endian */
#define BOARD_LAYOUT_VERSION 1u
#define BOARD_FILE "board"
#define BOARD_MODE 0660
#define BOARD_FILE_MODE 0640
/* Slots (worker handles) and node entries of a board: the owner chooses them when it
 * creates the board and writes them into its header; readers take them from there,
 * within these limits. The defaults are the only sizes that 0.3 and 0.4 readers
 * accept (they check the segment's size against this one layout), so a board of the
 * default sizes stays byte-identical to theirs. */
#define BOARD_SLOTS_DEFAULT 128u
#define BOARD_ENTRIES_DEFAULT 1024u
#define BOARD_SLOTS_MIN 1u
/* Keeps the ring's total (slots x BOARD_COUNT_MAX) below 2^34, which
 * shmring__board_capacity()'s 64-bit product needs. */
#define BOARD_SLOTS_MAX SHMRING_BOARD_SLOTS_MAX
#define BOARD_ENTRIES_MIN SHMRING_BOARD_ENTRIES_MIN
#define BOARD_ENTRIES_MAX SHMRING_BOARD_ENTRIES_MAX
/* Entries x slots, 2^24: 64 MiB of cells at most, so that a sweep clearing one
 * slot's cells or a reader's scan stays short. */
#define BOARD_CELLS_MAX SHMRING_BOARD_CELLS_MAX
_Static_assert(SHMRING_BOARD_CELLS_MAX == 1u << 24, "cells limit");
/* The largest count a cell or a slot total is read as (24 bits). */
#define BOARD_COUNT_MAX 0xffffffu
/* How often a handle looks for slots of dead workers, at its next acquire. */
#define SWEEP_INTERVAL_NS 250000000 /* 250 ms */
/* Balance factors, in percent: 0 (none) or 100 to 10000 (1.00 to 100.00). */
#define BALANCE_PERCENT_MIN 100u
#define BALANCE_PERCENT_MAX 10000u
/* shmring_writer_set_board()'s "keep the factor the ring has" (SHMRING_BALANCE_KEEP). */
#define BALANCE_KEEP UINT32_MAX

/* Slot states: the low 2 bits; the rest is an epoch bumped at each reclaim. */
#define SLOT_FREE 0u
#define SLOT_CLAIMED 1u
#define SLOT_RECLAIMING 2u

/* The record in the control object (at CONTROL_BOARD_OFFSET): written by the owner
 * only, with a sequence count that is odd while it changes. */
struct control_board {
    _Atomic uint32_t sequence;
    /* 0: no board. */
    _Atomic uint32_t present;
    _Atomic int32_t shmid;
    _Atomic uint32_t group;
    _Atomic uint64_t nonce;
    _Atomic uint64_t size;
    /* The balance factor in percent (0: none). */
    _Atomic uint32_t balance_percent;
    uint32_t reserved;
};
#define CONTROL_BOARD_OFFSET 512u

struct board_header {
    uint64_t magic;
    uint32_t layout_version;
    uint32_t header_size;
    uint64_t nonce;
    uint32_t slot_count;
    uint32_t entry_count;
    /* One past the highest slot ever claimed: readers sum cells below it. */
    _Atomic uint32_t slot_high;
    uint32_t reserved0;
    /* Statistics of reclaimed slots, added when they are reclaimed. */
    _Atomic uint64_t retired_acquires;
    _Atomic uint64_t retired_first;
    _Atomic uint64_t retired_tried;
    _Atomic uint64_t reclaimed_slots;
    uint8_t reserved[184];
};
_Static_assert(sizeof(struct board_header) == 256, "board header layout");

struct board_slot {
    /* SLOT_* | epoch << 2. */
    _Atomic uint32_t state;
    _Atomic int32_t pid;
    /* The holder's start time (clock ticks since boot, /proc/PID/stat) and pid
     * namespace inode. */
    _Atomic uint64_t start_time;
    _Atomic uint64_t pid_namespace;
    uint64_t reserved0;
    /* What this slot's acquires did: how many, how many the first candidate served,
     * how many candidates they tried. */
    _Atomic uint64_t acquires;
    _Atomic uint64_t first;
    _Atomic uint64_t tried;
    uint64_t reserved1;
};
_Static_assert(sizeof(struct board_slot) == 64, "board slot layout");

/* A node entry: ENTRY_PRESENT | incarnation << 32 | id, or incarnation << 32 when
 * free. */
#define ENTRY_PRESENT (UINT64_C(1) << 40)
/* Set while a sweeper resets a dropped entry's cells: nobody claims it meanwhile (an
 * entry whose sweeper died then stays unused). */
#define ENTRY_DROPPING (UINT64_C(1) << 41)
struct board_entry {
    _Atomic uint64_t tag;
    /* Requests that found this node full and went on to another candidate. */
    _Atomic uint64_t overflow;
};

/* A cell: incarnation << 24 | count. */
#define CELL_COUNT(cell) ((cell)&BOARD_COUNT_MAX)
#define CELL_INCARNATION(cell) ((cell) >> 24)

/* The segment: header, slots, totals, entries, then cells[entry][slot]. */
struct board {
    struct board_header *header;
    struct board_slot *slots;
    /* Leases each slot holds on all nodes (clamped when read), side by side so that
     * the ring's total is one cache line for 16 workers. */
    _Atomic uint32_t *totals;
    struct board_entry *entries;
    _Atomic uint32_t *cells;
    /* The header's counts as attach read and checked them: every index into the
     * segment is bounded by these, never by what the header says later. */
    uint32_t slot_count;
    uint32_t entry_count;
    size_t size;
    uint64_t nonce;
    int shmid;
};

/* The size of a board segment of SLOTS slots and ENTRIES entries, or 0 when they are
 * out of the limits above (then no board has them). */
size_t shmring__board_size(uint32_t slots, uint32_t entries);

/* The control object's board record, read whole (retrying while the owner writes
 * it): 0, or SHMRING_ENOENT when the ring has none. */
struct board_record {
    int32_t shmid;
    gid_t group;
    uint64_t nonce;
    uint64_t size;
    uint32_t balance_percent;
};
int shmring__board_record(const void *control, struct board_record *out);

/*
 * Attaches the board RECORD names, read and write, after checking it with IPC_STAT:
 * created and owned by OWNER, of RECORD's group, mode 0660, RECORD's size; then its
 * header (magic, layout, nonce, counts within the limits, the layout they give of
 * RECORD's size); OUT then carries the counts. Returns 0, SHMRING_EACCES (this process
 * may not write it: not in the group), SHMRING_EBOARD (anything else is wrong) or
 * SHMRING_ENOENT (gone).
 */
int shmring__board_attach(const struct board_record *record, uid_t owner,
                          struct board *out);
void shmring__board_detach(struct board *board);

/* Clamped in-flight counts: of the entry ENTRY whose incarnation is INCARNATION, and
 * of the whole board. */
uint64_t shmring__board_node_count(const struct board *board, uint32_t entry,
                                   uint32_t incarnation);
uint64_t shmring__board_total(const struct board *board);

/* The entries of the COUNT nodes IDS (distinct ids), claiming a free one for each
 * node that has none: into ENTRIES[i] and TAGS[i], or UINT32_MAX in ENTRIES[i] when
 * every entry is taken. O(entries log count + count
 * log count). Returns 0 or SHMRING_ENOMEM. */
int shmring__board_entries_find(const struct board *board, const uint32_t *ids,
                                size_t count, uint32_t *entries, uint64_t *tags);

/*
 * Claims a slot for this process: takes the read lock of its byte on LOCK_FD, then
 * the slot. Fills *slot and *epoch. Returns 0 or SHMRING_ELIMIT (every slot is held).
 */
int shmring__board_slot_claim(const struct board *board, int lock_fd, uint32_t *slot,
                              uint32_t *epoch);

/* Lets go of a slot this process holds (its leases are dropped). */
void shmring__board_slot_release(const struct board *board, int lock_fd, uint32_t slot);

/*
 * Reclaims the slots but OWN_SLOT (the caller's, or UINT32_MAX for none) whose
 * holders died (nobody else locks their byte on LOCK_FD), and, when IDS (COUNT sorted ids
 * of the published version) is not NULL, drops the entries of ids it does not have.
 * Returns how many slots it reclaimed.
 */
unsigned shmring__board_sweep(const struct board *board, int lock_fd, uint32_t own_slot,
                              const uint32_t *ids, size_t count);

/* Counts one lease of SLOT on ENTRY whose tag is TAG: false (nothing counted) when
 * the entry changed meanwhile. */
bool shmring__board_count(const struct board *board, uint32_t slot, uint32_t entry,
                          uint64_t tag);
/* Ends a lease that shmring__board_count() counted; never below zero. */
void shmring__board_uncount(const struct board *board, uint32_t slot, uint32_t entry,
                            uint64_t tag);

/* Removes the board segment the control object CONTROL names, if it is the caller's
 * (`destroy`). */
void shmring__board_remove_of(const void *control);

/* Opens the ring directory DIR_FD's board file for locking and checks it: the
 * owner's (OWNER), group GROUP, mode 0640. Returns 0 (fd in *fd) or an error. */
int shmring__board_lock_open(int dir_fd, uid_t owner, gid_t group, int *fd);

/* The instants of a worker's or sweeper's work on the board that the crash tests stop
 * a process at before killing it (tests/check_board.c). */
enum board_step {
    /* A claimer holds its slot's lock and has not claimed the slot yet. */
    BOARD_STEP_SLOT_LOCKED,
    /* It has claimed the slot, not yet written who it is. */
    BOARD_STEP_SLOT_CLAIMED,
    /* A lease is counted in its cell, not yet in the slot's total. */
    BOARD_STEP_CELL_COUNTED,
    /* A lease is counted in both. */
    BOARD_STEP_TOTAL_COUNTED,
    /* A release took the lease from its cell, not yet from the total. */
    BOARD_STEP_CELL_UNCOUNTED,
    /* A sweeper marked a dead worker's slot as being reclaimed. */
    BOARD_STEP_RECLAIMING,
    /* It cleared the slot's cells, and has not freed the slot yet. */
    BOARD_STEP_CLEARED,
    BOARD_STEP_COUNT
};

/* Called at each step when not NULL: only the static test library's copy is ever
 * set. */
extern void (*shmring__board_hook)(enum board_step step);
#define BOARD_HOOK(step)                                                                 \
    do {                                                                                 \
        if (__builtin_expect(shmring__board_hook != NULL, 0))                            \
            shmring__board_hook(step);                                                   \
    } while (0)

/* The capacity of a node of weight WEIGHT when TOTAL leases are in flight and the
 * up nodes weigh UP_WEIGHT: ceil(PERCENT / 100 x (TOTAL + 1) x WEIGHT / UP_WEIGHT). */
static inline uint64_t shmring__board_capacity(uint32_t percent, uint64_t total,
                                               uint32_t weight, uint64_t up_weight)
{
    /* In 64 bits, which a lease's hot path needs (a 128-bit division is a library
     * call): PERCENT <= 10000 < 2^14, TOTAL + 1 <= 2^34 (the sum of at most
     * BOARD_SLOTS_MAX totals of at most BOARD_COUNT_MAX each, below 2^34, and the
     * test's 2^32 - 1), WEIGHT < 2^16: the product is below 2^64. */
    uint64_t numerator = (uint64_t)percent * (total + 1) * weight;
    uint64_t denominator = 100 * up_weight;
    return (numerator + denominator - 1) / denominator;
}

#endif /* SHMRING_BOARD_INTERNAL_H */
