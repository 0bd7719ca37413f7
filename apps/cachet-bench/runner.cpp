// The interleaving runner: rounds of slices, each slice a bounded run of
// iterations on one target.
#include "runner.h"

#include <algorithm>

namespace cachet::bench {
namespace {

using Clock = std::chrono::steady_clock;

// A target that keeps failing (a server down) is stopped rather than timed.
constexpr std::uint64_t kMaxFailures = 100;
// The clock is read once per this many iterations, to keep it off the profile.
constexpr std::uint64_t kClockEvery = 8;
// In --ops mode each target's count is split into this many slices.
constexpr std::uint64_t kSlicesPerOpsRun = 10;
// A safety cap on the iterations of one timed slice.
constexpr std::uint64_t kMaxSliceIterations = std::uint64_t{1} << 40;

struct Slice {
  std::uint64_t max_iterations;
  std::chrono::nanoseconds max_time;
};

void RecordFailure(Measurement& m, Status status) {
  if (m.failures++ == 0) m.first_failure = std::move(status);
  if (m.failures >= kMaxFailures) m.stopped = true;
}

void RunSlice(const Scenario& scenario, Cache& cache, ScenarioState& state, Measurement& m,
              const Slice& slice) {
  const Clock::time_point start = Clock::now();
  for (std::uint64_t i = 0; i < slice.max_iterations && !m.stopped; ++i) {
    Status status = scenario.run_once(cache, state);
    ++m.iterations;
    if (!status.ok()) RecordFailure(m, std::move(status));
    if (i % kClockEvery == kClockEvery - 1 && Clock::now() - start >= slice.max_time) break;
  }
  m.elapsed += Clock::now() - start;
}

bool Done(const Measurement& m, const RunPlan& plan) {
  if (m.stopped) return true;
  return plan.ops > 0 ? m.iterations >= plan.ops : m.elapsed >= plan.duration;
}

Slice NextSlice(const Measurement& m, const RunPlan& plan) {
  if (plan.ops > 0) {
    const std::uint64_t chunk = std::max<std::uint64_t>(1, plan.ops / kSlicesPerOpsRun);
    return {std::min(chunk, plan.ops - m.iterations), std::chrono::nanoseconds::max()};
  }
  return {kMaxSliceIterations, std::min(plan.slice, plan.duration - m.elapsed)};
}

std::uint64_t MaxRounds(const RunPlan& plan) {
  if (plan.ops > 0) return kSlicesPerOpsRun + 2;
  const auto slice = std::max(plan.slice, std::chrono::nanoseconds(1));
  return static_cast<std::uint64_t>(plan.duration / slice) + 2;
}

std::vector<ScenarioState> SetUp(const Scenario& scenario, std::span<Target> targets,
                                 const RunPlan& plan, std::vector<Measurement>& results) {
  std::vector<ScenarioState> states(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    states[t].key_prefix = "bench:" + std::to_string(t) + ":";
    states[t].value = plan.value;
    Status status = scenario.setup(*targets[t].cache, states[t]);
    if (!status.ok()) {
      results[t].first_failure = std::move(status);
      results[t].stopped = true;
    }
  }
  return states;
}

}  // namespace

double Measurement::Rate() const {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  return iterations == 0 || seconds <= 0 ? 0 : static_cast<double>(iterations) / seconds;
}

std::vector<Measurement> RunScenario(const Scenario& scenario, std::span<Target> targets,
                                     const RunPlan& plan) {
  std::vector<Measurement> results(targets.size());
  std::vector<ScenarioState> states = SetUp(scenario, targets, plan, results);
  const std::uint64_t max_rounds = MaxRounds(plan);
  for (std::uint64_t round = 0; round < max_rounds; ++round) {
    bool all_done = true;
    for (std::size_t t = 0; t < targets.size(); ++t) {
      if (Done(results[t], plan)) continue;
      all_done = false;
      RunSlice(scenario, *targets[t].cache, states[t], results[t], NextSlice(results[t], plan));
    }
    if (all_done) break;
  }
  for (std::size_t t = 0; t < targets.size(); ++t) scenario.cleanup(*targets[t].cache, states[t]);
  return results;
}

}  // namespace cachet::bench
