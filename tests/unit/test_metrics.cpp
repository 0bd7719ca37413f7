// Metrics: every operation's counts by outcome, batches per key and per call,
// GetOrCompute once with its loads apart, latency histograms and percentiles,
// the observer's events, and the Prometheus and JSON output.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cachet/backend.h"
#include "cachet/cache.h"
#include "cachet/metrics.h"
#include "cachet/metrics_format.h"
#include "cachet/observer.h"
#include "support/fake_backend.h"

namespace {

using cachet::Backend;
using cachet::Cache;
using cachet::CacheOp;
using cachet::Capabilities;
using cachet::Item;
using cachet::ItemView;
using cachet::LatencyHistogram;
using cachet::OpMetrics;
using cachet::Status;
using cachet::StatusCode;
using cachet::StoreMode;
using cachet::Ttl;

// A map that answers a given Status instead while FailWith() is in force.
class MapBackend : public cachet::test::FakeBackend {
 public:
  MapBackend() : FakeBackend(Options::Named("map")) {}
};

std::unique_ptr<Cache> MakeCache(std::shared_ptr<Backend> backend, bool metrics = true) {
  auto codec = cachet::Codec::Create(cachet::CodecOptions{});
  REQUIRE(codec.ok());
  return std::make_unique<Cache>(std::move(backend), *codec,
                                 cachet::CacheOptions{"", Ttl{0}, metrics});
}

// Runs `calls` on a new thread: its first calls of each operation are all timed,
// whatever this thread did before.
template <class Calls>
void OnFreshThread(Calls calls) {
  std::thread(calls).join();
}

OpMetrics Of(const Cache& cache, CacheOp op) {
  return cache.metrics()[static_cast<std::size_t>(op)];
}

// calls, hits, misses, errors of one operation, for compact checks.
struct OpCounts {
  std::uint64_t calls, hits, misses, errors;
  bool operator==(const OpCounts&) const = default;
};
OpCounts CountsOf(const Cache& cache, CacheOp op) {
  const OpMetrics m = Of(cache, op);
  return {m.calls, m.hits, m.misses, m.errors};
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<OpCounts> {
  static std::string convert(const OpCounts& c) {
    return "{calls " + std::to_string(c.calls) + ", hits " + std::to_string(c.hits) + ", misses " +
           std::to_string(c.misses) + ", errors " + std::to_string(c.errors) + "}";
  }
};
}  // namespace Catch

TEST_CASE("every single-key operation counts its hits and misses", "[metrics]") {
  auto backend = std::make_shared<MapBackend>();
  auto cache = MakeCache(backend);
  CHECK(cache->Set("k", std::string("1")).ok());
  CHECK(cache->Add("k", std::string("2")).IsNotStored());
  CHECK(cache->Add("new", std::string("2")).ok());
  CHECK(cache->Replace("k", std::string("3")).ok());
  CHECK(cache->Replace("absent", std::string("3")).IsNotStored());
  CHECK(cache->Append("k", "0").ok());
  CHECK(cache->Append("absent", "0").IsNotStored());
  CHECK(cache->Prepend("k", "1").ok());
  CHECK(cache->Get("k").hit());
  CHECK(cache->Get("absent").miss());
  auto versioned = cache->Gets<std::string>("k");
  REQUIRE(versioned.hit());
  CHECK(cache->Gets<std::string>("absent").miss());
  CHECK(cache->Cas("k", std::string("7"), versioned->cas).ok());
  CHECK(cache->Cas("k", std::string("8"), versioned->cas).IsExists());
  CHECK(cache->Incr("k", 2).ok());
  CHECK(cache->Incr("absent").status().IsNotFound());
  CHECK(cache->Decr("k", 1).ok());
  CHECK(cache->Touch("k", Ttl{5}).ok());
  CHECK(cache->Touch("absent", Ttl{5}).IsNotFound());
  CHECK(cache->Remove("k").ok());
  CHECK(cache->Remove("k").IsNotFound());
  CHECK(cache->Flush().ok());
  CHECK(cache->Stats().ok());

  CHECK(CountsOf(*cache, CacheOp::kSet) == OpCounts{1, 1, 0, 0});
  CHECK(CountsOf(*cache, CacheOp::kAdd) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kReplace) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kAppend) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kPrepend) == OpCounts{1, 1, 0, 0});
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kGets) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kCas) == OpCounts{2, 1, 1, 0});
  CHECK(Of(*cache, CacheOp::kCas).count(StatusCode::kExists) == 1);
  CHECK(CountsOf(*cache, CacheOp::kIncr) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kDecr) == OpCounts{1, 1, 0, 0});
  CHECK(CountsOf(*cache, CacheOp::kTouch) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kRemove) == OpCounts{2, 1, 1, 0});
  CHECK(Of(*cache, CacheOp::kRemove).count(StatusCode::kNotFound) == 1);
  CHECK(CountsOf(*cache, CacheOp::kFlush) == OpCounts{1, 1, 0, 0});
  CHECK(CountsOf(*cache, CacheOp::kStats) == OpCounts{1, 1, 0, 0});
  // Nothing else was counted on the side.
  CHECK(CountsOf(*cache, CacheOp::kGetMulti) == OpCounts{0, 0, 0, 0});
  CHECK(CountsOf(*cache, CacheOp::kGetOrCompute) == OpCounts{0, 0, 0, 0});
  const cachet::Metrics all = cache->metrics();
  for (std::size_t i = 0; i < cachet::kCacheOpCount; ++i) {
    const OpMetrics& m = all[i];
    CHECK(m.keys == m.calls);  // one key per single-key call
  }
}

