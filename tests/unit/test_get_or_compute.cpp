// GetOrCompute's options over a small in-test store with real expiry: cached
// misses, stale-while-revalidate, early refresh, and the lease that lets one
// caller among several Caches (standing for processes) load a missing key.
// Several processes against real servers: tests/integration/test_fetch_processes.cpp.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cachet/batch.h"
#include "cachet/cache.h"
#include "support/fake_backend.h"
#include "support/gated_loader.h"
#include "support/waits.h"

using cachet::Backend;
using cachet::Cache;
using cachet::CacheOptions;
using cachet::Capabilities;
using cachet::Codec;
using cachet::CodecOptions;
using cachet::ComputeOptions;
using cachet::Item;
using cachet::ItemView;
using cachet::Result;
using cachet::Status;
using cachet::StoreMode;
using cachet::Ttl;
using cachet::WriteOptions;
using cachet::test::GatedLoader;
using cachet::test::WaitFor;
using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

namespace {

// A map with per-item expiry that refuses keys with a space, counting the reads
// that missed each key (misses()).
class ExpiringMap : public cachet::test::FakeBackend {
 public:
  ExpiringMap() : FakeBackend(Expiring()) {}

 private:
  static Options Expiring() {
    Options options = Options::Named("expiring-map");
    options.expire = true;
    options.memcached_keys = true;
    return options;
  }
};

std::unique_ptr<Cache> MakeCache(std::shared_ptr<Backend> backend) {
  auto codec = Codec::Create(CodecOptions{});
  REQUIRE(codec.ok());
  return std::make_unique<Cache>(std::move(backend), *codec, CacheOptions{});
}

// A loader that counts its runs, takes `pause`, and returns "v<run number>".
struct CountingLoader {
  std::atomic<int> runs{0};
  milliseconds pause{0};
  Result<std::string> operator()() {
    const int run = ++runs;
    std::this_thread::sleep_for(pause);
    return "v" + std::to_string(run);
  }
};

// A Cache over an ExpiringMap holding what GetOrCompute stores with its record:
// "k", the loaded value "v1", and "gone", a cached miss.
struct Recorded {
  Recorded() {
    options.ttl = milliseconds(60000);
    options.stale = milliseconds(60000);  // stored with its record
    options.negative_ttl = milliseconds(60000);
    CountingLoader loader;
    REQUIRE(cache->GetOrCompute<std::string>("k", std::ref(loader), options).value() == "v1");
    REQUIRE(store->Raw("k").size() > 2);  // the record is there in the store
    auto absent = []() -> Result<std::string> { return Status::NotFound("no row"); };
    REQUIRE(cache->GetOrCompute<std::string>("gone", absent, options).miss());
    REQUIRE_FALSE(store->Raw("gone").empty());
  }
  std::shared_ptr<ExpiringMap> store = std::make_shared<ExpiringMap>();
  std::unique_ptr<Cache> cache = MakeCache(store);
  ComputeOptions options;
};

milliseconds Since(SteadyClock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start);
}

// Whether `value` is a lease token: "cachet lease " and 32 hex digits.
bool IsLeaseToken(const std::string& value) {
  const std::string prefix = "cachet lease ";
  return value.size() == prefix.size() + 32 && value.starts_with(prefix) &&
         value.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos;
}

}  // namespace

