/*
 * Shmring\Ring over libshmring's reader API. The extension adds no ring logic of its
 * own: it converts arguments, makes the call, and maps the SHMRING_E* code to an
 * exception carrying it (getCode()).
 *
 * Handles are per process, not per request: PHP frees everything a request allocated
 * when it ends, so a ring opened per request would be mapped and validated again on
 * every request (milliseconds on a large ring). The registry in the module globals
 * keeps each handle from its first `new Shmring\Ring` until the module shuts down;
 * Ring objects only point at a registry entry. A handle keeps working in a forked
 * child (libshmring re-registers its reader state after fork), so a ring the PHP-FPM
 * master opened before forking (opcache.preload, say) is inherited by its workers
 * together with the registry, which is a plain copy-on-write copy in each child.
 *
 * Handles are opened SHMRING_OPEN_SERIALIZED, which spares each lookup liburcu's
 * read-side section: the registry lives in the module globals, which are per thread
 * in a thread-safe (ZTS) PHP, so a handle is only ever used by the one thread that
 * runs requests in its process (FPM, CLI) or owns those globals (ZTS), and a PHP
 * thread runs one call at a time.
 *
 * A Shmring\Lease (Ring::acquire()) is a request's: it is released by release(), by
 * the object's free handler (the last reference gone: out of scope, an exception
 * unwinding past it), or at the latest by RSHUTDOWN, which releases every lease the
 * request still holds (one kept in a static or a global, say), so that a worker
 * never carries a count into its next request.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "php.h"
#include "ext/standard/info.h"
#include "ext/spl/spl_exceptions.h"
#include "zend_exceptions.h"
#include "zend_smart_str.h"

#include <errno.h>
#include <shmring.h>

#include "php_shmring.h"
#include "shmring_arginfo.h"

ZEND_DECLARE_MODULE_GLOBALS(shmring)

static zend_class_entry *shmring_node_ce;
static zend_class_entry *shmring_status_ce;
static zend_class_entry *shmring_ring_ce;
static zend_class_entry *shmring_lease_ce;
static zend_class_entry *shmring_exception_ce;
static zend_class_entry *shmring_ring_not_found_ce;
static zend_class_entry *shmring_permission_ce;
static zend_class_entry *shmring_invalid_ring_ce;
static zend_class_entry *shmring_empty_ring_ce;
static zend_class_entry *shmring_all_down_ce;
static zend_class_entry *shmring_node_not_found_ce;

static zend_object_handlers shmring_ring_handlers;
static zend_object_handlers shmring_lease_handlers;

/*
 * What the registry keeps per ring: the handle, and this request's Node objects of
 * one version of it. PHP frees a request's objects when the request ends, so the
 * nodes live in a request-allocated table (NULL outside a request that used it),
 * emptied at RSHUTDOWN; within a request every lookup that answers a node from a
 * version of one fingerprint returns the same Node object, made on the node's first
 * lookup. The fingerprint covers every property of a Node.
 */
typedef struct registry_entry {
    shmring_t *ring;
    uint64_t nodes_fingerprint;
    /* The Node objects by id: an array for ids below NODES_BY_ID (request memory,
     * NULL outside a request that used it) and a table for larger ids (set
     * explicitly by a JSON node set). */
    zend_object **nodes_by_id;
    uint32_t nodes_capacity;
    HashTable *nodes;
} registry_entry;

/* Ids the node cache indexes in an array (at most 512 KB of pointers). */
#define NODES_BY_ID 65536

/* A Shmring\Ring: a borrowed pointer to an entry the registry owns. */
typedef struct shmring_ring_object {
    registry_entry *entry;
    zend_object std;
} shmring_ring_object;

static inline shmring_ring_object *ring_from_obj(zend_object *obj)
{
    return (shmring_ring_object *)((char *)obj - XtOffsetOf(shmring_ring_object, std));
}

static zend_object *ring_create_object(zend_class_entry *ce)
{
    shmring_ring_object *intern = zend_object_alloc(sizeof(shmring_ring_object), ce);

    intern->entry = NULL;
    zend_object_std_init(&intern->std, ce);
    object_properties_init(&intern->std, ce);
    intern->std.handlers = &shmring_ring_handlers;
    return &intern->std;
}

/*
 * A Shmring\Lease: the library's lease and the registry entry whose handle took it
 * (entries live until the module shuts down). While held, it is on the request's list
 * of held leases (SHMRING_G(leases)), doubly linked through PREV and NEXT.
 */
typedef struct shmring_lease_object {
    registry_entry *entry;
    shmring_lease_t lease;
    bool held;
    struct shmring_lease_object *prev;
    struct shmring_lease_object *next;
    zend_object std;
} shmring_lease_object;

