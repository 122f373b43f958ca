/*
 * Following a file kept by configuration management. The directory is watched, not
 * the file: tools replace a file by writing a temporary one and renaming it over
 * (Ansible, Puppet, consul-template all do), which a watch on the file itself would
 * lose track of. The file is read again when a writer closes it or a rename brings
 * it in; a file that is missing or half-written keeps the ring as it was.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "sync_internal.h"

/* How often the wait for a change looks at the stop flag. */
#define STOP_POLL_MS 200

static enum sync_outcome read_and_apply(struct sync_context *ctx, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    int err = sync__file_read(path, &text, &len);
    if (err != 0) {
        sync__log(ctx, "cannot read %s: %s; ring unchanged", path, sync__file_error(err));
        sync__event(ctx, SYNC_EVENT_ERROR);
        return SYNC_FAILED;
    }
    char origin[SYNC_LINE_MAX];
    snprintf(origin, sizeof(origin), "file %s", path);
    enum sync_outcome outcome = sync__apply(ctx, text, len, origin, NULL, NULL);
    free(text);
    return outcome;
}

/*
 * Reads the inotify events in BUFFER (LEN bytes): whether one concerns the file NAME
 * (or the queue overflowed, so one may have), and whether the watched directory
 * went away. Each header is copied out, since the buffer is only char-aligned.
 */
static void scan_events(const char *buffer, size_t len, const char *name, bool *changed,
                        bool *gone)
{
    for (size_t at = 0; at + sizeof(struct inotify_event) <= len;) {
        struct inotify_event event;
        memcpy(&event, buffer + at, sizeof(event));
        const char *event_name = buffer + at + sizeof(event);
        if ((event.len > 0 && strcmp(event_name, name) == 0) ||
            (event.mask & IN_Q_OVERFLOW))
            *changed = true;
        if (event.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
            *gone = true;
        at += sizeof(event) + event.len;
    }
}

int sync__follow_file(struct sync_context *ctx)
{
    const char *path = ctx->config->name;
    char directory_copy[PATH_MAX], name_copy[PATH_MAX];
    if (strlen(path) >= sizeof(directory_copy)) {
        sync__log(ctx, "cannot start: the path %s is too long", path);
        return 2;
    }
    strcpy(directory_copy, path);
    strcpy(name_copy, path);
    const char *directory = dirname(directory_copy);
    const char *name = basename(name_copy);

    int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0 || inotify_add_watch(fd, directory,
                                    IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE_SELF |
                                        IN_MOVE_SELF) < 0) {
        sync__log(ctx, "cannot watch %s: %s", directory, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 2;
    }
    /* The watch is in place before the first read, so no change can slip between. */
    enum sync_outcome outcome = read_and_apply(ctx, path);
    if (outcome == SYNC_FAILED && !ctx->in_step)
        sync__restore(ctx);
    if (ctx->config->once) {
        close(fd);
        return outcome == SYNC_PUBLISHED || outcome == SYNC_UNCHANGED ? 0 : 1;
    }
    sync__log(ctx, "following %s", path);
    int status = 0;
    char buffer[4096];
    while (!sync__stopping(ctx)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, STOP_POLL_MS);
        if (ready <= 0)
            continue;
        bool changed = false, gone = false;
        ssize_t n;
        while ((n = read(fd, buffer, sizeof(buffer))) > 0)
            scan_events(buffer, (size_t)n, name, &changed, &gone);
        if (gone) {
            sync__log(ctx, "the directory %s went away; stopping", directory);
            status = 1;
            break;
        }
        if (changed)
            read_and_apply(ctx, path);
    }
    close(fd);
    return status;
}