TEST_CASE("every single-key operation counts its errors by status code", "[metrics]") {
  auto backend = std::make_shared<MapBackend>();
  auto cache = MakeCache(backend);
  backend->FailWith(Status::Unavailable("down"));
  (void)cache->Get("k");
  (void)cache->Gets<std::string>("k");
  (void)cache->Set("k", std::string("v"));
  (void)cache->Add("k", std::string("v"));
  (void)cache->Replace("k", std::string("v"));
  (void)cache->Append("k", "v");
  (void)cache->Prepend("k", "v");
  (void)cache->Cas("k", std::string("v"), 1);
  (void)cache->Remove("k");
  (void)cache->Incr("k");
  (void)cache->Decr("k");
  (void)cache->Touch("k", Ttl{1});
  (void)cache->Flush();
  (void)cache->Stats();
  backend->FailWith(Status::Timeout("slow"));
  (void)cache->Get("k");
  backend->Recover();
  (void)cache->Get("");                              // an empty key: invalid_argument
  (void)cache->Set("k", std::string("v"), Ttl{-1});  // a negative TTL: invalid_argument

  for (CacheOp op : {CacheOp::kGets, CacheOp::kAdd, CacheOp::kReplace, CacheOp::kAppend,
                     CacheOp::kPrepend, CacheOp::kCas, CacheOp::kRemove, CacheOp::kIncr,
                     CacheOp::kDecr, CacheOp::kTouch, CacheOp::kFlush, CacheOp::kStats}) {
    INFO(cachet::CacheOpName(op));
    CHECK(CountsOf(*cache, op) == OpCounts{1, 0, 0, 1});
    CHECK(Of(*cache, op).count(StatusCode::kUnavailable) == 1);
  }
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{3, 0, 0, 3});
  CHECK(Of(*cache, CacheOp::kGet).count(StatusCode::kUnavailable) == 1);
  CHECK(Of(*cache, CacheOp::kGet).count(StatusCode::kTimeout) == 1);
  CHECK(Of(*cache, CacheOp::kGet).count(StatusCode::kInvalidArgument) == 1);
  CHECK(CountsOf(*cache, CacheOp::kSet) == OpCounts{2, 0, 0, 2});
  CHECK(Of(*cache, CacheOp::kSet).count(StatusCode::kInvalidArgument) == 1);
}

