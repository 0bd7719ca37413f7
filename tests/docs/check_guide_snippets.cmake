# Checks that docs/guide.md cannot drift from the programs it quotes. Invoked
# with cmake -P and:
#   GUIDE         docs/guide.md
#   EXAMPLES_DIR  examples/
# Fails when a fenced C++ block of the guide (```cpp) is not a verbatim part of
# one file under EXAMPLES_DIR, when the guide has no such block, or when an
# example program is never named in the guide.
cmake_minimum_required(VERSION 3.25)

foreach(var GUIDE EXAMPLES_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_guide_snippets.cmake: ${var} is not set")
  endif()
endforeach()

file(READ ${GUIDE} guide)
file(GLOB example_files LIST_DIRECTORIES false ${EXAMPLES_DIR}/*.cpp ${EXAMPLES_DIR}/*.h)
# Contents go into one variable per file: a CMake list would split C++ at ';'.
set(file_count 0)
foreach(path IN LISTS example_files)
  file(READ ${path} content_${file_count})
  math(EXPR file_count "${file_count} + 1")
endforeach()

set(rest "${guide}")
set(snippets 0)
set(failures 0)
while(TRUE)
  string(FIND "${rest}" "```cpp\n" start)
  if(start EQUAL -1)
    break()
  endif()
  math(EXPR start "${start} + 7")
  string(SUBSTRING "${rest}" ${start} -1 rest)
  string(FIND "${rest}" "\n```" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "${GUIDE}: a ```cpp block is never closed")
  endif()
  math(EXPR end "${end} + 1")  # the snippet keeps its last newline
  string(SUBSTRING "${rest}" 0 ${end} snippet)
  string(SUBSTRING "${rest}" ${end} -1 rest)
  math(EXPR snippets "${snippets} + 1")

  set(found "")
  set(i 0)
  while(i LESS file_count AND NOT found)
    string(FIND "${content_${i}}" "${snippet}" at)
    if(NOT at EQUAL -1)
      list(GET example_files ${i} found)
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  if(found)
    get_filename_component(found_name ${found} NAME)
    message(STATUS "snippet ${snippets}: in examples/${found_name}")
  else()
    string(REGEX MATCH "^[^\n]*" first_line "${snippet}")
    message(SEND_ERROR "snippet ${snippets} (first line: '${first_line}') "
                       "is not a verbatim part of any file in ${EXAMPLES_DIR}")
    math(EXPR failures "${failures} + 1")
  endif()
endwhile()

if(snippets EQUAL 0)
  message(FATAL_ERROR "${GUIDE} has no ```cpp block")
endif()

foreach(path IN LISTS example_files)
  get_filename_component(name ${path} NAME)
  if(name MATCHES "\\.cpp$")
    string(FIND "${guide}" "examples/${name}" named)
    if(named EQUAL -1)
      message(SEND_ERROR "examples/${name} is never named in ${GUIDE}")
      math(EXPR failures "${failures} + 1")
    endif()
  endif()
endforeach()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} problem(s) between ${GUIDE} and ${EXAMPLES_DIR}")
endif()
message(STATUS "${snippets} snippets of ${GUIDE} found verbatim in ${EXAMPLES_DIR}")
