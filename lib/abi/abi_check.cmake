# Writes or checks the ABI baseline of one library (see CMakeLists.txt here):
#   cmake -DABIDW=... -DABIDIFF=... -DHEADERS_DIR=... -DLIBRARY=... -DBASELINE=...
#         [-DCURRENT=...] -DMODE=check|baseline -P abi_check.cmake
# The ABI is what abidw reads from LIBRARY's debug information: its exported functions
# with their symbol versions, and the types of the public headers in HEADERS_DIR.
# Left out, so that any checkout and build directory writes the same text and an
# edited comment changes nothing: paths, source locations, the libraries it needs
# and the symbols it takes from them.
foreach(var ABIDW ABIDIFF HEADERS_DIR LIBRARY BASELINE MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "abi_check.cmake: ${var} is not set")
  endif()
endforeach()

if(MODE STREQUAL "baseline")
  set(out ${BASELINE})
elseif(MODE STREQUAL "check")
  set(out ${CURRENT})
else()
  message(FATAL_ERROR "abi_check.cmake: MODE must be check or baseline")
endif()

execute_process(
  COMMAND ${ABIDW} --no-corpus-path --no-comp-dir-path --no-show-locs
          --no-elf-needed --drop-undefined-syms --drop-private-types
          --headers-dir ${HEADERS_DIR} --out-file ${out} ${LIBRARY}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "abidw ${LIBRARY} failed (${rc})")
endif()
if(MODE STREQUAL "baseline")
  # Translation units are named by their absolute paths: relative to the source tree
  # in the repository's copy (abidiff does not compare them).
  if(DEFINED SOURCE_DIR)
    file(READ ${BASELINE} abi)
    string(REPLACE "path='${SOURCE_DIR}/" "path='" abi "${abi}")
    file(WRITE ${BASELINE} "${abi}")
  endif()
  message(STATUS "wrote ${BASELINE}")
  return()
endif()

# abidiff's status is a bit mask: 1 an error, 2 a usage error, 4 an ABI change, 8 an
# incompatible one. Any change fails: a compatible one too has to be deliberate. (No
# --headers-dir here: without source locations in the files, abidiff would take
# every type for a private one and filter its changes out.)
execute_process(
  COMMAND ${ABIDIFF} ${BASELINE} ${CURRENT}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  get_filename_component(name ${BASELINE} NAME)
  message(FATAL_ERROR
    "${LIBRARY}: its ABI differs from lib/abi/${name} (abidiff status ${rc}, above). "
    "If the change is intended, regenerate the baselines in the gcc RelWithDebInfo "
    "build and commit them with it: cmake --build build-gcc --target shmring_abi_baseline")
endif()
message(STATUS "${LIBRARY}: ABI as in ${BASELINE}")
