/*
 * ringctl sync: runs the helper ringctl-sync in place of ringctl, with the command
 * line ringctl has checked against the command table (sync's options are rows of the
 * one option table, which the helper reads them with). sync needs libcurl, OpenSSL and
 * libsystemd (tools/sync/); linked into ringctl they would be loaded and relocated by
 * every command, `ringctl --version` included, and their pages would count against every
 * load's memory. execv() keeps the process: its pid (which systemd's Type=notify service
 * follows), its descriptors and its environment (NOTIFY_SOCKET, SHMRING_RING,
 * SHMRING_DIR, SHMRING_ETCD_PASSWORD).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringctl.h"

/* The helper's installed path (absolute), and the same relative to the directory of
 * an installed ringctl; tools/CMakeLists.txt defines both from GNUInstallDirs in a
 * build with sync (SHMRING_SYNC), and neither in one without. */
#if defined(RINGCTL_SYNC_HELPER) != defined(RINGCTL_SYNC_HELPER_FROM_BINDIR)
#error "RINGCTL_SYNC_HELPER and RINGCTL_SYNC_HELPER_FROM_BINDIR go together"
#endif

#ifdef RINGCTL_SYNC_HELPER

/* The helper's file name beside ringctl, where the build tree puts it. */
#define SYNC_HELPER_NAME "ringctl-sync"

/* What became of one place the helper may be. */
enum helper_outcome {
    HELPER_ABSENT, /* nothing there: try the next place */
    HELPER_FAILED, /* something there that cannot or must not run: said why */
};

/*
 * Executes the helper at PATH with ARGV, in place of this process. Returns only if
 * that failed. A place FOUND relative to ringctl, rather than configured, may be in
 * a directory that other users can write (a copy of ringctl in /tmp/x/ has
 * /tmp/libexec/ above it), so the helper found there must be, as the library asks of
 * a ring, a regular file of root or of ours that others cannot write. It is checked
 * and executed through one descriptor, so what was checked is what runs.
 */
static enum helper_outcome run_helper(const char *path, bool found, char **argv)
{
    int fd = open(path, O_PATH | O_CLOEXEC | (found ? O_NOFOLLOW : 0));
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
        return HELPER_ABSENT;
    if (fd < 0) {
        ringctl_fail(EXIT_FAILED, "cannot run the sync helper '%s': %s", path,
                     strerror(errno));
        return HELPER_FAILED;
    }
    struct stat st;
    char refusal[128] = "";
    if (fstat(fd, &st) != 0)
        snprintf(refusal, sizeof(refusal), "%s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(refusal, sizeof(refusal), "not a regular file");
    else if (found && st.st_uid != 0 && st.st_uid != geteuid())
        snprintf(refusal, sizeof(refusal), "it belongs to uid %lu, neither root nor you",
                 (unsigned long)st.st_uid);
    else if (found && (st.st_mode & S_IWOTH) != 0)
        snprintf(refusal, sizeof(refusal), "others can write it (mode %04o)",
                 (unsigned)(st.st_mode & 07777));
    if (refusal[0] == '\0') {
        /* A SIGTERM or SIGINT that comes while the helper is being loaded would
         * otherwise kill it before it can handle one: blocked here, a stop stays
         * pending across the exec until the helper has its handlers, and then ends
         * sync with status 0 like any other. */
        sigset_t stop_signals, before;
        sigemptyset(&stop_signals);
        sigaddset(&stop_signals, SIGTERM);
        sigaddset(&stop_signals, SIGINT);
        sigprocmask(SIG_BLOCK, &stop_signals, &before);
        fexecve(fd, argv, environ);
        snprintf(refusal, sizeof(refusal), "%s", strerror(errno));
        sigprocmask(SIG_SETMASK, &before, NULL);
    }
    close(fd);
    ringctl_fail(EXIT_FAILED, "cannot run the sync helper '%s': %s", path, refusal);
    return HELPER_FAILED;
}

/*
 * Where the helper is looked for, in this order: beside the running ringctl (the
 * build tree, where tests run the uninstalled binary), where an installation that
 * was moved to another prefix has it relative to ringctl (as ringctl finds its
 * libraries through $ORIGIN), then the installed path. The running binary's own
 * directory comes from /proc/self/exe, never from argv[0] or PATH: on a shared host
 * either could point at another user's program.
 */
static int run_sync_helper(char **argv)
{
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
            if (run_helper(path, true, argv) == HELPER_FAILED)
                return EXIT_FAILED;
        }
    }
    if (run_helper(RINGCTL_SYNC_HELPER, false, argv) == HELPER_FAILED)
        return EXIT_FAILED;
    return ringctl_fail(EXIT_FAILED, "cannot run the sync helper '%s': %s",
                        RINGCTL_SYNC_HELPER, strerror(ENOENT));
}

#endif

int ringctl_cmd_sync(struct ringctl *ctl)
{
    /* sync prints no results: its log lines go to standard error. */
    if (ctl->json)
        return ringctl_fail(EXIT_USAGE, "option '--json' does not apply to 'sync'");
#ifdef RINGCTL_SYNC_HELPER
    return run_sync_helper(ctl->argv);
#else
    return ringctl_fail(EXIT_FAILED, "this ringctl was built without sync "
                                     "(SHMRING_SYNC=OFF)");
#endif
}