static inline shmring_lease_object *lease_from_obj(zend_object *obj)
{
    return (shmring_lease_object *)((char *)obj - XtOffsetOf(shmring_lease_object, std));
}

static zend_object *lease_create_object(zend_class_entry *ce)
{
    shmring_lease_object *intern = zend_object_alloc(sizeof(shmring_lease_object), ce);

    intern->entry = NULL;
    intern->held = false;
    intern->prev = NULL;
    intern->next = NULL;
    zend_object_std_init(&intern->std, ce);
    object_properties_init(&intern->std, ce);
    intern->std.handlers = &shmring_lease_handlers;
    return &intern->std;
}

static void lease_list_add(shmring_lease_object *lease)
{
    lease->prev = NULL;
    lease->next = SHMRING_G(leases);
    if (lease->next != NULL) {
        lease->next->prev = lease;
    }
    SHMRING_G(leases) = lease;
}

static void lease_list_remove(shmring_lease_object *lease)
{
    if (lease->prev != NULL) {
        lease->prev->next = lease->next;
    } else {
        SHMRING_G(leases) = lease->next;
    }
    if (lease->next != NULL) {
        lease->next->prev = lease->prev;
    }
    lease->prev = NULL;
    lease->next = NULL;
}

/* Gives LEASE's count back and takes it off the request's list. Returns the
 * library's code: SHMRING_ELEASE for a lease released before (or never acquired). */
static int lease_end(shmring_lease_object *lease)
{
    if (lease->entry == NULL) {
        return SHMRING_ELEASE;
    }
    if (lease->held) {
        lease->held = false;
        lease_list_remove(lease);
    }
    return shmring_release(lease->entry->ring, &lease->lease);
}

/* The last reference to a lease is gone: a lease still held is released. */
static void lease_free_obj(zend_object *obj)
{
    shmring_lease_object *lease = lease_from_obj(obj);

    if (lease->held) {
        (void)lease_end(lease);
    }
    zend_object_std_dtor(obj);
}

/* The exception class for a code: the caller decides nothing but the message. */
static zend_class_entry *exception_class(int code)
{
    switch (code) {
    case SHMRING_ENOENT:
    case SHMRING_ENODIR:
        return shmring_ring_not_found_ce;
    case SHMRING_EACCES:
    case SHMRING_EPERM:
    case SHMRING_EOWNER:
    case SHMRING_EBASEDIR:
    case SHMRING_EBASEOWNER:
        return shmring_permission_ce;
    case SHMRING_EBADRING:
    case SHMRING_EINVAL:
    case SHMRING_ENOTRING:
    case SHMRING_EBADDIR:
    case SHMRING_ENOTRINGDIR:
    case -ENOTDIR:
        return shmring_invalid_ring_ce;
    case SHMRING_EEMPTY:
        return shmring_empty_ring_ce;
    case SHMRING_EALLDOWN:
        return shmring_all_down_ce;
    case SHMRING_ENODE:
        return shmring_node_not_found_ce;
    default:
        return shmring_exception_ce;
    }
}

static void throw_code(int code)
{
    zend_throw_exception(exception_class(code), shmring_strerror(code), code);
}

/* Fetches the registry entry of `$this`, or throws when the constructor never
 * completed. */
static registry_entry *this_entry(zval *this_zv)
{
    shmring_ring_object *intern = ring_from_obj(Z_OBJ_P(this_zv));

    if (intern->entry == NULL) {
        zend_throw_error(NULL, "Shmring\\Ring object is not initialized");
    }
    return intern->entry;
}

/* Fetches the handle of `$this`, or throws when the constructor never completed. */
static shmring_t *this_ring(zval *this_zv)
{
    registry_entry *entry = this_entry(this_zv);

    return entry != NULL ? entry->ring : NULL;
}

/* Fills a new Shmring\Node from NODE. The properties are written in declaration
 * order into their slots, as an internal class may do with its own readonly
 * properties (nothing outside the class can write them afterwards). */
static void node_to_zval(const shmring_node_t *node, zval *out)
{
    zend_object *obj;

    object_init_ex(out, shmring_node_ce);
    obj = Z_OBJ_P(out);
    ZVAL_LONG(OBJ_PROP_NUM(obj, 0), (zend_long)node->id);
    ZVAL_STRING(OBJ_PROP_NUM(obj, 1), node->name);
    ZVAL_STRING(OBJ_PROP_NUM(obj, 2), node->address);
    ZVAL_LONG(OBJ_PROP_NUM(obj, 3), (zend_long)node->weight);
}

