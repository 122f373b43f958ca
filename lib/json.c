/*
 * JSON node sets: reading a node set from JSON text, with the path of the offending
 * value in every error message, and writing a node set as JSON that reads back to
 * the same nodes and parameters.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "algorithm_internal.h"
#include "nodeset_internal.h"
#include "params_internal.h"
#include "shmring_ctl.h"
#include "text_internal.h"

/*
 * Error messages quote keys and values from the document. They are cut after
 * QUOTE_MAX bytes, so that a message always fits shmring_json_error_t's text: the
 * longest path ("nodes[<20 digits>]." and a quoted key) plus the longest message
 * with a quoted value stays well under 320 bytes.
 */
#define QUOTE_MAX 64
#define QUOTED_SIZE (QUOTE_MAX + 8)
#define PATH_SIZE 128

/* ---- Error messages ------------------------------------------------------- */

/*
 * Writes VALUE into BUF (QUOTED_SIZE bytes) as a double-quoted string with JSON's
 * escapes, cut short with "..." after QUOTE_MAX bytes: whatever the document holds,
 * the message stays one line of bounded length, and a cut never splits an escape or
 * a UTF-8 sequence.
 */
static void quote(char *buf, const char *value)
{
    size_t used = 0;
    buf[used++] = '"';
    const unsigned char *p = (const unsigned char *)value;
    const unsigned char *end = p + strlen(value);
    while (*p != '\0') {
        char unit[8];
        size_t unit_length;
        size_t consumed = 1;
        if (*p == '"' || *p == '\\') {
            unit[0] = '\\';
            unit[1] = (char)*p;
            unit_length = 2;
        } else if (*p == '\n' || *p == '\r' || *p == '\t') {
            unit[0] = '\\';
            unit[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
            unit_length = 2;
        } else if (*p < 0x20 || *p == 0x7f) {
            unit_length = (size_t)snprintf(unit, sizeof(unit), "\\u%04x", (unsigned)*p);
        } else {
            /* Jansson has checked the text is UTF-8; a byte that is not (it cannot
             * happen) is still copied alone rather than looping. */
            consumed = shmring__utf8_sequence(p, (size_t)(end - p));
            if (consumed == 0)
                consumed = 1;
            memcpy(unit, p, consumed);
            unit_length = consumed;
        }
        if (used - 1 + unit_length > QUOTE_MAX) {
            memcpy(buf + used, "...", 3);
            used += 3;
            break;
        }
        memcpy(buf + used, unit, unit_length);
        used += unit_length;
        p += consumed;
    }
    buf[used++] = '"';
    buf[used] = '\0';
}

/* Whether KEY can stand unquoted in a path: a plain identifier like the format's own
 * field names. */
static bool key_is_plain(const char *key)
{
    size_t length = strlen(key);
    if (length == 0 || length > QUOTE_MAX)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = key[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!plain)
            return false;
    }
    return true;
}

/* Writes the path of member KEY of the object at PARENT (NULL for the root), e.g.
 * "nodes[3].weight", or `nodes[0]."odd key"` for a key that is not plain. */
static void path_of_key(char *buf, const char *parent, const char *key)
{
    char quoted[QUOTED_SIZE];
    const char *shown = key;
    if (!key_is_plain(key)) {
        quote(quoted, key);
        shown = quoted;
    }
    if (parent == NULL)
        snprintf(buf, PATH_SIZE, "%s", shown);
    else
        snprintf(buf, PATH_SIZE, "%s.%s", parent, shown);
}

/* Fills ERROR's text with "PATH: " and the formatted message; returns SHMRING_EJSON. */
__attribute__((format(printf, 3, 0))) static int error_vset(shmring_json_error_t *error,
                                                            const char *path,
                                                            const char *format,
                                                            va_list args)
{
    int used = snprintf(error->text, sizeof(error->text), "%s: ", path);
    if (used > 0 && (size_t)used < sizeof(error->text))
        vsnprintf(error->text + used, sizeof(error->text) - (size_t)used, format, args);
    return SHMRING_EJSON;
}

