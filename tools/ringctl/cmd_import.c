/* ringctl import: a peer's configuration file as the JSON node set that load reads. */
#include <stdlib.h>
#include <string.h>

#include "ringctl.h"

int ringctl_cmd_import(struct ringctl *ctl)
{
    const char *format_name = ctl->args[0];
    shmring_import_format_t format;
    if (shmring_import_format_parse(format_name, &format) != 0)
        return ringctl_fail(
            EXIT_USAGE,
            "unknown format '%s' (use nginx, twemproxy, libketama or haproxy)",
            format_name);
    /* Each option names the section of one format: --pool for an nginx file is a
     * slip worth pointing out, not an alias. */
    if ((ctl->given & OPTION(UPSTREAM)) && format != SHMRING_IMPORT_NGINX)
        return ringctl_fail(EXIT_USAGE, "option '--upstream' is for nginx files");
    if ((ctl->given & OPTION(POOL)) && format != SHMRING_IMPORT_TWEMPROXY)
        return ringctl_fail(EXIT_USAGE, "option '--pool' is for twemproxy files");
    if ((ctl->given & OPTION(BACKEND)) && format != SHMRING_IMPORT_HAPROXY)
        return ringctl_fail(EXIT_USAGE, "option '--backend' is for haproxy files");

    struct load_input in;
    if (ringctl_read_load_input(ctl->args[1], &in) != EXIT_OK)
        return EXIT_FAILED;
    shmring_nodeset_t *set;
    shmring_import_error_t error;
    memset(&error, 0, sizeof(error));
    int err = shmring_nodeset_import(format, in.text, in.len, ctl->section, &set, &error);
    free(in.text);
    if (err == SHMRING_EINVAL) {
        if (error.line > 0)
            return ringctl_fail(EXIT_FAILED, "%s:%d: %s", in.label, error.line,
                                error.text);
        return ringctl_fail(EXIT_FAILED, "%s: %s", in.label, error.text);
    }
    char *text = NULL;
    if (err == 0)
        err = shmring_nodeset_to_json(set, &text);
    shmring_nodeset_free(set);
    if (err != 0)
        return ringctl_fail(EXIT_FAILED, "cannot import '%s': %s", in.label,
                            shmring_strerror(err));
    output_document(text);
    free(text);
    return EXIT_OK;
}
