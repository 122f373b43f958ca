/*
 * The standard descriptors of ringctl and of its sync helper, made valid before
 * either opens anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "ringctl.h"

/*
 * Makes descriptors 0, 1 and 2 valid, on /dev/null, where they are closed (as sudo
 * and OpenSSH do). Otherwise the first file this program opens (a ring's directory,
 * its lock, a version being written) would take the number of a closed standard
 * stream, and our output or error messages would be written into it. Returns false
 * if /dev/null cannot be opened.
 */
bool ringctl_standard_descriptors_valid(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        /* Every lower descriptor is open by now, so open() returns FD itself. */
        int opened = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        if (opened != fd) {
            if (opened >= 0)
                close(opened);
            return false;
        }
    }
    return true;
}
