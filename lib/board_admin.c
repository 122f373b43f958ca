/*
 * The owner's side of a ring's load board: creating it for the workers' group,
 * setting the balance factor, removing it, and reading it for `ringctl show` and
 * `metrics` (see board_internal.h for the design).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board_internal.h"
#include "control_internal.h"
#include "publish_internal.h"
#include "ring_dir_internal.h"
#include "snapshot_handle_internal.h"
#include "snapshot_internal.h"

static struct control_board *control_record(struct control_block *control)
{
    /* The control object is page-aligned and CONTROL_BOARD_OFFSET a multiple of 8. */
    return (void *)((unsigned char *)control + CONTROL_BOARD_OFFSET);
}

/* Rewrites the record: readers retry while the sequence count is odd. */
static void record_store(struct control_block *control, bool present,
                         const struct board_record *record)
{
    struct control_board *b = control_record(control);
    uint32_t sequence = atomic_load_explicit(&b->sequence, memory_order_relaxed);
    atomic_store_explicit(&b->sequence, sequence + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&b->shmid, record->shmid, memory_order_relaxed);
    atomic_store_explicit(&b->group, (uint32_t)record->group, memory_order_relaxed);
    atomic_store_explicit(&b->nonce, record->nonce, memory_order_relaxed);
    atomic_store_explicit(&b->size, record->size, memory_order_relaxed);
    atomic_store_explicit(&b->balance_percent, record->balance_percent,
                          memory_order_relaxed);
    atomic_store_explicit(&b->present, present ? 1u : 0u, memory_order_relaxed);
    atomic_store_explicit(&b->sequence, sequence + 2, memory_order_release);
}

/* Removes the segment RECORD names if it is this user's board: created by us, of the
 * record's size, group and mode. Its header is not asked: a group member may have
 * overwritten it, and the board must go all the same. (Another segment of ours would
 * have to have taken the id since, which the kernel hands out again only after its
 * sequence numbers for that slot wrapped.) */
static void segment_remove(const struct board_record *record)
{
    struct shmid_ds segment;
    if (record->shmid >= 0 && shmctl(record->shmid, IPC_STAT, &segment) == 0 &&
        segment.shm_perm.cuid == geteuid() && segment.shm_segsz == record->size &&
        segment.shm_perm.gid == record->group &&
        (segment.shm_perm.mode & 0777) == BOARD_MODE)
        shmctl(record->shmid, IPC_RMID, NULL);
}

/* Creates a board segment of SLOTS slots and ENTRIES entries (valid sizes) for GROUP
 * into *RECORD (shmid, nonce, size). */
static int segment_create(gid_t group, uint32_t slots, uint32_t entries,
                          struct board_record *record)
{
    size_t size = shmring__board_size(slots, entries);
    uint64_t nonce = 0;
    while (nonce == 0) {
        if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
            return shmring__errno_code();
    }
    int shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | 0600);
    if (shmid < 0)
        return errno == ENOSPC || errno == ENOMEM ? SHMRING_ENOMEM
                                                  : shmring__errno_code();
    struct board_header *h = shmat(shmid, NULL, 0);
    if (h == (void *)-1) {
        int err = shmring__errno_code();
        shmctl(shmid, IPC_RMID, NULL);
        return err;
    }
    /* A new segment is zero: every slot free, every entry free of incarnation 0,
     * every cell 0 of incarnation 0. */
    h->layout_version = BOARD_LAYOUT_VERSION;
    h->header_size = sizeof(*h);
    h->nonce = nonce;
    h->slot_count = slots;
    h->entry_count = entries;
    atomic_thread_fence(memory_order_release);
    h->magic = BOARD_MAGIC;
    shmdt(h);
    /* The group may write it from now on; nobody but us (and root) may remove it,
     * change its mode or owner, or its size, which no call can change. */
    struct shmid_ds segment;
    int err = shmctl(shmid, IPC_STAT, &segment) == 0 ? 0 : shmring__errno_code();
    if (err == 0) {
        segment.shm_perm.gid = group;
        segment.shm_perm.mode = BOARD_MODE;
        if (shmctl(shmid, IPC_SET, &segment) != 0)
            err = shmring__errno_code();
    }
    if (err != 0) {
        shmctl(shmid, IPC_RMID, NULL);
        return err;
    }
    record->shmid = shmid;
    record->nonce = nonce;
    record->size = size;
    record->group = group;
    return 0;
}

/* Makes the ring directory's board file the group's, mode 0640: created empty, or
 * the one there given to GROUP (workers' locks on it survive that). */
