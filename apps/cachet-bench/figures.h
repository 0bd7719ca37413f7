// The results of a run, as the formatters see them: per scenario, one figure per
// target. Plain data, independent of how it was measured, so the formatters can
// be tested on their own.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cachet::bench {

struct Figure {
  std::string target;
  bool ran = false;      // false: skipped, failed or stopped; `note` says why
  bool skipped = false;  // the store or library does not offer the scenario: not a failure
  double rate = 0;       // median iterations per second over the repetitions
  double rate_min = 0;
  double rate_max = 0;
  double cpu_ns_per_op = 0;      // median client CPU time per iteration
  std::uint64_t iterations = 0;  // summed over the repetitions
  std::uint64_t failures = 0;
  // Iteration latency over every repetition (slice.cpp says which are timed); 0 if none.
  double p50_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
  double p999_ns = 0;
  double max_ns = 0;
  std::string note;  // the first failure, or why it did not run
};

struct ScenarioFigures {
  std::string scenario;
  std::string description;
  std::vector<Figure> figures;  // in target order
};

// What a run was, for the json output beside its rows.
struct RunInfo {
  // Settings.
  std::vector<std::string> configs;
  std::vector<std::string> overrides;
  std::vector<std::string> scenarios;
  double duration_seconds = 0;
  std::uint64_t ops = 0;
  std::size_t value_size = 0;
  std::uint64_t slice_ms = 0;
  std::size_t keys = 0;
  bool split_keys = false;        // keys are each column's, not each thread's
  bool cache_per_thread = false;  // each thread of a config's column had a Cache of its own
  unsigned threads = 0;
  unsigned repeat = 0;
  // Versions: cachet's, the compiler's, and the peer libraries built in.
  std::string cachet_version;
  std::string compiler;
  std::vector<std::pair<std::string, std::string>> peers;  // name, version
  // Machine, when the run started.
  unsigned cores = 0;
  std::vector<double> load_average;  // 1, 5 and 15 minutes; empty when unknown
  // A cache line's round trip between two threads (line_round_trip.h); 0 when
  // not measured (one thread per column, or one core) or the partner lagged.
  std::int64_t line_round_trip_ns = 0;
};

// True when a column failed somewhere: operations that failed, or a column that
// did not run for another reason than being skipped.
bool AnyColumnFailed(const std::vector<ScenarioFigures>& results);

// The spread of a figure, in percent of its median: half the range.
double SpreadPercent(const Figure& figure);

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double Median(std::vector<double> values);

}  // namespace cachet::bench
