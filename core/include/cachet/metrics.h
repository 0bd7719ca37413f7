// Metrics: what a Cache counts per operation, as plain values.
//
// Cache::metrics() returns a Metrics snapshot: one OpMetrics per CacheOp with
// its calls, the outcome of every key by status code, and a LatencyHistogram of
// the timed calls. Snapshots are values: copy, merge and keep them freely. The
// counting itself (lock-free, per thread) is the Cache's business; formatting a
// snapshot for Prometheus or as JSON is in metrics_format.h.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cachet/export.h"
#include "cachet/status.h"

namespace cachet {

// The operations metrics are kept for.
enum class CacheOp : std::uint8_t {
  kGet,
  kGets,
  kSet,
  kAdd,
  kReplace,
  kAppend,
  kPrepend,
  kCas,
  kRemove,
  kIncr,
  kDecr,
  kTouch,
  kGetMulti,
  kSetMulti,
  kRemoveMulti,
  kFlush,
  kStats,
  kGetOrCompute,  // one per GetOrCompute call: hit (cached), miss (loaded) or the read's error
  kLoad,          // one per loader GetOrCompute ran: ok, or the loader's (or write-back's) error
  kCount,         // not an operation: the number of them
};
inline constexpr std::size_t kCacheOpCount = static_cast<std::size_t>(CacheOp::kCount);
// "get", "get_multi", "get_or_compute", ...; "unknown" past the last.
CACHET_EXPORT std::string_view CacheOpName(CacheOp op) noexcept;

inline constexpr std::size_t kStatusCodeCount = static_cast<std::size_t>(StatusCode::kInternal) + 1;

// Durations in a fixed-size log-linear histogram: each power of two is split in
// four equal buckets, so a bucket's bounds are within 25 % of each other, from
// 1 ns to about 4.6 minutes (longer durations land in the last bucket). Exact
// below 4 ns. Recording is an increment; histograms of threads or of Caches
// merge by adding their buckets. Not thread-safe (a value type).
class CACHET_EXPORT LatencyHistogram {
 public:
  static constexpr std::size_t kBuckets = 152;

  // The bucket of a duration of `ns` nanoseconds.
  static constexpr std::size_t BucketOf(std::uint64_t ns) noexcept {
    if (ns < 4) return static_cast<std::size_t>(ns);
    const int exponent = static_cast<int>(std::bit_width(ns)) - 1;  // >= 2
    const std::size_t mantissa = (ns >> (exponent - 2)) & 3;
    const std::size_t bucket = 4 * static_cast<std::size_t>(exponent - 1) + mantissa;
    return bucket < kBuckets ? bucket : kBuckets - 1;
  }
  // The durations bucket `i` holds: [BucketLowerNs(i), BucketUpperNs(i)).
  static constexpr std::uint64_t BucketLowerNs(std::size_t i) noexcept {
    if (i < 4) return i;
    return std::uint64_t{4 + i % 4} << (i / 4 - 1);
  }
  static constexpr std::uint64_t BucketUpperNs(std::size_t i) noexcept {
    if (i < 4) return i + 1;
    return std::uint64_t{5 + i % 4} << (i / 4 - 1);
  }

  void Record(std::uint64_t ns) noexcept {
    ++buckets_[BucketOf(ns)];
    ++count_;
    sum_ns_ += ns;
    if (ns > max_ns_) max_ns_ = ns;
  }
  void Merge(const LatencyHistogram& other) noexcept;
  // Sets the raw figures (the Cache builds snapshots from its counters).
  void SetBucket(std::size_t i, std::uint64_t count) noexcept { buckets_[i] = count; }
  void SetTotals(std::uint64_t count, std::uint64_t sum_ns, std::uint64_t max_ns) noexcept {
    count_ = count;
    sum_ns_ = sum_ns;
    max_ns_ = max_ns;
  }

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t sum_ns() const noexcept { return sum_ns_; }
  std::uint64_t max_ns() const noexcept { return max_ns_; }
  std::uint64_t bucket(std::size_t i) const noexcept { return buckets_[i]; }
  // Durations recorded below `ns` (a bucket bound: the count is then exact).
  std::uint64_t CountBelow(std::uint64_t ns) const noexcept;

  // The duration at quantile `q` (0.5 for p50, 0.999 for p99.9): the upper bound
  // of the bucket holding it, never above the maximum. 0 when empty.
  std::uint64_t PercentileNs(double q) const noexcept;

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ns_ = 0;
  std::uint64_t max_ns_ = 0;
};

// One operation's figures. Single-key operations count one key per call;
// batches count each key's outcome and one call per batch.
struct OpMetrics {
  std::uint64_t calls = 0;
  // Keys by outcome, indexed by StatusCode: [kOk] found or done, [kNotFound] and
  // the other ordinary outcomes, then each error code.
  std::array<std::uint64_t, kStatusCodeCount> by_status{};
  // Derived from by_status: keys = hits + misses + errors.
  std::uint64_t keys = 0;
  std::uint64_t hits = 0;    // reads: keys found; writes: done
  std::uint64_t misses = 0;  // not_found, not_stored, exists
  std::uint64_t errors = 0;  // every other code (Status::IsError)
  // Durations of the timed calls: the first 64 of each operation on each thread,
  // then one in kLatencySampleEvery (every call while an observer is registered).
  LatencyHistogram latency;
  static constexpr std::uint32_t kLatencyAlwaysFirst = 64;
  static constexpr std::uint32_t kLatencySampleEvery = 64;

  std::uint64_t count(StatusCode code) const noexcept {
    return by_status[static_cast<std::size_t>(code)];
  }
};
using Metrics = std::array<OpMetrics, kCacheOpCount>;

}  // namespace cachet
