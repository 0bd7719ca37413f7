// Unix-domain sockets: memcached -s and redis-server --unixsocket reached as
// "unix:/path" servers, placement spreading keys over two of them like any
// servers, and a path with no server behind it a clear error, never a miss.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "launchers/memcached_server.h"
#include "launchers/tls_servers.h"

namespace cachet::test {
namespace {

std::unique_ptr<UnixSocketServer> StartUnix(const std::string& store) {
  auto started =
      store == "redis" ? UnixSocketServer::StartRedis() : UnixSocketServer::StartMemcached();
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  return std::move(started).value();
}

std::unique_ptr<Cache> Open(const std::string& store, const std::string& servers) {
  auto config =
      Config::Parse("[cache]\nbackend = " + store + "\nnamespace = u:\n[" + store +
                        "]\nservers = " + servers + "\nio_timeout_ms = 500\nretry_timeout_ms = 0\n",
                    "unix test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

}  // namespace

TEST_CASE("a unix: server stores and reads values", "[unix]") {
  const std::string store = GENERATE(std::string("memcached"), std::string("redis"));
  INFO(store);
  auto server = StartUnix(store);
  auto cache = Open(store, server->address());
  REQUIRE(cache->Set<std::string>("k", "over a unix socket").ok());
  auto found = cache->Get<std::string>("k");
  REQUIRE(found.hit());
  CHECK(found.value() == "over a unix socket");
  CHECK(cache->Get<std::string>("absent").miss());
}

TEST_CASE("placement spreads keys over unix: servers as over any servers", "[unix]") {
  const std::string store = GENERATE(std::string("memcached"), std::string("redis"));
  INFO(store);
  auto first = StartUnix(store);
  auto second = StartUnix(store);
  auto both = Open(store, first->address() + "," + second->address());
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) {
    keys.push_back("spread" + std::to_string(i));
    REQUIRE(both->Set<std::string>(keys.back(), "v").ok());
  }
  // Each server alone holds a share of the keys, and together all of them.
  auto alone_first = Open(store, first->address());
  auto alone_second = Open(store, second->address());
  int on_first = 0, on_second = 0;
  for (const std::string& key : keys) {
    on_first += alone_first->Get<std::string>(key).hit() ? 1 : 0;
    on_second += alone_second->Get<std::string>(key).hit() ? 1 : 0;
  }
  CHECK(on_first > 20);
  CHECK(on_second > 20);
  CHECK(on_first + on_second == 200);
}

TEST_CASE("a unix: path with no server is an error naming it", "[unix]") {
  const std::string store = GENERATE(std::string("memcached"), std::string("redis"));
  INFO(store);
  auto cache = Open(store, "unix:/nonexistent/cachet-test.sock");
  const Status set = cache->Set<std::string>("k", "v");
  INFO(set.ToString());
  CHECK(set.IsUnavailable());
  CHECK(std::string(set.message()).find("unix:/nonexistent/cachet-test.sock") != std::string::npos);
  CHECK(std::string(set.message()).find("No such file or directory") != std::string::npos);
  auto found = cache->Get<std::string>("k");
  CHECK(found.status().IsError());
  CHECK_FALSE(found.miss());
}

TEST_CASE("a unix: path too long for the system is a config error", "[unix]") {
  auto config = Config::Parse(
      "[cache]\nbackend = memcached\n[memcached]\nservers = unix:/" + std::string(200, 'x') + "\n",
      "unix test");
  REQUIRE(config.ok());
  auto cache = Cache::Open(std::move(config).value());
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().IsConfigError());
  CHECK(std::string(cache.status().message()).find("socket path longer than") != std::string::npos);
}

}  // namespace cachet::test
