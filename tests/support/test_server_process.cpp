// Tests of the test-server launcher against a real memcached.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>

#include "launchers/memcached_server.h"

namespace cachet::test {

TEST_CASE("a free loopback port is a real port", "[server_process]") {
  int port = FindFreeLoopbackPort();
  CHECK(port > 0);
  CHECK(port < 65536);
}

TEST_CASE("a refusing port refuses connections and no other socket can bind it",
          "[server_process]") {
  const RefusingPort refusing;
  REQUIRE(refusing.port() > 0);
  CHECK_FALSE(AcceptsConnections(refusing.port()));
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(refusing.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0);
  close(fd);
}

TEST_CASE("memcached starts, stops, restarts on the same port", "[server_process]") {
  REQUIRE(HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = StartMemcached();
  REQUIRE(server.ok());
  ServerProcess& s = **server;
  int port = s.port();
  CHECK(AcceptsConnections(port));
  CHECK(s.address() == "127.0.0.1:" + std::to_string(port));

  REQUIRE(s.Stop().ok());
  CHECK_FALSE(s.running());
  CHECK_FALSE(AcceptsConnections(port));

  REQUIRE(s.Restart().ok());
  CHECK(s.port() == port);
  CHECK(AcceptsConnections(port));

  REQUIRE(s.Kill().ok());
  CHECK_FALSE(AcceptsConnections(port));
}

TEST_CASE("a paused server can be resumed and stopped", "[server_process]") {
  REQUIRE(HaveMemcached());  // .ci/setup installs it: missing, the test fails
  auto server = StartMemcached();
  REQUIRE(server.ok());
  REQUIRE((*server)->Pause().ok());
  REQUIRE((*server)->Resume().ok());
  CHECK(AcceptsConnections((*server)->port()));
  REQUIRE((*server)->Pause().ok());
  // Stopping a paused server must not hang: Stop() continues it first.
  REQUIRE((*server)->Stop().ok());
  CHECK_FALSE((*server)->running());
}

TEST_CASE("a program that is not there is a clear error", "[server_process]") {
  auto server = ServerProcess::Start(
      "nothing", [](int) { return std::vector<std::string>{"/nonexistent/cachet-no-server"}; },
      std::chrono::milliseconds(200));
  REQUIRE_FALSE(server.ok());
  CHECK(server.status().IsUnavailable());
}

}  // namespace cachet::test
