/* Error messages and the library version. */
#include <string.h>

#include "shmring.h"

const char *shmring_strerror(int err)
{
    switch (err) {
#define SHMRING_ERROR_TEXT(name, value, text)                                            \
    case SHMRING_##name:                                                                 \
        return text;
        SHMRING_ERRNO_MAP(SHMRING_ERROR_TEXT)
#undef SHMRING_ERROR_TEXT
    case 0:
        return "success";
    default:
        break;
    }
    /* Any other negated errno value: strerror() texts are static for known codes and
     * glibc's "Unknown error N" is returned from a thread-local buffer. */
    if (err < 0 && err > -4096)
        return strerror(-err);
    return "unknown shmring error";
}

const char *shmring_version(void)
{
    return SHMRING_VERSION_STRING;
}
