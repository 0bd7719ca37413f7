// MetricsTable: the Cache's per-operation counters, kept in relaxed atomics.
//
// Counting must cost next to nothing on the hot path, so every counter is an
// independent relaxed atomic and each operation's counters sit on their own
// cache line. Threads write to one of kStripes copies of the table (picked once
// per thread), so threads sharing a Cache do not fight over the same cache lines;
// a snapshot sums the stripes. A snapshot is therefore not one instant: counters of a call in
// progress may be partly applied. That is fine for monitoring, which is all
// metrics are for. Thread-safe.
//
// A call is counted in two steps: Begin() before it runs (which reads this
// thread's state once: its stripe, and whether this call is one of the timed
// ones) and Finish() with its outcome.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

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

 public:
  using Clock = std::chrono::steady_clock;

  // One call being counted: where its counters are, and when it started if it
  // is one of the timed calls (the zero time point, which no clock reading
  // returns, if not).
  struct Call {
    Counters* counters;
    Clock::time_point start;
  };

  // Reading the clock is the dearest part of a metric, so only a sample of the
  // calls is timed: the first of each thread, then one in kLatencySampleEvery.
  Call Begin(CacheOp op) noexcept;
  // The end of a single-key call, and of a batch with the outcomes of its keys.
  // `calls`: how many calls the tally is of (a Batch counts each of its
  // operations as a call; they share one timing, the batch's).
  void Finish(const Call& call, const Status& status) noexcept;
  void Finish(const Call& call, const OutcomeTally& tally, std::uint64_t calls = 1) noexcept;

  Metrics Snapshot() const noexcept;
  void Reset() noexcept;

 private:
  static constexpr std::size_t kStripes = 8;
  using Row = std::array<Counters, static_cast<std::size_t>(CacheOp::kCount)>;

  static void RecordLatency(Counters& c, Clock::time_point start) noexcept;

  std::array<Row, kStripes> stripes_;
};

// Counts one call in a Cache's metrics; a null table (metrics off) counts nothing.
class CallCounter {
 public:
  CallCounter(MetricsTable* table, CacheOp op) noexcept : table_(table) {
    if (table_ != nullptr) call_ = table_->Begin(op);
  }
  // `outcome`: the call's Status, or the OutcomeTally of a batch.
  template <class Outcome>
  void Finish(const Outcome& outcome) const noexcept {
    if (table_ != nullptr) table_->Finish(call_, outcome);
  }

 private:
  MetricsTable* table_;
  MetricsTable::Call call_{};
};

}  // namespace cachet
