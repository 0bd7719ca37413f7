// What every CLI command receives (CommandContext, Invocation) and how it is
// described in the command table (CommandSpec).
//
// A command function prints its result to ctx.out (errors of one-shot commands go
// to ctx.err) and returns an exit code (exit_codes.h). The same functions serve a
// one-shot command line and each line of `cachet shell`; ctx.shell tells them
// which output conventions apply.
#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "cachet/item.h"

namespace cachet::cli {

struct CommandContext {
  const Config& config;
  Cache* cache = nullptr;  // store commands only; owned by the caller, outlives the call
  std::ostream& out;
  std::ostream& err;
  // Stdin: the source of "-" values for one-shot commands, of lines for the shell.
  // nullptr inside the shell, where values must be arguments.
  std::istream* in = nullptr;
  bool shell = false;            // line-oriented output: every result ends its line
  bool out_is_terminal = false;  // one-shot values end with a newline only on a terminal
};

struct CommandSpec;

// One parsed command line: positional arguments and the common options.
struct Invocation {
  const CommandSpec* spec = nullptr;
  std::vector<std::string> args;
  std::optional<Ttl> ttl;  // --ttl SECONDS
  // fetch only: --stale SECONDS and --lease SECONDS (fractions allowed).
  std::optional<std::chrono::milliseconds> stale;
  std::optional<std::chrono::milliseconds> lease;
  bool help = false;  // --help
};

enum class CommandKind {
  kStore,   // needs an open Cache
  kConfig,  // needs only the Config (plugins, check)
  kShell,   // opens the Cache and reads commands from stdin
};

using CommandFn = int (*)(CommandContext& ctx, const Invocation& inv);

struct CommandSpec {
  const char* name;
  const char* arguments;  // for usage lines: "KEY [VALUE|-]"
  const char* summary;    // one line
  CommandKind kind;
  int min_args;
  int max_args;  // -1: any number
  bool takes_ttl;
  CommandFn run;
  bool takes_lease = false;  // --stale and --lease (fetch)
};

}  // namespace cachet::cli
