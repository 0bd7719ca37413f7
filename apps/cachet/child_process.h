// Runs a command without a shell and captures what it writes to stdout (for
// `cachet fetch`). Its stderr is the client's own; its stdin too, or /dev/null.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cachet/status.h"

namespace cachet::cli {

// How a command ran.
struct ChildOutcome {
  // Its exit status, or 128 + the signal number if a signal ended it; 127 if
  // it could not be started.
  int exit_code = 0;
  // Why it could not be started ("cannot run CMD: No such file or directory"),
  // empty when it ran.
  std::string start_error;
};

// Runs argv[0] (searched in PATH) with argv and appends its stdout to `*out`.
// With `null_stdin` the command reads /dev/null (inside `cachet shell`, whose
// stdin holds the next commands). A command that writes more than
// `max_output` bytes is killed (SIGKILL) and reaped, and the answer is
// kTooLarge. Fails otherwise only when the client itself cannot fork, pipe or
// wait.
// REQUIRES: argv is not empty.
Status RunCapturingStdout(const std::vector<std::string>& argv, bool null_stdin,
                          std::size_t max_output, std::string* out, ChildOutcome* outcome);

}  // namespace cachet::cli
