// ReadServerPoolOptions and ReadServers: the shared network options of a store's
// config section.
#include "cachet/net/pool_config.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "cachet/net/tls.h"

namespace cachet::net {

namespace {

// The TLS context the tls_* options describe; null when `tls` is off (or not
// in the schema).
Status ReadTls(const ConfigSection& section, std::shared_ptr<const TlsContext>* out) {
  out->reset();
  if (section.Find("tls") == nullptr || !section.GetBool("tls")) return Status::OK();
  TlsOptions options;
  options.enabled = true;
  options.ca_file = section.GetPath("tls_ca_file");
  options.ca_dir = section.GetPath("tls_ca_dir");
  options.cert_file = section.GetPath("tls_cert_file");
  options.key_file = section.GetPath("tls_key_file");
  options.server_name = section.GetString("tls_server_name");
  options.verify = section.GetBool("tls_verify");
  options.min_version = section.GetString("tls_min_version") == "1.3" ? 0x0304 : 0x0303;
  std::string_view failed_option;
  Status s = TlsContext::Create(options, out, &failed_option);
  if (s.ok() || failed_option.empty()) return s;
  // A relative path was taken from the config file's folder: say where that led.
  const std::string given = section.GetString(failed_option);
  const std::string used = section.GetPath(failed_option);
  if (given == used) return section.ErrorAt(failed_option, s.message());
  return section.ErrorAt(failed_option, std::string(s.message()) + " (" + used + ")");
}

}  // namespace

Status ReadServerPoolOptions(const ConfigSection& section, ServerPoolOptions* out) {
  constexpr std::int64_t kHour = 3600 * 1000;
  std::int64_t connect = 0, io = 0, request = 0, limit = 0, retry = 0, pool = 0, bound = 0;
  Status s = section.GetIntInRange("connect_timeout_ms", 1, kHour, &connect);
  if (s.ok()) s = section.GetIntInRange("io_timeout_ms", 1, kHour, &io);
  if (s.ok()) s = section.GetIntInRange("request_timeout_ms", 0, kHour, &request);
  if (s.ok()) s = section.GetIntInRange("failure_limit", 1, 1000000, &limit);
  if (s.ok()) s = section.GetIntInRange("retry_timeout_ms", 0, kHour, &retry);
  if (s.ok()) s = section.GetIntInRange("pool_size", 0, 4096, &pool);
  if (s.ok()) s = section.GetIntInRange("max_connections", 0, 65536, &bound);
  std::shared_ptr<const TlsContext> tls;
  if (s.ok()) s = ReadTls(section, &tls);
  if (!s.ok()) return s;
  out->connection.tls = std::move(tls);
  out->connection.connect_timeout = std::chrono::milliseconds(connect);
  out->connection.io_timeout = std::chrono::milliseconds(io);
  out->connection.request_timeout = std::chrono::milliseconds(request);  // 0: 3 x io
  out->failure_limit = static_cast<std::uint32_t>(limit);
  out->retry_timeout = std::chrono::milliseconds(retry);
  out->pool_size = static_cast<std::size_t>(pool);
  out->max_connections = static_cast<std::size_t>(bound);
  if (section.Find("failover") != nullptr) out->failover = section.GetBool("failover");
  if (section.Find("failover_max_keys") != nullptr) {
    std::int64_t keys = 0;
    if (s = section.GetIntInRange("failover_max_keys", 0, 10000000, &keys); !s.ok()) return s;
    out->failover_max_keys = static_cast<std::size_t>(keys);
  }
  return Status::OK();
}

Status ReadServers(const ConfigSection& section, std::uint16_t default_port,
                   std::vector<ServerAddress>* servers, DistributionKind* distribution) {
  Result<std::vector<ServerAddress>> parsed =
      ParseServerList(section.GetList("servers"), default_port);
  if (!parsed.ok()) {
    return section.ErrorAt("servers", parsed.status().message());
  }
  // A unix: server has no host name for its certificate to be checked against.
  const bool verified_tls = section.Find("tls") != nullptr && section.GetBool("tls") &&
                            section.GetBool("tls_verify");
  if (verified_tls && section.GetString("tls_server_name").empty()) {
    for (const ServerAddress& server : *parsed) {
      if (!server.IsUnix()) continue;
      return section.ErrorAt("servers", server.HostPort() +
                                            ": a unix: server over TLS needs tls_server_name, "
                                            "the name its certificate is checked against");
    }
  }
  Result<DistributionKind> kind = ParseDistributionKind(section.GetString("distribution"));
  if (!kind.ok()) return kind.status();
  *servers = std::move(*parsed);
  *distribution = *kind;
  return Status::OK();
}

}  // namespace cachet::net
