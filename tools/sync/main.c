/*
 * ringctl-sync, the helper that runs `ringctl sync`: options in, one call, exit status
 * out. Signals only set the flag the modules watch. ringctl checks the command line
 * against its command table, then executes this helper with it (cmd_sync.c), so that
 * libcurl, OpenSSL and libsystemd are loaded by sync alone; the helper reads sync's
 * options from it with the same option table (tools/ringctl/options.c).
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

#include "options.h"
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

/* What the command line says, before it becomes a ringctl_sync_config_t. */
struct sync_arguments {
    const char *ring, *directory;
    const char *etcd, *key, *prefix, *file;
    const char *state, *metrics, *backoff_max;
    const char *cacert, *cert, *cert_key, *user, *password_file;
    bool once;
};

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
            return ringctl_fail(EXIT_USAGE,
                                "--user needs --password-file or $SHMRING_ETCD_PASSWORD");
        if (strlen(value) >= size)
            return ringctl_fail(
                EXIT_USAGE, "$SHMRING_ETCD_PASSWORD is longer than %zu bytes", size - 1);
        memcpy(out, value, strlen(value) + 1);
    } else {
        FILE *f = fopen(file, "r");
        if (f == NULL)
            return ringctl_fail(EXIT_FAILED, "cannot read '%s': %s", file,
                                strerror(errno));
        bool read = fgets(out, (int)size, f) != NULL;
        fclose(f);
        if (!read)
            out[0] = '\0';
        /* A line that filled the buffer without its end was cut: refused rather
         * than sent shortened, which etcd would only call a wrong password. */
        if (strlen(out) == size - 1 && out[size - 2] != '\n')
            return ringctl_fail(EXIT_USAGE,
                                "the password in '%s' is longer than %zu bytes", file,
                                size - 2);
        out[strcspn(out, "\r\n")] = '\0';
    }
    if (out[0] == '\0')
        return file != NULL
                   ? ringctl_fail(EXIT_USAGE, "the password in '%s' is empty", file)
                   : ringctl_fail(EXIT_USAGE, "$SHMRING_ETCD_PASSWORD is empty");
    return EXIT_OK;
}

/* Keeps the value of sync's option CODE (options.h) in *ARGS; false for an option
 * that is not sync's. */
/* sync's no-space hook: ringctl's census of who holds superseded versions of the
 * ring, which sync writes (as its owner, trusting no other). */
static bool describe_no_space(const char *ring, const shmring_writer_options_t *writer,
                              char *out, size_t size)
{
    const shmring_open_options_t options = {.directory = writer->directory};
    return output_space_holders(ring, &options, out, size);
}

static bool keep_option(struct sync_arguments *args, int code, const char *value)
{
    switch (code) {
    case 'r':
        args->ring = value;
        return true;
    case CODE_DIR:
        args->directory = value;
        return true;
    case CODE_ETCD:
        args->etcd = value;
        return true;
    case CODE_KEY:
        args->key = value;
        return true;
    case CODE_PREFIX:
        args->prefix = value;
        return true;
    case CODE_FILE:
        args->file = value;
        return true;
    case CODE_STATE:
        args->state = value;
        return true;
    case CODE_METRICS:
        args->metrics = value;
        return true;
    case CODE_ONCE:
        args->once = true;
        return true;
    case CODE_BACKOFF_MAX:
        args->backoff_max = value;
        return true;
    case CODE_CACERT:
        args->cacert = value;
        return true;
    case CODE_CERT:
        args->cert = value;
        return true;
    case CODE_CERT_KEY:
        args->cert_key = value;
        return true;
    case CODE_USER:
        args->user = value;
        return true;
    case CODE_PASSWORD_FILE:
        args->password_file = value;
        return true;
    default:
        return false;
    }
}

/* Runs `ringctl [-r RING] [--dir DIR] sync SOURCE [OPTIONS]`, as ringctl has checked
 * it; returns the exit status. */
static int run(int argc, char **argv)
{
    watch_stop_signals();
    struct sync_arguments args = {.ring = getenv("SHMRING_RING"),
                                  .directory = getenv("SHMRING_DIR")};
    struct option long_options[OPTION_TABLE_MAX + 1];
    char short_options[3 * OPTION_TABLE_MAX + 2];
    ringctl_getopt_tables(long_options, short_options);
    opterr = 0;
    int code;
    while ((code = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        if (code == '?' || code == ':')
            return ringctl_option_error(code, argv);
        if (!keep_option(&args, code, optarg))
            return ringctl_fail(EXIT_USAGE, "option '%s' does not apply to 'sync'",
                                argv[optind - 1]);
    }
    shmring_writer_options_t writer;
    shmring_writer_options_default(&writer);
    ringctl_sync_config_t config = {.stop = &stop_requested,
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
            return ringctl_fail(EXIT_USAGE, "--backoff-max must be 100-3600000 (ms)");
        config.backoff_max_ms = (unsigned)ms;
    }
    const char *ring = args.ring, *etcd = args.etcd, *key = args.key,
               *prefix = args.prefix, *file = args.file;
    const char *endpoints[ENDPOINTS_MAX];
    /* The only word left is "sync" itself. */
    if (optind != argc - 1 || strcmp(argv[optind], "sync") != 0)
        return ringctl_fail(EXIT_USAGE,
                            "unexpected argument (usage: ringctl sync SOURCE [OPTIONS])");
    if (ring == NULL)
        ring = "default";
    if (shmring_ring_name_check(ring) != 0)
        return ringctl_fail(EXIT_USAGE, "invalid ring name '%s'", ring);
    if ((etcd != NULL) + (file != NULL) != 1 ||
        (etcd != NULL && (key != NULL) + (prefix != NULL) != 1) ||
        (file != NULL && (key != NULL || prefix != NULL)))
        return ringctl_fail(EXIT_USAGE,
                            "give one source: --etcd URL --key KEY, --etcd URL --prefix "
                            "PREFIX, or --file PATH");
    char etcd_list[4096];
    if (etcd != NULL) {
        snprintf(etcd_list, sizeof(etcd_list), "%s", etcd);
        config.endpoint_count = split_endpoints(etcd_list, endpoints);
        if (config.endpoint_count == 0)
            return ringctl_fail(
                EXIT_USAGE, "--etcd takes 1-%d comma-separated http:// or https:// URLs",
                ENDPOINTS_MAX);
        config.endpoints = endpoints;
        config.source = key != NULL ? RINGCTL_SYNC_ETCD_KEY : RINGCTL_SYNC_ETCD_PREFIX;
        config.name = key != NULL ? key : prefix;
    } else {
        config.source = RINGCTL_SYNC_FILE;
        config.name = file;
    }
    if ((config.cert_file == NULL) != (config.key_file == NULL))
        return ringctl_fail(EXIT_USAGE, "--cert and --cert-key go together");
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

    return ringctl_sync_run(&config);
}

int main(int argc, char **argv)
{
    /* ringctl did this before executing us; the helper may be started directly. */
    if (!ringctl_standard_descriptors_valid())
        return ringctl_fail(EXIT_FAILED, "cannot open /dev/null: %s", strerror(errno));
    return run(argc, argv);
}
