-- The LuaJIT module as a rock, for a libshmring already installed (Debian's
-- libshmring-dev, or cmake --install). From the top of the source tree:
--
--     luarocks make bindings/lua/shmring-0.4.0-1.rockspec
--
-- luarocks finds libshmring's headers and library (or takes SHMRING_DIR=PREFIX,
-- SHMRING_INCDIR=DIR, SHMRING_LIBDIR=DIR); the build generates the module's FFI
-- declarations from that shmring.h, as the CMake build does, and records that library
-- directory, where the module looks for libshmring.so.0 after the dynamic linker's
-- path. The version is the project's (CMake's project(VERSION)); the test
-- versions_agree fails when it is not.
rockspec_format = "3.0"
package = "shmring"
version = "0.4.0-1"
source = {
    url = "git+https://example.invalid/shmring.git",
    tag = "v0.4.0",
}
description = {
    summary = "Route keys with a consistent-hash ring in POSIX shared memory",
    detailed = [[
A LuaJIT (FFI) binding of libshmring's reader, for OpenResty and nginx's Lua
module: every worker routes a key to the same node, and sees a newly published
ring at its next lookup, without locks.]],
    license = "MIT",
    labels = { "openresty", "nginx", "consistent-hashing", "ffi" },
}
dependencies = {
    "lua == 5.1",
}
external_dependencies = {
    SHMRING = {
        header = "shmring.h",
        library = "shmring",
    },
}
build = {
    type = "command",
    build_command = [[cmake -DCC="$(CC)" -DHEADER="$(SHMRING_INCDIR)/shmring.h" ]]
        .. [[-DGENERATED_INCLUDE_DIR="$(SHMRING_INCDIR)" -DWORK_DIR=rock/gen ]]
        .. [[-DFFI_HEADER=rock/shmring_ffi.h -DCDEF_LUA=rock/cdef.lua ]]
        .. [[-DSONAME=libshmring.so.0 -DLIBDIR="$(SHMRING_LIBDIR)" -DLIBDIR_RELATIVE=. ]]
        .. [[-P bindings/lua/gen_ffi.cmake]],
    install = {
        lua = {
            shmring = "bindings/lua/shmring.lua",
            ["shmring.cdef"] = "rock/cdef.lua",
        },
    },
}