/* Reports the value at PATH, e.g. "nodes[3]", with a message. */
__attribute__((format(printf, 3, 4))) static int
path_error(shmring_json_error_t *error, const char *path, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int err = error_vset(error, path, format, args);
    va_end(args);
    return err;
}

/* Like path_error() for member KEY of the object at PARENT (NULL for the root). */
__attribute__((format(printf, 4, 5))) static int member_error(shmring_json_error_t *error,
                                                              const char *parent,
                                                              const char *key,
                                                              const char *format, ...)
{
    char path[PATH_SIZE];
    path_of_key(path, parent, key);
    va_list args;
    va_start(args, format);
    int err = error_vset(error, path, format, args);
    va_end(args);
    return err;
}

/* Reports an error of Jansson's parser: a syntax error, a duplicate key, an invalid
 * UTF-8 sequence, a number too large for an integer, or no memory. */
static int syntax_error(const json_error_t *syntax, shmring_json_error_t *error)
{
    /* Jansson reports most allocation failures by their code, but one that happens
     * before parsing starts (the lexer's buffer) leaves the message empty. */
    if (json_error_code(syntax) == json_error_out_of_memory || syntax->text[0] == '\0')
        return SHMRING_ENOMEM;
    if (syntax->line < 1) {
        /* Jansson gives no position only for errors outside the text (a NULL text). */
        snprintf(error->text, sizeof(error->text), "%s", syntax->text);
    } else {
        error->line = syntax->line;
        /* Jansson gives the column of the character it stopped at, counting from 1,
         * but 0 when it stopped at the end of the input right after a newline or at
         * an empty input; an editor's cursor is in column 1 there. */
        error->column = syntax->column > 0 ? syntax->column : 1;
        snprintf(error->text, sizeof(error->text), "line %d, column %d: %s", error->line,
                 error->column, syntax->text);
    }
    /* Jansson quotes the token it stopped at verbatim ("near '...'"), and that token
     * may hold a control character; the message must stay one printable line. */
    for (char *c = error->text; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    }
    return SHMRING_EJSON;
}

/* ---- Reading -------------------------------------------------------------- */

/* Reads an integer from MIN to MAX. A string, a real (even 2.0), a boolean or null is
 * refused, so that "5" or 1.5 is never silently taken for a number. */
static bool integer_in_range(const json_t *value, json_int_t min, json_int_t max,
                             uint32_t *out)
{
    if (!json_is_integer(value))
        return false;
    json_int_t n = json_integer_value(value);
    if (n < min || n > max)
        return false;
    *out = (uint32_t)n;
    return true;
}

/* Room for the names of all algorithms, joined. */
#define ALGORITHM_NAMES_SIZE 512

/* Writes the algorithms' names, from the table, into OUT as "a, b or c". */
static void algorithm_names(char out[ALGORITHM_NAMES_SIZE])
{
    size_t count = shmring__algorithm_count(), used = 0, named = 0, last = 0;
    for (size_t i = 0; i < count; i++) {
        if (shmring__algorithm((unsigned)i) != NULL)
            last = i;
    }
    out[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        const struct placement_algorithm *algorithm = shmring__algorithm((unsigned)i);
        if (algorithm == NULL)
            continue;
        const char *separator = named++ == 0 ? "" : i == last ? " or " : ", ";
        int n = snprintf(out + used, ALGORITHM_NAMES_SIZE - used, "%s%s", separator,
                         algorithm->name);
        if (n < 0 || (size_t)n >= ALGORITHM_NAMES_SIZE - used)
            break;
        used += (size_t)n;
    }
}

/*
 * Reads the named choice FIELD, "algorithm" or "hash", into PARAMS: a string that the
 * library's parser of that field knows.
 */
