// The network stores' shared options (net/pool_config.h) and the guarded plugin
// factory body (plugin.h).
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <new>
#include <stdexcept>
#include <string>

#include "cachet/config.h"
#include "cachet/net/pool_config.h"
#include "cachet/plugin.h"

using cachet::Config;
using cachet::OptionSpec;
using cachet::OptionType;
using cachet::Status;

namespace {

constexpr std::array kPoolOptions = {
    OptionSpec{"connect_timeout_ms", OptionType::kInt, "250", "connect timeout"},
    OptionSpec{"io_timeout_ms", OptionType::kInt, "1000", "io timeout"},
    OptionSpec{"failure_limit", OptionType::kInt, "2", "failures before dead"},
    OptionSpec{"retry_timeout_ms", OptionType::kInt, "2000", "rest of a dead server"},
    OptionSpec{"pool_size", OptionType::kInt, "8", "idle connections per server"},
    OptionSpec{"failover", OptionType::kBool, "false", "move keys of dead servers"},
};

// Validates `text` against the pool options (all of them, or all but failover).
Status Read(std::string text, bool with_failover, cachet::net::ServerPoolOptions* out) {
  auto config = Config::Parse(text, "store.conf");
  REQUIRE(config.ok());
  std::span<const OptionSpec> schema(kPoolOptions);
  if (!with_failover) schema = schema.first(schema.size() - 1);
  REQUIRE(config->Validate("store", schema).ok());
  return cachet::net::ReadServerPoolOptions(*config->section("store"), out);
}

}  // namespace

TEST_CASE("the shared network options fill the pool options", "[net][config]") {
  cachet::net::ServerPoolOptions options;
  REQUIRE(Read("[store]\nconnect_timeout_ms = 5\nio_timeout_ms = 6\nfailure_limit = 7\n"
               "retry_timeout_ms = 8\npool_size = 9\nfailover = true\n",
               true, &options)
              .ok());
  CHECK(options.connection.connect_timeout == std::chrono::milliseconds(5));
  CHECK(options.connection.io_timeout == std::chrono::milliseconds(6));
  CHECK(options.failure_limit == 7);
  CHECK(options.retry_timeout == std::chrono::milliseconds(8));
  CHECK(options.pool_size == 9);
  CHECK(options.failover);
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
