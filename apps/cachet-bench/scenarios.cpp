// The scenario table (the three scenario files joined, in seed order) and the
// helpers the scenario files share.
#include <algorithm>
#include <vector>

#include "scenario.h"

namespace cachet::bench {
namespace scenario_detail {

constexpr std::size_t kKeyLength = 16;  // the key length of the seeds' figures

void MakeKeys(ScenarioState& state, std::string_view stem, std::size_t count) {
  state.keys.clear();
  state.keys.reserve(count);
  state.next_key = 0;
  const std::size_t head = state.key_prefix.size() + stem.size();
  for (std::size_t i = 0; i < count; ++i) {
    std::string number = std::to_string(i);
    if (head + number.size() < kKeyLength) {
      number.insert(0, kKeyLength - head - number.size(), '0');
    }
    state.keys.push_back(state.key_prefix + std::string(stem) + number);
  }
}

const std::string& NextKey(ScenarioState& state) {
  const std::string& key = state.keys[state.next_key];
  if (++state.next_key == state.keys.size()) state.next_key = 0;
  return key;
}

Status AsHit(const Status& status, const std::string& key) {
  if (status.IsNotFound()) return Status::NotFound("unexpected miss on " + key);
  return status;
}

void RemoveKeys(Client& client, ScenarioState& state) {
  for (const std::string& key : state.keys) (void)client.Remove(key);
}

Status StoreAll(Client& client, ScenarioState& state, std::string_view value) {
  for (const std::string& key : state.keys) {
    Status status = client.Set(key, value);
    if (!status.ok()) return status;
  }
  return Status::OK();
}

}  // namespace scenario_detail

std::span<const Scenario> AllScenarios() noexcept {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> joined;
    for (auto part : {BasicScenarios(), ValueScenarios(), BatchScenarios()}) {
      joined.insert(joined.end(), part.begin(), part.end());
    }
    return joined;
  }();
  return all;
}

const Scenario* FindScenario(std::string_view name) noexcept {
  for (const Scenario& scenario : AllScenarios()) {
    if (name == scenario.name) return &scenario;
  }
  return nullptr;
}

}  // namespace cachet::bench