static int read_choice(const json_t *value, const char *field, shmring_params_t *params,
                       shmring_json_error_t *error)
{
    if (!json_is_string(value))
        return path_error(error, field, "must be a string");
    const char *text = json_string_value(value);
    bool algorithm = strcmp(field, "algorithm") == 0;
    int err = algorithm ? shmring_algorithm_parse(text, &params->algorithm)
                        : shmring_hash_parse(text, &params->hash);
    if (err == 0)
        return 0;
    char quoted[QUOTED_SIZE];
    quote(quoted, text);
    char names[ALGORITHM_NAMES_SIZE];
    if (algorithm)
        algorithm_names(names);
    return path_error(error, field, "unknown %s %s (expected %s)", field, quoted,
                      algorithm ? names : /* Every hash, named once: a peer's own names by
                                           * their peer (docs/nodesets.md). */
                          "xxh3, md5, crc32, fnv1a, murmur3, twemproxy's hash: "
                          "names, xxh64, murmur2, murmur3_32, murmur3_128, "
                          "sdbm, djb2, wt6, *_avalanche, ketama, sha1, "
                          "sha256, sha512, native");
}

static int read_table_size(const json_t *value, uint32_t *out,
                           shmring_json_error_t *error)
{
    /* shmring_params_check() is the one place that knows which sizes a maglev table
     * may have; ask it about this size alone, before the other fields are known. */
    shmring_params_t probe;
    shmring_params_default(&probe);
    if (!integer_in_range(value, 0, SHMRING_POINTS_MAX, &probe.table_size) ||
        shmring_params_check(&probe) != 0)
        return path_error(error, "table_size",
                          "must be a prime number up to %u, or 0 for the default",
                          SHMRING_POINTS_MAX);
    *out = probe.table_size;
    return 0;
}

/*
 * Reads member KEY of the node at PATH, its "name" or its "address", into *out: a
 * string that the node-set API's check of that member accepts.
 */
static int read_node_text(const json_t *value, const char *path, const char *key,
                          const char **out, shmring_json_error_t *error)
{
    if (!json_is_string(value))
        return member_error(error, path, key, "must be a string");
    bool name = strcmp(key, "name") == 0;
    *out = json_string_value(value);
    int err = name ? shmring_node_name_check(*out) : shmring_node_address_check(*out);
    if (err != 0)
        return member_error(error, path, key,
                            "must be 1-%d bytes without control characters",
                            name ? SHMRING_NAME_MAX : SHMRING_ADDRESS_MAX);
    return 0;
}

/* Reads the node at INDEX of the "nodes" array and appends it to SET. */
static int read_node(json_t *node, size_t index, shmring_nodeset_t *set,
                     shmring_json_error_t *error)
{
    char path[PATH_SIZE];
    snprintf(path, sizeof(path), "nodes[%zu]", index);
    if (!json_is_object(node))
        return path_error(error, path, "must be an object");

    const char *name = NULL;
    const char *address = NULL;
    const char *hash_key = NULL;
    uint32_t weight = 1;
    shmring_state_t state = SHMRING_STATE_UP;
    uint32_t id = 0;
    bool id_given = false;
    const char *key;
    json_t *value;
    json_object_foreach(node, key, value)
    {
        if (strcmp(key, "id") == 0) {
            /* UINT32_MAX is the id counter's end (see shmring_nodeset_add()). */
            if (!integer_in_range(value, 0, UINT32_MAX - 1, &id))
                return member_error(error, path, key, "must be an integer from 0 to %u",
                                    UINT32_MAX - 1);
            id_given = true;
        } else if (strcmp(key, "name") == 0 || strcmp(key, "address") == 0) {
            int err = read_node_text(value, path, key,
                                     strcmp(key, "name") == 0 ? &name : &address, error);
            if (err != 0)
                return err;
        } else if (strcmp(key, "hash_key") == 0) {
            if (!json_is_string(value))
                return member_error(error, path, key, "must be a string");
            hash_key = json_string_value(value);
            if (shmring_node_address_check(hash_key) != 0)
                return member_error(error, path, key,
                                    "must be 1-%d bytes without control characters",
                                    SHMRING_ADDRESS_MAX);
        } else if (strcmp(key, "weight") == 0) {
            if (!integer_in_range(value, 1, SHMRING_WEIGHT_MAX, &weight))
                return member_error(error, path, key, "must be an integer from 1 to %d",
                                    SHMRING_WEIGHT_MAX);
        } else if (strcmp(key, "state") == 0) {
            const char *text = json_is_string(value) ? json_string_value(value) : "";
            if (strcmp(text, "up") == 0)
                state = SHMRING_STATE_UP;
            else if (strcmp(text, "down") == 0)
                state = SHMRING_STATE_DOWN;
            else
                return member_error(error, path, key, "must be \"up\" or \"down\"");
        } else {
            return member_error(error, path, key, "unknown field");
        }
    }
    if (name == NULL)
        return member_error(error, path, "name", "required string is missing");

    /* Nodes without an id are numbered once every node is read (read_nodes()). */
    int err = shmring__nodeset_add_with_id(set, name, address, weight, state, id);
    if (err == 0 && id_given)
        shmring__nodeset_mark_id_given(set, shmring_nodeset_count(set) - 1);
    if (err == SHMRING_EDUPLICATE) {
        char quoted[QUOTED_SIZE];
        quote(quoted, name);
        return member_error(error, path, "name", "duplicate node name %s", quoted);
    }
    if (err == SHMRING_ELIMIT)
        return path_error(error, path, "a node set holds at most %u nodes",
                          SHMRING_NODES_MAX);
    if (err != 0 && err != SHMRING_ENOMEM)
        return path_error(error, path, "%s", shmring_strerror(err));
    if (err == 0 && hash_key != NULL)
        err = shmring_nodeset_set_hash_key(set, name, hash_key);
    return err;
}

