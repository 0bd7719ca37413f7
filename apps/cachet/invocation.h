// Parses the words after a command name (from argv or a shell line) into an
// Invocation: positional arguments, --ttl SECONDS and --help.
//
// Only long options are recognised, so values and deltas that begin with '-'
// ("-5", "-") stay positional; "--" ends the options.
#pragma once

#include <string>
#include <vector>

#include "cachet/result.h"
#include "command.h"

namespace cachet::cli {

// kInvalidArgument with a one-line reason for an unknown option, a bad --ttl or a
// wrong number of arguments (not checked when --help is given).
Result<Invocation> ParseInvocation(const CommandSpec& spec, const std::vector<std::string>& words);

}  // namespace cachet::cli
