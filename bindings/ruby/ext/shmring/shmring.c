/*
 * shmring/shmring: the Ruby C extension over libshmring's reader API.
 *
 * The extension adds no logic of its own: it converts arguments, makes one call into
 * the library and maps its error code to an exception.
 *
 * Lookups hold the GVL: they never block (no lock, and no system call but when a new
 * version is mapped), so keeping it costs less than releasing it would. Two calls
 * release it: opening, before any other thread can see the handle, and Ring#refresh,
 * which maps and validates a newly published version (tens of milliseconds at 10,000
 * nodes) while the other threads of the process go on answering from the current
 * version. That is
 * what the handle's shared mode (no SHMRING_OPEN_SERIALIZED) is for: any number of
 * threads may call in at once, each lookup a read-side critical section, and only one
 * thread at a time switches versions. A forked child (a Puma or Unicorn worker) gets
 * its own copy of every handle (the library's fork hooks keep liburcu consistent). The
 * extension is not marked Ractor-safe, so only the main Ractor uses it.
 */
#include <ruby.h>
#include <ruby/thread.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <shmring.h>

/* Node ids the node cache indexes in an array (at most 512 KB of VALUEs); rings whose
 * ids ringctl assigned stay below it unless nodes come and go by the tens of
 * thousands. Larger ids (set explicitly by a JSON node set) go into a Hash. */
#define NODE_CACHE_IDS 65536

struct ring {
    /* The handle every call uses (shared: see the top); NULL before initialize and
     * once close ran. */
    shmring_t *handle;
    /* Ring#refresh calls running without the GVL in this process (their pid, so that a
     * child forked meanwhile does not count them), and a close asked for meanwhile,
     * which the last of them carries out. */
    int refreshing;
    pid_t refreshing_pid;
    shmring_t *close_pending;
    VALUE name;
    VALUE directory;
    /* The Node objects of one version, made on first use and returned by every later
     * lookup that answers that node from that version, so that a lookup allocates
     * nothing. A version is known by its fingerprint, which covers every field of a
     * Node: two versions with one fingerprint have the same Node for every id. */
    struct {
        bool valid;
        uint64_t fingerprint;
        VALUE *by_id; /* 0 (Qfalse) where no Node was made yet */
        size_t capacity;
        VALUE large_ids; /* a Hash, or Qnil */
    } nodes;
};

static VALUE mShmring;
static VALUE cRing;
static VALUE cNode;
static VALUE cStatus;
static VALUE cLease;
static VALUE eError;
static VALUE eRingNotFound;
static VALUE ePermissionDenied;
static VALUE eNotTrusted;
static VALUE eEmptyRing;
static VALUE eAllNodesDown;
static VALUE eNoSuchNode;
static VALUE eInvalidArgument;
static VALUE eCorruptRing;
static VALUE eOutOfMemory;
static ID id_directory;
static ID id_trusted_owner;
static ID id_code;

/* Errors ------------------------------------------------------------------------ */

