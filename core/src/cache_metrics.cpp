// MetricsTable: counters and latency histograms per Cache operation, one stripe
// per thread, and the observer's events.
#include "cache_metrics.h"

#include <algorithm>
#include <bit>

#include "cachet/net/server_trace.h"

namespace cachet {

constinit thread_local MetricsThreadState metrics_thread_state;

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// Which owned stripes are taken, one bit each, in the whole process.
std::atomic<std::uint32_t> taken_stripes{0};

// Gives a thread's owned stripe back when the thread ends. Separate from
// MetricsThreadState so that the hot path never touches a thread-local with a
// destructor.
struct StripeRelease {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t stripe = kNone;
  ~StripeRelease() {
    if (stripe == kNone) return;
    // Counting by this thread's later thread-local destructors goes to the
    // shared stripe: once the bit is free another thread may own this one.
    MetricsThreadState& state = metrics_thread_state;
    state.stripe = MetricsThreadState::kSharedStripe;
    state.owned = false;
    state.assigned = true;
    taken_stripes.fetch_and(~(1u << stripe), std::memory_order_release);
  }
};

void RaiseTo(std::atomic<std::uint64_t>& max, std::uint64_t value) noexcept {
  std::uint64_t seen = max.load(kRelaxed);
  // Retries only while another thread raised it to something still below `value`.
  while (seen < value && !max.compare_exchange_weak(seen, value, kRelaxed)) {
  }
}

std::uint64_t Nanos(MetricsTable::Clock::duration d) noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

// True for the operations that carry several keys per call.
bool IsBatch(std::size_t op) noexcept {
  const auto o = static_cast<CacheOp>(op);
  return o == CacheOp::kGetMulti || o == CacheOp::kSetMulti || o == CacheOp::kRemoveMulti;
}

}  // namespace

// Takes a free owned stripe for this thread, or the shared one when all are taken.
void MetricsTable::AssignStripe(MetricsThreadState& state) noexcept {
  state.assigned = true;
  std::uint32_t taken = taken_stripes.load(std::memory_order_acquire);
  while (true) {
    const std::uint32_t free = ~taken & ((1u << kOwnedStripes) - 1);
    if (free == 0) {
      state.stripe = kSharedStripe;
      state.owned = false;
      return;
    }
    const auto stripe = static_cast<std::uint32_t>(std::countr_zero(free));
    if (taken_stripes.compare_exchange_weak(taken, taken | (1u << stripe),
                                            std::memory_order_acq_rel)) {
      thread_local StripeRelease release;
      release.stripe = stripe;
      state.stripe = stripe;
      state.owned = true;
      return;
    }
  }
}

std::uint64_t OutcomeTally::keys() const noexcept {
  std::uint64_t n = 0;
  for (std::uint64_t k : by_status) n += k;
  return n;
}

std::uint64_t OutcomeTally::errors() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t code = 0; code < kStatusCodeCount; ++code) {
    if (Status::FromCode(static_cast<StatusCode>(code), {}).IsError()) n += by_status[code];
  }
  return n;
}

Status OutcomeTally::Summary() const noexcept {
  for (std::size_t code = 0; code < kStatusCodeCount; ++code) {
    Status s = Status::FromCode(static_cast<StatusCode>(code), {});  // no message: no allocation
    if (s.IsError() && by_status[code] != 0) {
      try {
        return Status::FromCode(
            s.code(), std::to_string(errors()) + " of " + std::to_string(keys()) + " keys failed");
      } catch (...) {  // out of memory for the message: the code alone
        return s;
      }
    }
  }
  const auto count = [&](StatusCode c) { return by_status[static_cast<std::size_t>(c)]; };
  if (count(StatusCode::kNotFound) != 0) return Status::NotFound();
  if (count(StatusCode::kNotStored) != 0) return Status::NotStored();
  if (count(StatusCode::kExists) != 0) return Status::Exists();
  return Status::OK();
}

MetricsTable::MetricsTable() : stripes_(std::make_unique<std::array<Row, kOwnedStripes + 1>>()) {}

MetricsTable::~MetricsTable() {
  if (observer_.load(kRelaxed) != nullptr) net::server_trace_users.fetch_sub(1, kRelaxed);
}

void MetricsTable::set_observer(CacheObserver* observer) noexcept {
  CacheObserver* before = observer_.exchange(observer, std::memory_order_acq_rel);
  if (before == nullptr && observer != nullptr) net::server_trace_users.fetch_add(1, kRelaxed);
  if (before != nullptr && observer == nullptr) net::server_trace_users.fetch_sub(1, kRelaxed);
}

MetricsTable::Clock::time_point MetricsTable::StartTiming(MetricsThreadState& state) noexcept {
  if (!state.assigned) AssignStripe(state);
  if (observer_.load(kRelaxed) != nullptr) net::BeginServerTrace();
  return Clock::now();
}

void MetricsTable::BeginTrace() noexcept {
  if (observer_.load(kRelaxed) != nullptr) net::BeginServerTrace();
}

