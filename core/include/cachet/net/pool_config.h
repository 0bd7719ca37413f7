// The options every network store shares: their schema and their reading.
//
// memcached, Redis and Tokyo Tyrant all take `servers` and `distribution`, and
// connect_timeout_ms, io_timeout_ms, request_timeout_ms, failure_limit, retry_timeout_ms,
// pool_size and max_connections (plus, where keys may move to another server, failover)
// with the same meaning, defaults and bounds. This is the one place that declares the timing and pool options and turns them into
// ServerPoolOptions, so the three stores read them alike.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachet/config.h"
#include "cachet/export.h"
#include "cachet/net/distribution.h"
#include "cachet/net/endpoint.h"
#include "cachet/net/server_pool.h"
#include "cachet/status.h"

namespace cachet::net {

// The schema entries of the timing and pool options, with ServerPoolOptions'
// defaults. `failover` is not among them: only stores whose keys may move to
// another server declare it (kFailoverOptionSpec).
inline constexpr std::array<OptionSpec, 7> kServerPoolOptionSpecs = {{
    {"connect_timeout_ms", OptionType::kInt, "250", "connect timeout in milliseconds"},
    {"io_timeout_ms", OptionType::kInt, "1000",
     "the longest a server may stay silent within a call (a reply still arriving is "
     "waited for), in milliseconds"},
    {"request_timeout_ms", OptionType::kInt, "0",
     "the longest one call may take, connects, redirects and retries included, in "
     "milliseconds; 0: three times io_timeout_ms"},
    {"failure_limit", OptionType::kInt, "2",
     "consecutive failures after which a server is marked dead"},
    {"retry_timeout_ms", OptionType::kInt, "2000",
     "how long a dead server rests before it is tried again, in milliseconds"},
    {"pool_size", OptionType::kInt, "8", "idle connections kept per server"},
    {"max_connections", OptionType::kInt, "0",
     "connections open to one server at once, lent or idle; a call that finds them all "
     "lent waits for one within its deadline; 0: no bound"},
}};

inline constexpr std::array<OptionSpec, 1> kFailoverOptionSpec = {{
    {"failover", OptionType::kBool, "false",
     "send a dead server's keys to the next live server (off: they fail as unavailable)"},
}};

// A plugin's own options followed by shared ones, as one schema:
//   constexpr auto kOptions = JoinOptionSpecs(kOwnOptions, kServerPoolOptionSpecs);
template <std::size_t N, std::size_t M>
constexpr std::array<OptionSpec, N + M> JoinOptionSpecs(const OptionSpec (&own)[N],
                                                        const std::array<OptionSpec, M>& shared) {
  std::array<OptionSpec, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = own[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = shared[i];
  return out;
}

template <std::size_t N, std::size_t M>
constexpr std::array<OptionSpec, N + M> JoinOptionSpecs(const std::array<OptionSpec, N>& own,
                                                        const std::array<OptionSpec, M>& shared) {
  std::array<OptionSpec, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = own[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = shared[i];
  return out;
}

// Fills `out` from `section` (validated against a schema declaring those keys);
// `failover` is read only when the schema declares it. kConfigError naming the
// option for a value out of bounds; `out` is then unchanged.
CACHET_EXPORT Status ReadServerPoolOptions(const ConfigSection& section, ServerPoolOptions* out);

// Reads `servers` (host:port[:weight], comma-separated; `default_port` where a
// port is left out) and `distribution`. kConfigError naming the section and the
// bad entry.
CACHET_EXPORT Status ReadServers(const ConfigSection& section, std::uint16_t default_port,
                                 std::vector<ServerAddress>* servers,
                                 DistributionKind* distribution);

}  // namespace cachet::net
