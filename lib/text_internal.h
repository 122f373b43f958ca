#ifndef SHMRING_TEXT_INTERNAL_H
#define SHMRING_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Are the LEN bytes at TEXT valid UTF-8 without control characters (C0 or DEL)? */
bool shmring__text_valid(const char *text, size_t len);

#endif