TEST_CASE("a value that does not decode is an error, not a hit", "[metrics]") {
  auto backend = std::make_shared<MapBackend>();
  auto cache = MakeCache(backend);
  backend->Put("n", "not a number", 0);
  auto number = cache->Get<std::int64_t>("n");
  CHECK(number.error());
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{1, 0, 0, 1});
  CHECK(Of(*cache, CacheOp::kGet).count(number.status().code()) == 1);
  CHECK(cache->Gets<std::int64_t>("n").error());
  CHECK(CountsOf(*cache, CacheOp::kGets) == OpCounts{1, 0, 0, 1});

  // In a batch too: each key by its own outcome, after decoding.
  backend->Put("ok", "7", 0);
  auto lookups = cache->GetMulti<std::int64_t>({"n", "ok", "absent"});
  CHECK(lookups[0].error());
  CHECK(lookups[1].hit());
  CHECK(CountsOf(*cache, CacheOp::kGetMulti) == OpCounts{1, 1, 1, 1});
}

TEST_CASE("batches count one call and each key's outcome", "[metrics]") {
  auto backend = std::make_shared<MapBackend>();
  auto cache = MakeCache(backend);
  const std::vector<std::pair<std::string, std::string>> entries = {{"a", "1"}, {"b", "2"}};
  (void)cache->SetMulti(entries);
  (void)cache->GetMulti({"a", "b", "c", ""});
  std::vector<std::string_view> keys = {"a", "x", "y"};
  std::vector<std::string> values;
  std::vector<Status> statuses;
  cache->GetMultiInto(keys, &values, &statuses);
  std::vector<Item> items;
  cache->GetItemsInto(keys, &items, &statuses);
  (void)cache->RemoveMulti({"a", "zz"});

  CHECK(CountsOf(*cache, CacheOp::kSetMulti) == OpCounts{1, 2, 0, 0});
  // get_multi: 3 calls; keys: a b c "", then a x y twice.
  CHECK(CountsOf(*cache, CacheOp::kGetMulti) == OpCounts{3, 4, 5, 1});
  const OpMetrics get_multi = Of(*cache, CacheOp::kGetMulti);
  CHECK(get_multi.keys == 10);
  CHECK(get_multi.count(StatusCode::kInvalidArgument) == 1);
  CHECK(get_multi.count(StatusCode::kNotFound) == 5);
  CHECK(get_multi.latency.count() == 3);  // one duration per call
  CHECK(CountsOf(*cache, CacheOp::kRemoveMulti) == OpCounts{1, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{0, 0, 0, 0});

  backend->FailWith(Status::IoError("reset"));
  (void)cache->GetMulti({"a", "b"});
  CHECK(Of(*cache, CacheOp::kGetMulti).count(StatusCode::kIoError) == 2);
}

TEST_CASE("SetMulti counts the values it refuses before sending as keys of its call",
          "[metrics]") {
  cachet::CodecOptions small;
  small.max_value_size = 4;
  auto codec = cachet::Codec::Create(small);
  REQUIRE(codec.ok());
  auto backend = std::make_shared<MapBackend>();
  Cache cache(backend, *codec, cachet::CacheOptions{});
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"a", "1"}, {"big", "too large"}, {"b", "2"}};
  const std::vector<Status> statuses = cache.SetMulti(entries);
  REQUIRE(statuses.size() == 3);
  CHECK(statuses[0].ok());
  CHECK(statuses[1].code() == StatusCode::kTooLarge);
  CHECK(statuses[2].ok());
  CHECK(CountsOf(cache, CacheOp::kSetMulti) == OpCounts{1, 2, 0, 1});
  CHECK(Of(cache, CacheOp::kSetMulti).count(StatusCode::kTooLarge) == 1);
}