/* Drops ENTRY's Node objects, keeping the array for the next version when KEEP. */
static void entry_nodes_clear(registry_entry *entry, bool keep)
{
    for (uint32_t i = 0; i < entry->nodes_capacity; i++) {
        if (entry->nodes_by_id[i] != NULL) {
            OBJ_RELEASE(entry->nodes_by_id[i]);
            entry->nodes_by_id[i] = NULL;
        }
    }
    if (!keep && entry->nodes_by_id != NULL) {
        efree(entry->nodes_by_id);
        entry->nodes_by_id = NULL;
        entry->nodes_capacity = 0;
    }
    if (entry->nodes != NULL) {
        zend_hash_destroy(entry->nodes);
        FREE_HASHTABLE(entry->nodes);
        entry->nodes = NULL;
    }
}

/* Drops this request's Node objects of ENTRY. */
static void entry_nodes_free(registry_entry *entry)
{
    entry_nodes_clear(entry, false);
}

/* ENTRY's Node object of ID, or NULL. */
static inline zend_object *entry_node_find(const registry_entry *entry, uint32_t id)
{
    if (id < entry->nodes_capacity) {
        return entry->nodes_by_id[id];
    }
    if (id >= NODES_BY_ID && entry->nodes != NULL) {
        zval *found = zend_hash_index_find(entry->nodes, id);
        return found != NULL ? Z_OBJ_P(found) : NULL;
    }
    return NULL;
}

/* Keeps NODE (a Node object of id ID) in ENTRY, which takes a reference. */
static void entry_node_add(registry_entry *entry, uint32_t id, zend_object *node)
{
    if (id < NODES_BY_ID) {
        if (id >= entry->nodes_capacity) {
            uint32_t capacity = entry->nodes_capacity ? entry->nodes_capacity : 64;
            while (capacity <= id) {
                capacity *= 2;
            }
            entry->nodes_by_id =
                erealloc(entry->nodes_by_id, capacity * sizeof(*entry->nodes_by_id));
            memset(entry->nodes_by_id + entry->nodes_capacity, 0,
                   (capacity - entry->nodes_capacity) * sizeof(*entry->nodes_by_id));
            entry->nodes_capacity = capacity;
        }
        GC_ADDREF(node);
        entry->nodes_by_id[id] = node;
        return;
    }
    if (entry->nodes == NULL) {
        ALLOC_HASHTABLE(entry->nodes);
        zend_hash_init(entry->nodes, 8, NULL, ZVAL_PTR_DTOR, 0);
    }
    zval value;
    GC_ADDREF(node);
    ZVAL_OBJ(&value, node);
    zend_hash_index_update(entry->nodes, id, &value);
}

static void registry_entry_dtor(zval *zv)
{
    registry_entry *entry = Z_PTR_P(zv);

    shmring_close(entry->ring);
    pefree(entry, 1);
}

/* Whether CODE says what is wrong with the ring directory rather than the ring: its
 * message then names the directory. */
static bool is_directory_error(int code)
{
    return code == SHMRING_EBADDIR || code == SHMRING_ENODIR ||
           code == SHMRING_ENOTRINGDIR || code == -ENOTDIR ||
           code == SHMRING_EBASEOWNER || code == SHMRING_EBASEDIR;
}

/*
 * The one spelling of DIRECTORY (NULL: the default directory) the registry keys
 * handles by, so that "/dev/shm", "/dev/shm/" and "/dev/shm//./" share one handle
 * instead of each mapping the ring again. Lexical only: repeated slashes, "."
 * components and a trailing slash go; symbolic links are not resolved, since
 * following them would let whoever can change a link choose which directory a
 * spelling means from one call to the next. A ".." component cannot be removed
 * without knowing whether what precedes it is a link, so it is refused: returns
 * NULL. A relative path is left as it is, for the library to refuse.
 */
static zend_string *directory_canonical(const zend_string *directory)
{
    if (directory == NULL) {
        return zend_string_init(SHMRING_DEFAULT_DIRECTORY,
                                sizeof(SHMRING_DEFAULT_DIRECTORY) - 1, 0);
    }
    const char *path = ZSTR_VAL(directory);
    size_t len = ZSTR_LEN(directory);
    if (len == 0 || path[0] != '/') {
        return zend_string_copy((zend_string *)directory);
    }
    zend_string *out = zend_string_alloc(len, 0);
    char *dst = ZSTR_VAL(out);
    size_t used = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && path[i] == '/') {
            i++;
        }
        size_t start = i;
        while (i < len && path[i] != '/') {
            i++;
        }
        size_t part = i - start;
        if (part == 0 || (part == 1 && path[start] == '.')) {
            continue;
        }
        if (part == 2 && path[start] == '.' && path[start + 1] == '.') {
            zend_string_release(out);
            return NULL;
        }
        dst[used++] = '/';
        memcpy(dst + used, path + start, part);
        used += part;
    }
    if (used == 0) {
        dst[used++] = '/';
    }
    dst[used] = '\0';
    ZSTR_LEN(out) = used;
    return out;
}

