// Global command-line options with Boost.Program_options; its exceptions stop here.
#include "global_options.h"

#include <boost/program_options.hpp>
#include <exception>
#include <ostream>

#include "command_table.h"
#include "shell_words.h"

namespace cachet::cli {
namespace po = boost::program_options;
namespace {

po::options_description GlobalDescription() {
  po::options_description options("Global options");
  options.add_options()("config,c", po::value<std::string>()->value_name("FILE"),
                        "the config file (default: config/default.conf, see below)")(
      "option,o", po::value<std::vector<std::string>>()->composing()->value_name("S.K=V"),
      "override a config value, e.g. -o cache.namespace=app: (repeatable)")(
      "help,h", "show this help; COMMAND --help shows a command's")("version",
                                                                    "print cachet's version");
  return options;
}

bool TakesSeparateValue(const std::string& word) {
  return word == "-c" || word == "--config" || word == "-o" || word == "--option";
}

// The index of the command word in `args` (args[0] is the program), or
// args.size() when there is none.
std::size_t CommandIndex(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return i + 1;
    if (word.size() < 2 || word[0] != '-') return i;
    if (TakesSeparateValue(word)) ++i;
  }
  return args.size();
}

void StoreGlobal(const po::variables_map& vm, GlobalOptions* global) {
  if (vm.count("config")) global->config_path = vm["config"].as<std::string>();
  if (vm.count("option")) global->overrides = vm["option"].as<std::vector<std::string>>();
  global->help = vm.count("help") > 0;
  global->version = vm.count("version") > 0;
}

}  // namespace

Result<GlobalOptions> ParseGlobalOptions(const std::vector<std::string>& args) {
  const std::size_t command_at = CommandIndex(args);
  GlobalOptions global;
  try {
    std::vector<std::string> options(args.begin() + (args.empty() ? 0 : 1),
                                     args.begin() + std::min(command_at, args.size()));
    if (!options.empty() && options.back() == "--") options.pop_back();
    po::variables_map vm;
    po::store(po::command_line_parser(options).options(GlobalDescription()).run(), vm);
    StoreGlobal(vm, &global);
  } catch (const std::exception& e) {
    // Program_options repeats the offending word: escaped and cut like any echo.
    return Status::InvalidArgument(EscapeShellBytes(e.what()));
  }
  if (command_at < args.size()) {
    global.command = args[command_at];
    global.command_words.assign(args.begin() + command_at + 1, args.end());
  }
  return global;
}

void PrintGlobalHelp(std::ostream& out) {
  out << "usage: cachet [-c FILE] [-o section.key=value]... COMMAND [ARGS] [--ttl SECONDS]\n\n"
      << "One key-value cache API over pluggable stores; the config picks the store.\n\n"
      << GlobalDescription() << "\nCommands:\n";
  PrintCommandList(out);
  out << "\nWithout -c, cachet reads <exe>/../../config/default.conf (the build tree), else\n"
         "<prefix>/share/cachet/config/default.conf (installed).\n"
         "Exit codes: 0 success or hit; 1 miss, not stored, not found or CAS conflict;\n"
         "2 usage, config or plugin error; 3 store error (unavailable, timeout, protocol,\n"
         "corruption...).\n";
}

}  // namespace cachet::cli
