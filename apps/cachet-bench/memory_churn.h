// The memory_churn scenario: whether a memory store holds to its budget. It
// writes values of mixed sizes (32 bytes to 16 KiB) under random keys until the
// budget has been turned over several times, then compares the process's
// resident memory with what the store says it holds: max_bytes, plus what waits
// in the limbos (reclaiming_bytes), plus the admission sketch. Like hit_ratio it
// is not a rate and runs apart from the interleaving runner.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cachet/status.h"

namespace cachet::bench {

inline constexpr const char* kMemoryChurnScenario = "memory_churn";

struct MemoryChurnPlan {
  std::vector<std::string> configs;
  std::vector<std::string> overrides;
  std::size_t max_bytes = std::size_t{1} << 30;  // the budget under test: 1 GiB
  unsigned turnovers = 3;                         // the budget's worth written this many times
};

// Runs the churn for every memory config and prints one line each.
Status RunMemoryChurn(const MemoryChurnPlan& plan);

}  // namespace cachet::bench
