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
        ringctl_fail(EXIT_FAILED, "no node named '%s' in ring '%s'", name, ctl->ring);
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
        return ringctl_fail(EXIT_FAILED, "node '%s' already exists in ring '%s'", name,
                            ctl->ring);
    /* The hash key was checked with the options; only memory can fail here, and a
     * failed change publishes nothing. */
    if (err == 0 && ctl->hash_key != NULL)
        err = shmring_nodeset_set_hash_key(*set, name, ctl->hash_key);
    if (err != 0)
        return ringctl_fail(EXIT_FAILED, "cannot add node '%s' to ring '%s': %s", name,
                            ctl->ring, shmring_strerror(err));
    shmring_node_info_t node = {.id = id,
                                .weight = ctl->weight,
                                .state = SHMRING_STATE_UP,
                                .name = name,
                                .address = address,
                                .hash_key = ctl->hash_key};
    out->action = ACTION_ADD;
    ringctl_change_keep_node(out, &node);
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
    ringctl_change_keep_node(out, &node); /* before the set frees the node's strings */
    int err = shmring_nodeset_remove(*set, ctl->args[0]);
    if (err != 0)
        return ringctl_library_failure("change", ctl, err);
    return EXIT_OK;
}

/* What weight, down and up set: one attribute of one node. */
struct node_setting {
    enum change_action action; /* ACTION_WEIGHT, ACTION_DOWN or ACTION_UP */
    uint32_t weight;
    shmring_state_t state;
};

static int change_setting(const struct ringctl *ctl, const void *input,
                          shmring_nodeset_t **set, struct change *out)
{
    const struct node_setting *setting = input;
    bool weight = setting->action == ACTION_WEIGHT;
    shmring_node_info_t node;
    int status = find_node(ctl, *set, ctl->args[0], &node);
    if (status != EXIT_OK)
        return status;
    out->action = setting->action;
    out->previous_weight = node.weight;
    out->unchanged =
        weight ? node.weight == setting->weight : node.state == setting->state;
    if (weight)
        node.weight = setting->weight;
    else
        node.state = setting->state;
    ringctl_change_keep_node(out, &node);
    if (out->unchanged)
        return EXIT_OK;
    int err = weight ? shmring_nodeset_set_weight(*set, ctl->args[0], setting->weight)
                     : shmring_nodeset_set_state(*set, ctl->args[0], setting->state);
    if (err != 0)
        return ringctl_library_failure("change", ctl, err);
    return EXIT_OK;
}

int ringctl_cmd_add(struct ringctl *ctl)
{
    if (shmring_node_name_check(ctl->args[0]) != 0)
        return ringctl_fail(EXIT_USAGE,
                            "invalid node name '%s': it must have 1 to %d bytes of UTF-8 "
                            "and no control characters",
                            ctl->args[0], SHMRING_NAME_MAX);
    if (shmring_node_address_check(ctl->args[1]) != 0)
        return ringctl_fail(EXIT_USAGE,
                            "invalid address '%s': it must have 1 to %d bytes of UTF-8 "
                            "and no control characters",
                            ctl->args[1], SHMRING_ADDRESS_MAX);
    return ringctl_run_change(ctl, OPEN_EXISTING, change_add, NULL);
}

int ringctl_cmd_remove(struct ringctl *ctl)
{
    return ringctl_run_change(ctl, OPEN_EXISTING, change_remove, NULL);
}

int ringctl_cmd_weight(struct ringctl *ctl)
{
    struct node_setting setting = {.action = ACTION_WEIGHT};
    int status = ringctl_parse_weight(ctl->args[1], &setting.weight);
    if (status != EXIT_OK)
        return status;
    return ringctl_run_change(ctl, OPEN_EXISTING, change_setting, &setting);
}

int ringctl_cmd_down(struct ringctl *ctl)
{
    static const struct node_setting down = {.action = ACTION_DOWN,
                                             .state = SHMRING_STATE_DOWN};
    return ringctl_run_change(ctl, OPEN_EXISTING, change_setting, &down);
}

int ringctl_cmd_up(struct ringctl *ctl)
{
    static const struct node_setting up = {.action = ACTION_UP,
                                           .state = SHMRING_STATE_UP};
    return ringctl_run_change(ctl, OPEN_EXISTING, change_setting, &up);
}
