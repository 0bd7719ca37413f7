# Checks that a documentation page stays a page: docs/performance.md is the
# user's page on speed, at most MAX_LINES lines (its history goes to
# CHANGELOG.md). Invoked with cmake -P and:
#   PAGE       the page
#   MAX_LINES  the most lines it may have
cmake_minimum_required(VERSION 3.25)

foreach(var PAGE MAX_LINES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_page_length.cmake: ${var} is not set")
  endif()
endforeach()

file(READ ${PAGE} content)
string(REGEX MATCHALL "\n" newlines "${content}")
list(LENGTH newlines count)
if(count GREATER MAX_LINES)
  message(FATAL_ERROR "${PAGE} has ${count} lines, more than ${MAX_LINES}: move history "
                      "to CHANGELOG.md and keep one current table")
endif()
message(STATUS "${PAGE}: ${count} lines (at most ${MAX_LINES})")
