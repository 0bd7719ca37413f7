# Runs the install test (see CMakeLists.txt). Invoked with cmake -P and:
#   CACHET_BUILD_DIR      the built cachet tree to install
#   CONSUMER_SUBDIR       the out-of-tree project's installed copy, under the prefix
#   WORK_DIR              scratch space, emptied first
#   PLUGIN_INSTALL_SUBDIR where plugins go under the prefix (lib/cachet/plugins)
#   LIB_SUBDIR            where the library goes under the prefix (lib)
#   GENERATOR             the CMake generator to build the consumer with
#   WITH_MEMORY_PLUGIN    1 when the memory plugin was built, else 0
#   WITH_CLI              1 when the cachet program was built, else 0
foreach(var CACHET_BUILD_DIR CONSUMER_SUBDIR WORK_DIR PLUGIN_INSTALL_SUBDIR LIB_SUBDIR
            GENERATOR WITH_MEMORY_PLUGIN WITH_CLI)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_test.cmake: ${var} is not set")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/install_checks.cmake)
require_programs(install_consumer readelf ldd)

set(prefix ${WORK_DIR}/prefix)
set(moved ${WORK_DIR}/moved)
set(consumer_build ${WORK_DIR}/consumer-build)
set(consumer_prefix ${WORK_DIR}/consumer-prefix)
file(REMOVE_RECURSE ${WORK_DIR})

# Install, then copy the tree elsewhere and remove the original: nothing may
# depend on the prefix it was installed to.
run_step("cmake --install" ${CMAKE_COMMAND} --install ${CACHET_BUILD_DIR} --prefix ${prefix})
file(COPY ${prefix}/ DESTINATION ${moved})
file(REMOVE_RECURSE ${prefix})

# What was built is checked where it must be installed; a file missing there
# fails the test rather than skipping its checks.
set(memory_plugin ${moved}/${PLUGIN_INSTALL_SUBDIR}/cachet-memory.so)
set(cachet_program ${moved}/bin/cachet)
set(installed ${moved}/${LIB_SUBDIR}/libcachet.so)
if(WITH_MEMORY_PLUGIN)
  list(APPEND installed ${memory_plugin})
endif()
if(WITH_CLI)
  list(APPEND installed ${cachet_program})
endif()
foreach(file IN LISTS installed)
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()

check_runpath(${moved}/${LIB_SUBDIR}/libcachet.so "")
if(WITH_MEMORY_PLUGIN)
  check_runpath(${memory_plugin} "$ORIGIN/../..")
  check_links_inside(${memory_plugin} ${moved})
endif()
if(WITH_CLI)
  check_runpath(${cachet_program} "$ORIGIN/../${LIB_SUBDIR}")
  check_links_inside(${cachet_program} ${moved})
endif()
if(WITH_CLI AND WITH_MEMORY_PLUGIN)
  check_plugins_inside(${cachet_program} ${moved})
endif()

# The consumer is the example plugin authors find installed (examples/out-of-tree).
set(consumer_source ${moved}/${CONSUMER_SUBDIR})
if(NOT EXISTS ${consumer_source}/CMakeLists.txt)
  message(FATAL_ERROR "the install has no example project at ${consumer_source}")
endif()
run_step("configure the consumer" ${CMAKE_COMMAND} -S ${consumer_source} -B ${consumer_build}
         -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${moved} -DCMAKE_INSTALL_PREFIX=${consumer_prefix})
require_output("cachet's plugin folder: ${moved}/${PLUGIN_INSTALL_SUBDIR}\n"
               "CACHET_PLUGIN_DIR does not name the moved plugin folder")
run_step("build the consumer" ${CMAKE_COMMAND} --build ${consumer_build})

# The consumer's own plugin; the memory plugin, when it was built, from the
# default search path: beside the moved libcachet.
if(WITH_MEMORY_PLUGIN)
  run_step("run the consumer" ${consumer_build}/cachet_consumer ${consumer_build}/plugins --memory)
  require_output("memory: loaded ${memory_plugin}\n"
                 "the consumer loaded the memory plugin from elsewhere")
  require_output("memory: ABI version 12\n" "docs/plugins.md says ABI version 12")
  # The out-of-tree plugin carries the ABI version docs/plugins.md names.
  require_output("notebook: ABI version 12\n" "docs/plugins.md says ABI version 12")
  run_step("run the Cache application" ${consumer_build}/cachet_app)
else()
  run_step("run the consumer" ${consumer_build}/cachet_consumer ${consumer_build}/plugins)
  require_output("notebook: ABI version 12\n" "docs/plugins.md says ABI version 12")
endif()

# An out-of-tree plugin installs under its own prefix, not cachet's. Its RUNPATH
# names that prefix's library folder, where libcachet is not: it loads because
# the program loading it has libcachet already.
run_step("install the consumer" ${CMAKE_COMMAND} --install ${consumer_build})
set(notebook ${consumer_prefix}/${PLUGIN_INSTALL_SUBDIR}/cachet-notebook.so)
if(NOT EXISTS ${notebook})
  message(FATAL_ERROR "cachet_add_plugin did not install ${notebook}")
endif()
check_runpath(${notebook} "$ORIGIN/../..")

# The consumer's plugins pass the conformance kit through its own CTest
# (examples/out-of-tree/CMakeLists.txt), and the ledger plugin refuses a stale reply.
run_step("the conformance kit on the consumer's plugin"
         ${CMAKE_CTEST_COMMAND} --test-dir ${consumer_build} --output-on-failure)
