// Command argument parsing with Boost.Program_options; its exceptions stop here.
#include "invocation.h"

#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "command_table.h"
#include "shell_words.h"

namespace cachet::cli {
namespace po = boost::program_options;
namespace {

po::options_description CommandOptions(const CommandSpec& spec) {
  po::options_description options;
  options.add_options()("help", "show this command's help");
  if (spec.takes_ttl) options.add_options()("ttl", po::value<long long>(), "seconds");
  if (spec.takes_lease) {
    options.add_options()("stale", po::value<double>(), "seconds");
    options.add_options()("lease", po::value<double>(), "seconds");
  }
  options.add_options()("args", po::value<std::vector<std::string>>(), "positional");
  return options;
}

Status CheckArgumentCount(const CommandSpec& spec, std::size_t count) {
  const bool too_few = count < static_cast<std::size_t>(spec.min_args);
  const bool too_many = spec.max_args >= 0 && count > static_cast<std::size_t>(spec.max_args);
  if (!too_few && !too_many) return Status::OK();
  return Status::InvalidArgument(std::string(too_few ? "too few" : "too many") +
                                 " arguments; usage: " + spec.name + " " + spec.arguments);
}

Result<Invocation> ToInvocation(const CommandSpec& spec, const po::variables_map& vm) {
  Invocation inv;
  inv.spec = &spec;
  inv.help = vm.count("help") > 0;
  if (vm.count("args")) inv.args = vm["args"].as<std::vector<std::string>>();
  if (vm.count("ttl")) {
    const long long seconds = vm["ttl"].as<long long>();
    if (seconds < 0) return Status::InvalidArgument("--ttl must be 0 or more seconds");
    inv.ttl = TtlFromSeconds(seconds);
  }
  for (const char* name : {"stale", "lease"}) {
    if (!vm.count(name)) continue;
    const double seconds = vm[name].as<double>();
    // Up to ten years: far past any lease, and safely inside a Ttl.
    if (!(seconds >= 0 && seconds <= 315360000)) {
      return Status::InvalidArgument(std::string("--") + name +
                                     " must be between 0 and 315360000 seconds");
    }
    const std::chrono::milliseconds ms(static_cast<std::int64_t>(seconds * 1000 + 0.5));
    (std::string_view(name) == "stale" ? inv.stale : inv.lease) = ms;
  }
  if (inv.help) return inv;
  Status count = CheckArgumentCount(spec, inv.args.size());
  if (!count.ok()) return count;
  return inv;
}

}  // namespace

Result<Invocation> ParseInvocation(const CommandSpec& spec, const std::vector<std::string>& words) {
  po::positional_options_description positional;
  positional.add("args", -1);
  // Long options only: "-5" is a delta or a value, "-" means stdin.
  const int style = po::command_line_style::unix_style ^ po::command_line_style::allow_short;
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(words)
                  .options(CommandOptions(spec))
                  .positional(positional)
                  .style(style)
                  .run(),
              vm);
    return ToInvocation(spec, vm);
  } catch (const std::exception& e) {
    // Program_options repeats the offending word: escaped and cut like any echo.
    return Status::InvalidArgument(std::string(spec.name) + ": " + EscapeShellBytes(e.what()));
  }
}

std::optional<std::uint64_t> ParseUnsigned(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

Ttl TtlFromUnsignedSeconds(std::uint64_t seconds) {
  return seconds > static_cast<std::uint64_t>(Ttl::max().count())
             ? Ttl::max()
             : TtlFromSeconds(static_cast<std::int64_t>(seconds));
}

}  // namespace cachet::cli
