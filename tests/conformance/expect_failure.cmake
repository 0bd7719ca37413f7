# Runs cachet-conformance on a store that must fail, and checks that it does:
# exit status 1 and a line starting with EXPECTED. Invoked with cmake -P and
#   KIT       the cachet-conformance executable
#   CONFIG    the config naming the broken store
#   EXPECTED  the start of the failure line that names the case
execute_process(COMMAND ${KIT} -c ${CONFIG} RESULT_VARIABLE result OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT result EQUAL 1)
  message(FATAL_ERROR "cachet-conformance exited with ${result}, not 1")
endif()
string(FIND "${out}" "\n${EXPECTED}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "no line starting with '${EXPECTED}'")
endif()
