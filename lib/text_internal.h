#ifndef SHMRING_TEXT_INTERNAL_H
#define SHMRING_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Are the LEN bytes at TEXT valid UTF-8 without control characters (C0, DEL, C1)? */
bool shmring__text_valid(const char *text, size_t len);

/* Length of the UTF-8 sequence starting at S (at most LEN bytes), or 0 if invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629). */
size_t shmring__utf8_sequence(const unsigned char *s, size_t len);

/*
 * Orders two texts (A_LEN and B_LEN bytes) byte by byte, a prefix before what
 * extends it: the order in which placement visits node names, and in which node
 * names are matched between snapshots. Returns <0, 0 or >0 like memcmp().
 */
int shmring__text_compare(const char *a, size_t a_len, const char *b, size_t b_len);

#endif
