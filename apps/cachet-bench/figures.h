// The results of a run, as the formatters see them: per scenario, one figure per
// target. Plain data, independent of how it was measured, so the formatters can
// be tested on their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cachet::bench {

struct Figure {
  std::string target;
  bool ran = false;  // false: skipped or stopped; `note` says why
  double rate = 0;   // median iterations per second over the repetitions
  double rate_min = 0;
  double rate_max = 0;
  double cpu_ns_per_op = 0;      // median client CPU time per iteration
  std::uint64_t iterations = 0;  // summed over the repetitions
  std::uint64_t failures = 0;
  std::string note;  // the first failure, or why it did not run
};

struct ScenarioFigures {
  std::string scenario;
  std::string description;
  std::vector<Figure> figures;  // in target order
};

// The spread of a figure, in percent of its median: half the range.
double SpreadPercent(const Figure& figure);

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double Median(std::vector<double> values);

}  // namespace cachet::bench
