/*
 * shmring.node: the Node-API addon under the `shmring` npm package, over libshmring's
 * reader API.
 *
 * The addon adds no logic of its own: it converts arguments, makes one call into the
 * library and maps its error code to an Error subclass (the classes are index.js's).
 *
 * A Ring belongs to the JavaScript thread (the main thread or one worker_threads
 * Worker) that made it: Node-API objects cannot be used from another thread, and each
 * thread loads its own instance of this addon. No library call runs JavaScript, and
 * every call reads the handle after converting its arguments (which may run
 * JavaScript: an array's getter, say) and returns before any other JavaScript runs.
 * So no two calls on one handle ever overlap: the promise SHMRING_OPEN_SERIALIZED
 * asks for, which spares every lookup liburcu's read-side section. Lookups stay
 * synchronous: one costs well under a microsecond, less than handing it to the
 * thread pool and resolving a promise would (README, "Why lookups are synchronous").
 */
#define _GNU_SOURCE /* strerrorname_np() */
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmring.h>

/* A string key up to this many UTF-8 bytes is converted on the stack. */
#define STACK_KEY_BYTES 512
/* Node ids the node cache indexes in an array (at most 512 KB of references); rings
 * whose ids ringctl assigned stay below it unless nodes come and go by the tens of
 * thousands. Nodes of larger ids are made afresh by each lookup. */
#define NODE_CACHE_IDS 65536

/* The Error subclasses index.js defines and hands over through _init(), one per
 * kind of failure; error_kind() maps each library code to one. */
enum error_kind {
    ERROR_BASE,
    ERROR_RING_NOT_FOUND,
    ERROR_PERMISSION_DENIED,
    ERROR_NOT_TRUSTED,
    ERROR_EMPTY_RING,
    ERROR_ALL_NODES_DOWN,
    ERROR_NO_SUCH_NODE,
    ERROR_INVALID_ARGUMENT,
    ERROR_CORRUPT_RING,
    ERROR_OUT_OF_MEMORY,
    ERROR_KINDS
};

/* The names index.js gives the classes, in enum error_kind's order. */
static const char *const error_class_names[ERROR_KINDS] = {
    "ShmringError",    "RingNotFoundError",    "PermissionDeniedError",
    "NotTrustedError", "EmptyRingError",       "AllNodesDownError",
    "NoSuchNodeError", "InvalidArgumentError", "CorruptRingError",
    "OutOfMemoryError"};

/* What each thread's instance of the addon keeps (Node-API instance data). */
struct addon {
    napi_ref error_classes[ERROR_KINDS];
    bool initialized;
};

struct ring {
    /* Opened SHMRING_OPEN_SERIALIZED (see the top); NULL once close() ran. */
    shmring_t *handle;
    /* The node objects of one version, made on first use and returned by every
     * later lookup that answers that node from a version of that fingerprint (which
     * covers every field of a node), so that lookup() costs what lookupId() costs
     * plus a table read. */
    struct {
        bool valid;
        uint64_t fingerprint;
        napi_ref *by_id;
        size_t capacity;
        /* The cache was emptied for a version of another fingerprint since
         * lookupCachedId() last said so: index.js keeps the same objects in a
         * JavaScript array in front of this cache (a reference here costs two
         * dependent reads more than an array slot), and empties it when told. */
        bool front_stale;
    } nodes;
};

/* Errors --------------------------------------------------------------------------- */

static enum error_kind error_kind(int code)
{
    switch (code) {
    case SHMRING_ENOENT:
    case SHMRING_ENODIR:
        return ERROR_RING_NOT_FOUND;
    case SHMRING_EACCES:
    case SHMRING_EPERM:
        return ERROR_PERMISSION_DENIED;
    case SHMRING_EOWNER:
    case SHMRING_ENOTRING:
    case SHMRING_EBASEDIR:
    case SHMRING_EBASEOWNER:
        return ERROR_NOT_TRUSTED;
    case SHMRING_EEMPTY:
        return ERROR_EMPTY_RING;
    case SHMRING_EALLDOWN:
        return ERROR_ALL_NODES_DOWN;
    case SHMRING_ENODE:
        return ERROR_NO_SUCH_NODE;
    case SHMRING_EINVAL:
    case SHMRING_EBADRING:
    case SHMRING_EBADDIR:
    case SHMRING_ENOTRINGDIR:
    case -ENOTDIR:
        return ERROR_INVALID_ARGUMENT;
    case SHMRING_ENOMEM:
        return ERROR_OUT_OF_MEMORY;
    case SHMRING_EBADMAGIC:
    case SHMRING_EFORMAT:
    case SHMRING_EBYTEORDER:
    case SHMRING_ETRUNCATED:
    case SHMRING_EBADSECTION:
    case SHMRING_EBADPARAMS:
    case SHMRING_EBADNODE:
    case SHMRING_EBADSTRING:
    case SHMRING_EBADPOINTS:
    case SHMRING_EBADINDEX:
    case SHMRING_ECHECKSUM:
    case SHMRING_ECONTROL:
        return ERROR_CORRUPT_RING;
    default:
        return ERROR_BASE;
    }
}

/* A code's name for an Error's `code`: the header's name ('SHMRING_ENOENT'); for a
 * system error the header does not list, errno's own name ('ENOTDIR'), as Node's fs
 * errors have it; else 'SHMRING_ERROR'. */
static const char *code_name(int code)
{
    const char *name = shmring_err_name(code);
    if (strcmp(name, "unknown") != 0)
        return name;
    name = code < 0 && code > -4096 ? strerrorname_np(-code) : NULL;
    return name != NULL ? name : "SHMRING_ERROR";
}

/* Throws the Error subclass of CODE: message the library's text (followed by
 * ": 'CONTEXT'" when CONTEXT is not NULL), `code` the code's name
 * ('SHMRING_ENOENT'), `errno` the number. Returns NULL, for `return throw_code()`. */
