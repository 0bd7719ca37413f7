// The network stores' shared options (net/pool_config.h) and the guarded plugin
// factory body (plugin.h).
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "cachet/config.h"
#include "cachet/net/pool_config.h"
#include "cachet/net/tls.h"
#include "cachet/plugin.h"

using cachet::Config;
using cachet::OptionSpec;
using cachet::OptionType;
using cachet::Status;

namespace {

constexpr std::array kPoolOptions = {
    OptionSpec{"connect_timeout_ms", OptionType::kInt, "250", "connect timeout"},
    OptionSpec{"io_timeout_ms", OptionType::kInt, "1000", "io timeout"},
    OptionSpec{"request_timeout_ms", OptionType::kInt, "0", "a whole call"},
    OptionSpec{"failure_limit", OptionType::kInt, "2", "failures before dead"},
    OptionSpec{"retry_timeout_ms", OptionType::kInt, "2000", "rest of a dead server"},
    OptionSpec{"pool_size", OptionType::kInt, "16", "idle connections per server"},
    OptionSpec{"max_connections", OptionType::kInt, "0", "open at once per server"},
    OptionSpec{"failover", OptionType::kBool, "false", "move keys of dead servers"},
    OptionSpec{"failover_max_keys", OptionType::kInt, "10000", "keys noted per dead server"},
};

// Validates `text` against the pool options (all of them, or all but failover's two).
Status Read(std::string text, bool with_failover, cachet::net::ServerPoolOptions* out) {
  auto config = Config::Parse(text, "store.conf");
  REQUIRE(config.ok());
  std::span<const OptionSpec> schema(kPoolOptions);
  if (!with_failover) schema = schema.first(schema.size() - 2);
  REQUIRE(config->Validate("store", schema).ok());
  return cachet::net::ReadServerPoolOptions(*config->section("store"), out);
}

}  // namespace

TEST_CASE("the shared network options fill the pool options", "[net][config]") {
  cachet::net::ServerPoolOptions options;
  REQUIRE(Read("[store]\nconnect_timeout_ms = 5\nio_timeout_ms = 6\nfailure_limit = 7\n"
               "retry_timeout_ms = 8\npool_size = 9\nmax_connections = 12\nfailover = true\n"
               "failover_max_keys = 13\n",
               true, &options)
              .ok());
  CHECK(options.connection.connect_timeout == std::chrono::milliseconds(5));
  CHECK(options.connection.io_timeout == std::chrono::milliseconds(6));
  CHECK(options.connection.CallTimeout() == std::chrono::milliseconds(18));  // 3 x io
  CHECK(options.failure_limit == 7);
  CHECK(options.retry_timeout == std::chrono::milliseconds(8));
  CHECK(options.pool_size == 9);
  CHECK(options.max_connections == 12);
  CHECK(options.failover);
  CHECK(options.failover_max_keys == 13);
}

TEST_CASE("the shared schema's defaults are ServerPoolOptions' own", "[net][config]") {
  auto config = Config::Parse("[store]\n", "store.conf");
  REQUIRE(config.ok());
  REQUIRE(config->Validate("store", cachet::net::kServerPoolOptionSpecs).ok());
  cachet::net::ServerPoolOptions options;
  options.pool_size = 0;  // so the read, not the struct, must give each default
  options.failure_limit = 0;
  options.retry_timeout = std::chrono::milliseconds(0);
  options.connection.connect_timeout = std::chrono::milliseconds(0);
  options.connection.io_timeout = std::chrono::milliseconds(0);
  REQUIRE(cachet::net::ReadServerPoolOptions(*config->section("store"), &options).ok());
  const cachet::net::ServerPoolOptions defaults;
  CHECK(options.pool_size == defaults.pool_size);
  CHECK(options.pool_size == 16);
  CHECK(options.max_connections == defaults.max_connections);
  CHECK(options.failure_limit == defaults.failure_limit);
  CHECK(options.retry_timeout == defaults.retry_timeout);
  CHECK(options.connection.connect_timeout == defaults.connection.connect_timeout);
  CHECK(options.connection.io_timeout == defaults.connection.io_timeout);
}

TEST_CASE("request_timeout_ms bounds a call, 0 is three times io_timeout_ms", "[net][config]") {
  cachet::net::ServerPoolOptions options;
  REQUIRE(Read("[store]\nio_timeout_ms = 500\nrequest_timeout_ms = 700\n", false, &options).ok());
  CHECK(options.connection.CallTimeout() == std::chrono::milliseconds(700));
  REQUIRE(Read("[store]\n", false, &options).ok());
  CHECK(options.connection.CallTimeout() == std::chrono::milliseconds(3000));
  // Set in code: 0 follows io_timeout too.
  options.connection.io_timeout = std::chrono::milliseconds(5000);
  CHECK(options.connection.CallTimeout() == std::chrono::milliseconds(15000));
}

TEST_CASE("a store without failover keeps the pool's default", "[net][config]") {
  cachet::net::ServerPoolOptions options;
  REQUIRE(Read("[store]\n", false, &options).ok());
  CHECK_FALSE(options.failover);
  CHECK(options.connection.io_timeout == std::chrono::milliseconds(1000));
}

