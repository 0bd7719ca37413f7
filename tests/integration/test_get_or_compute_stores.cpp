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
#include "support/memcached_server.h"
#include "support/redis_server.h"
#include "support/tt_server/tokyotyrant_server.h"

namespace cachet::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

struct OpenStore {
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<Cache> cache;
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
  options.negative_ttl = milliseconds(1000);
  CHECK(store.cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(store.cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(store.cache->Get("row").miss());
  CHECK(runs == 1);
  std::this_thread::sleep_for(milliseconds(1100));
  CHECK(store.cache->GetOrCompute<std::string>("row", absent, options).miss());
  CHECK(runs == 2);
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

}  // namespace cachet::test
