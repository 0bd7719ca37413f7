// LatencyHistogram's merging and percentiles; CacheObserver's vtable.
#include "cachet/metrics.h"

#include <algorithm>
#include <cmath>

#include "cachet/observer.h"

namespace cachet {

void LatencyHistogram::Merge(const LatencyHistogram& other) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

std::uint64_t LatencyHistogram::CountBelow(std::uint64_t ns) const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kBuckets && BucketUpperNs(i) <= ns; ++i) n += buckets_[i];
  return n;
}

std::uint64_t LatencyHistogram::PercentileNs(double q) const noexcept {
  // The sum of the buckets, not count_: a snapshot taken while calls are counted
  // may see a bucket before its total.
  std::uint64_t total = 0;
  for (std::uint64_t b : buckets_) total += b;
  if (total == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // The rank of the duration asked for, from 1: p50 of 2 durations is the first.
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      const std::uint64_t upper = BucketUpperNs(i) - 1;  // the largest duration it holds
      return max_ns_ != 0 ? std::min(upper, max_ns_) : upper;
    }
  }
  return max_ns_;
}

CacheObserver::~CacheObserver() = default;

}  // namespace cachet
