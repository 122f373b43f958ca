/*
 * ringctl sync, in the helper ringctl-sync: the command-line side of lib/sync/:
 * options in, one call, exit status out. Signals only set the flag the library
 * watches. ringctl itself only finds the helper and executes it (cmd_sync.c), so
 * that libcurl, OpenSSL and libsystemd are loaded by sync alone.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
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

/* Makes SIGTERM and SIGINT request a stop, first thing, and then lets through one
 * that came while ringctl executed this helper (cmd_sync.c blocks them across the
 * exec): sync then stops at its first check, with status 0. */
static void watch_stop_signals(void)
{
    /* No SA_RESTART: a signal ends a sleep or a poll at once. */
    struct sigaction action = {.sa_handler = request_stop};
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    sigprocmask(SIG_UNBLOCK, &stop_signals, NULL);
}

/* What the command line says, before it becomes a shmring_sync_config_t. */
struct sync_arguments {
    const char *ring, *directory;
    const char *etcd, *key, *prefix, *file;
    const char *state, *metrics, *backoff_max;
    const char *cacert, *cert, *cert_key, *user, *password_file;
    bool once, help;
};

#define FIELD(name) offsetof(struct sync_arguments, name)

static const struct sync_option sync_options[] = {
    {"etcd", 0, "URL[,URL...]", FIELD(etcd),
     "etcd's client URLs (http:// or https://), tried in turn; with --key or --prefix"},
    {"key", 0, "KEY", FIELD(key), "the JSON node set is the value of KEY"},
    {"prefix", 0, "PREFIX", FIELD(prefix),
     "one node per key under PREFIX, the value the node's JSON object; the key PREFIX "
     "itself may hold the parameters"},
    {"file", 0, "PATH", FIELD(file), "the JSON node set in PATH, followed with inotify"},
    {"state", 0, "PATH", FIELD(state),
     "keep the last applied node set in PATH (atomically) and restore the ring from it "
     "when the source is unreachable"},
    {"metrics", 0, "PATH", FIELD(metrics),
     "keep sync's own metrics (revision applied, publications, refusals, errors) in "
     "PATH, a Prometheus textfile for node_exporter's textfile collector (atomically)"},
    {"once", 0, NULL, FIELD(once), "sync once and exit: 0 in step, 1 not"},
    {"backoff-max", 0, "MS", FIELD(backoff_max),
     "longest wait between attempts to reach etcd, 100-3600000 (default 5000)"},
    {"cacert", 0, "FILE", FIELD(cacert), "CA bundle for https endpoints"},
    {"cert", 0, "FILE", FIELD(cert), "client certificate (with --cert-key)"},
    {"cert-key", 0, "FILE", FIELD(cert_key), "the client certificate's key"},
    {"user", 0, "NAME", FIELD(user),
     "etcd user; the password is the first line of --password-file's FILE, else "
     "$SHMRING_ETCD_PASSWORD, never an argument (ps shows arguments to everyone)"},
    {"password-file", 0, "FILE", FIELD(password_file), "where --user's password is"},
    {"ring", 'r', "RING", FIELD(ring), "the ring (default: $SHMRING_RING, else default)"},
    {"dir", 0, "DIR", FIELD(directory),
     "the ring directory (default: $SHMRING_DIR, else /dev/shm)"},
    {"help", 'h', NULL, FIELD(help), "print this help and exit"},
};

