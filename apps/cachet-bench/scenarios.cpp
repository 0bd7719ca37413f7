// The scenario table. Each scenario is three small functions: setup, one
// iteration, cleanup. Keys are built in setup so iterations time the cache, not
// string formatting.
#include <array>
#include <cstdint>
#include <string>

#include "scenario.h"

namespace cachet::bench {
namespace {

// set and set_delete rotate through this many keys, so a long run overwrites
// keys instead of filling the store (the Perl seeds used time-stamped keys).
constexpr std::size_t kRotatingKeys = 10000;
constexpr std::size_t kMultiKeys = 100;  // get_multi, as the Tokyo Tyrant seed
// decr starts high enough never to reach 0 within a run.
constexpr std::uint64_t kDecrStart = std::uint64_t{1} << 62;

void MakeKeys(ScenarioState& state, std::string_view stem, std::size_t count) {
  state.keys.clear();
  state.keys.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    state.keys.push_back(state.key_prefix + std::string(stem) + std::to_string(i));
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

void RemoveKeys(Cache& cache, ScenarioState& state) { (void)cache.RemoveMulti(state.keys); }

// ---- get: one stored key, read again and again.
Status SetupGet(Cache& cache, ScenarioState& state) {
  MakeKeys(state, "get", 1);
  return cache.Set(state.keys[0], state.value);
}
Status RunGet(Cache& cache, ScenarioState& state) {
  return AsHit(cache.Get<std::string>(state.keys[0]).status(), state.keys[0]);
}

// ---- set: write rotating keys.
Status SetupRotating(Cache&, ScenarioState& state) {
  MakeKeys(state, "set", kRotatingKeys);
  return Status::OK();
}
Status RunSet(Cache& cache, ScenarioState& state) { return cache.Set(NextKey(state), state.value); }

// ---- incr / decr: one counter.
Status SetupIncr(Cache& cache, ScenarioState& state) {
  MakeKeys(state, "incr", 1);
  return cache.Set(state.keys[0], std::uint64_t{1});
}
Status RunIncr(Cache& cache, ScenarioState& state) {
  return AsHit(cache.Incr(state.keys[0]).status(), state.keys[0]);
}
Status SetupDecr(Cache& cache, ScenarioState& state) {
  MakeKeys(state, "decr", 1);
  return cache.Set(state.keys[0], kDecrStart);
}
Status RunDecr(Cache& cache, ScenarioState& state) {
  return AsHit(cache.Decr(state.keys[0]).status(), state.keys[0]);
}

// ---- set_delete: write a key, then remove it.
Status RunSetDelete(Cache& cache, ScenarioState& state) {
  const std::string& key = NextKey(state);
  Status status = cache.Set(key, state.value);
  if (!status.ok()) return status;
  return AsHit(cache.Remove(key), key);
}

// ---- get_multi: 100 stored keys in one call.
Status SetupGetMulti(Cache& cache, ScenarioState& state) {
  MakeKeys(state, "multi", kMultiKeys);
  for (const std::string& key : state.keys) {
    Status status = cache.Set(key, state.value);
    if (!status.ok()) return status;
  }
  return Status::OK();
}
Status RunGetMulti(Cache& cache, ScenarioState& state) {
  const std::vector<Lookup<std::string>> found = cache.GetMulti<std::string>(state.keys);
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (!found[i].hit()) return AsHit(found[i].status(), state.keys[i]);
  }
  return Status::OK();
}

constexpr std::array kScenarios = {
    Scenario{"get", "get one stored key", SetupGet, RunGet, RemoveKeys},
    Scenario{"set", "set rotating keys", SetupRotating, RunSet, RemoveKeys},
    Scenario{"incr", "increment one counter", SetupIncr, RunIncr, RemoveKeys},
    Scenario{"decr", "decrement one counter", SetupDecr, RunDecr, RemoveKeys},
    Scenario{"set_delete", "set a key, then delete it", SetupRotating, RunSetDelete, RemoveKeys},
    Scenario{"get_multi", "get 100 stored keys in one call", SetupGetMulti, RunGetMulti,
             RemoveKeys},
};

}  // namespace

std::span<const Scenario> AllScenarios() noexcept { return kScenarios; }

const Scenario* FindScenario(std::string_view name) noexcept {
  for (const Scenario& scenario : kScenarios) {
    if (name == scenario.name) return &scenario;
  }
  return nullptr;
}

}  // namespace cachet::bench
