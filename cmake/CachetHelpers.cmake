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
# folder (the build tree's plugins/ in cachet's own build, or the caller's
# CMAKE_LIBRARY_OUTPUT_DIRECTORY out of tree) and installs it beside the others.
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
  if(COMMAND cachet_set_warnings)
    cachet_set_warnings(${target})
  endif()
  if(DEFINED CACHET_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${CACHET_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
