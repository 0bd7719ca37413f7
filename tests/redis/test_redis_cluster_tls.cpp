// A Redis Cluster over TLS, through Cache: three masters that take TLS only
// (--port 0 --tls-port, tls-cluster yes), started here with certificates made
// here, and a store with `mode = cluster`, `tls = true`. The slot map comes from
// CLUSTER SHARDS, whose nodes have a tls-port and no port: every master is
// reached, a get_multi spans slots of every master, and a MOVED (which names a
// TLS port) is followed. One cluster serves the whole executable (one CTest
// test); the test cases run in order.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/redis_cluster.h"
#include "launchers/tls_servers.h"

namespace cachet::test {
namespace {

const TestCertificates& Certificates() {
  static std::unique_ptr<TestCertificates> made = [] {
    REQUIRE(HaveOpenSsl());  // .ci/setup installs it
    auto certs = TestCertificates::Make();
    INFO(certs.status().ToString());
    REQUIRE(certs.ok());
    return std::move(certs).value();
  }();
  return *made;
}

RedisCluster& SharedCluster() {
  static std::unique_ptr<RedisCluster> cluster = [] {
    RedisClusterOptions options;
    options.tls = RedisClusterTls{Certificates().server(), Certificates().ca()};
    auto started = RedisCluster::Start(options);
    if (!started.ok()) FAIL("cluster: " << started.status().ToString());
    return std::move(started).value();
  }();
  return *cluster;
}

// A Cache on the cluster over TLS; only the first node is a seed, so the
// others are reached at the ports the slot map names.
std::unique_ptr<Cache> OpenCache() {
  const std::string text =
      "[cache]\nbackend = redis\n[redis]\nmode = cluster\nservers = " +
      SharedCluster().nodes().front()->address() +
      "\nio_timeout_ms = 2000\ntls = true\ntls_ca_file = " + Certificates().ca() + "\n";
  auto config = Config::Parse(text, "cluster tls test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

// The count after "errorstat_MOVED:count=" in a node's INFO errorstats; 0 if none.
long MovedErrors(int port) {
  const std::string stats = SharedCluster().NodeCli(port, "info errorstats");
  const std::string field = "errorstat_MOVED:count=";
  const std::size_t at = stats.find(field);
  return at == std::string::npos ? 0 : std::stol(stats.substr(at + field.size()));
}

// The master that serves `key` now: the one that does not answer MOVED.
int OwnerOf(const std::string& key) {
  for (int port : SharedCluster().MasterPorts()) {
    if (SharedCluster().NodeCli(port, "exists " + key).rfind("MOVED", 0) != 0) return port;
  }
  return 0;
}

}  // namespace

TEST_CASE("the nodes advertise TLS ports only", "[redis][cluster][tls]") {
  const int port = SharedCluster().nodes().front()->port();
  const std::string shards = SharedCluster().NodeCli(port, "cluster shards");
  CHECK(shards.find("tls-port") != std::string::npos);
  CHECK(shards.find("\nport\n") == std::string::npos);  // --port 0: no plain port
  for (const auto& node : SharedCluster().nodes()) {
    CHECK(shards.find("\n" + std::to_string(node->port()) + "\n") != std::string::npos);
  }
}

TEST_CASE("over TLS: keys on every master, read one by one and in a get_multi",
          "[redis][cluster][tls]") {
  auto cache = OpenCache();
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    keys.push_back("spread:" + std::to_string(i));
    const Status set = cache->Set<std::string>(keys.back(), "value " + std::to_string(i));
    INFO(set.ToString());
    REQUIRE(set.ok());
  }
  const std::vector<int> masters = SharedCluster().MasterPorts();
  REQUIRE(masters.size() == 3);
  long total = 0;
  for (int port : masters) {
    const long held = std::stol(SharedCluster().NodeCli(port, "dbsize"));
    CAPTURE(port);
    CHECK(held > 50);  // about a third each
    total += held;
  }
  CHECK(total == 300);

  for (int i = 0; i < 300; i += 7) {
    auto found = cache->Get<std::string>(keys[i]);
    INFO(found.status().ToString());
    REQUIRE(found.hit());
    CHECK(found.value() == "value " + std::to_string(i));
  }
  keys.push_back("spread:never-set");
  auto many = cache->GetMulti<std::string>(keys);
  REQUIRE(many.size() == keys.size());
  for (int i = 0; i < 300; ++i) {
    INFO(keys[i] << ": " << many[i].status().ToString());
    REQUIRE(many[i].hit());
    CHECK(many[i].value() == "value " + std::to_string(i));
  }
  CHECK(many.back().miss());
}

TEST_CASE("over TLS: a slot moved to another master is followed by its MOVED",
          "[redis][cluster][tls]") {
  auto cache = OpenCache();
  REQUIRE(cache->Set<std::string>("warm", "up").ok());  // the slot map is loaded

  // A key whose slot holds no key yet, so it can be moved without MIGRATE.
  std::string key;
  int source = 0;
  for (int i = 0; i < 50 && key.empty(); ++i) {
    const std::string candidate = "moved:" + std::to_string(i);
    const int owner = OwnerOf(candidate);
    REQUIRE(owner != 0);
    const std::string slot = SharedCluster().NodeCli(owner, "cluster keyslot " + candidate);
    if (SharedCluster().NodeCli(owner, "cluster countkeysinslot " + slot) == "0") {
      key = candidate;
      source = owner;
    }
  }
  REQUIRE(!key.empty());
  const std::string slot = SharedCluster().NodeCli(source, "cluster keyslot " + key);
  int target = 0;
  for (int port : SharedCluster().MasterPorts()) {
    if (port != source) target = port;
  }
  REQUIRE(target != 0);
  const std::string target_id = SharedCluster().NodeCli(target, "cluster myid");
  const std::string source_id = SharedCluster().NodeCli(source, "cluster myid");
  REQUIRE(SharedCluster().NodeCli(target, "cluster setslot " + slot + " importing " + source_id) ==
          "OK");
  REQUIRE(SharedCluster().NodeCli(source, "cluster setslot " + slot + " migrating " + target_id) ==
          "OK");
  for (int port : SharedCluster().MasterPorts()) {
    REQUIRE(SharedCluster().NodeCli(port, "cluster setslot " + slot + " node " + target_id) ==
            "OK");
  }
  REQUIRE(SharedCluster().WaitUntilHealthy().ok());
  // The source now redirects to the target's TLS port, the only port it has.
  CHECK(SharedCluster().NodeCli(source, "exists " + key) ==
        "MOVED " + slot + " 127.0.0.1:" + std::to_string(target));

  // The cache still maps the slot to the source: it is told MOVED there and
  // follows it over TLS to the target.
  const long moved_before = MovedErrors(source);
  const Status set = cache->Set<std::string>(key, "moved over tls");
  INFO(set.ToString());
  REQUIRE(set.ok());
  CHECK(MovedErrors(source) > moved_before);
  CHECK(SharedCluster().NodeCli(target, "exists " + key) == "1");
  auto found = cache->Get<std::string>(key);
  INFO(found.status().ToString());
  REQUIRE(found.hit());
  CHECK(found.value() == "moved over tls");
  auto both = cache->GetMulti<std::string>({key, "warm"});
  REQUIRE(both.size() == 2);
  CHECK(both[0].hit());
  CHECK(both[1].hit());
}

}  // namespace cachet::test
