# Runs cachet-conformance on a store that must fail, and checks that it does:
# exit status EXIT and a line starting with EXPECTED. Invoked with cmake -P and
#   KIT       the cachet-conformance executable
#   CONFIG    the config naming the store
#   EXPECTED  the start of the line that says why (a failing case, or the kit's refusal)
#   EXIT      the exit status expected (default 1: a case failed)
#   ARGS      more arguments for the kit, ';'-separated (optional)
if(NOT DEFINED EXIT)
  set(EXIT 1)
endif()
execute_process(COMMAND ${KIT} -c ${CONFIG} ${ARGS} RESULT_VARIABLE result OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT result EQUAL EXIT)
  message(FATAL_ERROR "cachet-conformance exited with ${result}, not ${EXIT}")
endif()
string(FIND "\n${out}${err}" "\n${EXPECTED}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "no line starting with '${EXPECTED}'")
endif()
