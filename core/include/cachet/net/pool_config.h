// The options every network store shares: their schema and their reading.
//
// memcached, Redis and Tokyo Tyrant all take `servers` and `distribution`, and
// connect_timeout_ms, io_timeout_ms, request_timeout_ms, failure_limit, retry_timeout_ms,
// pool_size and max_connections (plus, where keys may move to another server, failover) with
// the same meaning, defaults and bounds, and the tls_* options (tls.h). This is the one place
// that declares the timing, pool and TLS options and turns them into ServerPoolOptions, so the
// three stores (and any plugin built on core/net) read them alike: a store that joins
// kServerPoolOptionSpecs gets TLS.
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

// The schema entries of the timing, pool and TLS options, with
// ServerPoolOptions' defaults. `failover` is not among them: only stores whose
// keys may move to another server declare it (kFailoverOptionSpec).
inline constexpr std::array<OptionSpec, 15> kServerPoolOptionSpecs = {{
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
    {"pool_size", OptionType::kInt, "16", "idle connections kept per server"},
    {"max_connections", OptionType::kInt, "0",
     "connections open to one server at once, lent or idle; a call that finds them all "
     "lent waits for one within its deadline; 0: no bound"},
    {"tls", OptionType::kBool, "false", "connect to the servers with TLS"},
    {"tls_ca_file", OptionType::kString, "",
     "TLS: PEM file of the CA certificates the servers' certificates are checked against; "
     "empty (and tls_ca_dir empty): the system's CAs"},
    {"tls_ca_dir", OptionType::kString, "",
     "TLS: directory of CA certificates, hashed as by openssl rehash"},
    {"tls_cert_file", OptionType::kString, "",
     "TLS: PEM client certificate (chain), for servers that ask for one; empty: none"},
    {"tls_key_file", OptionType::kString, "",
     "TLS: PEM private key of tls_cert_file; empty: in tls_cert_file itself"},
    {"tls_server_name", OptionType::kString, "",
     "TLS: the name sent as SNI and checked against the server's certificate; empty: the "
     "server's host as written in servers"},
    {"tls_verify", OptionType::kBool, "true",
     "TLS: check the server's certificate and name (false: a warning is logged once)"},
    {"tls_min_version", OptionType::kString, "1.2", "TLS: the oldest protocol version accepted",
     false, false, "1.2|1.3"},
}};

inline constexpr std::array<OptionSpec, 2> kFailoverOptionSpec = {{
    {"failover", OptionType::kBool, "false",
     "send a dead server's keys to the next live server (off: they fail as unavailable)"},
    {"failover_max_keys", OptionType::kInt, "10000",
     "with failover: keys written around a dead server that are remembered and deleted when "
     "it is back; past it, the servers involved are flushed instead"},
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
// `failover` is read only when the schema declares it. With `tls` on, the TLS
// context is built now (tls.h), its files read once. kConfigError naming the
// option (and for a file, where it was set) for a value out of bounds or a
// file that cannot be used; `out` is then unchanged.
CACHET_EXPORT Status ReadServerPoolOptions(const ConfigSection& section, ServerPoolOptions* out);

// Reads `servers` (host:port[:weight] or unix:/path[:weight], comma-separated;
// `default_port` where a port is left out) and `distribution`. kConfigError naming the section and
// the bad entry.
CACHET_EXPORT Status ReadServers(const ConfigSection& section, std::uint16_t default_port,
                                 std::vector<ServerAddress>* servers,
                                 DistributionKind* distribution);

}  // namespace cachet::net