/*
 * Finds the registry's handle of ring NAME in DIRECTORY (canonical, see above)
 * trusting OWNER (-1: nobody more), opening it on first use. Neither NAME nor
 * DIRECTORY holds a NUL byte (the callers check), so NUL separates them in the key.
 * Returns 0 or the library's code.
 */
static int registry_open(const zend_string *name, const zend_string *directory,
                         zend_long owner, registry_entry **out)
{
    smart_str key = {0};
    int rc = 0;

    smart_str_append(&key, name);
    smart_str_appendc(&key, '\0');
    smart_str_append(&key, directory);
    smart_str_appendc(&key, '\0');
    if (owner >= 0) {
        smart_str_append_long(&key, owner);
    }
    smart_str_0(&key);

    *out = zend_hash_find_ptr(&SHMRING_G(rings), key.s);
    if (*out == NULL) {
        shmring_open_options_t options = {
            .directory = ZSTR_VAL(directory),
            .trusted_owner = owner >= 0 ? (uid_t)owner : 0,
            .flags = SHMRING_OPEN_SERIALIZED,
        };
        shmring_t *ring;
        rc = shmring_open_with(ZSTR_VAL(name), &options, &ring);
        if (rc == 0) {
            *out = pecalloc(1, sizeof(**out), 1);
            (*out)->ring = ring;
            /* The table is persistent, so it copies the key persistently. */
            zend_hash_str_add_new_ptr(&SHMRING_G(rings), ZSTR_VAL(key.s), ZSTR_LEN(key.s),
                                      *out);
        }
    }
    smart_str_free(&key);
    return rc;
}

/* {{{ Shmring\Node */
ZEND_METHOD(Shmring_Node, __construct)
{
    ZEND_PARSE_PARAMETERS_NONE();
}
/* }}} */

/* {{{ Shmring\Ring::__construct(string $name, ?string $directory = null,
 *                               ?int $trustedOwner = null) */
ZEND_METHOD(Shmring_Ring, __construct)
{
    zend_string *name;
    zend_string *directory = NULL;
    zend_long owner = 0;
    bool owner_is_null = true;
    shmring_ring_object *intern = ring_from_obj(Z_OBJ_P(ZEND_THIS));
    registry_entry *entry;
    int rc;

    ZEND_PARSE_PARAMETERS_START(1, 3)
    Z_PARAM_PATH_STR(name)
    Z_PARAM_OPTIONAL
    Z_PARAM_PATH_STR_OR_NULL(directory)
    Z_PARAM_LONG_OR_NULL(owner, owner_is_null)
    ZEND_PARSE_PARAMETERS_END();

    if (intern->entry != NULL) {
        zend_throw_error(NULL, "Shmring\\Ring object is already initialized");
        RETURN_THROWS();
    }
    if (!owner_is_null && (owner < 0 || (zend_ulong)owner >= (uid_t)-1)) {
        zend_argument_value_error(3, "must be a uid from 0 to %u",
                                  (unsigned)((uid_t)-1 - 1));
        RETURN_THROWS();
    }

    const char *shown =
        directory != NULL ? ZSTR_VAL(directory) : SHMRING_DEFAULT_DIRECTORY;
    zend_string *canonical = directory_canonical(directory);
    if (canonical == NULL) {
        zend_throw_exception_ex(exception_class(SHMRING_EBADDIR), SHMRING_EBADDIR,
                                "cannot open ring '%s': directory '%s': a ring directory "
                                "path must not contain '..'",
                                ZSTR_VAL(name), shown);
        RETURN_THROWS();
    }
    rc = registry_open(name, canonical, owner_is_null ? -1 : owner, &entry);
    zend_string_release(canonical);
    if (rc != 0 && is_directory_error(rc)) {
        zend_throw_exception_ex(exception_class(rc), rc,
                                "cannot open ring '%s': directory '%s': %s",
                                ZSTR_VAL(name), shown, shmring_strerror(rc));
        RETURN_THROWS();
    }
    if (rc != 0) {
        zend_throw_exception_ex(exception_class(rc), rc, "cannot open ring '%s': %s",
                                ZSTR_VAL(name), shmring_strerror(rc));
        RETURN_THROWS();
    }
    intern->entry = entry;
}
/* }}} */

