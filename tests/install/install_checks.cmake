# Steps and checks shared by the install tests (run_install_test.cmake,
# run_package_test.cmake), for cmake -P scripts.

# require_programs(TEST PROGRAM...): stops TEST at once, naming the first PROGRAM
# that is not on PATH, instead of letting a later step fail obscurely or a
# check that reads the program's output pass on nothing.
function(require_programs test)
  foreach(program IN LISTS ARGN)
    unset(found)
    find_program(found ${program} NO_CACHE)
    if(NOT found)
      message(FATAL_ERROR "${test} needs `${program}`, which is not found on PATH "
                          "(.ci/setup installs what the tests need)")
    endif()
  endforeach()
endfunction()

# require_output(TEXT WHY): step_output holds TEXT, compared literally (a path
# with `+` or `.` in it is no regex); otherwise stops the test, saying WHY.
function(require_output text why)
  string(FIND "${step_output}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${why}: no '${text}' in:\n${step_output}")
  endif()
endfunction()

# capture_step(DESCRIPTION COMMAND...): runs a command with CACHET_PLUGIN_PATH and
# LD_LIBRARY_PATH unset, so only what the files themselves say is used; stops the
# test with the output when it fails, and leaves its stdout in step_output.
function(capture_step description)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=CACHET_PLUGIN_PATH --unset=LD_LIBRARY_PATH ${ARGN}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${description} failed (${result}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# run_step(DESCRIPTION COMMAND...): capture_step, then prints the output. Checks
# that read long listings (readelf, ldd) use capture_step, so that a failure's
# message is not buried under pages of listings in the test log.
function(run_step description)
  capture_step("${description}" ${ARGN})
  message(STATUS "${description}: ok\n${step_output}")
  set(step_output "${step_output}" PARENT_SCOPE)
endfunction()

# check_runpath(FILE EXPECTED): FILE's RUNPATH is exactly EXPECTED ("" for none).
function(check_runpath file expected)
  capture_step("readelf -d ${file}" readelf -d ${file})
  set(runpath "")
  if(step_output MATCHES "\\((RUNPATH|RPATH)\\)[^[]*\\[([^]]*)\\]")
    set(runpath "${CMAKE_MATCH_2}")
  endif()
  if(NOT runpath STREQUAL expected)
    message(FATAL_ERROR "${file}: RUNPATH '${runpath}', expected '${expected}'")
  endif()
endfunction()

# check_links_inside(FILE ROOT): ldd finds every library FILE needs, FILE needs
# libcachet, and ldd finds libcachet inside ROOT.
function(check_links_inside file root)
  capture_step("ldd ${file}" ldd ${file})
  if(step_output MATCHES "not found")
    message(FATAL_ERROR "${file}: a library is not found:\n${step_output}")
  endif()
  if(NOT step_output MATCHES "(^|\n)[ \t]*libcachet\\.so[^\n]* => ([^ \n]*)")
    message(FATAL_ERROR "${file}: ldd lists no libcachet:\n${step_output}")
  endif()
  # ldd spells a RUNPATH hit as .../bin/../lib/...: normalize before comparing.
  set(resolved "${CMAKE_MATCH_2}")
  cmake_path(NORMAL_PATH resolved)
  string(FIND "${resolved}" "${root}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "${file}: libcachet resolves to ${resolved}, outside ${root}")
  endif()
endfunction()

# check_no_debug_info(ROOT EXPECTED...): every ELF file under ROOT is free of
# .debug_info, and the EXPECTED files (followed through symbolic links) are
# among those checked. Files are told by their magic number, so no `file` is
# needed; symbolic links are skipped, as they name files already listed.
function(check_no_debug_info root)
  file(GLOB_RECURSE files LIST_DIRECTORIES false ${root}/*)
  set(elf_files "")
  foreach(file IN LISTS files)
    if(IS_SYMLINK ${file})
      continue()
    endif()
    file(READ ${file} magic LIMIT 4 HEX)
    if(NOT magic STREQUAL "7f454c46")
      continue()
    endif()
    file(REAL_PATH ${file} real)
    list(APPEND elf_files ${real})
    capture_step("readelf -S ${file}" readelf -S ${file})
    string(FIND "${step_output}" " .debug_info" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} carries debug info")
    endif()
  endforeach()
  foreach(expected IN LISTS ARGN)
    file(REAL_PATH ${expected} real)
    list(FIND elf_files ${real} at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${expected} is not among the ELF files checked: ${elf_files}")
    endif()
  endforeach()
  list(LENGTH elf_files count)
  message(STATUS "${count} ELF files under ${root}, none with debug info")
endfunction()

# check_plugins_inside(CACHET ROOT): `CACHET plugins` lists the memory store, and
# every plugin file it lists lies inside ROOT.
function(check_plugins_inside cachet root)
  run_step("cachet plugins" ${cachet} plugins)
  string(REGEX MATCHALL "\n  file: [^\n]*" files "\n${step_output}")
  if(NOT step_output MATCHES "(^|\n)memory ")
    message(FATAL_ERROR "`cachet plugins` does not list the memory store")
  endif()
  foreach(line IN LISTS files)
    string(REPLACE "\n  file: " "" file "${line}")
    string(FIND "${file}" "${root}/" at)
    if(NOT at EQUAL 0)
      message(FATAL_ERROR "`cachet plugins` lists ${file}, outside ${root}")
    endif()
  endforeach()
endfunction()

# check_memory_shell(CACHET): a set and a get on the memory store through `cachet shell`.
function(check_memory_shell cachet work_dir)
  file(WRITE ${work_dir}/shell-input "set greeting hello\nget greeting\n")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=CACHET_PLUGIN_PATH --unset=LD_LIBRARY_PATH
            ${cachet} -o cache.backend=memory shell
    INPUT_FILE ${work_dir}/shell-input
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0 OR NOT out STREQUAL "STORED\nhello\n")
    message(FATAL_ERROR "cachet shell (${result}) answered:\n${out}\n${err}")
  endif()
  message(STATUS "cachet shell: set and get ok")
endfunction()
