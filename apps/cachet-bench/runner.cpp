// The interleaving runner: set up every column, then repetitions of rounds of
// slices, then the medians.
#include "runner.h"

#include <algorithm>
#include <exception>
#include <string>

#include "cachet/thread_number.h"
#include "slice.h"

namespace cachet::bench {
namespace {

// A column that keeps failing (a server down) is stopped rather than timed.
constexpr std::uint64_t kMaxFailures = 100;
// In --ops mode each repetition's count is split into this many slices.
constexpr std::uint64_t kSlicesPerOpsRun = 10;
// A safety cap on the iterations of one timed slice.
constexpr std::uint64_t kMaxSliceIterations = std::uint64_t{1} << 40;

struct ColumnRun {
  std::vector<ScenarioState> states;  // one per client
  std::vector<Tally> repetitions;
  bool ran = true;
  bool skipped = false;  // the store or library lacks the scenario's operation
  std::string note;
};

// One client's set-up, then one untimed iteration: a warm-up, and the probe that
// finds an operation the store or library lacks (skipped rather than counted as failing).
// An exception becomes the column's failure.
Status SetUpClient(const Scenario& scenario, Client& client, ScenarioState& state) {
  try {
    Status status = scenario.setup(client, state);
    if (status.ok()) status = scenario.run_once(client, state);
    return status;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("set-up threw: ") + e.what());
  }
}

void SetUp(const Scenario& scenario, std::size_t index, Column& column, const RunPlan& plan,
           ColumnRun* run) {
  if (!column.connect_error.ok()) {
    run->ran = false;
    run->note = "cannot connect: " + column.connect_error.ToString();
    return;
  }
  const std::size_t clients = column.clients.size();
  run->states.resize(clients);
  for (std::size_t t = 0; t < clients; ++t) {
    ScenarioState& state = run->states[t];
    state.key_prefix = "cb" + std::to_string(index) + "." + std::to_string(t) + ":";
    state.payloads = plan.payloads;
    state.key_count = ClientKeys(plan, clients, t);
  }
  // Each client sets up on a thread of its own, as its slices run (RunSlice), so
  // a Cache opens its threads' connections here in a row, as the peers' clients
  // do (memcached gives connections to its workers in turn).
  std::vector<Status> statuses(clients);
  if (clients == 1) {
    statuses[0] = SetUpClient(scenario, *column.clients[0], run->states[0]);
  } else {
    // Live threads hold different thread numbers, so no two clients set up
    // through one pooled connection; client t sets up with the numbers its slices use.
    RunOnNumberedThreads(clients, [&](std::size_t t) {
      statuses[t] = SetUpClient(scenario, *column.clients[t], run->states[t]);
    });
  }
  for (const Status& status : statuses) {
    if (status.ok()) continue;
    run->ran = false;
    run->skipped = status.IsUnsupported();
    run->note = (status.IsUnsupported() ? "skipped: " : "setup failed: ") + status.ToString();
    break;
  }
}

bool Done(const Tally& tally, const ColumnRun& run, const RunPlan& plan) {
  if (!run.ran) return true;
  return plan.ops > 0 ? tally.iterations >= plan.ops : tally.elapsed >= plan.duration;
}

SliceLimits NextSlice(const Tally& tally, const RunPlan& plan) {
  if (plan.ops > 0) {
    const std::uint64_t chunk = std::max<std::uint64_t>(1, plan.ops / kSlicesPerOpsRun);
    return {std::min(chunk, plan.ops - tally.iterations), std::chrono::nanoseconds::max(),
            plan.stop};
  }
  return {kMaxSliceIterations, std::min(plan.slice, plan.duration - tally.elapsed), plan.stop};
}

std::uint64_t MaxRounds(const RunPlan& plan) {
  if (plan.ops > 0) return kSlicesPerOpsRun + 2;
  const auto slice = std::max(plan.slice, std::chrono::nanoseconds(1));
  return static_cast<std::uint64_t>(plan.duration / slice) + 2;
}

bool StopRequested(const RunPlan& plan) {
  return plan.stop != nullptr && plan.stop->load(std::memory_order_relaxed);
}

// One repetition: rounds in which every unfinished column runs one slice.
void RunRepetition(const Scenario& scenario, std::span<Column> columns, const RunPlan& plan,
                   std::vector<ColumnRun>& runs) {
  std::vector<Tally> tallies(columns.size());
  for (std::uint64_t round = 0, rounds = MaxRounds(plan); round < rounds; ++round) {
    bool all_done = true;
    for (std::size_t c = 0; c < columns.size() && !StopRequested(plan); ++c) {
      if (Done(tallies[c], runs[c], plan)) continue;
      all_done = false;
      tallies[c].Add(
          RunSlice(scenario, columns[c].clients, runs[c].states, NextSlice(tallies[c], plan)));
      if (tallies[c].failures >= kMaxFailures) {
        runs[c].ran = false;
        runs[c].note = "stopped after " + std::to_string(tallies[c].failures) +
                       " failures; first: " + tallies[c].first_failure.ToString();
      }
    }
    if (all_done || StopRequested(plan)) break;
  }
  for (std::size_t c = 0; c < columns.size(); ++c) runs[c].repetitions.push_back(tallies[c]);
}

Figure Summarize(const Column& column, const ColumnRun& run) {
  Figure f;
  f.target = column.target->label;
  f.ran = run.ran;
  f.skipped = run.skipped;
  f.note = run.note;
  std::vector<double> rates;
  std::vector<double> cpu;
  LatencyHistogram latency;
  for (const Tally& t : run.repetitions) {
    latency.Merge(t.latency);
    f.iterations += t.iterations;
    f.failures += t.failures;
    if (f.note.empty() && t.failures > 0) f.note = t.first_failure.ToString();
    const double seconds = std::chrono::duration<double>(t.elapsed).count();
    if (t.iterations == 0 || seconds <= 0) continue;
    rates.push_back(static_cast<double>(t.iterations) / seconds);
    cpu.push_back(static_cast<double>(t.cpu.count()) / static_cast<double>(t.iterations));
  }
  if (rates.empty()) {
    if (f.ran) f.note = "no iteration ran";
    f.ran = false;
    return f;
  }
  f.rate = Median(rates);
  f.rate_min = *std::min_element(rates.begin(), rates.end());
  f.rate_max = *std::max_element(rates.begin(), rates.end());
  f.cpu_ns_per_op = Median(cpu);
  f.p50_ns = static_cast<double>(latency.PercentileNs(0.5));
  f.p90_ns = static_cast<double>(latency.PercentileNs(0.9));
  f.p99_ns = static_cast<double>(latency.PercentileNs(0.99));
  f.p999_ns = static_cast<double>(latency.PercentileNs(0.999));
  f.max_ns = static_cast<double>(latency.max_ns());
  return f;
}

}  // namespace