static napi_value throw_code(napi_env env, int code, const char *context)
{
    struct addon *addon = NULL;
    napi_value constructor = NULL, message, error, value;
    char text[SHMRING_DIRECTORY_MAX + 256];
    if (context != NULL)
        snprintf(text, sizeof(text), "%s: '%s'", shmring_strerror(code), context);
    else
        snprintf(text, sizeof(text), "%s", shmring_strerror(code));
    if (napi_get_instance_data(env, (void **)&addon) != napi_ok || addon == NULL ||
        !addon->initialized ||
        napi_get_reference_value(env, addon->error_classes[error_kind(code)],
                                 &constructor) != napi_ok ||
        constructor == NULL) {
        napi_throw_error(env, code_name(code), text);
        return NULL;
    }
    if (napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &message) != napi_ok ||
        napi_new_instance(env, constructor, 1, &message, &error) != napi_ok)
        return NULL; /* The constructor threw: that exception is pending. */
    if (napi_create_string_utf8(env, code_name(code), NAPI_AUTO_LENGTH, &value) ==
        napi_ok)
        napi_set_named_property(env, error, "code", value);
    if (napi_create_int32(env, code, &value) == napi_ok)
        napi_set_named_property(env, error, "errno", value);
    napi_throw(env, error);
    return NULL;
}

static napi_value throw_type(napi_env env, const char *message)
{
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
    return NULL;
}

static napi_value throw_closed(napi_env env)
{
    napi_throw_error(env, "ERR_SHMRING_CLOSED", "the shmring Ring is closed");
    return NULL;
}

/* Keys ----------------------------------------------------------------------------- */

/* A key converted for one library call: its bytes, on the stack for short strings,
 * on the heap for long ones, or a typed array's or ArrayBuffer's own memory. */
struct key {
    const char *data;
    size_t len;
    char *heap;
    char stack[STACK_KEY_BYTES];
};

static size_t typedarray_element_size(napi_typedarray_type type)
{
    switch (type) {
    case napi_int16_array:
    case napi_uint16_array:
        return 2;
    case napi_int32_array:
    case napi_uint32_array:
    case napi_float32_array:
        return 4;
    case napi_float64_array:
    case napi_bigint64_array:
    case napi_biguint64_array:
        return 8;
    default:
        return 1;
    }
}

/*
 * Points KEY at VALUE's bytes: a string's UTF-8 form (lone surrogates become U+FFFD,
 * as Buffer.from(string) makes them), or the bytes a Buffer, typed array, DataView or
 * ArrayBuffer views. Returns true, or false with a TypeError pending.
 */
static bool key_acquire(napi_env env, napi_value value, struct key *key)
{
    key->heap = NULL;
    napi_valuetype type;
    if (napi_typeof(env, value, &type) != napi_ok)
        return false;
    if (type == napi_string) {
        size_t copied;
        if (napi_get_value_string_utf8(env, value, key->stack, sizeof(key->stack),
                                       &copied) != napi_ok)
            return false;
        /* V8 never splits a character, so a string that did not fit stopped up to 3
         * bytes short of the buffer's end: then ask for its whole length. */
        if (copied + 4 < sizeof(key->stack)) {
            key->data = key->stack;
            key->len = copied;
            return true;
        }
        size_t len;
        if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok)
            return false;
        if ((key->heap = malloc(len + 1)) == NULL) {
            napi_throw_error(env, "ERR_OUT_OF_MEMORY", "out of memory for a key");
            return false;
        }
        if (napi_get_value_string_utf8(env, value, key->heap, len + 1, &copied) !=
            napi_ok) {
            free(key->heap);
            key->heap = NULL;
            return false;
        }
        key->data = key->heap;
        key->len = copied;
        return true;
    }
    if (type == napi_object) {
        bool is;
        void *data = NULL;
        size_t length = 0;
        if (napi_is_typedarray(env, value, &is) == napi_ok && is) {
            napi_typedarray_type array_type;
            if (napi_get_typedarray_info(env, value, &array_type, &length, &data, NULL,
                                         NULL) != napi_ok)
                return false;
            length *= typedarray_element_size(array_type);
        } else if (napi_is_dataview(env, value, &is) == napi_ok && is) {
            if (napi_get_dataview_info(env, value, &length, &data, NULL, NULL) != napi_ok)
                return false;
        } else if (napi_is_arraybuffer(env, value, &is) == napi_ok && is) {
            if (napi_get_arraybuffer_info(env, value, &data, &length) != napi_ok)
                return false;
        } else {
            throw_type(env, "a key must be a string, a Buffer, a typed array, a "
                            "DataView or an ArrayBuffer");
            return false;
        }
        /* An empty or detached view may have no memory: a zero-length key. */
        key->data = data != NULL ? data : "";
        key->len = data != NULL ? length : 0;
        return true;
    }
    throw_type(env, "a key must be a string, a Buffer, a typed array, a DataView or an "
                    "ArrayBuffer");
    return false;
}

static void key_release(struct key *key)
{
    free(key->heap);
}

/* Arguments and this ----------------------------------------------------------------- */

/* The addon's functions take a ring's handle (an External that index.js's Ring keeps
 * in a private field) as their first argument: reading it is a type check, where
 * napi_unwrap() of `this` is a property lookup that costs more than a lookup. */

/* Fills *RING with the ring of this call's first argument. Returns false with a
 * TypeError pending when it is not one. */
static bool ring_of(napi_env env, napi_value value, struct ring **ring)
{
    if (napi_get_value_external(env, value, (void **)ring) != napi_ok || *ring == NULL) {
        throw_type(env, "not a shmring Ring");
        return false;
    }
    return true;
}

/* Fills *RING with this call's ring and ARGV with up to *ARGC (at most 2) arguments
 * after it (the rest undefined), and sets *ARGC to how many were given. Returns false
 * with an exception pending when the ring is closed. */
