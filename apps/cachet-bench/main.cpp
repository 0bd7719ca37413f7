// cachet-bench: the seed benchmark scenarios against one or several configs,
// printed as cmpthese-style tables. Exit status: 0 when every iteration gave the
// expected outcome, 2 for a bad command line or config, 3 when a store failed.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "bench_options.h"
#include "report.h"
#include "runner.h"
#include "target.h"

namespace cachet::bench {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitStoreError = 3;

// Printable bytes from a fixed-seed generator: reproducible, and not a run of one
// character that a compressor would shrink to nothing.
std::string MakeValue(std::size_t size) {
  std::string value(size, ' ');
  std::uint32_t state = 2463534242u;
  for (char& c : value) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    c = static_cast<char>('!' + state % 94);
  }
  return value;
}

RunPlan PlanFrom(const BenchOptions& options) {
  RunPlan plan;
  plan.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options.duration_seconds));
  plan.ops = options.ops;
  plan.slice = std::chrono::milliseconds(options.slice_ms);
  plan.value = MakeValue(options.value_size);
  return plan;
}

void PrintHeading(const BenchOptions& options, const std::vector<Target>& targets) {
  std::cout << "cachet-bench: " << targets.size() << " config(s):";
  for (const Target& t : targets) std::cout << ' ' << t.label << " (" << t.config_path << ')';
  std::cout << "; value " << options.value_size << " bytes; ";
  if (options.ops > 0) {
    std::cout << options.ops << " iterations";
  } else {
    std::cout << options.duration_seconds << " s";
  }
  std::cout << " per scenario and config, in " << options.slice_ms << " ms slices\n";
}

int Main(const std::vector<std::string>& args) {
  Result<BenchOptions> options = ParseBenchOptions(args);
  if (!options.ok()) {
    std::cerr << "cachet-bench: " << options.status().message() << "\n(see --help)\n";
    return kExitUsage;
  }
  if (options->help) {
    PrintBenchHelp(std::cout);
    return 0;
  }
  if (options->list) {
    for (const Scenario& s : AllScenarios()) std::cout << s.name << ": " << s.description << '\n';
    return 0;
  }
  Result<std::vector<Target>> targets = OpenTargets(options->configs, options->overrides);
  if (!targets.ok()) {
    std::cerr << "cachet-bench: " << targets.status().ToString() << '\n';
    return targets.status().IsConfigError() || targets.status().IsPluginError() ? kExitUsage
                                                                                : kExitStoreError;
  }
  PrintHeading(*options, *targets);
  const RunPlan plan = PlanFrom(*options);
  bool failed = false;
  for (const Scenario* scenario : options->scenarios) {
    const std::vector<Measurement> results = RunScenario(*scenario, *targets, plan);
    PrintScenarioReport(*scenario, *targets, results, std::cout);
    std::cout.flush();
    failed = failed || AnyFailure(results);
  }
  return failed ? kExitStoreError : 0;
}

}  // namespace
}  // namespace cachet::bench

int main(int argc, char** argv) {
  try {
    return cachet::bench::Main(std::vector<std::string>(argv, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "cachet-bench: internal error: " << e.what() << '\n';
    return 3;
  }
}
