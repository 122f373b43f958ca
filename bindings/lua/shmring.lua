-- shmring: a consistent-hash ring in POSIX shared memory, for LuaJIT and
-- OpenResty/nginx workers, over libshmring's reader API with LuaJIT's FFI.
--
--     local shmring = require "shmring"
--     local ring, err = shmring.open("backends")
--     local id, err = ring:lookup_id(key)
--
-- Open a ring once per process (in nginx: init_worker_by_lua*), then look keys up
-- on every request. Errors follow the lua-resty-* convention: the call returns nil,
-- a message ("shmring: ring has no nodes") and the SHMRING_E* code as a number.
-- Only a programming error (a key that is not a string or a number, an option of
-- the wrong type) raises.
--
-- The library is found, in this order, at $SHMRING_LIBRARY (in nginx, pass it with
-- the `env SHMRING_LIBRARY;` directive), in the library directory of the install
-- this module belongs to, by its soname through the dynamic linker, then in the
-- library directory the build was configured for.
--
-- The release this file belongs to, the project's, where opm (dist.ini) reads it:
-- version = 0.4.0

local ffi = require "ffi"
local cdef = require "shmring.cdef"
local table_new = require "table.new"

local ffi_string, ffi_gc = ffi.string, ffi.gc
local type, tostring, tonumber, setmetatable, getmetatable, error, pcall = type,
    tostring, tonumber, setmetatable, getmetatable, error, pcall
local string_format, find = string.format, string.find
local rawget, pairs, math_max = rawget, pairs, math.max

-- Declare once per Lua state, even if the program already declared shmring_ffi.h.
if not pcall(ffi.typeof, "shmring_nodes_t") then
    ffi.cdef(cdef.declarations)
end