#define SYNC_OPTION_COUNT (sizeof(sync_options) / sizeof(sync_options[0]))
/* getopt_long's code for row I of a long option without a letter. */
#define CODE_OF_ROW 256

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
        if (strlen(value) >= size)
            return fail(EXIT_USAGE, "$SHMRING_ETCD_PASSWORD is longer than %zu bytes",
                        size - 1);
        memcpy(out, value, strlen(value) + 1);
    } else {
        FILE *f = fopen(file, "r");
        if (f == NULL)
            return fail(EXIT_FAILED, "cannot read '%s': %s", file, strerror(errno));
        bool read = fgets(out, (int)size, f) != NULL;
        fclose(f);
        if (!read)
            out[0] = '\0';
        /* A line that filled the buffer without its end was cut: refused rather
         * than sent shortened, which etcd would only call a wrong password. */
        if (strlen(out) == size - 1 && out[size - 2] != '\n')
            return fail(EXIT_USAGE, "the password in '%s' is longer than %zu bytes", file,
                        size - 2);
        out[strcspn(out, "\r\n")] = '\0';
    }
    if (out[0] == '\0')
        return file != NULL ? fail(EXIT_USAGE, "the password in '%s' is empty", file)
                            : fail(EXIT_USAGE, "$SHMRING_ETCD_PASSWORD is empty");
    return EXIT_OK;
}

/* sync's no-space hook: ringctl's census of who holds superseded versions of the
 * ring, which sync writes (as its owner, trusting no other). */
static bool describe_no_space(const char *ring, const shmring_writer_options_t *writer,
                              char *out, size_t size)
{
    const shmring_open_options_t options = {.directory = writer->directory};
    return output_space_holders(ring, &options, out, size);
}

int ringctl_sync_run(int argc, char **argv)
{
    watch_stop_signals();
    struct sync_arguments args = {.ring = getenv("SHMRING_RING"),
                                  .directory = getenv("SHMRING_DIR")};
    struct option long_options[SYNC_OPTION_COUNT + 1] = {{0}};
    char short_options[2 * SYNC_OPTION_COUNT + 2] = ":";
    for (size_t i = 0, shorts = 1; i < SYNC_OPTION_COUNT; i++) {
        const struct sync_option *o = &sync_options[i];
        int code = o->letter ? o->letter : CODE_OF_ROW + (int)i;
        long_options[i] = (struct option){
            o->name, o->argument ? required_argument : no_argument, NULL, code};
        if (o->letter) {
            short_options[shorts++] = (char)o->letter;
            if (o->argument)
                short_options[shorts++] = ':';
        }
    }
    opterr = 0;
    int code;
    while ((code = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        if (code == ':')
            return fail(EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
        const struct sync_option *row = NULL;
        for (size_t i = 0; i < SYNC_OPTION_COUNT && row == NULL; i++) {
            if (long_options[i].val == code)
                row = &sync_options[i];
        }
        if (row == NULL)
            return fail(EXIT_USAGE,
                        "unknown option '%s' for sync (see 'ringctl sync --help')",
                        argv[optind - 1]);
        char *field = (char *)&args + row->value;
        if (row->argument != NULL)
            *(const char **)(void *)field = optarg;
        else
            *(bool *)(void *)field = true;
    }
    if (args.help) {
        output_sync_help(sync_options, SYNC_OPTION_COUNT);
        return EXIT_OK;
    }
    shmring_writer_options_t writer;
    shmring_writer_options_default(&writer);
    shmring_sync_config_t config = {.stop = &stop_requested,
                                    .state_path = args.state,
                                    .metrics_path = args.metrics,
                                    .once = args.once,
                                    .ca_file = args.cacert,
                                    .cert_file = args.cert,
                                    .key_file = args.cert_key,
                                    .user = args.user};
    if (args.backoff_max != NULL) {
        char *end;
        errno = 0;
        unsigned long ms = strtoul(args.backoff_max, &end, 10);
        if (errno != 0 || *end != '\0' || end == args.backoff_max || ms < 100 ||
            ms > 3600000)
            return fail(EXIT_USAGE, "--backoff-max must be 100-3600000 (ms)");
        config.backoff_max_ms = (unsigned)ms;
    }
    const char *ring = args.ring, *etcd = args.etcd, *key = args.key,
               *prefix = args.prefix, *file = args.file;
    const char *endpoints[ENDPOINTS_MAX];
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
        int status = read_password(args.password_file, password, sizeof(password));
        if (status != EXIT_OK)
            return status;
        config.password = password;
    }
    writer.directory = args.directory;
    config.writer = &writer;
    config.describe_no_space = describe_no_space;
    config.ring = ring;

    return shmring_sync_run(&config);
}