TEST_CASE("a loader's not_found is cached as a miss for negative_ttl", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  int runs = 0;
  auto absent = [&]() -> Result<std::string> {
    ++runs;
    return Status::NotFound("no such row");
  };
  ComputeOptions options;
  options.negative_ttl = milliseconds(1000);

  CHECK(cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(runs == 1);
  CHECK(cache->Get("row").miss());  // a plain read sees the cached miss as a miss

  std::this_thread::sleep_for(milliseconds(1050));
  CHECK(cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(runs == 2);  // expired on time: the loader was asked again

  SECTION("without negative_ttl every call asks the loader") {
    ComputeOptions plain;
    CHECK(cache->GetOrCompute<std::string>("other", absent, plain).miss());
    CHECK(cache->GetOrCompute<std::string>("other", absent, plain).miss());
    CHECK(runs == 4);
  }
}

TEST_CASE("stale-while-revalidate serves the old value while one caller refreshes", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto refresher_cache = MakeCache(store);
  auto reader_cache = MakeCache(store);  // another process's Cache
  ComputeOptions options;
  options.ttl = milliseconds(100);
  options.stale = milliseconds(5000);
  options.lease = milliseconds(5000);

  CountingLoader loader;
  REQUIRE(refresher_cache->GetOrCompute<std::string>("k", std::ref(loader), options).value() ==
          "v1");
  std::this_thread::sleep_for(milliseconds(150));  // now stale

  loader.pause = milliseconds(2000);
  std::string refreshed;
  std::thread refresher([&] {
    refreshed = refresher_cache->GetOrCompute<std::string>("k", std::ref(loader), options).value();
  });
  for (int i = 0; i < 200 && loader.runs.load() < 2; ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  REQUIRE(loader.runs.load() == 2);  // the refresh has started

  // Everyone else gets the stale value without waiting for the 2 s refresh.
  const auto asked = SteadyClock::now();
  auto stale = reader_cache->GetOrCompute<std::string>("k", std::ref(loader), options);
  const milliseconds waited = Since(asked);
  refresher.join();
  REQUIRE(stale.hit());
  CHECK(stale.value() == "v1");
  CHECK(waited < milliseconds(1000));
  CHECK(refreshed == "v2");
  CHECK(loader.runs.load() == 2);
  CHECK(reader_cache->GetOrCompute<std::string>("k", std::ref(loader), options).value() == "v2");
  CHECK(reader_cache->Get("k").value() == "v2");  // a plain read strips the record
}

TEST_CASE("early refresh reloads a fresh value before it expires", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  CountingLoader loader;
  loader.pause = milliseconds(20);
  ComputeOptions options;
  options.ttl = milliseconds(5000);

  // A beta this large makes the refresh due at once (missed with odds of 1e-7).
  ComputeOptions early = options;
  early.early_refresh = 1e9;
  REQUIRE(cache->GetOrCompute<std::string>("k", std::ref(loader), early).value() == "v1");
  // Off: the same fresh value is served as it is.
  CHECK(cache->GetOrCompute<std::string>("k", std::ref(loader), options).value() == "v1");
  CHECK(loader.runs.load() == 1);
  // On: refreshed while still fresh, by the caller that drew the refresh.
  CHECK(cache->GetOrCompute<std::string>("k", std::ref(loader), early).value() == "v2");
  CHECK(cache->GetOrCompute<std::string>("k", std::ref(loader), early).value() == "v3");
  CHECK(loader.runs.load() == 3);
}

TEST_CASE("with early refresh a key read steadily never misses", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  constexpr milliseconds kTtl(300);
  std::vector<SteadyClock::time_point> starts, ends;
  auto load = [&]() -> Result<std::string> {
    starts.push_back(SteadyClock::now());
    std::this_thread::sleep_for(milliseconds(50));
    ends.push_back(SteadyClock::now());
    return "v" + std::to_string(starts.size());
  };
  ComputeOptions options;
  options.ttl = kTtl;
  options.early_refresh = 5;

  // 1.5 s of reads every 10 ms: five TTLs.
  const auto start = SteadyClock::now();
  int reads = 0;
  milliseconds longest_pause{0};
  while (Since(start) < 5 * kTtl && reads < 1000) {
    REQUIRE(cache->GetOrCompute<std::string>("hot", load, options).hit());
    ++reads;
    const auto paused = SteadyClock::now();
    std::this_thread::sleep_for(milliseconds(10));
    longest_pause = std::max(longest_pause, Since(paused));
  }
  // A reader the machine held past the refresh window (in its 10 ms pause, where
  // the cache has no part) reads nothing to refresh by.
  if (longest_pause > milliseconds(150)) {
    WARN("the machine held the reader " << longest_pause.count() << " ms: the rest is skipped");
    return;
  }
  // Each value was replaced before its TTL ran out: no read found it expired.
  REQUIRE(starts.size() >= 5);
  for (std::size_t i = 1; i < starts.size(); ++i) CHECK(starts[i] < ends[i - 1] + kTtl);
  CHECK(store->misses("hot") == 2);  // the first read, and its re-check under the claim
}

TEST_CASE("a lease lets one of several Caches load a missing key", "[compute]") {
  constexpr int kCallers = 8;
  auto store = std::make_shared<ExpiringMap>();
  CountingLoader loader;
  loader.pause = milliseconds(200);
  ComputeOptions options;
  options.lease = milliseconds(5000);

  std::vector<std::unique_ptr<Cache>> caches;
  for (int i = 0; i < kCallers; ++i) caches.push_back(MakeCache(store));
  std::vector<std::string> values(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      auto got = caches[i]->GetOrCompute<std::string>("k", std::ref(loader), options);
      values[i] = got.hit() ? got.value() : got.status().ToString();
    });
  }
  for (std::thread& caller : callers) caller.join();
  CHECK(loader.runs.load() == 1);
  for (const std::string& value : values) CHECK(value == "v1");
  CHECK(store->Raw("k#lease").empty());  // given back
}

TEST_CASE("a lease left by a dead holder frees the key after lease_ms", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  // A holder that died mid-load: its lease is there and nobody will remove it.
  REQUIRE(
      store->Store(StoreMode::kAdd, "k#lease", ItemView("dead"), WriteOptions{milliseconds(300)})
          .ok());
  CountingLoader loader;
  ComputeOptions options;
  options.lease = milliseconds(300);
  options.lease_wait = milliseconds(5000);

  const auto asked = SteadyClock::now();
  auto got = cache->GetOrCompute<std::string>("k", std::ref(loader), options);
  const milliseconds waited = Since(asked);
  REQUIRE(got.hit());
  CHECK(got.value() == "v1");
  CHECK(loader.runs.load() == 1);
  CHECK(waited >= milliseconds(250));  // it waited for the lease to lapse
}

TEST_CASE("a waiter loads by itself after lease_wait", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  REQUIRE(
      store->Store(StoreMode::kAdd, "k#lease", ItemView("slow"), WriteOptions{milliseconds(60000)})
          .ok());
  CountingLoader loader;
  ComputeOptions options;
  options.lease = milliseconds(60000);
  options.lease_wait = milliseconds(200);
  auto got = cache->GetOrCompute<std::string>("k", std::ref(loader), options);
  REQUIRE(got.hit());
  CHECK(got.value() == "v1");
  CHECK(store->Raw("k#lease") == "slow");  // not its lease: left alone
}

TEST_CASE("a holder whose lease lapsed leaves the lease another caller took since",
          "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto first = MakeCache(store);
  auto second = MakeCache(store);
  ComputeOptions short_lease;
  short_lease.lease = milliseconds(200);
  ComputeOptions long_lease;
  long_lease.lease = milliseconds(30000);

  GatedLoader first_load;  // fails once released: its lease is given back
  std::thread holder(
      [&] { (void)first->GetOrCompute<std::string>("k", std::ref(first_load), short_lease); });
  REQUIRE(WaitFor(first_load.started));
  const std::string first_token = store->Raw("k#lease");
  CHECK(IsLeaseToken(first_token));
  std::this_thread::sleep_for(milliseconds(300));  // its lease lapses mid-load
  CHECK(store->Raw("k#lease").empty());

  GatedLoader second_load;
  second_load.answer = std::string("second");
  std::string second_value;
  std::thread taker([&] {
    auto got = second->GetOrCompute<std::string>("k", std::ref(second_load), long_lease);
    second_value = got.hit() ? got.value() : got.status().ToString();
  });
  REQUIRE(WaitFor(second_load.started));
  const std::string second_token = store->Raw("k#lease");
  CHECK(IsLeaseToken(second_token));
  CHECK(second_token != first_token);  // a token per claim, not per process

  first_load.release = true;
  holder.join();
  CHECK(store->Raw("k#lease") == second_token);  // left to its new holder
  second_load.release = true;
  taker.join();
  CHECK(second_value == "second");
  CHECK(store->Raw("k#lease").empty());  // its holder gave it back
}

TEST_CASE("GetOrCompute refuses negative durations, and ones that would overflow a deadline",
          "[compute]") {
  auto cache = MakeCache(std::make_shared<ExpiringMap>());
  const auto longest = ComputeOptions::kMaxDuration;
  for (auto [lease, lease_wait, stale] :
       {std::tuple{milliseconds(0), milliseconds(0), milliseconds(-1)},
        std::tuple{milliseconds::max(), milliseconds(0), milliseconds(0)},
        std::tuple{milliseconds(5), longest + milliseconds(1), milliseconds(0)}}) {
    ComputeOptions options;
    options.lease = lease;
    options.lease_wait = lease_wait;
    options.stale = stale;
    CountingLoader loader;
    auto got = cache->GetOrCompute<std::string>("k", std::ref(loader), options);
    CHECK(got.status().IsInvalidArgument());
    CHECK(loader.runs.load() == 0);
  }
}

TEST_CASE("a key the store refuses is an error and nothing is loaded", "[compute]") {
  auto cache = MakeCache(std::make_shared<ExpiringMap>());
  CountingLoader loader;
  auto got = cache->GetOrCompute<std::string>("bad key", std::ref(loader), ComputeOptions{});
  CHECK(got.status().IsInvalidArgument());
  CHECK(loader.runs.load() == 0);
}

TEST_CASE("reads into buffers strip GetOrCompute's record", "[compute]") {
  Recorded recorded;
  Cache* cache = recorded.cache.get();
  const std::vector<std::string_view> keys{"k", "gone"};
  std::vector<Item> items;
  std::vector<Status> statuses;
  cache->GetItemsInto(keys, &items, &statuses);
  REQUIRE(statuses[0].ok());
  CHECK(items[0].value == "v1");
  CHECK(statuses[1].IsNotFound());

  std::vector<std::string> values;
  cache->GetMultiInto(keys, &values, &statuses);
  REQUIRE(statuses[0].ok());
  CHECK(values[0] == "v1");
  CHECK(statuses[1].IsNotFound());

  std::string value = "stale";
  REQUIRE(cache->GetInto("k", &value).ok());
  CHECK(value == "v1");
  CHECK(cache->GetInto("gone", &value).IsNotFound());  // a cached miss
  CHECK(value.empty());
}

TEST_CASE("a Batch reads the value alone and refuses a record's bytes", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  ComputeOptions options;
  options.ttl = milliseconds(60000);
  options.stale = milliseconds(60000);  // stored with its record
  CountingLoader loader;
  REQUIRE(cache->GetOrCompute<std::string>("k", std::ref(loader), options).value() == "v1");
  const std::string record = store->Raw("k");
  REQUIRE(record.size() == 26);

  cachet::Batch batch(*cache);
  const cachet::BatchRead<std::string> read = batch.Get<std::string>("k");
  const cachet::BatchWrite set = batch.Set("mine", record);
  const cachet::BatchWrite prepend = batch.Prepend("mine", record);
  cache->Run(batch);
  CHECK(batch.Outcome(read).value() == "v1");
  CHECK(batch.Outcome(set).IsInvalidArgument());
  CHECK(batch.Outcome(prepend).IsInvalidArgument());
  CHECK(store->Raw("mine").empty());
}

TEST_CASE("append and prepend do not join bytes to a record GetOrCompute stored", "[compute]") {
  Recorded recorded;
  Cache* cache = recorded.cache.get();
  ExpiringMap* store = recorded.store.get();
  const std::string record = store->Raw("k");

  // A prepend would bury the header: the value would read as "pre-", the header, "v1".
  const Status prepended = cache->Prepend("k", "pre-");
  INFO(prepended.ToString());
  CHECK(prepended.IsUnsupported());
  CHECK(store->Raw("k") == record);
  CHECK(cache->Get<std::string>("k").value_or("") == "v1");
  // An append extends the record's value.
  CHECK(cache->Append("k", "-post").ok());
  CHECK(cache->Get<std::string>("k").value_or("") == "v1-post");

  // A cached miss stays a miss: appending to it is not_stored, as to any missing key.
  CHECK(cache->Append("gone", "x").IsNotStored());
  CHECK(cache->Get<std::string>("gone").status().IsNotFound());
  // Plain values are joined as ever.
  REQUIRE(cache->Set("plain", std::string("b")).ok());
  CHECK(cache->Prepend("plain", "a").ok());
  CHECK(cache->Append("plain", "c").ok());
  CHECK(cache->Get<std::string>("plain").value_or("") == "abc");
}

TEST_CASE("a Batch's append and prepend do not join bytes to GetOrCompute's record",
          "[compute]") {
  Recorded recorded;
  Cache* cache = recorded.cache.get();
  const std::string record = recorded.store->Raw("k");
  REQUIRE(cache->Set("plain", std::string("b")).ok());

  cachet::Batch batch(*cache);
  const cachet::BatchWrite before = batch.Prepend("plain", "a");
  const cachet::BatchWrite prepend = batch.Prepend("k", "pre-");
  const cachet::BatchWrite onto_miss = batch.Append("gone", "x");
  const cachet::BatchWrite after = batch.Append("plain", "c");
  const cachet::BatchRead<std::string> read = batch.Get<std::string>("plain");
  cache->Run(batch);
  INFO(batch.Outcome(prepend).ToString());
  CHECK(batch.Outcome(prepend).IsUnsupported());
  CHECK(batch.Outcome(onto_miss).IsNotStored());
  CHECK(batch.Outcome(before).ok());
  CHECK(batch.Outcome(after).ok());
  CHECK(batch.Outcome(read).value_or("") == "abc");  // the rest ran, in order
  CHECK(recorded.store->Raw("k") == record);
  CHECK(cache->Get<std::string>("gone").status().IsNotFound());

  // A join after a write of its key in the same batch joins what that write left.
  cachet::Batch rewrite(*cache);
  const cachet::BatchWrite set_k = rewrite.Set("k", std::string("new"));
  const cachet::BatchWrite prepend_k = rewrite.Prepend("k", "pre-");
  const cachet::BatchWrite set_gone = rewrite.Set("gone", std::string("v"));
  const cachet::BatchWrite append_gone = rewrite.Append("gone", "-x");
  cache->Run(rewrite);
  CHECK(rewrite.Outcome(set_k).ok());
  CHECK(rewrite.Outcome(prepend_k).ok());
  CHECK(rewrite.Outcome(set_gone).ok());
  CHECK(rewrite.Outcome(append_gone).ok());
  CHECK(cache->Get<std::string>("k").value_or("") == "pre-new");
  CHECK(cache->Get<std::string>("gone").value_or("") == "v-x");
}

TEST_CASE("writes refuse a value that would read back as GetOrCompute's record", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  ComputeOptions options;
  options.ttl = milliseconds(60000);
  options.stale = milliseconds(60000);
  CountingLoader loader;
  REQUIRE(cache->GetOrCompute<std::string>("k", std::ref(loader), options).value() == "v1");
  const std::string record = store->Raw("k");  // a header and "v1"
  REQUIRE(record.size() == 26);

  CHECK(cache->Set("mine", record).IsInvalidArgument());
  CHECK(cache->Add("mine", record).IsInvalidArgument());
  CHECK(cache->Replace("mine", record).IsInvalidArgument());
  CHECK(cache->Cas("mine", record, 1).IsInvalidArgument());
  CHECK(cache->StoreItem(StoreMode::kSet, "mine", ItemView(record)).IsInvalidArgument());
  CHECK(cache->Prepend("mine", record).IsInvalidArgument());
  CHECK(cache->Prepend("mine", std::string_view("\xCA\xCE", 2)).IsInvalidArgument());
  CHECK(cache->Prepend("mine", std::string_view("\xCA", 1)).IsInvalidArgument());
  const std::vector<std::pair<std::string, std::string>> entries{{"a", "plain"},
                                                                 {"b", record}};
  const std::vector<Status> stored = cache->SetMulti(entries);
  CHECK(stored[0].ok());
  CHECK(stored[1].IsInvalidArgument());
  CHECK(store->Raw("mine").empty());
  CHECK(store->Raw("b").empty());
  CHECK(cache->Get("a").value() == "plain");

  // The magic's first byte alone, or the magic with a checksum that does not
  // match, is an ordinary value.
  const std::string first_byte_only = "\xCA" + std::string(40, 'x');
  REQUIRE(cache->Set("mine", first_byte_only).ok());
  CHECK(cache->Get("mine").value() == first_byte_only);
  std::string lookalike = record;
  lookalike[20] = static_cast<char>(lookalike[20] ^ 1);
  REQUIRE(cache->Set("mine", lookalike).ok());
  CHECK(cache->Get("mine").value() == lookalike);

  // A loader may return such bytes: GetOrCompute keeps them in a record of
  // their own, so they read back as loaded.
  auto returns_record = [&]() -> Result<std::string> { return record; };
  REQUIRE(cache->GetOrCompute<std::string>("loaded", returns_record, ComputeOptions{}).value() ==
          record);
  CHECK(cache->Get("loaded").value() == record);
  CHECK(cache->GetOrCompute<std::string>("loaded", returns_record, ComputeOptions{}).value() ==
        record);
}

// A cached value that does not decode as the asked type is the call's error, in
// the metrics too, as a single Get counts it: never a hit.
TEST_CASE("a cached value that does not decode counts as an error, not a hit", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  std::unique_ptr<Cache> cache = MakeCache(store);
  REQUIRE(cache->Set("word", std::string("abc")).ok());
  int loads = 0;
  auto got = cache->GetOrCompute<std::int64_t>(
      "word", [&]() -> Result<std::int64_t> {
        ++loads;
        return std::int64_t{1};
      },
      ComputeOptions{});
  CHECK(got.status().IsInvalidArgument());
  CHECK(loads == 0);
  const auto m = cache->metrics()[static_cast<std::size_t>(cachet::CacheOp::kGetOrCompute)];
  CHECK(m.hits == 0);
  CHECK(m.errors == 1);
}

// Found by an application's try: a loader that threw left no trace in the metrics.
TEST_CASE("a loader that throws is counted as the call's error and as a load", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  std::unique_ptr<Cache> cache = MakeCache(store);
  auto throwing = []() -> Result<std::string> { throw std::runtime_error("database gone"); };
  CHECK_THROWS_AS(cache->GetOrCompute<std::string>("k", throwing, ComputeOptions{}),
                  std::runtime_error);
  const auto calls = cache->metrics()[static_cast<std::size_t>(cachet::CacheOp::kGetOrCompute)];
  const auto loads = cache->metrics()[static_cast<std::size_t>(cachet::CacheOp::kLoad)];
  CHECK(calls.calls == 1);
  CHECK(calls.errors == 1);
  CHECK(calls.count(cachet::StatusCode::kInternal) == 1);
  CHECK(loads.calls == 1);
  CHECK(loads.errors == 1);
}

TEST_CASE("a stale value is served only within the caller's stale window", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  ComputeOptions options;
  options.ttl = milliseconds(100);
  options.stale = milliseconds(100);
  CountingLoader loader;
  REQUIRE(cache->GetOrCompute<std::string>("k", std::ref(loader), options).value() == "v1");
  // Past ttl + stale, still kept by the store (for a second more): not stale, absent.
  std::this_thread::sleep_for(milliseconds(400));
  REQUIRE_FALSE(store->Raw("k").empty());
  auto failing = []() -> Result<std::string> { return Status::Unavailable("database down"); };
  auto late = cache->GetOrCompute<std::string>("k", failing, options);
  CHECK(late.error());
  CHECK(late.status().IsUnavailable());
  // A caller with a longer window than the writer's still gets it as stale.
  ComputeOptions longer = options;
  longer.stale = milliseconds(60000);
  auto stale = cache->GetOrCompute<std::string>("k", failing, longer);
  REQUIRE(stale.hit());
  CHECK(stale.value() == "v1");
}

TEST_CASE("the loader fills an empty Item, whatever the caller's Item held", "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  REQUIRE(cache->Set<std::int64_t>("number", 7).ok());
  Item reused;
  auto unused = [](Item*) { return Status::Unavailable("not asked"); };
  REQUIRE(cache->GetOrComputeItem("number", unused, ComputeOptions{}, &reused).ok());
  REQUIRE(reused.flags != 0);  // a typed value's flags
  // A loader that sets only the bytes: stored as plain bytes, not as a number.
  auto bytes_only = [](Item* out) {
    CHECK(out->value.empty());
    CHECK(out->flags == 0);
    out->value = "hello";
    return Status::OK();
  };
  REQUIRE(cache->GetOrComputeItem("text", bytes_only, ComputeOptions{}, &reused).ok());
  CHECK(reused.flags == 0);
  CHECK(cache->Get<std::string>("text").value() == "hello");
}

TEST_CASE("with the store down the threads of a process still load a key once",
          "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  store->FailWith(Status::Unavailable("down"));
  ComputeOptions options;
  options.lease = milliseconds(GENERATE(0, 2000));  // none, and the add-based lease
  INFO("lease " << options.lease.count() << " ms");
  CountingLoader slow;
  slow.pause = milliseconds(100);
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      auto found = cache->GetOrCompute<std::string>("k", std::ref(slow), options);
      got[t] = found.hit() ? found.value() : found.status().ToString();
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(slow.runs.load() == 1);
  for (const std::string& value : got) CHECK(value == "v1");
}

TEST_CASE("a thread waiting for another's load waits lease_wait in all, then loads",
          "[compute]") {
  auto store = std::make_shared<ExpiringMap>();
  auto cache = MakeCache(store);
  ComputeOptions options;
  options.lease = milliseconds(60000);
  options.lease_wait = milliseconds(200);
  CountingLoader slow;
  slow.pause = milliseconds(2000);
  std::thread holder([&] { (void)cache->GetOrCompute<std::string>("k", std::ref(slow), options); });
  for (int i = 0; i < 200 && slow.runs.load() == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  REQUIRE(slow.runs.load() == 1);
  auto quick = []() -> Result<std::string> { return std::string("mine"); };
  const auto asked = SteadyClock::now();
  auto got = cache->GetOrCompute<std::string>("k", quick, options);
  const milliseconds waited = Since(asked);
  holder.join();
  REQUIRE(got.hit());
  CHECK(got.value() == "mine");
  CHECK(waited < milliseconds(1000));
}
