/*
 * ringctl lookup: which node owns a key. With --stdin it is a co-process: one
 * long-lived reader handle answers each key as it arrives, follows every new
 * generation (and a ring destroyed and re-created by an owner it trusts), answers a
 * key no node can take with an error record rather than exiting, and ends only at
 * the end of its input or when it cannot write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringctl.h"

/* Answers each key of the command line; the first that no node can take fails the
 * command. */
static int lookup_arguments(const struct ringctl *ctl, shmring_t *reader)
{
    shmring_node_t nodes[SHMRING_LOOKUP_N_MAX];
    for (size_t i = 0; i < ctl->arg_count; i++) {
        const char *key = ctl->args[i];
        int found = shmring_lookup_n(reader, key, strlen(key), nodes, ctl->count);
        if (found < 0)
            return ringctl_fail(EXIT_FAILED, "cannot look up keys in ring '%s': %s",
                                ctl->ring, shmring_strerror(found));
        int status = output_lookup(ctl, key, strlen(key), nodes, found);
        if (status != EXIT_OK)
            return status;
    }
    return EXIT_OK;
}

/* Answers one key of the stream, flushed. */
static int answer(const struct ringctl *ctl, shmring_t *reader, const char *key,
                  size_t len, shmring_node_t *nodes)
{
    int found = shmring_lookup_n(reader, key, len, nodes, ctl->count);
    int status = output_lookup(ctl, key, len, nodes, found);
    return status == EXIT_OK ? output_flush() : status;
}

/* Keys of standard input and what was read after them: room for the longest key
 * and its delimiter, whatever the input, so that a stream costs the same memory
 * whether its lines are short or endless. */
struct key_input {
    char buffer[LOOKUP_KEY_MAX + 1];
    size_t start, end;
    /* Inside a key longer than LOOKUP_KEY_MAX, already answered: its rest is read
     * and dropped up to its delimiter. */
    bool skipping;
};

/* Answers each line (or, with -z, each NUL-terminated key) of standard input as it
 * arrives, each answer flushed for the reader on the other end of a pipe. Standard
 * input is read with read(), in bounded chunks: nothing else in ringctl reads it. */
static int lookup_stream(const struct ringctl *ctl, shmring_t *reader)
{
    const char delimiter = ctl->nul ? '\0' : '\n';
    shmring_node_t nodes[SHMRING_LOOKUP_N_MAX];
    struct key_input *in = calloc(1, sizeof(*in));
    if (in == NULL)
        return ringctl_fail(EXIT_FAILED, "cannot read standard input: %s",
                            strerror(ENOMEM));
    int status = EXIT_OK;
    bool at_end = false;
    while (status == EXIT_OK) {
        const char *key = in->buffer + in->start;
        size_t available = in->end - in->start;
        const char *end = memchr(key, delimiter, available);
        if (end != NULL) {
            /* The buffer holds LOOKUP_KEY_MAX + 1 bytes, so a key whose delimiter is
             * in it is at most LOOKUP_KEY_MAX long. */
            size_t len = (size_t)(end - key);
            if (in->skipping)
                in->skipping = false; /* the end of an overlong key, answered */
            else
                status = answer(ctl, reader, key, len, nodes);
            in->start += len + 1;
            continue;
        }
        if (!in->skipping && available > LOOKUP_KEY_MAX) {
            /* Answered at once, from its first bytes; the rest is read and dropped. */
            status = output_lookup_too_long(ctl, key, LOOKUP_KEY_QUOTED);
            if (status == EXIT_OK)
                status = output_flush();
            in->skipping = true;
        }
        if (in->skipping)
            in->start = in->end;
        if (at_end) {
            /* A last key without its delimiter is a key too. */
            if (!in->skipping && available > 0 && status == EXIT_OK)
                status = answer(ctl, reader, key, available, nodes);
            break;
        }
        if (status != EXIT_OK)
            break;
        /* No whole key left: keep the partial one at the front and read more. */
        memmove(in->buffer, in->buffer + in->start, in->end - in->start);
        in->end -= in->start;
        in->start = 0;
        ssize_t n =
            read(STDIN_FILENO, in->buffer + in->end, sizeof(in->buffer) - in->end);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            status = ringctl_fail(EXIT_FAILED, "cannot read standard input: %s",
                                  strerror(errno));
            break;
        }
        at_end = n == 0;
        in->end += (size_t)n;
    }
    free(in);
    return status;
}

int ringctl_cmd_lookup(struct ringctl *ctl)
{
    bool from_stdin = ctl->given & OPTION(STDIN);
    if (from_stdin && ctl->arg_count > 0)
        return ringctl_fail(EXIT_USAGE, "lookup takes either keys or --stdin, not both");
    if (!from_stdin && ctl->arg_count == 0) {
        char usage[LINE_MAX_BYTES];
        ringctl_usage_line(ringctl_command_find("lookup"), usage, sizeof(usage));
        return ringctl_fail(EXIT_USAGE, "missing arguments for 'lookup' (usage: %s)",
                            usage);
    }
    /* One thread, one call at a time: a serialized handle, the cheapest per key for
     * a long --stdin stream. */
    shmring_open_options_t options = ctl->open;
    options.flags |= SHMRING_OPEN_SERIALIZED;
    shmring_t *reader;
    int err = shmring_open_with(ctl->ring, &options, &reader);
    if (err != 0)
        return ringctl_library_failure("open", ctl, err);
    int status = from_stdin ? lookup_stream(ctl, reader) : lookup_arguments(ctl, reader);
    shmring_close(reader);
    return status;
}