static int lock_file_prepare(int dir_fd, gid_t group)
{
    int fd = openat(dir_fd, BOARD_FILE,
                    O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0)
        return shmring__errno_code();
    struct stat st;
    int err = fstat(fd, &st) == 0 ? 0 : shmring__errno_code();
    if (err == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid()))
        err = SHMRING_EOWNER;
    if (err == 0 && st.st_gid != group && fchown(fd, (uid_t)-1, group) != 0)
        err = shmring__errno_code();
    if (err == 0 && fchmod(fd, BOARD_FILE_MODE) != 0)
        err = shmring__errno_code();
    close(fd);
    return err;
}

/* The number of nodes of the writer's current version (0 before the first). */
static uint32_t ring_node_count(shmring_writer_t *w)
{
    const shmring_snapshot_t *current;
    if (shmring_writer_snapshot(w, &current) != 0)
        return 0;
    shmring_snapshot_info_t info;
    shmring_snapshot_info(current, &info);
    return info.node_count;
}

/* The automatic entry count for NODES nodes on a board of SLOTS slots: room for the
 * ring to double, in a power of two, at least the default and within the limits. */
static uint32_t entries_for(uint32_t nodes, uint32_t slots)
{
    uint64_t entries = 1;
    while (entries < nodes)
        entries <<= 1;
    entries *= 2;
    uint32_t most = BOARD_CELLS_MAX / slots;
    if (most > BOARD_ENTRIES_MAX)
        most = BOARD_ENTRIES_MAX;
    if (entries > most)
        entries = most;
    return entries < BOARD_ENTRIES_MIN ? BOARD_ENTRIES_MIN : (uint32_t)entries;
}

int shmring_writer_set_board(shmring_writer_t *w, gid_t group, uint32_t balance_percent)
{
    return shmring_writer_set_board_sized(w, group, balance_percent, 0, 0);
}

int shmring_writer_set_board_sized(shmring_writer_t *w, gid_t group,
                                   uint32_t balance_percent, uint32_t entries,
                                   uint32_t slots)
{
    if (balance_percent != 0 && balance_percent != BALANCE_KEEP &&
        (balance_percent < BALANCE_PERCENT_MIN || balance_percent > BALANCE_PERCENT_MAX))
        return SHMRING_EBADFACTOR;
    if ((entries != 0 && (entries < BOARD_ENTRIES_MIN || entries > BOARD_ENTRIES_MAX)) ||
        (slots != 0 && (slots < BOARD_SLOTS_MIN || slots > BOARD_SLOTS_MAX)) ||
        (entries != 0 && slots != 0 && shmring__board_size(slots, entries) == 0))
        return SHMRING_ELIMIT;
    int dir_fd;
    struct stat dir_st;
    struct control_block *control = shmring__writer_control(w, &dir_fd, &dir_st);
    struct board_record old, record;
    bool had = shmring__board_record(control, &old) == 0;
    if (!had) {
        /* A factor set before the board was made. */
        struct control_board *kept = control_record(control);
        if (balance_percent == BALANCE_KEEP)
            balance_percent =
                atomic_load_explicit(&kept->balance_percent, memory_order_relaxed);
    } else if (balance_percent == BALANCE_KEEP) {
        balance_percent = old.balance_percent;
    }
    uint32_t nodes = ring_node_count(w);
    if (had && old.group == group) {
        /* The same board: only the factor changes, unless other sizes are asked
         * for, or the automatic entry count when the board has fewer entries than
         * the ring has nodes. */
        struct board probe;
        int err = shmring__board_attach(&old, geteuid(), &probe);
        if (err == 0) {
            uint32_t want_slots = slots != 0 ? slots : probe.slot_count;
            uint32_t want_entries = entries;
            if (want_entries == 0)
                want_entries =
                    probe.entry_count >= nodes &&
                            shmring__board_size(want_slots, probe.entry_count) != 0
                        ? probe.entry_count
                        : entries_for(nodes, want_slots);
            bool same =
                want_slots == probe.slot_count && want_entries == probe.entry_count;
            shmring__board_detach(&probe);
            if (same) {
                int lock_err = lock_file_prepare(dir_fd, group);
                if (lock_err != 0)
                    return lock_err;
                record = old;
                record.balance_percent = balance_percent;
                record_store(control, true, &record);
                return 0;
            }
            slots = want_slots;
            entries = want_entries;
        }
    }
    /* A new board, replacing any other (its counts start at 0). */
    if (slots == 0)
        slots = BOARD_SLOTS_DEFAULT;
    if (entries == 0)
        entries = entries_for(nodes, slots);
    if (shmring__board_size(slots, entries) == 0)
        return SHMRING_ELIMIT;
    int err = lock_file_prepare(dir_fd, group);
    if (err == 0)
        err = segment_create(group, slots, entries, &record);
    if (err != 0)
        return err;
    record.balance_percent = balance_percent;
    record_store(control, true, &record);
    if (had)
        segment_remove(&old);
    return 0;
}