TEST_CASE("GetOrCompute counts once, and its loads apart", "[metrics][load]") {
  auto backend = std::make_shared<MapBackend>();
  auto cache = MakeCache(backend);
  int loads = 0;
  auto loader = [&] {
    ++loads;
    return cachet::Result<std::string>(std::string("value"));
  };
  CHECK(cache->GetOrCompute<std::string>("k", loader).hit());  // a miss: loads
  CHECK(cache->GetOrCompute<std::string>("k", loader).hit());  // a hit
  REQUIRE(loads == 1);
  CHECK(CountsOf(*cache, CacheOp::kGetOrCompute) == OpCounts{2, 1, 1, 0});
  CHECK(CountsOf(*cache, CacheOp::kLoad) == OpCounts{1, 1, 0, 0});
  // Its reads and its write are not counted again.
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{0, 0, 0, 0});
  CHECK(CountsOf(*cache, CacheOp::kSet) == OpCounts{0, 0, 0, 0});

  // A loader that fails: the call missed, the load failed with its code.
  auto failing = [] { return cachet::Result<std::string>(Status::Timeout("database")); };
  CHECK(cache->GetOrCompute<std::string>("other", failing).error());
  CHECK(CountsOf(*cache, CacheOp::kGetOrCompute) == OpCounts{3, 1, 2, 0});
  CHECK(CountsOf(*cache, CacheOp::kLoad) == OpCounts{2, 1, 0, 1});
  CHECK(Of(*cache, CacheOp::kLoad).count(StatusCode::kTimeout) == 1);

  // A store that is down: the read's error, and the load's write-back error;
  // the loader's value is still returned.
  backend->FailWith(Status::Unavailable("down"));
  CHECK(cache->GetOrCompute<std::string>("k", loader).hit());
  CHECK(CountsOf(*cache, CacheOp::kGetOrCompute) == OpCounts{4, 1, 2, 1});
  CHECK(Of(*cache, CacheOp::kGetOrCompute).count(StatusCode::kUnavailable) == 1);
  CHECK(CountsOf(*cache, CacheOp::kLoad) == OpCounts{3, 1, 0, 2});
  CHECK(Of(*cache, CacheOp::kLoad).count(StatusCode::kUnavailable) == 1);
  CHECK(Of(*cache, CacheOp::kGetOrCompute).latency.count() == 4);
}

TEST_CASE("ResetMetrics starts every count again from zero", "[metrics]") {
  auto cache = MakeCache(std::make_shared<MapBackend>());
  OnFreshThread([&] {
    for (int i = 0; i < 10; ++i) (void)cache->Get("absent");
  });
  cache->ResetMetrics();
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{0, 0, 0, 0});
  CHECK(Of(*cache, CacheOp::kGet).latency.count() == 0);
  CHECK(Of(*cache, CacheOp::kGet).latency.PercentileNs(0.5) == 0);
  OnFreshThread([&] { (void)cache->Get("absent"); });
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{1, 0, 1, 0});
  CHECK(Of(*cache, CacheOp::kGet).latency.count() == 1);
}

TEST_CASE("threads count apart and their counts add up", "[metrics]") {
  auto cache = MakeCache(std::make_shared<MapBackend>());
  (void)cache->Set("k", std::string("v"));
  // More threads than owned stripes, so some share the common one.
  constexpr int kThreads = 12;
  constexpr int kCalls = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) (void)cache->Incr("absent");
    });
  }
  for (std::thread& t : threads) t.join();
  const OpMetrics incr = Of(*cache, CacheOp::kIncr);
  CHECK(incr.calls == kThreads * kCalls);
  CHECK(incr.misses == kThreads * kCalls);
  // Each thread timed its first 64 calls, then one in 64 of the rest (64, 128, ... 448).
  CHECK(incr.latency.count() == kThreads * (64 + 7));
}

namespace {

// Calls Get `calls` times from its thread's thread-local destructors, after it
// tells `started`.
struct GetsAtThreadExit {
  Cache* cache = nullptr;
  std::atomic<bool>* started = nullptr;
  int calls = 0;
  ~GetsAtThreadExit() {
    if (cache == nullptr) return;
    started->store(true);
    for (int i = 0; i < calls; ++i) (void)cache->Get("absent");
  }
};
thread_local GetsAtThreadExit gets_at_thread_exit;

}  // namespace

