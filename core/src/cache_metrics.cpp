// MetricsTable: relaxed atomic counters per Cache operation, striped by thread.
#include "cache_metrics.h"

#include <algorithm>

namespace cachet {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

void RaiseTo(std::atomic<std::uint64_t>& max, std::uint64_t value) noexcept {
  std::uint64_t seen = max.load(kRelaxed);
  // Retries only while another thread raised it to something still below `value`.
  while (seen < value && !max.compare_exchange_weak(seen, value, kRelaxed)) {
  }
}

}  // namespace

std::size_t MetricsTable::ThisThreadStripe() noexcept {
  static std::atomic<std::size_t> next_thread{0};
  thread_local const std::size_t stripe = next_thread.fetch_add(1, kRelaxed) % kStripes;
  return stripe;
}

void MetricsTable::Add(CacheOp op, const OutcomeTally& tally,
                       std::optional<std::uint64_t> latency_ns) noexcept {
  Counters& c = stripes_[ThisThreadStripe()][static_cast<std::size_t>(op)];
  c.calls.fetch_add(1, kRelaxed);
  if (tally.hits != 0) c.hits.fetch_add(tally.hits, kRelaxed);
  if (tally.misses != 0) c.misses.fetch_add(tally.misses, kRelaxed);
  if (tally.errors != 0) c.errors.fetch_add(tally.errors, kRelaxed);
  if (!latency_ns) return;
  c.timed_calls.fetch_add(1, kRelaxed);
  c.total_latency_ns.fetch_add(*latency_ns, kRelaxed);
  RaiseTo(c.max_latency_ns, *latency_ns);
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
