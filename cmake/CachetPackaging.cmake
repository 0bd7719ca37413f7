# What an install holds beyond the targets (pkg-config file, docs), and the
# Debian package: `cpack -G DEB` in the build directory writes
# cachet_<version>_<arch>.deb. Included last by the top-level CMakeLists.txt.

# cachet.pc, in <libdir>/pkgconfig, locating the prefix relative to itself.
file(RELATIVE_PATH CACHET_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" CACHET_PC_TO_PREFIX "${CACHET_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/cachet.pc.in ${PROJECT_BINARY_DIR}/cachet.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cachet.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The README and the reference pages, laid out so the README's links work.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
# The plugin authors' example, a project of its own built against an installed
# cachet (whether or not CACHET_BUILD_EXAMPLES); the install tests build this copy.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/out-of-tree/
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/out-of-tree)

set(CACHET_PACKAGE_CONTACT "cachet developers" CACHE STRING
    "Maintainer field of the Debian package")

set(CPACK_PACKAGE_NAME cachet)
set(CPACK_PACKAGE_VENDOR cachet)
set(CPACK_PACKAGE_CONTACT "${CACHET_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "cachet is a C++20 cache-backend framework: one key-value cache API over store plugins
(memory, memcached, Redis, Tokyo Tyrant) chosen by a config file. This package holds
the library, its plugins, the cachet and cachet-bench programs, the headers, the CMake
package and cachet.pc.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Installed binaries are stripped: the library is 17 MB with its debug info.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # cachet_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# Depends comes from dpkg-shlibdeps (package dpkg-dev) reading every binary.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Tells dpkg-shlibdeps that libcachet.so.0.1, which the plugins and programs
# need, is in this package (and gives later packages a shlibs entry for it).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# The public headers include spdlog and nlohmann/json: needed to build against cachet.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libspdlog-dev, nlohmann-json3-dev")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
