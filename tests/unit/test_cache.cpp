// Cache facade: namespacing, default TTL, metrics, hit/miss/error, batches and
// GetOrCompute's stampede protection, over small in-test fake backends.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "support/fake_backend.h"

using cachet::Backend;
using cachet::Cache;
using cachet::CacheOp;
using cachet::CacheOptions;
using cachet::Capabilities;
using cachet::Codec;
using cachet::CodecOptions;
using cachet::Item;
using cachet::ItemView;
using cachet::Operation;
using cachet::Result;
using cachet::Status;
using cachet::StoreMode;
using cachet::Ttl;
using cachet::WriteOptions;

namespace {

using cachet::test::FakeBackend;

// A map behind a mutex that remembers what it was asked: keys, TTLs, batches.
class RecordingBackend : public FakeBackend {
 public:
  RecordingBackend() : FakeBackend(Options::Named("recording")) {}
};

// A store whose server is down: every call fails with kUnavailable.
class FailingBackend : public FakeBackend {
 public:
  FailingBackend() : FakeBackend(Options::Named("failing")) {
    FailWith(Status::Unavailable("down"));
  }
};

std::shared_ptr<const Codec> DefaultCodec() {
  auto codec = Codec::Create(CodecOptions{});
  REQUIRE(codec.ok());
  return *codec;
}

std::unique_ptr<Cache> MakeCache(std::shared_ptr<Backend> backend, CacheOptions options = {}) {
  return std::make_unique<Cache>(std::move(backend), DefaultCodec(), std::move(options));
}

const cachet::OpMetrics& MetricsOf(const cachet::Metrics& m, CacheOp op) {
  return m[static_cast<std::size_t>(op)];
}

}  // namespace

TEST_CASE("the backend sees the namespace prefix and the caller never does", "[cache]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend, CacheOptions{"shop:", Ttl{0}, true});

  REQUIRE(cache->Set("cart", std::string("3 apples")).ok());
  CHECK(backend->Has("shop:cart"));
  CHECK_FALSE(backend->Has("cart"));

  auto hit = cache->Get("cart");
  REQUIRE(hit.hit());
  CHECK(hit.value() == "3 apples");
  REQUIRE(cache->Remove("cart").ok());
  CHECK_FALSE(backend->Has("shop:cart"));
  for (const std::string& key : backend->keys_seen()) CHECK(key.rfind("shop:", 0) == 0);
}

TEST_CASE("a key longer than the inline buffer is prefixed whole", "[cache]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend, CacheOptions{"ns:", Ttl{0}, true});
  const std::string long_key(400, 'k');
  REQUIRE(cache->Set(long_key, std::string("v")).ok());
  CHECK(backend->Has("ns:" + long_key));
  CHECK(cache->Get(long_key).hit());
}

TEST_CASE("multi-key calls prefix every key and send one batch", "[cache]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend, CacheOptions{"m:", Ttl{0}, true});
  std::vector<std::pair<std::string, std::string>> entries = {{"a", "1"}, {"b", "2"}};
  for (const Status& s : cache->SetMulti(entries)) CHECK(s.ok());
  CHECK(backend->Has("m:a"));
  CHECK(backend->Has("m:b"));

  auto found = cache->GetMulti({"a", "missing", "b"});
  REQUIRE(found.size() == 3);
  CHECK(found[0].value() == "1");
  CHECK(found[1].miss());
  CHECK(found[2].value() == "2");

  auto removed = cache->RemoveMulti({"a", "missing"});
  CHECK(removed[0].ok());
  CHECK(removed[1].IsNotFound());
  CHECK(backend->batch_sizes() == std::vector<std::size_t>{2, 3, 2});
}

TEST_CASE("an empty key is invalid and never reaches the store", "[cache]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend);
  CHECK(cache->Get("").status().IsInvalidArgument());
  CHECK(cache->Set("", std::string("v")).IsInvalidArgument());
  CHECK(cache->Remove("").IsInvalidArgument());
  CHECK(cache->Incr("").status().IsInvalidArgument());
  auto multi = cache->GetMulti({"", "x"});
  CHECK(multi[0].status().IsInvalidArgument());
  CHECK(multi[1].miss());
  CHECK(backend->keys_seen() == std::vector<std::string>{"x"});
}

TEST_CASE("a write without a TTL gets the default TTL, an explicit one wins", "[cache]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend, CacheOptions{"", std::chrono::seconds(300), true});
  REQUIRE(cache->Set("k", std::string("v")).ok());
  CHECK(backend->last_ttl() == Ttl{300000});
  REQUIRE(cache->Set("k", std::string("v"), std::chrono::seconds(5)).ok());
  CHECK(backend->last_ttl() == Ttl{5000});
  REQUIRE(cache->Set("k", std::string("v"), Ttl{0}).ok());
  CHECK(backend->last_ttl() == Ttl{0});
}

