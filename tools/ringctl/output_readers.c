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

/* A uid as JSON: null when the census could not read it. */
static json_t *json_uid(uint32_t uid)
{
    return uid == (uint32_t)-1 ? json_null() : ringctl_json_uint(uid);
}

/* Processes listed apart with KIND. */
static size_t uncounted_of(const shmring_ring_readers_t *census, uint32_t kind)
{
    size_t count = 0;
    for (size_t i = 0; i < census->uncounted_count; i++)
        count += (i == 0 || census->uncounted[i - 1].pid != census->uncounted[i].pid) &&
                 census->uncounted[i].kind == kind;
    return count;
}

/* A listed process's object, with the keys that come first in every list: its pid
 * and its command name. */
static json_t *json_process(const shmring_ring_reader_t *reader)
{
    json_t *entry = json_object();
    json_object_set_new(entry, "pid", json_integer(reader->pid));
    /* A command name is whatever the process chose: not necessarily UTF-8. */
    json_t *command = json_string(reader->command);
    json_object_set_new(entry, "command", command != NULL ? command : json_null());
    return entry;
}

/* Adds to ENTRY what READER keeps in use: its mapped bytes and its descriptors. */
static void json_set_use(json_t *entry, const shmring_ring_reader_t *reader)
{
    json_object_set_new(entry, "mapped_bytes", ringctl_json_uint(reader->mapped_bytes));
    json_object_set_new(entry, "descriptors", ringctl_json_uint(reader->descriptors));
}

/* Adds to OBJECT what the superseded versions hold, as readers' JSON and show's
 * summary both give it: their count and their bytes. */
static void json_set_superseded(json_t *object, const shmring_ring_readers_t *census)
{
    json_object_set_new(object, "superseded_versions",
                        ringctl_json_uint(census->superseded_versions));
    json_object_set_new(object, "superseded_bytes",
                        ringctl_json_uint(census->superseded_bytes));
}

/* A release as "0.3.0", or null when unknown. */
static json_t *json_release(uint32_t release)
{
    if (release == 0)
        return json_null();
    return json_sprintf("%" PRIu32 ".%" PRIu32 ".%" PRIu32, release >> 16,
                        (release >> 8) & 0xff, release & 0xff);
}

static json_t *json_census(const char *ring, const shmring_ring_readers_t *census)
{
    json_t *object = json_object();
    json_object_set_new(object, "ring", json_string(ring));
    json_object_set_new(object, "generation", ringctl_json_uint(census->generation));
    json_t *readers = json_array();
    for (size_t i = 0; i < census->reader_count; i++) {
        const shmring_ring_reader_t *reader = &census->readers[i];
        json_t *entry = json_process(reader);
        json_object_set_new(entry, "generation", ringctl_json_uint(reader->generation));
        json_object_set_new(entry, "current", json_boolean(reader->current));
        json_set_use(entry, reader);
        json_object_set_new(entry, "uid", json_uid(reader->uid));
        json_object_set_new(entry, "reader_release",
                            json_release(reader->reader_release));
        json_object_set_new(entry, "stuck_format",
                            reader->stuck_format ? ringctl_json_uint(reader->stuck_format)
                                                 : json_null());
        json_array_append_new(readers, entry);
    }
    json_object_set_new(object, "readers", readers);
    json_t *uncounted = json_array();
    for (size_t i = 0; i < census->uncounted_count; i++) {
        const shmring_ring_reader_t *reader = &census->uncounted[i];
        bool too_large = reader->kind == SHMRING_READER_TOO_LARGE;
        json_t *entry = json_process(reader);
        json_object_set_new(entry, "uid", json_uid(reader->uid));
        json_object_set_new(entry, "reason",
                            json_string(too_large ? "too_large" : "unverified"));
        json_object_set_new(entry, "generation",
                            too_large ? json_null()
                                      : ringctl_json_uint(reader->generation));
        json_set_use(entry, reader);
        json_array_append_new(uncounted, entry);
    }
    json_object_set_new(object, "uncounted", uncounted);
    json_t *versions = json_array();
    for (size_t i = 0; i < census->version_count; i++) {
        const shmring_ring_version_use_t *version = &census->versions[i];
        json_t *entry = json_object();
        json_object_set_new(entry, "generation", ringctl_json_uint(version->generation));
        json_object_set_new(entry, "current", json_boolean(version->current));
        json_object_set_new(entry, "processes", ringctl_json_uint(version->processes));
        json_object_set_new(entry, "bytes", ringctl_json_uint(version->bytes));
        json_array_append_new(versions, entry);
    }
    json_object_set_new(object, "versions", versions);
    json_set_superseded(object, census);
    json_object_set_new(object, "processes_inspected",
                        ringctl_json_uint(census->processes_inspected));
    json_object_set_new(object, "processes_hidden",
                        ringctl_json_uint(census->processes_hidden));
    json_object_set_new(object, "stuck_processes",
                        ringctl_json_uint(census->stuck_processes));
    return object;
}

/* A uid as text ("?" when the census could not read it). */
struct uid_text {
    char text[16];
};

