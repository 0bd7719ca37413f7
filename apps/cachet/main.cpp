// cachet: the command-line client. Parses the global options, loads the config,
// opens the store when the command needs it, and runs the command.
#include <unistd.h>

#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "cachet/version.h"
#include "command_table.h"
#include "default_config.h"
#include "exit_codes.h"
#include "global_options.h"
#include "invocation.h"
#include "shell_words.h"

namespace cachet::cli {
namespace {

int FailWith(const Status& status) {
  std::cerr << "cachet: " << status.ToString() << '\n';
  if (status.IsInvalidArgument()) std::cerr << "(see cachet --help)\n";
  return ExitCodeFor(status);
}

Result<Config> LoadConfig(const GlobalOptions& global) {
  if (global.config_path) return Config::LoadFile(*global.config_path, global.overrides);
  Result<std::filesystem::path> found = FindDefaultConfig();
  if (!found.ok()) return found.status();
  return Config::LoadFile(found->string(), global.overrides);
}

int Dispatch(const Invocation& inv, const Config& config) {
  CommandContext ctx{config, nullptr, std::cout, std::cerr, &std::cin};
  ctx.out_is_terminal = isatty(STDOUT_FILENO) == 1;
  if (inv.spec->kind == CommandKind::kConfig) return inv.spec->run(ctx, inv);
  Result<std::unique_ptr<Cache>> cache = Cache::Open(config);
  if (!cache.ok()) return FailWith(cache.status());
  ctx.cache = cache->get();
  return inv.spec->run(ctx, inv);
}

int Main(const std::vector<std::string>& args) {
  Result<GlobalOptions> global = ParseGlobalOptions(args);
  if (!global.ok()) return FailWith(global.status());
  if (global->version) {
    std::cout << "cachet " << CACHET_VERSION_STRING << '\n';
    return kExitSuccess;
  }
  if (global->help || global->command.empty()) {
    PrintGlobalHelp(global->help ? std::cout : std::cerr);
    return global->help ? kExitSuccess : kExitUsage;
  }
  const CommandSpec* spec = FindCommand(global->command);
  if (spec == nullptr) {
    return FailWith(Status::InvalidArgument("unknown command " + QuoteShellWord(global->command) +
                                            SuggestCommand(global->command)));
  }
  Result<Invocation> inv = ParseInvocation(*spec, global->command_words);
  if (!inv.ok()) return FailWith(inv.status());
  if (inv->help) {
    PrintCommandHelp(*spec, std::cout);
    return kExitSuccess;
  }
  Result<Config> config = LoadConfig(*global);
  if (!config.ok()) return FailWith(config.status());
  return Dispatch(*inv, *config);
}

}  // namespace
}  // namespace cachet::cli

int main(int argc, char** argv) {
  try {
    return cachet::cli::Main(std::vector<std::string>(argv, argv + argc));
  } catch (const std::exception& e) {
    // Nothing below is meant to throw; this is the last line of defence.
    std::cerr << "cachet: internal error: " << e.what() << '\n';
    return cachet::cli::kExitStoreError;
  }
}
