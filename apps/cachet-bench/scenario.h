// The benchmark scenarios: what one iteration does, and what it needs set up.
//
// They follow the Perl and Python benchmarks that started cachet: get, set, incr, decr,
// set_delete, get_multi (100 keys), get/set_serialized, get/set_compressed, sizes,
// pipeline and noreply. A scenario runs on a Client, so cachet and the peers run
// the same code. Each (target, thread) has its own ScenarioState whose keys carry
// their own prefix, so columns and threads never disturb each other.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/status.h"
#include "client.h"
#include "payloads.h"

namespace cachet::bench {

// Aligned to a cache line for the same reason as Tally: each thread has its own.
struct alignas(64) ScenarioState {
  std::string key_prefix;  // "cb<target>.<thread>:"
  const Payloads* payloads = nullptr;
  std::size_t key_count = 100;    // --keys: keys that get/set-like scenarios rotate through
  std::vector<std::string> keys;  // prepared in setup
  std::size_t next_key = 0;       // rotates through `keys`
  std::string read_buffer;        // reused by reads
  Json read_document;
};

struct Scenario {
  const char* name;
  const char* description;
  // Prepares `state` (keys, stored values). An error stops this target; an
  // unsupported status skips it with a note.
  Status (*setup)(Client& client, ScenarioState& state);
  // One iteration. ok, or the unexpected outcome (a miss where a hit was due).
  Status (*run_once)(Client& client, ScenarioState& state);
  // Removes what the scenario stored; failures are ignored.
  void (*cleanup)(Client& client, ScenarioState& state);
};

std::span<const Scenario> AllScenarios() noexcept;

// nullptr for an unknown name.
const Scenario* FindScenario(std::string_view name) noexcept;

// Helpers shared by the scenario files.
namespace scenario_detail {
// Keys "<prefix><stem><number>", zero-padded to 16 bytes when they fit.
void MakeKeys(ScenarioState& state, std::string_view stem, std::size_t count);
const std::string& NextKey(ScenarioState& state);
Status AsHit(const Status& status, const std::string& key);
void RemoveKeys(Client& client, ScenarioState& state);
Status StoreAll(Client& client, ScenarioState& state, std::string_view value);
}  // namespace scenario_detail

// The tables of each scenario file, joined by AllScenarios().
std::span<const Scenario> BasicScenarios() noexcept;
std::span<const Scenario> ValueScenarios() noexcept;
std::span<const Scenario> BatchScenarios() noexcept;

}  // namespace cachet::bench
