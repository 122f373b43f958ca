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
            return fail(EXIT_FAILED, "cannot look up keys in ring '%s': %s", ctl->ring,
                        shmring_strerror(found));
        int status = output_lookup(ctl, key, strlen(key), nodes, found);
        if (status != EXIT_OK)
            return status;
    }
    return EXIT_OK;
}

/* Answers each line (or, with -z, each NUL-terminated key) of standard input as it
 * arrives, each answer flushed for the reader on the other end of a pipe. */
static int lookup_stream(const struct ringctl *ctl, shmring_t *reader)
{
    const int delimiter = ctl->nul ? '\0' : '\n';
    shmring_node_t nodes[SHMRING_LOOKUP_N_MAX];
    char *key = NULL;
    size_t capacity = 0;
    ssize_t len;
    int status = EXIT_OK;
    while (status == EXIT_OK &&
           (len = getdelim(&key, &capacity, delimiter, stdin)) >= 0) {
        if (len > 0 && key[len - 1] == (char)delimiter)
            len--;
        int found = shmring_lookup_n(reader, key, (size_t)len, nodes, ctl->count);
        status = output_lookup(ctl, key, (size_t)len, nodes, found);
        if (output_flush() != EXIT_OK)
            status = EXIT_FAILED;
    }
    if (status == EXIT_OK && ferror(stdin))
        status = fail(EXIT_FAILED, "cannot read standard input: %s", strerror(errno));
    free(key);
    return status;
}

int ringctl_cmd_lookup(struct ringctl *ctl)
{
    bool from_stdin = ctl->given & OPTION_STDIN;
    if (from_stdin && ctl->arg_count > 0)
        return fail(EXIT_USAGE, "lookup takes either keys or --stdin, not both");
    if (!from_stdin && ctl->arg_count == 0) {
        char usage[LINE_MAX_BYTES];
        ringctl_usage_line(ringctl_command_find("lookup"), usage, sizeof(usage));
        return fail(EXIT_USAGE, "missing arguments for 'lookup' (usage: %s)", usage);
    }
    /* One thread, one call at a time: a serialized handle, the cheapest per key for
     * a long --stdin stream. */
    shmring_open_options_t options = ctl->open;
    options.flags |= SHMRING_OPEN_SERIALIZED;
    shmring_t *reader;
    int err = shmring_open_with(ctl->ring, &options, &reader);
    if (err != 0)
        return library_failure("open", ctl, err);
    int status = from_stdin ? lookup_stream(ctl, reader) : lookup_arguments(ctl, reader);
    shmring_close(reader);
    return status;
}