static int read_nodes(json_t *nodes, shmring_nodeset_t *set, shmring_json_error_t *error)
{
    if (!json_is_array(nodes))
        return path_error(error, "nodes", "must be an array");
    size_t index;
    json_t *node;
    json_array_foreach(nodes, index, node)
    {
        int err = read_node(node, index, set, error);
        if (err != 0)
            return err;
    }
    size_t first, second;
    int err = shmring__nodeset_settle_ids(set, &first, &second);
    if (err == SHMRING_EDUPLICATE) {
        char path[PATH_SIZE];
        snprintf(path, sizeof(path), "nodes[%zu].id", second);
        shmring_node_info_t duplicate;
        if (shmring_nodeset_get(set, second, &duplicate) == 0)
            return path_error(error, path, "duplicate id %" PRIu32 " (nodes[%zu] has it)",
                              duplicate.id, first);
    }
    if (err == SHMRING_ELIMIT) {
        char path[PATH_SIZE];
        snprintf(path, sizeof(path), "nodes[%zu]", first);
        return path_error(error, path, "no id is left after the largest given id");
    }
    return err;
}

/*
 * Settles the parameters once every field is read. A hash that the document gives
 * must suit its algorithm; a hash that only BASE gives was chosen for BASE's own
 * algorithm, so it falls back to the document's algorithm's default when that
 * algorithm cannot use it (a ring file switched to "ketama" must not need "hash" too).
 */
static int settle_params(shmring_params_t *params, bool hash_given,
                         shmring_json_error_t *error)
{
    /* The checks that need two fields, named by the field the document gave. */
    if (params->algorithm == SHMRING_ALGORITHM_ENVOY_MAGLEV &&
        params->table_size > ENVOY_MAGLEV_TABLE_SIZE_MAX)
        return path_error(error, "table_size", "must be at most %u for envoy-maglev",
                          ENVOY_MAGLEV_TABLE_SIZE_MAX);
    if (shmring__envoy_min_ring_size(params) > shmring__envoy_max_ring_size(params))
        return path_error(error, "min_ring_size", "must not exceed max_ring_size (%u)",
                          shmring__envoy_max_ring_size(params));
    int err = shmring_params_check(params);
    if (err == SHMRING_EBADHASH && !hash_given) {
        params->hash = shmring_algorithm_default_hash(params->algorithm);
        err = shmring_params_check(params);
    }
    if (err == SHMRING_EBADHASH && hash_given) {
        return path_error(
            error, "hash", "\"%s\" cannot be used with algorithm \"%s\" (expected %s)",
            shmring_hash_name(params->hash), shmring_algorithm_name(params->algorithm),
            shmring_hash_name(shmring_algorithm_default_hash(params->algorithm)));
    }
    if (err != 0) {
        /* Every field the document gives was checked as it was read, so what is
         * wrong came from BASE: the caller's mistake, not the document's. */
        snprintf(error->text, sizeof(error->text), "base parameters: %s",
                 shmring_strerror(err));
        return SHMRING_EINVAL;
    }
    return 0;
}