static bool ring_call(napi_env env, napi_callback_info info, size_t *argc,
                      napi_value *argv, struct ring **ring)
{
    napi_value args[3];
    size_t count = 3;
    if (napi_get_cb_info(env, info, &count, args, NULL, NULL) != napi_ok ||
        !ring_of(env, args[0], ring))
        return false;
    if ((*ring)->handle == NULL) {
        throw_closed(env);
        return false;
    }
    for (size_t i = 0; i < *argc && i < 2; i++)
        argv[i] = args[i + 1];
    *argc = count > 0 ? count - 1 : 0;
    return true;
}

/* Nodes ------------------------------------------------------------------------------ */

/* A frozen {id, name, address, weight}. Names are UTF-8; an address is opaque text,
 * whose invalid bytes become U+FFFD. */
static napi_value node_object(napi_env env, const shmring_node_t *node)
{
    napi_value object, id, name, address, weight;
    if (napi_create_object(env, &object) != napi_ok ||
        napi_create_uint32(env, node->id, &id) != napi_ok ||
        napi_create_string_utf8(env, node->name,
                                strnlen(node->name, SHMRING_NAME_MAX + 1),
                                &name) != napi_ok ||
        napi_create_string_utf8(env, node->address,
                                strnlen(node->address, SHMRING_ADDRESS_MAX + 1),
                                &address) != napi_ok ||
        napi_create_uint32(env, node->weight, &weight) != napi_ok)
        return NULL;
    napi_property_descriptor fields[] = {
        {"id", NULL, NULL, NULL, NULL, id, napi_enumerable, NULL},
        {"name", NULL, NULL, NULL, NULL, name, napi_enumerable, NULL},
        {"address", NULL, NULL, NULL, NULL, address, napi_enumerable, NULL},
        {"weight", NULL, NULL, NULL, NULL, weight, napi_enumerable, NULL},
    };
    if (napi_define_properties(env, object, 4, fields) != napi_ok ||
        napi_object_freeze(env, object) != napi_ok)
        return NULL;
    return object;
}

static void node_cache_clear(napi_env env, struct ring *ring)
{
    for (size_t i = 0; i < ring->nodes.capacity; i++) {
        if (ring->nodes.by_id[i] != NULL) {
            napi_delete_reference(env, ring->nodes.by_id[i]);
            ring->nodes.by_id[i] = NULL;
        }
    }
    ring->nodes.valid = false;
}

static void node_cache_free(napi_env env, struct ring *ring)
{
    node_cache_clear(env, ring);
    free(ring->nodes.by_id);
    ring->nodes.by_id = NULL;
    ring->nodes.capacity = 0;
}

/* Makes the cache the one of the version of FINGERPRINT. */
static void node_cache_use(napi_env env, struct ring *ring, uint64_t fingerprint)
{
    if (!ring->nodes.valid || ring->nodes.fingerprint != fingerprint) {
        node_cache_clear(env, ring);
        ring->nodes.valid = true;
        ring->nodes.fingerprint = fingerprint;
        ring->nodes.front_stale = true;
    }
}

/* The cached node object of ID, or NULL. */
static napi_value node_cache_find(napi_env env, struct ring *ring, uint32_t id)
{
    napi_value node = NULL;
    if (id < ring->nodes.capacity && ring->nodes.by_id[id] != NULL)
        napi_get_reference_value(env, ring->nodes.by_id[id], &node);
    return node;
}

/* Keeps NODE (of id ID) in the cache. A failure to grow it is no error: the node is
 * simply made again next time. */
static void node_cache_add(napi_env env, struct ring *ring, uint32_t id, napi_value node)
{
    if (id >= NODE_CACHE_IDS)
        return;
    if (id >= ring->nodes.capacity) {
        size_t capacity = ring->nodes.capacity ? ring->nodes.capacity : 64;
        while (capacity <= id)
            capacity *= 2;
        napi_ref *by_id = realloc(ring->nodes.by_id, capacity * sizeof(*by_id));
        if (by_id == NULL)
            return;
        memset(by_id + ring->nodes.capacity, 0,
               (capacity - ring->nodes.capacity) * sizeof(*by_id));
        ring->nodes.by_id = by_id;
        ring->nodes.capacity = capacity;
    }
    if (ring->nodes.by_id[id] != NULL)
        napi_delete_reference(env, ring->nodes.by_id[id]);
    ring->nodes.by_id[id] = NULL;
    napi_create_reference(env, node, 1, &ring->nodes.by_id[id]);
}

/* The node object for a node a call just copied: the cached one when the handle
 * still answers from the cache's version (shmring_status() never switches, and no
 * other call ran in between: see the top), else a new one, cached when it is of the
 * cache's version. */
static napi_value node_for(napi_env env, struct ring *ring, const shmring_node_t *copy)
{
    shmring_status_t status;
    shmring_status(ring->handle, &status);
    node_cache_use(env, ring, status.fingerprint);
    napi_value node = node_cache_find(env, ring, copy->id);
    if (node != NULL)
        return node;
    if ((node = node_object(env, copy)) != NULL)
        node_cache_add(env, ring, copy->id, node);
    return node;
}

/* A fingerprint as `ringctl show` prints it: 16 lowercase hex digits. */
static napi_value fingerprint_hex(napi_env env, uint64_t fingerprint)
{
    char text[17];
    napi_value value;
    snprintf(text, sizeof(text), "%016llx", (unsigned long long)fingerprint);
    return napi_create_string_utf8(env, text, 16, &value) == napi_ok ? value : NULL;
}

static napi_value null_value(napi_env env)
{
    napi_value value;
    napi_get_null(env, &value);
    return value;
}

/* A generation as a Number: exact below 2^53, which a ring publishing a million
 * versions a second reaches in 285 years. */
