// GetOrCompute's options through the real plugins and servers: sixteen threads
// of one process on the memory store run the loader once; cached misses expire
// on time, and a key read steadily with early refresh never goes missing, on the
// memory store, memcached (text and meta), Redis and Tokyo Tyrant. (Several
// processes at once: tests/integration/cli/test_fetch_processes.cpp.)
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_cluster.h"
#include "launchers/redis_server.h"
#include "launchers/tokyotyrant_server.h"
#include "support/forwarding_backend.h"
#include "support/gated_loader.h"
#include "support/waits.h"

namespace cachet::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

struct OpenStore {
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<RedisCluster> cluster;
  std::string section;  // the config's store sections
  std::unique_ptr<Cache> cache;

  // Another Cache on the same store, as another process would have: its own
  // connections and its own coordination of threads. The memory store lives in
  // its Cache's process, so there the other Cache shares this one's Backend.
  // The result must not outlive this OpenStore.
  std::unique_ptr<Cache> Another() const {
    if (section == "backend = memory\n") {
      auto codec = Codec::Create(CodecOptions{});
      REQUIRE(codec.ok());
      // Not owned: `cache` owns the Backend and outlives the new Cache.
      std::shared_ptr<Backend> shared(std::shared_ptr<Backend>(), &cache->backend());
      return std::make_unique<Cache>(std::move(shared), *codec, CacheOptions{});
    }
    auto config = Config::Parse("[cache]\n" + section, "another Cache");
    REQUIRE(config.ok());
    auto opened = Cache::Open(std::move(config).value());
    REQUIRE(opened.ok());
    return std::move(opened).value();
  }
};

OpenStore Open(const std::string& kind) {
  OpenStore store;
  std::string section;
  if (kind == "memory") {
    section = "backend = memory\n";
  } else if (kind == "memcached-text" || kind == "memcached-meta") {
    REQUIRE(HaveMemcached());
    auto server = StartMemcached();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    section = "backend = memcached\n[memcached]\nservers = " + store.server->address() +
              "\nprotocol = " + (kind == "memcached-meta" ? "meta" : "text") + "\n";
  } else if (kind == "redis") {
    auto server = StartRedis();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    section = "backend = redis\n[redis]\nservers = " + store.server->address() + "\n";
  } else if (kind == "redis-cluster") {
    auto cluster = RedisCluster::Start();
    REQUIRE(cluster.ok());
    store.cluster = std::move(cluster).value();
    section =
        "backend = redis\n[redis]\nmode = cluster\nservers = " + store.cluster->seeds() + "\n";
  } else {
    REQUIRE(kind == "tokyotyrant");
    auto server = StartTokyoTyrant();
    REQUIRE(server.ok());
    store.server = std::move(server).value();
    section = "backend = tokyotyrant\n[tokyotyrant]\nservers = " + store.server->address() + "\n";
  }
  auto config = Config::Parse("[cache]\n" + section, kind + " test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  REQUIRE(cache.ok());
  store.cache = std::move(cache).value();
  store.section = section;
  return store;
}

}  // namespace

