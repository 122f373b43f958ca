/*
 * The load board: attaching it, its slots, its node entries and its counts (see
 * board_internal.h for the design and what a hostile group member can do).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board_internal.h"
#include "ring_dir_internal.h"

void (*shmring__board_hook)(enum board_step step);

/* How many times a compare-and-swap on the board is retried: the board's other
 * writers change a word now and then, never without pause, unless a hostile group
 * member does, and no worker may spin on that. */
#define CAS_ATTEMPTS_MAX 1000

/* The segment's parts, in order: header, SLOTS slots, SLOTS totals, ENTRIES entries,
 * then the cells, entry by entry. The totals are padded to 8 bytes for the entries'
 * 64-bit words (an odd slot count leaves 4 bytes over); at 128 slots that adds
 * nothing, and the default layout is the one 0.3 and 0.4 readers know. */
static size_t totals_offset(uint32_t slots)
{
    return sizeof(struct board_header) + (size_t)slots * sizeof(struct board_slot);
}

static size_t entries_offset(uint32_t slots)
{
    size_t end = totals_offset(slots) + (size_t)slots * sizeof(uint32_t);
    return (end + 7) & ~(size_t)7;
}

static size_t cells_offset(uint32_t slots, uint32_t entries)
{
    return entries_offset(slots) + (size_t)entries * sizeof(struct board_entry);
}

size_t shmring__board_size(uint32_t slots, uint32_t entries)
{
    /* The limits keep every product below 2^27: no overflow in any size_t. */
    if (slots < BOARD_SLOTS_MIN || slots > BOARD_SLOTS_MAX ||
        entries < BOARD_ENTRIES_MIN || entries > BOARD_ENTRIES_MAX ||
        (uint64_t)slots * entries > BOARD_CELLS_MAX)
        return 0;
    return cells_offset(slots, entries) + (size_t)entries * slots * sizeof(uint32_t);
}

int shmring__board_record(const void *control, struct board_record *out)
{
    /* The control object is page-aligned and CONTROL_BOARD_OFFSET a multiple of 8. */
    const struct control_board *record =
        (const void *)((const unsigned char *)control + CONTROL_BOARD_OFFSET);
    /* Bounded: only the owner writes the record, and a writer killed while its
     * count is odd leaves it odd until the next change; then there is no board. */
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint32_t before = atomic_load_explicit(&record->sequence, memory_order_acquire);
        bool present = atomic_load_explicit(&record->present, memory_order_relaxed) != 0;
        out->shmid = atomic_load_explicit(&record->shmid, memory_order_relaxed);
        out->group = atomic_load_explicit(&record->group, memory_order_relaxed);
        out->nonce = atomic_load_explicit(&record->nonce, memory_order_relaxed);
        out->size = atomic_load_explicit(&record->size, memory_order_relaxed);
        out->balance_percent =
            atomic_load_explicit(&record->balance_percent, memory_order_relaxed);
        /* The loads above complete before the count is read again. */
        atomic_thread_fence(memory_order_acquire);
        if ((before & 1u) == 0 &&
            atomic_load_explicit(&record->sequence, memory_order_relaxed) == before)
            return present ? 0 : SHMRING_ENOENT;
    }
    return SHMRING_ENOENT;
}

static void board_layout(void *base, size_t size, int shmid, uint32_t slots,
                         uint32_t entries, struct board *out)
{
    /* The segment is page-aligned and every offset keeps its part's alignment. */
    unsigned char *bytes = base;
    out->header = base;
    out->slots = (void *)(bytes + sizeof(struct board_header));
    out->totals = (void *)(bytes + totals_offset(slots));
    out->entries = (void *)(bytes + entries_offset(slots));
    out->cells = (void *)(bytes + cells_offset(slots, entries));
    out->slot_count = slots;
    out->entry_count = entries;
    out->size = size;
    out->shmid = shmid;
}

/* Whether IPC_STAT's SEGMENT is the board RECORD describes, of OWNER. */
static bool segment_expected(const struct shmid_ds *segment,
                             const struct board_record *record, uid_t owner)
{
    return segment->shm_perm.cuid == owner && segment->shm_perm.uid == owner &&
           segment->shm_perm.gid == record->group &&
           (segment->shm_perm.mode & 0777) == BOARD_MODE &&
           segment->shm_segsz == record->size;
}

