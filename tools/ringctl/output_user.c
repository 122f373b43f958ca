/*
 * How ringctl and its sync helper name a user in a diagnostic (the owner of a ring, a
 * ring directory or a state file). A file of its own, because the sync helper's
 * modules (the ringctl_sync library) use it and link no other part of the output.
 */
#include <pwd.h>
#include <stdio.h>

#include "output.h"

void ringctl_describe_user(uid_t uid, char *out, size_t size)
{
    const struct passwd *user = getpwuid(uid);
    if (user != NULL)
        snprintf(out, size, "uid %lu (%s)", (unsigned long)uid, user->pw_name);
    else
        snprintf(out, size, "uid %lu", (unsigned long)uid);
}
