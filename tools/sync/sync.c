/*
 * The run of sync: checks the configuration, logs, and hands over to the source's
 * follower (etcd_source.c, file_source.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "sync_internal.h"

void sync__log(struct sync_context *ctx, const char *format, ...)
{
    char message[SYNC_LINE_MAX];
    int used = snprintf(message, sizeof(message), "ring '%s': ", ctx->config->ring);
    va_list args;
    va_start(args, format);
    if (used > 0 && (size_t)used < sizeof(message))
        vsnprintf(message + used, sizeof(message) - (size_t)used, format, args);
    va_end(args);
    /* One event, one line: whatever a key, a file or etcd said, no newline gets in. */
    for (char *c = message; *c != '\0'; c++) {
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    }
    if (ctx->config->log != NULL)
        ctx->config->log(ctx->config->log_data, message);
    else
        fprintf(stderr, "ringctl: sync: %s\n", message);
}

bool sync__stopping(const struct sync_context *ctx)
{
    return ctx->config->stop != NULL && *ctx->config->stop != 0;
}

int shmring_sync_run(const shmring_sync_config_t *config)
{
    struct sync_context ctx = {.config = config};
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    /* Hosts that lost etcd together must not come back in step: seed apart. */
    ctx.random = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15u;
    if (config->name == NULL || config->name[0] == '\0') {
        sync__log(&ctx, "cannot start: no %s given",
                  config->source == SHMRING_SYNC_FILE ? "file" : "key or prefix");
        return 2;
    }
    if (config->source != SHMRING_SYNC_FILE && config->endpoint_count == 0) {
        sync__log(&ctx, "cannot start: no etcd endpoint given");
        return 2;
    }
    int status = config->source == SHMRING_SYNC_FILE ? sync__follow_file(&ctx)
                                                     : sync__follow_etcd(&ctx);
    /* systemd shows the unit as deactivating at once, rather than waiting for the
     * exit to notice (no-op outside systemd). */
    if (sync__stopping(&ctx))
        sd_notify(0, "STOPPING=1");
    return status;
}
