/*
 * _shmring: the CPython extension module over libshmring's reader API.
 *
 * The binding adds no logic of its own: it converts arguments, makes one call into
 * the library and maps its error code to an exception.
 *
 * Every call that uses a handle holds the GIL from before it reads self->handle
 * until the library returns, and no library call runs Python code or releases the
 * GIL. So no two calls on one handle ever run at the same time, whichever threads
 * make them: the promise SHMRING_OPEN_SERIALIZED asks for, which spares every lookup
 * liburcu's read-side section (README "Speed"). The same holds for close(), which
 * can therefore close at once. Only opening releases the GIL, before any other
 * thread can see the handle. A forked child (os.fork(), a gunicorn worker) gets its
 * own copy of every handle, and the thread that forks holds the GIL, so no call of
 * its parent is half done in it. This module is single-phase: a free-threaded
 * CPython re-enables the GIL when it imports it, so the promise holds there too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <shmring.h>

/* Keys of lookup_ids() converted on the stack, before falling back to the heap. */
#define STACK_KEYS 32
/* Node ids the node cache indexes in an array (at most 512 KB of pointers); rings
 * whose ids ringctl assigned stay below it unless nodes come and go by the tens of
 * thousands. */
#define NODE_CACHE_IDS 65536
/* What a lookup "returns" when the ring was closed while its key was converted: no
 * library code is this. */
#define SHMRING_CLOSED INT_MIN

typedef struct {
    PyObject_HEAD
        /* The handle every call uses (opened SHMRING_OPEN_SERIALIZED: see the top);
         * NULL once close() ran. */
        shmring_t *handle;
    PyObject *name;
    PyObject *directory;
    /* The Node objects of every node of one version, made at the first lookup in
     * it (node_cache_fill()) and returned by every lookup that answers a node from
     * that version, so that lookup() costs what lookup_id() costs plus a table read.
     * A version is known by its fingerprint, which covers every field of a Node:
     * two versions with one fingerprint have the same Node for every id. Ids below
     * NODE_CACHE_IDS index by_id; larger ones (set explicitly by a JSON node set)
     * go into the dict large_ids. */
    struct {
        bool valid;
        uint64_t fingerprint;
        PyObject **by_id;
        size_t capacity;
        PyObject *large_ids;
    } nodes;
} RingObject;

/* The module's state lives in statics: the module is single-phase and its types are
 * created once per process, like most extension modules of its size. */
static PyTypeObject NodeType;
static PyTypeObject SnapshotType;
static PyTypeObject StatusType;
static PyObject *Error;
static PyObject *RingNotFound;
static PyObject *PermissionDenied;
static PyObject *NotTrusted;
static PyObject *EmptyRing;
static PyObject *AllNodesDown;
static PyObject *NoSuchNode;
static PyObject *InvalidArgument;
static PyObject *CorruptRing;
static PyObject *OutOfMemory;

/* Exceptions ------------------------------------------------------------------- */

static PyObject *error_class(int code)
{
    switch (code) {
    case SHMRING_ENOENT:
    case SHMRING_ENODIR:
        return RingNotFound;
    case SHMRING_EACCES:
    case SHMRING_EPERM:
        return PermissionDenied;
    case SHMRING_EOWNER:
    case SHMRING_ENOTRING:
    case SHMRING_EBASEDIR:
    case SHMRING_EBASEOWNER:
        return NotTrusted;
    case SHMRING_EEMPTY:
        return EmptyRing;
    case SHMRING_EALLDOWN:
        return AllNodesDown;
    case SHMRING_ENODE:
        return NoSuchNode;
    case SHMRING_EINVAL:
    case SHMRING_EBADRING:
    case SHMRING_EBADDIR:
    case SHMRING_ENOTRINGDIR:
    case -ENOTDIR:
        return InvalidArgument;
    case SHMRING_ENOMEM:
        return OutOfMemory;
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
        return CorruptRing;
    default:
        return Error;
    }
}

/* Whether CODE says what is wrong with the ring directory rather than the ring: its
 * message then names the directory. */
static bool is_directory_error(int code)
{
    return code == SHMRING_EBADDIR || code == SHMRING_ENODIR ||
           code == SHMRING_ENOTRINGDIR || code == -ENOTDIR ||
           code == SHMRING_EBASEOWNER || code == SHMRING_EBASEDIR;
}

/* Raises the exception of CODE, its message the library's text (followed by CONTEXT
 * when not NULL), with the code in its `code` attribute. Returns NULL. */
static PyObject *raise_closed(void);

