// Slices: the timed inner loop, and its fan-out to threads.
#include "slice.h"

#include <time.h>

#include <algorithm>
#include <latch>
#include <thread>
#include <vector>

#include "cachet/thread_number.h"

namespace cachet::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Iterations are timed one in kClockEvery: on a virtual machine a clock read can
// take half as long as a memory store's get. In a slice bounded by time, an
// iteration of kSlowIteration or more (a network round trip) has the next one
// timed too, so that once iterations are slow (a stalled server) the slice ends
// one iteration after it is due. (Under valgrind every iteration is slow: use --ops.)
constexpr std::uint64_t kClockEvery = 32;
constexpr std::chrono::nanoseconds kSlowIteration{1000};

std::chrono::nanoseconds ProcessCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

bool Stopped(const SliceLimits& limits) {
  return limits.stop != nullptr && limits.stop->load(std::memory_order_relaxed);
}

void Loop(const Scenario& scenario, Client& client, ScenarioState& state,
          std::uint64_t max_iterations, const SliceLimits& limits, Tally* tally) {
  const Clock::time_point start = Clock::now();
  const bool by_time = limits.max_time != std::chrono::nanoseconds::max();
  bool time_each = true;  // the first: every slice records at least one latency
  for (std::uint64_t i = 0; i < max_iterations; ++i) {
    // A timed iteration is recorded for the percentiles and checks the slice's time.
    const bool timed = time_each || i % kClockEvery == kClockEvery - 1;
    const Clock::time_point before = timed ? Clock::now() : Clock::time_point{};
    Status status = scenario.run_once(client, state);
    ++tally->iterations;
    if (!status.ok() && tally->failures++ == 0) tally->first_failure = std::move(status);
    if (timed) {
      const Clock::time_point now = Clock::now();
      time_each = by_time && now - before >= kSlowIteration;
      tally->latency.Record(static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now - before).count()));
      if (now - start >= limits.max_time) break;
    }
    if (Stopped(limits)) break;  // Ctrl-C: after this iteration, timed or not
  }
}

}  // namespace

void RunOnNumberedThreads(std::size_t count, const std::function<void(std::size_t)>& body) {
  // Threads racing for the lowest free numbers would swap them from call to
  // call: a memory store's entries would then pass between two threads' lanes
  // and end up sharing cache lines with the other thread's (false sharing).
  std::atomic<std::size_t> numbered{0};
  std::latch all_done(static_cast<std::ptrdiff_t>(count));
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (std::size_t t = 0; t < count; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t seen = numbered.load(); seen != t; seen = numbered.load()) {
        numbered.wait(seen);
      }
      (void)ThreadNumber(ThreadNumbering::kConnectionPools);
      (void)ThreadNumber(ThreadNumbering::kMemoryStores);
      numbered.store(t + 1);
      numbered.notify_all();
      body(t);
      all_done.arrive_and_wait();  // none gives its numbers back before all are done
    });
  }
  for (std::thread& thread : threads) thread.join();
}

std::chrono::nanoseconds Covered(std::span<const LoopSpan> spans) {
  Clock::time_point first = spans.front().began;
  Clock::time_point last = spans.front().ended;
  for (const LoopSpan& span : spans) {
    first = std::min(first, span.began);
    last = std::max(last, span.ended);
  }
  return last - first;
}

void Tally::Add(const Tally& other) {
  iterations += other.iterations;
  if (failures == 0 && other.failures > 0) first_failure = other.first_failure;
  failures += other.failures;
  elapsed += other.elapsed;
  cpu += other.cpu;
  latency.Merge(other.latency);
}

Tally RunSlice(const Scenario& scenario, std::span<const std::unique_ptr<Client>> clients,
               std::span<ScenarioState> states, const SliceLimits& limits) {
  const std::size_t threads = clients.size();
  std::vector<Tally> tallies(threads);
  const std::uint64_t share = (limits.max_iterations + threads - 1) / threads;
  // The slice's time runs from the first thread's start to the last one's end:
  // starting and joining threads, done anew for each slice, is not the clients' work.
  std::vector<LoopSpan> spans(threads);
  auto run = [&](std::size_t t) {
    spans[t].began = Clock::now();
    Loop(scenario, *clients[t], states[t], share, limits, &tallies[t]);
    spans[t].ended = Clock::now();
  };
  const std::chrono::nanoseconds cpu_start = ProcessCpuTime();
  if (threads == 1) {
    run(0);
  } else {
    // Every thread waits until all are ready, so they start together.
    std::latch ready(static_cast<std::ptrdiff_t>(threads));
    RunOnNumberedThreads(threads, [&](std::size_t t) {
      ready.arrive_and_wait();
      run(t);
    });
  }
  Tally total;
  for (const Tally& t : tallies) total.Add(t);
  total.cpu = ProcessCpuTime() - cpu_start;
  total.elapsed = Covered(spans);
  return total;
}

}  // namespace cachet::bench
