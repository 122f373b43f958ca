/* ringctl add, remove, weight, down and up: change one node of the node set. */
#include <string.h>

#include "ringctl.h"

/* Finds NAME in SET or says there is no such node. */
static int find_node(const struct ringctl *ctl, const shmring_nodeset_t *set,
                     const char *name, shmring_node_info_t *node)
{
    size_t index;
    if (shmring_nodeset_find(set, name, &index) != 0 ||
        shmring_nodeset_get(set, index, node) != 0) {
        fail(EXIT_FAILED, "no node named '%s' in ring '%s'", name, ctl->ring);
        return EXIT_FAILED; /* spelled out: *node is not filled on this path */
    }
    return EXIT_OK;
}

static int change_add(const struct ringctl *ctl, const void *input,
                      shmring_nodeset_t **set, struct change *out)
{
    (void)input;
    const char *name = ctl->args[0], *address = ctl->args[1];
    uint32_t id;
    int err =
        shmring_nodeset_add(*set, name, address, ctl->weight, SHMRING_STATE_UP, &id);
    if (err == SHMRING_EDUPLICATE)
        return fail(EXIT_FAILED, "node '%s' already exists in ring '%s'", name,
                    ctl->ring);
    if (err != 0)
        return fail(EXIT_FAILED, "cannot add node '%s' to ring '%s': %s", name, ctl->ring,
                    shmring_strerror(err));
    shmring_node_info_t node = {.id = id,
                                .weight = ctl->weight,
                                .state = SHMRING_STATE_UP,
                                .name = name,
                                .address = address};
    out->action = ACTION_ADD;
    change_keep_node(out, &node);
    return EXIT_OK;
}

static int change_remove(const struct ringctl *ctl, const void *input,
                         shmring_nodeset_t **set, struct change *out)
{
    (void)input;
    shmring_node_info_t node;
    int status = find_node(ctl, *set, ctl->args[0], &node);
    if (status != EXIT_OK)
        return status;
    out->action = ACTION_REMOVE;
    change_keep_node(out, &node); /* before the set frees the node's strings */
    int err = shmring_nodeset_remove(*set, ctl->args[0]);
    if (err != 0)
        return library_failure("change", ctl, err);
    return EXIT_OK;
}

static int change_weight(const struct ringctl *ctl, const void *input,
                         shmring_nodeset_t **set, struct change *out)
{
    const uint32_t *weight = input;
    shmring_node_info_t node;
    int status = find_node(ctl, *set, ctl->args[0], &node);
    if (status != EXIT_OK)
        return status;
    out->action = ACTION_WEIGHT;
    out->previous_weight = node.weight;
    out->unchanged = node.weight == *weight;
    node.weight = *weight;
    change_keep_node(out, &node);
    int err =
        out->unchanged ? 0 : shmring_nodeset_set_weight(*set, ctl->args[0], *weight);
    if (err != 0)
        return library_failure("change", ctl, err);
    return EXIT_OK;
}

static int change_state(const struct ringctl *ctl, const void *input,
                        shmring_nodeset_t **set, struct change *out)
{
    const shmring_state_t *state = input;
    shmring_node_info_t node;
    int status = find_node(ctl, *set, ctl->args[0], &node);
    if (status != EXIT_OK)
        return status;
    out->action = *state == SHMRING_STATE_UP ? ACTION_UP : ACTION_DOWN;
    out->unchanged = node.state == *state;
    node.state = *state;
    change_keep_node(out, &node);
    int err = out->unchanged ? 0 : shmring_nodeset_set_state(*set, ctl->args[0], *state);
    if (err != 0)
        return library_failure("change", ctl, err);
    return EXIT_OK;
}

int ringctl_cmd_add(struct ringctl *ctl)
{
    if (shmring_node_name_check(ctl->args[0]) != 0)
        return fail(EXIT_USAGE,
                    "invalid node name '%s': it must have 1 to %d bytes of UTF-8 "
                    "and no control characters",
                    ctl->args[0], SHMRING_NAME_MAX);
    if (shmring_node_address_check(ctl->args[1]) != 0)
        return fail(EXIT_USAGE,
                    "invalid address '%s': it must have 1 to %d bytes of UTF-8 "
                    "and no control characters",
                    ctl->args[1], SHMRING_ADDRESS_MAX);
    return run_change(ctl, OPEN_EXISTING, change_add, NULL);
}

int ringctl_cmd_remove(struct ringctl *ctl)
{
    return run_change(ctl, OPEN_EXISTING, change_remove, NULL);
}

int ringctl_cmd_weight(struct ringctl *ctl)
{
    uint32_t weight;
    int status = ringctl_parse_weight(ctl->args[1], &weight);
    if (status != EXIT_OK)
        return status;
    return run_change(ctl, OPEN_EXISTING, change_weight, &weight);
}

int ringctl_cmd_down(struct ringctl *ctl)
{
    static const shmring_state_t down = SHMRING_STATE_DOWN;
    return run_change(ctl, OPEN_EXISTING, change_state, &down);
}

int ringctl_cmd_up(struct ringctl *ctl)
{
    static const shmring_state_t up = SHMRING_STATE_UP;
    return run_change(ctl, OPEN_EXISTING, change_state, &up);
}
