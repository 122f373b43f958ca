/* Error messages and names, and the library version. */
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
    /* Any other negated errno value (errno values stay below the library's own
     * -1000): strerror() texts are static for known codes; the library's unused codes
     * get the static text below rather than glibc's thread-local "Unknown error N". */
    if (err < 0 && err > SHMRING_EEMPTY)
        return strerror(-err);
    return "unknown shmring error";
}

const char *shmring_err_name(int err)
{
    switch (err) {
#define SHMRING_ERROR_NAME(name, value, text)                                            \
    case SHMRING_##name:                                                                 \
        return "SHMRING_" #name;
        SHMRING_ERRNO_MAP(SHMRING_ERROR_NAME)
#undef SHMRING_ERROR_NAME
    default:
        return "unknown";
    }
}

const char *shmring_version(void)
{
    return SHMRING_VERSION_STRING;
}