TEST_CASE("an out-of-bounds network option is refused by name", "[net][config]") {
  cachet::net::ServerPoolOptions options;
  const Status status = Read("[store]\nio_timeout_ms = 0\n", true, &options);
  REQUIRE(status.IsConfigError());
  CHECK(std::string(status.message()).find("[store] io_timeout_ms = 0") != std::string::npos);
  CHECK(options.connection.io_timeout == cachet::net::ServerPoolOptions{}.connection.io_timeout);
  CHECK(Read("[store]\npool_size = 5000\n", true, &options).IsConfigError());
  CHECK(Read("[store]\nmax_connections = -1\n", true, &options).IsConfigError());
  CHECK(options.max_connections == 0);  // unchanged: no bound by default
}

TEST_CASE("a factory's exceptions become plugin errors naming the store", "[plugin]") {
  CHECK(cachet::GuardedCreate("s", [] { return Status::OK(); }).ok());
  CHECK(cachet::GuardedCreate("s", [] { return Status::ConfigError("bad"); }).IsConfigError());
  const Status thrown = cachet::GuardedCreate("mystore", []() -> Status {
    throw std::runtime_error("socket table full");
  });
  CHECK(thrown.code() == cachet::StatusCode::kPluginError);
  CHECK(thrown.message() == "mystore: socket table full");
  const Status oom = cachet::GuardedCreate("mystore", []() -> Status { throw std::bad_alloc(); });
  CHECK(oom.message() == "mystore: out of memory creating the backend");
  const Status odd = cachet::GuardedCreate("mystore", []() -> Status { throw 7; });
  CHECK(odd.message() == "mystore: unknown error creating the backend");
}

TEST_CASE("a plugin's own options and the shared ones join into one schema", "[net][config]") {
  static constexpr OptionSpec kOwn[] = {
      {"servers", OptionType::kList, "127.0.0.1:1", "servers"},
  };
  constexpr auto joined = cachet::net::JoinOptionSpecs(
      cachet::net::JoinOptionSpecs(kOwn, cachet::net::kServerPoolOptionSpecs),
      cachet::net::kFailoverOptionSpec);
  static_assert(joined.size() == 18);
  CHECK(std::string(joined[0].name) == "servers");
  CHECK(std::string(joined[1].name) == "connect_timeout_ms");
  CHECK(std::string(joined[8].name) == "tls");
  CHECK(std::string(joined[16].name) == "failover");
  CHECK(std::string(joined[17].name) == "failover_max_keys");
}

TEST_CASE("tls builds the store's TLS context when the options are read", "[net][config]") {
  auto read = [](const std::string& text, cachet::net::ServerPoolOptions* out) {
    auto config = Config::Parse(text, "store.conf");
    REQUIRE(config.ok());
    REQUIRE(config->Validate("store", cachet::net::kServerPoolOptionSpecs).ok());
    return cachet::net::ReadServerPoolOptions(*config->section("store"), out);
  };
  cachet::net::ServerPoolOptions plain;
  REQUIRE(read("[store]\n", &plain).ok());
  CHECK(plain.connection.tls == nullptr);
  cachet::net::ServerPoolOptions secured;
  REQUIRE(read("[store]\ntls = true\ntls_min_version = 1.3\n", &secured).ok());
  REQUIRE(secured.connection.tls != nullptr);
  CHECK(secured.connection.tls->options().min_version == 0x0304);
  CHECK(secured.connection.tls->options().verify);
  cachet::net::ServerPoolOptions untouched;
  const Status missing = read("[store]\ntls = true\ntls_cert_file = /nonexistent.crt\n", &untouched);
  CHECK(missing.IsConfigError());
  CHECK(std::string(missing.message()).find("store.conf:3: [store] tls_cert_file = /nonexistent.crt") !=
        std::string::npos);
  CHECK(untouched.connection.tls == nullptr);
}

TEST_CASE("servers and distribution are read, bad entries named", "[net][config]") {
  static constexpr OptionSpec kSchema[] = {
      {"servers", OptionType::kList, "127.0.0.1", "servers"},
      {"distribution", OptionType::kString, "ketama", "placement", false, false,
       "ketama|modula"},
  };
  auto config = Config::Parse("[store]\nservers = 10.0.0.1, 10.0.0.2:99:3\n"
                              "distribution = modula\n",
                              "store.conf");
  REQUIRE(config.ok());
  REQUIRE(config->Validate("store", kSchema).ok());
  std::vector<cachet::net::ServerAddress> servers;
  cachet::net::DistributionKind kind = cachet::net::DistributionKind::kKetama;
  REQUIRE(cachet::net::ReadServers(*config->section("store"), 4242, &servers, &kind).ok());
  REQUIRE(servers.size() == 2);
  CHECK(servers[0].port == 4242);
  CHECK(servers[1].port == 99);
  CHECK(servers[1].weight == 3);
  CHECK(kind == cachet::net::DistributionKind::kModula);

  auto bad = Config::Parse("[store]\nservers = 10.0.0.1:notaport\n", "store.conf");
  REQUIRE(bad.ok());
  REQUIRE(bad->Validate("store", kSchema).ok());
  servers.clear();
  const Status status = cachet::net::ReadServers(*bad->section("store"), 4242, &servers, &kind);
  REQUIRE(status.IsConfigError());
  CHECK(std::string(status.message())
            .starts_with("store.conf:2: [store] servers = 10.0.0.1:notaport: "));
  CHECK(servers.empty());
}
