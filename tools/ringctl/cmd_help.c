/* ringctl help: the whole help, or one command's (output_help.c writes both). */
#include "ringctl.h"

int ringctl_cmd_help(struct ringctl *ctl)
{
    if (ctl->arg_count == 0) {
        output_help();
        return EXIT_OK;
    }
    const struct ringctl_command *command = ringctl_command_find(ctl->args[0]);
    if (command == NULL)
        return ringctl_unknown_command(ctl->args[0]);
    output_help_command(command);
    return EXIT_OK;
}