void MetricsTable::RecordLatency(const Call& call, std::uint64_t latency_ns) noexcept {
  OpCounters& c = *call.counters;
  Add(c.timed_calls, 1, call.owned);
  Add(c.total_latency_ns, latency_ns, call.owned);
  Add(c.latency[LatencyHistogram::BucketOf(latency_ns)], 1, call.owned);
  RaiseTo(c.max_latency_ns, latency_ns);
}

void MetricsTable::FinishTimed(const Call& call, const Status& status) noexcept {
  const std::uint64_t ns = Nanos(Clock::now() - call.start);
  RecordLatency(call, ns);
  if (observer_.load(kRelaxed) != nullptr)
    Notify(call, 1, status, status.IsError() ? 1 : 0, std::chrono::nanoseconds(ns));
}

void MetricsTable::Finish(const Call& call, const OutcomeTally& tally) noexcept {
  OpCounters& c = *call.counters;
  Add(c.calls, 1, call.owned);
  for (std::size_t i = 0; i < kStatusCodeCount; ++i) {
    if (tally.by_status[i] != 0) Add(c.by_status[i], tally.by_status[i], call.owned);
  }
  if (call.start == Clock::time_point{}) return;
  const std::uint64_t ns = Nanos(Clock::now() - call.start);
  RecordLatency(call, ns);
  if (observer_.load(kRelaxed) != nullptr) {
    Notify(call, tally.keys(), tally.Summary(), tally.errors(), std::chrono::nanoseconds(ns));
  }
}

void MetricsTable::Record(CacheOp op, Clock::time_point start, const Status& status) noexcept {
  // Not Begin(): that would start a new server trace, losing the exchanges the
  // caller's call already made (BeginTrace() started its trace).
  MetricsThreadState& state = metrics_thread_state;
  if (!state.assigned) AssignStripe(state);
  const Call call{&(*stripes_)[state.stripe][static_cast<std::size_t>(op)], start, state.owned, op};
  Finish(call, status);
}

void MetricsTable::Notify(const Call& call, std::size_t keys, const Status& status,
                          std::size_t failed, std::chrono::nanoseconds duration) noexcept {
  CacheObserver* observer = observer_.load(std::memory_order_acquire);
  if (observer == nullptr) return;
  const net::NotedServerText server = net::EndServerTrace();
  const OperationEvent event{call.op, keys, store_, server.view(), status, failed, duration};
  observer->OnOperation(event);
}

Metrics MetricsTable::RawSnapshot() const {
  Metrics out;
  for (const Row& row : *stripes_) {
    for (std::size_t op = 0; op < kCacheOpCount; ++op) {
      const OpCounters& c = row[op];
      OpMetrics& m = out[op];
      m.calls += c.calls.load(kRelaxed);
      for (std::size_t i = 0; i < kStatusCodeCount; ++i)
        m.by_status[i] += c.by_status[i].load(kRelaxed);
      LatencyHistogram stripe;
      for (std::size_t i = 0; i < LatencyHistogram::kBuckets; ++i) {
        stripe.SetBucket(i, c.latency[i].load(kRelaxed));
      }
      stripe.SetTotals(c.timed_calls.load(kRelaxed), c.total_latency_ns.load(kRelaxed),
                       c.max_latency_ns.load(kRelaxed));
      m.latency.Merge(stripe);
    }
  }
  return out;
}

Metrics MetricsTable::Snapshot() const {
  if (!counting_) return Metrics{};  // what an observer made it count is not shown
  // Read under the lock Reset() takes, so the baseline is never newer than the
  // counters it is subtracted from.
  std::lock_guard<std::mutex> lock(baseline_mutex_);
  Metrics out = RawSnapshot();
  for (std::size_t op = 0; op < kCacheOpCount; ++op) {
    OpMetrics& m = out[op];
    const OpMetrics& base = baseline_[op];
    m.keys = m.hits = m.misses = m.errors = 0;
    for (std::size_t i = 0; i < kStatusCodeCount; ++i) {
      const std::uint64_t n = m.by_status[i] -= base.by_status[i];
      m.keys += n;
      const Status status = Status::FromCode(static_cast<StatusCode>(i), {});
      if (status.ok()) {
        m.hits += n;
      } else if (status.IsError()) {
        m.errors += n;
      } else {
        m.misses += n;
      }
    }
    m.calls = IsBatch(op) ? m.calls - base.calls : m.keys;
    // Counts and sums subtract; the maximum was itself reset to zero.
    LatencyHistogram since;
    for (std::size_t i = 0; i < LatencyHistogram::kBuckets; ++i) {
      since.SetBucket(i, m.latency.bucket(i) - base.latency.bucket(i));
    }
    since.SetTotals(m.latency.count() - base.latency.count(),
                    m.latency.sum_ns() - base.latency.sum_ns(), m.latency.max_ns());
    m.latency = since;
  }
  return out;
}

void MetricsTable::Reset() {
  // Counters keep running (their only writers are the counting threads); what
  // they held at this moment becomes the zero of later snapshots.
  std::lock_guard<std::mutex> lock(baseline_mutex_);
  baseline_ = RawSnapshot();
  for (Row& row : *stripes_) {
    for (OpCounters& c : row) c.max_latency_ns.store(0, kRelaxed);
  }
}

}  // namespace cachet
