// Runs one scenario against every target: --repeat repetitions, each of them
// interleaving the targets in short slices (A B A B ...) so a slow drift of the
// machine (frequency, other load) hits every column alike. A figure is the
// median of the repetitions' rates, with their range and the client CPU time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "client.h"
#include "figures.h"
#include "payloads.h"
#include "scenario.h"
#include "target.h"

namespace cachet::bench {

struct RunPlan {
  std::chrono::nanoseconds duration{std::chrono::seconds(1)};  // per target and repetition
  std::uint64_t ops = 0;  // iterations per target and repetition instead; 0: by time
  std::chrono::nanoseconds slice{std::chrono::milliseconds(100)};
  unsigned repeat = 3;
  std::size_t keys = 100;   // each client's, or with split_keys the column's
  bool split_keys = false;  // the column's `keys` split between its clients (ClientKeys)
  const Payloads* payloads = nullptr;
  const std::atomic<bool>* stop = nullptr;           // Ctrl-C
  std::function<void(const std::string&)> progress;  // may be empty
};

// A target with its clients, one per thread, connected once for the whole run.
struct Column {
  const Target* target;
  std::vector<std::unique_ptr<Client>> clients;
  Status connect_error;  // not ok: no clients, every scenario reports this
};

// Connects `threads` clients per target.
std::vector<Column> ConnectColumns(std::span<const Target> targets, unsigned threads);

ScenarioFigures RunScenario(const Scenario& scenario, std::span<Column> columns,
                            const RunPlan& plan);

// The keys client `t` of `clients` rotates through: plan.keys, or with split_keys its
// share of them (the first clients take one more when they do not divide; at least 1).
std::size_t ClientKeys(const RunPlan& plan, std::size_t clients, std::size_t t);

}  // namespace cachet::bench