/* {{{ Shmring\Ring::lookup(string $key): Shmring\Node
 * The library answers the id with the fingerprint of the version that answered, so
 * the Node made on that node's first lookup in this request and version is returned
 * again; on a first lookup the library copies the node, and the object is kept when
 * shmring_status() (which never switches: no other call can run in between on this
 * process's handle) says it comes from the cached version. */
ZEND_METHOD(Shmring_Ring, lookup)
{
    char *key;
    size_t key_len;
    registry_entry *entry;
    shmring_node_t node;
    shmring_status_t status;
    uint32_t id;
    uint64_t fingerprint;
    zend_object *cached;
    int rc;

    ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STRING(key, key_len)
    ZEND_PARSE_PARAMETERS_END();

    if ((entry = this_entry(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    rc = shmring_lookup_id_versioned(entry->ring, key, key_len, &id, &fingerprint);
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
    if (entry->nodes_fingerprint != fingerprint) {
        entry_nodes_clear(entry, true);
        entry->nodes_fingerprint = fingerprint;
    }
    cached = entry_node_find(entry, id);
    if (cached != NULL) {
        GC_ADDREF(cached);
        RETURN_OBJ(cached);
    }
    rc = shmring_lookup(entry->ring, key, key_len, &node);
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
    node_to_zval(&node, return_value);
    shmring_status(entry->ring, &status);
    if (status.fingerprint == entry->nodes_fingerprint) {
        entry_node_add(entry, node.id, Z_OBJ_P(return_value));
    }
}
/* }}} */

/* {{{ Shmring\Ring::lookupId(string $key): int */
ZEND_METHOD(Shmring_Ring, lookupId)
{
    char *key;
    size_t key_len;
    shmring_t *ring;
    uint32_t id;
    int rc;

    ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STRING(key, key_len)
    ZEND_PARSE_PARAMETERS_END();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    rc = shmring_lookup_id(ring, key, key_len, &id);
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
    RETURN_LONG((zend_long)id);
}
/* }}} */

/* {{{ Shmring\Ring::lookupIds(array $keys): array
 * One call into the library for the whole batch, answered from one version. The
 * result has the same keys as $keys, in the same order. */
ZEND_METHOD(Shmring_Ring, lookupIds)
{
    HashTable *keys;
    shmring_t *ring;
    const void **key_ptrs;
    size_t *key_lens;
    uint32_t *ids;
    uint32_t count;
    size_t i = 0;
    zend_string *str_key;
    zend_ulong num_key;
    zval *value;
    int rc;

    ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_ARRAY_HT(keys)
    ZEND_PARSE_PARAMETERS_END();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    count = zend_hash_num_elements(keys);
    key_ptrs = safe_emalloc(count, sizeof(*key_ptrs), 0);
    key_lens = safe_emalloc(count, sizeof(*key_lens), 0);
    ids = safe_emalloc(count, sizeof(*ids), 0);

    ZEND_HASH_FOREACH_VAL(keys, value)
    {
        ZVAL_DEREF(value);
        if (Z_TYPE_P(value) != IS_STRING) {
            zend_argument_type_error(1, "must contain only strings, %s given",
                                     zend_zval_type_name(value));
            goto out;
        }
        key_ptrs[i] = Z_STRVAL_P(value);
        key_lens[i] = Z_STRLEN_P(value);
        i++;
    }
    ZEND_HASH_FOREACH_END();

    rc = shmring_lookup_ids(ring, key_ptrs, key_lens, count, ids);
    if (rc != 0) {
        throw_code(rc);
        goto out;
    }

    array_init_size(return_value, count);
    i = 0;
    ZEND_HASH_FOREACH_KEY(keys, num_key, str_key)
    {
        zval id;

        ZVAL_LONG(&id, (zend_long)ids[i]);
        if (str_key != NULL) {
            zend_hash_add_new(Z_ARRVAL_P(return_value), str_key, &id);
        } else {
            zend_hash_index_add_new(Z_ARRVAL_P(return_value), num_key, &id);
        }
        i++;
    }
    ZEND_HASH_FOREACH_END();

out:
    efree(key_ptrs);
    efree(key_lens);
    efree(ids);
}
/* }}} */

/* {{{ Shmring\Ring::lookupN(string $key, int $n): array */
ZEND_METHOD(Shmring_Ring, lookupN)
{
    char *key;
    size_t key_len;
    zend_long n;
    shmring_t *ring;
    shmring_node_t nodes[SHMRING_LOOKUP_N_MAX];
    int rc;

    ZEND_PARSE_PARAMETERS_START(2, 2)
    Z_PARAM_STRING(key, key_len)
    Z_PARAM_LONG(n)
    ZEND_PARSE_PARAMETERS_END();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    if (n < 1) {
        zend_argument_value_error(2, "must be greater than 0");
        RETURN_THROWS();
    }
    /* The library answers at most SHMRING_LOOKUP_N_MAX nodes whatever N says. */
    if (n > SHMRING_LOOKUP_N_MAX) {
        n = SHMRING_LOOKUP_N_MAX;
    }
    rc = shmring_lookup_n(ring, key, key_len, nodes, (size_t)n);
    if (rc < 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
    array_init_size(return_value, (uint32_t)rc);
    for (int i = 0; i < rc; i++) {
        zval node;

        node_to_zval(&nodes[i], &node);
        add_next_index_zval(return_value, &node);
    }
}
/* }}} */

/* {{{ Shmring\Ring::nodes(): array */
ZEND_METHOD(Shmring_Ring, nodes)
{
    shmring_t *ring;
    shmring_nodes_t nodes;
    int rc;

    ZEND_PARSE_PARAMETERS_NONE();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    rc = shmring_nodes(ring, &nodes);
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
    array_init_size(return_value, (uint32_t)nodes.count);
    for (size_t i = 0; i < nodes.count; i++) {
        zval node;

        node_to_zval(&nodes.nodes[i], &node);
        add_next_index_zval(return_value, &node);
    }
    shmring_nodes_free(&nodes);
}
/* }}} */

/* {{{ Shmring\Ring::node(int $id): Shmring\Node */
ZEND_METHOD(Shmring_Ring, node)
{
    zend_long id;
    shmring_t *ring;
    shmring_node_t node;
    int rc;

    ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_LONG(id)
    ZEND_PARSE_PARAMETERS_END();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    /* Ids are uint32_t: any other integer names no node. */
    if (id < 0 || (zend_ulong)id > UINT32_MAX) {
        throw_code(SHMRING_ENODE);
        RETURN_THROWS();
    }
    rc = shmring_node(ring, (uint32_t)id, &node);
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
    node_to_zval(&node, return_value);
}
/* }}} */

/* {{{ Shmring\Ring::generation(): int */
ZEND_METHOD(Shmring_Ring, generation)
{
    shmring_t *ring;

    ZEND_PARSE_PARAMETERS_NONE();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    /* Generations count publishes from 1; 2^63 of them is out of reach. */
    RETURN_LONG((zend_long)shmring_generation(ring));
}
/* }}} */

/* {{{ Shmring\Ring::fingerprint(): ?string
 * A string of 16 lowercase hex digits (as `ringctl show` prints it), since PHP's
 * integers are signed and the fingerprint is an unsigned 64-bit value. */
ZEND_METHOD(Shmring_Ring, fingerprint)
{
    shmring_t *ring;
    uint64_t fingerprint;
    int rc;

    ZEND_PARSE_PARAMETERS_NONE();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    rc = shmring_fingerprint(ring, &fingerprint);
    if (rc == SHMRING_EEMPTY) {
        RETURN_NULL();
    }
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
    RETURN_STR(zend_strpprintf(0, "%016" PRIx64, fingerprint));
}
/* }}} */

/* {{{ Shmring\Ring::status(): Shmring\Status
 * After following a newer version, as generation() does (or trying a destroyed
 * ring's name again, at most every 100 ms). A destroyed ring's control object says
 * UINT64_MAX as its published generation. */
ZEND_METHOD(Shmring_Ring, status)
{
    shmring_t *ring;
    shmring_status_t status;
    zend_object *obj;
    bool destroyed;

    ZEND_PARSE_PARAMETERS_NONE();

    if ((ring = this_ring(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    (void)shmring_generation(ring);
    shmring_status(ring, &status);
    destroyed = status.published_generation == UINT64_MAX;
    object_init_ex(return_value, shmring_status_ce);
    obj = Z_OBJ_P(return_value);
    ZVAL_BOOL(OBJ_PROP_NUM(obj, 0), !destroyed && status.generation != 0);
    ZVAL_BOOL(OBJ_PROP_NUM(obj, 1), destroyed);
    ZVAL_LONG(OBJ_PROP_NUM(obj, 2), (zend_long)status.generation);
    if (status.generation != 0) {
        ZVAL_STR(OBJ_PROP_NUM(obj, 3),
                 zend_strpprintf(0, "%016" PRIx64, status.fingerprint));
    } else {
        ZVAL_NULL(OBJ_PROP_NUM(obj, 3));
    }
    ZVAL_LONG(OBJ_PROP_NUM(obj, 4), (zend_long)status.failed_error);
    ZVAL_LONG(OBJ_PROP_NUM(obj, 5), (zend_long)status.failed_format);
}
/* }}} */

/* {{{ Shmring\Ring::acquire(string $key): Shmring\Lease
 * The object is made first: once the library has counted the lease, nothing may fail
 * before it is in an object whose freeing gives it back. */
ZEND_METHOD(Shmring_Ring, acquire)
{
    char *key;
    size_t key_len;
    registry_entry *entry;
    shmring_node_t node;
    shmring_lease_object *lease;
    zval node_zv;
    int rc;

    ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STRING(key, key_len)
    ZEND_PARSE_PARAMETERS_END();

    if ((entry = this_entry(ZEND_THIS)) == NULL) {
        RETURN_THROWS();
    }
    object_init_ex(return_value, shmring_lease_ce);
    lease = lease_from_obj(Z_OBJ_P(return_value));
    rc = shmring_acquire(entry->ring, key, key_len, &lease->lease);
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS(); /* the engine frees the lease object, which holds nothing */
    }
    lease->entry = entry;
    lease->held = true;
    lease_list_add(lease);
    rc = shmring_node(entry->ring, lease->lease.id, &node);
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS(); /* freeing the object releases the lease */
    }
    node_to_zval(&node, &node_zv);
    ZVAL_COPY_VALUE(OBJ_PROP_NUM(Z_OBJ_P(return_value), 0), &node_zv);
    ZVAL_LONG(OBJ_PROP_NUM(Z_OBJ_P(return_value), 1), (zend_long)lease->lease.candidates);
    ZVAL_BOOL(OBJ_PROP_NUM(Z_OBJ_P(return_value), 2), lease->lease.counted != 0);
}
/* }}} */

/* {{{ Shmring\Lease */
ZEND_METHOD(Shmring_Lease, __construct)
{
    ZEND_PARSE_PARAMETERS_NONE();
}
/* }}} */

/* {{{ Shmring\Lease::release(): void
 * Once: a second release throws SHMRING_ELEASE, as the library answers it. */
ZEND_METHOD(Shmring_Lease, release)
{
    int rc;

    ZEND_PARSE_PARAMETERS_NONE();

    rc = lease_end(lease_from_obj(Z_OBJ_P(ZEND_THIS)));
    if (rc != 0) {
        throw_code(rc);
        RETURN_THROWS();
    }
}
/* }}} */

/* {{{ Shmring\Lease::isHeld(): bool */
ZEND_METHOD(Shmring_Lease, isHeld)
{
    ZEND_PARSE_PARAMETERS_NONE();

    RETURN_BOOL(lease_from_obj(Z_OBJ_P(ZEND_THIS))->held);
}
/* }}} */

/* {{{ Shmring\Status */
ZEND_METHOD(Shmring_Status, __construct)
{
    ZEND_PARSE_PARAMETERS_NONE();
}
/* }}} */

static PHP_GINIT_FUNCTION(shmring)
{
#if defined(COMPILE_DL_SHMRING) && defined(ZTS)
    ZEND_TSRMLS_CACHE_UPDATE();
#endif
    zend_hash_init(&shmring_globals->rings, 8, NULL, registry_entry_dtor, 1);
    shmring_globals->leases = NULL;
}

static PHP_GSHUTDOWN_FUNCTION(shmring)
{
    zend_hash_destroy(&shmring_globals->rings);
}

PHP_INI_BEGIN()
STD_PHP_INI_ENTRY("shmring.preopen", "", PHP_INI_SYSTEM, OnUpdateString, preopen,
                  zend_shmring_globals, shmring_globals)
PHP_INI_END()

/*
 * Opens the rings that shmring.preopen names, at module startup: in PHP-FPM that is
 * the master, before it forks its workers, so every worker inherits the handles and
 * its first request opens nothing (each worker's copy is its own and follows new
 * versions by itself). A ring that cannot be opened is reported once as a warning
 * and left to the workers to open on first use. Only in a non-ZTS PHP: in a ZTS one
 * each thread has its own registry, which module startup cannot fill.
 */
static void preopen_rings(void)
{
#ifndef ZTS
    const char *list = SHMRING_G(preopen);
    while (list != NULL && *list != '\0') {
        const char *end = strchr(list, ',');
        size_t len = end != NULL ? (size_t)(end - list) : strlen(list);
        if (len > 0) {
            zend_string *name = zend_string_init(list, len, 1);
            /* The default directory, spelled as directory_canonical() spells it, so
             * that a worker's `new Shmring\Ring($name)` finds this handle. */
            zend_string *directory = zend_string_init(
                SHMRING_DEFAULT_DIRECTORY, sizeof(SHMRING_DEFAULT_DIRECTORY) - 1, 1);
            registry_entry *entry;
            int rc = registry_open(name, directory, -1, &entry);
            zend_string_release(directory);
            if (rc != 0) {
                php_error_docref(NULL, E_WARNING,
                                 "shmring.preopen: cannot open ring '%s': %s",
                                 ZSTR_VAL(name), shmring_strerror(rc));
            }
            zend_string_release(name);
        }
        list = end != NULL ? end + 1 : NULL;
    }
#endif
}

static PHP_MINIT_FUNCTION(shmring)
{
    REGISTER_INI_ENTRIES();
    shmring_node_ce = register_class_Shmring_Node();
    shmring_status_ce = register_class_Shmring_Status();
    shmring_ring_ce = register_class_Shmring_Ring();
    shmring_ring_ce->create_object = ring_create_object;

    memcpy(&shmring_ring_handlers, zend_get_std_object_handlers(),
           sizeof(zend_object_handlers));
    shmring_ring_handlers.offset = XtOffsetOf(shmring_ring_object, std);
    /* A copy would share the handle anyway; there is nothing a clone could add. */
    shmring_ring_handlers.clone_obj = NULL;

    shmring_lease_ce = register_class_Shmring_Lease();
    shmring_lease_ce->create_object = lease_create_object;
    memcpy(&shmring_lease_handlers, zend_get_std_object_handlers(),
           sizeof(zend_object_handlers));
    shmring_lease_handlers.offset = XtOffsetOf(shmring_lease_object, std);
    shmring_lease_handlers.free_obj = lease_free_obj;
    /* A copy would be a second release of one count. */
    shmring_lease_handlers.clone_obj = NULL;

    shmring_exception_ce = register_class_Shmring_Exception(spl_ce_RuntimeException);
    shmring_ring_not_found_ce =
        register_class_Shmring_RingNotFoundException(shmring_exception_ce);
    shmring_permission_ce =
        register_class_Shmring_PermissionException(shmring_exception_ce);
    shmring_invalid_ring_ce =
        register_class_Shmring_InvalidRingException(shmring_exception_ce);
    shmring_empty_ring_ce =
        register_class_Shmring_EmptyRingException(shmring_exception_ce);
    shmring_all_down_ce =
        register_class_Shmring_AllNodesDownException(shmring_exception_ce);
    shmring_node_not_found_ce =
        register_class_Shmring_NodeNotFoundException(shmring_exception_ce);
    preopen_rings();
    return SUCCESS;
}

/* Releases the leases the request still holds (the objects themselves are freed
 * after this, by the engine, and then find them released), and drops the request's
 * Node objects: they belong to the request. */
static PHP_RSHUTDOWN_FUNCTION(shmring)
{
    registry_entry *entry;

    while (SHMRING_G(leases) != NULL) {
        (void)lease_end(SHMRING_G(leases));
    }

    ZEND_HASH_FOREACH_PTR(&SHMRING_G(rings), entry)
    {
        entry_nodes_free(entry);
    }
    ZEND_HASH_FOREACH_END();
    return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(shmring)
{
    /* The registry's handles are closed by GSHUTDOWN, which runs after this. */
    UNREGISTER_INI_ENTRIES();
    return SUCCESS;
}

static PHP_MINFO_FUNCTION(shmring)
{
    char count[32];

    snprintf(count, sizeof(count), "%u", zend_hash_num_elements(&SHMRING_G(rings)));
    php_info_print_table_start();
    php_info_print_table_row(2, "shmring support", "enabled");
    php_info_print_table_row(2, "extension version", PHP_SHMRING_VERSION);
    php_info_print_table_row(2, "libshmring version", shmring_version());
    php_info_print_table_row(2, "libshmring headers version", SHMRING_VERSION_STRING);
    php_info_print_table_row(2, "default ring directory", SHMRING_DEFAULT_DIRECTORY);
    php_info_print_table_row(2, "rings open in this process", count);
    php_info_print_table_end();
    DISPLAY_INI_ENTRIES();
}

zend_module_entry shmring_module_entry = {
    STANDARD_MODULE_HEADER,
    "shmring",
    NULL,
    PHP_MINIT(shmring),
    PHP_MSHUTDOWN(shmring),
    NULL,
    PHP_RSHUTDOWN(shmring),
    PHP_MINFO(shmring),
    PHP_SHMRING_VERSION,
    PHP_MODULE_GLOBALS(shmring),
    PHP_GINIT(shmring),
    PHP_GSHUTDOWN(shmring),
    NULL,
    STANDARD_MODULE_PROPERTIES_EX,
};

#ifdef COMPILE_DL_SHMRING
#ifdef ZTS
ZEND_TSRMLS_CACHE_DEFINE()
#endif
ZEND_GET_MODULE(shmring)
#endif
