// Tokyo Tyrant test servers (cachet-ttserver) started for a test, and backend
// options pointing at them.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "launchers/tokyotyrant_server.h"
#include "tt_backend.h"

namespace cachet::tokyotyrant {

using Servers = std::vector<std::unique_ptr<test::ServerProcess>>;

// `count` fresh servers, each on a free loopback port.
inline Servers StartServers(int count) {
  Servers servers;
  for (int i = 0; i < count; ++i) {
    auto started = test::StartTokyoTyrant();
    REQUIRE(started.ok());
    servers.push_back(std::move(started.value()));
  }
  return servers;
}

// Options for `servers`, weight 1 each; the test adjusts them before use.
inline TokyoTyrantOptions OptionsFor(const Servers& servers, std::chrono::milliseconds io_timeout) {
  TokyoTyrantOptions o;
  for (const auto& s : servers) {
    o.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(s->port()), 1});
  }
  o.pool.connection.io_timeout = io_timeout;
  return o;
}

}  // namespace cachet::tokyotyrant
