// The memcached plugin's descriptor, option schema and factory.
#include "cachet/plugin.h"

#include <cstdint>
#include <memory>
#include <string>

#include "cachet/net/pool_config.h"
#include "memcached_backend.h"

namespace cachet::memcached {
namespace {

constexpr OptionSpec kOptions[] = {
    {"servers", OptionType::kList, "127.0.0.1:11211",
     "servers as host:port[:weight], comma-separated; the port defaults to 11211"},
    {"distribution", OptionType::kString, "ketama",
     "key placement: ketama (libmemcached), modula, cache-memcached (Perl), cmf-ketama "
     "(Cache::Memcached::Fast)",
     false, false, "ketama|modula|cache-memcached|cmf-ketama"},
    {"ketama_points", OptionType::kInt, "160",
     "points per unit of weight for cmf-ketama (Cache::Memcached::Fast's ketama_points)"},
    {"protocol", OptionType::kString, "text",
     "wire protocol: text (the faster on multi-key reads, measured) or meta (quiet batches "
     "that still report errors; needed for binary_keys)",
     false, false, "text|meta"},
    {"connect_timeout_ms", OptionType::kInt, "250", "connect timeout in milliseconds"},
    {"io_timeout_ms", OptionType::kInt, "1000",
     "deadline of one request and its replies, in milliseconds"},
    {"failure_limit", OptionType::kInt, "2",
     "consecutive failures after which a server is marked dead"},
    {"retry_timeout_ms", OptionType::kInt, "2000",
     "how long a dead server rests before it is tried again, in milliseconds"},
    {"failover", OptionType::kBool, "false",
     "send a dead server's keys to the next live server (off: they fail as unavailable)"},
    {"binary_keys", OptionType::kBool, "false",
     "allow any bytes in keys, sent base64-encoded (meta protocol only; 186 bytes at most)"},
    {"max_item_size", OptionType::kInt, "1048576",
     "largest value in bytes written or read; larger ones are refused with too_large"},
    {"pool_size", OptionType::kInt, "8", "idle connections kept per server"},
};

Status ReadNumbers(const ConfigSection& section, MemcachedOptions* o) {
  std::int64_t max_item = 0, points = 0;
  Status s = net::ReadServerPoolOptions(section, &o->pool);
  if (s.ok()) s = section.GetIntInRange("max_item_size", 1, 1024 * 1024 * 1024, &max_item);
  if (s.ok()) s = section.GetIntInRange("ketama_points", 1, 100000, &points);
  if (!s.ok()) return s;
  o->max_item_size = static_cast<std::size_t>(max_item);
  o->ketama_points = static_cast<std::uint32_t>(points);
  return Status::OK();
}

Status ReadOptions(const ConfigSection& section, MemcachedOptions* o) {
  std::vector<std::string> servers = section.GetList("servers");
  Result<std::vector<net::ServerAddress>> parsed = net::ParseServerList(servers, 11211);
  if (!parsed.ok())
    return Status::ConfigError("[memcached] servers: " + std::string(parsed.status().message()));
  o->servers = std::move(*parsed);
  Result<net::DistributionKind> kind =
      net::ParseDistributionKind(section.GetString("distribution"));
  if (!kind.ok()) return kind.status();
  o->distribution = *kind;
  o->protocol = section.GetString("protocol") == "text" ? Protocol::kText : Protocol::kMeta;
  o->binary_keys = section.GetBool("binary_keys");
  if (o->binary_keys && o->protocol != Protocol::kMeta) {
    return Status::ConfigError("[memcached] binary_keys = true needs protocol = meta");
  }
  return ReadNumbers(section, o);
}

Status CreateMemcachedBackend(const PluginContext& context,
                              std::unique_ptr<Backend>* out) noexcept {
  return GuardedCreate("memcached", [&] {
    MemcachedOptions options;
    if (Status s = ReadOptions(context.options, &options); !s.ok()) return s;
    *out = std::make_unique<MemcachedBackend>(std::move(options));
    return Status::OK();
  });
}

constexpr PluginDescriptor kDescriptor{
    kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "memcached",
    CACHET_VERSION_STRING,
    "memcached pools over the text or meta protocol, placed like libmemcached or the Perl "
    "clients",
    kOptions,
    sizeof(kOptions) / sizeof(kOptions[0]),
    MemcachedBackend::kCapabilities.bits(),
    &CreateMemcachedBackend,
};

}  // namespace
}  // namespace cachet::memcached

CACHET_DEFINE_PLUGIN(cachet::memcached::kDescriptor)