std::vector<Column> ConnectColumns(std::span<const Target> targets, unsigned threads) {
  std::vector<Column> columns;
  for (const Target& target : targets) {
    Column column{&target, {}, Status::OK()};
    for (unsigned t = 0; t < threads && column.connect_error.ok(); ++t) {
      Result<std::unique_ptr<Client>> client = target.connect();
      if (client.ok()) {
        column.clients.push_back(std::move(client).value());
      } else {
        column.connect_error = client.status();
        column.clients.clear();
      }
    }
    columns.push_back(std::move(column));
  }
  return columns;
}

std::size_t ClientKeys(const RunPlan& plan, std::size_t clients, std::size_t t) {
  if (!plan.split_keys || clients <= 1) return plan.keys;
  const std::size_t share = plan.keys / clients + (t < plan.keys % clients ? 1 : 0);
  return share > 0 ? share : 1;
}

ScenarioFigures RunScenario(const Scenario& scenario, std::span<Column> columns,
                            const RunPlan& plan) {
  // This thread takes its thread numbers first (cachet/thread_number.h), so the
  // set-up threads and the slice threads after them get the same ones, and so
  // the same pooled connections, whichever column borrows on this thread.
  (void)ThreadNumber(ThreadNumbering::kConnectionPools);
  (void)ThreadNumber(ThreadNumbering::kMemoryStores);
  std::vector<ColumnRun> runs(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) SetUp(scenario, c, columns[c], plan, &runs[c]);
  for (unsigned r = 0; r < plan.repeat && !StopRequested(plan); ++r) {
    if (plan.progress) {
      plan.progress(std::string(scenario.name) + ": repetition " + std::to_string(r + 1) + "/" +
                    std::to_string(plan.repeat));
    }
    RunRepetition(scenario, columns, plan, runs);
  }
  ScenarioFigures out{scenario.name, scenario.description, {}};
  for (std::size_t c = 0; c < columns.size(); ++c) {
    for (std::size_t t = 0; t < runs[c].states.size(); ++t) {
      scenario.cleanup(*columns[c].clients[t], runs[c].states[t]);
    }
    out.figures.push_back(Summarize(columns[c], runs[c]));
  }
  return out;
}

}  // namespace cachet::bench