TEST_CASE("a thread counting from its thread-local destructors shares no stripe", "[metrics]") {
  auto cache = MakeCache(std::make_shared<MapBackend>());
  constexpr int kCalls = 200000;
  std::atomic<bool> started{false};
  std::thread ending([&] {
    // Made before the thread's stripe is assigned, so destroyed after its
    // stripe is given back: another thread may own that stripe by then.
    gets_at_thread_exit.cache = cache.get();
    gets_at_thread_exit.started = &started;
    gets_at_thread_exit.calls = kCalls;
    (void)cache->Get("absent");  // assigns the stripe
  });
  std::thread counting([&] {
    // Bounded wait (10 s) for the other thread's destructor to start.
    for (int i = 0; i < 10000 && !started.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (int i = 0; i < kCalls; ++i) (void)cache->Get("absent");  // takes the freed stripe
  });
  ending.join();
  counting.join();
  REQUIRE(started.load());
  CHECK(Of(*cache, CacheOp::kGet).misses == 2 * kCalls + 1);
}

TEST_CASE("snapshots taken while another thread resets never go below zero", "[metrics]") {
  auto cache = MakeCache(std::make_shared<MapBackend>());
  std::atomic<bool> done{false};
  std::thread counting([&] {
    for (int i = 0; i < 200000 && !done.load(std::memory_order_relaxed); ++i) {
      (void)cache->Get("absent");
    }
  });
  std::thread resetting([&] {
    for (int i = 0; i < 2000; ++i) cache->ResetMetrics();
  });
  std::uint64_t largest = 0;
  for (int i = 0; i < 2000; ++i) {
    const OpMetrics get = Of(*cache, CacheOp::kGet);
    largest = std::max({largest, get.calls, get.misses, get.latency.count()});
  }
  resetting.join();
  done.store(true);
  counting.join();
  CHECK(largest <= 200000);  // a wrapped subtraction is near 2^64
}

TEST_CASE("metrics off counts nothing", "[metrics]") {
  auto cache = MakeCache(std::make_shared<MapBackend>(), /*metrics=*/false);
  CHECK(cache->Get("absent").miss());
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{0, 0, 0, 0});
}

TEST_CASE("the latency histogram's buckets, percentiles and merging", "[metrics][histogram]") {
  // Exact below 4 ns, then four buckets per power of two.
  CHECK(LatencyHistogram::BucketOf(0) == 0);
  CHECK(LatencyHistogram::BucketOf(3) == 3);
  CHECK(LatencyHistogram::BucketOf(4) == 4);
  CHECK(LatencyHistogram::BucketOf(7) == 7);
  CHECK(LatencyHistogram::BucketOf(8) == 8);
  CHECK(LatencyHistogram::BucketOf(9) == 8);
  CHECK(LatencyHistogram::BucketOf(10) == 9);
  CHECK(LatencyHistogram::BucketOf(~std::uint64_t{0}) == LatencyHistogram::kBuckets - 1);
  for (std::size_t i = 0; i + 1 < LatencyHistogram::kBuckets; ++i) {
    INFO(i);
    CHECK(LatencyHistogram::BucketUpperNs(i) == LatencyHistogram::BucketLowerNs(i + 1));
    CHECK(LatencyHistogram::BucketOf(LatencyHistogram::BucketLowerNs(i)) == i);
    CHECK(LatencyHistogram::BucketOf(LatencyHistogram::BucketUpperNs(i) - 1) == i);
    // Each bucket is within 25 % of its lower bound.
    CHECK(LatencyHistogram::BucketUpperNs(i) - LatencyHistogram::BucketLowerNs(i) <=
          std::max<std::uint64_t>(1, LatencyHistogram::BucketLowerNs(i) / 4));
  }

  LatencyHistogram h;
  CHECK(h.PercentileNs(0.5) == 0);
  for (std::uint64_t ns = 1; ns <= 1000; ++ns) h.Record(ns * 1000);  // 1 us .. 1 ms
  CHECK(h.count() == 1000);
  CHECK(h.max_ns() == 1000000);
  CHECK(h.sum_ns() == 500500000);
  const auto near = [](std::uint64_t got, double want) {
    return static_cast<double>(got) >= want && static_cast<double>(got) <= want * 1.25;
  };
  CHECK(near(h.PercentileNs(0.5), 500000));
  CHECK(near(h.PercentileNs(0.9), 900000));
  CHECK(h.PercentileNs(0.99) >= 990000);
  CHECK(h.PercentileNs(0.999) <= 1000000);  // never above the maximum
  CHECK(h.PercentileNs(1.0) == 1000000);
  CHECK(h.CountBelow(1 << 20) == 1000);
  CHECK(h.CountBelow(1 << 10) == 1);  // 1000 ns
  CHECK(h.CountBelow(1 << 9) == 0);

  LatencyHistogram other;
  other.Record(5000000);
  other.Merge(h);
  CHECK(other.count() == 1001);
  CHECK(other.max_ns() == 5000000);
  CHECK(other.PercentileNs(1.0) == 5000000);
  CHECK(near(other.PercentileNs(0.5), 500000));
}

