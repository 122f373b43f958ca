# Runs the .phpt suite with PHP's run-tests.php on a fresh copy of the tests in DEST
# (run-tests.php writes its .out/.diff files next to the tests):
# MEMCACHED=ON loads php-memcached too (igbinary and msgpack first, as it needs them):
#   cmake -DPHP=... -DRUN_TESTS=... -DEXTENSION=... -DMEMCACHED=ON|OFF -DSOURCE=...
#         -DDEST=... -P run_phpt.cmake
file(REMOVE_RECURSE ${DEST})
file(GLOB tests ${SOURCE}/*.phpt ${SOURCE}/*.inc)
file(COPY ${tests} DESTINATION ${DEST})
set(memcached_args)
if(MEMCACHED)
  set(memcached_args -d extension=igbinary -d extension=msgpack -d extension=memcached)
endif()
execute_process(
  COMMAND ${PHP} -n ${RUN_TESTS} -n -p ${PHP} -q --show-diff
          -d extension=${EXTENSION} ${memcached_args} ${DEST}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "run-tests.php failed (${result})")
endif()
