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
int shmring__import_haproxy(const char *text, size_t len, const char *section,
                            shmring_nodeset_t **out, shmring_import_error_t *error);
int shmring__import_libketama(const char *text, size_t len, shmring_nodeset_t **out,
                              shmring_import_error_t *error);

/* Fills *error with LINE and the formatted message; returns SHMRING_EINVAL. */
int shmring__import_fail(shmring_import_error_t *error, int line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * One named section of a peer's file (an nginx upstream, a nutcracker pool): where it
 * starts, the node set read from it, and its first problem, which is reported only if
 * this is the section imported. Each format's own section type begins with one, so
 * the calls below can walk an array of them.
 */
struct import_section {
    char *name;
    int line;
    shmring_nodeset_t *set;
    shmring_import_error_t error;
    bool failed;
    size_t servers;
};

/* Records the first problem of SECTION with LINE and the formatted message; a later
 * problem of the same section is not recorded, so the section is still read to its end
 * and the rest of the file with it. Returns 0. */
int shmring__import_fail_once(struct import_section *section, int line,
                              const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* What a format's sections are: their names in messages ("pool" / "pools" /
 * "no pool") and the algorithm of the node sets read from them. */
struct import_section_kind {
    const char *one;
    const char *many;
    const char *none;
    shmring_algorithm_t algorithm;
};

/*
 * Appends a section named by the NAME_LEN bytes at NAME, starting on LINE, to the
 * *COUNT sections at *SECTIONS (room for *CAPACITY, each SIZE bytes and beginning
 * with a struct import_section), growing the array as needed. The new one is zeroed,
 * with an empty node set of KIND's algorithm. A name given twice is refused. Returns
 * 0, SHMRING_EINVAL (with *error filled) or SHMRING_ENOMEM.
 */
int shmring__import_section_new(void **sections, size_t *count, size_t *capacity,
                                size_t size, const char *name, size_t name_len, int line,
                                const struct import_section_kind *kind,
                                shmring_import_error_t *error);

/*
 * Chooses among the COUNT sections at SECTIONS, each SIZE bytes and beginning with a
 * struct import_section: the one named WANTED, or without a name the file's only
 * one. On success *CHOSEN is that section's own problem-free node set, handed over
 * (NULL in the section); otherwise *error names what is wrong. Returns 0 or
 * SHMRING_EINVAL.
 */
int shmring__import_take(void *sections, size_t count, size_t size, const char *wanted,
                         const struct import_section_kind *kind,
                         shmring_nodeset_t **chosen, shmring_import_error_t *error);

/* Frees the COUNT sections at SECTIONS (each SIZE bytes, as above) and the array. */
void shmring__import_sections_free(void *sections, size_t count, size_t size);

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
