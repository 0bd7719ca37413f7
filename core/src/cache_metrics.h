// MetricsTable: the Cache's per-operation counters and latency histograms, and
// the observer a Cache reports its calls to.
//
// Counting must cost next to nothing on the hot path. Each of the first
// kOwnedStripes threads that count (in the whole process, a slot is freed when
// its thread ends) owns a stripe of counters in every table: only it writes
// there, so an increment is a relaxed load and store, with no locked
// instruction. Later threads share one more stripe and add atomically. A
// snapshot sums the stripes, so it is not one instant: counters of a call in
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
#include <memory>
#include <mutex>
#include <string>

#include "cachet/metrics.h"
#include "cachet/observer.h"
#include "cachet/status.h"

namespace cachet {

// The outcomes of a batch's keys, by status code. Add() is the way for a batch
// to count `keys` keys of one outcome at once.
struct OutcomeTally {
  std::array<std::uint64_t, kStatusCodeCount> by_status{};

  void Count(const Status& status) noexcept {
    ++by_status[static_cast<std::size_t>(status.code())];
  }
  void Add(StatusCode code, std::uint64_t keys) noexcept {
    by_status[static_cast<std::size_t>(code)] += keys;
  }
  std::uint64_t keys() const noexcept;
  std::uint64_t errors() const noexcept;
  // The batch's outcome for an observer: its first error code, else not_found if
  // a key missed, else ok. Never throws: without memory for its message, the
  // error code alone.
  Status Summary() const noexcept;
};

// What a thread keeps for the metrics of every Cache it calls: its stripe, and
// its calls per operation for the latency sample. Constant initialised and
// trivially destructible, so reaching it costs no guard check; initial-exec,
// so reaching it from libcachet is one %fs-relative access (libcachet is loaded
// with the program or from its static TLS surplus, never needing more).
struct MetricsThreadState {
  static constexpr std::uint32_t kSharedStripe = 8;  // MetricsTable's, past the owned ones
  // The shared stripe until the thread's first timed call (its first call of
  // any operation) assigns it one of its own if one is free.
  std::uint32_t stripe = kSharedStripe;
  bool owned = false;     // the stripe is this thread's alone
  bool assigned = false;  // the stripe was chosen
  std::array<std::uint32_t, kCacheOpCount> calls{};
};
extern thread_local constinit MetricsThreadState metrics_thread_state
    __attribute__((tls_model("initial-exec")));

class MetricsTable {
 public:
  using Clock = std::chrono::steady_clock;

  MetricsTable();
  ~MetricsTable();

 private:
  struct alignas(64) OpCounters {
    // Calls of a batch operation; a single-key operation's calls are its keys.
    std::atomic<std::uint64_t> calls{0};
    std::array<std::atomic<std::uint64_t>, kStatusCodeCount> by_status{};
    std::atomic<std::uint64_t> timed_calls{0};
    std::atomic<std::uint64_t> total_latency_ns{0};
    std::atomic<std::uint64_t> max_latency_ns{0};
    std::array<std::atomic<std::uint64_t>, LatencyHistogram::kBuckets> latency{};
  };

 public:
  // One call being counted: where its counters are, whether this thread owns
  // them, and when it started if it is timed (the zero time point, which no
  // clock reading returns, if not).
  struct Call {
    OpCounters* counters;
    Clock::time_point start;
    bool owned;
    CacheOp op;
  };

