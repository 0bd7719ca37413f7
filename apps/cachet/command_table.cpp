// The CLI command table and its help output.
#include "command_table.h"

#include <array>
#include <ostream>
#include <string>
#include <vector>

#include "cachet/suggest.h"
#include "commands.h"

namespace cachet::cli {
namespace {

using K = CommandKind;

// Columns: name, arguments, summary, kind, min args, max args, --ttl, function.
constexpr std::array kCommands = {
    CommandSpec{"get", "KEY", "print the value (exit 1 on a miss)", K::kStore, 1, 1, false, RunGet},
    CommandSpec{"gets", "KEY", "print \"CAS VALUE\" (the CAS token, a space, the value)", K::kStore,
                1, 1, false, RunGets},
    CommandSpec{"set", "KEY [VALUE|-]", "store unconditionally", K::kStore, 1, 2, true, RunSet},
    CommandSpec{"add", "KEY [VALUE|-]", "store only if absent", K::kStore, 1, 2, true, RunAdd},
    CommandSpec{"replace", "KEY [VALUE|-]", "store only if present", K::kStore, 1, 2, true,
                RunReplace},
    CommandSpec{"append", "KEY [VALUE|-]", "add bytes after the value", K::kStore, 1, 2, false,
                RunAppend},
    CommandSpec{"prepend", "KEY [VALUE|-]", "add bytes before the value", K::kStore, 1, 2, false,
                RunPrepend},
    CommandSpec{"cas", "KEY CAS [VALUE|-]", "store if the CAS token (from gets) still matches",
                K::kStore, 2, 3, true, RunCas},
    CommandSpec{"del", "KEY", "remove a key", K::kStore, 1, 1, false, RunDel},
    CommandSpec{"incr", "KEY [DELTA]", "add DELTA (default 1) to a counter, print it", K::kStore, 1,
                2, false, RunIncr},
    CommandSpec{"decr", "KEY [DELTA]", "subtract DELTA (default 1), print it (not below 0 "
                "on memcached)", K::kStore, 1, 2, false, RunDecr},
    CommandSpec{"touch", "KEY SECONDS", "set a new TTL (0: never expires)", K::kStore, 2, 2, false,
                RunTouch},
    CommandSpec{"mget", "KEY...", "one line per key: the value (quoted if not plain) or (nil)",
                K::kStore, 1, -1, false, RunMget},
    CommandSpec{"fetch", "KEY -- CMD [ARG]...",
                "print the value, or run CMD (once across processes) and cache its stdout",
                K::kStore, 2, -1, true, RunFetch, true},
    CommandSpec{"stats", "", "print the store's statistics, one \"NAME VALUE\" per line", K::kStore,
                0, 0, false, RunStats},
    CommandSpec{"flush", "", "remove every key", K::kStore, 0, 0, false, RunFlush},
    CommandSpec{"metrics", "[prometheus|json]",
                "print this process's counts, latency percentiles and server health", K::kStore, 0,
                1, false, RunMetrics},
    CommandSpec{"plugins", "", "list the store plugins found, with capabilities and options",
                K::kConfig, 0, 0, false, RunPlugins},
    CommandSpec{"check", "", "validate the config and print the effective settings", K::kConfig, 0,
                0, false, RunCheck},
    CommandSpec{"shell", "", "read commands from stdin, one per line, one result per line",
                K::kShell, 0, 0, false, RunShell},
};

}  // namespace

std::span<const CommandSpec> AllCommands() noexcept { return kCommands; }

const CommandSpec* FindCommand(std::string_view name) noexcept {
  for (const CommandSpec& spec : kCommands) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

std::string SuggestCommand(std::string_view typed) {
  std::vector<std::string_view> names;
  for (const CommandSpec& spec : kCommands) names.emplace_back(spec.name);
  return DidYouMean(typed, names);
}

void PrintCommandHelp(const CommandSpec& spec, std::ostream& out) {
  out << "usage: cachet [-c FILE] [-o section.key=value]... " << spec.name;
  // fetch's options go before its "--": everything after it is the command's.
  if (spec.takes_lease) out << " [--ttl SECONDS] [--stale SECONDS] [--lease SECONDS]";
  if (*spec.arguments != '\0') out << ' ' << spec.arguments;
  if (spec.takes_ttl && !spec.takes_lease) out << " [--ttl SECONDS]";
  out << "\n\n  " << spec.summary << "\n";
  if (spec.takes_ttl)
    out << "\n  --ttl SECONDS   expire after SECONDS (default: [cache] default_ttl)\n";
  if (spec.takes_lease) {
    out << "  --stale SECONDS serve the old value this long past its TTL while one caller\n"
           "                  reruns CMD (default: [cache] stale_ms)\n"
           "  --lease SECONDS the longest one run of CMD holds the key for the others\n"
           "                  (default: [cache] lease_ms, or 120 when that is 0)\n"
           "\n  CMD runs without a shell; its stdout is cached only when it exits 0.\n"
           "  A non-zero exit is passed on and nothing is cached.\n";
  }
  if (std::string_view(spec.arguments).find("VALUE|-") != std::string_view::npos) {
    out << "\n  Without VALUE, or with VALUE '-', the value is all of stdin (binary-safe).\n";
  }
}

void PrintCommandList(std::ostream& out) {
  for (const CommandSpec& spec : kCommands) {
    std::string usage = std::string(spec.name) + ' ' + spec.arguments;
    out << "  " << usage;
    for (std::size_t col = usage.size(); col < 22; ++col) out << ' ';
    out << ' ' << spec.summary << '\n';
  }
}

}  // namespace cachet::cli