int shmring__board_attach(const struct board_record *record, uid_t owner,
                          struct board *out)
{
    /* Below the smallest board or above any board's size (an upper bound of every
     * part): only the owner writes the record, and this keeps a damaged one from
     * mapping gigabytes, or less than a header. */
    const uint64_t size_bound =
        sizeof(struct board_header) +
        (uint64_t)BOARD_SLOTS_MAX * (sizeof(struct board_slot) + sizeof(uint32_t)) + 8 +
        (uint64_t)BOARD_ENTRIES_MAX * sizeof(struct board_entry) +
        (uint64_t)BOARD_CELLS_MAX * sizeof(uint32_t);
    if (record->size < shmring__board_size(BOARD_SLOTS_MIN, BOARD_ENTRIES_MIN) ||
        record->size > size_bound || record->shmid < 0)
        return SHMRING_EBOARD;
    struct shmid_ds segment;
    if (shmctl(record->shmid, IPC_STAT, &segment) != 0)
        return errno == EACCES                     ? SHMRING_EACCES
               : errno == EINVAL || errno == EIDRM ? SHMRING_ENOENT
                                                   : SHMRING_EBOARD;
    if (!segment_expected(&segment, record, owner))
        return SHMRING_EBOARD;
    void *base = shmat(record->shmid, NULL, 0);
    if (base == (void *)-1)
        return errno == EACCES                     ? SHMRING_EACCES
               : errno == EINVAL || errno == EIDRM ? SHMRING_ENOENT
                                                   : SHMRING_EBOARD;
    /* Checked again once attached: a segment removed and another created under the
     * same id in between (ids come back only after the whole id space turned) has
     * another nonce. */
    const volatile struct board_header *h = base;
    /* The counts are read once: a group member may rewrite them at any time, and
     * only the copy checked here bounds the indexes from now on. The layout they
     * give must fill exactly the segment that the owner recorded and that IPC_STAT
     * reports (checked equal above and again below): no index can then reach
     * past the segment, whatever the header says later. */
    uint32_t slots = h->slot_count;
    uint32_t entries = h->entry_count;
    int err = 0;
    if (shmctl(record->shmid, IPC_STAT, &segment) != 0 ||
        !segment_expected(&segment, record, owner))
        err = SHMRING_EBOARD;
    else if (h->magic != BOARD_MAGIC || h->layout_version != BOARD_LAYOUT_VERSION ||
             h->header_size != sizeof(struct board_header) || h->nonce != record->nonce ||
             shmring__board_size(slots, entries) != record->size)
        err = SHMRING_EBOARD;
    if (err != 0) {
        shmdt(base);
        memset(out, 0, sizeof(*out));
        return err;
    }
    board_layout(base, record->size, record->shmid, slots, entries, out);
    out->nonce = record->nonce;
    return 0;
}

void shmring__board_detach(struct board *board)
{
    if (board->header != NULL)
        shmdt(board->header);
    memset(board, 0, sizeof(*board));
}

/* The number of slots whose cells a reader sums: the header's high mark (one past
 * the highest slot ever claimed), which a group member could write, clamped. */
static uint32_t slots_in_use(const struct board *board)
{
    uint32_t high = atomic_load_explicit(&board->header->slot_high, memory_order_relaxed);
    return high > board->slot_count ? board->slot_count : high;
}

uint64_t shmring__board_node_count(const struct board *board, uint32_t entry,
                                   uint32_t incarnation)
{
    const _Atomic uint32_t *cells = board->cells + (size_t)entry * board->slot_count;
    uint32_t used = slots_in_use(board);
    uint64_t sum = 0;
    for (uint32_t s = 0; s < used; s++) {
        uint32_t cell = atomic_load_explicit(&cells[s], memory_order_relaxed);
        if (CELL_INCARNATION(cell) == incarnation)
            sum += CELL_COUNT(cell);
    }
    return sum;
}

