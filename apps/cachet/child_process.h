// Runs a command without a shell and captures what it writes to stdout (for
// `cachet fetch`). Its stdin and stderr are the client's own.
#pragma once

#include <string>
#include <vector>

#include "cachet/status.h"

namespace cachet::cli {

// Runs argv[0] (searched in PATH) with argv, appends its stdout to `*out` and
// sets `*exit_code`: the command's exit status, 128 + the signal number if a
// signal ended it, 127 if it could not be started (the reason goes to stderr).
// Fails only when the client itself cannot fork, pipe or wait.
// REQUIRES: argv is not empty.
Status RunCapturingStdout(const std::vector<std::string>& argv, std::string* out, int* exit_code);

}  // namespace cachet::cli
