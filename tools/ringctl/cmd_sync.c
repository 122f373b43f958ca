/*
 * ringctl sync: the command-line side of lib/sync/: options in, one call, exit
 * status out. Signals only set the flag the library watches.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_sync.h"
#include "ringctl.h"
#include "sync.h"

#define ENDPOINTS_MAX 16

static volatile sig_atomic_t stop_requested;

static void request_stop(int signal_number)
{
    (void)signal_number;
    stop_requested = 1;
}

static const char usage_text[] =
    "Usage: ringctl [-r RING] [--dir DIR] sync SOURCE [OPTIONS]\n"
    "\n"
    "Keep RING equal to a source of truth, publishing only when it changes.\n"
    "\n"
    "Sources (one):\n"
    "  --etcd URL[,URL...] --key KEY        the JSON node set under one etcd key\n"
    "  --etcd URL[,URL...] --prefix PREFIX  one node per key under PREFIX (the value\n"
    "                                       is the node's JSON object); the key\n"
    "                                       PREFIX itself may hold the parameters\n"
    "  --file PATH                          a JSON node set in a file (inotify)\n"
    "\n"
    "Options:\n"
    "  --state PATH         keep the last applied node set in PATH (atomically) and\n"
    "                       restore the ring from it when the source is unreachable\n"
    "  --metrics PATH       keep sync's own metrics (revision applied, publications,\n"
    "                       refusals, errors) in PATH, a Prometheus textfile for\n"
    "                       node_exporter's textfile collector (atomically)\n"
    "  --once               sync once and exit: 0 in step, 1 not\n"
    "  --backoff-max MS     longest wait between attempts to reach etcd (5000)\n"
    "  --cacert FILE        CA bundle for https endpoints\n"
    "  --cert FILE          client certificate (with --cert-key)\n"
    "  --cert-key FILE      client certificate's key\n"
    "  --user NAME          etcd user; the password is read from the file named by\n"
    "                       --password-file, else from $SHMRING_ETCD_PASSWORD\n"
    "  --password-file FILE\n"
    "\n"
    "One log line per event on standard error. SIGTERM or SIGINT: exit 0.\n";

enum {
    OPT_ETCD = 256,
    OPT_KEY,
    OPT_PREFIX,
    OPT_FILE,
    OPT_STATE,
    OPT_METRICS,
    OPT_ONCE,
    OPT_BACKOFF_MAX,
    OPT_CACERT,
    OPT_CERT,
    OPT_CERT_KEY,
    OPT_USER,
    OPT_PASSWORD_FILE,
    OPT_DIR,
};

static const struct option options[] = {
    {"ring", required_argument, NULL, 'r'},
    {"dir", required_argument, NULL, OPT_DIR},
    {"help", no_argument, NULL, 'h'},
    {"etcd", required_argument, NULL, OPT_ETCD},
    {"key", required_argument, NULL, OPT_KEY},
    {"prefix", required_argument, NULL, OPT_PREFIX},
    {"file", required_argument, NULL, OPT_FILE},
    {"state", required_argument, NULL, OPT_STATE},
    {"metrics", required_argument, NULL, OPT_METRICS},
    {"once", no_argument, NULL, OPT_ONCE},
    {"backoff-max", required_argument, NULL, OPT_BACKOFF_MAX},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"cert", required_argument, NULL, OPT_CERT},
    {"cert-key", required_argument, NULL, OPT_CERT_KEY},
    {"user", required_argument, NULL, OPT_USER},
    {"password-file", required_argument, NULL, OPT_PASSWORD_FILE},
    {NULL, 0, NULL, 0},
};

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

/* Splits "a,b,c" into ENDPOINTS (in place); returns how many, or 0 on a bad list. */
static size_t split_endpoints(char *list, const char **endpoints)
{
    size_t count = 0;
    for (char *save = NULL, *item = strtok_r(list, ",", &save); item != NULL;
         item = strtok_r(NULL, ",", &save)) {
        size_t len = strlen(item);
        while (len > 0 && item[len - 1] == '/')
            item[--len] = '\0';
        if (count == ENDPOINTS_MAX ||
            (strncmp(item, "http://", 7) != 0 && strncmp(item, "https://", 8) != 0))
            return 0;
        endpoints[count++] = item;
    }
    return count;
}

/* The password: the first line of FILE, else $SHMRING_ETCD_PASSWORD (never from
 * the command line, where every user could read it in ps). */
