// MetricsTable: relaxed atomic counters per Cache operation, striped by thread.
#include "cache_metrics.h"

#include <algorithm>

namespace cachet {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr std::uint32_t kNoStripe = ~std::uint32_t{0};

// What a thread keeps for the metrics of every Cache it calls. Constant
// initialised and trivially destructible, so reaching it costs no guard check
// and both fields come from one thread-local lookup.
struct ThreadState {
  std::uint32_t calls_since_timed = 0;
  std::uint32_t stripe = kNoStripe;  // assigned on the thread's first call
};

thread_local ThreadState this_thread_state;

// The compiler looks a thread-local's address up again at every use in a shared
// library (a call to __tls_get_addr each); going through this function looks it
// up once per call counted.
[[gnu::noinline]] ThreadState& ThisThreadState() noexcept { return this_thread_state; }

std::uint32_t NextStripe(std::size_t stripes) noexcept {
  // Threads are numbered as they first count.
  static std::atomic<std::uint32_t> next_thread{0};
  return next_thread.fetch_add(1, kRelaxed) % static_cast<std::uint32_t>(stripes);
}

void RaiseTo(std::atomic<std::uint64_t>& max, std::uint64_t value) noexcept {
  std::uint64_t seen = max.load(kRelaxed);
  // Retries only while another thread raised it to something still below `value`.
  while (seen < value && !max.compare_exchange_weak(seen, value, kRelaxed)) {
  }
}

}  // namespace

MetricsTable::Call MetricsTable::Begin(CacheOp op) noexcept {
  ThreadState& state = ThisThreadState();
  if (state.stripe == kNoStripe) state.stripe = NextStripe(kStripes);
  Clock::time_point start{};
  if (state.calls_since_timed == 0) start = Clock::now();
  if (++state.calls_since_timed == OpMetrics::kLatencySampleEvery) state.calls_since_timed = 0;
  return Call{&stripes_[state.stripe][static_cast<std::size_t>(op)], start};
}

void MetricsTable::Finish(const Call& call, const Status& status) noexcept {
  Counters& c = *call.counters;
  c.calls.fetch_add(1, kRelaxed);
  if (status.ok()) {
    c.hits.fetch_add(1, kRelaxed);
  } else if (status.IsError()) {
    c.errors.fetch_add(1, kRelaxed);
  } else {
    c.misses.fetch_add(1, kRelaxed);
  }
  if (call.start != Clock::time_point{}) RecordLatency(c, call.start);
}

void MetricsTable::Finish(const Call& call, const OutcomeTally& tally,
                          std::uint64_t calls) noexcept {
  Counters& c = *call.counters;
  c.calls.fetch_add(calls, kRelaxed);
  if (tally.hits != 0) c.hits.fetch_add(tally.hits, kRelaxed);
  if (tally.misses != 0) c.misses.fetch_add(tally.misses, kRelaxed);
  if (tally.errors != 0) c.errors.fetch_add(tally.errors, kRelaxed);
  if (call.start != Clock::time_point{}) RecordLatency(c, call.start);
}

void MetricsTable::RecordLatency(Counters& c, Clock::time_point start) noexcept {
  const auto elapsed = Clock::now() - start;
  const auto latency_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
  c.timed_calls.fetch_add(1, kRelaxed);
  c.total_latency_ns.fetch_add(latency_ns, kRelaxed);
  RaiseTo(c.max_latency_ns, latency_ns);
}

Metrics MetricsTable::Snapshot() const noexcept {
  Metrics out;
  for (const Row& row : stripes_) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const Counters& c = row[i];
      out[i].calls += c.calls.load(kRelaxed);
      out[i].hits += c.hits.load(kRelaxed);
      out[i].misses += c.misses.load(kRelaxed);
      out[i].errors += c.errors.load(kRelaxed);
      out[i].timed_calls += c.timed_calls.load(kRelaxed);
      out[i].total_latency_ns += c.total_latency_ns.load(kRelaxed);
      out[i].max_latency_ns = std::max(out[i].max_latency_ns, c.max_latency_ns.load(kRelaxed));
    }
  }
  return out;
}

void MetricsTable::Reset() noexcept {
  for (Row& row : stripes_) {
    for (Counters& c : row) {
      c.calls.store(0, kRelaxed);
      c.hits.store(0, kRelaxed);
      c.misses.store(0, kRelaxed);
      c.errors.store(0, kRelaxed);
      c.timed_calls.store(0, kRelaxed);
      c.total_latency_ns.store(0, kRelaxed);
      c.max_latency_ns.store(0, kRelaxed);
    }
  }
}

}  // namespace cachet
