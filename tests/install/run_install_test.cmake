# Runs the install test (see CMakeLists.txt). Invoked with cmake -P and:
#   CACHET_BUILD_DIR      the built cachet tree to install
#   CONSUMER_SOURCE_DIR   the out-of-tree project
#   WORK_DIR              scratch space, emptied first
#   PLUGIN_INSTALL_SUBDIR where plugins go under the prefix (lib/cachet/plugins)
#   GENERATOR             the CMake generator to build the consumer with
foreach(var CACHET_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR PLUGIN_INSTALL_SUBDIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_test.cmake: ${var} is not set")
  endif()
endforeach()

# Runs a command, stopping the test with its output when it fails.
function(run_step description)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${description} failed (${result}):\n${out}\n${err}")
  endif()
  message(STATUS "${description}: ok\n${out}")
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${CACHET_BUILD_DIR} --prefix ${prefix})
run_step("configure the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build}
         -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix})
run_step("build the consumer" ${CMAKE_COMMAND} --build ${consumer_build})

# The consumer's own plugin, and the installed memory plugin when it was built.
set(consumer_args ${consumer_build}/plugins)
if(EXISTS ${prefix}/${PLUGIN_INSTALL_SUBDIR}/cachet-memory.so)
  list(APPEND consumer_args ${prefix}/${PLUGIN_INSTALL_SUBDIR})
endif()
run_step("run the consumer" ${consumer_build}/cachet_consumer ${consumer_args})

# The consumer's plugin passes the conformance kit through its own CTest
# (cachet_add_conformance_test in consumer/CMakeLists.txt).
run_step("the conformance kit on the consumer's plugin"
         ${CMAKE_CTEST_COMMAND} --test-dir ${consumer_build} --output-on-failure)