TEST_CASE("a cached miss is served until negative_ttl, then the loader is asked again",
          "[compute][stores]") {
  const std::string kind =
      GENERATE("memory", "memcached-text", "memcached-meta", "redis", "tokyotyrant");
  INFO("store: " << kind);
  OpenStore store = Open(kind);
  int runs = 0;
  auto absent = [&]() -> Result<std::string> {
    ++runs;
    return Status::NotFound("no such row");
  };
  ComputeOptions options;
  // Whole seconds, as memcached counts them: its clock ticks once a second, so
  // an item of 3 s lives 2 to 3 s, never less than the moments the reads take.
  options.negative_ttl = milliseconds(3000);
  CHECK(store.cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(store.cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(store.cache->Get("row").miss());
  CHECK(runs == 1);
  std::this_thread::sleep_for(milliseconds(3100));
  CHECK(store.cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(runs == 2);
}

TEST_CASE("a stale value whose refresh finds its row gone is not served", "[compute][stores]") {
  // The refresh of a stale value is this caller's; the loader then says the row
  // is gone. The answer is a miss, as for a key never loaded, on every store,
  // memcached's native leases included.
  const std::string kind =
      GENERATE("memory", "memcached-text", "memcached-meta", "redis", "tokyotyrant");
  INFO("store: " << kind);
  OpenStore store = Open(kind);
  int runs = 0;
  bool gone = false;
  auto load = [&]() -> Result<std::string> {
    ++runs;
    if (gone) return Status::NotFound("the row was deleted");
    return std::string("v1");
  };
  ComputeOptions options;
  options.ttl = milliseconds(300);
  options.stale = milliseconds(10000);
  options.lease = milliseconds(2000);
  REQUIRE(store.cache->GetOrCompute<std::string>("row", load, options).value_or("") == "v1");
  std::this_thread::sleep_for(milliseconds(500));
  gone = true;
  CHECK(store.cache->GetOrCompute<std::string>("row", load, options).miss());
  CHECK(runs == 2);
  // Under memcached's native lease the refresher also deletes the old copy (only
  // the item its lease was won on), so no other reader gets the deleted row.
  if (kind == "memcached-meta") CHECK(store.cache->Get("row").miss());
}

TEST_CASE("a refresher that finds the value refreshed by another caller gives its win back",
          "[compute][stores]") {
  // memcached meta. An early refresh asks for a win on any value; here another
  // caller stores a new value just before that ask, so the win is given on the
  // new value. The refresher serves it and must give the win back: kept, nobody
  // could win that value's refresh when it goes stale. Given back (md I), the
  // next caller wins at once and reloads.
  OpenStore store = Open("memcached-meta");
  // Forwards the store's leases too; before the `trip`th LeaseGet it writes a
  // new value to the key, as another caller's refresh would.
  class RacedLeases : public ForwardingBackend {
   public:
    RacedLeases(std::shared_ptr<Backend> inner, int trip)
        : ForwardingBackend("raced", std::move(inner)), trip_(trip) {}
    Status LeaseGet(std::string_view key, const LeaseRequest& request, Item* out,
                    LeaseGrant* grant, std::uint64_t* lease_cas) override {
      if (++calls_ == trip_) {
        WriteOptions for_a_minute;
        for_a_minute.ttl = Ttl(60000);
        REQUIRE(inner().Store(StoreMode::kSet, key, ItemView("v2"), for_a_minute).ok());
      }
      return inner().LeaseGet(key, request, out, grant, lease_cas);
    }
    Status EndLease(std::string_view key, const LeaseTicket& ticket, LeaseEnd end) override {
      return inner().EndLease(key, ticket, end);
    }

   private:
    const int trip_;
    int calls_ = 0;
  };
  int loads = 0;
  auto load = [&]() -> Result<std::string> {
    ++loads;
    std::this_thread::sleep_for(milliseconds(5));  // a load time for early refresh to scale
    return std::string("v1");
  };
  ComputeOptions options;
  options.ttl = milliseconds(60000);
  options.stale = milliseconds(1000);  // so the value is kept in a record
  options.lease = milliseconds(2000);
  REQUIRE(store.cache->GetOrCompute<std::string>("hot", load, options).value_or("") == "v1");
  REQUIRE(loads == 1);

  // The first LeaseGet reads v1 fresh and draws an early refresh (beta this
  // large always does); the second, the refresh's own, meets v2.
  auto codec = Codec::Create(CodecOptions{});
  REQUIRE(codec.ok());
  std::shared_ptr<Backend> shared(std::shared_ptr<Backend>(), &store.cache->backend());
  Cache raced(std::make_shared<RacedLeases>(shared, 2), *codec, CacheOptions{});
  ComputeOptions early = options;
  early.early_refresh = 1e9;
  CHECK(raced.GetOrCompute<std::string>("hot", load, early).value_or("") == "v2");
  CHECK(loads == 1);  // the refresher served v2 without loading

  // The win was given back: the next caller wins v2's refresh and loads.
  CHECK(store.cache->GetOrCompute<std::string>("hot", load, options).hit());
  CHECK(loads == 2);
}

TEST_CASE("with early refresh a key read steadily never goes missing", "[compute][stores]") {
  const std::string kind =
      GENERATE("memory", "memcached-text", "memcached-meta", "redis", "tokyotyrant");
  INFO("store: " << kind);
  OpenStore store = Open(kind);
  constexpr milliseconds kTtl(1000);
  std::vector<SteadyClock::time_point> starts, ends;
  auto load = [&]() -> Result<std::string> {
    starts.push_back(SteadyClock::now());
    std::this_thread::sleep_for(milliseconds(50));
    ends.push_back(SteadyClock::now());
    return "v" + std::to_string(starts.size());
  };
  ComputeOptions options;
  options.ttl = kTtl;
  options.lease = milliseconds(5000);
  options.early_refresh = 5;

  // Three TTLs of reads every 10 ms.
  const auto start = SteadyClock::now();
  int reads = 0;
  while (SteadyClock::now() - start < 3 * kTtl && reads < 1000) {
    REQUIRE(store.cache->GetOrCompute<std::string>("hot", load, options).hit());
    ++reads;
    std::this_thread::sleep_for(milliseconds(10));
  }
  // Each value was replaced before its TTL ran out: no read found it expired.
  REQUIRE(starts.size() >= 3);
  for (std::size_t i = 1; i < starts.size(); ++i) {
    CHECK(starts[i] < ends[i - 1] + kTtl);
  }
}

TEST_CASE("sixteen threads on the memory store run the loader once", "[compute][stores]") {
  OpenStore store = Open("memory");
  std::atomic<int> runs{0};
  auto load = [&]() -> Result<std::string> {
    ++runs;
    std::this_thread::sleep_for(milliseconds(200));
    return std::string("value");
  };
  ComputeOptions options;
  options.lease = milliseconds(5000);
  constexpr int kThreads = 16;
  std::vector<std::string> values(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto got = store.cache->GetOrCompute<std::string>("k", load, options);
      values[i] = got.hit() ? got.value() : got.status().ToString();
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(runs.load() == 1);
  for (const std::string& value : values) CHECK(value == "value");
  CHECK(store.cache->Get("k#lease").miss());  // given back
}

TEST_CASE("a holder whose lease lapsed does not end the lease another caller took since",
          "[compute][stores][cluster]") {
  const std::string kind = GENERATE("memory", "memcached-text", "memcached-meta", "redis",
                                    "redis-cluster", "tokyotyrant");
  // On Redis a key with a '}' and no hash tag, whose lock key needs a tag of
  // its own to share the key's slot (redis_backend.h, LeaseKeyOf).
  const std::string key = kind.starts_with("redis") ? "a}b" : "k";
  INFO("store: " << kind << ", key: " << key);
  OpenStore store = Open(kind);
  auto second = store.Another();
  auto third = store.Another();
  ComputeOptions short_lease;
  short_lease.lease = milliseconds(1000);
  ComputeOptions long_lease;
  long_lease.lease = milliseconds(30000);
  long_lease.lease_wait = milliseconds(30000);

  // The first holder's load outlasts its lease, then fails: it gives the lease up.
  GatedLoader first_load;
  std::thread first([&] {
    (void)store.cache->GetOrCompute<std::string>(key, std::ref(first_load), short_lease);
  });
  REQUIRE(WaitFor(first_load.started));
  // Past the lease, on every store (memcached's clock ticks in whole seconds).
  std::this_thread::sleep_for(milliseconds(2200));
  GatedLoader second_load;
  second_load.answer = std::string("second");
  std::string second_value;
  std::thread second_caller([&] {
    auto got = second->GetOrCompute<std::string>(key, std::ref(second_load), long_lease);
    second_value = got.hit() ? got.value() : got.status().ToString();
  });
  const bool second_won = WaitFor(second_load.started);
  first_load.release = true;  // the first holder ends its (lapsed) lease now
  first.join();

  // The second holder's lease still stands: a third caller finds it held and
  // waits its lease_wait out before loading by itself. Had the first holder
  // removed it, the third would win at once.
  ComputeOptions short_wait = long_lease;
  short_wait.lease_wait = milliseconds(500);
  std::atomic<int> third_runs{0};
  const auto asked = SteadyClock::now();
  auto got = third->GetOrCompute<std::string>(
      key,
      [&]() -> Result<std::string> {
        ++third_runs;
        return std::string("third");
      },
      short_wait);
  const auto waited = SteadyClock::now() - asked;
  second_load.release = true;
  second_caller.join();
  REQUIRE(second_won);
  CHECK(got.value_or("") == "third");
  CHECK(third_runs.load() == 1);
  CHECK(waited >= milliseconds(450));
  CHECK(second_value == "second");
}

TEST_CASE("a value past the caller's stale window is reloaded at once, not served or waited for",
          "[compute][stores]") {
  // The writer keeps its value 20 s past its TTL; a reader whose window is
  // 200 ms must not be served it 1.5 s after the TTL, nor wait out a lease.
  const std::string kind = GENERATE("memory", "memcached-meta", "redis");
  INFO("store: " << kind);
  OpenStore store = Open(kind);
  ComputeOptions writer;
  writer.ttl = milliseconds(1000);
  writer.stale = milliseconds(20000);
  writer.lease = milliseconds(4000);
  auto first = []() -> Result<std::string> { return std::string("v1"); };
  REQUIRE(store.cache->GetOrCompute<std::string>("k", first, writer).value() == "v1");
  std::this_thread::sleep_for(milliseconds(1500));
  ComputeOptions reader = writer;
  reader.stale = milliseconds(200);
  int loads = 0;
  auto second = [&]() -> Result<std::string> {
    ++loads;
    return std::string("v2");
  };
  const auto asked = SteadyClock::now();
  auto got = store.cache->GetOrCompute<std::string>("k", second, reader);
  const auto took = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - asked);
  REQUIRE(got.hit());
  CHECK(got.value() == "v2");
  CHECK(loads == 1);
  CHECK(took < milliseconds(2000));
  CHECK(store.cache->Get("k").value_or("absent") == "v2");  // and stored
}

}  // namespace cachet::test