namespace {

struct Recorded {
  CacheOp op;
  std::size_t keys;
  std::string store;
  std::string server;
  StatusCode code;
  std::size_t failed;
  std::chrono::nanoseconds duration;
};

class RecordingObserver : public cachet::CacheObserver {
 public:
  void OnOperation(const cachet::OperationEvent& e) noexcept override {
    events.push_back({e.op, e.keys, std::string(e.store), std::string(e.server), e.status.code(),
                      e.keys_failed, e.duration});
  }
  std::vector<Recorded> events;
};

}  // namespace

TEST_CASE("an observer sees every call with its keys, store, outcome and duration",
          "[metrics][observer]") {
  auto backend = std::make_shared<MapBackend>();
  auto cache = MakeCache(backend);
  auto observer = std::make_shared<RecordingObserver>();
  (void)cache->Get("before");  // no observer yet: not seen
  cache->SetObserver(observer);
  (void)cache->Set("k", std::string("v"));
  (void)cache->Get("absent");
  (void)cache->GetMulti({"k", "absent", ""});
  (void)cache->GetOrCompute<std::string>("computed",
                                         [] { return cachet::Result<std::string>("x"); });
  backend->FailWith(Status::Timeout("slow"));
  (void)cache->Remove("k");
  backend->Recover();
  cache->SetObserver(nullptr);
  (void)cache->Get("after");  // removed: not seen

  const auto& e = observer->events;
  REQUIRE(e.size() == 6);
  CHECK(e[0].op == CacheOp::kSet);
  CHECK(e[0].keys == 1);
  CHECK(e[0].store == "map");
  CHECK(e[0].server.empty());  // a store without servers
  CHECK(e[0].code == StatusCode::kOk);
  CHECK(e[1].op == CacheOp::kGet);
  CHECK(e[1].code == StatusCode::kNotFound);
  CHECK(e[1].failed == 0);
  CHECK(e[2].op == CacheOp::kGetMulti);
  CHECK(e[2].keys == 3);
  CHECK(e[2].code == StatusCode::kInvalidArgument);  // the batch's first error
  CHECK(e[2].failed == 1);
  CHECK(e[3].op == CacheOp::kLoad);  // the load ends before the call around it
  CHECK(e[4].op == CacheOp::kGetOrCompute);
  CHECK(e[4].code == StatusCode::kNotFound);  // it missed, then loaded
  CHECK(e[4].duration >= e[3].duration);
  CHECK(e[5].op == CacheOp::kRemove);
  CHECK(e[5].code == StatusCode::kTimeout);
  CHECK(e[5].failed == 1);
  // With an observer every call is timed, beside the counting.
  CHECK(Of(*cache, CacheOp::kGet).calls == 3);
}

TEST_CASE("an observer works with metrics off, and counts nothing", "[metrics][observer]") {
  auto cache = MakeCache(std::make_shared<MapBackend>(), /*metrics=*/false);
  auto observer = std::make_shared<RecordingObserver>();
  cache->SetObserver(observer);
  (void)cache->Get("absent");
  REQUIRE(observer->events.size() == 1);
  CHECK(observer->events[0].code == StatusCode::kNotFound);
  CHECK(CountsOf(*cache, CacheOp::kGet) == OpCounts{0, 0, 0, 0});
}