uint64_t shmring__board_total(const struct board *board)
{
    uint32_t used = slots_in_use(board);
    uint64_t sum = 0;
    for (uint32_t s = 0; s < used; s++) {
        uint32_t total = atomic_load_explicit(&board->totals[s], memory_order_relaxed);
        sum += total > BOARD_COUNT_MAX ? BOARD_COUNT_MAX : total;
    }
    return sum;
}

static uint32_t tag_incarnation(uint64_t tag)
{
    return (uint32_t)(tag >> 32) & 0xffu;
}

/* Whether TAG is a present entry's (not being dropped), and whether a free one's. */
static bool tag_present(uint64_t tag)
{
    return (tag & (ENTRY_PRESENT | ENTRY_DROPPING)) == ENTRY_PRESENT;
}

static bool tag_free(uint64_t tag)
{
    return (tag & (ENTRY_PRESENT | ENTRY_DROPPING)) == 0;
}

/* Claims the free entry E whose tag was *TAG for ID: true, with the new tag in *TAG;
 * false, with the tag found there in *TAG, when someone changed it meanwhile. */
static bool entry_claim(const struct board *board, uint32_t e, uint32_t id, uint64_t *tag)
{
    /* A free entry's cells were set to its incarnation and zero when it was
     * dropped (see drop_entry), so the new node starts at 0. */
    uint64_t claimed = ENTRY_PRESENT | ((uint64_t)tag_incarnation(*tag) << 32) | id;
    if (atomic_compare_exchange_strong_explicit(&board->entries[e].tag, tag, claimed,
                                                memory_order_acq_rel,
                                                memory_order_acquire)) {
        *tag = claimed;
        return true;
    }
    return false;
}

/* A node wanted by shmring__board_entries_find(): its id and its place in IDS. */
struct wanted {
    uint32_t id;
    uint32_t index;
};

static int compare_wanted(const void *a, const void *b)
{
    uint32_t x = ((const struct wanted *)a)->id, y = ((const struct wanted *)b)->id;
    return (x > y) - (x < y);
}

/* The wanted node of id ID in WANTED (COUNT, sorted), or NULL. */
static const struct wanted *wanted_find(const struct wanted *wanted, size_t count,
                                        uint32_t id)
{
    struct wanted probe = {.id = id};
    return bsearch(&probe, wanted, count, sizeof(*wanted), compare_wanted);
}

int shmring__board_entries_find(const struct board *board, const uint32_t *ids,
                                size_t count, uint32_t *entries, uint64_t *tags)
{
    /* One pass over the entries: a node takes its lowest present entry, and the
     * nodes that have none take the lowest free entries, in id order, each by a
     * compare-and-swap. Two workers making maps for the same nodes claim the same
     * entries in the same order: the one that loses an entry finds the winner's
     * node in it and takes it; a node found claimed there by another worker is
     * taken the same way. */
    struct wanted *wanted = malloc((count > 0 ? count : 1) * sizeof(*wanted));
    if (wanted == NULL)
        return SHMRING_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        wanted[i] = (struct wanted){.id = ids[i], .index = (uint32_t)i};
        entries[i] = UINT32_MAX;
    }
    qsort(wanted, count, sizeof(*wanted), compare_wanted);
    for (uint32_t e = 0; e < board->entry_count; e++) {
        uint64_t t = atomic_load_explicit(&board->entries[e].tag, memory_order_acquire);
        const struct wanted *w =
            tag_present(t) ? wanted_find(wanted, count, (uint32_t)t) : NULL;
        if (w != NULL && entries[w->index] == UINT32_MAX) {
            entries[w->index] = e;
            tags[w->index] = t;
        }
    }
    uint32_t next_free = 0;
    for (size_t k = 0; k < count; k++) {
        uint32_t i = wanted[k].index;
        /* Each entry is looked at once in this phase, whoever wins its races. */
        while (entries[i] == UINT32_MAX && next_free < board->entry_count) {
            uint32_t e = next_free++;
            uint64_t t =
                atomic_load_explicit(&board->entries[e].tag, memory_order_acquire);
            if (tag_free(t) && entry_claim(board, e, wanted[k].id, &t)) {
                entries[i] = e;
                tags[i] = t;
                break;
            }
            if (!tag_present(t))
                continue;
            /* Taken: by another worker for this node, or for another of ours that
             * has no entry yet (which takes it); or for a node we do not want. */
            const struct wanted *w = wanted_find(wanted, count, (uint32_t)t);
            if (w != NULL && entries[w->index] == UINT32_MAX) {
                entries[w->index] = e;
                tags[w->index] = t;
            }
        }
    }
    free(wanted);
    return 0;
}

