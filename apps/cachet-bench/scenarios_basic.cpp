// The Perl seeds' scenarios: get, set, incr, decr, set_delete, get_multi.
#include <array>
#include <cstdint>

#include "scenario.h"

namespace cachet::bench {
namespace {

using namespace scenario_detail;

constexpr std::size_t kMultiKeys = 100;  // get_multi, as the seeds
// decr starts high enough never to reach 0 within a run.
constexpr std::uint64_t kDecrStart = std::uint64_t{1} << 62;

// ---- get: stored keys, read again and again.
Status SetupGet(Client& client, ScenarioState& state) {
  MakeKeys(state, "g", state.key_count);
  return StoreAll(client, state, state.payloads->value);
}
Status RunGet(Client& client, ScenarioState& state) {
  const std::string& key = NextKey(state);
  return AsHit(client.Get(key, &state.read_buffer), key);
}

// ---- set: write rotating keys.
Status SetupRotating(Client&, ScenarioState& state) {
  MakeKeys(state, "s", state.key_count);
  return Status::OK();
}
Status RunSet(Client& client, ScenarioState& state) {
  return client.Set(NextKey(state), state.payloads->value);
}

// ---- incr / decr: one counter.
Status SetupCounter(Client& client, ScenarioState& state, std::uint64_t start) {
  MakeKeys(state, "n", 1);
  return client.Set(state.keys[0], std::to_string(start));
}
Status SetupIncr(Client& client, ScenarioState& state) { return SetupCounter(client, state, 1); }
Status SetupDecr(Client& client, ScenarioState& state) {
  return SetupCounter(client, state, kDecrStart);
}
Status RunIncr(Client& client, ScenarioState& state) {
  std::uint64_t value = 0;
  return AsHit(client.Incr(state.keys[0], &value), state.keys[0]);
}
Status RunDecr(Client& client, ScenarioState& state) {
  std::uint64_t value = 0;
  return AsHit(client.Decr(state.keys[0], &value), state.keys[0]);
}

// ---- set_delete: write a key, then remove it.
Status RunSetDelete(Client& client, ScenarioState& state) {
  const std::string& key = NextKey(state);
  Status status = client.Set(key, state.payloads->value);
  if (!status.ok()) return status;
  return AsHit(client.Remove(key), key);
}

// ---- get_multi: 100 stored keys in one call.
Status SetupGetMulti(Client& client, ScenarioState& state) {
  MakeKeys(state, "m", kMultiKeys);
  return StoreAll(client, state, state.payloads->value);
}
Status RunGetMulti(Client& client, ScenarioState& state) {
  std::size_t hits = 0;
  Status status = client.GetMulti(state.keys, &hits);
  if (!status.ok()) return status;
  if (hits != state.keys.size()) {
    return Status::NotFound(std::to_string(state.keys.size() - hits) + " of " +
                            std::to_string(state.keys.size()) + " keys missed");
  }
  return Status::OK();
}

constexpr std::array kScenarios = {
    Scenario{"get", "get stored keys in turn", SetupGet, RunGet, RemoveKeys},
    Scenario{"set", "set rotating keys", SetupRotating, RunSet, RemoveKeys},
    Scenario{"incr", "increment one counter", SetupIncr, RunIncr, RemoveKeys},
    Scenario{"decr", "decrement one counter", SetupDecr, RunDecr, RemoveKeys},
    Scenario{"set_delete", "set a key, then delete it", SetupRotating, RunSetDelete, RemoveKeys},
    Scenario{"get_multi", "get 100 stored keys in one call", SetupGetMulti, RunGetMulti,
             RemoveKeys},
};

}  // namespace

std::span<const Scenario> BasicScenarios() noexcept { return kScenarios; }

}  // namespace cachet::bench