int shmring_writer_set_balance_factor(shmring_writer_t *w, uint32_t balance_percent)
{
    if (balance_percent != 0 &&
        (balance_percent < BALANCE_PERCENT_MIN || balance_percent > BALANCE_PERCENT_MAX))
        return SHMRING_EBADFACTOR;
    int dir_fd;
    struct stat dir_st;
    struct control_block *control = shmring__writer_control(w, &dir_fd, &dir_st);
    struct board_record record;
    bool present = shmring__board_record(control, &record) == 0;
    if (!present)
        record = (struct board_record){.shmid = -1};
    record.balance_percent = balance_percent;
    record_store(control, present, &record);
    return 0;
}

int shmring_writer_remove_board(shmring_writer_t *w)
{
    int dir_fd;
    struct stat dir_st;
    struct control_block *control = shmring__writer_control(w, &dir_fd, &dir_st);
    struct board_record old;
    if (shmring__board_record(control, &old) != 0)
        return 0;
    struct board_record none = {.shmid = -1};
    record_store(control, false, &none);
    segment_remove(&old);
    if (unlinkat(dir_fd, BOARD_FILE, 0) != 0 && errno != ENOENT)
        return shmring__errno_code();
    return 0;
}

void shmring__board_remove_of(const void *control)
{
    struct board_record record;
    if (shmring__board_record(control, &record) == 0)
        segment_remove(&record);
}

int shmring_balance_factor_parse(const char *text, uint32_t *percent)
{
    /* Digits, then at most two decimals: exact in percent, with no floating point
     * rounding between what the user wrote and what the board holds. */
    if (text == NULL || *text == '\0')
        return SHMRING_EBADFACTOR;
    uint64_t whole = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > BALANCE_PERCENT_MAX)
            return SHMRING_EBADFACTOR;
    }
    if (p == text)
        return SHMRING_EBADFACTOR;
    uint64_t hundredths = 0;
    if (*p == '.') {
        p++;
        int digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits == 2)
                return SHMRING_EBADFACTOR;
            hundredths = hundredths * 10 + (uint64_t)(*p - '0');
        }
        if (digits == 0)
            return SHMRING_EBADFACTOR;
        if (digits == 1)
            hundredths *= 10;
    }
    if (*p != '\0')
        return SHMRING_EBADFACTOR;
    uint64_t value = whole * 100 + hundredths;
    if (value != 0 && (value < BALANCE_PERCENT_MIN || value > BALANCE_PERCENT_MAX))
        return SHMRING_EBADFACTOR;
    *percent = (uint32_t)value;
    return 0;
}

/* A node of a version by id, for matching board entries to nodes in one pass. */
struct node_by_id {
    uint32_t id;
    uint32_t index;
};

static int compare_node_by_id(const void *a, const void *b)
{
    uint32_t x = ((const struct node_by_id *)a)->id;
    uint32_t y = ((const struct node_by_id *)b)->id;
    return (x > y) - (x < y);
}

/* Fills OUT's nodes from the validated snapshot BUFFER and the attached BOARD. */
static int board_info_nodes(const void *buffer, const struct board *board,
                            shmring_board_info_t *out)
{
    const struct snapshot_header *h = snapshot_header(buffer);
    const struct snapshot_node *nodes = snapshot_section_at(buffer, &h->nodes);
    out->node_count = h->node_count;
    out->nodes = calloc(h->node_count > 0 ? h->node_count : 1, sizeof(*out->nodes));
    struct node_by_id *by_id =
        malloc((h->node_count > 0 ? h->node_count : 1) * sizeof(*by_id));
    if (out->nodes == NULL || by_id == NULL) {
        free(by_id);
        return SHMRING_ENOMEM;
    }
    uint64_t up_weight = 0;
    for (uint32_t i = 0; i < h->node_count; i++) {
        if (nodes[i].state == SHMRING_STATE_UP)
            up_weight += nodes[i].weight;
        by_id[i] = (struct node_by_id){.id = nodes[i].id, .index = i};
    }
    qsort(by_id, h->node_count, sizeof(*by_id), compare_node_by_id);
    /* Found without claiming (a node that no lease touched has no entry yet), in
     * one pass: a node's count is its lowest present entry's, as a worker finds. */
    bool *found = calloc(h->node_count > 0 ? h->node_count : 1, sizeof(*found));
    if (found == NULL) {
        free(by_id);
        return SHMRING_ENOMEM;
    }
    for (uint32_t e = 0; e < board->entry_count; e++) {
        uint64_t tag = atomic_load_explicit(&board->entries[e].tag, memory_order_acquire);
        if ((tag & (ENTRY_PRESENT | ENTRY_DROPPING)) != ENTRY_PRESENT)
            continue;
        struct node_by_id probe = {.id = (uint32_t)tag};
        const struct node_by_id *match =
            bsearch(&probe, by_id, h->node_count, sizeof(*by_id), compare_node_by_id);
        if (match == NULL || found[match->index])
            continue;
        found[match->index] = true;
        shmring_board_node_t *n = &out->nodes[match->index];
        n->in_flight = shmring__board_node_count(board, e, (uint32_t)(tag >> 32) & 0xffu);
        n->overflow =
            atomic_load_explicit(&board->entries[e].overflow, memory_order_relaxed);
    }
    free(found);
    free(by_id);
    const char *strings = snapshot_section_at(buffer, &h->strings);
    for (uint32_t i = 0; i < h->node_count; i++) {
        shmring_board_node_t *n = &out->nodes[i];
        n->id = nodes[i].id;
        n->weight = nodes[i].weight;
        memcpy(n->name, strings + nodes[i].name_offset, nodes[i].name_length);
        n->up = nodes[i].state == SHMRING_STATE_UP;
        if (n->up && out->balance_percent != 0)
            n->capacity = shmring__board_capacity(out->balance_percent, out->in_flight,
                                                  nodes[i].weight, up_weight);
    }
    return 0;
}