static VALUE error_class(int code)
{
    switch (code) {
    case SHMRING_ENOENT:
    case SHMRING_ENODIR:
        return eRingNotFound;
    case SHMRING_EACCES:
    case SHMRING_EPERM:
        return ePermissionDenied;
    case SHMRING_EOWNER:
    case SHMRING_ENOTRING:
    case SHMRING_EBASEDIR:
    case SHMRING_EBASEOWNER:
        return eNotTrusted;
    case SHMRING_EEMPTY:
        return eEmptyRing;
    case SHMRING_EALLDOWN:
        return eAllNodesDown;
    case SHMRING_ENODE:
        return eNoSuchNode;
    case SHMRING_EINVAL:
    case SHMRING_EBADRING:
    case SHMRING_EBADDIR:
    case SHMRING_ENOTRINGDIR:
    case -ENOTDIR:
        return eInvalidArgument;
    case SHMRING_ENOMEM:
        return eOutOfMemory;
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
        return eCorruptRing;
    default:
        return eError;
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

/* Raises the exception of CODE: its message the library's text, followed by CONTEXT
 * (inspected) unless it is Qnil, and the code in its #code. */
static void raise_code(int code, VALUE context) __attribute__((noreturn));

static void raise_code(int code, VALUE context)
{
    VALUE message = rb_str_new_cstr(shmring_strerror(code));
    if (!NIL_P(context)) {
        rb_str_cat_cstr(message, ": ");
        rb_str_append(message, rb_inspect(context));
    }
    VALUE exc = rb_exc_new_str(error_class(code), message);
    rb_ivar_set(exc, id_code, INT2NUM(code));
    rb_exc_raise(exc);
}

static void raise_closed(void) __attribute__((noreturn));

static void raise_closed(void)
{
    rb_raise(rb_eIOError, "closed ring");
}

/* The ring object ----------------------------------------------------------------- */

static void ring_mark(void *data)
{
    struct ring *r = data;
    rb_gc_mark(r->name);
    rb_gc_mark(r->directory);
    rb_gc_mark(r->nodes.large_ids);
    for (size_t i = 0; i < r->nodes.capacity; i++)
        if (r->nodes.by_id[i] != 0)
            rb_gc_mark(r->nodes.by_id[i]);
}

static void node_cache_clear(struct ring *r)
{
    if (r->nodes.by_id != NULL)
        memset(r->nodes.by_id, 0, r->nodes.capacity * sizeof(*r->nodes.by_id));
    r->nodes.large_ids = Qnil;
    r->nodes.valid = false;
}

static void node_cache_free(struct ring *r)
{
    node_cache_clear(r);
    ruby_xfree(r->nodes.by_id);
    r->nodes.by_id = NULL;
    r->nodes.capacity = 0;
}

static void ring_free(void *data)
{
    struct ring *r = data;
    shmring_close(r->handle);
    shmring_close(r->close_pending);
    ruby_xfree(r->nodes.by_id);
    ruby_xfree(r);
}

static size_t ring_memsize(const void *data)
{
    const struct ring *r = data;
    return sizeof(*r) + r->nodes.capacity * sizeof(*r->nodes.by_id);
}

static const rb_data_type_t ring_type = {
    .wrap_struct_name = "Shmring::Ring",
    .function = {.dmark = ring_mark, .dfree = ring_free, .dsize = ring_memsize},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

static VALUE ring_alloc(VALUE klass)
{
    struct ring *r;
    VALUE self = TypedData_Make_Struct(klass, struct ring, &ring_type, r);
    r->name = Qnil;
    r->directory = Qnil;
    r->nodes.large_ids = Qnil;
    return self;
}

static struct ring *ring_get(VALUE self)
{
    struct ring *r;
    TypedData_Get_Struct(self, struct ring, &ring_type, r);
    return r;
}

/* The handle of SELF, or IOError when it is closed (or was never opened). Call it after
 * converting the arguments: see the top. */
static shmring_t *ring_handle(struct ring *r)
{
    if (r->handle == NULL)
        raise_closed();
    return r->handle;
}

/* Nodes ------------------------------------------------------------------------- */

static VALUE frozen_text(const char *text)
{
    /* Names and addresses are printable UTF-8 (the library's rule for both). */
    return rb_str_freeze(
        rb_utf8_str_new(text, (long)strnlen(text, SHMRING_NAME_MAX + 1)));
}

static VALUE node_new(const shmring_node_t *node)
{
    VALUE result = rb_struct_new(cNode, UINT2NUM(node->id), frozen_text(node->name),
                                 frozen_text(node->address), UINT2NUM(node->weight));
    return rb_obj_freeze(result);
}

/* The cached Node of ID, or 0. */
static inline VALUE node_cache_find(struct ring *r, uint32_t id)
{
    if (id < r->nodes.capacity)
        return r->nodes.by_id[id];
    if (id < NODE_CACHE_IDS || NIL_P(r->nodes.large_ids))
        return 0;
    VALUE node = rb_hash_lookup2(r->nodes.large_ids, UINT2NUM(id), Qundef);
    return node == Qundef ? 0 : node;
}

static void node_cache_add(struct ring *r, uint32_t id, VALUE node)
{
    if (id < NODE_CACHE_IDS) {
        if (id >= r->nodes.capacity) {
            size_t capacity = r->nodes.capacity ? r->nodes.capacity : 64;
            while (capacity <= id)
                capacity *= 2;
            if (capacity > NODE_CACHE_IDS)
                capacity = NODE_CACHE_IDS;
            /* Grown zeroed before it is published, so a GC in between marks no
             * garbage. */
            VALUE *by_id = ruby_xcalloc(capacity, sizeof(*by_id));
            if (r->nodes.capacity != 0)
                memcpy(by_id, r->nodes.by_id, r->nodes.capacity * sizeof(*by_id));
            ruby_xfree(r->nodes.by_id);
            r->nodes.by_id = by_id;
            r->nodes.capacity = capacity;
        }
        r->nodes.by_id[id] = node;
        return;
    }
    if (NIL_P(r->nodes.large_ids))
        r->nodes.large_ids = rb_hash_new();
    rb_hash_aset(r->nodes.large_ids, UINT2NUM(id), node);
}

/*
 * The Node for COPY, a node the library copied from the version whose fingerprint is
 * FINGERPRINT: the cached one when that version's Node was made before, otherwise a new
 * one, kept for the next lookups of that version. AFTER is the fingerprint read after
 * the copy: when it differs, the version changed meanwhile and COPY is returned as a
 * Node of its own, uncached.
 */
static VALUE cached_node(struct ring *r, const shmring_node_t *copy, uint64_t fingerprint,
                         uint64_t after)
{
    if (after != fingerprint)
        return node_new(copy);
    if (!r->nodes.valid || r->nodes.fingerprint != fingerprint) {
        node_cache_clear(r);
        r->nodes.valid = true;
        r->nodes.fingerprint = fingerprint;
    }
    VALUE node = node_cache_find(r, copy->id);
    if (node != 0)
        return node;
    node = node_new(copy);
    /* Making the Node may have run the GC, never Ruby code or a lookup: the cache
     * still belongs to FINGERPRINT. */
    node_cache_add(r, copy->id, node);
    return node;
}

/* The fingerprint of the version a handle answers from now (0 when none). A Node the
 * library copied between two calls of it that agree comes from that version: another
 * thread's Ring#refresh may switch versions at any time, but the fingerprint covers
 * every field of every node, so even a switch and back cannot make a wrong Node. */
static uint64_t current_fingerprint(shmring_t *handle)
{
    shmring_status_t status;
    shmring_status(handle, &status);
    return status.fingerprint;
}

/* A fingerprint as `ringctl show` prints it: 16 lowercase hex digits. */
static VALUE fingerprint_hex(uint64_t fingerprint)
{
    char text[17];
    snprintf(text, sizeof(text), "%016llx", (unsigned long long)fingerprint);
    return rb_usascii_str_new(text, 16);
}

/* Ring#initialize ------------------------------------------------------------------ */

struct open_call {
    const char *name;
    shmring_open_options_t options;
    shmring_t *handle;
    int rc;
};

static void *open_without_gvl(void *data)
{
    struct open_call *call = data;
    call->rc = shmring_open_with(call->name, &call->options, &call->handle);
    return NULL;
}

/*
 * call-seq:
 *   Shmring::Ring.new(name, directory: nil, trusted_owner: nil)
 *
 * Opens ring NAME in DIRECTORY (default /dev/shm; a String or Pathname), accepting
 * rings of root, of the process's user and of uid TRUSTED_OWNER.
 */
static VALUE ring_initialize(int argc, VALUE *argv, VALUE self)
{
    VALUE name, options_hash;
    rb_scan_args(argc, argv, "1:", &name, &options_hash);
    ID keywords[2] = {id_directory, id_trusted_owner};
    VALUE values[2] = {Qundef, Qundef};
    if (!NIL_P(options_hash))
        rb_get_kwargs(options_hash, keywords, 0, 2, values);
    VALUE directory_arg = values[0] == Qundef ? Qnil : values[0];
    VALUE owner_arg = values[1] == Qundef ? Qnil : values[1];

    struct ring *r = ring_get(self);
    if (!NIL_P(r->name))
        rb_raise(rb_eRuntimeError, "Shmring::Ring is already initialized");

    /* Frozen copies, kept by the Ring: nothing can change or free them while the GVL
     * is released. */
    name = rb_str_new_frozen(StringValue(name));
    struct open_call call = {.options = {.flags = 0}};
    call.name = StringValueCStr(name);
    if (!NIL_P(owner_arg)) {
        if (!RB_INTEGER_TYPE_P(owner_arg))
            rb_raise(rb_eTypeError, "trusted_owner must be a uid (Integer), not %s",
                     rb_obj_classname(owner_arg));
        /* A uid: 0 to 2^32-2 ((uid_t)-1 means "no uid" to the system). */
        if (!FIXNUM_P(owner_arg) || FIX2LONG(owner_arg) < 0 ||
            (unsigned long)FIX2LONG(owner_arg) >= (unsigned long)(uid_t)-1)
            raise_code(SHMRING_EINVAL, owner_arg);
        call.options.trusted_owner = (uid_t)FIX2LONG(owner_arg);
    }
    VALUE directory;
    if (NIL_P(directory_arg)) {
        directory = rb_str_new_frozen(rb_str_new_cstr(SHMRING_DEFAULT_DIRECTORY));
    } else {
        directory = rb_str_new_frozen(rb_get_path(directory_arg));
        call.options.directory = StringValueCStr(directory);
    }

    /* Set first, so that a second initialize (send(:initialize, ...) from another
     * thread while this one opens) is refused; a Ring whose open fails is not
     * returned by new. */
    r->name = name;
    r->directory = directory;
    /* Opening maps and validates the current version: milliseconds on large rings. */
    rb_thread_call_without_gvl(open_without_gvl, &call, NULL, NULL);
    if (call.rc < 0)
        /* "no such ring: \"web\"", but "no such ring directory: \"/run/x\"". */
        raise_code(call.rc, is_directory_error(call.rc) ? directory : name);
    r->handle = call.handle;
    return self;
}

/* Ring methods --------------------------------------------------------------------- */

/*
 * call-seq:
 *   ring.lookup_id(key) -> Integer
 *
 * The id of the node that owns KEY (a String, looked up as its bytes).
 */
static VALUE ring_lookup_id(VALUE self, VALUE key)
{
    StringValue(key);
    struct ring *r = ring_get(self);
    uint32_t id;
    int rc = shmring_lookup_id(ring_handle(r), RSTRING_PTR(key), RSTRING_LEN(key), &id);
    if (rc < 0)
        raise_code(rc, Qnil);
    return UINT2NUM(id);
}

/*
 * call-seq:
 *   ring.lookup(key) -> Shmring::Node
 *
 * The node that owns KEY: every lookup that answers a node from one version returns
 * the same frozen Node, made on its first lookup in that version.
 */
static VALUE ring_lookup(VALUE self, VALUE key)
{
    StringValue(key);
    struct ring *r = ring_get(self);
    shmring_t *handle = ring_handle(r);
    uint32_t id;
    uint64_t fingerprint;
    int rc = shmring_lookup_id_versioned(handle, RSTRING_PTR(key), RSTRING_LEN(key), &id,
                                         &fingerprint);
    if (rc < 0)
        raise_code(rc, Qnil);
    if (r->nodes.valid && r->nodes.fingerprint == fingerprint) {
        VALUE node = node_cache_find(r, id);
        if (node != 0)
            return node;
    }
    /* The first lookup of this node in this version: the library copies it. */
    shmring_node_t copy;
    rc = shmring_lookup(handle, RSTRING_PTR(key), RSTRING_LEN(key), &copy);
    if (rc < 0)
        raise_code(rc, Qnil);
    return cached_node(r, &copy, fingerprint, current_fingerprint(handle));
}

/*
 * call-seq:
 *   ring.lookup_n(key, n) -> Array of Shmring::Node
 *
 * Up to N distinct up nodes for KEY in the ring's preference order (the first is what
 * #lookup answers): fewer when the ring has fewer, at most Shmring::LOOKUP_N_MAX.
 */
static VALUE ring_lookup_n(VALUE self, VALUE key, VALUE n_arg)
{
    StringValue(key);
    if (!RB_INTEGER_TYPE_P(n_arg))
        rb_raise(rb_eTypeError, "n must be an Integer, not %s", rb_obj_classname(n_arg));
    /* A larger N is treated as LOOKUP_N_MAX, as the library does. */
    long n = SHMRING_LOOKUP_N_MAX;
    if (FIXNUM_P(n_arg) ? FIX2LONG(n_arg) < 1 : !rb_big_sign(n_arg))
        rb_raise(rb_eArgError, "n must be at least 1");
    if (FIXNUM_P(n_arg) && FIX2LONG(n_arg) < SHMRING_LOOKUP_N_MAX)
        n = FIX2LONG(n_arg);
    struct ring *r = ring_get(self);
    shmring_t *handle = ring_handle(r);
    /* On the heap (64 nodes are 33 KB), freed by the GC if making a Node raises. */
    VALUE buffer;
    shmring_node_t *nodes = ALLOCV_N(shmring_node_t, buffer, n);
    uint64_t fingerprint = current_fingerprint(handle);
    int rc =
        shmring_lookup_n(handle, RSTRING_PTR(key), RSTRING_LEN(key), nodes, (size_t)n);
    if (rc < 0) {
        ALLOCV_END(buffer);
        raise_code(rc, Qnil);
    }
    uint64_t after = current_fingerprint(handle);
    VALUE result = rb_ary_new_capa(rc);
    for (int i = 0; i < rc; i++)
        rb_ary_push(result, cached_node(r, &nodes[i], fingerprint, after));
    ALLOCV_END(buffer);
    return result;
}

/*
 * call-seq:
 *   ring.node(id) -> Shmring::Node
 *
 * The node with id ID in the version the ring answers from; Shmring::NoSuchNode when
 * there is none.
 */
static VALUE ring_node(VALUE self, VALUE id_arg)
{
    if (!RB_INTEGER_TYPE_P(id_arg))
        rb_raise(rb_eTypeError, "id must be an Integer, not %s",
                 rb_obj_classname(id_arg));
    struct ring *r = ring_get(self);
    shmring_t *handle = ring_handle(r);
    if (!FIXNUM_P(id_arg) || FIX2LONG(id_arg) < 0 || FIX2LONG(id_arg) > UINT32_MAX)
        raise_code(SHMRING_ENODE, id_arg);
    shmring_node_t copy;
    uint64_t fingerprint = current_fingerprint(handle);
    int rc = shmring_node(handle, (uint32_t)FIX2LONG(id_arg), &copy);
    if (rc < 0)
        raise_code(rc, id_arg);
    return cached_node(r, &copy, fingerprint, current_fingerprint(handle));
}

/*
 * call-seq:
 *   ring.generation -> Integer
 *
 * The generation of the version the ring answers from, after following a newer one if
 * there is one; 0 before anything is published.
 */
static VALUE ring_generation(VALUE self)
{
    return ULL2NUM(shmring_generation(ring_handle(ring_get(self))));
}

/*
 * call-seq:
 *   ring.fingerprint -> String or nil
 *
 * The content fingerprint of the version the ring answers from, as the 16 hex digits
 * `ringctl show` prints; nil when nothing is published.
 */
static VALUE ring_fingerprint(VALUE self)
{
    uint64_t fingerprint;
    int rc = shmring_fingerprint(ring_handle(ring_get(self)), &fingerprint);
    if (rc == SHMRING_EEMPTY)
        return Qnil;
    if (rc < 0)
        raise_code(rc, Qnil);
    return fingerprint_hex(fingerprint);
}

/*
 * call-seq:
 *   ring.status -> Shmring::Status
 *
 * What the ring answers from, after following a newer published version if there is
 * one: Status(present, destroyed, generation, fingerprint, error, failed_format):
 * failed_format is the snapshot format of a version refused as newer than this
 * reader (error ENEWFORMAT or EFEATURE: upgrade, then restart the worker), else 0.
 */
static VALUE ring_status(VALUE self)
{
    shmring_t *handle = ring_handle(ring_get(self));
    /* Follows a newer version first, or tries a destroyed ring's name again (at most
     * every 100 ms): then a ring made again under the name shows as present. */
    (void)shmring_generation(handle);
    shmring_status_t status;
    shmring_status(handle, &status);
    /* The ring's control object says UINT64_MAX once it was destroyed. */
    bool destroyed = status.published_generation == UINT64_MAX;
    VALUE result =
        rb_struct_new(cStatus, (!destroyed && status.generation != 0) ? Qtrue : Qfalse,
                      destroyed ? Qtrue : Qfalse, ULL2NUM(status.generation),
                      status.generation != 0 ? fingerprint_hex(status.fingerprint) : Qnil,
                      INT2NUM(status.failed_error), UINT2NUM(status.failed_format));
    return rb_obj_freeze(result);
}

/*
 * call-seq:
 *   ring.close -> nil
 *
 * Closes the ring; every later call raises IOError, closing again does nothing. Nodes
 * already returned stay valid.
 */
static VALUE ring_close(VALUE self)
{
    struct ring *r = ring_get(self);
    shmring_t *handle = r->handle;
    r->handle = NULL;
    node_cache_free(r);
    /* A Ring#refresh of this process may be inside the handle without the GVL: the
     * last one closes it when it returns. */
    if (r->refreshing > 0 && r->refreshing_pid == getpid())
        r->close_pending = handle;
    else
        shmring_close(handle);
    return Qnil;
}

static void *refresh_without_gvl(void *data)
{
    (void)shmring_generation(data);
    return NULL;
}

/*
 * call-seq:
 *   ring.refresh -> Integer
 *
 * Follows a newer published version now, if there is one, and returns the generation
 * the ring answers from. The switch (mapping and validating the new version) runs
 * without the GVL, while the other threads go on answering from the current version:
 * call it from a thread of its own, every few tens of milliseconds, to keep the switch
 * off the requests' lookups.
 */
static VALUE ring_refresh(VALUE self)
{
    struct ring *r = ring_get(self);
    shmring_t *handle = ring_handle(r);
    if (r->refreshing_pid != getpid()) { /* counts inherited from a parent */
        r->refreshing = 0;
        r->refreshing_pid = getpid();
    }
    r->refreshing++;
    rb_thread_call_without_gvl(refresh_without_gvl, handle, NULL, NULL);
    r->refreshing--;
    if (r->close_pending != NULL && r->refreshing == 0) {
        shmring_close(r->close_pending);
        r->close_pending = NULL;
    }
    RB_GC_GUARD(self);
    if (r->handle == NULL)
        raise_closed();
    return ULL2NUM(shmring_generation(r->handle));
}

static VALUE ring_closed_p(VALUE self)
{
    return ring_get(self)->handle == NULL ? Qtrue : Qfalse;
}

static VALUE ring_name(VALUE self)
{
    return ring_get(self)->name;
}

static VALUE ring_directory(VALUE self)
{
    return ring_get(self)->directory;
}

/* Leases --------------------------------------------------------------------------- */

/*
 * A bounded-load lease (docs/bounded-loads.md): the library's lease, the Ring it was
 * taken on and its Node. Ring#acquire's block form (lib/shmring.rb) releases it in an
 * ensure clause. A lease is not released when the GC frees it: the collector frees
 * a Lease and its Ring in no set order, so the Ring's handle may be gone by then; a
 * lease dropped while held stays counted until its Ring is closed (closing gives back
 * every lease of the handle) or the process exits.
 */
struct lease {
    shmring_lease_t lease;
    VALUE ring;
    VALUE node;
    bool held;
};

static void lease_mark(void *data)
{
    struct lease *l = data;
    rb_gc_mark(l->ring);
    rb_gc_mark(l->node);
}

static const rb_data_type_t lease_type = {
    .wrap_struct_name = "Shmring::Lease",
    .function = {.dmark = lease_mark, .dfree = RUBY_TYPED_DEFAULT_FREE},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

static VALUE lease_alloc(VALUE klass)
{
    struct lease *l;
    VALUE self = TypedData_Make_Struct(klass, struct lease, &lease_type, l);
    l->ring = Qnil;
    l->node = Qnil;
    return self;
}

static struct lease *lease_get(VALUE self)
{
    struct lease *l;
    TypedData_Get_Struct(self, struct lease, &lease_type, l);
    return l;
}

/*
 * call-seq:
 *   ring.acquire(key) -> Shmring::Lease
 *   ring.acquire(key) { |node| ... } -> the block's value
 *
 * Leases the node for KEY under the ring's balance factor, counting one request in
 * flight on it, shared with every worker process of the host, until Lease#release.
 * With a block (lib/shmring.rb), yields the node and releases the lease when the
 * block ends, however it ends. Raises Shmring::EmptyRing or Shmring::AllNodesDown.
 * This is the form without a block.
 */
static VALUE ring_acquire(VALUE self, VALUE key)
{
    StringValue(key);
    struct ring *r = ring_get(self);
    shmring_t *handle = ring_handle(r);
    /* The object first: once the lease is counted, nothing may raise before it is in
     * a Lease whose #release gives it back. */
    VALUE result = lease_alloc(cLease);
    struct lease *l = lease_get(result);
    uint64_t fingerprint = current_fingerprint(handle);
    int rc = shmring_acquire(handle, RSTRING_PTR(key), RSTRING_LEN(key), &l->lease);
    if (rc < 0)
        raise_code(rc, Qnil);
    l->ring = self;
    l->held = true;
    shmring_node_t copy;
    rc = shmring_node(handle, l->lease.id, &copy);
    if (rc < 0) {
        l->held = false;
        int released = shmring_release(handle, &l->lease);
        (void)released; /* only SHMRING_ELEASE, which `held` rules out */
        raise_code(rc, Qnil);
    }
    l->node = cached_node(r, &copy, fingerprint, current_fingerprint(handle));
    return result;
}

/*
 * call-seq:
 *   lease.release -> nil
 *
 * Ends the lease: the node's in-flight count goes down by one. Once: a second release
 * raises Shmring::Error with code Shmring::ELEASE. A lease of a closed Ring was given
 * back when it closed.
 */
static VALUE lease_release(VALUE self)
{
    struct lease *l = lease_get(self);
    bool held = l->held;
    l->held = false;
    if (NIL_P(l->ring))
        raise_code(SHMRING_ELEASE, Qnil);
    shmring_t *handle = ring_get(l->ring)->handle;
    if (handle == NULL) {
        if (!held)
            raise_code(SHMRING_ELEASE, Qnil);
        return Qnil;
    }
    int rc = shmring_release(handle, &l->lease);
    if (rc < 0)
        raise_code(rc, Qnil);
    return Qnil;
}

static VALUE lease_node(VALUE self)
{
    return lease_get(self)->node;
}

static VALUE lease_candidates(VALUE self)
{
    return UINT2NUM(lease_get(self)->lease.candidates);
}

static VALUE lease_counted_p(VALUE self)
{
    return lease_get(self)->lease.counted ? Qtrue : Qfalse;
}

static VALUE lease_held_p(VALUE self)
{
    struct lease *l = lease_get(self);
    return l->held && !NIL_P(l->ring) && ring_get(l->ring)->handle != NULL ? Qtrue
                                                                           : Qfalse;
}

/* Module functions ----------------------------------------------------------------- */

/*
 * call-seq:
 *   Shmring.strerror(code) -> String
 *
 * The library's description of a SHMRING_E* code.
 */
static VALUE module_strerror(VALUE module, VALUE code)
{
    (void)module;
    int value = INT_MIN;
    if (FIXNUM_P(code) && FIX2LONG(code) >= INT_MIN && FIX2LONG(code) <= INT_MAX)
        value = (int)FIX2LONG(code);
    return rb_str_new_cstr(shmring_strerror(value));
}

/*
 * call-seq:
 *   Shmring._noop(key) -> nil
 *
 * Does nothing: the cost of the cheapest call into this extension with one argument,
 * the floor bench.rb compares lookups with.
 */
static VALUE module_noop(VALUE module, VALUE key)
{
    (void)module;
    (void)key;
    return Qnil;
}

static VALUE define_error(const char *name, VALUE base)
{
    return rb_define_class_under(mShmring, name, base);
}

void Init_shmring(void);

void Init_shmring(void)
{
    id_directory = rb_intern("directory");
    id_trusted_owner = rb_intern("trusted_owner");
    id_code = rb_intern("@code");

    mShmring = rb_define_module("Shmring");
    cNode =
        rb_struct_define_under(mShmring, "Node", "id", "name", "address", "weight", NULL);
    cStatus =
        rb_struct_define_under(mShmring, "Status", "present", "destroyed", "generation",
                               "fingerprint", "error", "failed_format", NULL);

    eError = define_error("Error", rb_eStandardError);
    rb_define_attr(eError, "code", 1, 0);
    eRingNotFound = define_error("RingNotFound", eError);
    ePermissionDenied = define_error("PermissionDenied", eError);
    eNotTrusted = define_error("NotTrusted", ePermissionDenied);
    eEmptyRing = define_error("EmptyRing", eError);
    eAllNodesDown = define_error("AllNodesDown", eError);
    eNoSuchNode = define_error("NoSuchNode", eError);
    eInvalidArgument = define_error("InvalidArgument", eError);
    eCorruptRing = define_error("CorruptRing", eError);
    eOutOfMemory = define_error("OutOfMemory", eError);

    cRing = rb_define_class_under(mShmring, "Ring", rb_cObject);
    rb_define_alloc_func(cRing, ring_alloc);
    rb_define_method(cRing, "initialize", ring_initialize, -1);
    rb_define_method(cRing, "lookup", ring_lookup, 1);
    rb_define_method(cRing, "lookup_id", ring_lookup_id, 1);
    rb_define_method(cRing, "lookup_n", ring_lookup_n, 2);
    rb_define_method(cRing, "node", ring_node, 1);
    rb_define_method(cRing, "generation", ring_generation, 0);
    rb_define_method(cRing, "fingerprint", ring_fingerprint, 0);
    rb_define_method(cRing, "status", ring_status, 0);
    rb_define_method(cRing, "refresh", ring_refresh, 0);
    rb_define_method(cRing, "close", ring_close, 0);
    rb_define_method(cRing, "closed?", ring_closed_p, 0);
    rb_define_method(cRing, "name", ring_name, 0);
    rb_define_method(cRing, "directory", ring_directory, 0);
    /* A handle is a process's own mapping: a copy would share it. */
    rb_undef_method(cRing, "initialize_copy");
    /* The block form is lib/shmring.rb's Ring#acquire, over this one. */
    rb_define_private_method(cRing, "acquire_lease", ring_acquire, 1);

    cLease = rb_define_class_under(mShmring, "Lease", rb_cObject);
    rb_undef_alloc_func(cLease);
    rb_define_method(cLease, "release", lease_release, 0);
    rb_define_method(cLease, "node", lease_node, 0);
    rb_define_method(cLease, "candidates", lease_candidates, 0);
    rb_define_method(cLease, "counted?", lease_counted_p, 0);
    rb_define_method(cLease, "held?", lease_held_p, 0);
    /* A copy would be a second release of one count. */
    rb_undef_method(cLease, "initialize_copy");

    rb_define_module_function(mShmring, "strerror", module_strerror, 1);
    rb_define_module_function(mShmring, "_noop", module_noop, 1);

    /* The codes, generated from the header's one list, so they cannot drift. */
#define DEFINE_CODE(name, value, text) rb_define_const(mShmring, #name, INT2NUM(value));
    SHMRING_ERRNO_MAP(DEFINE_CODE)
#undef DEFINE_CODE
    rb_define_const(mShmring, "LOOKUP_N_MAX", INT2NUM(SHMRING_LOOKUP_N_MAX));
    rb_define_const(mShmring, "DEFAULT_DIRECTORY",
                    rb_str_freeze(rb_str_new_cstr(SHMRING_DEFAULT_DIRECTORY)));
    rb_define_const(mShmring, "LIBRARY_VERSION",
                    rb_str_freeze(rb_str_new_cstr(shmring_version())));
    /* The version of the headers the extension was compiled against, which CMake
     * generates from project(VERSION). */
    rb_define_const(mShmring, "HEADER_VERSION",
                    rb_str_freeze(rb_str_new_cstr(SHMRING_VERSION_STRING)));
}
