/*
 * ringctl sync: runs the helper ringctl-sync in place of ringctl, with the same
 * command line. sync needs libcurl, OpenSSL and libsystemd (lib/sync/); linked into
 * ringctl they would be loaded and relocated by every command, `ringctl --version`
 * included, and their pages would count against every load's memory. execv() keeps
 * the process: its pid (which systemd's Type=notify service follows), its
 * descriptors and its environment (NOTIFY_SOCKET, SHMRING_RING, SHMRING_DIR,
 * SHMRING_ETCD_PASSWORD).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_sync.h"
#include "ringctl.h"

/* The helper's installed path (absolute), and the same relative to the directory of
 * an installed ringctl; tools/CMakeLists.txt defines both from GNUInstallDirs. */
#ifndef RINGCTL_SYNC_HELPER
#error "RINGCTL_SYNC_HELPER must name the installed ringctl-sync"
#endif
#ifndef RINGCTL_SYNC_HELPER_FROM_BINDIR
#error "RINGCTL_SYNC_HELPER_FROM_BINDIR must name ringctl-sync relative to ringctl's"
#endif

/* The helper's file name beside ringctl, where the build tree puts it. */
#define SYNC_HELPER_NAME "ringctl-sync"

bool ringctl_sync_requested(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-r") == 0 || strcmp(arg, "--ring") == 0 ||
            strcmp(arg, "--dir") == 0) {
            i++;
            continue;
        }
        if (strcmp(arg, "--") == 0 || arg[0] != '-')
            return strcmp(arg, "--") != 0 && strcmp(arg, "sync") == 0;
    }
    return false;
}

/*
 * Executes the helper at PATH with ARGV. Returns only if that failed: true when
 * there is no helper at PATH (try the next place), else false with errno saying why
 * the helper that is there cannot run.
 */
static bool helper_absent(const char *path, char **argv)
{
    execv(path, argv);
    return errno == ENOENT || errno == ENOTDIR;
}

/*
 * Where the helper is looked for, in this order: beside the running ringctl (the
 * build tree, where tests run the uninstalled binary), where an installation that
 * was moved to another prefix has it relative to ringctl (as ringctl finds its
 * libraries through $ORIGIN), then the installed path. The running binary's own
 * directory comes from /proc/self/exe, never from argv[0] or PATH: on a shared host
 * either could point at another user's program.
 */
int ringctl_sync_main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char *slash = NULL;
    if (len > 0) {
        self[len] = '\0';
        slash = strrchr(self, '/');
    }
    if (slash != NULL) {
        *slash = '\0';
        const char *relative[] = {SYNC_HELPER_NAME, RINGCTL_SYNC_HELPER_FROM_BINDIR};
        for (size_t i = 0; i < sizeof(relative) / sizeof(relative[0]); i++) {
            char path[PATH_MAX];
            int written = snprintf(path, sizeof(path), "%s/%s", self, relative[i]);
            if (written < 0 || (size_t)written >= sizeof(path))
                continue;
            if (!helper_absent(path, argv))
                return fail(EXIT_FAILED, "cannot run the sync helper '%s': %s", path,
                            strerror(errno));
        }
    }
    helper_absent(RINGCTL_SYNC_HELPER, argv);
    return fail(EXIT_FAILED, "cannot run the sync helper '%s': %s", RINGCTL_SYNC_HELPER,
                strerror(errno));
}

/* Reached only when the command line hides the word sync from
 * ringctl_sync_requested(): a ringctl option other than -r, --ring and --dir put
 * before it. */
int ringctl_cmd_sync(struct ringctl *ctl)
{
    (void)ctl;
    return fail(EXIT_USAGE, "sync: only -r, --ring and --dir may come before 'sync' "
                            "(see 'ringctl sync --help')");
}