int shmring_ring_board(const char *ring, const shmring_open_options_t *options,
                       shmring_board_info_t *out)
{
    int err = shmring_ring_name_check(ring);
    if (err != 0)
        return err;
    const char *directory = shmring__directory(options ? options->directory : NULL);
    if (directory == NULL)
        return SHMRING_EBADDIR;
    int dir_fd;
    struct stat dir_st, st;
    err = shmring__ring_dir_open_trusted(directory, ring, shmring__trusted_extra(options),
                                         OWNER_ANY, &dir_fd, &dir_st);
    if (err != 0)
        return err;
    const struct control_block *control;
    err = shmring__control_map(dir_fd, &dir_st, &control, &st);
    close(dir_fd);
    if (err != 0)
        return err;
    struct board_record record;
    struct board board = {0};
    if (shmring__board_record(control, &record) != 0)
        err = SHMRING_ENOBOARD;
    else
        err = shmring__board_attach(&record, dir_st.st_uid, &board);
    munmap((void *)control, CONTROL_SIZE);
    if (err == SHMRING_ENOENT)
        err = SHMRING_EBOARD;
    if (err != 0)
        return err;
    shmring_snapshot_t *snapshot = NULL;
    uint64_t generation = 0;
    err = shmring_ring_snapshot(ring, options, &generation, &snapshot);
    shmring_board_info_t info = {0};
    if (err == 0) {
        info.present = true;
        info.generation = generation;
        info.group = record.group;
        info.balance_percent = record.balance_percent;
        info.in_flight = shmring__board_total(&board);
        const struct board_header *h = board.header;
        info.reclaimed = atomic_load_explicit(&h->reclaimed_slots, memory_order_relaxed);
        info.acquires = atomic_load_explicit(&h->retired_acquires, memory_order_relaxed);
        info.first_candidate =
            atomic_load_explicit(&h->retired_first, memory_order_relaxed);
        info.candidates_tried =
            atomic_load_explicit(&h->retired_tried, memory_order_relaxed);
        info.slot_count = board.slot_count;
        info.entry_count = board.entry_count;
        for (uint32_t s = 0; s < board.slot_count; s++) {
            const struct board_slot *slot = &board.slots[s];
            if ((atomic_load_explicit(&slot->state, memory_order_relaxed) & 3u) ==
                SLOT_CLAIMED)
                info.workers++;
            info.acquires += atomic_load_explicit(&slot->acquires, memory_order_relaxed);
            info.first_candidate +=
                atomic_load_explicit(&slot->first, memory_order_relaxed);
            info.candidates_tried +=
                atomic_load_explicit(&slot->tried, memory_order_relaxed);
        }
        if (snapshot != NULL)
            err = board_info_nodes(shmring_snapshot_data(snapshot, NULL), &board, &info);
    }
    shmring_snapshot_free(snapshot);
    shmring__board_detach(&board);
    if (err != 0) {
        free(info.nodes);
        return err;
    }
    *out = info;
    return 0;
}

void shmring_board_info_free(shmring_board_info_t *info)
{
    if (info == NULL)
        return;
    free(info->nodes);
    info->nodes = NULL;
    info->node_count = 0;
}
