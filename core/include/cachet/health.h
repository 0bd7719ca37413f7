// ServerHealth: what a network store knows about each of its servers.
//
// Filled in by the shared net::ServerPool, so every store built on it (the
// bundled memcached, Redis and Tokyo Tyrant stores, and third-party plugins
// that forward Backend::ServerHealth to their pool) reports the same figures.
// Counts run from the store's creation. Plain values: copy freely.
#pragma once

#include <cstdint>
#include <string>

namespace cachet {

struct ServerHealth {
  std::string server;  // "host:port" as configured
  // Exchanges with the server whose outcome was reported to the pool, and those
  // that failed, by kind. A timeout is also in `errors`.
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;
  std::uint64_t timeouts = 0;     // no answer within the deadline
  std::uint64_t unavailable = 0;  // connection refused or unreachable
  std::uint64_t io_errors = 0;    // the connection broke
  std::uint64_t protocol_errors = 0;
  std::uint64_t connects = 0;     // connect attempts (failed ones too): first ones, reconnects
  std::uint64_t marked_dead = 0;  // times it reached the failure limit and was set to rest
  std::uint32_t consecutive_failures = 0;
  // Marked dead (failure_limit failures in a row) and not answered since: while
  // it rests its keys fail (or fail over); after the rest, the next call tries it.
  bool dead = false;
  // The connection pool: connections open now (lent or idle), and calls that
  // waited for one until their deadline because max_connections were all lent.
  std::uint64_t connections = 0;
  std::uint64_t pool_timeouts = 0;
};

}  // namespace cachet
