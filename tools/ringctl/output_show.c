/*
 * The output of `ringctl show` (a ring's status, parameters and nodes, with each
 * node's share) and of `ringctl list` (one line, or object, per ring).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ringctl.h"

static void format_time(int64_t seconds, char *out, size_t size)
{
    time_t t = (time_t)seconds;
    struct tm tm;
    if (seconds == 0 || gmtime_r(&t, &tm) == NULL ||
        strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, size, "never");
}

static int digits_of(uint64_t value)
{
    int digits = 1;
    while (value >= 10) {
        value /= 10;
        digits++;
    }
    return digits;
}

static int widest(int width, int length)
{
    return length > width ? length : width;
}

/* The balance factor of PERCENT as it is written ("1.25", "2", "0"). */
static void format_factor(uint32_t percent, char *out, size_t size)
{
    if (percent % 100 == 0)
        snprintf(out, size, "%" PRIu32, percent / 100);
    else if (percent % 10 == 0)
        snprintf(out, size, "%" PRIu32 ".%" PRIu32, percent / 100, percent / 10 % 10);
    else
        snprintf(out, size, "%" PRIu32 ".%02" PRIu32, percent / 100, percent % 100);
}

static void show_table(const struct show_report *show)
{
    size_t count = shmring_nodeset_count(show->set);
    int id_width = 2, name_width = 4, address_width = 7;
    shmring_node_info_t node;
    for (size_t i = 0; i < count; i++) {
        if (shmring_nodeset_get(show->set, i, &node) != 0)
            continue;
        id_width = widest(id_width, digits_of(node.id));
        name_width = widest(name_width, (int)strlen(node.name));
        address_width = widest(address_width, (int)strlen(node.address));
    }
    const shmring_board_info_t *board = show->board;
    printf("%-*s  %-*s  %-*s  WEIGHT  STATE  SHARE%s\n", id_width, "ID", name_width,
           "NAME", address_width, "ADDRESS",
           board != NULL ? "    IN-FLIGHT  CAPACITY" : "");
    for (size_t i = 0; i < count; i++) {
        if (shmring_nodeset_get(show->set, i, &node) != 0)
            continue;
        char share[32];
        snprintf(share, sizeof(share), "%.2f%%", show->shares[i] * 100.0);
        if (board == NULL || i >= board->node_count) {
            printf("%-*" PRIu32 "  %-*s  %-*s  %-6" PRIu32 "  %-5s  %s\n", id_width,
                   node.id, name_width, node.name, address_width, node.address,
                   node.weight, ringctl_state_name(node.state), share);
            continue;
        }
        char capacity[32] = "-";
        if (board->nodes[i].capacity != 0)
            snprintf(capacity, sizeof(capacity), "%" PRIu64, board->nodes[i].capacity);
        printf("%-*" PRIu32 "  %-*s  %-*s  %-6" PRIu32 "  %-5s  %-7s  %-9" PRIu64
               "  %s\n",
               id_width, node.id, name_width, node.name, address_width, node.address,
               node.weight, ringctl_state_name(node.state), share,
               board->nodes[i].in_flight, capacity);
    }
}

