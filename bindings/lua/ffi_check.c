/*
 * Compiled by the build, never linked: proves that the generated shmring_ffi.h is
 * valid C next to the system headers (its uid_t is the platform's) and that its
 * numeric error codes are the platform's errno values.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shmring_ffi.h"

_Static_assert(SHMRING_ENOENT == -ENOENT, "ENOENT");
_Static_assert(SHMRING_EACCES == -EACCES, "EACCES");
_Static_assert(SHMRING_EPERM == -EPERM, "EPERM");
_Static_assert(SHMRING_ENOMEM == -ENOMEM, "ENOMEM");
_Static_assert(SHMRING_ENOSPC == -ENOSPC, "ENOSPC");
_Static_assert(SHMRING_EEXIST == -EEXIST, "EEXIST");
_Static_assert(SHMRING_EINVAL == -EINVAL, "EINVAL");
_Static_assert(SHMRING_EMFILE == -EMFILE, "EMFILE");
_Static_assert(SHMRING_EIO == -EIO, "EIO");
_Static_assert(SHMRING_EEMPTY == -1000, "EEMPTY");
_Static_assert(sizeof(shmring_node_t) == 552, "shmring_node_t");
