/*
 * ringctl: inspect and change shmring rings from the command line.
 *
 * main parses the options, finds the command in the table (command_table.h) and
 * runs it; the commands are thin calls into libshmringctl, one file each.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "ringctl.h"

/* The permission bits of a ring that init or load creates without --mode. */
#define DEFAULT_RING_MODE 0644

/* Called by the library once it starts to wait for another writer's lock: says so,
 * once, so that a command that seems to hang explains itself. */
static void say_waiting(const char *ring, void *data)
{
    struct ringctl *ctl = data;
    if (ctl->said_waiting)
        return;
    ctl->said_waiting = true;
    if (ctl->wait_seconds < 0)
        ringctl_note(
            "waiting for another writer of ring '%s' to finish (--wait SECONDS bounds "
            "this)",
            ring);
    else
        ringctl_note("waiting up to %d s for another writer of ring '%s' to finish",
                     ctl->wait_seconds, ring);
}

/*
 * Takes the ring and the ring directory from the environment unless options named
 * them. A variable that is set but empty is an error, not the default: it is
 * usually a configuration that meant to name something and did not.
 */
static int parse_environment(struct ringctl *ctl, bool ring_given, bool needs_ring)
{
    const char *directory = getenv("SHMRING_DIR");
    const char *directory_source = "--dir";
    if (ctl->directory == NULL && directory != NULL) {
        if (directory[0] == '\0')
            return ringctl_fail(EXIT_USAGE,
                                "SHMRING_DIR is set but empty: unset it (for %s) or "
                                "name a directory",
                                SHMRING_DEFAULT_DIRECTORY);
        ctl->directory = directory;
        directory_source = "SHMRING_DIR";
    }
    const char *ring = getenv("SHMRING_RING");
    if (!ring_given && needs_ring && ring != NULL) {
        if (ring[0] == '\0')
            return ringctl_fail(EXIT_USAGE,
                                "SHMRING_RING is set but empty: unset it (for the "
                                "ring 'default') or name a ring");
        ctl->ring = ring;
    }
    if (ctl->directory != NULL && strlen(ctl->directory) > SHMRING_DIRECTORY_MAX)
        return ringctl_fail(EXIT_USAGE,
                            "the ring directory's path is longer than %d bytes",
                            SHMRING_DIRECTORY_MAX);
    /* The library refuses it too (SHMRING_EBADDIR), but only the command line can
     * say which setting named it. */
    if (ctl->directory != NULL && ctl->directory[0] != '/')
        return ringctl_fail(EXIT_USAGE,
                            "%s '%s': the ring directory must be an absolute path",
                            directory_source, ctl->directory);
    ctl->open.directory = ctl->directory;
    ctl->writer.directory = ctl->directory;
    return EXIT_OK;
}

/* Checks what the command line gives COMMAND: only options it takes, as many
 * arguments as it takes, a valid ring name. */
static int check_command_line(const struct ringctl *ctl,
                              const struct ringctl_command *command)
{
    for (option_bits_t bit = 1; bit != 0; bit <<= 1) {
        if ((ctl->given & bit) && !(command->options & bit))
            return ringctl_fail(EXIT_USAGE, "option '%s' does not apply to '%s'",
                                ringctl_option_name(bit), command->name);
    }
    char usage[LINE_MAX_BYTES];
    ringctl_usage_line(command, usage, sizeof(usage));
    if (ctl->arg_count < command->min_args)
        return ringctl_fail(EXIT_USAGE, "missing arguments for '%s' (usage: %s)",
                            command->name, usage);
    if (ctl->arg_count > command->max_args)
        return ringctl_fail(EXIT_USAGE, "too many arguments for '%s' (usage: %s)",
                            command->name, usage);
    if (command->names_ring && shmring_ring_name_check(ctl->ring) != 0)
        return ringctl_fail(
            EXIT_USAGE,
            "invalid ring name '%s' (1-%d characters of A-Z a-z 0-9 _ . -, "
            "not ending in a dot and digits)",
            ctl->ring, SHMRING_RING_NAME_MAX);
    return EXIT_OK;
}

/* Parses the command line into *CTL and *COMMAND; *COMMAND stays NULL when the work
 * is done already (--help, --version). Returns an exit status. */
