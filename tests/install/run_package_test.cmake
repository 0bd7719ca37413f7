# Runs the package test (see CMakeLists.txt). Invoked with cmake -P and:
#   CACHET_BUILD_DIR      the built cachet tree to package
#   CACHET_SOURCE_DIR     its sources
#   CONSUMER_SUBDIR       the installed copy of examples/out-of-tree, under usr
#   WORK_DIR              scratch space, emptied first
#   VERSION               cachet's version
#   PLUGIN_INSTALL_SUBDIR where plugins go under the prefix (lib/cachet/plugins)
#   LIB_SUBDIR            where the library goes under the prefix (lib)
#   GENERATOR, CXX        the CMake generator and compiler for the consumers
foreach(var CACHET_BUILD_DIR CACHET_SOURCE_DIR CONSUMER_SUBDIR WORK_DIR VERSION
            PLUGIN_INSTALL_SUBDIR LIB_SUBDIR GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_package_test.cmake: ${var} is not set")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/install_checks.cmake)
# cpack -G DEB fails without `file`, and without dpkg-shlibdeps writes a
# package with no Depends; the rest are used below.
require_programs(install_package ${CMAKE_CPACK_COMMAND} dpkg dpkg-deb dpkg-shlibdeps file
                 pkg-config readelf ldd grep)

set(root ${WORK_DIR}/root)
set(usr ${root}/usr)
file(REMOVE_RECURSE ${WORK_DIR})

# The package, as `cpack -G DEB` in the build directory makes it.
run_step("dpkg --print-architecture" dpkg --print-architecture)
string(STRIP "${step_output}" arch)
run_step("cpack -G DEB" ${CMAKE_CPACK_COMMAND} -G DEB --config ${CACHET_BUILD_DIR}/CPackConfig.cmake
         -B ${WORK_DIR}/package)
set(deb ${WORK_DIR}/package/cachet_${VERSION}_${arch}.deb)
if(NOT EXISTS ${deb})
  message(FATAL_ERROR "cpack did not write ${deb}")
endif()
run_step("dpkg-deb -f Depends" dpkg-deb -f ${deb} Depends)
if(NOT step_output MATCHES "libc6")
  message(FATAL_ERROR "Depends holds no shared-library dependency: ${step_output}")
endif()
run_step("dpkg-deb -x" dpkg-deb -x ${deb} ${root})

# What the package holds.
foreach(file ${LIB_SUBDIR}/libcachet.so ${PLUGIN_INSTALL_SUBDIR}/cachet-memory.so bin/cachet
        bin/cachet-bench include/cachet/cache.h include/cachet/version.h
        ${LIB_SUBDIR}/cmake/cachet/cachetConfig.cmake ${LIB_SUBDIR}/pkgconfig/cachet.pc
        share/cachet/config/default.conf share/doc/cachet/README.md
        share/doc/cachet/docs/config.md)
  if(NOT EXISTS ${usr}/${file})
    message(FATAL_ERROR "the package has no /usr/${file}")
  endif()
endforeach()

# Every binary is stripped, has relative RUNPATHs only, and finds its libraries
# inside the root; no file names the build or the source tree.
file(GLOB plugins ${usr}/${PLUGIN_INSTALL_SUBDIR}/*.so)
file(GLOB programs ${usr}/bin/*)
check_no_debug_info(${root} ${usr}/${LIB_SUBDIR}/libcachet.so ${programs} ${plugins})
check_runpath(${usr}/${LIB_SUBDIR}/libcachet.so "")
foreach(program IN LISTS programs)
  check_runpath(${program} "$ORIGIN/../${LIB_SUBDIR}")
  # cachet-ttserver, the Tokyo Tyrant test server, is Tokyo Cabinet's alone: no libcachet.
  if(program MATCHES "/cachet-ttserver$")
    capture_step("ldd ${program}" ldd ${program})
    if(step_output MATCHES "not found")
      message(FATAL_ERROR "${program}: a library is not found:\n${step_output}")
    endif()
  else()
    check_links_inside(${program} ${root})
  endif()
endforeach()
foreach(plugin IN LISTS plugins)
  check_runpath(${plugin} "$ORIGIN/../..")
  check_links_inside(${plugin} ${root})
endforeach()
# grep exits 1 when nothing matches, and 2 (or cannot start) when it fails.
foreach(tree ${CACHET_BUILD_DIR} ${CACHET_SOURCE_DIR})
  execute_process(COMMAND grep -rlF ${tree} ${root} RESULT_VARIABLE result
                  OUTPUT_VARIABLE naming ERROR_VARIABLE err)
  if(result EQUAL 0)
    message(FATAL_ERROR "files naming ${tree}:\n${naming}")
  elseif(NOT result EQUAL 1)
    message(FATAL_ERROR "grep -rlF ${tree} failed (${result}): ${err}")
  endif()
endforeach()

# The extracted cachet lists only plugins inside the root, and runs the memory store.
check_plugins_inside(${usr}/bin/cachet ${root})
check_memory_shell(${usr}/bin/cachet ${WORK_DIR})

# cachet-bench starts cachet-ttserver from beside itself: --start-servers works
# from the package, with the build tree out of reach.
if(WITH_TTSERVER)
  if(NOT EXISTS ${usr}/bin/cachet-ttserver)
    message(FATAL_ERROR "the package has no /usr/bin/cachet-ttserver")
  endif()
  run_step("the package's cachet-bench --start-servers on Tokyo Tyrant"
           ${usr}/bin/cachet-bench --start-servers -c ${usr}/share/cachet/config/tokyotyrant.conf
           --scenarios get --ops 50 --repeat 1 --no-peers --format csv)
  if(NOT step_output MATCHES "\nget,tokyotyrant,1,")
    message(FATAL_ERROR "cachet-bench ran no Tokyo Tyrant row: ${step_output}")
  endif()
endif()

# An application built with find_package(cachet) against the root.
set(consumer_build ${WORK_DIR}/consumer-build)
set(consumer_source ${usr}/${CONSUMER_SUBDIR})
if(NOT EXISTS ${consumer_source}/CMakeLists.txt)
  message(FATAL_ERROR "the package has no example project at ${consumer_source}")
endif()
run_step("configure the consumer" ${CMAKE_COMMAND} -S ${consumer_source} -B ${consumer_build}
         -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${usr})
require_output("cachet's plugin folder: ${usr}/${PLUGIN_INSTALL_SUBDIR}\n"
               "CACHET_PLUGIN_DIR does not name the plugin folder inside the root")
run_step("build the consumer" ${CMAKE_COMMAND} --build ${consumer_build})
run_step("run the consumer" ${consumer_build}/cachet_consumer ${consumer_build}/plugins --memory)
require_output("memory: loaded ${usr}/${PLUGIN_INSTALL_SUBDIR}/cachet-memory.so\n"
               "the consumer loaded the memory plugin from outside the root")
run_step("run the Cache application (find_package)" ${consumer_build}/cachet_app)

# The same application built with pkg-config, the prefix taken from where
# cachet.pc lies. pkg-config gives no RUNPATH: the run names the library folder.
set(pkg_config_env PKG_CONFIG_PATH=${usr}/${LIB_SUBDIR}/pkgconfig)
run_step("pkg-config --cflags --libs cachet" ${CMAKE_COMMAND} -E env ${pkg_config_env}
         pkg-config --define-prefix --cflags --libs cachet)
string(STRIP "${step_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
foreach(flag -I${usr}/include -L${usr}/${LIB_SUBDIR})
  list(FIND flags ${flag} at)
  if(at EQUAL -1)
    message(FATAL_ERROR "pkg-config gives no ${flag}: ${flags}")
  endif()
endforeach()
# Without --define-prefix the include folder is spelt from cachet.pc's own
# place (.../pkgconfig/../../include); once normalized it must be the root's.
run_step("pkg-config without --define-prefix" ${CMAKE_COMMAND} -E env ${pkg_config_env}
         pkg-config --cflags-only-I cachet)
separate_arguments(include_flags UNIX_COMMAND "${step_output}")
set(found_prefix FALSE)
foreach(flag IN LISTS include_flags)
  string(REGEX REPLACE "^-I" "" include_dir "${flag}")
  cmake_path(NORMAL_PATH include_dir)
  if(include_dir STREQUAL "${usr}/include")
    set(found_prefix TRUE)
  endif()
endforeach()
if(NOT found_prefix)
  message(FATAL_ERROR "cachet.pc does not find its prefix from its own place: ${step_output}")
endif()
run_step("build the application with pkg-config" ${CXX} ${consumer_source}/app.cpp ${flags}
         -o ${WORK_DIR}/app-pkg-config)
run_step("run the Cache application (pkg-config)" ${CMAKE_COMMAND} -E env
         LD_LIBRARY_PATH=${usr}/${LIB_SUBDIR} ${WORK_DIR}/app-pkg-config)
