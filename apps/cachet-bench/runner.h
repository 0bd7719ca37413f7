// Runs one scenario against every target, interleaving the targets in short
// slices so a slow drift of the machine (frequency, other load) affects them all
// alike. Rates are iterations per wall-clock second.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cachet/status.h"
#include "scenario.h"
#include "target.h"

namespace cachet::bench {

struct RunPlan {
  std::chrono::nanoseconds duration{std::chrono::seconds(1)};  // per target, if ops == 0
  std::uint64_t ops = 0;                                       // iterations per target; 0: by time
  std::chrono::nanoseconds slice{std::chrono::milliseconds(100)};
  std::string value;  // what set-like scenarios write
};

struct Measurement {
  std::uint64_t iterations = 0;
  std::chrono::nanoseconds elapsed{0};
  std::uint64_t failures = 0;  // iterations whose outcome was not the expected one
  Status first_failure;
  bool stopped = false;  // setup failed, or too many failures: no rate

  double Rate() const;  // iterations per second; 0 when nothing ran
};

// One Measurement per target, in order.
std::vector<Measurement> RunScenario(const Scenario& scenario, std::span<Target> targets,
                                     const RunPlan& plan);

}  // namespace cachet::bench
