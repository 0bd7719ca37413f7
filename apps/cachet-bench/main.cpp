// cachet-bench: the seed benchmark scenarios against one or several configs and
// the peer libraries, printed as cmpthese-style tables (or json/csv), optionally
// drawn as an SVG chart. Exit status: 0 when every column ran every scenario it
// offers with the expected outcomes (a scenario a store lacks is a skipped cell,
// not a failure), 2 for a bad command line or config, 3 when a column failed (its
// store could not be reached, or operations failed), 130 when interrupted.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "baseline.h"
#include "bench_options.h"
#include "cachet/version.h"
#include "formatters.h"
#include "hit_ratio.h"
#include "memory_churn.h"
#include "near_study.h"
#include "interrupt.h"
#include "line_round_trip.h"
#include "peers.h"
#include "progress.h"
#include "runner.h"
#include "servers.h"
#include "scaling_study.h"
#include "stampede.h"
#include "svg_chart.h"
#include "target.h"

namespace cachet::bench {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitStoreError = 3;
constexpr int kExitInterrupted = 130;
constexpr double kProgressAfterSeconds = 3;
// A cache line's round trip, measured before a threaded run: about 10 ms here.
constexpr int kLineRoundTrips = 20000;
constexpr std::chrono::milliseconds kLineRoundTripLimit{500};

RunPlan PlanFrom(const BenchOptions& options, const Payloads& payloads,
                 const std::atomic<bool>& stop) {
  RunPlan plan;
  plan.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options.duration_seconds));
  plan.ops = options.ops;
  plan.slice = std::chrono::milliseconds(options.slice_ms);
  plan.repeat = options.repeat;
  plan.keys = options.keys;
  plan.split_keys = options.split_keys;
  plan.payloads = &payloads;
  plan.stop = &stop;
  return plan;
}

void PrintHeading(const BenchOptions& options, const RunInfo& info,
                  const std::vector<Column>& columns) {
  std::cout << "cachet-bench: " << columns.size() << " column(s):";
  for (const Column& c : columns) {
    std::cout << ' ' << c.target->label << " (" << c.target->source << ')';
  }
  std::cout << "\nvalue " << options.value_size << " bytes, " << options.keys << " keys"
            << (options.split_keys ? " split between each column's threads, " : " per thread, ");
  if (options.cache_per_thread) std::cout << "a Cache per thread, ";
  for (std::size_t i = 0; i < options.thread_counts.size(); ++i) {
    std::cout << (i > 0 ? "," : "") << options.thread_counts[i];
  }
  std::cout << " thread(s), median of " << options.repeat << " x ";
  if (options.ops > 0) {
    std::cout << options.ops << " iterations";
  } else {
    std::cout << options.duration_seconds << " s";
  }
  std::cout << " per scenario and column, in " << options.slice_ms << " ms slices\n";
  if (info.line_round_trip_ns > 0) {
    std::cout << "a cache line between two threads: " << info.line_round_trip_ns
              << " ns there and back (what the thread rows pay for each line they share)\n";
  }
}

