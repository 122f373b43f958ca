/* The help of the sync helper, ringctl-sync: `ringctl sync --help`. */
#include <stdio.h>

#include "cmd_sync.h"
#include "ringctl.h"

void output_sync_help(const struct sync_option *options, size_t count)
{
    fputs(
        "Usage: ringctl [-r RING] [--dir DIR] sync SOURCE [OPTIONS]\n"
        "\n"
        "Keep RING equal to a source of truth, publishing only when it changes. SOURCE\n"
        "is one of: --etcd URL[,URL...] --key KEY; --etcd URL[,URL...] --prefix PREFIX;\n"
        "--file PATH. One log line per event on standard error; SIGTERM or SIGINT:\n"
        "exit 0.\n"
        "\n"
        "Options:\n",
        stdout);
    enum { HELP_COLUMN = 29 };
    for (size_t i = 0; i < count; i++) {
        const struct sync_option *o = &options[i];
        /* "-r, --ring RING", or "    --etcd URL" aligned under it. */
        int used = o->letter ? printf("  -%c, --%s", o->letter, o->name)
                             : printf("      --%s", o->name);
        if (o->argument != NULL)
            used += printf(" %s", o->argument);
        if (used + 1 > HELP_COLUMN) {
            printf("\n%*s", HELP_COLUMN, "");
        } else {
            printf("%*s", HELP_COLUMN - used, "");
        }
        /* Folded before column 80. */
        output_wrapped(HELP_COLUMN, HELP_COLUMN, 80, o->help);
    }
}