TEST_CASE("WritePrometheus writes the exposition format", "[metrics][prometheus]") {
  auto backend = std::make_shared<MapBackend>();
  auto cache = MakeCache(backend);
  OnFreshThread([&] {
    (void)cache->Set("k", std::string("v"));
    (void)cache->Get("k");
    (void)cache->Get("nope");
    backend->FailWith(Status::Timeout("slow"));
    (void)cache->Get("k");
  });
  std::ostringstream out;
  cachet::WritePrometheus(*cache, out);
  const std::string text = out.str();
  const auto has = [&](const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  };
  CHECK(has("cachet_info{store=\"map\"} 1"));
  CHECK(has("# TYPE cachet_operations_total counter"));
  CHECK(has("cachet_calls_total{op=\"get\"} 3"));
  CHECK(has("cachet_operations_total{op=\"get\",result=\"hit\"} 1"));
  CHECK(has("cachet_operations_total{op=\"get\",result=\"miss\"} 1"));
  CHECK(has("cachet_operations_total{op=\"get\",result=\"error\"} 1"));
  CHECK(has("cachet_operations_total{op=\"set\",result=\"hit\"} 1"));
  CHECK(has("cachet_operations_total{op=\"get_or_compute\",result=\"hit\"} 0"));
  CHECK(has("cachet_operation_errors_total{op=\"get\",code=\"timeout\"} 1"));
  CHECK(has("# TYPE cachet_operation_duration_seconds histogram"));
  CHECK(has("cachet_operation_duration_seconds_bucket{op=\"get\",le=\"+Inf\"} 3"));
  CHECK(has("cachet_operation_duration_seconds_count{op=\"get\"} 3"));
  CHECK(has("cachet_operation_duration_seconds_bucket{op=\"get\",le=\"68.719476735\"} 3"));
  CHECK(text.find("cachet_operation_duration_quantile_seconds{op=\"get\",quantile=\"0.99\"} ") !=
        std::string::npos);
  CHECK(text.find("_bucket{op=\"remove\"") == std::string::npos);  // never called: no histogram
  // Every line is a comment or "name{labels} value".
  std::istringstream lines(text);
  std::string line;
  int samples = 0;
  while (std::getline(lines, line)) {
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) continue;
    INFO(line);
    REQUIRE(line.starts_with("cachet_"));
    const std::size_t close = line.rfind("} ");
    REQUIRE(close != std::string::npos);
    CHECK(line.find('{') < close);
    ++samples;
  }
  CHECK(samples > 50);
}

TEST_CASE("WritePrometheus and WriteMetricsJson report each server's health",
          "[metrics][prometheus][health]") {
  cachet::Metrics metrics{};
  std::vector<cachet::ServerHealth> servers(2);
  servers[0].server = "127.0.0.1:11211";
  servers[0].requests = 10;
  servers[0].errors = 3;
  servers[0].timeouts = 2;
  servers[0].io_errors = 1;
  servers[0].connects = 4;
  servers[1].server = "db\"2\":1";  // escaped in a label
  servers[1].dead = true;
  servers[1].marked_dead = 1;
  std::ostringstream out;
  cachet::WritePrometheus("memcached", metrics, servers, out);
  const std::string text = out.str();
  const auto has = [&](const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  };
  CHECK(has("cachet_server_up{server=\"127.0.0.1:11211\"} 1"));
  CHECK(has("cachet_server_up{server=\"db\\\"2\\\":1\"} 0"));
  CHECK(has("cachet_server_requests_total{server=\"127.0.0.1:11211\"} 10"));
  CHECK(has("cachet_server_errors_total{server=\"127.0.0.1:11211\",kind=\"timeout\"} 2"));
  CHECK(has("cachet_server_errors_total{server=\"127.0.0.1:11211\",kind=\"io\"} 1"));
  CHECK(has("cachet_server_errors_total{server=\"127.0.0.1:11211\",kind=\"other\"} 0"));
  CHECK(has("cachet_server_connects_total{server=\"127.0.0.1:11211\"} 4"));
  CHECK(has("cachet_server_marked_dead_total{server=\"db\\\"2\\\":1\"} 1"));

  std::ostringstream json_out;
  cachet::WriteMetricsJson("memcached", metrics, servers, json_out);
  const nlohmann::json json = nlohmann::json::parse(json_out.str());
  CHECK(json["store"] == "memcached");
  CHECK(json["operations"].empty());
  REQUIRE(json["servers"].size() == 2);
  CHECK(json["servers"][0]["requests"] == 10);
  CHECK(json["servers"][0]["up"] == true);
  CHECK(json["servers"][1]["up"] == false);
  CHECK(json["servers"][1]["server"] == "db\"2\":1");
}

