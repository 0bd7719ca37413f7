// One slice of a run: a bounded stretch of iterations of one scenario on one
// target, on one or several threads at once, with its wall and CPU time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cachet/metrics.h"
#include "cachet/status.h"
#include "client.h"
#include "scenario.h"

namespace cachet::bench {

struct SliceLimits {
  std::uint64_t max_iterations;  // over all threads
  std::chrono::nanoseconds max_time;
  const std::atomic<bool>* stop = nullptr;  // set by Ctrl-C: end the slice early
};

// Aligned to a cache line: each thread counts into its own, and neighbours in a
// vector must not share a line the other thread writes (false sharing).
struct alignas(64) Tally {
  std::uint64_t iterations = 0;
  std::uint64_t failures = 0;
  Status first_failure;
  std::chrono::nanoseconds elapsed{0};
  std::chrono::nanoseconds cpu{0};  // the whole process: every client thread
  // Durations of the timed iterations (slice.cpp says which).
  LatencyHistogram latency;

  void Add(const Tally& other);
};

// When one thread's loop ran, on a line of its own: each thread writes its own.
struct alignas(64) LoopSpan {
  std::chrono::steady_clock::time_point began;
  std::chrono::steady_clock::time_point ended;
};

// The time from the first loop's start to the last one's end. REQUIRES: spans not empty.
std::chrono::nanoseconds Covered(std::span<const LoopSpan> spans);

// Runs body(0) .. body(count - 1), each on a thread of its own. The threads take
// their thread numbers (cachet/thread_number.h) in index order, and none ends
// before all are done, so thread i holds the same numbers in every call: the
// same memory store lane and pooled connection, as a long-lived worker would.
void RunOnNumberedThreads(std::size_t count, const std::function<void(std::size_t)>& body);

// Runs `scenario` on clients[i] with states[i], one thread per client (the
// calling thread alone when there is one), the threads starting together. The
// slice's elapsed time runs from the first one's start to the last one's end.
Tally RunSlice(const Scenario& scenario, std::span<const std::unique_ptr<Client>> clients,
               std::span<ScenarioState> states, const SliceLimits& limits);

}  // namespace cachet::bench