  // Inline, with the rare parts out of line: this is every call's cost.
  Call Begin(CacheOp op) noexcept {
    MetricsThreadState& state = metrics_thread_state;
    const std::uint32_t n = state.calls[static_cast<std::size_t>(op)]++;
    Clock::time_point start{};
    // The first calls of each operation on each thread are all timed, so a short
    // run still has its percentiles; then one in kLatencySampleEvery.
    if (n < OpMetrics::kLatencyAlwaysFirst || n % OpMetrics::kLatencySampleEvery == 0 ||
        observer_.load(std::memory_order_relaxed) != nullptr) [[unlikely]] {
      start = StartTiming(state);
    }
    return Call{&(*stripes_)[state.stripe][static_cast<std::size_t>(op)], start, state.owned, op};
  }
  // The end of a single-key call, and of a batch with the outcomes of its keys.
  // With counting off (and an observer set) the counters still run, unread.
  void Finish(const Call& call, const Status& status) noexcept {
    Add(call.counters->by_status[static_cast<std::size_t>(status.code())], 1, call.owned);
    if (call.start != Clock::time_point{}) [[unlikely]]
      FinishTimed(call, status);
  }
  void Finish(const Call& call, const OutcomeTally& tally) noexcept;
  // A call the caller timed itself (GetOrCompute, its loads): one call, one key.
  // It reports the server noted since the caller's BeginTrace().
  void Record(CacheOp op, Clock::time_point start, const Status& status) noexcept;

  // Set before any call: counting on or off ([cache] metrics), and the store's
  // name for events.
  void set_counting(bool on) noexcept { counting_ = on; }
  void set_store(std::string_view store) { store_.assign(store); }
  // The observer (null for none; not owned: the Cache keeps it alive for as
  // long as this table lives).
  void set_observer(CacheObserver* observer) noexcept;
  // Starts this thread's server trace for a call timed by its caller, if observed.
  void BeginTrace() noexcept;
  bool active() const noexcept { return counting_ || observer_.load(std::memory_order_relaxed); }

  Metrics Snapshot() const;
  void Reset();

 private:
  static constexpr std::size_t kOwnedStripes = 8;
  static constexpr std::size_t kSharedStripe = MetricsThreadState::kSharedStripe;
  using Row = std::array<OpCounters, kCacheOpCount>;

  // An increment by the stripe's only writer needs no locked instruction.
  static void Add(std::atomic<std::uint64_t>& counter, std::uint64_t n, bool owned) noexcept {
    if (owned) [[likely]] {
      counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    } else {
      counter.fetch_add(n, std::memory_order_relaxed);
    }
  }
  static void AssignStripe(MetricsThreadState& state) noexcept;
  // The clock at a timed call's start (and the server trace begun, if
  // observed); assigns the thread its stripe on its first call.
  Clock::time_point StartTiming(MetricsThreadState& state) noexcept;
  void FinishTimed(const Call& call, const Status& status) noexcept;
  // The raw sums of every stripe, without the baseline Reset() took.
  Metrics RawSnapshot() const;
  void RecordLatency(const Call& call, std::uint64_t latency_ns) noexcept;
  void Notify(const Call& call, std::size_t keys, const Status& status, std::size_t failed,
              std::chrono::nanoseconds duration) noexcept;

  std::unique_ptr<std::array<Row, kOwnedStripes + 1>> stripes_;
  bool counting_ = true;
  std::atomic<CacheObserver*> observer_{nullptr};
  std::string store_;  // the backend's name, for events
  mutable std::mutex baseline_mutex_;
  Metrics baseline_{};  // what Reset() subtracts; guarded by baseline_mutex_
};

// Counts one call in a Cache's metrics; a null table (metrics off and no
// observer) does nothing.
class CallCounter {
 public:
  CallCounter(MetricsTable* table, CacheOp op) noexcept : table_(table) {
    if (table_ != nullptr) [[likely]]
      call_ = table_->Begin(op);  // metrics are on by default
  }
  // `outcome`: the call's Status, or the OutcomeTally of a batch.
  template <class Outcome>
  void Finish(const Outcome& outcome) const noexcept {
    if (table_ != nullptr) [[likely]]
      table_->Finish(call_, outcome);
  }

 private:
  MetricsTable* table_;
  MetricsTable::Call call_;  // set, and read, only with a table
};

}  // namespace cachet
