/*
 * The output of `ringctl readers` and the readers line of `show`: the library's
 * census of the processes that map a ring's versions (shmring_ring_readers()), as
 * text or JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ringctl.h"

/* Writes BYTES in binary units ("33.0 MiB", "512 B") into OUT. */
static void format_bytes(uint64_t bytes, char *out, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
        value /= 1024.0;
        unit++;
    }
    if (unit == 0)
        snprintf(out, size, "%" PRIu64 " B", bytes);
    else
        snprintf(out, size, "%.1f %s", value, units[unit]);
}

/* "process" or "processes", as COUNT asks. */
static const char *processes_word(size_t count)
{
    return count == 1 ? "process" : "processes";
}

/* Processes that map a superseded version, each counted once (the census lists a
 * process's versions one after the other). */
static size_t superseded_processes(const shmring_ring_readers_t *census)
{
    size_t count = 0;
    for (size_t i = 0; i < census->reader_count;) {
        int64_t pid = census->readers[i].pid;
        bool superseded = false;
        for (; i < census->reader_count && census->readers[i].pid == pid; i++)
            superseded = superseded || !census->readers[i].current;
        count += superseded;
    }
    return count;
}

/* Distinct processes in the census. */
static size_t processes(const shmring_ring_readers_t *census)
{
    size_t count = 0;
    for (size_t i = 0; i < census->reader_count; i++)
        count += i == 0 || census->readers[i - 1].pid != census->readers[i].pid;
    return count;
}

static json_t *json_census(const char *ring, const shmring_ring_readers_t *census)
{
    json_t *object = json_object();
    json_object_set_new(object, "ring", json_string(ring));
    json_object_set_new(object, "generation", json_uint(census->generation));
    json_t *readers = json_array();
    for (size_t i = 0; i < census->reader_count; i++) {
        const shmring_ring_reader_t *reader = &census->readers[i];
        json_t *entry = json_object();
        json_object_set_new(entry, "pid", json_integer(reader->pid));
        /* A command name is whatever the process chose: not necessarily UTF-8. */
        json_t *command = json_string(reader->command);
        json_object_set_new(entry, "command", command != NULL ? command : json_null());
        json_object_set_new(entry, "generation", json_uint(reader->generation));
        json_object_set_new(entry, "current", json_boolean(reader->current));
        json_object_set_new(entry, "mapped_bytes", json_uint(reader->mapped_bytes));
        json_array_append_new(readers, entry);
    }
    json_object_set_new(object, "readers", readers);
    json_t *versions = json_array();
    for (size_t i = 0; i < census->version_count; i++) {
        const shmring_ring_version_use_t *version = &census->versions[i];
        json_t *entry = json_object();
        json_object_set_new(entry, "generation", json_uint(version->generation));
        json_object_set_new(entry, "current", json_boolean(version->current));
        json_object_set_new(entry, "processes", json_uint(version->processes));
        json_object_set_new(entry, "bytes", json_uint(version->bytes));
        json_array_append_new(versions, entry);
    }
    json_object_set_new(object, "versions", versions);
    json_object_set_new(object, "superseded_versions",
                        json_uint(census->superseded_versions));
    json_object_set_new(object, "superseded_bytes", json_uint(census->superseded_bytes));
    json_object_set_new(object, "processes_inspected",
                        json_uint(census->processes_inspected));
    json_object_set_new(object, "processes_hidden", json_uint(census->processes_hidden));
    return object;
}

/* Prints a command name with bytes a terminal would act on shown as '?'. */
static void print_command(const char *command)
{
    char safe[sizeof(((shmring_ring_reader_t *)0)->command)];
    size_t i = 0;
    for (; command[i] != '\0' && i + 1 < sizeof(safe); i++) {
        unsigned char c = (unsigned char)command[i];
        safe[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    safe[i] = '\0';
    printf("%-16s", safe);
}

static void print_census(const char *ring, const shmring_ring_readers_t *census)
{
    char held[32];
    format_bytes(census->superseded_bytes, held, sizeof(held));
    size_t count = processes(census);
    printf("ring '%s', generation %" PRIu64 ": %zu %s map%s it; %zu superseded "
           "version%s held (%s)\n",
           ring, census->generation, count, processes_word(count), count == 1 ? "s" : "",
           census->superseded_versions, census->superseded_versions == 1 ? "" : "s",
           held);
    if (census->reader_count > 0) {
        printf("\n%-8s  %-16s  %-10s  %-10s  %s\n", "PID", "COMMAND", "GENERATION",
               "VERSION", "MAPPED");
        for (size_t i = 0; i < census->reader_count; i++) {
            const shmring_ring_reader_t *reader = &census->readers[i];
            char mapped[32];
            format_bytes(reader->mapped_bytes, mapped, sizeof(mapped));
            printf("%-8" PRId64 "  ", reader->pid);
            print_command(reader->command);
            printf("  %-10" PRIu64 "  %-10s  %s\n", reader->generation,
                   reader->current ? "current" : "superseded", mapped);
        }
    }
    if (census->processes_hidden > 0)
        printf("\n%zu %s could not be inspected: whether %s the ring is unknown (run "
               "as root, or as the processes' user, to know)\n",
               census->processes_hidden, processes_word(census->processes_hidden),
               census->processes_hidden == 1 ? "it maps" : "they map");
}

int output_readers(const struct ringctl *ctl, const shmring_ring_readers_t *census)
{
    if (ctl->json)
        return output_json(json_census(ctl->ring, census), true);
    print_census(ctl->ring, census);
    return EXIT_OK;
}

void output_readers_line(const shmring_ring_readers_t *census, int err)
{
    if (err != 0) {
        printf("readers:       unknown (%s)\n", shmring_strerror(err));
        return;
    }
    char held[32];
    format_bytes(census->superseded_bytes, held, sizeof(held));
    size_t count = processes(census);
    printf("readers:       %zu %s, %zu on superseded versions (%zu held, %s)", count,
           processes_word(count), superseded_processes(census),
           census->superseded_versions, held);
    if (census->processes_hidden > 0)
        printf("; %zu %s not inspectable", census->processes_hidden,
               processes_word(census->processes_hidden));
    printf("\n");
}

json_t *output_readers_summary(const shmring_ring_readers_t *census, int err)
{
    if (err != 0)
        return json_null();
    json_t *object = json_object();
    json_object_set_new(object, "processes", json_uint(processes(census)));
    json_object_set_new(object, "superseded_processes",
                        json_uint(superseded_processes(census)));
    json_object_set_new(object, "superseded_versions",
                        json_uint(census->superseded_versions));
    json_object_set_new(object, "superseded_bytes", json_uint(census->superseded_bytes));
    json_object_set_new(object, "processes_hidden", json_uint(census->processes_hidden));
    return object;
}
