// The global part of the cachet command line:
//   cachet [-c FILE] [-o section.key=value]... [--help] [--version] COMMAND [ARGS]
// Everything after the first word that is not a global option (the command) is
// left to the command's own parser (invocation.h), so commands may take values
// that look like options.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cachet/result.h"

namespace cachet::cli {

struct GlobalOptions {
  std::optional<std::string> config_path;  // -c; unset: the default config
  std::vector<std::string> overrides;      // -o section.key=value, in order
  bool help = false;
  bool version = false;
  std::string command;                     // "" when none was given
  std::vector<std::string> command_words;  // the words after the command
};

// kInvalidArgument naming the problem (unknown option, missing value).
Result<GlobalOptions> ParseGlobalOptions(const std::vector<std::string>& args);

void PrintGlobalHelp(std::ostream& out);

}  // namespace cachet::cli