static struct uid_text uid_text(uint32_t uid)
{
    struct uid_text out = {"?"};
    if (uid != (uint32_t)-1)
        snprintf(out.text, sizeof(out.text), "%" PRIu32, uid);
    return out;
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
        printf("\n%-8s  %-16s  %-6s  %-10s  %-10s  %-10s  %s\n", "PID", "COMMAND", "UID",
               "GENERATION", "VERSION", "MAPPED", "DESCRIPTORS");
        for (size_t i = 0; i < census->reader_count; i++) {
            const shmring_ring_reader_t *reader = &census->readers[i];
            char mapped[32];
            format_bytes(reader->mapped_bytes, mapped, sizeof(mapped));
            printf("%-8" PRId64 "  ", reader->pid);
            print_command(reader->command);
            printf("  %-6s  %-10" PRIu64 "  %-10s  %-10s  %" PRIu32 "\n",
                   uid_text(reader->uid).text, reader->generation,
                   reader->current ? "current" : "superseded", mapped,
                   reader->descriptors);
        }
    }
    if (census->stuck_processes > 0)
        printf("\nStuck on an older release (upgrade it, then restart them):\n");
    for (size_t i = 0; i < census->reader_count; i++) {
        const shmring_ring_reader_t *reader = &census->readers[i];
        if (reader->stuck_format == 0)
            continue;
        printf("%-8" PRId64 "  ", reader->pid);
        print_command(reader->command);
        printf("  stuck on generation %" PRIu64 ": format %" PRIu32
               " is newer than this reader (libshmring %" PRIu32 ".%" PRIu32 ".%" PRIu32
               ")\n",
               reader->generation, reader->stuck_format, reader->reader_release >> 16,
               (reader->reader_release >> 8) & 0xff, reader->reader_release & 0xff);
    }
    if (census->uncounted_count > 0)
        printf("\nNot counted (not provably this ring's, or too large to inspect):\n");
    for (size_t i = 0; i < census->uncounted_count; i++) {
        const shmring_ring_reader_t *reader = &census->uncounted[i];
        printf("%-8" PRId64 "  ", reader->pid);
        print_command(reader->command);
        printf("  %-6s  ", uid_text(reader->uid).text);
        if (reader->kind == SHMRING_READER_TOO_LARGE) {
            printf("too large to inspect (more than %d mappings or descriptors)\n",
                   SHMRING_READERS_PROCESS_MAX);
            continue;
        }
        char mapped[32];
        format_bytes(reader->mapped_bytes, mapped, sizeof(mapped));
        printf("unverified: generation %" PRIu64 ", %s mapped, %" PRIu32 " descriptors\n",
               reader->generation, mapped, reader->descriptors);
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
    size_t unverified = uncounted_of(census, SHMRING_READER_UNVERIFIED);
    size_t too_large = uncounted_of(census, SHMRING_READER_TOO_LARGE);
    if (unverified > 0)
        printf("; %zu unverified %s not counted", unverified, processes_word(unverified));
    if (too_large > 0)
        printf("; %zu %s too large to inspect", too_large, processes_word(too_large));
    if (census->stuck_processes > 0)
        printf("; %" PRIu64 " stuck on an older release", census->stuck_processes);
    printf("\n");
}

json_t *output_readers_summary(const shmring_ring_readers_t *census, int err)
{
    if (err != 0)
        return json_null();
    json_t *object = json_object();
    json_object_set_new(object, "processes", ringctl_json_uint(processes(census)));
    json_object_set_new(object, "superseded_processes",
                        ringctl_json_uint(superseded_processes(census)));
    json_set_superseded(object, census);
    json_object_set_new(object, "processes_hidden",
                        ringctl_json_uint(census->processes_hidden));
    json_object_set_new(
        object, "processes_unverified",
        ringctl_json_uint(uncounted_of(census, SHMRING_READER_UNVERIFIED)));
    json_object_set_new(
        object, "processes_too_large",
        ringctl_json_uint(uncounted_of(census, SHMRING_READER_TOO_LARGE)));
    json_object_set_new(object, "processes_stuck",
                        ringctl_json_uint(census->stuck_processes));
    return object;
}

/* How many holders the text of output_space_holders() names. */
#define HOLDERS_NAMED 8

/* Writes the text of output_space_holders() for CENSUS into OUT. */
static void describe_holders(const shmring_ring_readers_t *census, char *out, size_t size)
{
    char held[32];
    format_bytes(census->superseded_bytes, held, sizeof(held));
    int len =
        snprintf(out, size, "%zu superseded version%s (%s) %s held by",
                 census->superseded_versions, census->superseded_versions == 1 ? "" : "s",
                 held, census->superseded_versions == 1 ? "is" : "are");
    size_t named = 0, holders = superseded_processes(census);
    int64_t last_named = -1;
    for (size_t i = 0; i < census->reader_count && len > 0 && (size_t)len < size; i++) {
        const shmring_ring_reader_t *reader = &census->readers[i];
        /* The census lists a process's versions together: each is named once. */
        if (reader->current || reader->pid == last_named || named == HOLDERS_NAMED)
            continue;
        last_named = reader->pid;
        len += snprintf(out + len, size - (size_t)len, "%s pid %" PRId64 " (uid %s)",
                        named == 0 ? "" : ",", reader->pid, uid_text(reader->uid).text);
        named++;
    }
    if (holders > named && len > 0 && (size_t)len < size)
        snprintf(out + len, size - (size_t)len, " and %zu more", holders - named);
}

bool output_space_holders(const char *ring, const shmring_open_options_t *options,
                          char *out, size_t size)
{
    shmring_ring_readers_t census;
    out[0] = '\0';
    if (shmring_ring_readers(ring, options, &census) != 0)
        return false;
    bool held = census.superseded_versions > 0;
    if (held)
        describe_holders(&census, out, size);
    shmring_ring_readers_free(&census);
    return held;
}
