// Scenarios about round trips: pipeline (100 incr in one batch) and noreply (incr
// without waiting for the reply).
#include <array>

#include "scenario.h"

namespace cachet::bench {
namespace {

using namespace scenario_detail;

constexpr std::size_t kPipelineDepth = 100;

Status SetupCounter(Client& client, ScenarioState& state) {
  MakeKeys(state, "p", 1);
  return client.Set(state.keys[0], "1");
}

Status RunPipeline(Client& client, ScenarioState& state) {
  return AsHit(client.IncrPipelined(state.keys[0], kPipelineDepth), state.keys[0]);
}

// Probes noreply once, so a store without it is skipped with a note instead of
// being counted as failing.
Status SetupNoreply(Client& client, ScenarioState& state) {
  Status status = SetupCounter(client, state);
  if (!status.ok()) return status;
  return client.IncrNoreply(state.keys[0]);
}

Status RunNoreply(Client& client, ScenarioState& state) {
  return client.IncrNoreply(state.keys[0]);
}

// A read after the unacknowledged writes waits until the server has done them,
// so the next scenario does not time the backlog.
void CleanupNoreply(Client& client, ScenarioState& state) {
  (void)client.Get(state.keys[0], &state.read_buffer);
  RemoveKeys(client, state);
}

constexpr std::array kScenarios = {
    Scenario{"pipeline", "100 incr in one batch", SetupCounter, RunPipeline, RemoveKeys},
    Scenario{"noreply", "incr without waiting for the reply", SetupNoreply, RunNoreply,
             CleanupNoreply},
};

}  // namespace

std::span<const Scenario> BatchScenarios() noexcept { return kScenarios; }

}  // namespace cachet::bench
