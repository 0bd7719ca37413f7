// cachet-conformance: runs the backend conformance suite against the store a
// config names.
//
//   cachet-conformance -c FILE [-o section.key=value]... [--max-key-size N]
//                      [--max-value-size N] [--no-flush] [--list] [CATCH2 FILTERS]
//
// The store is opened the way an application opens it (Config::LoadFile, then
// Cache::Open and the plugin loader), so any plugin on the search path can be
// tested; a store that needs a server finds it where its section says. Prints one
// line per failing or skipped case and "N cases, M passed, K skipped" last.
// Exit status: 0 when no case failed, 1 when one did, 2 for a bad command line,
// filters that match no case, or a store that cannot be opened or answer a read.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <charconv>
#include <cstddef>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "suite_context.h"

namespace {

constexpr int kUsageError = 2;
// The largest value the contract asks every store to hold.
constexpr std::size_t kContractValueSize = 1000000;

constexpr std::string_view kUsage =
    "usage: cachet-conformance -c FILE [-o section.key=value]... [--max-key-size N]\n"
    "                          [--max-value-size N] [--no-flush] [--list] [CATCH2 FILTERS]\n"
    "  -c, --config FILE     the config naming the store to test ([cache] backend)\n"
    "  -o, --option S.K=V    overrides a config value\n"
    "  --max-key-size N      the store refuses keys longer than N bytes (default: no limit)\n"
    "  --max-value-size N    the store refuses values larger than N bytes (default: no limit)\n"
    "  --no-flush            the store is shared: skip the case that flushes it\n"
    "  --list                list the cases and exit\n"
    "Other arguments are Catch2 test specs, for example \"[ttl]\" or \"~[threads]\".\n";

struct Invocation {
  std::string config_file;
  std::vector<std::string> overrides;
  cachet::conformance::SuiteSettings settings;
  bool list = false;
  bool help = false;
  std::vector<std::string> catch_args;  // filters, passed to Catch as given
};

std::optional<std::size_t> ParseSize(std::string_view text) {
  std::size_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

// Reads our own options; everything else is left for Catch. An error message, or
// empty when the command line is fine.
std::string ParseArguments(int argc, char** argv, Invocation* out) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool takes_value = arg == "-c" || arg == "--config" || arg == "-o" || arg == "--option" ||
                             arg == "--max-key-size" || arg == "--max-value-size";
    if (takes_value && i + 1 == argc) return std::string(arg) + " needs a value";
    if (arg == "-c" || arg == "--config") {
      out->config_file = argv[++i];
    } else if (arg == "-o" || arg == "--option") {
      out->overrides.emplace_back(argv[++i]);
    } else if (arg == "--max-key-size" || arg == "--max-value-size") {
      auto size = ParseSize(argv[++i]);
      if (!size) return std::string(arg) + " '" + argv[i] + "': not a positive number";
      if (arg == "--max-value-size" && *size < kContractValueSize) {
        return "--max-value-size " + std::string(argv[i]) + ": every store holds values of " +
               "1,000,000 bytes (docs/plugins.md, the contract), so its limit is at least that";
      }
      (arg == "--max-key-size" ? out->settings.max_key_size : out->settings.max_value_size) = size;
    } else if (arg == "--no-flush") {
      out->settings.flush_allowed = false;
    } else if (arg == "--list") {
      out->list = true;
    } else if (arg == "-h" || arg == "--help") {
      out->help = true;
    } else {
      out->catch_args.emplace_back(arg);
    }
  }
  if (!out->help && !out->list && out->config_file.empty()) return "no config: give -c FILE";
  return {};
}

// Opens the store and hands it to the suite; false (with the reason printed) when
// the config cannot be read or the store cannot be opened.
bool OpenStore(Invocation* invocation) {
  auto config = cachet::Config::LoadFile(invocation->config_file, invocation->overrides);
  if (!config.ok()) {
    std::cerr << "cachet-conformance: " << config.status().ToString() << '\n';
    return false;
  }
  // Validating [cache] here (Cache::Open does it again) fills in the default
  // backend when the file leaves it out.
  cachet::Status valid = config->Validate("cache", cachet::CacheOptionSpecs());
  auto cache = valid.ok() ? cachet::Cache::Open(*config) : valid;
  if (!cache.ok()) {
    std::cerr << "cachet-conformance: " << cache.status().ToString() << '\n';
    return false;
  }
  // A store that cannot answer one read would fail every case for the same
  // reason; say it once, with the store's own words.
  invocation->settings.store = config->section("cache")->GetString("backend");
  const cachet::Status probe = (*cache)->Get<std::string>("cachet-conformance-probe").status();
  if (probe.IsError()) {
    std::cerr << "cachet-conformance: the store '" << invocation->settings.store
              << "' does not answer a read: " << probe.ToString() << '\n';
    return false;
  }
  std::cout << "cachet-conformance: store '" << invocation->settings.store << "' from "
            << invocation->config_file << '\n';
  cachet::conformance::SetSuite(std::move(cache).value(), std::move(invocation->settings));
  return true;
}

int RunCatch(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  Catch::Session session;
  if (int error = session.applyCommandLine(static_cast<int>(argv.size()), argv.data());
      error != 0) {
    return kUsageError;
  }
  const int failed = session.run();
  cachet::conformance::CloseSuite();
  // Listing answers how many cases it listed; that is no failure.
  if (session.config().listTestNamesOnly()) return 0;
  if (cachet::conformance::CasesRun() == 0) {
    std::cerr << "cachet-conformance: no case matches the filters\n";
    return kUsageError;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Invocation invocation;
  if (std::string error = ParseArguments(argc, argv, &invocation); !error.empty()) {
    std::cerr << "cachet-conformance: " << error << '\n' << kUsage;
    return kUsageError;
  }
  if (invocation.help) {
    std::cout << kUsage;
    return 0;
  }
  std::vector<std::string> catch_args = {"cachet-conformance"};
  if (invocation.list) {
    catch_args.emplace_back("--list-test-names-only");
  } else {
    if (!OpenStore(&invocation)) return kUsageError;
    catch_args.insert(catch_args.end(), {"--reporter", "cachet"});
  }
  catch_args.insert(catch_args.end(), invocation.catch_args.begin(), invocation.catch_args.end());
  return RunCatch(catch_args);
}
