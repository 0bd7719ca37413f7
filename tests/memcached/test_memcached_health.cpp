// Server health and the observer's server, through a Cache over real memcached
// processes: each exchange counts for its server, a stopped server's failures
// are counted by kind and it shows as dead once it reaches the failure limit.
#include <spdlog/sinks/ostream_sink.h>

#include <catch2/catch.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "cachet/log.h"
#include "cachet/net/server_trace.h"
#include "cachet/observer.h"
#include "memcached_fixture.h"

namespace cachet::memcached::test {
namespace {

class ServerLog : public CacheObserver {
 public:
  void OnOperation(const OperationEvent& e) noexcept override {
    servers.emplace_back(e.server);
    codes.push_back(e.status.code());
  }
  std::vector<std::string> servers;
  std::vector<StatusCode> codes;
};

std::unique_ptr<Cache> CacheOver(const std::vector<std::unique_ptr<ServerProcess>>& servers) {
  auto codec = Codec::Create(CodecOptions{});
  REQUIRE(codec.ok());
  auto backend = std::make_shared<MemcachedBackend>(OptionsFor(servers, Protocol::kText));
  return std::make_unique<Cache>(backend, *codec, CacheOptions{});
}

// A key that lives on server `index` (by the observer's note of its exchange).
std::string KeyOn(Cache& cache, ServerLog& log, const std::string& address) {
  for (int i = 0; i < 200; ++i) {
    const std::string key = "key" + std::to_string(i);
    (void)cache.Get(key);
    if (log.servers.back() == address) return key;
  }
  FAIL("no key of 200 went to " << address);
  return {};
}

}  // namespace

TEST_CASE("health counts each server's exchanges and the observer names the server",
          "[memcached][health]") {
  REQUIRE(cachet::test::HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto servers = StartServers(2);
  REQUIRE(servers.size() == 2);
  auto cache = CacheOver(servers);
  auto log = std::make_shared<ServerLog>();
  cache->SetObserver(log);

  std::vector<ServerHealth> health = cache->Health();
  REQUIRE(health.size() == 2);
  CHECK(health[0].server == servers[0]->address());
  CHECK(health[1].server == servers[1]->address());
  CHECK(health[0].requests == 0);

  const std::string on_first = KeyOn(*cache, *log, servers[0]->address());
  const std::string on_second = KeyOn(*cache, *log, servers[1]->address());
  const std::size_t gets = log->servers.size();
  REQUIRE(cache->Set(on_first, std::string("v")).ok());
  CHECK(log->servers.back() == servers[0]->address());
  // A batch over both servers names neither.
  (void)cache->GetMulti({on_first, on_second});
  CHECK(log->servers.back() == "(several)");

  health = cache->Health();
  // Every get, the set, and one exchange per server for the batch.
  CHECK(health[0].requests + health[1].requests == gets + 1 + 2);
  CHECK(health[0].errors == 0);
  CHECK(health[0].connects >= 1);
  CHECK_FALSE(health[0].dead);
  CHECK_FALSE(health[1].dead);

  // The first server stops: its keys fail (connection refused), and after
  // failure_limit (2) consecutive failures it rests.
  const std::uint64_t requests_before = health[0].requests;
  REQUIRE(servers[0]->Stop().ok());
  CHECK(cache->Get(on_first).error());
  CHECK(log->servers.back() == servers[0]->address());
  CHECK(log->codes.back() == StatusCode::kUnavailable);
  CHECK(cache->Get(on_first).error());
  CHECK(cache->Get(on_first).error());  // refused by the pool: no exchange
  CHECK(log->servers.back().empty());
  CHECK(cache->Get(on_second).miss());  // the other server is fine

  health = cache->Health();
  CHECK(health[0].requests == requests_before + 2);
  CHECK(health[0].unavailable == 2);
  CHECK(health[0].errors == 2);
  CHECK(health[0].marked_dead == 1);
  CHECK(health[0].consecutive_failures == 2);
  CHECK(health[0].dead);
  CHECK_FALSE(health[1].dead);
  CHECK(health[1].errors == 0);
  const OpMetrics get = cache->metrics()[static_cast<std::size_t>(CacheOp::kGet)];
  CHECK(get.count(StatusCode::kUnavailable) == 3);
  CHECK(get.hits == 0);
}

TEST_CASE("a server marked dead stays reported dead until it answers again",
          "[memcached][health]") {
  REQUIRE(cachet::test::HaveMemcached());
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  MemcachedOptions options = OptionsFor(servers, Protocol::kText);
  options.pool.retry_timeout = std::chrono::milliseconds(100);
  MemcachedBackend backend(std::move(options));
  // What the core logs meanwhile, kept to be read.
  std::ostringstream logged;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(logged);
  Logger()->sinks().push_back(sink);
  struct Unhook {
    std::shared_ptr<spdlog::sinks::sink> sink;
    ~Unhook() { std::erase(Logger()->sinks(), sink); }
  } unhook{sink};
  Item item;
  REQUIRE(backend.Get("k", &item).IsNotFound());
  REQUIRE(servers[0]->Stop().ok());
  CHECK(backend.Get("k", &item).IsUnavailable());
  CHECK(backend.Get("k", &item).IsUnavailable());
  std::vector<ServerHealth> health;
  REQUIRE(backend.Health(&health).ok());
  REQUIRE(health.size() == 1);
  CHECK(health[0].dead);
  // The rest is over, but nothing has answered since: still dead, not up.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  health.clear();
  REQUIRE(backend.Health(&health).ok());
  CHECK(health[0].dead);
  CHECK(health[0].consecutive_failures == 2);
  // Back, and answering: up again.
  REQUIRE(servers[0]->Restart().ok());
  CHECK(backend.Get("k", &item).IsNotFound());
  health.clear();
  REQUIRE(backend.Health(&health).ok());
  CHECK_FALSE(health[0].dead);
  CHECK(health[0].consecutive_failures == 0);
  // Both changes logged, once each, naming the server.
  const std::string address = servers[0]->address();
  INFO(logged.str());
  CHECK(logged.str().find("server " + address + " marked dead after 2 failures in a row") !=
        std::string::npos);
  CHECK(logged.str().find("server " + address + " answers again") != std::string::npos);
}

// A resting server's error uses the words of the log line that marked it, with
// the limit it reached, and counts the failed tries since beside them.
TEST_CASE("the error of a resting server says how many failures marked it",
          "[memcached][health]") {
  REQUIRE(cachet::test::HaveMemcached());
  auto servers = StartServers(1);
  REQUIRE(servers.size() == 1);
  MemcachedOptions options = OptionsFor(servers, Protocol::kText);
  options.pool.retry_timeout = std::chrono::milliseconds(500);
  MemcachedBackend backend(std::move(options));
  Item item;
  REQUIRE(servers[0]->Stop().ok());
  CHECK(backend.Get("k", &item).IsUnavailable());
  CHECK(backend.Get("k", &item).IsUnavailable());
  const auto marked = std::chrono::steady_clock::now();
  Status resting = backend.Get("k", &item);
  INFO(resting.ToString());
  CHECK(resting.IsUnavailable());
  if (std::chrono::steady_clock::now() - marked < std::chrono::milliseconds(400)) {
    CHECK(resting.message().find(servers[0]->address() +
                                 ": marked dead after 2 failures in a row; tried again in") !=
          std::string_view::npos);
  } else {
    WARN("the machine took over 400 ms of the 500 ms rest: the resting check is skipped");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  CHECK(backend.Get("k", &item).IsUnavailable());  // the rest is over: tried, and failed
  Status again = backend.Get("k", &item);
  INFO(again.ToString());
  CHECK(again.message().find("marked dead after 2 failures in a row (1 more on tries since)") !=
        std::string_view::npos);
}

TEST_CASE("the server note keeps no pool's address and skips unobserved caches",
          "[memcached][health][observer]") {
  REQUIRE(cachet::test::HaveMemcached());
  auto observed_servers = StartServers(1);
  auto other_servers = StartServers(1);
  REQUIRE(observed_servers.size() == 1);
  REQUIRE(other_servers.size() == 1);
  auto observed = CacheOver(observed_servers);
  auto log = std::make_shared<ServerLog>();
  observed->SetObserver(log);  // tracing is on in the process from now

  // On a fresh thread: a call on an unobserved Cache, whose pool then goes; a
  // call on another unobserved Cache (the note of the first pool's server must
  // not be read: under ASan it was a use after free); then an observed
  // GetOrCompute, whose load and call name the server they used.
  bool traced_after_unobserved = true;
  std::size_t note_after_unobserved = 1;
  bool loaded = false;
  std::thread thread([&] {
    {
      auto unobserved = CacheOver(other_servers);
      (void)unobserved->Get("k");
      traced_after_unobserved = net::ServerTraceActive();
      note_after_unobserved = net::EndServerTrace().size;
    }
    auto again = CacheOver(other_servers);
    (void)again->Get("k");
    loaded = observed
                 ->GetOrCompute<std::string>("computed",
                                             [] { return Result<std::string>(std::string("v")); })
                 .hit();
  });
  thread.join();
  CHECK_FALSE(traced_after_unobserved);
  CHECK(note_after_unobserved == 0);
  CHECK(loaded);
  REQUIRE(log->servers.size() == 2);  // the load, then the GetOrCompute around it
  CHECK(log->servers[0] == observed_servers[0]->address());
  CHECK(log->servers[1] == observed_servers[0]->address());
}

}  // namespace cachet::memcached::test