static int read_password(const char *file, char *out, size_t size)
{
    if (file == NULL) {
        const char *value = getenv("SHMRING_ETCD_PASSWORD");
        if (value == NULL)
            return fail(EXIT_USAGE,
                        "--user needs --password-file or $SHMRING_ETCD_PASSWORD");
        snprintf(out, size, "%s", value);
        return EXIT_OK;
    }
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return fail(EXIT_FAILED, "cannot read '%s': %s", file, strerror(errno));
    if (fgets(out, (int)size, f) == NULL)
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    return EXIT_OK;
}

int ringctl_sync_main(int argc, char **argv)
{
    shmring_writer_options_t writer;
    shmring_writer_options_default(&writer);
    shmring_sync_config_t config = {.stop = &stop_requested};
    const char *ring = getenv("SHMRING_RING");
    const char *directory = getenv("SHMRING_DIR");
    const char *etcd = NULL, *key = NULL, *prefix = NULL, *file = NULL;
    const char *password_file = NULL;
    const char *endpoints[ENDPOINTS_MAX];
    opterr = 0;
    int code;
    while ((code = getopt_long(argc, argv, ":r:h", options, NULL)) != -1) {
        switch (code) {
        case 'r':
            ring = optarg;
            break;
        case OPT_DIR:
            directory = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return EXIT_OK;
        case OPT_ETCD:
            etcd = optarg;
            break;
        case OPT_KEY:
            key = optarg;
            break;
        case OPT_PREFIX:
            prefix = optarg;
            break;
        case OPT_FILE:
            file = optarg;
            break;
        case OPT_METRICS:
            config.metrics_path = optarg;
            break;
        case OPT_STATE:
            config.state_path = optarg;
            break;
        case OPT_ONCE:
            config.once = true;
            break;
        case OPT_BACKOFF_MAX: {
            char *end;
            errno = 0;
            unsigned long ms = strtoul(optarg, &end, 10);
            if (errno != 0 || *end != '\0' || end == optarg || ms < 100 || ms > 3600000)
                return fail(EXIT_USAGE, "--backoff-max must be 100-3600000 (ms)");
            config.backoff_max_ms = (unsigned)ms;
            break;
        }
        case OPT_CACERT:
            config.ca_file = optarg;
            break;
        case OPT_CERT:
            config.cert_file = optarg;
            break;
        case OPT_CERT_KEY:
            config.key_file = optarg;
            break;
        case OPT_USER:
            config.user = optarg;
            break;
        case OPT_PASSWORD_FILE:
            password_file = optarg;
            break;
        case ':':
            return fail(EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
        default:
            return fail(EXIT_USAGE,
                        "unknown option '%s' for sync (see 'ringctl sync --help')",
                        argv[optind - 1]);
        }
    }
    /* The only word left is "sync" itself. */
    if (optind != argc - 1 || strcmp(argv[optind], "sync") != 0)
        return fail(EXIT_USAGE,
                    "unexpected argument (usage: ringctl sync SOURCE [OPTIONS])");
    if (ring == NULL)
        ring = "default";
    if (shmring_ring_name_check(ring) != 0)
        return fail(EXIT_USAGE, "invalid ring name '%s'", ring);
    if ((etcd != NULL) + (file != NULL) != 1 ||
        (etcd != NULL && (key != NULL) + (prefix != NULL) != 1) ||
        (file != NULL && (key != NULL || prefix != NULL)))
        return fail(EXIT_USAGE,
                    "give one source: --etcd URL --key KEY, --etcd URL --prefix "
                    "PREFIX, or --file PATH");
    char etcd_list[4096];
    if (etcd != NULL) {
        snprintf(etcd_list, sizeof(etcd_list), "%s", etcd);
        config.endpoint_count = split_endpoints(etcd_list, endpoints);
        if (config.endpoint_count == 0)
            return fail(EXIT_USAGE,
                        "--etcd takes 1-%d comma-separated http:// or https:// URLs",
                        ENDPOINTS_MAX);
        config.endpoints = endpoints;
        config.source = key != NULL ? SHMRING_SYNC_ETCD_KEY : SHMRING_SYNC_ETCD_PREFIX;
        config.name = key != NULL ? key : prefix;
    } else {
        config.source = SHMRING_SYNC_FILE;
        config.name = file;
    }
    if ((config.cert_file == NULL) != (config.key_file == NULL))
        return fail(EXIT_USAGE, "--cert and --cert-key go together");
    char password[1024];
    if (config.user != NULL) {
        int status = read_password(password_file, password, sizeof(password));
        if (status != EXIT_OK)
            return status;
        config.password = password;
    }
    writer.directory = directory;
    config.writer = &writer;
    config.ring = ring;

    /* No SA_RESTART: a signal ends a sleep or a poll at once. */
    struct sigaction action = {.sa_handler = request_stop};
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
    return shmring_sync_run(&config);
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