RunInfo DescribeRun(const BenchOptions& options) {
  RunInfo info;
  info.configs = options.configs;
  info.overrides = options.overrides;
  for (const Scenario* s : options.scenarios) info.scenarios.emplace_back(s->name);
  info.duration_seconds = options.duration_seconds;
  info.ops = options.ops;
  info.value_size = options.value_size;
  info.slice_ms = options.slice_ms;
  info.keys = options.keys;
  info.split_keys = options.split_keys;
  info.cache_per_thread = options.cache_per_thread;
  info.threads = options.threads();
  info.repeat = options.repeat;
  info.cachet_version = CACHET_VERSION_STRING;
  info.compiler = __VERSION__;
  if (options.peers) info.peers = PeerVersions();
  info.cores = std::thread::hardware_concurrency();
  double load[3];
  if (getloadavg(load, 3) == 3) info.load_average.assign(load, load + 3);
  const bool threaded = std::any_of(options.thread_counts.begin(), options.thread_counts.end(),
                                    [](unsigned t) { return t > 1; });
  if (threaded && info.cores > 1) {
    if (auto trip = LineRoundTrip(kLineRoundTrips, kLineRoundTripLimit)) {
      info.line_round_trip_ns = trip->count();
    }
  }
  return info;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

std::vector<ScenarioFigures> RunAll(const BenchOptions& options, std::vector<Column>& columns,
                                    const std::atomic<bool>& stop) {
  const Payloads payloads = MakePayloads(options.value_size);
  const double estimate = options.duration_seconds * options.repeat *
                          static_cast<double>(options.scenarios.size() * columns.size());
  ProgressLine progress(isatty(STDERR_FILENO) == 1 &&
                        (options.ops > 0 || estimate > kProgressAfterSeconds));
  RunPlan plan = PlanFrom(options, payloads, stop);
  std::vector<ScenarioFigures> results;
  for (std::size_t i = 0; i < options.scenarios.size() && !stop; ++i) {
    plan.progress = [&, i](const std::string& text) {
      progress.Show("[" + std::to_string(i + 1) + "/" + std::to_string(options.scenarios.size()) +
                    "] " + text);
    };
    results.push_back(RunScenario(*options.scenarios[i], columns, plan));
    progress.Clear();
    if (options.format == "table") std::cout << FormatScenarioTable(results.back()) << std::flush;
  }
  return results;
}

int Report(const BenchOptions& options, const RunInfo& info,
           const std::vector<ScenarioFigures>& results) {
  if (options.format == "json") std::cout << FormatJson(info, results);
  if (options.format == "csv") std::cout << FormatCsv(results);
  if (!options.svg_path.empty() &&
      !WriteFile(options.svg_path, RenderSvgChart(results, "cachet-bench"))) {
    std::cerr << "cachet-bench: cannot write " << options.svg_path << '\n';
    return kExitStoreError;
  }
  return AnyColumnFailed(results) ? kExitStoreError : 0;
}

// The hit_ratio scenario, which measures eviction rather than a rate.
int RunHitRatioScenario(const BenchOptions& options) {
  HitRatioPlan plan;
  plan.configs = options.configs;
  plan.overrides = options.overrides;
  plan.value_size = options.value_size;
  if (Status s = RunHitRatio(plan); !s.ok()) {
    std::cerr << "cachet-bench: hit_ratio: " << s.ToString() << '\n';
    return s.IsConfigError() || s.IsPluginError() ? kExitUsage : kExitStoreError;
  }
  return 0;
}

int Run(const BenchOptions& options) {
  if (options.hit_ratio) {
    if (const int status = RunHitRatioScenario(options); status != 0) return status;
  }
  if (options.memory_churn) {
    MemoryChurnPlan plan;
    plan.configs = options.configs;
    plan.overrides = options.overrides;
    if (Status s = RunMemoryChurn(plan); !s.ok()) {
      std::cerr << "cachet-bench: memory_churn: " << s.ToString() << '\n';
      return kExitStoreError;
    }
  }
  if ((options.hit_ratio || options.memory_churn) && options.scenarios.empty()) return 0;
  const std::atomic<bool>& stop = InstallInterruptFlag();
  StartedServers servers;
  if (options.start_servers) {
    servers = StartServers();
    for (const std::string& note : servers.notes) std::cerr << "cachet-bench: " << note << '\n';
  }
  // Each thread count opens the configs anew: its columns have Caches of their own.
  std::vector<OpenedTargets> opened_sets;
  for (const unsigned threads : options.thread_counts) {
    Result<OpenedTargets> opened =
        OpenTargets(options.configs, options.overrides, servers.servers, options.cache_per_thread);
    if (!opened.ok()) {
      std::cerr << "cachet-bench: " << opened.status().ToString() << '\n';
      const Status& s = opened.status();
      return s.IsConfigError() || s.IsPluginError() ? kExitUsage : kExitStoreError;
    }
    if (options.peers) AddPeerTargets(opened->first_server, &opened->targets);
    if (options.baseline) opened->targets.push_back(BaselineTarget());
    if (threads != options.thread_counts.front()) {
      for (Target& target : opened->targets) target.label += " x" + std::to_string(threads);
    }
    opened_sets.push_back(std::move(opened).value());
  }
  const RunInfo info = DescribeRun(options);  // the machine's load before the run adds to it
  std::vector<Column> columns;
  for (std::size_t i = 0; i < opened_sets.size(); ++i) {
    for (Column& column : ConnectColumns(opened_sets[i].targets, options.thread_counts[i])) {
      columns.push_back(std::move(column));
    }
  }
  if (options.format == "table") PrintHeading(options, info, columns);
  const std::vector<ScenarioFigures> results = RunAll(options, columns, stop);
  const int status = Report(options, info, results);
  if (stop) {
    std::cerr << "cachet-bench: interrupted; stopping\n";
    return kExitInterrupted;
  }
  return status;
}

int Main(const std::vector<std::string>& args) {
  Result<BenchOptions> options = ParseBenchOptions(args);
  if (!options.ok()) {
    std::cerr << "cachet-bench: " << options.status().message() << "\n(see --help)\n";
    return kExitUsage;
  }
  if (options->help) {
    PrintBenchHelp(std::cout);
    std::cout << "\nPeers built in: " << PeersBuiltIn() << '\n';
    return 0;
  }
  if (options->list) {
    for (const Scenario& s : AllScenarios()) std::cout << s.name << ": " << s.description << '\n';
    std::cout << kHitRatioScenario
              << ": hit ratio of the memory store's policies on Zipf streams beside an exact "
                 "LRU (run only when named)\n"
              << kMemoryChurnScenario
              << ": resident memory under a churn of mixed sizes beside max_bytes + limbo "
                 "(run only when named)\n";
    return 0;
  }
  if (options->stampede) return RunStampede(*options);
  if (options->near) return RunNearStudy(*options);
  if (options->scaling) return RunScalingStudy(*options);
  return Run(*options);
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
