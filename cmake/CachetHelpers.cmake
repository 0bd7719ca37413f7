# Helper functions shared by cachet's own build and by out-of-tree plugins.

# cachet_set_warnings(target): the warning set every cachet target builds clean under.
function(cachet_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(CACHET_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# cachet_add_plugin(NAME SOURCES... [LIBRARIES libs...])
# Builds the store plugin NAME as the MODULE library cachet-NAME.so in the plugin
# folder (the build tree's lib/cachet/plugins in cachet's own build, or the
# caller's CMAKE_LIBRARY_OUTPUT_DIRECTORY out of tree) and installs it into
# CACHET_PLUGIN_INSTALL_DIR (lib/cachet/plugins, under the caller's
# CMAKE_INSTALL_PREFIX unless set to an absolute path).
# The plugin is compiled as C++20 without extensions, as the core is: the build
# fingerprint records the language level, so a plugin built otherwise would only
# be refused when loaded.
function(cachet_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(sources ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  set(target cachet_plugin_${name})
  add_library(${target} MODULE ${sources})
  target_link_libraries(${target} PRIVATE cachet::core ${ARG_LIBRARIES})
  target_compile_features(${target} PRIVATE cxx_std_20)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME cachet-${name}
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED CACHET_PLUGIN_BUILD_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CACHET_PLUGIN_BUILD_DIR})
  endif()
  # Installed, a plugin sits in <libdir>/cachet/plugins: libcachet is two levels up.
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../..")
  if(COMMAND cachet_set_warnings)
    cachet_set_warnings(${target})
  endif()
  # Remembered for cachet_add_conformance_test(), which puts their folders first.
  set_property(GLOBAL APPEND PROPERTY CACHET_PLUGIN_TARGETS ${target})
  if(DEFINED CACHET_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${CACHET_PLUGIN_INSTALL_DIR})
  endif()
endfunction()

# cachet_add_conformance_test(NAME CONFIG file [ARGS args...])
# Adds the CTest test NAME: cachet-conformance runs cachet's conformance suite
# against the store that `file` (relative to the current source folder) names,
# and fails naming each case the store does not pass. The folders of the plugins
# built in this project with cachet_add_plugin() (call it first) are searched
# before any other, so `backend = <name>` in the config is enough. ARGS go to
# cachet-conformance: the store's limits (--max-key-size N, --max-value-size N),
# --no-flush for a shared server, or Catch2 test specs such as "~[threads]".
# REQUIRES: enable_testing() (or include(CTest)); a server the store needs runs
# where the config says.
function(cachet_add_conformance_test name)
  cmake_parse_arguments(ARG "" "CONFIG" "ARGS" ${ARGN})
  if(NOT ARG_CONFIG)
    message(FATAL_ERROR "cachet_add_conformance_test(${name}): CONFIG file is required")
  endif()
  if(NOT TARGET cachet::conformance)
    message(FATAL_ERROR "cachet_add_conformance_test(${name}): this cachet has no "
                        "cachet-conformance (it was built without Catch2)")
  endif()
  get_filename_component(config "${ARG_CONFIG}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND $<TARGET_FILE:cachet::conformance> -c ${config} ${ARG_ARGS})
  get_property(plugins GLOBAL PROPERTY CACHET_PLUGIN_TARGETS)
  set(search_path "")
  foreach(plugin IN LISTS plugins)
    list(APPEND search_path "CACHET_PLUGIN_PATH=path_list_prepend:$<TARGET_FILE_DIR:${plugin}>")
  endforeach()
  set_tests_properties(${name} PROPERTIES LABELS conformance ENVIRONMENT_MODIFICATION
                                          "${search_path}")
endfunction()
