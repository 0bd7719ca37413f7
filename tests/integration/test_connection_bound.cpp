// max_connections against real servers: many threads sharing one Cache never
// hold more connections to a server than the bound, counted on the server's
// side (/proc/net/tcp, those open at one instant) and in Cache::Health(), and
// every call still succeeds; threads waiting for a connection are served in
// turn, none kept waiting past its deadline while others take the connection
// again and again; and a single call that waits for the only connection, held
// on a stalled server, ends within its request timeout.
// (A wait that outlasts its deadline is tested on the pool itself, in
// tests/unit/test_connection.cpp.)
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/memcached_server.h"
#include "launchers/redis_server.h"
#include "support/waits.h"

namespace cachet::test {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<Cache> OpenCache(const std::string& text) {
  auto config = Config::Parse(text, "bound test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

// A Cache of `backend` on `address` allowed one connection, each call 2 s in all.
std::unique_ptr<Cache> OneConnectionCache(const std::string& backend, const std::string& address) {
  return OpenCache("[cache]\nbackend = " + backend + "\n[" + backend + "]\nservers = " + address +
                   "\npool_size = 1\nmax_connections = 1\nio_timeout_ms = 2000\n"
                   "request_timeout_ms = 2000\n");
}

// Established TCP connections whose local port is `port`: the server's ends of
// its clients' connections (IPv4 loopback, as the launchers listen), by the
// client's address (a line read twice, as the table changes while it is read
// in pieces, is the same connection). `unread_only`: those holding bytes the
// server has not read yet (a request a stopped server has not taken).
std::set<std::string> EstablishedTo(int port, bool unread_only = false) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  std::set<std::string> clients;
  char wanted[8];
  std::snprintf(wanted, sizeof wanted, ":%04X", port);
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;  // queues: "tx_queue:rx_queue" in hex
    fields >> slot >> local >> remote >> state >> queues;
    const std::size_t colon = queues.find(':');
    const bool unread = colon != std::string::npos && queues.find_first_not_of('0', colon + 1) !=
                                                          std::string::npos;
    if (state == "01" && local.size() > 5 && local.compare(local.size() - 5, 5, wanted) == 0 &&
        (unread || !unread_only)) {
      clients.insert(remote);
    }
  }
  return clients;
}

// How many connections to `port` were open at one instant: those in two
// reads of the table, one after the other, were all open between the reads.
// One read alone is no snapshot: it may list a connection closed while the
// read went on beside the one opened after it, and count both.
int OpenTogether(int port) {
  const std::set<std::string> first = EstablishedTo(port);
  const std::set<std::string> second = EstablishedTo(port);
  int both = 0;
  for (const std::string& client : first) both += second.count(client) != 0 ? 1 : 0;
  return both;
}

struct Observed {
  int most_on_server = 0;
  std::uint64_t most_in_health = 0;
};

// 48 threads, each 100 set/get pairs on its own keys, through `cache`, while
// a monitor samples the server's and the Cache's connection counts.
Observed Hammer(Cache& cache, int port) {
  constexpr int kThreads = 48;
  constexpr int kRounds = 100;
  std::atomic<int> failures{0};
  std::atomic<bool> running{true};
  Observed seen;
  std::thread monitor([&] {
    for (int i = 0; i < 5000 && running.load(); ++i) {  // bounded: 5000 x 2 ms at most
      seen.most_on_server = std::max(seen.most_on_server, OpenTogether(port));
      for (const ServerHealth& h : cache.Health()) {
        seen.most_in_health = std::max(seen.most_in_health, h.connections);
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const std::string key = "bound:" + std::to_string(t) + ":" + std::to_string(r);
        if (!cache.Set(key, std::string("v") + std::to_string(r)).ok()) ++failures;
        auto got = cache.Get<std::string>(key);
        if (!got.hit() || got.value() != "v" + std::to_string(r)) ++failures;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  running = false;
  monitor.join();
  CHECK(failures.load() == 0);
  return seen;
}

// With max_connections = 1 and the server stalled, one call holds the only
// connection while a second call waits for it. The wait counts in the second
// call's request timeout, so it ends within request_timeout_ms (2 s here),
// not a wait and then a whole request timeout more. Returns how long it took.
std::chrono::milliseconds WaitingCallTime(Cache& cache, ServerProcess& server) {
  REQUIRE(cache.Set("held", std::string("v")).ok());  // the one connection, pooled
  REQUIRE(server.Pause().ok());
  std::thread holder([&] { (void)cache.Get<std::string>("held"); });
  // The holder has the connection once its request waits, unread, at the server.
  const bool holding = WaitUntil([&] { return !EstablishedTo(server.port(), true).empty(); },
                                 milliseconds(5000));
  const auto began = std::chrono::steady_clock::now();
  const auto waited = cache.Get<std::string>("waiting");
  const auto took =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - began);
  holder.join();
  REQUIRE(server.Resume().ok());
  REQUIRE(holding);
  INFO(waited.status().ToString());
  CHECK(waited.status().IsTimeout());
  return took;
}

// `threads` threads, each `rounds` gets in a row through `cache`, on a server
// where each get takes a round trip: the calls that failed (timed out waiting
// for a connection, with nothing wrong with the server).
int FailedWhileSharing(Cache& cache, int threads, int rounds) {
  REQUIRE(cache.Set("shared", std::string("v")).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int r = 0; r < rounds; ++r) {
        if (!cache.Get<std::string>("shared").hit()) ++failures;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  return failures.load();
}

}  // namespace

TEST_CASE("memcached: threads waiting for the one connection are served in turn",
          "[pool][memcached]") {
  // 16 threads share max_connections = 1; a call may wait 2 s in all. Served in
  // turn, a call waits for 15 round trips, so none times out. (That the
  // connection goes to the waiting thread rather than back to its giver is
  // checked on the pool itself, in tests/unit/test_connection.cpp; with the
  // giver taking it back, 50 ms deadlines here saw calls time out.)
  REQUIRE(HaveMemcached());
  auto server = StartMemcached();
  REQUIRE(server.ok());
  auto cache = OneConnectionCache("memcached", (*server)->address());
  CHECK(FailedWhileSharing(*cache, 16, 400) == 0);
  CHECK(cache->Health()[0].pool_timeouts == 0);
}

TEST_CASE("redis: threads waiting for the one connection are served in turn", "[pool][redis]") {
  auto server = StartRedis();
  REQUIRE(server.ok());
  auto cache = OneConnectionCache("redis", (*server)->address());
  CHECK(FailedWhileSharing(*cache, 16, 400) == 0);
  CHECK(cache->Health()[0].pool_timeouts == 0);
}

TEST_CASE("redis: 48 threads with max_connections = 4 hold at most 4 connections",
          "[pool][redis]") {
  auto server = StartRedis();
  REQUIRE(server.ok());
  auto cache = OpenCache("[cache]\nbackend = redis\n[redis]\nservers = " + (*server)->address() +
                         "\npool_size = 2\nmax_connections = 4\nio_timeout_ms = 5000\n");
  const Observed seen = Hammer(*cache, (*server)->port());
  CHECK(seen.most_on_server >= 1);
  CHECK(seen.most_on_server <= 4);
  CHECK(seen.most_in_health <= 4);
  const std::vector<ServerHealth> health = cache->Health();
  REQUIRE(health.size() == 1);
  CHECK(health[0].pool_timeouts == 0);
  CHECK(health[0].errors == 0);
}

TEST_CASE("memcached: 48 threads with max_connections = 3 hold at most 3 connections",
          "[pool][memcached]") {
  REQUIRE(HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = StartMemcached();
  REQUIRE(server.ok());
  auto cache =
      OpenCache("[cache]\nbackend = memcached\n[memcached]\nservers = " + (*server)->address() +
                "\npool_size = 1\nmax_connections = 3\nio_timeout_ms = 5000\n");
  const Observed seen = Hammer(*cache, (*server)->port());
  CHECK(seen.most_on_server >= 1);
  CHECK(seen.most_on_server <= 3);
  CHECK(seen.most_in_health <= 3);
  CHECK(cache->Health()[0].errors == 0);
}

TEST_CASE("without a bound, the same load opens more connections than the bound would allow",
          "[pool][redis]") {
  // The control for the cases above: their bound is what kept the count down.
  auto server = StartRedis();
  REQUIRE(server.ok());
  auto cache = OpenCache("[cache]\nbackend = redis\n[redis]\nservers = " + (*server)->address() +
                         "\npool_size = 2\nio_timeout_ms = 5000\n");
  const Observed seen = Hammer(*cache, (*server)->port());
  CHECK(seen.most_in_health > 4);
}

TEST_CASE("memcached: a call waiting for a connection ends within its request timeout",
          "[pool][memcached]") {
  REQUIRE(HaveMemcached());
  auto server = StartMemcached();
  REQUIRE(server.ok());
  auto cache = OneConnectionCache("memcached", (*server)->address());
  // 2 s, plus a loaded machine's slack; a wait and then a whole timeout would be 3.8 s.
  CHECK(WaitingCallTime(*cache, **server) < milliseconds(3000));
}

TEST_CASE("redis: a call waiting for a connection ends within its request timeout",
          "[pool][redis]") {
  auto server = StartRedis();
  REQUIRE(server.ok());
  auto cache = OneConnectionCache("redis", (*server)->address());
  CHECK(WaitingCallTime(*cache, **server) < milliseconds(3000));
}

}  // namespace cachet::test
