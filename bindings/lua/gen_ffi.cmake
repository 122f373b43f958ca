# Generates the FFI-ready declarations of the reader API from include/shmring.h:
# run as `cmake -DCC=... -DHEADER=... -DGENERATED_INCLUDE_DIR=... -DFFI_HEADER=...
# -DCDEF_LUA=... -DWORK_DIR=... -DSONAME=... -DLIBDIR=... -DLIBDIR_RELATIVE=... -P
# gen_ffi.cmake`, where GENERATED_INCLUDE_DIR holds the build's shmring_version.h.
#
# LuaJIT's ffi.cdef() (and cffi's) takes C declarations but no preprocessor
# directives, so the header cannot be given to it as it is: its error codes come from
# the X-macro SHMRING_ERRNO_MAP, whose values are errno macros. The C compiler's own
# preprocessor expands the header here, with these changes, none of them in the
# header:
# - its #includes resolve to stub headers (-nostdinc): the stub errno.h holds the
#   target's E* macros (taken from the real <errno.h> with -dM), so each code becomes
#   a number; the stub sys/types.h declares uid_t, which an FFI does not predefine;
#   stddef.h and stdint.h are empty, as an FFI predefines size_t and the intN_t types;
# - __attribute__ is defined away, which empties SHMRING_MUST_CHECK.
# The result is one line per declaration, then reformatted: shmring_ffi.h, installed
# next to shmring.h, and shmring/cdef.lua, the same text as a Lua string for the Lua
# module.
foreach(var CC HEADER GENERATED_INCLUDE_DIR FFI_HEADER CDEF_LUA WORK_DIR SONAME LIBDIR
        LIBDIR_RELATIVE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gen_ffi.cmake: ${var} is not set")
  endif()
endforeach()

set(stub_dir ${WORK_DIR}/stubs)
file(MAKE_DIRECTORY ${stub_dir}/sys)
file(WRITE ${WORK_DIR}/errno_probe.c "#include <errno.h>\n")
execute_process(
  COMMAND ${CC} -E -dM ${WORK_DIR}/errno_probe.c
  OUTPUT_VARIABLE errno_macros
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen_ffi.cmake: ${CC} -E -dM <errno.h> failed")
endif()
string(REGEX MATCHALL "#define E[A-Z0-9]+ [^\n]*" errno_defines "${errno_macros}")
list(JOIN errno_defines "\n" errno_defines)
file(WRITE ${stub_dir}/errno.h "${errno_defines}\n")
file(WRITE ${stub_dir}/stddef.h "")
file(WRITE ${stub_dir}/stdint.h "")
file(WRITE ${stub_dir}/sys/types.h "typedef unsigned int uid_t;\n")

execute_process(
  COMMAND ${CC} -E -P -nostdinc -I${stub_dir} -I${GENERATED_INCLUDE_DIR}
          "-D__attribute__(x)=" -x c ${HEADER}
  OUTPUT_VARIABLE expanded
  ERROR_VARIABLE errors
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen_ffi.cmake: preprocessing ${HEADER} failed:\n${errors}")
endif()

# One enumerator per line, "SHMRING_ENOENT = -2," without the macro's parentheses.
string(REGEX REPLACE "= \\(\\(?(-?[0-9]+)\\)?\\)," "= \\1," expanded "${expanded}")
string(REGEX REPLACE "enum shmring_error {[ ]*" "enum shmring_error {\n    " expanded
       "${expanded}")
string(REGEX REPLACE ", (SHMRING_E[A-Z0-9]+ = )" ",\n    \\1" expanded "${expanded}")
string(REGEX REPLACE ",[ ]*};" ",\n};" expanded "${expanded}")
# Drop blank lines and runs of spaces that the directives and comments left.
string(REGEX REPLACE "\n[ \t]*\n" "\n" expanded "${expanded}")
string(REGEX REPLACE "\n[ \t]*\n" "\n" expanded "${expanded}")
string(REGEX REPLACE "^[ \t\n]+" "" expanded "${expanded}")
# Rejoin the prototypes that the header wraps, and drop the space left where
# SHMRING_API stood.
string(REGEX REPLACE "\n[ ][ ][ ][ ][ ]+" " " expanded "${expanded}")
string(REGEX REPLACE "\n ([a-z])" "\n\\1" expanded "${expanded}")
string(REGEX REPLACE "^ " "" expanded "${expanded}")
string(REGEX REPLACE "(int|void|uint64_t|\\*)\n(shmring_)" "\\1 \\2" expanded "${expanded}")
# Preprocessors differ in the blank lines and indentation they leave (gcc, clang):
# one top-level declaration per line whatever they did.
string(REGEX REPLACE "; +((const char \\*|int |void |uint64_t |typedef )(shmring|struct))"
       ";\n\\1" expanded "${expanded}")
if(NOT expanded MATCHES "SHMRING_ENOENT = -[0-9]+,"
   OR NOT expanded MATCHES "SHMRING_EBASEDIR = -1029,"
   OR expanded MATCHES "#|__attribute__|SHMRING_API|SHMRING_MUST_CHECK|[^_]E[A-Z]+\\)")
  message(FATAL_ERROR "gen_ffi.cmake: unexpected expansion of ${HEADER}:\n${expanded}")
endif()

set(banner "/* Generated from shmring.h by gen_ffi.cmake: the reader API's declarations,\n"
           " * without preprocessor directives or attributes, for FFI declarations\n"
           " * (LuaJIT's ffi.cdef, cffi's cdef). C code includes shmring.h instead. */\n")
string(CONCAT banner ${banner})
file(WRITE ${WORK_DIR}/shmring_ffi.h "${banner}${expanded}")
file(COPY_FILE ${WORK_DIR}/shmring_ffi.h ${FFI_HEADER} ONLY_IF_DIFFERENT)

# The codes' values, in the header's order, from the enum just generated: the module
# names them with shmring_err_name(), so no list of names is copied anywhere.
string(REGEX MATCHALL "SHMRING_E[A-Z0-9]+ = -[0-9]+," code_entries "${expanded}")
set(code_values "")
foreach(entry IN LISTS code_entries)
  string(REGEX REPLACE "^SHMRING_E[A-Z0-9]+ = (-[0-9]+),$" "\\1" value "${entry}")
  string(APPEND code_values "${value}, ")
endforeach()
string(STRIP "${code_values}" code_values)

# The library directory is found from where cdef.lua is, so that an install with
# `cmake --install --prefix DIR` (or a moved tree) finds its own libshmring.
file(WRITE ${WORK_DIR}/cdef.lua
  "-- Generated from shmring.h by gen_ffi.cmake (see shmring_ffi.h): the reader API's\n"
  "-- declarations for ffi.cdef(), and where the library was installed.\n"
  "local here = debug.getinfo(1, \"S\").source:match(\"^@(.*)/[^/]*$\")\n"
  "return {\n"
  "    declarations = [==[\n${expanded}]==],\n"
  "    -- The values of enum shmring_error, in the header's order.\n"
  "    codes = {${code_values}},\n"
  "    soname = \"${SONAME}\",\n"
  "    -- The installed library next to this module, then where it was configured.\n"
  "    libdirs = {here and (here .. \"/${LIBDIR_RELATIVE}\"), \"${LIBDIR}\"},\n"
  "}\n")
file(COPY_FILE ${WORK_DIR}/cdef.lua ${CDEF_LUA} ONLY_IF_DIFFERENT)