static napi_value generation_value(napi_env env, uint64_t generation)
{
    napi_value value;
    napi_create_double(env, (double)generation, &value);
    return value;
}

/* Ring ---------------------------------------------------------------------------- */

static void ring_finalize(napi_env env, void *data, void *hint)
{
    (void)hint;
    struct ring *ring = data;
    shmring_close(ring->handle);
    node_cache_free(env, ring);
    free(ring);
}

/* Copies a string argument into BUF (of SIZE bytes). Returns its length, or -1 with
 * a TypeError pending (not a string), or -2 (longer than SIZE - 1 bytes, or holding a
 * NUL). */
static long string_argument(napi_env env, napi_value value, const char *what, char *buf,
                            size_t size)
{
    napi_valuetype type;
    if (napi_typeof(env, value, &type) != napi_ok || type != napi_string) {
        char message[128];
        snprintf(message, sizeof(message), "%s must be a string", what);
        throw_type(env, message);
        return -1;
    }
    size_t len, copied;
    if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok)
        return -1;
    if (len >= size) {
        napi_get_value_string_utf8(env, value, buf, size, &copied);
        return -2;
    }
    napi_get_value_string_utf8(env, value, buf, size, &copied);
    return strlen(buf) == copied ? (long)copied : -2;
}

/* open(name, {directory, trustedOwner}): a ring's handle, for new Ring(). */
static napi_value ring_open(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], result;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok)
        return NULL;
    char name[SHMRING_RING_NAME_MAX + 2];
    long name_len = string_argument(env, argv[0], "the ring name", name, sizeof(name));
    if (name_len == -1)
        return NULL;
    if (name_len == -2)
        return throw_code(env, SHMRING_EBADRING, NULL);

    shmring_open_options_t options = {.flags = SHMRING_OPEN_SERIALIZED};
    char directory[SHMRING_DIRECTORY_MAX + 2];
    napi_valuetype type = napi_undefined;
    if (argc > 1 && napi_typeof(env, argv[1], &type) != napi_ok)
        return NULL;
    if (type != napi_undefined && type != napi_null) {
        if (type != napi_object)
            return throw_type(env, "the options must be an object");
        napi_value value;
        napi_valuetype value_type;
        if (napi_get_named_property(env, argv[1], "directory", &value) != napi_ok ||
            napi_typeof(env, value, &value_type) != napi_ok)
            return NULL;
        if (value_type != napi_undefined && value_type != napi_null) {
            long len = string_argument(env, value, "options.directory", directory,
                                       sizeof(directory));
            if (len == -1)
                return NULL;
            if (len == -2)
                return throw_code(env, SHMRING_EBADDIR, NULL);
            options.directory = directory;
        }
        if (napi_get_named_property(env, argv[1], "trustedOwner", &value) != napi_ok ||
            napi_typeof(env, value, &value_type) != napi_ok)
            return NULL;
        if (value_type != napi_undefined && value_type != napi_null) {
            double uid;
            if (value_type != napi_number)
                return throw_type(env, "options.trustedOwner must be a uid (a number)");
            napi_get_value_double(env, value, &uid);
            /* (uid_t)-1 means "no user" to the kernel: never a trusted owner. */
            if (!(uid >= 0 && uid < (double)UINT32_MAX) || uid != (double)(uint32_t)uid)
                return throw_code(env, SHMRING_EINVAL, NULL);
            options.trusted_owner = (uid_t)uid;
        }
    }

    shmring_t *handle = NULL;
    int rc = shmring_open_with(name, &options, &handle);
    if (rc < 0) {
        /* "no such ring: 'web'", but "no such ring directory: '/run/x'". */
        bool about_directory = rc == SHMRING_EBADDIR || rc == SHMRING_ENODIR ||
                               rc == SHMRING_ENOTRINGDIR || rc == -ENOTDIR ||
                               rc == SHMRING_EBASEOWNER || rc == SHMRING_EBASEDIR;
        return throw_code(
            env, rc,
            about_directory
                ? (options.directory ? options.directory : SHMRING_DEFAULT_DIRECTORY)
                : name);
    }
    struct ring *ring = calloc(1, sizeof(*ring));
    if (ring == NULL) {
        shmring_close(handle);
        return throw_code(env, SHMRING_ENOMEM, NULL);
    }
    ring->handle = handle;
    if (napi_create_external(env, ring, ring_finalize, NULL, &result) != napi_ok) {
        shmring_close(handle);
        free(ring);
        return NULL;
    }
    return result;
}

static napi_value ring_close(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value handle;
    struct ring *ring;
    if (napi_get_cb_info(env, info, &argc, &handle, NULL, NULL) != napi_ok ||
        !ring_of(env, handle, &ring))
        return NULL;
    shmring_close(ring->handle);
    ring->handle = NULL;
    node_cache_free(env, ring);
    return NULL;
}

static napi_value ring_lookup_id(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], result;
    struct ring *ring;
    struct key key;
    if (!ring_call(env, info, &argc, argv, &ring) || !key_acquire(env, argv[0], &key))
        return NULL;
    uint32_t id;
    int rc = shmring_lookup_id(ring->handle, key.data, key.len, &id);
    key_release(&key);
    if (rc < 0)
        return throw_code(env, rc, NULL);
    napi_create_uint32(env, id, &result);
    return result;
}

/* Ids are below 2^32: an answer of 2^32 + ID says "ID, and empty your array of nodes
 * first" (see lookupCachedId in index.js). */
#define FRONT_STALE_FLAG 4294967296.0

/* lookupCachedId(handle, key): KEY's node id, from a version of the cache's
 * fingerprint (the cache follows the version that answered), plus FRONT_STALE_FLAG
 * when the cache was emptied since the last answer that said so. */
