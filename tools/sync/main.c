/*
 * ringctl-sync: the helper that runs `ringctl sync` (cmd_sync.h). ringctl executes
 * it with ringctl's own command line, so it sees "sync" among its arguments and
 * parses them as ringctl would have.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_sync.h"
#include "ringctl.h"

int main(int argc, char **argv)
{
    /* ringctl did this before executing us; the helper may be started directly. */
    if (!ringctl_standard_descriptors_valid())
        return fail(EXIT_FAILED, "cannot open /dev/null: %s", strerror(errno));
    return ringctl_sync_run(argc, argv);
}
