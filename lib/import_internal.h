/*
 * What the readers of peers' configuration files share (lib/import*.c): the error
 * report, strict numbers, quoting untrusted words into messages, and adding a
 * server as a node with the failure named.
 */
#ifndef SHMRING_IMPORT_INTERNAL_H
#define SHMRING_IMPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shmring_ctl.h"

/* The longest piece of an untrusted word quoted into a message, in bytes. */
#define IMPORT_QUOTE_MAX 64

/* Room for one quoted word: every byte may become \xNN, plus "..." and the NUL. */
#define IMPORT_QUOTE_SIZE (IMPORT_QUOTE_MAX * 4 + 4)

/* One reader per format; each makes a whole node set or fills *error. */
int shmring__import_nginx(const char *text, size_t len, const char *section,
                          shmring_nodeset_t **out, shmring_import_error_t *error);
int shmring__import_twemproxy(const char *text, size_t len, const char *section,
                              shmring_nodeset_t **out, shmring_import_error_t *error);
int shmring__import_libketama(const char *text, size_t len, shmring_nodeset_t **out,
                              shmring_import_error_t *error);

/* Fills *error with LINE and the formatted message; returns SHMRING_EINVAL. */
int shmring__import_fail(shmring_import_error_t *error, int line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first problem of one section (an nginx upstream, a nutcracker pool) in
 * *error with LINE and the formatted message, and sets *failed; a later problem of
 * the same section is not recorded, so the section is still read to its end and the
 * rest of the file with it. Returns 0. */
int shmring__import_fail_once(bool *failed, shmring_import_error_t *error, int line,
                              const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Writes the LEN bytes at WORD into QUOTED (IMPORT_QUOTE_SIZE bytes) so that a
 * message can show them on one line whatever they hold: printable ASCII and valid
 * UTF-8 as they are, every other byte as \xNN, cut after IMPORT_QUOTE_MAX bytes with
 * "...". Returns QUOTED.
 */
const char *shmring__import_quote(char *quoted, const char *word, size_t len);

/* Parses the LEN bytes at TEXT as a decimal number from 1 to MAX: digits only, no
 * sign, no leading zero, no overflow. */
bool shmring__import_number(const char *text, size_t len, uint32_t max, uint32_t *out);

/*
 * Appends a node to SET (NAME, ADDRESS, WEIGHT, STATE, and HASH_KEY unless NULL),
 * naming the server WHAT in the message of a failure on LINE: a name or address that
 * is not 1-255 bytes of UTF-8 text, or one that an earlier server already has.
 * Returns 0, SHMRING_EINVAL (with *error filled) or SHMRING_ENOMEM.
 */
int shmring__import_add(shmring_nodeset_t *set, const char *name, const char *address,
                        uint32_t weight, shmring_state_t state, const char *hash_key,
                        int line, shmring_import_error_t *error);

/* Makes an empty node set with ALGORITHM and HASH: 0 or SHMRING_ENOMEM. */
int shmring__import_nodeset(shmring_algorithm_t algorithm, shmring_hash_t hash,
                            shmring_nodeset_t **out);

#endif