static napi_value ring_lookup_cached_id(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], result;
    struct ring *ring;
    struct key key;
    if (!ring_call(env, info, &argc, argv, &ring) || !key_acquire(env, argv[0], &key))
        return NULL;
    uint32_t id;
    uint64_t fingerprint;
    int rc =
        shmring_lookup_id_versioned(ring->handle, key.data, key.len, &id, &fingerprint);
    key_release(&key);
    if (rc < 0)
        return throw_code(env, rc, NULL);
    node_cache_use(env, ring, fingerprint);
    if (ring->nodes.front_stale) {
        ring->nodes.front_stale = false;
        napi_create_double(env, FRONT_STALE_FLAG + id, &result);
    } else {
        napi_create_uint32(env, id, &result);
    }
    return result;
}

static napi_value ring_lookup(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    struct ring *ring;
    struct key key;
    if (!ring_call(env, info, &argc, argv, &ring) || !key_acquire(env, argv[0], &key))
        return NULL;
    uint32_t id;
    uint64_t fingerprint;
    int rc =
        shmring_lookup_id_versioned(ring->handle, key.data, key.len, &id, &fingerprint);
    if (rc < 0) {
        key_release(&key);
        return throw_code(env, rc, NULL);
    }
    node_cache_use(env, ring, fingerprint);
    napi_value node = node_cache_find(env, ring, id);
    if (node != NULL) {
        key_release(&key);
        return node;
    }
    /* The first lookup of this node in this version: the library copies it; the copy
     * comes from the version the handle answers from now, which node_for() checks. */
    shmring_node_t copy;
    rc = shmring_lookup(ring->handle, key.data, key.len, &copy);
    key_release(&key);
    if (rc < 0)
        return throw_code(env, rc, NULL);
    return node_for(env, ring, &copy);
}

static napi_value ring_lookup_n(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], result;
    struct ring *ring;
    if (!ring_call(env, info, &argc, argv, &ring))
        return NULL;
    napi_valuetype type = napi_undefined;
    double n;
    if (argc > 1)
        napi_typeof(env, argv[1], &type);
    if (type != napi_number)
        return throw_type(env, "n must be a number");
    napi_get_value_double(env, argv[1], &n);
    if (!(n >= 1)) {
        napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "n must be at least 1");
        return NULL;
    }
    if (n > SHMRING_LOOKUP_N_MAX)
        n = SHMRING_LOOKUP_N_MAX;
    struct key key;
    if (!key_acquire(env, argv[0], &key))
        return NULL;
    shmring_node_t *nodes = malloc(sizeof(*nodes) * (size_t)n);
    if (nodes == NULL) {
        key_release(&key);
        return throw_code(env, SHMRING_ENOMEM, NULL);
    }
    int rc = shmring_lookup_n(ring->handle, key.data, key.len, nodes, (size_t)n);
    key_release(&key);
    if (rc < 0) {
        free(nodes);
        return throw_code(env, rc, NULL);
    }
    result = NULL;
    if (napi_create_array_with_length(env, (size_t)rc, &result) == napi_ok) {
        for (int i = 0; i < rc; i++) {
            napi_value node = node_for(env, ring, &nodes[i]);
            if (node == NULL ||
                napi_set_element(env, result, (uint32_t)i, node) != napi_ok) {
                result = NULL;
                break;
            }
        }
    }
    free(nodes);
    return result;
}

/* lookupIds(keys): the keys' bytes are copied into one buffer first (reading an
 * array's elements may run JavaScript that changes or detaches a key seen before),
 * then answered from one version in one library call, straight into the memory of
 * the Uint32Array it returns (setting an Array's elements one by one through
 * Node-API costs more than the lookups). */
static napi_value ring_lookup_ids(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], result = NULL;
    struct ring *ring;
    if (!ring_call(env, info, &argc, argv, &ring))
        return NULL;
    bool is_array = false;
    if (argc > 0)
        napi_is_array(env, argv[0], &is_array);
    if (!is_array)
        return throw_type(env, "keys must be an Array");
    uint32_t count;
    if (napi_get_array_length(env, argv[0], &count) != napi_ok)
        return NULL;
    size_t *offsets = malloc(sizeof(*offsets) * ((size_t)count + 1));
    const void **data = malloc(sizeof(*data) * ((size_t)count + 1));
    char *bytes = NULL;
    size_t used = 0, capacity = 0;
    if (offsets == NULL || data == NULL) {
        throw_code(env, SHMRING_ENOMEM, NULL);
        goto done;
    }
    for (uint32_t i = 0; i < count; i++) {
        napi_value element;
        struct key key;
        if (napi_get_element(env, argv[0], i, &element) != napi_ok ||
            !key_acquire(env, element, &key))
            goto done;
        if (key.len > capacity - used) {
            size_t grown = capacity ? capacity : 4096;
            while (grown - used < key.len) {
                if (grown > SIZE_MAX / 2) {
                    key_release(&key);
                    throw_code(env, SHMRING_ENOMEM, NULL);
                    goto done;
                }
                grown *= 2;
            }
            char *larger = realloc(bytes, grown);
            if (larger == NULL) {
                key_release(&key);
                throw_code(env, SHMRING_ENOMEM, NULL);
                goto done;
            }
            bytes = larger;
            capacity = grown;
        }
        if (key.len > 0)
            memcpy(bytes + used, key.data, key.len);
        offsets[i] = used;
        used += key.len;
        key_release(&key);
    }
    offsets[count] = used;
    /* Converting the keys may have run JavaScript that closed the ring. */
    if (ring->handle == NULL) {
        throw_closed(env);
        goto done;
    }
    /* The lengths replace the offsets in place: step i reads offsets i and i + 1,
     * then overwrites only offset i. */
    size_t *lens = offsets;
    for (uint32_t i = 0; i < count; i++) {
        data[i] = bytes != NULL ? bytes + offsets[i] : "";
        lens[i] = offsets[i + 1] - offsets[i];
    }
    void *ids;
    napi_value buffer, array;
    if (napi_create_arraybuffer(env, (size_t)count * sizeof(uint32_t), &ids, &buffer) !=
            napi_ok ||
        napi_create_typedarray(env, napi_uint32_array, count, buffer, 0, &array) !=
            napi_ok)
        goto done;
    int rc = shmring_lookup_ids(ring->handle, data, lens, count, ids);
    if (rc < 0) {
        throw_code(env, rc, NULL);
        goto done;
    }
    result = array;
