// SentinelClient against silent sentinels on loopback (ScriptedServer): a
// query whose request timeout runs out says timeout, names the sentinels it
// asked and why, and asks no sentinel once the time is up.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sentinel_client.h"
#include "support/scripted_server.h"
#include "support/waits.h"

using cachet::redis::SentinelClient;
using cachet::test::RespRequests;
using cachet::test::ScriptedServer;
using std::chrono::milliseconds;

namespace {

cachet::net::ServerAddress Loopback(int port) {
  return {"127.0.0.1", static_cast<std::uint16_t>(port), 1};
}

// A client of sentinels `a` and `b` whose every wait for a reply ends after two seconds.
std::unique_ptr<SentinelClient> ClientOf(const ScriptedServer& a, const ScriptedServer& b) {
  cachet::net::ServerPoolOptions pool;
  pool.connection.io_timeout = milliseconds(2000);
  pool.connection.connect_timeout = milliseconds(1000);
  return std::make_unique<SentinelClient>(
      std::vector<cachet::net::ServerAddress>{Loopback(a.port()), Loopback(b.port())}, "mymaster",
      pool, cachet::redis::SessionSettings{});
}

std::string Port(const ScriptedServer& server) { return std::to_string(server.port()); }

// A sentinel that reads the query and stays silent for 3.5 s, longer than any
// wait below (then says something nobody waits for any more).
ScriptedServer Silent() {
  return ScriptedServer(RespRequests(), {{"", 0, {}, "-ERR late\r\n", milliseconds(3500)}});
}

}  // namespace

TEST_CASE("a sentinel query whose time runs out on the last sentinel says timeout, naming both",
          "[redis][sentinel]") {
  // Each sentinel reads the query and stays silent. The first times out after
  // its io_timeout (2 s), the second at the call's deadline (3 s: a second left
  // for it, shorter than its io_timeout, with room for a loaded machine's stall).
  ScriptedServer a = Silent();
  ScriptedServer b = Silent();
  REQUIRE(a.port() > 0);
  REQUIRE(b.port() > 0);
  auto client = ClientOf(a, b);
  // No longer: a ScriptedServer waits 3 s at most for its connection.
  const auto deadline = cachet::net::Clock::now() + milliseconds(3000);
  const auto found = client->MasterAddress(deadline);
  REQUIRE_FALSE(found.ok());
  const cachet::Status& s = found.status();
  INFO(s.ToString());
  CHECK(s.IsTimeout());  // the time ran out: not unavailable
  CHECK(s.message().find("mymaster") != std::string_view::npos);
  CHECK(s.message().find(Port(a)) != std::string_view::npos);
  CHECK(s.message().find(Port(b)) != std::string_view::npos);
  // Each server's thread reads its query in its own time.
  CHECK(cachet::test::WaitUntil([&] { return a.requests().size() == 1; }, milliseconds(5000)));
  CHECK(cachet::test::WaitUntil([&] { return b.requests().size() == 1; }, milliseconds(5000)));
}

TEST_CASE("a sentinel query asks no sentinel once its time is up", "[redis][sentinel]") {
  // The first sentinel's silence outlasts the call (deadline 500 ms, io_timeout
  // 2 s): the second is never asked.
  ScriptedServer a = Silent();
  ScriptedServer b = Silent();
  REQUIRE(a.port() > 0);
  REQUIRE(b.port() > 0);
  auto client = ClientOf(a, b);
  const auto found = client->MasterAddress(cachet::net::Clock::now() + milliseconds(500));
  REQUIRE_FALSE(found.ok());
  INFO(found.status().ToString());
  CHECK(found.status().IsTimeout());
  CHECK(found.status().message().find(Port(a)) != std::string_view::npos);
  CHECK(cachet::test::WaitUntil([&] { return a.requests().size() == 1; }, milliseconds(5000)));
  // Given half a second to show up, b never hears from the client.
  CHECK_FALSE(cachet::test::WaitUntil([&] { return b.connections() > 0; }, milliseconds(500)));
  CHECK(b.requests().empty());
}