static void show_text(const struct ringctl *ctl, const struct show_report *show)
{
    const shmring_ring_status_t *status = show->status;
    const shmring_snapshot_info_t *info = show->info;
    char when[64];
    format_time(status->published_at, when, sizeof(when));
    printf("ring:          %s\n", ctl->ring);
    printf("generation:    %" PRIu64 "\n", status->generation);
    if (show->published) {
        printf("algorithm:     %s\n", shmring_algorithm_name(info->params.algorithm));
        printf("hash:          %s\n", shmring_hash_name(info->params.hash));
        if (info->params.algorithm == SHMRING_ALGORITHM_RING ||
            info->params.algorithm == SHMRING_ALGORITHM_GROUPCACHE)
            printf("vnodes:        %" PRIu32 "\n", info->params.vnodes);
        else if (info->params.algorithm == SHMRING_ALGORITHM_MAGLEV ||
                 info->params.algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV)
            printf("table size:    %" PRIu32 "\n", info->point_count);
        else if (info->params.algorithm == SHMRING_ALGORITHM_ENVOY_RING)
            printf("ring size:     %" PRIu32 " to %" PRIu32 "\n",
                   info->params.min_ring_size ? info->params.min_ring_size : 1024,
                   info->params.max_ring_size ? info->params.max_ring_size : 8388608);
        printf("points:        %" PRIu32 "\n", info->point_count);
        printf("fingerprint:   %016" PRIx64 "\n", info->fingerprint);
    }
    printf("publishes:     %" PRIu64 "\n", status->publish_count);
    if (status->published_at != 0)
        printf("last publish:  %s by pid %" PRId64 "\n", when, status->publisher_pid);
    else
        printf("last publish:  never\n");
    printf("owner:         uid %lu\n", (unsigned long)status->owner);
    printf("mode:          %04o\n", (unsigned)status->mode);
    output_readers_line(show->readers, show->readers_error);
    if (show->board != NULL) {
        char factor[32];
        format_factor(show->board->balance_percent, factor, sizeof(factor));
        printf("load board:    group %lu, balance factor %s, %" PRIu64
               " in flight, %" PRIu32 " workers\n",
               (unsigned long)show->board->group, factor, show->board->in_flight,
               show->board->workers);
    }
    if (!show->published) {
        printf("nodes:         0 (nothing published yet)\n");
        return;
    }
    printf("nodes:         %" PRIu32 " (%" PRIu32 " up)\n", info->node_count,
           info->up_count);
    if (info->node_count > 0) {
        printf("\n");
        show_table(show);
    }
}

/* VALUE, or null when nothing is published. */
static json_t *if_published(const struct show_report *show, json_t *value)
{
    if (show->published)
        return value;
    json_decref(value);
    return json_null();
}