static PyObject *raise_code(int code, PyObject *context)
{
    if (code == SHMRING_CLOSED)
        return raise_closed();
    PyObject *message;
    if (context != NULL)
        message = PyUnicode_FromFormat("%s: %R", shmring_strerror(code), context);
    else
        message = PyUnicode_FromString(shmring_strerror(code));
    if (message == NULL)
        return NULL;
    PyObject *exc = PyObject_CallOneArg(error_class(code), message);
    Py_DECREF(message);
    if (exc == NULL)
        return NULL;
    PyObject *value = PyLong_FromLong(code);
    if (value == NULL || PyObject_SetAttrString(exc, "code", value) < 0) {
        Py_XDECREF(value);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(value);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *raise_closed(void)
{
    PyErr_SetString(PyExc_ValueError, "operation on a closed shmring.Ring");
    return NULL;
}

/* Keys -------------------------------------------------------------------------- */

/*
 * Points *DATA and *LEN at KEY's bytes: a bytes object's own, a str's UTF-8 form
 * (cached by the str itself, so it lives as long as KEY), or any other C-contiguous
 * buffer's, exported into VIEW (then *HAS_VIEW is set and the caller releases it).
 * Returns 0, or -1 with TypeError (not a key type), UnicodeEncodeError (a str with
 * lone surrogates) or BufferError (a non-contiguous buffer).
 */
static inline __attribute__((always_inline)) int key_bytes(PyObject *key,
                                                           const char **data,
                                                           Py_ssize_t *len,
                                                           Py_buffer *view, int *has_view)
{
    *has_view = 0;
    if (PyBytes_CheckExact(key)) {
        *data = PyBytes_AS_STRING(key);
        *len = PyBytes_GET_SIZE(key);
        return 0;
    }
    if (PyUnicode_Check(key)) {
        if (PyUnicode_IS_COMPACT_ASCII(key)) {
            *data = (const char *)PyUnicode_DATA(key);
            *len = PyUnicode_GET_LENGTH(key);
            return 0;
        }
        *data = PyUnicode_AsUTF8AndSize(key, len);
        return *data == NULL ? -1 : 0;
    }
    if (PyObject_CheckBuffer(key)) {
        if (PyObject_GetBuffer(key, view, PyBUF_SIMPLE) < 0)
            return -1;
        *has_view = 1;
        *data = (const char *)view->buf;
        *len = view->len;
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "a key must be str, bytes or a bytes-like object, not %.100s",
                 Py_TYPE(key)->tp_name);
    return -1;
}

/* A key converted for one library call: its bytes, and the buffer view (if any) that
 * keeps them alive until key_release(). */
struct key {
    const char *data;
    size_t len;
    Py_buffer view;
    int has_view;
};

static inline __attribute__((always_inline)) int key_acquire(PyObject *object,
                                                             struct key *key)
{
    Py_ssize_t len;
    if (key_bytes(object, &key->data, &len, &key->view, &key->has_view) < 0)
        return -1;
    key->len = (size_t)len;
    return 0;
}

static inline void key_release(struct key *key)
{
    if (key->has_view)
        PyBuffer_Release(&key->view);
}

/* Nodes ------------------------------------------------------------------------- */

static PyStructSequence_Field node_fields[] = {
    {"id", "the node's id: stable for as long as the node exists, never reused"},
    {"name", "the node's unique name"},
    {"address", "the node's address, e.g. '10.0.1.1:11211'"},
    {"weight", "the node's weight, 1-65535"},
    {NULL, NULL}};

static PyStructSequence_Desc node_desc = {
    "shmring.Node",
    "Node(id, name, address, weight)\n--\n\n"
    "One node of a ring, as a lookup answers it: an immutable copy, unaffected by\n"
    "later versions of the ring. A named tuple: compares, hashes and unpacks as the\n"
    "tuple (id, name, address, weight).",
    node_fields, 4};

static PyStructSequence_Field snapshot_fields[] = {
    {"generation", "the generation of the version the nodes were copied from"},
    {"fingerprint",
     "that version's content fingerprint as 16 hex digits (as `ringctl show` prints "
     "it), or None when nothing is published"},
    {"nodes", "a tuple of every Node of that version, in the version's node order"},
    {NULL, NULL}};

static PyStructSequence_Desc snapshot_desc = {
    "shmring.Snapshot",
    "Snapshot(generation, fingerprint, nodes)\n--\n\n"
    "Every node of one version of a ring, with that version's generation and\n"
    "fingerprint: one consistent copy, as Ring.snapshot() returns it.",
    snapshot_fields, 3};

/* Decodes a node string: names are valid UTF-8, addresses are opaque text, so bytes
 * that are not UTF-8 become surrogate escapes instead of an error. */
static PyObject *node_text(const char *text)
{
    return PyUnicode_DecodeUTF8(text, (Py_ssize_t)strnlen(text, SHMRING_NAME_MAX + 1),
                                "surrogateescape");
}

static PyObject *node_new(const shmring_node_t *node)
{
    PyObject *result = PyStructSequence_New(&NodeType);
    if (result == NULL)
        return NULL;
    PyObject *id = PyLong_FromUnsignedLong(node->id);
    PyObject *name = node_text(node->name);
    PyObject *address = node_text(node->address);
    PyObject *weight = PyLong_FromUnsignedLong(node->weight);
    if (id == NULL || name == NULL || address == NULL || weight == NULL) {
        Py_XDECREF(id);
        Py_XDECREF(name);
        Py_XDECREF(address);
        Py_XDECREF(weight);
        Py_DECREF(result);
        return NULL;
    }
    PyStructSequence_SET_ITEM(result, 0, id);
    PyStructSequence_SET_ITEM(result, 1, name);
    PyStructSequence_SET_ITEM(result, 2, address);
    PyStructSequence_SET_ITEM(result, 3, weight);
    return result;
}

static PyStructSequence_Field status_fields[] = {
    {"present", "True when the ring exists and the ring answers from a published version "
                "of it"},
    {"destroyed", "True when the ring was destroyed: lookups go on answering from its "
                  "last version until a ring made again under its name is followed"},
    {"generation", "the generation of the version the ring answers from (0: none)"},
    {"fingerprint",
     "that version's content fingerprint as 16 hex digits, as `ringctl show` prints it; "
     "None when nothing was published"},
    {"error", "the SHMRING_E* code of the last failed switch to a newer version (e.g. "
              "ENOENT once the ring was destroyed), 0 when none failed"},
    /* An attribute, not an item: the tuple keeps its five items. */
    {"failed_format",
     "the snapshot format of a version refused as newer than this reader (error "
     "ENEWFORMAT or EFEATURE: upgrade and restart the worker), else 0"},
    {NULL, NULL}};

static PyStructSequence_Desc status_desc = {
    "shmring.Status",
    "Status(present, destroyed, generation, fingerprint, error)\n--\n\n"
    "What a Ring answers from, as Ring.status() returns it: for a worker's health\n"
    "check or status page.",
    status_fields, 5};

/* A fingerprint as `ringctl show` prints it: 16 lowercase hex digits. */
static PyObject *fingerprint_hex(uint64_t fingerprint)
{
    char text[17];
    snprintf(text, sizeof(text), "%016llx", (unsigned long long)fingerprint);
    return PyUnicode_FromStringAndSize(text, 16);
}

/* Node cache ----------------------------------------------------------------------- */

static void node_cache_clear(RingObject *self)
{
    for (size_t i = 0; i < self->nodes.capacity; i++)
        Py_CLEAR(self->nodes.by_id[i]);
    Py_CLEAR(self->nodes.large_ids);
    self->nodes.valid = false;
}

static void node_cache_free(RingObject *self)
{
    node_cache_clear(self);
    PyMem_Free(self->nodes.by_id);
    self->nodes.by_id = NULL;
    self->nodes.capacity = 0;
}

/* The cached Node of ID (a borrowed reference), or NULL. */
static inline PyObject *node_cache_find(RingObject *self, uint32_t id)
{
    if (id < self->nodes.capacity)
        return self->nodes.by_id[id];
    if (id < NODE_CACHE_IDS || self->nodes.large_ids == NULL)
        return NULL;
    PyObject *key = PyLong_FromUnsignedLong(id);
    if (key == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *node = PyDict_GetItemWithError(self->nodes.large_ids, key);
    Py_DECREF(key);
    if (node == NULL)
        PyErr_Clear();
    return node;
}

/* The Node objects of one version while they are made, before they go into the
 * cache: in node order, with the dict of the ids too large for by_id (or NULL). */
struct node_set {
    PyObject **nodes;
    size_t count;
    PyObject *large_ids;
};

static void node_set_free(struct node_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        Py_XDECREF(set->nodes[i]);
    PyMem_Free(set->nodes);
    Py_XDECREF(set->large_ids);
}

/*
 * Makes the Node of every node of VERSION into SET (emptied first). The objects of
 * every node's fields come first, then the Node objects, one after another: a lookup
 * touches only its Node object (its reference count), and made next to one another
 * the 10,000 Nodes of a large ring lie 80 bytes apart in half the pages they took
 * one by one between their fields' objects, where a stream of distinct keys reaches
 * them faster (bindings/python/README.md, "Speed"). Returns 0, or -1 with an
 * exception set (SET is then freed).
 */
static int node_set_make(struct node_set *set, const shmring_nodes_t *version)
{
    size_t count = version->count;
    *set =
        (struct node_set){.nodes = PyMem_Calloc(count ? count : 1, sizeof(PyObject *))};
    PyObject **fields = PyMem_Calloc(count ? count * 4 : 1, sizeof(PyObject *));
    if (set->nodes == NULL || fields == NULL) {
        PyMem_Free(set->nodes);
        PyMem_Free(fields);
        PyErr_NoMemory();
        return -1;
    }
    set->count = count;
    int result = -1;
    for (size_t i = 0; i < count; i++) {
        const shmring_node_t *node = &version->nodes[i];
        if ((fields[4 * i] = PyLong_FromUnsignedLong(node->id)) == NULL ||
            (fields[4 * i + 1] = node_text(node->name)) == NULL ||
            (fields[4 * i + 2] = node_text(node->address)) == NULL ||
            (fields[4 * i + 3] = PyLong_FromUnsignedLong(node->weight)) == NULL)
            goto done;
    }
    for (size_t i = 0; i < count; i++) {
        PyObject *node = PyStructSequence_New(&NodeType);
        if (node == NULL)
            goto done;
        for (Py_ssize_t f = 0; f < 4; f++) {
            PyStructSequence_SET_ITEM(node, f, fields[4 * i + (size_t)f]);
            fields[4 * i + (size_t)f] = NULL;
        }
        set->nodes[i] = node;
        if (version->nodes[i].id >= NODE_CACHE_IDS) {
            if (set->large_ids == NULL && (set->large_ids = PyDict_New()) == NULL)
                goto done;
            PyObject *key = PyStructSequence_GET_ITEM(node, 0);
            if (PyDict_SetItem(set->large_ids, key, node) < 0)
                goto done;
        }
    }
    result = 0;
done:
    for (size_t i = 0; i < count * 4; i++)
        Py_XDECREF(fields[i]);
    PyMem_Free(fields);
    if (result < 0)
        node_set_free(set);
    return result;
}

/*
 * Replaces the cache with every Node of the version the handle answers from (after
 * following a newer one): all at once, on the first lookup in a version of another
 * fingerprint, so that every later lookup in that version finds its node. Returns 0,
 * or -1 with an exception set (the cache is then empty).
 */
static int node_cache_fill(RingObject *self)
{
    shmring_nodes_t version;
    int rc = shmring_nodes(self->handle, &version);
    if (rc < 0) {
        raise_code(rc, NULL);
        return -1;
    }
    uint32_t max_id = 0;
    for (size_t i = 0; i < version.count; i++)
        if (version.nodes[i].id < NODE_CACHE_IDS && version.nodes[i].id > max_id)
            max_id = version.nodes[i].id;
    /* Making the objects can run Python code (a garbage collection and the
     * finalizers it calls), which may close this ring and free its cache: the cache
     * is only changed once they are all made. */
    struct node_set set;
    if (node_set_make(&set, &version) < 0) {
        shmring_nodes_free(&version);
        node_cache_clear(self);
        return -1;
    }
    node_cache_clear(self);
    size_t capacity = (size_t)max_id + 1;
    if (capacity > self->nodes.capacity) {
        PyObject **by_id = PyMem_Realloc(self->nodes.by_id, capacity * sizeof(*by_id));
        if (by_id == NULL) {
            node_set_free(&set);
            shmring_nodes_free(&version);
            PyErr_NoMemory();
            return -1;
        }
        memset(by_id + self->nodes.capacity, 0,
               (capacity - self->nodes.capacity) * sizeof(*by_id));
        self->nodes.by_id = by_id;
        self->nodes.capacity = capacity;
    }
    for (size_t i = 0; i < set.count; i++)
        if (version.nodes[i].id < NODE_CACHE_IDS)
            self->nodes.by_id[version.nodes[i].id] = Py_NewRef(set.nodes[i]);
    self->nodes.fingerprint = version.fingerprint;
    shmring_nodes_free(&version);
    self->nodes.large_ids = set.large_ids;
    set.large_ids = NULL;
    node_set_free(&set);
    self->nodes.valid = true;
    return 0;
}

/* Ring -------------------------------------------------------------------------- */

static PyObject *Ring_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    /* PyArg_ParseTupleAndKeywords() takes char ** before Python 3.13. */
    static char *keywords[] = {(char *)"name", (char *)"directory",
                               (char *)"trusted_owner", NULL};
    PyObject *name;
    PyObject *directory_arg = Py_None;
    PyObject *owner_arg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|OO:Ring", keywords, &name,
                                     &directory_arg, &owner_arg))
        return NULL;

    Py_ssize_t name_len;
    const char *name_utf8 = PyUnicode_AsUTF8AndSize(name, &name_len);
    if (name_utf8 == NULL)
        return NULL;
    if (strlen(name_utf8) != (size_t)name_len)
        return raise_code(SHMRING_EBADRING, name);

    shmring_open_options_t options = {.flags = SHMRING_OPEN_SERIALIZED};
    if (owner_arg != Py_None) {
        if (!PyLong_Check(owner_arg)) {
            PyErr_Format(PyExc_TypeError, "trusted_owner must be a uid (int), not %.100s",
                         Py_TYPE(owner_arg)->tp_name);
            return NULL;
        }
        unsigned long uid = PyLong_AsUnsignedLong(owner_arg);
        if ((uid == (unsigned long)-1 && PyErr_Occurred()) || uid != (uid_t)uid ||
            (uid_t)uid == (uid_t)-1) {
            PyErr_Clear();
            return raise_code(SHMRING_EINVAL, owner_arg);
        }
        options.trusted_owner = (uid_t)uid;
    }
    PyObject *directory_bytes = NULL;
    if (directory_arg != Py_None) {
        /* str, bytes or os.PathLike; embedded NULs raise ValueError. */
        if (!PyUnicode_FSConverter(directory_arg, &directory_bytes))
            return NULL;
        options.directory = PyBytes_AS_STRING(directory_bytes);
    }

    shmring_t *handle = NULL;
    int rc;
    /* Opening maps and validates the current version: milliseconds on large rings. */
    PyThreadState *saved = PyEval_SaveThread();
    rc = shmring_open_with(name_utf8, &options, &handle);
    PyEval_RestoreThread(saved);

    PyObject *directory;
    if (directory_bytes != NULL) {
        directory = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(directory_bytes));
        Py_DECREF(directory_bytes);
    } else {
        directory = PyUnicode_FromString(SHMRING_DEFAULT_DIRECTORY);
    }
    if (rc < 0) {
        /* "no such ring: 'web'", but "no such ring directory: '/run/x'". */
        raise_code(rc, directory != NULL && is_directory_error(rc) ? directory : name);
        Py_XDECREF(directory);
        return NULL;
    }
    if (directory == NULL) {
        shmring_close(handle);
        return NULL;
    }
    RingObject *self = (RingObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(directory);
        shmring_close(handle);
        return NULL;
    }
    self->handle = handle;
    Py_INCREF(name);
    self->name = name;
    self->directory = directory;
    return (PyObject *)self;
}

