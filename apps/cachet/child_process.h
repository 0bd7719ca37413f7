// Runs a command without a shell and captures what it writes to stdout (for
// `cachet fetch`). Its stderr is the client's own; its stdin too, or /dev/null.
#pragma once

#include <string>
#include <vector>

#include "cachet/status.h"

namespace cachet::cli {

// Runs argv[0] (searched in PATH) with argv, appends its stdout to `*out` and
// sets `*exit_code`: the command's exit status, 128 + the signal number if a
// signal ended it, 127 if it could not be started (the reason goes to stderr).
// With `null_stdin` the command reads /dev/null (inside `cachet shell`, whose
// stdin holds the next commands). Fails only when the client itself cannot
// fork, pipe or wait.
// REQUIRES: argv is not empty.
Status RunCapturingStdout(const std::vector<std::string>& argv, bool null_stdin, std::string* out,
                          int* exit_code);

}  // namespace cachet::cli