local function load_library()
    local path = os.getenv("SHMRING_LIBRARY")
    if path and path ~= "" then
        return ffi.load(path)
    end
    local first_error
    local candidates = {}
    if cdef.libdirs[1] then
        candidates[#candidates + 1] = cdef.libdirs[1] .. "/" .. cdef.soname
    end
    candidates[#candidates + 1] = cdef.soname
    candidates[#candidates + 1] = cdef.libdirs[2] .. "/" .. cdef.soname
    for _, candidate in ipairs(candidates) do
        local ok, lib = pcall(ffi.load, candidate)
        if ok then
            return lib
        end
        first_error = first_error or lib
    end
    error("shmring: cannot load " .. cdef.soname .. ": " .. tostring(first_error), 0)
end

local C = load_library()

local _M = {
    _VERSION = ffi_string(C.shmring_version()),
    -- The most nodes one lookup_n() call returns (SHMRING_LOOKUP_N_MAX).
    LOOKUP_N_MAX = 64,
}

-- The codes, by name without the prefix (shmring.EEMPTY == -1000), for callers that
-- compare codes rather than messages: the values from the generated declarations,
-- the names from shmring_err_name().
for _, code in ipairs(cdef.codes) do
    _M[ffi_string(C.shmring_err_name(code)):sub(#"SHMRING_" + 1)] = code
end

-- Messages are made once per code, so an error path allocates nothing either.
local messages = {}
local function errmsg(code)
    local message = messages[code]
    if not message then
        message = "shmring: " .. ffi_string(C.shmring_strerror(code))
        messages[code] = message
    end
    return message
end
_M.strerror = errmsg

local EINVAL, EBADRING, ELEASE = _M.EINVAL, _M.EBADRING, _M.ELEASE

-- SHMRING_DEFAULT_DIRECTORY, a macro the FFI cannot see.
local DEFAULT_DIRECTORY = "/dev/shm"

-- Codes that say what is wrong with the ring directory rather than with the ring
-- (-20 is -ENOTDIR on Linux: the path is not a directory).
local directory_errors = {
    [_M.EBADDIR] = true, [_M.ENODIR] = true, [_M.ENOTRINGDIR] = true, [-20] = true,
    [_M.EBASEOWNER] = true, [_M.EBASEDIR] = true,
}

-- The message of a failed open: it names the directory when the directory is what
-- is wrong, else the ring ("shmring: ring 'web': no such ring").
local function open_errmsg(code, name, directory)
    local text = ffi_string(C.shmring_strerror(code))
    if directory_errors[code] then
        return string_format("shmring: directory '%s': %s",
            directory or DEFAULT_DIRECTORY, text)
    end
    return string_format("shmring: ring '%s': %s", name, text)
end
local ERR_CLOSED = "shmring: ring is closed"
local LOOKUP_N_MAX = _M.LOOKUP_N_MAX

local node_array_t = ffi.typeof("shmring_node_t[?]")
local uint32_array_t = ffi.typeof("uint32_t[?]")
local uint64_array_t = ffi.typeof("uint64_t[?]")
local size_array_t = ffi.typeof("size_t[?]")
local key_array_t = ffi.typeof("const void *[?]")
local ring_out_t = ffi.typeof("shmring_t *[1]")
local options_t = ffi.typeof("shmring_open_options_t")
local nodes_t = ffi.typeof("shmring_nodes_t[1]")
local status_t = ffi.typeof("shmring_status_t[1]")
local lease_t = ffi.typeof("shmring_lease_t")
-- What a destroyed ring's control object says as its published generation.
local DESTROYED = 0xffffffffffffffffULL
-- The largest node id for which the node cache's table gets an array part (see
-- Ring:lookup), so that a compiled lookup reads its node without leaving the trace;
-- a version with a larger id (set explicitly by a JSON node set) has a hash part.
local NODE_CACHE_ARRAY_IDS = 65536

local function node_table(node)
    return {
        id = tonumber(node.id),
        weight = tonumber(node.weight),
        name = ffi_string(node.name),
        address = ffi_string(node.address),
    }
end

local function fingerprint_hex(value)
    return string_format("%016x", value)
end

local function check_key(key)
    local key_type = type(key)
    if key_type == "number" then
        return tostring(key)
    end
    if key_type ~= "string" then
        error("shmring: key must be a string or a number, not " .. key_type, 3)
    end
    return key
end

local Ring = {}
Ring.__index = Ring

-- Opens ring NAME. OPTIONS (optional): directory (a string, default /dev/shm),
-- trusted_owner (a uid whose rings are accepted besides root's and one's own) and
-- serialized (default true). Returns the ring, or nil, err, code.
--
-- A Lua state runs on one OS thread at a time and an FFI call cannot yield, so no
-- two calls on a handle overlap (nginx workers, their light threads and timers
-- included): the handle is opened SHMRING_OPEN_SERIALIZED, which spares each
-- lookup liburcu's read-side section. serialized = false opens the thread-safe
-- handle, for an embedding that hands the handle to other OS threads.
function _M.open(name, options)
    if type(name) ~= "string" then
        error("shmring: ring name must be a string", 2)
    end
    -- C sees a string only up to its first NUL: "web\0x" would open "web".
    if find(name, "\0", 1, true) then
        return nil, errmsg(EBADRING), EBADRING
    end
    local opts = options_t()
    opts.flags = C.SHMRING_OPEN_SERIALIZED
    local directory
    if options ~= nil then
        if type(options) ~= "table" then
            error("shmring: options must be a table", 2)
        end
        directory = options.directory
        if directory ~= nil then
            if type(directory) ~= "string" then
                error("shmring: options.directory must be a string", 2)
            end
            if find(directory, "\0", 1, true) then
                return nil, errmsg(EINVAL), EINVAL
            end
            opts.directory = directory
        end
        local owner = options.trusted_owner
        if owner ~= nil then
            -- 0xffffffff is (uid_t)-1, no uid: the library reads it as "nobody".
            if type(owner) ~= "number" or owner < 0 or owner >= 0xffffffff
                or owner % 1 ~= 0 then
                error("shmring: options.trusted_owner must be a uid", 2)
            end
            opts.trusted_owner = owner
        end
        local serialized = options.serialized
        if serialized ~= nil and type(serialized) ~= "boolean" then
            error("shmring: options.serialized must be a boolean", 2)
        end
        if serialized == false then
            opts.flags = 0
        end
    end
    local out = ring_out_t()
    -- DIRECTORY stays referenced by this frame until the call returns; the library
    -- copies it.
    local rc = C.shmring_open_with(name, opts, out)
    if rc ~= 0 then
        return nil, open_errmsg(rc, name, directory), rc
    end
    -- Whether the handle is still open, for the leases' finalizer: at exit
    -- (lua_close) LuaJIT runs every finalizer in no set order, the handle's before
    -- its leases' too. The handle's finalizer must not refer to the ring table,
    -- which refers to the handle: LuaJIT's finalizer table holds its functions
    -- strongly, so the ring would never be collected.
    local handle_state = {open = true}
    local self = {
        handle = ffi_gc(out[0], function(handle)
            handle_state.open = false
            C.shmring_close(handle)
        end),
        handle_state = handle_state,
        -- One node table per node of a version (see Ring:lookup): the tables by id,
        -- and the fingerprint of the version they belong to (valid once true).
        node_cache = {},
        node_cache_valid = false,
        node_cache_fingerprint = uint64_array_t(1),
        fingerprint_out = uint64_array_t(1),
        status_out = status_t(),
        -- Out parameters, one set per handle, so that lookups allocate nothing
        -- but what they return.
        id_out = uint32_array_t(1),
        u64_out = uint64_array_t(1),
        node_out = node_array_t(1),
        nodes_out = node_array_t(LOOKUP_N_MAX),
        batch_capacity = 0,
        batch_keys = nil,
        batch_lens = nil,
        batch_ids = nil,
        batch_anchors = {},
    }
    -- The finalizer of a lease lost without a release (see Ring:acquire). It keeps
    -- the ring, and so its handle, alive for as long as any lease needs it; after
    -- close() the handle has given every lease back.
    self.lease_finalizer = function(lease)
        local handle = self.handle
        if handle ~= nil and handle_state.open then
            C.shmring_release(handle, lease)
        end
    end
    return setmetatable(self, Ring)
end

-- Closes the handle now rather than when it is collected. Further calls answer
-- nil, "shmring: ring is closed". Closing twice is harmless.
function Ring:close()
    local handle = self.handle
    if handle ~= nil then
        self.handle = nil
        self.handle_state.open = false
        ffi_gc(handle, nil)
        C.shmring_close(handle)
    end
    return true
end

-- The id of the node that owns KEY: the call for hot paths (no strings copied).
function Ring:lookup_id(key)
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    if type(key) ~= "string" then
        key = check_key(key)
    end
    local id_out = self.id_out
    local rc = C.shmring_lookup_id(handle, key, #key, id_out)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    return tonumber(id_out[0])
end

-- A lookup whose node the cache cannot answer: the library copies the node.
local function lookup_copied(self, handle, key)
    local node_out = self.node_out
    local rc = C.shmring_lookup(handle, key, #key, node_out)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    return node_table(node_out[0])
end

-- Makes the table of every node of the handle's version (one shmring_nodes() copy,
-- a few milliseconds at 10,000 nodes, once per version); false when the copy failed.
-- All the tables at once rather than each on its node's first lookup: then every
-- later lookup finds its node, and the trace LuaJIT compiles for a lookup loop is
-- the one that does.
local function node_cache_rebuild(self, handle)
    local copy = nodes_t()
    if C.shmring_nodes(handle, copy) ~= 0 then
        return false
    end
    local version = copy[0]
    local count = tonumber(version.count)
    local max_id = 0
    for i = 0, count - 1 do
        max_id = math_max(max_id, tonumber(version.nodes[i].id))
    end
    -- Ids 0..max_id in the array part, unless they are too sparse for one.
    local nodes = table_new(max_id < NODE_CACHE_ARRAY_IDS and max_id or 0, 0)
    for i = 0, count - 1 do
        local node = node_table(version.nodes[i])
        nodes[node.id] = node
    end
    self.node_cache = nodes
    self.node_cache_fingerprint[0] = version.fingerprint
    self.node_cache_valid = true
    C.shmring_nodes_free(copy)
    return true
end

-- The first lookup after a switch to a version of another fingerprint: rebuilds the
-- node cache, then answers from it when it is the version that answered ID
-- (fingerprint FINGERPRINT), else copies the node.
local function lookup_rebuilt(self, handle, key, id, fingerprint)
    if node_cache_rebuild(self, handle)
        and self.node_cache_fingerprint[0] == fingerprint then
        local node = self.node_cache[id]
        if node ~= nil then
            return node
        end
    end
    return lookup_copied(self, handle, key)
end

-- The node that owns KEY, as {id =, name =, address =, weight =}. Every lookup that
-- answers a node from a version of one fingerprint returns the same table, made
-- with every other node's at the first lookup in that version: treat it as
-- read-only. The fingerprint covers every field of the table, and the library
-- answers the id and the fingerprint of the version that answered in one call.
function Ring:lookup(key)
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    if type(key) ~= "string" then
        key = check_key(key)
    end
    local id_out, fingerprint_out = self.id_out, self.fingerprint_out
    local rc = C.shmring_lookup_id_versioned(handle, key, #key, id_out, fingerprint_out)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    local id = tonumber(id_out[0])
    if fingerprint_out[0] ~= self.node_cache_fingerprint[0] or not self.node_cache_valid then
        return lookup_rebuilt(self, handle, key, id, fingerprint_out[0])
    end
    local node = self.node_cache[id]
    if node ~= nil then
        return node
    end
    return lookup_copied(self, handle, key)
end

-- The ids of the owners of KEYS (a list), in one call into the library, all from
-- one version. OUT (optional) is a table to fill and return instead of a new one.
function Ring:lookup_ids(keys, out)
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    if type(keys) ~= "table" then
        error("shmring: keys must be a list", 2)
    end
    local count = #keys
    if count > self.batch_capacity then
        local capacity = self.batch_capacity * 2
        if capacity < count then
            capacity = count
        end
        self.batch_keys = key_array_t(capacity)
        self.batch_lens = size_array_t(capacity)
        self.batch_ids = uint32_array_t(capacity)
        self.batch_capacity = capacity
    end
    local batch_keys, batch_lens, batch_ids = self.batch_keys, self.batch_lens,
        self.batch_ids
    local converted = nil
    -- rawget: no __index metamethod may run between filling the pointers and the
    -- call (it could return a string nothing keeps alive, close the ring, or call
    -- lookup_ids again and reuse these arrays). KEYS itself keeps its strings alive.
    for i = 1, count do
        local key = rawget(keys, i)
        if key == nil then
            error("shmring: keys[" .. i .. "] is nil", 2)
        end
        if type(key) ~= "string" then
            -- A number's string must stay alive until the call returns: the
            -- handle's table anchors it (KEYS anchors the others).
            key = check_key(key)
            converted = self.batch_anchors
            converted[i] = key
        end
        batch_keys[i - 1] = key
        batch_lens[i - 1] = #key
    end
    local rc = C.shmring_lookup_ids(handle, batch_keys, batch_lens, count, batch_ids)
    -- The key pointers point into Lua strings: drop them before they can dangle.
    for i = 0, count - 1 do
        batch_keys[i] = nil
    end
    if converted then
        for i in pairs(converted) do
            converted[i] = nil
        end
    end
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    out = out or {}
    for i = 1, count do
        out[i] = tonumber(batch_ids[i - 1])
    end
    for i = count + 1, #out do
        out[i] = nil
    end
    return out
end

-- Up to N (1-64) distinct up nodes for KEY in preference order, as a list of node
-- tables; fewer when the ring has fewer up nodes.
function Ring:lookup_n(key, n)
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    if type(key) ~= "string" then
        key = check_key(key)
    end
    if type(n) ~= "number" or n < 0 or n % 1 ~= 0 then
        error("shmring: n must be a non-negative integer", 2)
    end
    if n > LOOKUP_N_MAX then
        n = LOOKUP_N_MAX
    end
    local nodes_out = self.nodes_out
    local rc = C.shmring_lookup_n(handle, key, #key, nodes_out, n)
    if rc < 0 then
        return nil, errmsg(rc), rc
    end
    local list = {}
    for i = 1, rc do
        list[i] = node_table(nodes_out[i - 1])
    end
    return list
end

-- The node whose id is ID in the current version.
function Ring:node(id)
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    if type(id) ~= "number" or id < 0 or id > 0xffffffff or id % 1 ~= 0 then
        return nil, errmsg(C.SHMRING_ENODE), tonumber(C.SHMRING_ENODE)
    end
    local node_out = self.node_out
    local rc = C.shmring_node(handle, id, node_out)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    return node_table(node_out[0])
end

-- Every node of the current version as one consistent copy:
-- {generation =, fingerprint = "16 hex digits", nodes = {node, ...}}.
function Ring:nodes()
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    local copy = nodes_t()
    local rc = C.shmring_nodes(handle, copy)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    local result = copy[0]
    local list = {}
    for i = 1, tonumber(result.count) do
        list[i] = node_table(result.nodes[i - 1])
    end
    local answer = {
        generation = tonumber(result.generation),
        fingerprint = fingerprint_hex(result.fingerprint),
        nodes = list,
    }
    C.shmring_nodes_free(copy)
    return answer
end

-- The generation of the version this handle answers from (after following a newer
-- one), a number. 0 when nothing was ever published.
function Ring:generation()
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    return tonumber(C.shmring_generation(handle))
end

-- The current version's content fingerprint, as 16 hex digits (as ringctl shows it).
function Ring:fingerprint()
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    local u64_out = self.u64_out
    local rc = C.shmring_fingerprint(handle, u64_out)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    return fingerprint_hex(u64_out[0])
end

-- The handle's state, for a worker's health check or status page:
-- {present =, destroyed =, generation =, fingerprint =, error =}. present: the ring
-- exists and the handle answers from a published version of it. destroyed: the ring
-- was destroyed; lookups go on answering from its last version (generation and
-- fingerprint, 16 hex digits as ringctl show prints them, nil when nothing was
-- published) until a ring made again under its name is followed. error: the
-- SHMRING_E* code of the last failed switch to a newer version (shmring.ENOENT for
-- a destroyed ring), 0 when none failed. Follows a newer version first, like
-- generation(); no system call unless a switch is due.
function Ring:status()
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    C.shmring_generation(handle)
    local out = self.status_out
    C.shmring_status(handle, out)
    local status = out[0]
    local generation = tonumber(status.generation)
    local destroyed = status.published_generation == DESTROYED
    return {
        present = not destroyed and generation ~= 0,
        destroyed = destroyed,
        generation = generation,
        fingerprint = generation ~= 0 and fingerprint_hex(status.fingerprint) or nil,
        error = tonumber(status.failed_error),
        -- A version refused as newer than this reader: its format, else 0.
        failed_format = tonumber(status.failed_format),
    }
end

-- Bounded-load leases (docs/bounded-loads.md) -------------------------------------

local Lease = {}
Lease.__index = Lease
Lease.__tostring = function(self)
    return "shmring.lease (" .. self.node.name .. ", candidate " .. self.candidates .. ")"
end

-- The node table of ID in the handle's current version: the node cache's (made again
-- when the version changed, as for lookup), else a copy.
local function node_by_id(self, handle, id)
    local fingerprint_out = self.fingerprint_out
    if C.shmring_fingerprint(handle, fingerprint_out) == 0 then
        if fingerprint_out[0] ~= self.node_cache_fingerprint[0]
            or not self.node_cache_valid then
            node_cache_rebuild(self, handle)
        end
        if self.node_cache_valid
            and fingerprint_out[0] == self.node_cache_fingerprint[0] then
            local node = self.node_cache[id]
            if node ~= nil then
                return node
            end
        end
    end
    local node_out = self.node_out
    local rc = C.shmring_node(handle, id, node_out)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    return node_table(node_out[0])
end

-- Leases KEY's node under the ring's balance factor: the request counts as in flight
-- on that node, in every worker process of the host, until ring:release(lease).
-- Returns the lease, a table with
--   node        the node to send the request to (the table lookup() answers)
--   candidates  how many of the key's candidates were tried (1: its first took it)
--   counted     true when the ring's load board counts the lease; false when it is
--               a plain lookup's answer (the ring has no board, or this process is
--               not in the board's group)
-- or nil, err, code (shmring.EEMPTY, shmring.EALLDOWN; shmring.ENODE when the node
-- was removed between the acquire and the lookup of its table, and the lease given
-- back).
--
-- Release every lease, errors included: in OpenResty, acquire in access_by_lua*,
-- keep the lease in ngx.ctx and release it in log_by_lua*, which runs for every
-- request; elsewhere, ring:with_lease(). As a last resort, a lease that is lost
-- without a release (its last reference dropped: an internal redirect clears
-- ngx.ctx) is released by its finalizer when the garbage collector frees it, which
-- may be long after the request ended: until then it counts on its node.
function Ring:acquire(key)
    local handle = self.handle
    if handle == nil then
        return nil, ERR_CLOSED, EINVAL
    end
    if type(key) ~= "string" then
        key = check_key(key)
    end
    local lease = lease_t()
    local rc = C.shmring_acquire(handle, key, #key, lease)
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    -- Held from here: nothing below may lose it.
    ffi_gc(lease, self.lease_finalizer)
    local node, err, code = node_by_id(self, handle, tonumber(lease.id))
    if node == nil then
        -- The node was removed since the acquire (ENODE): give the lease back.
        ffi_gc(lease, nil)
        C.shmring_release(handle, lease)
        return nil, err, code
    end
    return setmetatable({
        node = node,
        candidates = tonumber(lease.candidates),
        counted = lease.counted ~= 0,
        _ring = self,
        _lease = lease,
    }, Lease)
end

-- Ends LEASE, taken by this ring's acquire(): its node's in-flight count goes down
-- by one. Returns true, or nil, err, shmring.ELEASE for a lease already released.
-- Closing the ring gave back every lease the handle held: the first release after
-- it returns true, as in the other bindings. A value that is not a lease of this
-- ring raises.
function Ring:release(lease)
    if getmetatable(lease) ~= Lease then
        error("shmring: release() takes a lease that acquire() returned", 2)
    end
    if lease._ring ~= self then
        error("shmring: the lease belongs to another ring handle", 2)
    end
    local cdata = lease._lease
    -- Released, or given back when the handle closed: nothing for the finalizer to do.
    ffi_gc(cdata, nil)
    local handle = self.handle
    if handle == nil then
        -- The library can no longer tell a released lease: the lease says.
        if lease._released then
            return nil, errmsg(ELEASE), ELEASE
        end
        lease._released = true
        return true
    end
    local rc = C.shmring_release(handle, cdata)
    lease._released = true
    if rc ~= 0 then
        return nil, errmsg(rc), rc
    end
    return true
end

-- Releases LEASE, then returns what OK and the rest (pcall's results) say: FN's
-- results, or FN's error raised again, as it was raised.
local function with_lease_end(self, lease, ok, ...)
    self:release(lease) -- ELEASE when FN released it itself: nothing to do
    if not ok then
        error((...), 0)
    end
    return ...
end

-- Calls FN(node, lease, ...) with a lease of KEY's node and releases the lease when
-- FN returns or raises: returns FN's results, raises FN's error again (the same
-- value), or returns nil, err, code when no lease could be taken (FN is not
-- called). FN may yield (ngx.sleep, cosockets): LuaJIT's pcall lets it.
function Ring:with_lease(key, fn, ...)
    if type(fn) ~= "function" then
        error("shmring: with_lease() takes a function", 2)
    end
    local lease, err, code = self:acquire(key)
    if lease == nil then
        return nil, err, code
    end
    return with_lease_end(self, lease, pcall(fn, lease.node, lease, ...))
end

Ring.__tostring = function(self)
    return "shmring.ring (" .. (self.handle ~= nil and "open" or "closed") .. ")"
end

return _M
