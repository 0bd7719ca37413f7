// Parsing of "host:port[:weight]" server addresses.
#include "cachet/net/endpoint.h"

#include <sys/un.h>

#include <algorithm>
#include <charconv>
#include <string>

namespace cachet::net {

namespace {

Status BadAddress(std::string_view text, std::string_view why) {
  return Status::ConfigError("bad server address '" + std::string(text) + "': " + std::string(why));
}

template <class Int>
bool ParseDecimal(std::string_view text, Int* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits off the host: a bracketed IPv6 literal or everything before the first ':'.
Status SplitHost(std::string_view text, std::string_view* host, std::string_view* rest) {
  if (text.starts_with('[')) {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) return BadAddress(text, "unclosed '['");
    *host = text.substr(0, close + 1);
    *rest = text.substr(close + 1);
  } else {
    std::size_t colon = text.find(':');
    *host = text.substr(0, colon);
    *rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon);
  }
  if (host->empty() || *host == "[]") return BadAddress(text, "no host");
  if (!rest->empty() && rest->front() != ':') return BadAddress(text, "expected ':' after host");
  if (!rest->empty()) rest->remove_prefix(1);
  return Status::OK();
}

// Weights scale the hash rings (a point list of weight x 160 entries), so they
// are bounded: 10,000 already gives one server 1.6 million points.
constexpr std::uint32_t kMaxWeight = 10000;
constexpr const char* kWeightRule = "weight must be an integer from 1 to 10000";

// "unix:/path[:weight]": the host is "unix:/path" as written, the port 0.
Result<ServerAddress> ParseUnixAddress(std::string_view text) {
  std::string_view path = text.substr(ServerAddress::kUnixPrefix.size());
  ServerAddress address{std::string(text), 0, 1};
  const std::size_t colon = path.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < path.size()) {
    std::string_view weight = path.substr(colon + 1);
    if (std::all_of(weight.begin(), weight.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      if (!ParseDecimal(weight, &address.weight) || address.weight == 0 ||
          address.weight > kMaxWeight) {
        return BadAddress(text, kWeightRule);
      }
      path = path.substr(0, colon);
      address.host.resize(ServerAddress::kUnixPrefix.size() + path.size());
    }
  }
  if (path.empty()) return BadAddress(text, "no socket path after 'unix:'");
  // The path and its terminating NUL must fit sockaddr_un.
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return BadAddress(text, "socket path longer than " +
                                std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
  }
  return address;
}

}  // namespace

std::string ServerAddress::HostPort() const {
  if (IsUnix()) return host;
  return host + ":" + std::to_string(port);
}

Result<ServerAddress> ParseServerAddress(std::string_view text, std::uint16_t default_port) {
  text = Trim(text);
  if (text.starts_with(ServerAddress::kUnixPrefix)) return ParseUnixAddress(text);
  std::string_view host, rest;
  Status s = SplitHost(text, &host, &rest);
  if (!s.ok()) return s;
  // "host:" is a port left out by mistake, not a request for the default one.
  if (text.ends_with(':')) return BadAddress(text, "no port after ':'");
  ServerAddress address{std::string(host), default_port, 1};
  std::string_view port = rest.substr(0, rest.find(':'));
  if (!port.empty() && (!ParseDecimal(port, &address.port) || address.port == 0)) {
    return BadAddress(text, "port must be 1-65535");
  }
  if (rest.size() > port.size()) {
    std::string_view weight = rest.substr(port.size() + 1);
    if (!ParseDecimal(weight, &address.weight) || address.weight == 0 ||
        address.weight > kMaxWeight) {
      return BadAddress(text, kWeightRule);
    }
  }
  if (address.port == 0) return BadAddress(text, "no port");
  return address;
}

Result<std::vector<ServerAddress>> ParseServerList(std::span<const std::string> entries,
                                                   std::uint16_t default_port) {
  std::vector<ServerAddress> servers;
  for (std::string_view entry : entries) {
    while (!entry.empty()) {
      std::size_t comma = entry.find(',');
      std::string_view one = Trim(entry.substr(0, comma));
      entry = comma == std::string_view::npos ? std::string_view() : entry.substr(comma + 1);
      if (one.empty()) continue;
      Result<ServerAddress> parsed = ParseServerAddress(one, default_port);
      if (!parsed.ok()) return parsed.status();
      servers.push_back(std::move(*parsed));
    }
  }
  if (servers.empty()) return Status::ConfigError("no servers configured");
  return servers;
}

}  // namespace cachet::net