/* "balance_factor": 0 (none) or a number from 1 to 100 with at most two decimals,
 * kept in percent. */
static int read_balance_factor(const json_t *value, shmring_nodeset_t *set,
                               shmring_json_error_t *error)
{
    double number = json_is_number(value) ? json_number_value(value) : -1.0;
    double percent = number * 100.0;
    /* Exactly two decimals at most: 1.25 is 125.0000000000001 or so in binary. */
    double rounded = (double)(int64_t)(percent + 0.5);
    if (number < 0.0 || number > 100.0 || percent - rounded > 1e-6 ||
        rounded - percent > 1e-6 ||
        shmring_nodeset_set_balance_factor(set, (uint32_t)rounded) != 0)
        return path_error(error, "balance_factor",
                          "must be 0 (none) or a number from 1 to 100 with at most two "
                          "decimals");
    return 0;
}

static int read_document(json_t *root, shmring_params_t *params, shmring_nodeset_t *set,
                         shmring_json_error_t *error)
{
    if (!json_is_object(root))
        return path_error(error, "(root)", "must be an object");

    bool hash_given = false;
    bool nodes_given = false;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        int err;
        if (strcmp(key, "algorithm") == 0) {
            err = read_choice(value, key, params, error);
        } else if (strcmp(key, "hash") == 0) {
            err = read_choice(value, key, params, error);
            hash_given = true;
        } else if (strcmp(key, "vnodes") == 0) {
            err = integer_in_range(value, 1, SHMRING_VNODES_MAX, &params->vnodes)
                      ? 0
                      : path_error(error, "vnodes", "must be an integer from 1 to %d",
                                   SHMRING_VNODES_MAX);
        } else if (strcmp(key, "table_size") == 0) {
            err = read_table_size(value, &params->table_size, error);
        } else if (strcmp(key, "min_ring_size") == 0 ||
                   strcmp(key, "max_ring_size") == 0) {
            uint32_t *size =
                key[1] == 'i' ? &params->min_ring_size : &params->max_ring_size;
            err = integer_in_range(value, 1, ENVOY_RING_SIZE_MAX, size)
                      ? 0
                      : path_error(error, key, "must be an integer from 1 to %u",
                                   ENVOY_RING_SIZE_MAX);
        } else if (strcmp(key, "balance_factor") == 0) {
            err = read_balance_factor(value, set, error);
        } else if (strcmp(key, "nodes") == 0) {
            err = read_nodes(value, set, error);
            nodes_given = true;
        } else {
            err = member_error(error, NULL, key, "unknown field");
        }
        if (err != 0)
            return err;
    }
    if (!nodes_given)
        return path_error(error, "nodes", "required array is missing");

    int err = settle_params(params, hash_given, error);
    if (err != 0)
        return err;
    return shmring_nodeset_set_params(set, params);
}

int shmring_nodeset_from_json(const char *text, size_t len, const shmring_params_t *base,
                              shmring_nodeset_t **out, shmring_json_error_t *error)
{
    shmring_json_error_t unused;
    if (error == NULL)
        error = &unused;
    /* Whole, reserved fields included (see shmring.h's rule for public structs). */
    memset(error, 0, sizeof(*error));

    shmring_params_t params;
    if (base != NULL)
        params = *base;
    else
        shmring_params_default(&params);

    /* JSON_DECODE_ANY lets a document that is a bare string, number or null reach the
     * "(root): must be an object" check, like an array does, instead of failing as a
     * syntax error. */
    json_error_t syntax;
    memset(&syntax, 0, sizeof(syntax));
    json_t *root =
        json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &syntax);
    int err;
    if (root == NULL) {
        err = syntax_error(&syntax, error);
    } else {
        shmring_nodeset_t *set;
        err = shmring_nodeset_new(&set);
        if (err == 0) {
            err = read_document(root, &params, set, error);
            if (err == 0)
                *out = set;
            else
                shmring_nodeset_free(set);
        }
        json_decref(root);
    }
    if (err != 0 && error->text[0] == '\0')
        snprintf(error->text, sizeof(error->text), "%s", shmring_strerror(err));
    return err;
}