static int parse_command_line(int argc, char **argv, struct ringctl *ctl,
                              const struct ringctl_command **command)
{
    *command = NULL;
    shmring_params_default(&ctl->params);
    shmring_writer_options_default(&ctl->writer);
    ctl->writer.mode = DEFAULT_RING_MODE;
    ctl->writer.on_wait = say_waiting;
    ctl->writer.on_wait_data = ctl;
    ctl->wait_seconds = -1;
    ctl->weight = 1;
    ctl->count = 1;

    struct option long_options[OPTION_TABLE_MAX + 1];
    char short_options[3 * OPTION_TABLE_MAX + 2];
    ringctl_getopt_tables(long_options, short_options);
    bool help = false, version = false;
    opterr = 0; /* diagnostics are ours, in our format */
    int code;
    while ((code = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        int status;
        if (code == 'h')
            help = true;
        else if (code == 'V')
            version = true;
        else if (code == '?' || code == ':')
            return ringctl_option_error(code, argv);
        else if ((status = ringctl_parse_option(ctl, code, optarg)) != EXIT_OK)
            return status;
    }
    const char *name = optind < argc ? argv[optind] : NULL;
    const struct ringctl_command *found =
        name != NULL ? ringctl_command_find(name) : NULL;
    if (name != NULL && found == NULL)
        return ringctl_unknown_command(name);
    if (help) {
        /* `ringctl COMMAND --help` is that command's usage, whatever else is given. */
        if (found != NULL)
            output_help_command(found);
        else
            output_help();
        return EXIT_OK;
    }
    if (version) {
        output_version();
        return EXIT_OK;
    }
    if (found == NULL)
        return ringctl_fail(EXIT_USAGE, "no command given (see 'ringctl --help')");
    bool ring_given = ctl->ring != NULL;
    if (!ring_given)
        ctl->ring = "default";
    int status = parse_environment(ctl, ring_given, found->names_ring);
    if (status != EXIT_OK)
        return status;
    ctl->writer.wait_ms = ctl->wait_seconds < 0 ? -1 : ctl->wait_seconds * 1000;
    ctl->argv = argv;
    ctl->args = argv + optind + 1;
    ctl->arg_count = (size_t)(argc - optind - 1);
    status = check_command_line(ctl, found);
    if (status == EXIT_OK)
        *command = found;
    return status;
}

/*
 * Flushes and closes stdout, and reports output that never reached its destination
 * (a full disk, a closed pipe) as a failure. When the ring changed before, the
 * message says so: whoever reads it must not take the command for one that changed
 * nothing (and, say, run `init` again).
 */
static int finish_output(const struct ringctl *ctl, int status)
{
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    failed = fclose(stdout) != 0 || failed;
    if (!failed)
        return status;
    int error = output_errno();
    if (ctl->destroyed)
        return ringctl_fail(
            EXIT_FAILED,
            "ring '%s' was destroyed, but its report could not be written: %s", ctl->ring,
            strerror(error));
    if (ctl->published != 0)
        return ringctl_fail(EXIT_FAILED,
                            "ring '%s': generation %" PRIu64
                            " was published, but its report could not be written: %s",
                            ctl->ring, ctl->published, strerror(error));
    if (status == EXIT_OK)
        return ringctl_fail(EXIT_FAILED, "cannot write output: %s", strerror(error));
    return status;
}

int main(int argc, char **argv)
{
    /* Before anything else is opened. */
    if (!ringctl_standard_descriptors_valid())
        return ringctl_fail(EXIT_FAILED, "cannot open /dev/null: %s", strerror(errno));
    /* A file size limit (ulimit -f) is an error to report, never a death: with
     * SIGXFSZ ignored, a write or allocation past it fails with EFBIG. The helper
     * ringctl-sync inherits the disposition across exec. */
    signal(SIGXFSZ, SIG_IGN);
    output_open();
    struct ringctl ctl;
    memset(&ctl, 0, sizeof(ctl));
    const struct ringctl_command *command;
    int status = parse_command_line(argc, argv, &ctl, &command);
    if (status == EXIT_OK && command != NULL)
        status = command->run(&ctl);
    return finish_output(&ctl, status);
}