static json_t *show_json(const struct ringctl *ctl, const struct show_report *show)
{
    const shmring_ring_status_t *status = show->status;
    const shmring_snapshot_info_t *info = show->info;
    char when[64], mode[16], fingerprint[17];
    json_t *object = json_object();
    json_object_set_new(object, "ring", ringctl_json_str(ctl->ring));
    json_object_set_new(object, "generation", ringctl_json_uint(status->generation));
    json_object_set_new(
        object, "algorithm",
        if_published(show, json_string(shmring_algorithm_name(info->params.algorithm))));
    json_object_set_new(
        object, "hash",
        if_published(show, json_string(shmring_hash_name(info->params.hash))));
    json_object_set_new(object, "vnodes",
                        if_published(show, ringctl_json_uint(info->params.vnodes)));
    json_object_set_new(object, "table_size",
                        if_published(show, ringctl_json_uint(info->params.table_size)));
    /* envoy-ring's bounds as configured (0: Envoy's default), like table_size. */
    json_object_set_new(
        object, "min_ring_size",
        if_published(show, ringctl_json_uint(info->params.min_ring_size)));
    json_object_set_new(
        object, "max_ring_size",
        if_published(show, ringctl_json_uint(info->params.max_ring_size)));
    json_object_set_new(object, "points",
                        if_published(show, ringctl_json_uint(info->point_count)));
    snprintf(fingerprint, sizeof(fingerprint), "%016" PRIx64, info->fingerprint);
    json_object_set_new(object, "fingerprint",
                        if_published(show, json_string(fingerprint)));
    json_object_set_new(object, "size",
                        if_published(show, ringctl_json_uint(info->size)));
    json_object_set_new(object, "up",
                        if_published(show, ringctl_json_uint(info->up_count)));
    json_object_set_new(object, "publish_count",
                        ringctl_json_uint(status->publish_count));
    format_time(status->published_at, when, sizeof(when));
    json_object_set_new(object, "publisher_pid",
                        status->published_at != 0 ? json_integer(status->publisher_pid)
                                                  : json_null());
    json_object_set_new(object, "published_at",
                        status->published_at != 0 ? json_string(when) : json_null());
    json_object_set_new(object, "owner", ringctl_json_uint(status->owner));
    snprintf(mode, sizeof(mode), "%04o", (unsigned)status->mode);
    json_object_set_new(object, "mode", json_string(mode));
    json_t *nodes = json_array();
    for (size_t i = 0; show->set != NULL && i < shmring_nodeset_count(show->set); i++) {
        shmring_node_info_t node;
        if (shmring_nodeset_get(show->set, i, &node) != 0)
            continue;
        json_t *entry = ringctl_json_node_info(&node);
        json_object_set_new(entry, "share", json_real(show->shares[i]));
        if (show->board != NULL && i < show->board->node_count) {
            const shmring_board_node_t *n = &show->board->nodes[i];
            json_object_set_new(entry, "in_flight", ringctl_json_uint(n->in_flight));
            json_object_set_new(entry, "capacity", ringctl_json_uint(n->capacity));
            json_object_set_new(entry, "overflow", ringctl_json_uint(n->overflow));
        }
        json_array_append_new(nodes, entry);
    }
    json_object_set_new(object, "nodes", nodes);
    json_object_set_new(object, "readers",
                        output_readers_summary(show->readers, show->readers_error));
    json_t *board = json_null();
    if (show->board != NULL) {
        const shmring_board_info_t *b = show->board;
        board = json_object();
        json_object_set_new(board, "group", ringctl_json_uint(b->group));
        json_object_set_new(board, "balance_factor",
                            json_real((double)b->balance_percent / 100.0));
        json_object_set_new(board, "in_flight", ringctl_json_uint(b->in_flight));
        json_object_set_new(board, "workers", ringctl_json_uint(b->workers));
        json_object_set_new(board, "acquires", ringctl_json_uint(b->acquires));
        json_object_set_new(board, "first_candidate",
                            ringctl_json_uint(b->first_candidate));
        json_object_set_new(board, "candidates_tried",
                            ringctl_json_uint(b->candidates_tried));
        json_object_set_new(board, "reclaimed", ringctl_json_uint(b->reclaimed));
        json_object_set_new(board, "entries", ringctl_json_uint(b->entry_count));
        json_object_set_new(board, "slots", ringctl_json_uint(b->slot_count));
    }
    json_object_set_new(object, "board", board);
    return object;
}

int output_show(const struct ringctl *ctl, const struct show_report *show)
{
    if (ctl->json)
        return output_json(show_json(ctl, show), true);
    show_text(ctl, show);
    return EXIT_OK;
}

static json_t *list_entry_json(const struct ring_summary *entry)
{
    json_t *object = json_object();
    json_object_set_new(object, "ring", ringctl_json_str(entry->ring));
    json_object_set_new(object, "generation",
                        ringctl_json_uint(entry->status.generation));
    json_object_set_new(object, "nodes", ringctl_json_uint(entry->info.node_count));
    json_object_set_new(object, "up", ringctl_json_uint(entry->info.up_count));
    json_object_set_new(object, "algorithm",
                        entry->published ? json_string(shmring_algorithm_name(
                                               entry->info.params.algorithm))
                                         : json_null());
    return object;
}

void output_list_start(const struct ringctl *ctl, struct list_output *output)
{
    output->array = ctl->json ? json_array() : NULL;
}

void output_list_ring(struct list_output *output, const struct ring_summary *entry)
{
    if (output->array != NULL) {
        json_array_append_new(output->array, list_entry_json(entry));
        return;
    }
    printf("%s\t%" PRIu64 "\t%" PRIu32 "\t%s\n", entry->ring, entry->status.generation,
           entry->info.node_count,
           entry->published ? shmring_algorithm_name(entry->info.params.algorithm) : "-");
}

int output_list_end(struct list_output *output)
{
    return output->array != NULL ? output_json(output->array, true) : EXIT_OK;
}