/* ---- Writing -------------------------------------------------------------- */

/* Sets KEY of OBJECT to the string TEXT: node sets hold only valid UTF-8 (see
 * shmring_node_name_check()), so Jansson need not check it again. */
static int set_string(json_t *object, const char *key, const char *text)
{
    return json_object_set_new(object, key, json_stringn_nocheck(text, strlen(text)));
}

static int write_node(json_t *nodes, const shmring_node_info_t *node)
{
    json_t *object = json_object();
    /* On failure Jansson releases OBJECT; on success NODES owns it. */
    if (json_array_append_new(nodes, object) != 0 ||
        set_string(object, "name", node->name) != 0 ||
        json_object_set_new(object, "id", json_integer(node->id)) != 0 ||
        set_string(object, "address", node->address) != 0 ||
        (node->hash_key != NULL && set_string(object, "hash_key", node->hash_key) != 0) ||
        json_object_set_new(object, "weight", json_integer(node->weight)) != 0 ||
        set_string(object, "state", node->state == SHMRING_STATE_DOWN ? "down" : "up") !=
            0)
        return SHMRING_ENOMEM;
    return 0;
}

static int write_document(const shmring_nodeset_t *set, json_t *root)
{
    shmring_params_t params;
    shmring_nodeset_params(set, &params);
    /* The key order here is the order of the output (JSON_PRESERVE_ORDER). */
    if (set_string(root, "algorithm", shmring_algorithm_name(params.algorithm)) != 0 ||
        set_string(root, "hash", shmring_hash_name(params.hash)) != 0 ||
        json_object_set_new(root, "vnodes", json_integer(params.vnodes)) != 0 ||
        /* A maglev ring always says its table size (0: the default), so that loading
         * the text into a ring with another size reproduces this one exactly. */
        ((params.table_size != 0 || shmring__algorithm_has_table(params.algorithm)) &&
         json_object_set_new(root, "table_size", json_integer(params.table_size)) != 0) ||
        (params.min_ring_size != 0 &&
         json_object_set_new(root, "min_ring_size", json_integer(params.min_ring_size)) !=
             0) ||
        (params.max_ring_size != 0 &&
         json_object_set_new(root, "max_ring_size", json_integer(params.max_ring_size)) !=
             0))
        return SHMRING_ENOMEM;
    /* On failure Jansson releases NODES; on success ROOT owns it. */
    json_t *nodes = json_array();
    if (json_object_set_new(root, "nodes", nodes) != 0)
        return SHMRING_ENOMEM;

    size_t count = shmring_nodeset_count(set);
    for (size_t i = 0; i < count; i++) {
        shmring_node_info_t node;
        int err = shmring_nodeset_get(set, i, &node);
        if (err == 0)
            err = write_node(nodes, &node);
        if (err != 0)
            return err;
    }
    return 0;
}

int shmring_nodeset_to_json(const shmring_nodeset_t *set, char **text)
{
    json_t *root = json_object();
    if (root == NULL)
        return SHMRING_ENOMEM;
    int err = write_document(set, root);
    if (err != 0) {
        json_decref(root);
        return err;
    }

    /* json_dumps() would return memory from Jansson's allocator, which a program may
     * replace (json_set_alloc_funcs()); the caller frees *text with free(), so dump
     * into a buffer of our own, with room for the final newline. */
    const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER;
    size_t length = json_dumpb(root, NULL, 0, flags);
    char *buffer = length != 0 ? malloc(length + 2) : NULL;
    if (buffer == NULL || json_dumpb(root, buffer, length, flags) != length) {
        free(buffer);
        json_decref(root);
        return SHMRING_ENOMEM;
    }
    json_decref(root);
    buffer[length] = '\n';
    buffer[length + 1] = '\0';
    *text = buffer;
    return 0;
}
