// Scenarios about the value itself: serialized (a Json map of 20 fields),
// compressed (100 KB of compressible text) and sizes (0 to 512 KB).
#include <algorithm>
#include <array>

#include "scenario.h"

namespace cachet::bench {
namespace {

using namespace scenario_detail;

// 100 KB values: a few keys are enough, and keep the servers' memory small.
constexpr std::size_t kMaxCompressedKeys = 10;

// ---- get_serialized / set_serialized
Status SetupGetSerialized(Client& client, ScenarioState& state) {
  MakeKeys(state, "j", state.key_count);
  for (const std::string& key : state.keys) {
    Status status = client.SetJson(key, state.payloads->document);
    if (!status.ok()) return status;
  }
  return Status::OK();
}
Status RunGetSerialized(Client& client, ScenarioState& state) {
  const std::string& key = NextKey(state);
  Status status = client.GetJson(key, &state.read_document);
  if (!status.ok()) return AsHit(status, key);
  if (state.read_document.size() != state.payloads->document.size()) {
    return Status::Corruption("document of " + key + " came back with other fields");
  }
  return Status::OK();
}
Status SetupSetSerialized(Client&, ScenarioState& state) {
  MakeKeys(state, "k", state.key_count);
  return Status::OK();
}
Status RunSetSerialized(Client& client, ScenarioState& state) {
  return client.SetJson(NextKey(state), state.payloads->document);
}

// ---- get_compressed / set_compressed
Status SetupGetCompressed(Client& client, ScenarioState& state) {
  MakeKeys(state, "z", std::min(state.key_count, kMaxCompressedKeys));
  for (const std::string& key : state.keys) {
    Status status = client.SetCompressed(key, state.payloads->compressible);
    if (!status.ok()) return status;
  }
  return Status::OK();
}
Status RunGetCompressed(Client& client, ScenarioState& state) {
  const std::string& key = NextKey(state);
  Status status = client.GetCompressed(key, &state.read_buffer);
  if (!status.ok()) return AsHit(status, key);
  if (state.read_buffer.size() != state.payloads->compressible.size()) {
    return Status::Corruption("value of " + key + " came back with another size");
  }
  return Status::OK();
}
Status SetupSetCompressed(Client&, ScenarioState& state) {
  MakeKeys(state, "y", std::min(state.key_count, kMaxCompressedKeys));
  return Status::OK();
}
Status RunSetCompressed(Client& client, ScenarioState& state) {
  return client.SetCompressed(NextKey(state), state.payloads->compressible);
}

// ---- sizes: one iteration sets and gets each size once.
Status SetupSizes(Client&, ScenarioState& state) {
  MakeKeys(state, "x", state.payloads->sized.size());
  return Status::OK();
}
Status RunSizes(Client& client, ScenarioState& state) {
  for (std::size_t i = 0; i < state.keys.size(); ++i) {
    const std::string& value = state.payloads->sized[i];
    Status status = client.Set(state.keys[i], value);
    if (!status.ok()) return status;
    status = client.Get(state.keys[i], &state.read_buffer);
    if (!status.ok()) return AsHit(status, state.keys[i]);
    if (state.read_buffer.size() != value.size()) {
      return Status::Corruption("value of " + state.keys[i] + " came back with another size");
    }
  }
  return Status::OK();
}

constexpr std::array kScenarios = {
    Scenario{"get_serialized", "get a Json map of 20 fields", SetupGetSerialized, RunGetSerialized,
             RemoveKeys},
    Scenario{"set_serialized", "set a Json map of 20 fields", SetupSetSerialized, RunSetSerialized,
             RemoveKeys},
    Scenario{"get_compressed", "get a compressed 100 KB value", SetupGetCompressed,
             RunGetCompressed, RemoveKeys},
    Scenario{"set_compressed", "compress and set a 100 KB value", SetupSetCompressed,
             RunSetCompressed, RemoveKeys},
    Scenario{"sizes", "set and get 0, 128K, 256K, 384K, 512K values", SetupSizes, RunSizes,
             RemoveKeys},
};

}  // namespace

std::span<const Scenario> ValueScenarios() noexcept { return kScenarios; }

}  // namespace cachet::bench
