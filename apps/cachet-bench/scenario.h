// The benchmark scenarios: what one iteration does, and what it needs set up.
//
// The first six follow the Perl seed benchmarks (../shared/seeds/): get, set,
// incr, decr, set_delete and get_multi (100 keys). A scenario works on its own
// ScenarioState per target, whose keys carry a per-target prefix, so two configs
// pointing at the same server do not disturb each other.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/cache.h"
#include "cachet/status.h"

namespace cachet::bench {

struct ScenarioState {
  std::string key_prefix;         // "bench:<target>:"
  std::string value;              // the value written by set-like scenarios
  std::vector<std::string> keys;  // the keys this scenario uses, prepared in Setup
  std::size_t next_key = 0;       // rotates through `keys`
};

struct Scenario {
  const char* name;
  const char* description;
  // Prepares `state` (keys, stored values). An error aborts this target.
  Status (*setup)(Cache& cache, ScenarioState& state);
  // One iteration. ok, or the unexpected outcome (a miss where a hit was due).
  Status (*run_once)(Cache& cache, ScenarioState& state);
  // Removes what the scenario stored; failures are ignored.
  void (*cleanup)(Cache& cache, ScenarioState& state);
};

std::span<const Scenario> AllScenarios() noexcept;

// nullptr for an unknown name.
const Scenario* FindScenario(std::string_view name) noexcept;

}  // namespace cachet::bench