bool shmring__board_count(const struct board *board, uint32_t slot, uint32_t entry,
                          uint64_t tag)
{
    _Atomic uint32_t *cell = &board->cells[(size_t)entry * board->slot_count + slot];
    uint32_t incarnation = tag_incarnation(tag);
    uint32_t old = atomic_load_explicit(cell, memory_order_relaxed);
    for (int attempt = 0;; attempt++) {
        /* Another incarnation: the entry was dropped since the caller found it. A
         * cell that keeps changing under us (only a group member writing it without
         * pause could do that) is given up on rather than spun on. */
        if (CELL_INCARNATION(old) != incarnation || CELL_COUNT(old) == BOARD_COUNT_MAX ||
            attempt == CAS_ATTEMPTS_MAX)
            return false;
        if (atomic_compare_exchange_weak_explicit(
                cell, &old, old + 1, memory_order_relaxed, memory_order_relaxed))
            break;
    }
    BOARD_HOOK(BOARD_STEP_CELL_COUNTED);
    atomic_fetch_add_explicit(&board->totals[slot], 1, memory_order_relaxed);
    BOARD_HOOK(BOARD_STEP_TOTAL_COUNTED);
    return true;
}

void shmring__board_uncount(const struct board *board, uint32_t slot, uint32_t entry,
                            uint64_t tag)
{
    _Atomic uint32_t *cell = &board->cells[(size_t)entry * board->slot_count + slot];
    uint32_t incarnation = tag_incarnation(tag);
    uint32_t old = atomic_load_explicit(cell, memory_order_relaxed);
    for (int attempt = 0; attempt < CAS_ATTEMPTS_MAX &&
                          CELL_INCARNATION(old) == incarnation && CELL_COUNT(old) > 0;
         attempt++) {
        if (atomic_compare_exchange_weak_explicit(
                cell, &old, old - 1, memory_order_relaxed, memory_order_relaxed))
            break;
    }
    BOARD_HOOK(BOARD_STEP_CELL_UNCOUNTED);
    _Atomic uint32_t *total = &board->totals[slot];
    old = atomic_load_explicit(total, memory_order_relaxed);
    for (int attempt = 0; attempt < CAS_ATTEMPTS_MAX && old > 0; attempt++) {
        if (atomic_compare_exchange_weak_explicit(
                total, &old, old - 1, memory_order_relaxed, memory_order_relaxed))
            break;
    }
}

/* Locks (F_RDLCK) or unlocks byte SLOT of the board file, for this descriptor's open
 * file description. */
static int slot_lock(int lock_fd, uint32_t slot, short type)
{
    struct flock lock = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = slot, .l_len = 1};
    return fcntl(lock_fd, F_OFD_SETLK, &lock);
}

/* Whether another open file description locks byte SLOT of the board file. */
static bool slot_locked_by_other(int lock_fd, uint32_t slot)
{
    struct flock lock = {
        .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = slot, .l_len = 1};
    if (fcntl(lock_fd, F_OFD_GETLK, &lock) != 0)
        return true; /* cannot tell: leave the slot alone */
    return lock.l_type != F_UNLCK;
}

/* This process's start time, clock ticks after boot (field 22 of /proc/self/stat),
 * or 0; and its pid namespace's inode, or 0. */
static void self_identity(uint64_t *start_time, uint64_t *pid_namespace)
{
    *start_time = 0;
    *pid_namespace = 0;
    char text[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, text, sizeof(text) - 1);
        close(fd);
        if (n > 0) {
            text[n] = '\0';
            /* The command name may hold spaces and parentheses: count from the
             * last ')'. */
            char *p = strrchr(text, ')');
            for (int field = 2; p != NULL && field < 22; field++)
                p = strchr(p + 1, ' ');
            if (p != NULL)
                *start_time = strtoull(p + 1, NULL, 10);
        }
    }
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) == 0)
        *pid_namespace = (uint64_t)st.st_ino;
}

