// ServerAddress: one server of a pool, parsed from "host:port[:weight]" or
// "unix:/path/to/socket[:weight]".
//
// The host is kept exactly as configured (no DNS at parse time), because key
// placement hashes the configured text (see distribution.h). An IPv6 literal is
// written in brackets: "[::1]:11211". A Unix-domain socket keeps "unix:" and its
// path as its host, with port 0, so placement hashes it as written like any
// other server. Values are plain data: copy freely.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/export.h"
#include "cachet/result.h"

namespace cachet::net {

struct CACHET_EXPORT ServerAddress {
  std::string host;
  std::uint16_t port = 0;
  std::uint32_t weight = 1;

  // "host:port", the host as configured (brackets kept for IPv6); a Unix
  // socket's "unix:/path" as written.
  std::string HostPort() const;
  // True for a Unix-domain socket ("unix:/path").
  bool IsUnix() const noexcept { return host.starts_with(kUnixPrefix); }
  // The socket's path. REQUIRES: IsUnix().
  std::string_view UnixPath() const noexcept {
    return std::string_view(host).substr(kUnixPrefix.size());
  }

  static constexpr std::string_view kUnixPrefix = "unix:";
  friend bool operator==(const ServerAddress&, const ServerAddress&) = default;
};

// Parses "host:port[:weight]" or "unix:/path[:weight]". A missing port takes
// `default_port`; the weight is a positive integer, 1 when absent (so a socket
// path cannot itself end in ':' and digits). kConfigError naming the text
// otherwise, as for a socket path longer than the system allows.
CACHET_EXPORT Result<ServerAddress> ParseServerAddress(std::string_view text,
                                                       std::uint16_t default_port);

// Parses every entry (each may itself hold several comma-separated addresses).
// Empty entries are skipped; an empty list is kConfigError.
CACHET_EXPORT Result<std::vector<ServerAddress>> ParseServerList(
    std::span<const std::string> entries, std::uint16_t default_port);

}  // namespace cachet::net