TEST_CASE("WritePrometheus histograms count up to le and total their buckets, labels escape",
          "[metrics][prometheus]") {
  cachet::Metrics metrics{};
  LatencyHistogram& h = metrics[static_cast<std::size_t>(CacheOp::kGet)].latency;
  h.SetBucket(LatencyHistogram::BucketOf(200), 1);
  h.SetBucket(LatencyHistogram::BucketOf(256), 2);  // 256 ns is above le 255 ns
  // A snapshot's total may lag its buckets: the exposition must not.
  h.SetTotals(1, 712, 256);
  std::vector<cachet::ServerHealth> servers(1);
  servers[0].server = "back\\slash\nnewline";
  servers[0].errors = 1;
  servers[0].timeouts = 2;  // a third-party store's inconsistent figures
  std::ostringstream out;
  cachet::WritePrometheus("st\\ore\n", metrics, servers, out);
  const std::string text = out.str();
  const auto has = [&](const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  };
  CHECK(has("cachet_operation_duration_seconds_bucket{op=\"get\",le=\"0.000000255\"} 1"));
  CHECK(has("cachet_operation_duration_seconds_bucket{op=\"get\",le=\"0.000001023\"} 3"));
  CHECK(has("cachet_operation_duration_seconds_bucket{op=\"get\",le=\"+Inf\"} 3"));
  CHECK(has("cachet_operation_duration_seconds_count{op=\"get\"} 3"));
  CHECK(has("cachet_info{store=\"st\\\\ore\\n\"} 1"));
  CHECK(has("cachet_server_up{server=\"back\\\\slash\\nnewline\"} 1"));
  // More kinds than errors: "other" stays at zero rather than wrapping.
  CHECK(has("cachet_server_errors_total{server=\"back\\\\slash\\nnewline\",kind=\"other\"} 0"));
  // Bucket counts never fall as `le` rises.
  std::istringstream lines(text);
  std::string line;
  std::uint64_t previous = 0;
  int buckets = 0;
  while (std::getline(lines, line)) {
    if (!line.starts_with("cachet_operation_duration_seconds_bucket{op=\"get\"")) continue;
    const std::uint64_t n = std::stoull(line.substr(line.rfind(' ') + 1));
    CHECK(n >= previous);
    previous = n;
    ++buckets;
  }
  CHECK(buckets == 16);
}

TEST_CASE("WriteMetricsJson has every count and the percentiles", "[metrics][json]") {
  auto cache = MakeCache(std::make_shared<MapBackend>());
  OnFreshThread([&] {
    (void)cache->Set("k", std::string("v"));
    (void)cache->Get("k");
    (void)cache->Get("nope");
  });
  std::ostringstream out;
  cachet::WriteMetricsJson(*cache, out);
  const nlohmann::json json = nlohmann::json::parse(out.str());
  const nlohmann::json& get = json["operations"]["get"];
  CHECK(get["calls"] == 2);
  CHECK(get["keys"] == 2);
  CHECK(get["hits"] == 1);
  CHECK(get["misses"] == 1);
  CHECK(get["errors"] == 0);
  CHECK(get["by_status"]["ok"] == 1);
  CHECK(get["by_status"]["not_found"] == 1);
  CHECK(get["latency_ns"]["count"] == 2);
  CHECK(get["latency_ns"]["p50"] <= get["latency_ns"]["p99"]);
  CHECK(get["latency_ns"]["p999"] <= get["latency_ns"]["max"]);
  CHECK_FALSE(json["operations"].contains("remove"));
  CHECK(json["servers"].empty());
}