done:
    free(offsets);
    free((void *)data);
    free(bytes);
    return result;
}

static napi_value ring_node(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    struct ring *ring;
    if (!ring_call(env, info, &argc, argv, &ring))
        return NULL;
    napi_valuetype type = napi_undefined;
    double id;
    if (argc > 0)
        napi_typeof(env, argv[0], &type);
    if (type != napi_number)
        return throw_type(env, "a node id must be a number");
    napi_get_value_double(env, argv[0], &id);
    if (!(id >= 0 && id <= (double)UINT32_MAX) || id != (double)(uint32_t)id)
        return throw_code(env, SHMRING_ENODE, NULL);
    shmring_node_t node;
    int rc = shmring_node(ring->handle, (uint32_t)id, &node);
    if (rc < 0)
        return throw_code(env, rc, NULL);
    return node_for(env, ring, &node);
}

/* Copies every node of the version the handle answers from into an Array of node
 * objects; fills *NODES (freed by the caller). */
static napi_value copy_nodes(napi_env env, struct ring *ring, shmring_nodes_t *nodes)
{
    int rc = shmring_nodes(ring->handle, nodes);
    if (rc < 0)
        return throw_code(env, rc, NULL);
    napi_value array;
    if (napi_create_array_with_length(env, nodes->count, &array) != napi_ok)
        return NULL;
    for (size_t i = 0; i < nodes->count; i++) {
        napi_value node = node_for(env, ring, &nodes->nodes[i]);
        if (node == NULL || napi_set_element(env, array, (uint32_t)i, node) != napi_ok)
            return NULL;
    }
    return array;
}

static napi_value ring_nodes(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    struct ring *ring;
    if (!ring_call(env, info, &argc, NULL, &ring))
        return NULL;
    shmring_nodes_t nodes = {0};
    napi_value array = copy_nodes(env, ring, &nodes);
    shmring_nodes_free(&nodes);
    return array;
}

static napi_value frozen_object(napi_env env, size_t count,
                                const napi_property_descriptor *fields)
{
    napi_value object;
    if (napi_create_object(env, &object) != napi_ok ||
        napi_define_properties(env, object, count, fields) != napi_ok ||
        napi_object_freeze(env, object) != napi_ok)
        return NULL;
    return object;
}

static napi_value ring_snapshot(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    struct ring *ring;
    if (!ring_call(env, info, &argc, NULL, &ring))
        return NULL;
    shmring_nodes_t nodes = {0};
    napi_value array = copy_nodes(env, ring, &nodes);
    napi_value result = NULL;
    if (array != NULL) {
        napi_property_descriptor fields[] = {
            {"generation", NULL, NULL, NULL, NULL,
             generation_value(env, nodes.generation), napi_enumerable, NULL},
            {"fingerprint", NULL, NULL, NULL, NULL,
             nodes.generation != 0 ? fingerprint_hex(env, nodes.fingerprint)
                                   : null_value(env),
             napi_enumerable, NULL},
            {"nodes", NULL, NULL, NULL, NULL, array, napi_enumerable, NULL},
        };
        napi_object_freeze(env, array);
        result = frozen_object(env, 3, fields);
    }
    shmring_nodes_free(&nodes);
    return result;
}

static napi_value ring_status(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    struct ring *ring;
    if (!ring_call(env, info, &argc, NULL, &ring))
        return NULL;
    /* Follows a newer version first, or tries again a destroyed ring's name (at most
     * every 100 ms): then a ring made again under the name shows as present. */
    (void)shmring_generation(ring->handle);
    shmring_status_t status;
    shmring_status(ring->handle, &status);
    /* The ring's control object says UINT64_MAX once it was destroyed. */
    bool destroyed = status.published_generation == UINT64_MAX;
    napi_value present, destroyed_value, error, failed_format;
    napi_get_boolean(env, !destroyed && status.generation != 0, &present);
    napi_create_uint32(env, status.failed_format, &failed_format);
    napi_get_boolean(env, destroyed, &destroyed_value);
    if (status.failed_error != 0)
        napi_create_string_utf8(env, code_name(status.failed_error), NAPI_AUTO_LENGTH,
                                &error);
    else
        error = null_value(env);
    napi_property_descriptor fields[] = {
        {"present", NULL, NULL, NULL, NULL, present, napi_enumerable, NULL},
        {"destroyed", NULL, NULL, NULL, NULL, destroyed_value, napi_enumerable, NULL},
        {"generation", NULL, NULL, NULL, NULL, generation_value(env, status.generation),
         napi_enumerable, NULL},
        {"fingerprint", NULL, NULL, NULL, NULL,
         status.generation != 0 ? fingerprint_hex(env, status.fingerprint)
                                : null_value(env),
         napi_enumerable, NULL},
        {"error", NULL, NULL, NULL, NULL, error, napi_enumerable, NULL},
        /* A version refused as newer than this reader: its format, else 0. */
        {"failedFormat", NULL, NULL, NULL, NULL, failed_format, napi_enumerable, NULL},
    };
    return frozen_object(env, 6, fields);
}

static napi_value ring_get_generation(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    struct ring *ring;
    if (!ring_call(env, info, &argc, NULL, &ring))
        return NULL;
    return generation_value(env, shmring_generation(ring->handle));
}

