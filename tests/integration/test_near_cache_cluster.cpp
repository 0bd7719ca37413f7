// The near cache over a real Redis Cluster (3 masters, 1 replica each) with
// tracking: auto picks it and tracking is accepted; another client's write on
// each master is seen; a redirect seen by the data path drops the near cache
// before the next read; a reshard and a failover leave no stale entry served.
// Every Cache uses ttl_ms = 0, so only an invalidation (or a drop) can make a
// changed value show, never an expiry. One cluster serves the executable (one
// CTest test); the cases run in order, the later ones changing the cluster.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/redis_cluster.h"
#include "support/waits.h"

namespace cachet::test {
namespace {

using std::chrono::milliseconds;

RedisCluster& SharedCluster() {
  static std::unique_ptr<RedisCluster> cluster = [] {
    RedisClusterOptions options;
    options.replicas = 1;
    auto started = RedisCluster::Start(options);
    if (!started.ok()) FAIL("cluster: " << started.status().ToString());
    return std::move(started).value();
  }();
  return *cluster;
}

std::unique_ptr<Cache> OpenCluster(const std::string& invalidation = "auto") {
  const std::string text =
      "[cache]\nbackend = redis\nnamespace = n:\nnear_cache = on\n[redis]\nmode = cluster\n"
      "servers = " +
      SharedCluster().seeds() +
      "\nio_timeout_ms = 2000\n[near_cache]\nttl_ms = 0\ninvalidation = " + invalidation + "\n";
  auto config = Config::Parse(text, "near cluster test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

// Waits (at most 10 s) until `done()` holds; returns whether it did.
template <class Done>
bool WaitFor(Done done) {
  return WaitUntil(done, milliseconds(10000), milliseconds(10));
}

bool Live(const Cache& cache) { return cache.near_metrics().live; }

std::string Read(Cache& cache, const std::string& key) {
  auto found = cache.Get<std::string>(key);
  return found.hit() ? found.value() : (found.miss() ? "<miss>" : "<error>");
}

// The keys (without the namespace) that the master on `port` holds now.
std::vector<std::string> KeysOn(int port) {
  std::istringstream lines(RedisCluster::Cli(port, "--scan --pattern 'n:*'"));
  std::vector<std::string> keys;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("n:")) keys.push_back(line.substr(2));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Reads `key` twice; whether the second read was answered near.
bool SecondReadNear(Cache& cache, const std::string& key, const std::string& expected) {
  REQUIRE(Read(cache, key) == expected);
  const auto hits = cache.near_metrics().hits;
  REQUIRE(Read(cache, key) == expected);
  return cache.near_metrics().hits == hits + 1;
}

// Reads `key` twice: the second read must be answered near.
void ReadNear(Cache& cache, const std::string& key, const std::string& expected) {
  REQUIRE(Read(cache, key) == expected);
  const auto hits = cache.near_metrics().hits;
  REQUIRE(Read(cache, key) == expected);
  REQUIRE(cache.near_metrics().hits == hits + 1);
}

// Until the invalidation arrives the old value may be read; after the new one
// is seen, never the old one again. Returns whether the new one was seen.
bool SeesNewValue(Cache& cache, const std::string& key, const std::string& old_value,
                  const std::string& new_value) {
  const auto written = std::chrono::steady_clock::now();
  const bool seen = WaitFor([&] {
    const std::string value = Read(cache, key);
    REQUIRE((value == old_value || value == new_value || value == "<error>"));
    return value == new_value;
  });
  const auto delay = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - written);
  WARN(key << ": " << new_value << " seen " << delay.count() << " us after the write returned");
  for (int i = 0; seen && i < 50; ++i) REQUIRE(Read(cache, key) == new_value);
  return seen;
}

std::string NodeId(int port) { return RedisCluster::Cli(port, "cluster myid"); }

// The master a replica follows ("role" says slave, host, port, ...).
int MasterOf(int replica) {
  std::istringstream lines(RedisCluster::Cli(replica, "role"));
  std::string role, host, port;
  std::getline(lines, role);
  std::getline(lines, host);
  std::getline(lines, port);
  return role == "slave" ? std::stoi(port) : 0;
}

// Writes k0..k199 through `cache` and returns, per master port, its keys.
std::map<int, std::vector<std::string>> SpreadKeys(Cache& cache) {
  for (int i = 0; i < 200; ++i) {
    REQUIRE(cache.Set("k" + std::to_string(i), std::string("v0")).ok());
  }
  std::map<int, std::vector<std::string>> on;
  for (const int port : SharedCluster().MasterPorts()) on[port] = KeysOn(port);
  return on;
}

}  // namespace

TEST_CASE("cluster near: auto picks tracking and tracking is accepted", "[near][cluster]") {
  REQUIRE(SharedCluster().WaitUntilHealthy().ok());
  for (const char* mode : {"auto", "tracking"}) {
    auto cache = OpenCluster(mode);
    INFO(mode);
    CHECK(cache->near_metrics().tracking);
    CHECK(WaitFor([&] { return Live(*cache); }));
  }
}

TEST_CASE("cluster near: another client's write on each master is seen", "[near][cluster]") {
  REQUIRE(SharedCluster().WaitUntilHealthy().ok());
  auto cache = OpenCluster();
  REQUIRE(WaitFor([&] { return Live(*cache); }));
  const auto on = SpreadKeys(*cache);
  REQUIRE(on.size() == 3);
  for (const auto& [port, keys] : on) {
    INFO("master " << port);
    REQUIRE(!keys.empty());
    const std::string& key = keys.front();
    // Our own write's invalidation may still be on its way: wait for a kept read.
    REQUIRE(WaitFor([&] { return SecondReadNear(*cache, key, "v0"); }));
    const auto invalidations = cache->near_metrics().invalidations;
    REQUIRE(RedisCluster::Cli(port, "SET 'n:" + key + "' v1") == "OK");
    CHECK(SeesNewValue(*cache, key, "v0", "v1"));
    CHECK(cache->near_metrics().invalidations > invalidations);
    ReadNear(*cache, key, "v1");
  }
}

TEST_CASE("cluster near: a reshard drops every entry at the first redirect, no stale read",
          "[near][cluster]") {
  REQUIRE(SharedCluster().WaitUntilHealthy().ok());
  auto cache = OpenCluster();
  REQUIRE(WaitFor([&] { return Live(*cache); }));
  // "{m}a" is near-cached; "{m}b", in the same slot, is never written, so a
  // read of it goes to the store and meets the redirect.
  // "{o}a", in another slot, stays where it is.
  const std::string moved = "{m}a", probe = "{m}b", other = "{o}a";
  REQUIRE(cache->Set(moved, std::string("v0")).ok());
  REQUIRE(cache->Set(other, std::string("v0")).ok());
  int source = 0, target = 0;
  for (const int port : SharedCluster().MasterPorts()) {
    const auto keys = KeysOn(port);
    if (std::find(keys.begin(), keys.end(), moved) != keys.end()) source = port;
  }
  for (const int port : SharedCluster().MasterPorts()) {
    if (port != source) target = port;
  }
  REQUIRE(source != 0);
  REQUIRE(target != 0);
  for (const std::string& key : {moved, other}) {
    REQUIRE(WaitFor([&] { return SecondReadNear(*cache, key, "v0"); }));
  }
  REQUIRE(cache->near_metrics().entries == 2);
  const auto dropped = cache->near_metrics().dropped_by_lost_link;
  const std::string slot = RedisCluster::Cli(source, "cluster keyslot 'n:" + moved + "'");
  // The slot and its key go to the target (importing, migrating, MIGRATE),
  // then every master is told the new owner; no client is.
  REQUIRE(RedisCluster::Cli(target, "cluster setslot " + slot + " importing " + NodeId(source)) ==
          "OK");
  REQUIRE(RedisCluster::Cli(source, "cluster setslot " + slot + " migrating " + NodeId(target)) ==
          "OK");
  REQUIRE(RedisCluster::Cli(source, "migrate 127.0.0.1 " + std::to_string(target) + " 'n:" +
                                        moved + "' 0 5000") == "OK");
  for (const int port : SharedCluster().MasterPorts()) {
    REQUIRE(RedisCluster::Cli(port, "cluster setslot " + slot + " node " + NodeId(target)) ==
            "OK");
  }
  // The read that meets MOVED drops everything before it returns. If the
  // tracker's own check of the slot map got there first and tracking is live
  // again, the probe's miss may be kept; either way both earlier entries are
  // gone ("{m}a" may have gone first, by the invalidation MIGRATE's delete sends).
  REQUIRE(Read(*cache, probe) == "<miss>");
  CHECK(cache->near_metrics().entries <= 1);
  CHECK(cache->near_metrics().dropped_by_lost_link > dropped);
  const auto hits = cache->near_metrics().hits;
  REQUIRE(Read(*cache, other) == "v0");
  CHECK(cache->near_metrics().hits == hits);  // read from the store: its entry was dropped
  // A write on the new owner is seen, never the old value after it.
  REQUIRE(RedisCluster::Cli(target, "SET 'n:" + moved + "' v2") == "OK");
  CHECK(SeesNewValue(*cache, moved, "v0", "v2"));
  // Tracking follows the new map: entries are served near again, and the new
  // owner's next write is seen.
  REQUIRE(WaitFor([&] { return Live(*cache); }));
  REQUIRE(WaitFor([&] { return SecondReadNear(*cache, moved, "v2"); }));
  REQUIRE(RedisCluster::Cli(target, "SET 'n:" + moved + "' v3") == "OK");
  CHECK(SeesNewValue(*cache, moved, "v2", "v3"));
  REQUIRE(SharedCluster().WaitUntilHealthy().ok());
}

TEST_CASE("cluster near: a failover leaves no stale entry served", "[near][cluster]") {
  REQUIRE(SharedCluster().WaitUntilHealthy().ok());
  auto cache = OpenCluster();
  REQUIRE(WaitFor([&] { return Live(*cache); }));
  const auto on = SpreadKeys(*cache);
  const int promoted = SharedCluster().ReplicaPorts().front();
  const int old_master = MasterOf(promoted);
  REQUIRE(on.count(old_master) == 1);
  const std::string key = on.at(old_master).front();
  REQUIRE(WaitFor([&] { return SecondReadNear(*cache, key, "v0"); }));
  REQUIRE(RedisCluster::Failover(promoted));
  REQUIRE(SharedCluster().WaitUntilHealthy().ok());
  REQUIRE(RedisCluster::Cli(promoted, "SET 'n:" + key + "' v3") == "OK");
  CHECK(SeesNewValue(*cache, key, "v0", "v3"));
  // Tracking follows the new primary (a link to it, none left to the demoted
  // node): its next write is seen too.
  const auto tracking_link = [](int port) {
    return RedisCluster::Cli(port, "client list").find("name=cachet-tracking") !=
           std::string::npos;
  };
  REQUIRE(WaitFor([&] { return tracking_link(promoted) && !tracking_link(old_master); }));
  REQUIRE(WaitFor([&] { return Live(*cache); }));
  ReadNear(*cache, key, "v3");
  REQUIRE(RedisCluster::Cli(promoted, "SET 'n:" + key + "' v4") == "OK");
  CHECK(SeesNewValue(*cache, key, "v3", "v4"));
}

}  // namespace cachet::test
