-- The installed FFI declarations (shmring_ffi.h, given as the argument) are what
-- ffi.cdef() accepts as they are, and the same text the Lua module loads. Run by
-- ctest (lua_shmring_ffi_header) with LUA_PATH, SHMRING_LIBRARY and SHMRING_VERSION
-- (CMake's project version) set.

local ffi = require "ffi"

local path = assert(arg[1], "usage: test_ffi_header.lua shmring_ffi.h")
local file = assert(io.open(path, "rb"))
local text = file:read("*a")
file:close()

assert(not text:find("#", 1, true), "no preprocessor directives")
assert(not text:find("__attribute__", 1, true), "no attributes")
assert(not text:find("SHMRING_API", 1, true), "no SHMRING_API")

ffi.cdef(text)
local C = ffi.load(assert(os.getenv("SHMRING_LIBRARY")))

local function code(name)
    return tonumber(ffi.new("enum shmring_error", name))
end
assert(code("SHMRING_ENOENT") == -2, "ENOENT")
assert(code("SHMRING_EEMPTY") == -1000, "EEMPTY")
assert(code("SHMRING_EBASEDIR") == -1029, "EBASEDIR")
assert(ffi.sizeof("shmring_node_t") == 552, "shmring_node_t")
assert(ffi.string(C.shmring_strerror(C.SHMRING_EALLDOWN)) == "all nodes of the ring are down")
assert(ffi.string(C.shmring_err_name(C.SHMRING_EALLDOWN)) == "SHMRING_EALLDOWN")
assert(ffi.string(C.shmring_err_name(0)) == "unknown")
-- The library's version is CMake's project(VERSION), which ctest passes.
local version = assert(os.getenv("SHMRING_VERSION"), "SHMRING_VERSION must be CMake's version")
assert(ffi.string(C.shmring_version()) == version, "shmring_version()")

local out = ffi.new("shmring_t *[1]")
assert(C.shmring_open("lua-ffi-header-missing", out) == C.SHMRING_ENOENT)

-- The module's declarations are this very text (one generated source).
local cdef = require "shmring.cdef"
assert(text:sub(-#cdef.declarations) == cdef.declarations, "cdef.lua == shmring_ffi.h")
assert(#cdef.codes == 55 and cdef.codes[1] == -2 and cdef.codes[55] == -1045, "codes")
assert(cdef.soname == "libshmring.so.0", "soname")
assert(type(cdef.libdirs[2]) == "string", "libdirs")
print("ok - shmring_ffi.h")