TEST_CASE("hit, miss and error are told apart", "[cache]") {
  auto good = MakeCache(std::make_shared<RecordingBackend>());
  REQUIRE(good->Set("k", std::int64_t{-42}).ok());
  auto hit = good->Get<std::int64_t>("k");
  REQUIRE(hit.hit());
  CHECK(hit.value() == -42);
  auto miss = good->Get("absent");
  CHECK(miss.miss());
  CHECK_FALSE(miss.error());

  auto down = MakeCache(std::make_shared<FailingBackend>());
  auto error = down->Get("k");
  CHECK(error.error());
  CHECK_FALSE(error.miss());
  CHECK(error.status().IsUnavailable());
}

TEST_CASE("any integer type is written and read, one by one and many at once", "[cache]") {
  auto cache = MakeCache(std::make_shared<RecordingBackend>());
  REQUIRE(cache->Set("small", 7).ok());
  REQUIRE(cache->Set("large", 300).ok());
  CHECK(cache->Get<int>("small").value_or(0) == 7);
  CHECK(cache->Get<std::int8_t>("small").value_or(0) == 7);
  CHECK(cache->Get<std::int8_t>("large").status().IsInvalidArgument());  // does not fit
  CHECK(cache->Gets<unsigned short>("large").value_or({}).value == 300);
  const auto many = cache->GetMulti<unsigned>({"small", "large", "none"});
  REQUIRE(many.size() == 3);
  CHECK(many[0].value_or(0) == 7);
  CHECK(many[1].value_or(0) == 300);
  CHECK(many[2].miss());
}

TEST_CASE("metrics count calls, hits, misses and errors per operation", "[cache][metrics]") {
  auto cache = MakeCache(std::make_shared<RecordingBackend>());
  REQUIRE(cache->Set("k", std::string("v")).ok());
  CHECK(cache->Get("k").hit());
  CHECK(cache->Get("absent").miss());
  CHECK(cache->Add("k", std::string("v")).IsNotStored());
  (void)cache->GetMulti({"k", "absent", "also-absent"});

  cachet::Metrics m = cache->metrics();
  CHECK(MetricsOf(m, CacheOp::kSet).calls == 1);
  CHECK(MetricsOf(m, CacheOp::kSet).hits == 1);
  CHECK(MetricsOf(m, CacheOp::kGet).calls == 2);
  CHECK(MetricsOf(m, CacheOp::kGet).hits == 1);
  CHECK(MetricsOf(m, CacheOp::kGet).misses == 1);
  CHECK(MetricsOf(m, CacheOp::kGet).errors == 0);
  CHECK(MetricsOf(m, CacheOp::kAdd).misses == 1);
  CHECK(MetricsOf(m, CacheOp::kGetMulti).calls == 1);
  CHECK(MetricsOf(m, CacheOp::kGetMulti).hits == 1);
  CHECK(MetricsOf(m, CacheOp::kGetMulti).misses == 2);
  CHECK(MetricsOf(m, CacheOp::kGet).latency.max_ns() <=
        MetricsOf(m, CacheOp::kGet).latency.sum_ns());

  cache->ResetMetrics();
  CHECK(MetricsOf(cache->metrics(), CacheOp::kGet).calls == 0);

  auto down = MakeCache(std::make_shared<FailingBackend>());
  (void)down->Get("k");
  (void)down->Remove("k");
  m = down->metrics();
  CHECK(MetricsOf(m, CacheOp::kGet).errors == 1);
  CHECK(MetricsOf(m, CacheOp::kGet).misses == 0);
  CHECK(MetricsOf(m, CacheOp::kRemove).errors == 1);
}

TEST_CASE("latency is timed on the first 64 calls of an operation per thread, then one in 64",
          "[cache][metrics]") {
  auto cache = MakeCache(std::make_shared<RecordingBackend>());
  // A fresh thread, so the sample starts at its first call whatever ran before.
  constexpr int kCalls = 200;
  std::thread reader([&] {
    (void)cache->Set("k", std::string("v"));
    for (int i = 0; i < kCalls; ++i) (void)cache->Get("absent");
  });
  reader.join();
  const cachet::OpMetrics m = MetricsOf(cache->metrics(), CacheOp::kGet);
  CHECK(m.calls == kCalls);
  CHECK(m.misses == kCalls);
  // Calls 0 to 63, then 64, 128 and 192: 64 + 3. The set does not move the get's sample.
  CHECK(m.latency.count() == 67);
  CHECK(m.latency.max_ns() <= m.latency.sum_ns());
  CHECK(m.latency.PercentileNs(0.5) <= m.latency.PercentileNs(0.99));
  CHECK(m.latency.PercentileNs(0.99) <= m.latency.max_ns());
  CHECK(MetricsOf(cache->metrics(), CacheOp::kSet).latency.count() == 1);
  CHECK(MetricsOf(cache->metrics(), CacheOp::kAdd).latency.count() == 0);
}

TEST_CASE("metrics off counts nothing", "[cache][metrics]") {
  auto cache = MakeCache(std::make_shared<RecordingBackend>(), CacheOptions{"", Ttl{0}, false});
  CHECK(cache->Get("absent").miss());
  CHECK(MetricsOf(cache->metrics(), CacheOp::kGet).calls == 0);
}

