/* ringctl load: replace the whole node set with one read from a JSON file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl.h"

int ringctl_read_load_input(const char *path, struct load_input *in)
{
    bool from_stdin = strcmp(path, "-") == 0;
    in->label = from_stdin ? "<stdin>" : path;
    FILE *file = from_stdin ? stdin : fopen(path, "rb");
    if (file == NULL)
        return ringctl_fail(EXIT_FAILED, "cannot read '%s': %s", path, strerror(errno));
    /* Bounded: a file that never ends (a link to /dev/zero) costs at most the cap. */
    size_t capacity = 65536, len = 0;
    char *text = malloc(capacity);
    int error = text == NULL ? ENOMEM : 0;
    while (error == 0) {
        if (len == capacity) {
            if (len > INPUT_DOCUMENT_MAX) {
                error = EFBIG;
                break;
            }
            size_t grown_capacity = capacity * 2 > INPUT_DOCUMENT_MAX + 1
                                        ? INPUT_DOCUMENT_MAX + 1
                                        : capacity * 2;
            char *grown = realloc(text, grown_capacity);
            if (grown == NULL) {
                error = ENOMEM;
                break;
            }
            text = grown;
            capacity = grown_capacity;
        }
        size_t n = fread(text + len, 1, capacity - len, file);
        len += n;
        if (n == 0) {
            if (ferror(file))
                error = errno;
            break;
        }
    }
    if (error == 0 && len > INPUT_DOCUMENT_MAX)
        error = EFBIG;
    if (!from_stdin)
        fclose(file);
    if (error == EFBIG) {
        free(text);
        _Static_assert(INPUT_DOCUMENT_MAX == 268435456, "the message names the cap");
        return ringctl_fail(
            EXIT_FAILED,
            "cannot read '%s': larger than 268435456 bytes, the limit for a node "
            "set",
            in->label);
    }
    if (error != 0) {
        free(text);
        return ringctl_fail(EXIT_FAILED, "cannot read '%s': %s", in->label,
                            strerror(error));
    }
    in->text = text;
    in->len = len;
    return EXIT_OK;
}

static int change_load(const struct ringctl *ctl, const void *input,
                       shmring_nodeset_t **set, struct change *out)
{
    (void)ctl;
    const struct load_input *in = input;
    shmring_params_t base;
    shmring_nodeset_params(*set, &base);
    shmring_nodeset_t *loaded;
    shmring_json_error_t error;
    memset(&error, 0, sizeof(error));
    int err = shmring_nodeset_from_json(in->text, in->len, &base, &loaded, &error);
    if (err == SHMRING_EJSON)
        return ringctl_fail(EXIT_FAILED, "%s: %s", in->label, error.text);
    if (err != 0)
        return ringctl_fail(EXIT_FAILED, "%s: %s", in->label, shmring_strerror(err));
    /* Publishing no nodes would make every worker's lookup fail at once: almost
     * always a truncated or wrong file. Starting over is destroy and init. */
    if (shmring_nodeset_count(loaded) == 0) {
        shmring_nodeset_free(loaded);
        return ringctl_fail(
            EXIT_FAILED,
            "%s: nodes: the node set is empty; a ring without nodes routes no "
            "key (to start over, use destroy and init)",
            in->label);
    }
    if (shmring_nodeset_balance_factor(loaded, in->balance_percent) != 0)
        *in->balance_percent = UINT32_MAX;
    /* The ring keeps the readers it is published for (--min-reader changes them). */
    unsigned major, minor;
    shmring_nodeset_min_reader(*set, &major, &minor);
    if (shmring_nodeset_set_min_reader(loaded, major, minor) != 0) {
        shmring_nodeset_free(loaded);
        return ringctl_fail(EXIT_FAILED,
                            "the ring is published for readers of %u.%u, "
                            "after this release",
                            major, minor);
    }
    err = shmring_nodeset_inherit_ids(loaded, *set);
    if (err != 0) {
        shmring_nodeset_free(loaded);
        return ringctl_fail(EXIT_FAILED, "%s: cannot give the new nodes ids: %s",
                            in->label, shmring_strerror(err));
    }
    out->action = ACTION_LOAD;
    shmring_nodeset_diff_t *diff = NULL;
    err = shmring_nodeset_diff(*set, loaded, &diff);
    if (err == 0) {
        shmring_nodeset_diff_counts(diff, &out->diff);
        /* No difference at all: parameters, nodes, ids and order the same. */
        out->unchanged = shmring_nodeset_diff_count(diff) == 0;
        shmring_nodeset_diff_free(diff);
    }
    if (err != 0) {
        shmring_nodeset_free(loaded);
        return ringctl_fail(EXIT_FAILED, "%s: %s", in->label, shmring_strerror(err));
    }
    shmring_nodeset_params(loaded, &out->params);
    out->params_changed = out->diff.params_changed;
    out->node_count = shmring_nodeset_count(loaded);
    /* The same file loaded again (a configuration run, say) publishes nothing, as
     * weight, up and down do when nothing changes: every worker would otherwise map
     * and validate a new version for no change. Ids count, and so does node order
     * where the algorithm depends on it (the diff's rule, shared with the
     * fingerprint). */
    if (out->unchanged) {
        shmring_nodeset_free(loaded);
        return EXIT_OK;
    }
    shmring_nodeset_free(*set);
    *set = loaded;
    return EXIT_OK;
}

int ringctl_cmd_load(struct ringctl *ctl)
{
    struct load_input in;
    int status = ringctl_read_load_input(ctl->args[0], &in);
    if (status != EXIT_OK)
        return status;
    uint32_t from_file = UINT32_MAX;
    in.balance_percent = &from_file;
    status = ringctl_run_change(ctl, OPEN_CREATE, change_load, &in);
    free(in.text);
    if (status != EXIT_OK)
        return status;
    /* The flag wins over the file; the factor is the board's, not the version's. */
    bool flag = (ctl->given & OPTION(BALANCE_FACTOR)) != 0;
    return ringctl_board_apply(ctl, false, flag || from_file != UINT32_MAX,
                               flag ? ctl->balance_percent : from_file);
}
