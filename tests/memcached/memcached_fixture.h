// A MemcachedBackend wired to memcached servers started for the test.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "memcached_backend.h"
#include "launchers/memcached_server.h"

namespace cachet::memcached::test {

using cachet::test::ServerProcess;

struct MemcachedPool {
  std::vector<std::unique_ptr<ServerProcess>> servers;
  std::unique_ptr<MemcachedBackend> backend;
};

// Options for `count` fresh servers; the test adjusts them before Open().
inline MemcachedOptions OptionsFor(const std::vector<std::unique_ptr<ServerProcess>>& servers,
                                   Protocol protocol) {
  MemcachedOptions o;
  for (const auto& s : servers) {
    o.servers.push_back({"127.0.0.1", static_cast<std::uint16_t>(s->port()), 1});
  }
  o.protocol = protocol;
  o.pool.connection.io_timeout = std::chrono::milliseconds(1000);
  return o;
}

inline std::vector<std::unique_ptr<ServerProcess>> StartServers(int count) {
  std::vector<std::unique_ptr<ServerProcess>> servers;
  for (int i = 0; i < count; ++i) {
    auto s = cachet::test::StartMemcached();
    if (!s.ok()) return {};
    servers.push_back(std::move(*s));
  }
  return servers;
}

}  // namespace cachet::memcached::test
