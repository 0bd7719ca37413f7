// The memcached plugin's descriptor, option schema and factory.
#include "cachet/plugin.h"

#include <cstdint>
#include <memory>
#include <string>

#include "cachet/net/pool_config.h"
#include "memcached_backend.h"

namespace cachet::memcached {
namespace {

constexpr OptionSpec kOwnOptions[] = {
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
    {"binary_keys", OptionType::kBool, "false",
     "allow any bytes in keys, sent base64-encoded (meta protocol only; 186 bytes at most)"},
    {"max_item_size", OptionType::kInt, "1048576",
     "largest value in bytes written or read; larger ones are refused with too_large"},
};
constexpr auto kOptions = net::JoinOptionSpecs(
    net::JoinOptionSpecs(kOwnOptions, net::kServerPoolOptionSpecs), net::kFailoverOptionSpec);

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
  if (Status s = net::ReadServers(section, 11211, &o->servers, &o->distribution); !s.ok()) {
    return s;
  }
  o->protocol = section.GetString("protocol") == "text" ? Protocol::kText : Protocol::kMeta;
  o->binary_keys = section.GetBool("binary_keys");
  if (o->binary_keys && o->protocol != Protocol::kMeta) {
    return section.ErrorAt("binary_keys", "needs protocol = meta");
  }
  return ReadNumbers(section, o);
}

// The descriptor's validation hook: the factory's own option reading, so that
// `cachet check` refuses exactly what opening would.
Status ValidateMemcachedOptions(const ConfigSection& section) noexcept {
  return GuardedCreate("memcached", [&] {
    MemcachedOptions options;
    return ReadOptions(section, &options);
  });
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
    kOptions.data(),
    kOptions.size(),
    MemcachedBackend::kCapabilities.bits(),
    &CreateMemcachedBackend,
    &ValidateMemcachedOptions,
};

}  // namespace
}  // namespace cachet::memcached

CACHET_DEFINE_PLUGIN(cachet::memcached::kDescriptor)
