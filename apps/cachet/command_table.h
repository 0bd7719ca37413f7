// The table of CLI commands: names, arguments, one-line summaries and the
// functions that run them. Adding a command is adding one row.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "command.h"

namespace cachet::cli {

std::span<const CommandSpec> AllCommands() noexcept;

// nullptr for an unknown name.
const CommandSpec* FindCommand(std::string_view name) noexcept;

// " (did you mean 'get'?)" for a mistyped command name, or "".
std::string SuggestCommand(std::string_view typed);

// "usage: cachet [global options] NAME ARGS [--ttl SECONDS]" and the summary.
void PrintCommandHelp(const CommandSpec& spec, std::ostream& out);

// One line per command: name, arguments, summary.
void PrintCommandList(std::ostream& out);

}  // namespace cachet::cli