static napi_value ring_get_fingerprint(napi_env env, napi_callback_info info)
{
    size_t argc = 0;
    struct ring *ring;
    if (!ring_call(env, info, &argc, NULL, &ring))
        return NULL;
    uint64_t fingerprint;
    int rc = shmring_fingerprint(ring->handle, &fingerprint);
    if (rc == SHMRING_EEMPTY)
        return null_value(env);
    if (rc < 0)
        return throw_code(env, rc, NULL);
    return fingerprint_hex(env, fingerprint);
}

static napi_value ring_get_closed(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value handle, result;
    struct ring *ring;
    if (napi_get_cb_info(env, info, &argc, &handle, NULL, NULL) != napi_ok ||
        !ring_of(env, handle, &ring))
        return NULL;
    napi_get_boolean(env, ring->handle == NULL, &result);
    return result;
}

/* Leases ---------------------------------------------------------------------------- */

/*
 * A bounded-load lease (docs/bounded-loads.md), behind index.js's Lease: the library's
 * lease, and a reference to the ring it was taken on, which keeps the ring (and its
 * handle, unless close() ran) alive for as long as the lease object lives. `held` is
 * what Lease#held says; a ring's close gives back all its leases, so a lease of a
 * closed ring is released without calling the library.
 */
struct lease {
    shmring_lease_t lease;
    struct ring *ring;
    napi_ref ring_ref;
    bool held;
};

/* Gives back LEASE, held on the open RING: the library can only answer
 * SHMRING_ELEASE, for a lease released before, which `held` rules out. */
static void lease_give_back(struct ring *ring, struct lease *lease)
{
    int rc = shmring_release(ring->handle, &lease->lease);
    (void)rc;
}

/* The last resort: a lease object collected while held gives its count back. The
 * collector runs when it pleases, so release() or withLease() is the way. */
static void lease_finalize(napi_env env, void *data, void *hint)
{
    (void)hint;
    struct lease *lease = data;
    if (lease->held && lease->ring->handle != NULL)
        lease_give_back(lease->ring, lease);
    napi_delete_reference(env, lease->ring_ref);
    free(lease);
}

/* acquire(handle, key, target): takes the lease of KEY and defines TARGET's (the new
 * Lease's) node, candidates and counted; returns the lease's handle (an External). */
static napi_value ring_acquire(napi_env env, napi_callback_info info)
{
    napi_value args[3], result;
    size_t count = 3;
    struct ring *ring;
    struct key key;
    if (napi_get_cb_info(env, info, &count, args, NULL, NULL) != napi_ok ||
        !ring_of(env, args[0], &ring))
        return NULL;
    if (ring->handle == NULL)
        return throw_closed(env);
    /* Arguments not given are undefined: a key's TypeError, or a failure to define
     * the properties. */
    struct lease *lease = calloc(1, sizeof(*lease));
    if (lease == NULL)
        return throw_code(env, SHMRING_ENOMEM, NULL);
    if (!key_acquire(env, args[1], &key)) {
        free(lease);
        return NULL;
    }
    int rc = shmring_acquire(ring->handle, key.data, key.len, &lease->lease);
    key_release(&key);
    if (rc < 0) {
        free(lease);
        return throw_code(env, rc, NULL);
    }
    lease->ring = ring;
    lease->held = true;
    /* Until the External owns it, a failure gives the lease back at once. */
    if (napi_create_reference(env, args[0], 1, &lease->ring_ref) != napi_ok) {
        lease_give_back(ring, lease);
        free(lease);
        return NULL;
    }
    if (napi_create_external(env, lease, lease_finalize, NULL, &result) != napi_ok) {
        lease_give_back(ring, lease);
        napi_delete_reference(env, lease->ring_ref);
        free(lease);
        return NULL;
    }
    /* From here on the External owns the lease; a failure gives it back at once. */
    shmring_node_t copy;
    napi_value node = NULL, candidates, counted;
    rc = shmring_node(ring->handle, lease->lease.id, &copy);
    if (rc < 0)
        throw_code(env, rc, NULL);
    else if ((node = node_for(env, ring, &copy)) != NULL &&
             napi_create_uint32(env, lease->lease.candidates, &candidates) == napi_ok &&
             napi_get_boolean(env, lease->lease.counted != 0, &counted) == napi_ok) {
        napi_property_descriptor fields[] = {
            {"node", NULL, NULL, NULL, NULL, node, napi_enumerable, NULL},
            {"candidates", NULL, NULL, NULL, NULL, candidates, napi_enumerable, NULL},
            {"counted", NULL, NULL, NULL, NULL, counted, napi_enumerable, NULL},
        };
        if (napi_define_properties(env, args[2], 3, fields) == napi_ok)
            return result;
    }
    lease->held = false;
    lease_give_back(ring, lease);
    return NULL;
}

/* The lease behind this call's first argument, or NULL with a TypeError pending. */
static struct lease *lease_of(napi_env env, napi_callback_info info)
{
    napi_value handle;
    size_t count = 1;
    struct lease *lease = NULL;
    if (napi_get_cb_info(env, info, &count, &handle, NULL, NULL) != napi_ok)
        return NULL;
    if (count < 1 || napi_get_value_external(env, handle, (void **)&lease) != napi_ok ||
        lease == NULL)
        throw_type(env, "not a shmring Lease");
    return lease;
}

/* release(lease): once; the second time SHMRING_ELEASE, as the library answers. */
static napi_value lease_release(napi_env env, napi_callback_info info)
{
    struct lease *lease = lease_of(env, info);
    if (lease == NULL)
        return NULL;
    bool held = lease->held;
    lease->held = false;
    if (lease->ring->handle == NULL) /* the ring's close gave it back */
        return held ? NULL : throw_code(env, SHMRING_ELEASE, NULL);
    int rc = shmring_release(lease->ring->handle, &lease->lease);
    return rc < 0 ? throw_code(env, rc, NULL) : NULL;
}