static void Ring_dealloc(RingObject *self)
{
    shmring_close(self->handle);
    node_cache_free(self);
    Py_XDECREF(self->name);
    Py_XDECREF(self->directory);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(Ring_close_doc,
             "close()\n--\n\n"
             "Close the ring. Every later call raises ValueError; closing again does\n"
             "nothing. Nodes already returned stay valid.");

static PyObject *Ring_close(RingObject *self, PyObject *Py_UNUSED(ignored))
{
    /* No other call can be inside the handle: each holds the GIL throughout. */
    shmring_t *handle = self->handle;
    self->handle = NULL;
    shmring_close(handle);
    node_cache_free(self);
    Py_RETURN_NONE;
}

static PyObject *Ring_enter(RingObject *self, PyObject *Py_UNUSED(ignored))
{
    if (self->handle == NULL)
        return raise_closed();
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Ring_exit(RingObject *self, PyObject *const *Py_UNUSED(args),
                           Py_ssize_t Py_UNUSED(nargs))
{
    return Ring_close(self, NULL);
}

PyDoc_STRVAR(Ring_lookup_id_doc,
             "lookup_id(key, /)\n--\n\n"
             "Return the id (an int) of the node that owns KEY (str, bytes or a\n"
             "bytes-like object; a str is looked up as its UTF-8 bytes). Raises\n"
             "EmptyRing or AllNodesDown. The fastest lookup: index your connection\n"
             "pools by node id and learn new ids with node().");

static PyObject *Ring_lookup_id(RingObject *self, PyObject *key)
{
    if (self->handle == NULL)
        return raise_closed();
    struct key k;
    if (key_acquire(key, &k) < 0)
        return NULL;
    uint32_t id;
    /* Read the handle again: converting the key can run Python code (a buffer's
     * __buffer__, another thread taking the GIL) that closes the ring. */
    shmring_t *handle = self->handle;
    int rc =
        handle != NULL ? shmring_lookup_id(handle, k.data, k.len, &id) : SHMRING_CLOSED;
    key_release(&k);
    if (rc < 0)
        return raise_code(rc, NULL);
    return PyLong_FromUnsignedLong(id);
}

PyDoc_STRVAR(Ring_lookup_doc,
             "lookup(key, /)\n--\n\n"
             "Return the Node that owns KEY (str, bytes or a bytes-like object).\n"
             "Every lookup that answers a node from one version returns the same\n"
             "(immutable) Node object: the ring makes the Nodes of every node of a\n"
             "version at its first lookup in it. Raises EmptyRing or AllNodesDown.");

/* The part of lookup() after the library answered ID from the version of
 * FINGERPRINT, when the cache does not hold that version's Node: it is filled
 * (the first lookup in a version), else, when the handle followed a newer version
 * since, the library copies the node from that one. Releases KEY. */
static __attribute__((noinline)) PyObject *
lookup_uncached(RingObject *self, struct key *key, uint32_t id, uint64_t fingerprint)
{
    if (!self->nodes.valid || self->nodes.fingerprint != fingerprint) {
        if (node_cache_fill(self) < 0) {
            key_release(key);
            return NULL;
        }
    }
    PyObject *node =
        self->nodes.fingerprint == fingerprint ? node_cache_find(self, id) : NULL;
    if (node != NULL) {
        key_release(key);
        return Py_NewRef(node);
    }
    /* Filling ran Python code, which may have closed the ring: read it again. */
    shmring_t *handle = self->handle;
    shmring_node_t copy;
    int rc = handle != NULL ? shmring_lookup(handle, key->data, key->len, &copy)
                            : SHMRING_CLOSED;
    key_release(key);
    if (rc < 0)
        return raise_code(rc, NULL);
    return node_new(&copy);
}

static PyObject *Ring_lookup(RingObject *self, PyObject *key)
{
    if (self->handle == NULL)
        return raise_closed();
    struct key k;
    if (key_acquire(key, &k) < 0)
        return NULL;
    uint32_t id;
    uint64_t fingerprint;
    shmring_t *handle = self->handle; /* again: see lookup_id() */
    int rc = handle != NULL
                 ? shmring_lookup_id_versioned(handle, k.data, k.len, &id, &fingerprint)
                 : SHMRING_CLOSED;
    if (rc < 0) {
        key_release(&k);
        return raise_code(rc, NULL);
    }
    PyObject *node;
    if (self->nodes.valid && self->nodes.fingerprint == fingerprint &&
        (node = node_cache_find(self, id)) != NULL) {
        key_release(&k);
        return Py_NewRef(node);
    }
    return lookup_uncached(self, &k, id, fingerprint);
}

/* Lease ------------------------------------------------------------------------- */

/*
 * A bounded-load lease (docs/bounded-loads.md): taken by Ring.acquire(), ended by
 * release(), by leaving its `with` block, or when the object is freed, whichever
 * comes first, and only once. CPython frees an object as soon as its last reference
 * goes, so a lease that an exception skipped past is given back at once.
 */
typedef struct {
    PyObject_HEAD RingObject *ring;
    PyObject *node;
    shmring_lease_t lease;
    bool held;
} LeaseObject;

static PyTypeObject LeaseType;

/* Ends SELF's lease. Returns 0, or SHMRING_ELEASE when it was ended before: the
 * library's answer while the ring is open, and the same code once it is closed (the
 * handle gave back every lease it held when it closed, so only the first release
 * after that is quiet, as in the other bindings). */
static int lease_end(LeaseObject *self)
{
    bool held = self->held;
    self->held = false;
    if (self->ring->handle == NULL)
        return held ? 0 : SHMRING_ELEASE;
    return shmring_release(self->ring->handle, &self->lease);
}

static void Lease_dealloc(LeaseObject *self)
{
    /* Only a held lease: one that acquire() failed to fill is freed unheld, and the
     * library must not read its uninitialized state. */
    if (self->held) {
        int rc = lease_end(self);
        (void)rc; /* 0: `held` rules out SHMRING_ELEASE */
    }
    Py_XDECREF(self->node);
    Py_XDECREF(self->ring);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(Lease_release_doc,
             "release()\n--\n\n"
             "End the lease: the node's in-flight count goes down by one. Once: a\n"
             "second release raises Error with code ELEASE. A lease of a closed Ring\n"
             "was given back when it closed.");

static PyObject *Lease_release(LeaseObject *self, PyObject *Py_UNUSED(ignored))
{
    int rc = lease_end(self);
    if (rc < 0)
        return raise_code(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *Lease_enter(LeaseObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self->node);
}

/* Leaving the block ends the lease unless the block released it itself, as Lua's
 * with_lease() does (Ruby's and Node's block forms give the block only the node). An
 * error here would also replace the exception the block may be leaving with. */
static PyObject *Lease_exit(LeaseObject *self, PyObject *const *Py_UNUSED(args),
                            Py_ssize_t Py_UNUSED(nargs))
{
    if (self->held) {
        int rc = lease_end(self);
        (void)rc; /* 0: `held` rules out SHMRING_ELEASE */
    }
    Py_RETURN_FALSE;
}

static PyObject *Lease_repr(LeaseObject *self)
{
    return PyUnicode_FromFormat("<shmring.Lease node=%R candidates=%u%s>", self->node,
                                self->lease.candidates, self->held ? "" : " released");
}

static PyMethodDef Lease_methods[] = {
    {"release", (PyCFunction)Lease_release, METH_NOARGS, Lease_release_doc},
    {"__enter__", (PyCFunction)Lease_enter, METH_NOARGS,
     "Return the leased Node; leaving the block releases the lease."},
    {"__exit__", (PyCFunction)(void (*)(void))Lease_exit, METH_FASTCALL,
     "Release the lease unless it was released already (and let any exception\n"
     "through)."},
    {NULL, NULL, 0, NULL}};

static PyObject *Lease_get_held(LeaseObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->held);
}

static PyObject *Lease_get_candidates(LeaseObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromUnsignedLong(self->lease.candidates);
}

static PyObject *Lease_get_counted(LeaseObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->lease.counted != 0);
}

static PyGetSetDef Lease_getset[] = {
    {"held", (getter)Lease_get_held, NULL, "True until the lease is released.", NULL},
    {"candidates", (getter)Lease_get_candidates, NULL,
     "How many of the key's candidates were tried: 1 when its first took it.", NULL},
    {"counted", (getter)Lease_get_counted, NULL,
     "True when the ring's load board counts the lease; False for a plain lookup's\n"
     "answer (the ring has no board, or this process is not in its group).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef Lease_members[] = {
    {"node", T_OBJECT, offsetof(LeaseObject, node), READONLY, "The leased Node."},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject LeaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shmring.Lease",
    .tp_basicsize = sizeof(LeaseObject),
    .tp_dealloc = (destructor)Lease_dealloc,
    .tp_repr = (reprfunc)Lease_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A bounded-load lease of one request on a node: see Ring.acquire().",
    .tp_methods = Lease_methods,
    .tp_members = Lease_members,
    .tp_getset = Lease_getset,
};

PyDoc_STRVAR(Ring_acquire_doc,
             "acquire(key, /)\n--\n\n"
             "Lease the node for KEY under the ring's balance factor and count one\n"
             "request in flight on it, shared with every worker process of the host\n"
             "(docs/bounded-loads.md). Use it as a context manager:\n\n"
             "    with ring.acquire(key) as node:\n"
             "        send(node.address, request)\n\n"
             "Leaving the block releases the lease, exception or not. Raises\n"
             "EmptyRing or AllNodesDown.");

static PyObject *Ring_acquire(RingObject *self, PyObject *key)
{
    if (self->handle == NULL)
        return raise_closed();
    struct key k;
    if (key_acquire(key, &k) < 0)
        return NULL;
    /* The object first: once the lease is taken, nothing may fail before it is in
     * an object whose freeing gives it back. */
    LeaseObject *lease = PyObject_New(LeaseObject, &LeaseType);
    if (lease == NULL) {
        key_release(&k);
        return NULL;
    }
    lease->ring = (RingObject *)Py_NewRef(self);
    lease->node = NULL;
    lease->held = false;
    shmring_t *handle = self->handle; /* again: see lookup_id() */
    int rc = handle != NULL ? shmring_acquire(handle, k.data, k.len, &lease->lease)
                            : SHMRING_CLOSED;
    key_release(&k);
    if (rc < 0) {
        Py_DECREF(lease);
        return raise_code(rc, NULL);
    }
    lease->held = true;
    /* The lease's Node is the one lookup() returns, from the cache of the version the
     * lease was taken in: the view the handle answers from now, since a status never
     * switches it. */
    shmring_status_t status;
    shmring_status(handle, &status);
    if (!self->nodes.valid || self->nodes.fingerprint != status.fingerprint) {
        if (node_cache_fill(self) < 0) {
            Py_DECREF(lease); /* releases it */
            return NULL;
        }
    }
    PyObject *node = self->nodes.valid && self->nodes.fingerprint == status.fingerprint
                         ? node_cache_find(self, lease->lease.id)
                         : NULL;
    if (node != NULL) {
        lease->node = Py_NewRef(node);
        return (PyObject *)lease;
    }
    /* Filling ran Python code, which may have closed the ring, or followed a newer
     * version: the node is then copied from the version the handle answers from. */
    handle = self->handle;
    shmring_node_t copy;
    rc = handle != NULL ? shmring_node(handle, lease->lease.id, &copy) : SHMRING_CLOSED;
    if (rc < 0 || (lease->node = node_new(&copy)) == NULL) {
        Py_DECREF(lease); /* releases it */
        return rc < 0 ? raise_code(rc, NULL) : NULL;
    }
    return (PyObject *)lease;
}

PyDoc_STRVAR(Ring_lookup_n_doc,
             "lookup_n(key, n, /)\n--\n\n"
             "Return a list of up to N distinct up Nodes for KEY, in the ring's\n"
             "preference order (the first is what lookup() answers): fewer when the\n"
             "ring has fewer up nodes, and at most LOOKUP_N_MAX (64) whatever N.\n"
             "Raises ValueError when N < 1, EmptyRing or AllNodesDown.");

static PyObject *Ring_lookup_n(RingObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "lookup_n() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (self->handle == NULL)
        return raise_closed();
    if (!PyLong_Check(args[1])) {
        PyErr_Format(PyExc_TypeError, "n must be an int, not %.100s",
                     Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (overflow > 0 || n > SHMRING_LOOKUP_N_MAX)
        n = SHMRING_LOOKUP_N_MAX;
    if (overflow < 0 || n < 1) {
        PyErr_SetString(PyExc_ValueError, "n must be at least 1");
        return NULL;
    }
    struct key k;
    if (key_acquire(args[0], &k) < 0)
        return NULL;
    /* On the heap: 64 nodes are 33 KB, more than a small thread stack should hold. */
    shmring_node_t *nodes = PyMem_New(shmring_node_t, (size_t)n);
    if (nodes == NULL) {
        key_release(&k);
        return PyErr_NoMemory();
    }
    shmring_t *handle = self->handle; /* again: see lookup_id() */
    int rc = handle != NULL ? shmring_lookup_n(handle, k.data, k.len, nodes, (size_t)n)
                            : SHMRING_CLOSED;
    key_release(&k);
    PyObject *result = NULL;
    if (rc < 0) {
        raise_code(rc, NULL);
    } else if ((result = PyList_New(rc)) != NULL) {
        for (int i = 0; i < rc; i++) {
            PyObject *node = node_new(&nodes[i]);
            if (node == NULL) {
                Py_CLEAR(result);
                break;
            }
            PyList_SET_ITEM(result, i, node);
        }
    }
    PyMem_Free(nodes);
    return result;
}

PyDoc_STRVAR(Ring_lookup_ids_doc,
             "lookup_ids(keys, /)\n--\n\n"
             "Return a list of the ids of the nodes that own each of KEYS (an iterable\n"
             "of str, bytes or bytes-like objects), all answered from one version of\n"
             "the ring in one call into the library: cheaper per key than lookup_id()\n"
             "for a batch, e.g. the keys of a multi-get. Raises EmptyRing or\n"
             "AllNodesDown (even for no keys), TypeError for a key of another type.");

static PyObject *Ring_lookup_ids(RingObject *self, PyObject *keys)
{
    if (self->handle == NULL)
        return raise_closed();
    /* A tuple of our own: the caller's list could be changed (and its items freed)
     * by code a key's conversion runs. */
    PyObject *seq = PySequence_Tuple(keys);
    if (seq == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);

    const void *stack_data[STACK_KEYS];
    size_t stack_lens[STACK_KEYS];
    uint32_t stack_ids[STACK_KEYS];
    const void **data = stack_data;
    size_t *lens = stack_lens;
    uint32_t *ids = stack_ids;
    /* Exported buffers, only for keys that are neither bytes nor str. */
    Py_buffer *views = NULL;
    Py_ssize_t view_count = 0;
    PyObject *result = NULL;

    if (count > STACK_KEYS) {
        data = PyMem_New(const void *, (size_t)count);
        lens = PyMem_New(size_t, (size_t)count);
        ids = PyMem_New(uint32_t, (size_t)count);
        if (data == NULL || lens == NULL || ids == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *key = items[i];
        const char *key_data;
        Py_ssize_t key_len;
        Py_buffer view;
        int has_view;
        if (key_bytes(key, &key_data, &key_len, &view, &has_view) < 0)
            goto done;
        if (has_view) {
            if (views == NULL && (views = PyMem_New(Py_buffer, (size_t)count)) == NULL) {
                PyBuffer_Release(&view);
                PyErr_NoMemory();
                goto done;
            }
            views[view_count++] = view;
        }
        data[i] = key_data;
        lens[i] = (size_t)key_len;
    }
    /* The sequence holds a reference to every key, and the views pin the buffers, so
     * every pointer stays valid through the call. */
    shmring_t *handle = self->handle; /* again: see lookup_id() */
    int rc = handle != NULL ? shmring_lookup_ids(handle, data, lens, (size_t)count, ids)
                            : SHMRING_CLOSED;
    if (rc < 0) {
        raise_code(rc, NULL);
        goto done;
    }
    if ((result = PyList_New(count)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *id = PyLong_FromUnsignedLong(ids[i]);
        if (id == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, id);
    }

done:
    for (Py_ssize_t i = 0; i < view_count; i++)
        PyBuffer_Release(&views[i]);
    PyMem_Free(views);
    if (data != stack_data)
        PyMem_Free((void *)data);
    if (lens != stack_lens)
        PyMem_Free(lens);
    if (ids != stack_ids)
        PyMem_Free(ids);
    Py_DECREF(seq);
    return result;
}

PyDoc_STRVAR(Ring_node_doc,
             "node(id, /)\n--\n\n"
             "Return the Node whose id is ID in the version the ring answers from\n"
             "(switching to a newer published version first): how a worker routing\n"
             "with lookup_id() learns a new id's name and address. Raises NoSuchNode\n"
             "when no node has that id (whatever the int), EmptyRing when nothing is\n"
             "published.");

static PyObject *Ring_node(RingObject *self, PyObject *id_arg)
{
    if (self->handle == NULL)
        return raise_closed();
    if (!PyLong_Check(id_arg)) {
        PyErr_Format(PyExc_TypeError, "a node id must be an int, not %.100s",
                     Py_TYPE(id_arg)->tp_name);
        return NULL;
    }
    int overflow;
    long long id = PyLong_AsLongLongAndOverflow(id_arg, &overflow);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    if (overflow != 0 || id < 0 || id > (long long)UINT32_MAX)
        return raise_code(SHMRING_ENODE, id_arg);
    shmring_node_t node;
    int rc = shmring_node(self->handle, (uint32_t)id, &node);
    if (rc < 0)
        return raise_code(rc, rc == SHMRING_ENODE ? id_arg : NULL);
    return node_new(&node);
}

/* Copies every node of the current version (at 10,000 nodes, 5 MB: a millisecond or
 * so, with the GIL held like every call on the handle). Returns 0 or -1 with an
 * exception set. */
static int copy_nodes(RingObject *self, shmring_nodes_t *nodes, PyObject **tuple)
{
    if (self->handle == NULL) {
        raise_closed();
        return -1;
    }
    int rc = shmring_nodes(self->handle, nodes);
    if (rc < 0) {
        raise_code(rc, NULL);
        return -1;
    }
    if (nodes->count > (size_t)PY_SSIZE_T_MAX ||
        (*tuple = PyTuple_New((Py_ssize_t)nodes->count)) == NULL) {
        shmring_nodes_free(nodes);
        return -1;
    }
    for (size_t i = 0; i < nodes->count; i++) {
        PyObject *node = node_new(&nodes->nodes[i]);
        if (node == NULL) {
            Py_CLEAR(*tuple);
            shmring_nodes_free(nodes);
            return -1;
        }
        PyTuple_SET_ITEM(*tuple, (Py_ssize_t)i, node);
    }
    return 0;
}

PyDoc_STRVAR(Ring_nodes_doc,
             "nodes()\n--\n\n"
             "Return a tuple of every Node (up and down) of the version the ring\n"
             "answers from, in the version's node order; empty when nothing is\n"
             "published. One consistent copy: use snapshot() to also learn which\n"
             "generation it is. Not for hot paths.");

static PyObject *Ring_nodes(RingObject *self, PyObject *Py_UNUSED(ignored))
{
    shmring_nodes_t nodes;
    PyObject *tuple = NULL;
    if (copy_nodes(self, &nodes, &tuple) < 0)
        return NULL;
    shmring_nodes_free(&nodes);
    return tuple;
}

PyDoc_STRVAR(Ring_snapshot_doc,
             "snapshot()\n--\n\n"
             "Return a Snapshot(generation, fingerprint, nodes): every Node of the\n"
             "version the ring answers from, with that version's generation and\n"
             "fingerprint, all from one version (rebuild connection pools from it and\n"
             "know which version they match). When nothing is published, generation\n"
             "is 0, fingerprint None and nodes empty.");

static PyObject *Ring_snapshot(RingObject *self, PyObject *Py_UNUSED(ignored))
{
    shmring_nodes_t nodes;
    PyObject *tuple = NULL;
    if (copy_nodes(self, &nodes, &tuple) < 0)
        return NULL;
    PyObject *generation = PyLong_FromUnsignedLongLong(nodes.generation);
    PyObject *fingerprint;
    if (nodes.generation == 0) {
        fingerprint = Py_NewRef(Py_None);
    } else {
        fingerprint = fingerprint_hex(nodes.fingerprint);
    }
    shmring_nodes_free(&nodes);
    PyObject *result = NULL;
    if (generation != NULL && fingerprint != NULL &&
        (result = PyStructSequence_New(&SnapshotType)) != NULL) {
        PyStructSequence_SET_ITEM(result, 0, generation);
        PyStructSequence_SET_ITEM(result, 1, fingerprint);
        PyStructSequence_SET_ITEM(result, 2, tuple);
        return result;
    }
    Py_XDECREF(generation);
    Py_XDECREF(fingerprint);
    Py_DECREF(tuple);
    return NULL;
}

static PyObject *Ring_get_generation(RingObject *self, void *Py_UNUSED(closure))
{
    if (self->handle == NULL)
        return raise_closed();
    return PyLong_FromUnsignedLongLong(shmring_generation(self->handle));
}

static PyObject *Ring_get_fingerprint(RingObject *self, void *Py_UNUSED(closure))
{
    if (self->handle == NULL)
        return raise_closed();
    uint64_t fingerprint;
    int rc = shmring_fingerprint(self->handle, &fingerprint);
    if (rc == SHMRING_EEMPTY)
        Py_RETURN_NONE;
    if (rc < 0)
        return raise_code(rc, NULL);
    return fingerprint_hex(fingerprint);
}

PyDoc_STRVAR(Ring_status_doc,
             "status()\n--\n\n"
             "Return a Status(present, destroyed, generation, fingerprint, error): what\n"
             "the ring answers from, after following a newer published version if there\n"
             "is one (as the generation attribute does). A destroyed ring shows\n"
             "destroyed=True, present=False, error=ENOENT, and keeps the generation and\n"
             "fingerprint of the version lookups still answer from. No system call\n"
             "unless a switch is due; cheap enough for every health check.");

static PyObject *Ring_status(RingObject *self, PyObject *Py_UNUSED(ignored))
{
    if (self->handle == NULL)
        return raise_closed();
    /* Follows a newer version first, or tries again a destroyed ring's name (at most
     * every 100 ms): then a ring made again under the name shows as present. */
    (void)shmring_generation(self->handle);
    shmring_status_t status;
    shmring_status(self->handle, &status);
    /* The ring's control object says UINT64_MAX once it was destroyed. */
    bool destroyed = status.published_generation == UINT64_MAX;
    PyObject *generation = PyLong_FromUnsignedLongLong(status.generation);
    PyObject *fingerprint =
        status.generation != 0 ? fingerprint_hex(status.fingerprint) : Py_NewRef(Py_None);
    PyObject *error = PyLong_FromLong(status.failed_error);
    PyObject *failed_format = PyLong_FromUnsignedLong(status.failed_format);
    PyObject *result = NULL;
    if (generation != NULL && fingerprint != NULL && error != NULL &&
        failed_format != NULL && (result = PyStructSequence_New(&StatusType)) != NULL) {
        PyStructSequence_SET_ITEM(result, 0,
                                  PyBool_FromLong(!destroyed && status.generation != 0));
        PyStructSequence_SET_ITEM(result, 1, PyBool_FromLong(destroyed));
        PyStructSequence_SET_ITEM(result, 2, generation);
        PyStructSequence_SET_ITEM(result, 3, fingerprint);
        PyStructSequence_SET_ITEM(result, 4, error);
        PyStructSequence_SET_ITEM(result, 5, failed_format);
        return result;
    }
    Py_XDECREF(generation);
    Py_XDECREF(fingerprint);
    Py_XDECREF(error);
    Py_XDECREF(failed_format);
    return NULL;
}

static PyObject *Ring_get_closed(RingObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->handle == NULL);
}

static PyObject *Ring_repr(RingObject *self)
{
    return PyUnicode_FromFormat("<shmring.Ring %R directory=%R%s>", self->name,
                                self->directory, self->handle == NULL ? " closed" : "");
}

static PyMethodDef Ring_methods[] = {
    {"lookup", (PyCFunction)Ring_lookup, METH_O, Ring_lookup_doc},
    {"acquire", (PyCFunction)Ring_acquire, METH_O, Ring_acquire_doc},
    {"lookup_id", (PyCFunction)Ring_lookup_id, METH_O, Ring_lookup_id_doc},
    {"lookup_ids", (PyCFunction)Ring_lookup_ids, METH_O, Ring_lookup_ids_doc},
    {"lookup_n", (PyCFunction)(void (*)(void))Ring_lookup_n, METH_FASTCALL,
     Ring_lookup_n_doc},
    {"node", (PyCFunction)Ring_node, METH_O, Ring_node_doc},
    {"nodes", (PyCFunction)Ring_nodes, METH_NOARGS, Ring_nodes_doc},
    {"snapshot", (PyCFunction)Ring_snapshot, METH_NOARGS, Ring_snapshot_doc},
    {"status", (PyCFunction)Ring_status, METH_NOARGS, Ring_status_doc},
    {"close", (PyCFunction)Ring_close, METH_NOARGS, Ring_close_doc},
    {"__enter__", (PyCFunction)Ring_enter, METH_NOARGS,
     "__enter__()\n--\n\nReturn the ring itself."},
    {"__exit__", (PyCFunction)(void (*)(void))Ring_exit, METH_FASTCALL,
     "__exit__(*exc_info)\n--\n\nClose the ring."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Ring_getset[] = {
    {"generation", (getter)Ring_get_generation, NULL,
     "The generation (an int) of the version the ring answers from, after switching\n"
     "to a newer published version if there is one; 0 before anything is published.",
     NULL},
    {"fingerprint", (getter)Ring_get_fingerprint, NULL,
     "The 64-bit content fingerprint of the version the ring answers from, as the\n"
     "16 hex digits `ringctl show` prints (int(fingerprint, 16) is the number);\n"
     "equal for equal content; None when nothing is published.",
     NULL},
    {"closed", (getter)Ring_get_closed, NULL, "True once close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef Ring_members[] = {
    {"name", T_OBJECT, offsetof(RingObject, name), READONLY, "The ring's name."},
    {"directory", T_OBJECT, offsetof(RingObject, directory), READONLY,
     "The directory holding the ring."},
    {NULL, 0, 0, 0, NULL}};

PyDoc_STRVAR(Ring_doc,
             "Ring(name, directory=None, trusted_owner=None)\n--\n\n"
             "A reader of the shmring ring NAME, opened once and shared by every thread\n"
             "of the process (and inherited by forked children: open it in a prefork\n"
             "server's master). DIRECTORY is where rings live (default /dev/shm; a\n"
             "str, bytes or os.PathLike); TRUSTED_OWNER is a uid whose rings are\n"
             "accepted besides root's and the process's own.\n\n"
             "Raises RingNotFound, NotTrusted, PermissionDenied, InvalidArgument (a\n"
             "bad name), CorruptRing or another shmring.Error. A context manager:\n"
             "leaving the block closes it.");

static PyTypeObject RingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shmring.Ring",
    .tp_basicsize = sizeof(RingObject),
    .tp_dealloc = (destructor)Ring_dealloc,
    .tp_repr = (reprfunc)Ring_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Ring_doc,
    .tp_methods = Ring_methods,
    .tp_members = Ring_members,
    .tp_getset = Ring_getset,
    .tp_new = Ring_new,
};

/* Module functions ----------------------------------------------------------------- */

PyDoc_STRVAR(strerror_doc, "strerror(code, /)\n--\n\n"
                           "Return the library's description of a SHMRING_E* code.");

static PyObject *module_strerror(PyObject *Py_UNUSED(module), PyObject *code_arg)
{
    int overflow;
    long code = PyLong_AsLongAndOverflow(code_arg, &overflow);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    if (overflow != 0 || code < INT_MIN || code > INT_MAX)
        code = INT_MIN;
    return PyUnicode_FromString(shmring_strerror((int)code));
}

PyDoc_STRVAR(noop_doc, "_noop(x, /)\n--\n\n"
                       "Do nothing and return None: the cost of the cheapest call into\n"
                       "this module with one argument, the floor bench.py compares\n"
                       "lookup_id() with.");

static PyObject *module_noop(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(arg))
{
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"strerror", module_strerror, METH_O, strerror_doc},
    {"_noop", module_noop, METH_O, noop_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef shmring_module = {
    PyModuleDef_HEAD_INIT,
    "_shmring",
    "The C extension under the shmring package; import shmring instead.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL};

/* Creates the exception QUALIFIED ("shmring.Name") with BASES (a reference this call
 * consumes), adds it to MODULE as Name and stores a reference in *OUT. Returns 0 or
 * -1. */
static int add_exception(PyObject *module, PyObject **out, const char *qualified,
                         const char *doc, PyObject *bases)
{
    if (bases == NULL)
        return -1;
    *out = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
    Py_DECREF(bases);
    if (*out == NULL)
        return -1;
    return PyModule_AddObjectRef(module, strchr(qualified, '.') + 1, *out);
}

static int add_exceptions(PyObject *m)
{
    if (add_exception(m, &Error, "shmring.Error",
                      "Base class of every error of the ring library. `code` holds the\n"
                      "library's (negative) SHMRING_E* code, e.g. shmring.EEMPTY.",
                      Py_NewRef(PyExc_Exception)) < 0)
        return -1;
#define ERROR_AND(base) PyTuple_Pack(2, Error, base)
    if (add_exception(m, &RingNotFound, "shmring.RingNotFound",
                      "The ring does not exist (ENOENT), or its directory does not\n"
                      "(ENODIR). Also a FileNotFoundError.",
                      ERROR_AND(PyExc_FileNotFoundError)) < 0 ||
        add_exception(m, &PermissionDenied, "shmring.PermissionDenied",
                      "The ring exists but this process may not read it (EACCES,\n"
                      "EPERM). Also a PermissionError.",
                      ERROR_AND(PyExc_PermissionError)) < 0 ||
        add_exception(m, &NotTrusted, "shmring.NotTrusted",
                      "The ring's objects or directory belong to an owner this process\n"
                      "does not trust, others may write them, or something else holds\n"
                      "the ring's name (EOWNER, ENOTRING, EBASEOWNER, EBASEDIR).",
                      PyTuple_Pack(1, PermissionDenied)) < 0 ||
        add_exception(m, &EmptyRing, "shmring.EmptyRing",
                      "The ring has no nodes (EEMPTY). Also a LookupError.",
                      ERROR_AND(PyExc_LookupError)) < 0 ||
        add_exception(m, &AllNodesDown, "shmring.AllNodesDown",
                      "Every node of the ring is down (EALLDOWN). Also a LookupError.",
                      ERROR_AND(PyExc_LookupError)) < 0 ||
        add_exception(m, &NoSuchNode, "shmring.NoSuchNode",
                      "No node of the ring's version has that id (ENODE). Also a\n"
                      "LookupError.",
                      ERROR_AND(PyExc_LookupError)) < 0 ||
        add_exception(m, &InvalidArgument, "shmring.InvalidArgument",
                      "A bad argument: an invalid ring name (EBADRING), a directory\n"
                      "path that is relative or too long (EBADDIR), a directory that\n"
                      "cannot hold rings (ENOTRINGDIR, -errno.ENOTDIR), ... Also a\n"
                      "ValueError.",
                      ERROR_AND(PyExc_ValueError)) < 0 ||
        add_exception(m, &CorruptRing, "shmring.CorruptRing",
                      "The ring's current version or control object fails validation\n"
                      "(EBADMAGIC ... ECHECKSUM, ECONTROL).",
                      PyTuple_Pack(1, Error)) < 0 ||
        add_exception(m, &OutOfMemory, "shmring.OutOfMemory",
                      "The library ran out of memory (ENOMEM). Also a MemoryError.",
                      ERROR_AND(PyExc_MemoryError)) < 0)
        return -1;
#undef ERROR_AND
    return 0;
}

PyMODINIT_FUNC PyInit__shmring(void);

PyMODINIT_FUNC PyInit__shmring(void)
{
    if (NodeType.tp_name == NULL &&
        (PyStructSequence_InitType2(&NodeType, &node_desc) < 0 ||
         PyStructSequence_InitType2(&SnapshotType, &snapshot_desc) < 0 ||
         PyStructSequence_InitType2(&StatusType, &status_desc) < 0))
        return NULL;
    if (PyType_Ready(&RingType) < 0 || PyType_Ready(&LeaseType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&shmring_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Ring", (PyObject *)&RingType) < 0 ||
        PyModule_AddObjectRef(m, "Node", (PyObject *)&NodeType) < 0 ||
        PyModule_AddObjectRef(m, "Lease", (PyObject *)&LeaseType) < 0 ||
        PyModule_AddObjectRef(m, "Snapshot", (PyObject *)&SnapshotType) < 0 ||
        PyModule_AddObjectRef(m, "Status", (PyObject *)&StatusType) < 0 ||
        add_exceptions(m) < 0)
        goto fail;
        /* The codes, generated from the header's one list, so they cannot drift. */
#define ADD_CODE(name, value, text)                                                      \
    if (PyModule_AddIntConstant(m, #name, value) < 0)                                    \
        goto fail;
    SHMRING_ERRNO_MAP(ADD_CODE)
#undef ADD_CODE
    if (PyModule_AddIntConstant(m, "LOOKUP_N_MAX", SHMRING_LOOKUP_N_MAX) < 0 ||
        PyModule_AddStringConstant(m, "DEFAULT_DIRECTORY", SHMRING_DEFAULT_DIRECTORY) <
            0 ||
        PyModule_AddStringConstant(m, "library_version", shmring_version()) < 0 ||
        /* The package's version is the version of the headers it was compiled
         * against, which CMake generates from project(VERSION): written nowhere in
         * the binding, it cannot drift from the library's. */
        PyModule_AddStringConstant(m, "__version__", SHMRING_VERSION_STRING) < 0)
        goto fail;
    return m;

fail:
    Py_DECREF(m);
    return NULL;
}