int shmring__board_slot_claim(const struct board *board, int lock_fd, uint32_t *slot,
                              uint32_t *epoch)
{
    for (uint32_t s = 0; s < board->slot_count; s++) {
        uint32_t state =
            atomic_load_explicit(&board->slots[s].state, memory_order_acquire);
        if ((state & 3u) != SLOT_FREE)
            continue;
        /* The lock first: whoever sees the slot claimed then sees it locked, for as
         * long as this process lives. */
        if (slot_lock(lock_fd, s, F_RDLCK) != 0)
            continue;
        BOARD_HOOK(BOARD_STEP_SLOT_LOCKED);
        /* The high mark first, so that whoever sums counts sees this slot's as soon
         * as it has any. */
        uint32_t high =
            atomic_load_explicit(&board->header->slot_high, memory_order_relaxed);
        for (int attempt = 0; attempt < CAS_ATTEMPTS_MAX && high < s + 1; attempt++) {
            if (atomic_compare_exchange_weak_explicit(&board->header->slot_high, &high,
                                                      s + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                break;
        }
        uint32_t claimed = (state & ~3u) | SLOT_CLAIMED;
        if (!atomic_compare_exchange_strong_explicit(&board->slots[s].state, &state,
                                                     claimed, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            slot_lock(lock_fd, s, F_UNLCK);
            continue;
        }
        BOARD_HOOK(BOARD_STEP_SLOT_CLAIMED);
        struct board_slot *mine = &board->slots[s];
        uint64_t start_time, pid_namespace;
        self_identity(&start_time, &pid_namespace);
        atomic_store_explicit(&mine->pid, (int32_t)getpid(), memory_order_relaxed);
        atomic_store_explicit(&mine->start_time, start_time, memory_order_relaxed);
        atomic_store_explicit(&mine->pid_namespace, pid_namespace, memory_order_relaxed);
        *slot = s;
        *epoch = claimed >> 2;
        return 0;
    }
    return SHMRING_ELIMIT;
}

/* Sets every cell of SLOT to zero (of its entry's incarnation), its total and its
 * statistics, adding these to the header's. */
static void slot_clear(const struct board *board, uint32_t s)
{
    struct board_slot *slot = &board->slots[s];
    for (uint32_t e = 0; e < board->entry_count; e++) {
        _Atomic uint32_t *cell = &board->cells[(size_t)e * board->slot_count + s];
        uint32_t old = atomic_load_explicit(cell, memory_order_relaxed);
        if (CELL_COUNT(old) != 0)
            atomic_store_explicit(cell, old & ~BOARD_COUNT_MAX, memory_order_relaxed);
    }
    atomic_store_explicit(&board->totals[s], 0, memory_order_relaxed);
    struct board_header *h = board->header;
    atomic_fetch_add_explicit(
        &h->retired_acquires,
        atomic_exchange_explicit(&slot->acquires, 0, memory_order_relaxed),
        memory_order_relaxed);
    atomic_fetch_add_explicit(
        &h->retired_first,
        atomic_exchange_explicit(&slot->first, 0, memory_order_relaxed),
        memory_order_relaxed);
    atomic_fetch_add_explicit(
        &h->retired_tried,
        atomic_exchange_explicit(&slot->tried, 0, memory_order_relaxed),
        memory_order_relaxed);
    atomic_store_explicit(&slot->pid, 0, memory_order_relaxed);
    atomic_store_explicit(&slot->start_time, 0, memory_order_relaxed);
    atomic_store_explicit(&slot->pid_namespace, 0, memory_order_relaxed);
}

void shmring__board_slot_release(const struct board *board, int lock_fd, uint32_t slot)
{
    uint32_t state =
        atomic_load_explicit(&board->slots[slot].state, memory_order_acquire);
    if ((state & 3u) == SLOT_CLAIMED &&
        atomic_compare_exchange_strong_explicit(
            &board->slots[slot].state, &state, (state & ~3u) | SLOT_RECLAIMING,
            memory_order_acq_rel, memory_order_acquire)) {
        slot_clear(board, slot);
        atomic_store_explicit(&board->slots[slot].state, ((state >> 2) + 1) << 2,
                              memory_order_release);
    }
    slot_lock(lock_fd, slot, F_UNLCK);
}

/* Reclaims slot S if its holder is gone: true if it did. */
static bool slot_reclaim(const struct board *board, int lock_fd, uint32_t s)
{
    struct board_slot *slot = &board->slots[s];
    uint32_t state = atomic_load_explicit(&slot->state, memory_order_acquire);
    if ((state & 3u) == SLOT_FREE)
        return false;
    /* Our own lock first, so that another sweeper sees this one at work and leaves
     * the slot alone; then nobody else may hold it. A holder that is alive keeps its
     * lock for as long as it lives, and took it before it claimed. */
    if (slot_lock(lock_fd, s, F_RDLCK) != 0)
        return false;
    bool reclaimed = false;
    if (!slot_locked_by_other(lock_fd, s) &&
        atomic_compare_exchange_strong_explicit(
            &slot->state, &state, (state & ~3u) | SLOT_RECLAIMING, memory_order_acq_rel,
            memory_order_acquire)) {
        BOARD_HOOK(BOARD_STEP_RECLAIMING);
        slot_clear(board, s);
        BOARD_HOOK(BOARD_STEP_CLEARED);
        atomic_fetch_add_explicit(&board->header->reclaimed_slots, 1,
                                  memory_order_relaxed);
        /* A new epoch: a claimer compares against the state it read. */
        atomic_store_explicit(&slot->state, ((state >> 2) + 1) << 2,
                              memory_order_release);
        reclaimed = true;
    }
    slot_lock(lock_fd, s, F_UNLCK);
    return reclaimed;
}

static int compare_ids(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Drops entry E whose tag is TAG: its cells become zero of the next incarnation
 * before it is free, so a lease counted on the old incarnation is never released
 * into the count of a node that takes the entry next. */
static void drop_entry(const struct board *board, uint32_t e, uint64_t tag)
{
    uint32_t next = (tag_incarnation(tag) + 1) & 0xffu;
    uint64_t dropping = (uint64_t)next << 32; /* free, of the next incarnation */
    if (!atomic_compare_exchange_strong_explicit(
            &board->entries[e].tag, &tag, tag | ENTRY_DROPPING, memory_order_acq_rel,
            memory_order_acquire))
        return;
    for (uint32_t s = 0; s < board->slot_count; s++)
        atomic_store_explicit(&board->cells[(size_t)e * board->slot_count + s],
                              next << 24, memory_order_relaxed);
    atomic_store_explicit(&board->entries[e].overflow, 0, memory_order_relaxed);
    /* Free for claiming only now that its cells are reset. */
    atomic_store_explicit(&board->entries[e].tag, dropping, memory_order_release);
}

unsigned shmring__board_sweep(const struct board *board, int lock_fd, uint32_t own_slot,
                              const uint32_t *ids, size_t count)
{
    unsigned reclaimed = 0;
    /* Every slot, not only those below the high mark: a group member may have
     * lowered it. */
    for (uint32_t s = 0; s < board->slot_count; s++)
        reclaimed += s != own_slot && slot_reclaim(board, lock_fd, s) ? 1u : 0u;
    for (uint32_t e = 0; ids != NULL && e < board->entry_count; e++) {
        uint64_t tag = atomic_load_explicit(&board->entries[e].tag, memory_order_acquire);
        uint32_t id = (uint32_t)tag;
        if ((tag & ENTRY_PRESENT) != 0 && (tag & ENTRY_DROPPING) == 0 &&
            bsearch(&id, ids, count, sizeof(*ids), compare_ids) == NULL)
            drop_entry(board, e, tag);
    }
    return reclaimed;
}

int shmring__board_lock_open(int dir_fd, uid_t owner, gid_t group, int *fd)
{
    int f = openat(dir_fd, BOARD_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (f < 0)
        return shmring__errno_code();
    struct stat st;
    int err = 0;
    if (fstat(f, &st) != 0)
        err = shmring__errno_code();
    else if (!S_ISREG(st.st_mode) || st.st_uid != owner || st.st_gid != group ||
             (st.st_mode & 07777) != BOARD_FILE_MODE)
        err = SHMRING_EBOARD;
    if (err != 0) {
        close(f);
        return err;
    }
    *fd = f;
    return 0;
}
