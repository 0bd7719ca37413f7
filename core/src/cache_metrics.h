// MetricsTable: the Cache's per-operation counters, kept in relaxed atomics.
//
// Counting must cost next to nothing on the hot path, so every counter is an
// independent relaxed atomic and each operation's counters sit on their own
// cache line. Threads write to one of kStripes copies of the table (picked once
// per thread), so threads sharing a Cache do not fight over the same cache lines;
// a snapshot sums the stripes. A snapshot is therefore not one instant: counters of a call in
// progress may be partly applied. That is fine for monitoring, which is all
// metrics are for. Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "cachet/cache.h"
#include "cachet/status.h"

namespace cachet {

// How one key's outcome counts: a hit, a miss (the ordinary outcomes not_found,
// not_stored and exists) or an error (everything else).
struct OutcomeTally {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t errors = 0;

  void Count(const Status& status) noexcept {
    if (status.ok()) {
      ++hits;
    } else if (status.IsError()) {
      ++errors;
    } else {
      ++misses;
    }
  }
};

class MetricsTable {
 public:
  // One call of `op` with the outcomes of its keys, and how long it took if it
  // was one of the timed calls.
  void Add(CacheOp op, const OutcomeTally& tally, std::optional<std::uint64_t> latency_ns) noexcept;
  Metrics Snapshot() const noexcept;
  void Reset() noexcept;

 private:
  struct alignas(64) Counters {
    std::atomic<std::uint64_t> calls{0};
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
    std::atomic<std::uint64_t> errors{0};
    std::atomic<std::uint64_t> timed_calls{0};
    std::atomic<std::uint64_t> total_latency_ns{0};
    std::atomic<std::uint64_t> max_latency_ns{0};
  };

  static constexpr std::size_t kStripes = 8;
  using Row = std::array<Counters, static_cast<std::size_t>(CacheOp::kCount)>;

  // The stripe of the calling thread: threads are numbered as they first count.
  static std::size_t ThisThreadStripe() noexcept;

  std::array<Row, kStripes> stripes_;
};

}  // namespace cachet