TEST_CASE("GetOrCompute runs one loader for eight threads asking at once", "[cache][load]") {
  constexpr int kThreads = 8;
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend);
  std::atomic<int> loader_calls{0};
  auto loader = [&]() -> Result<std::string> {
    ++loader_calls;
    // Hold the claim until every thread has missed, so all of them contend for
    // it. Bounded: 500 polls of 10 ms at most.
    for (int i = 0; i < 500 && backend->gets() < kThreads; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return std::string("computed");
  };

  std::vector<std::string> values(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto got = cache->GetOrCompute<std::string>("hot", loader);
      values[t] = got.hit() ? got.value() : got.status().ToString();
    });
  }
  for (std::thread& thread : threads) thread.join();

  CHECK(loader_calls.load() == 1);
  for (const std::string& value : values) CHECK(value == "computed");
  CHECK(backend->Has("hot"));
}

TEST_CASE("GetOrCompute returns the loader's error and stores nothing", "[cache][load]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend);
  auto got = cache->GetOrCompute<std::string>(
      "k", []() -> Result<std::string> { return Status::Timeout("database slow"); });
  CHECK(got.error());
  CHECK(got.status().IsTimeout());
  CHECK_FALSE(backend->Has("k"));

  // The claim was released: the next call loads again.
  auto again = cache->GetOrCompute<std::string>(
      "k", []() -> Result<std::string> { return std::string("fresh"); });
  REQUIRE(again.hit());
  CHECK(again.value() == "fresh");
}

TEST_CASE("GetOrCompute releases the claim when the loader throws", "[cache][load]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend);
  auto throwing = []() -> Result<std::string> { throw std::runtime_error("loader failed"); };
  CHECK_THROWS_WITH(cache->GetOrCompute<std::string>("k", throwing), "loader failed");
  CHECK_FALSE(backend->Has("k"));

  // The next call must load at once. It runs on its own thread so that a claim
  // left behind fails this check after two seconds instead of hanging the test.
  std::promise<std::string> answer;
  std::future<std::string> next = answer.get_future();
  std::thread caller([&] {
    auto got = cache->GetOrCompute<std::string>(
        "k", []() -> Result<std::string> { return std::string("fresh"); });
    answer.set_value(got.hit() ? got.value() : got.status().ToString());
  });
  const bool answered = next.wait_for(std::chrono::seconds(2)) == std::future_status::ready;
  caller.join();
  REQUIRE(answered);
  CHECK(next.get() == "fresh");
}

TEST_CASE("a thread waiting on a loader that throws loads by itself", "[cache][load]") {
  auto backend = std::make_shared<RecordingBackend>();
  auto cache = MakeCache(backend);
  std::atomic<int> good_loads{0};
  std::thread thrower([&] {
    auto throwing = [&]() -> Result<std::string> {
      // Throw only once the other thread has missed and waits for this claim
      // (bounded: at most 200 polls of 10 ms).
      for (int i = 0; i < 200 && backend->gets() < 3; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      throw std::runtime_error("loader failed");
    };
    CHECK_THROWS(cache->GetOrCompute<std::string>("k", throwing));
  });
  // Wait until the thrower holds the claim: it has read twice (miss, re-check).
  for (int i = 0; i < 200 && backend->gets() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::promise<std::string> answer;
  std::future<std::string> next = answer.get_future();
  std::thread waiter([&] {
    auto got = cache->GetOrCompute<std::string>("k", [&]() -> Result<std::string> {
      ++good_loads;
      return std::string("fresh");
    });
    answer.set_value(got.hit() ? got.value() : got.status().ToString());
  });
  const bool answered = next.wait_for(std::chrono::seconds(3)) == std::future_status::ready;
  thrower.join();
  waiter.join();
  REQUIRE(answered);
  CHECK(next.get() == "fresh");
  CHECK(good_loads.load() == 1);
}

TEST_CASE("GetOrCompute loads through a failing store and returns the value", "[cache][load]") {
  auto cache = MakeCache(std::make_shared<FailingBackend>());
  int calls = 0;
  auto got = cache->GetOrCompute<std::int64_t>("k", [&]() -> Result<std::int64_t> {
    ++calls;
    return std::int64_t{7};
  });
  REQUIRE(got.hit());
  CHECK(got.value() == 7);
  CHECK(calls == 1);
}

TEST_CASE("operation names follow the CacheOp order", "[cache][metrics]") {
  CHECK(cachet::CacheOpName(CacheOp::kGet) == "get");
  CHECK(cachet::CacheOpName(CacheOp::kTouch) == "touch");
  CHECK(cachet::CacheOpName(CacheOp::kGetMulti) == "get_multi");
  CHECK(cachet::CacheOpName(CacheOp::kStats) == "stats");
  CHECK(cachet::CacheOpName(CacheOp::kCount) == "unknown");
}