static napi_value lease_get_held(napi_env env, napi_callback_info info)
{
    struct lease *lease = lease_of(env, info);
    napi_value result = NULL;
    if (lease != NULL)
        napi_get_boolean(env, lease->held && lease->ring->handle != NULL, &result);
    return result;
}

/* Module functions ----------------------------------------------------------------- */

static void addon_finalize(napi_env env, void *data, void *hint)
{
    (void)hint;
    struct addon *addon = data;
    for (int i = 0; i < ERROR_KINDS; i++)
        if (addon->error_classes[i] != NULL)
            napi_delete_reference(env, addon->error_classes[i]);
    free(addon);
}

/* _init(classes): index.js hands over its Error subclasses, by name. */
static napi_value module_init_errors(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value classes;
    struct addon *addon;
    if (napi_get_cb_info(env, info, &argc, &classes, NULL, NULL) != napi_ok ||
        napi_get_instance_data(env, (void **)&addon) != napi_ok || addon == NULL)
        return NULL;
    for (int i = 0; i < ERROR_KINDS; i++) {
        napi_value constructor;
        napi_valuetype type;
        if (napi_get_named_property(env, classes, error_class_names[i], &constructor) !=
                napi_ok ||
            napi_typeof(env, constructor, &type) != napi_ok || type != napi_function)
            return throw_type(env, "_init() needs every error class");
        if (addon->error_classes[i] != NULL)
            napi_delete_reference(env, addon->error_classes[i]);
        napi_create_reference(env, constructor, 1, &addon->error_classes[i]);
    }
    addon->initialized = true;
    return NULL;
}

static napi_value module_strerror(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value arg, result;
    int32_t code = INT_MIN;
    napi_valuetype type = napi_undefined;
    if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok)
        return NULL;
    if (argc > 0)
        napi_typeof(env, arg, &type);
    if (type != napi_number)
        return throw_type(env, "a code must be a number");
    napi_get_value_int32(env, arg, &code);
    napi_create_string_utf8(env, shmring_strerror(code), NAPI_AUTO_LENGTH, &result);
    return result;
}

/* _noop(x): does nothing and returns undefined, the floor bench.js compares
 * lookupId() with: the cheapest call into this addon with one argument. */
static napi_value module_noop(napi_env env, napi_callback_info info)
{
    (void)env;
    (void)info;
    return NULL;
}

static napi_value string_value(napi_env env, const char *text)
{
    napi_value value;
    napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &value);
    return value;
}

static napi_value int_value(napi_env env, int32_t number)
{
    napi_value value;
    napi_create_int32(env, number, &value);
    return value;
}

/* The codes by name ({SHMRING_ENOENT: -2, ...}), generated from the header's one
 * list, so they cannot drift. */
static napi_value codes_object(napi_env env)
{
    static const struct {
        const char *name;
        int value;
    } codes[] = {
#define CODE_ENTRY(name, value, text) {"SHMRING_" #name, value},
        SHMRING_ERRNO_MAP(CODE_ENTRY)
#undef CODE_ENTRY
    };
    napi_value object;
    if (napi_create_object(env, &object) != napi_ok)
        return NULL;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        napi_set_named_property(env, object, codes[i].name,
                                int_value(env, codes[i].value));
    napi_object_freeze(env, object);
    return object;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */)
{
    struct addon *addon = calloc(1, sizeof(*addon));
    if (addon == NULL ||
        napi_set_instance_data(env, addon, addon_finalize, NULL) != napi_ok) {
        free(addon);
        napi_throw_error(env, NULL, "shmring: out of memory");
        return NULL;
    }
    /* The Ring class is index.js's; each of its methods calls one of these. */
    static const struct {
        const char *name;
        napi_callback call;
    } functions[] = {
        {"open", ring_open},
        {"close", ring_close},
        {"closed", ring_get_closed},
        {"lookup", ring_lookup},
        {"lookupId", ring_lookup_id},
        {"lookupCachedId", ring_lookup_cached_id},
        {"lookupIds", ring_lookup_ids},
        {"lookupN", ring_lookup_n},
        {"node", ring_node},
        {"nodes", ring_nodes},
        {"snapshot", ring_snapshot},
        {"status", ring_status},
        {"generation", ring_get_generation},
        {"fingerprint", ring_get_fingerprint},
        {"acquire", ring_acquire},
        {"release", lease_release},
        {"held", lease_get_held},
        {"_init", module_init_errors},
        {"strerror", module_strerror},
        {"_noop", module_noop},
    };
    for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
        napi_value function;
        if (napi_create_function(env, functions[i].name, NAPI_AUTO_LENGTH,
                                 functions[i].call, NULL, &function) != napi_ok ||
            napi_set_named_property(env, exports, functions[i].name, function) != napi_ok)
            return NULL;
    }
    napi_property_descriptor exports_fields[] = {
        {"codes", NULL, NULL, NULL, NULL, codes_object(env), napi_enumerable, NULL},
        {"LOOKUP_N_MAX", NULL, NULL, NULL, NULL, int_value(env, SHMRING_LOOKUP_N_MAX),
         napi_enumerable, NULL},
        {"DEFAULT_DIRECTORY", NULL, NULL, NULL, NULL,
         string_value(env, SHMRING_DEFAULT_DIRECTORY), napi_enumerable, NULL},
        /* The version of the headers this addon was compiled against, which CMake
         * generates from project(VERSION), and the library's own at run time. */
        {"version", NULL, NULL, NULL, NULL, string_value(env, SHMRING_VERSION_STRING),
         napi_enumerable, NULL},
        {"libraryVersion", NULL, NULL, NULL, NULL, string_value(env, shmring_version()),
         napi_enumerable, NULL},
    };
    if (napi_define_properties(env, exports,
                               sizeof(exports_fields) / sizeof(exports_fields[0]),
                               exports_fields) != napi_ok)
        return NULL;
    return exports;
}
