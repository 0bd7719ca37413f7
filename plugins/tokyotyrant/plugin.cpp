// The tokyotyrant plugin's descriptor, option schema and factory.
#include "cachet/plugin.h"

#include <cstdint>
#include <memory>
#include <string>

#include "cachet/net/pool_config.h"
#include "tt_backend.h"

namespace cachet::tokyotyrant {
namespace {

constexpr OptionSpec kOwnOptions[] = {
    {"servers", OptionType::kList, "127.0.0.1:1978",
     "servers as host:port[:weight], comma-separated; the port defaults to 1978"},
    {"distribution", OptionType::kString, "ketama",
     "key placement over several servers: ketama, modula, cache-memcached, cmf-ketama", false,
     false, "ketama|modula|cache-memcached|cmf-ketama"},
    {"ketama_points", OptionType::kInt, "160", "points per unit of weight for cmf-ketama"},
    {"max_item_size", OptionType::kInt, "268435456",
     "largest value in bytes; larger ones are refused with too_large (protocol limit 256 MiB)"},
    {"mget_max_keys", OptionType::kInt, "1048576",
     "keys per mget request; larger get_multi batches are split (protocol limit 1048576)"},
    {"addint_counters", OptionType::kBool, "false",
     "incr/decr as addint on 4-byte binary counters, not decimal text (see docs/tokyotyrant.md)"},
    {"putcat_append", OptionType::kBool, "false",
     "append as putcat, which creates a missing key (see docs/tokyotyrant.md)"},
};
constexpr auto kOptions = net::JoinOptionSpecs(
    net::JoinOptionSpecs(kOwnOptions, net::kServerPoolOptionSpecs), net::kFailoverOptionSpec);

Status ReadNumbers(const ConfigSection& section, TokyoTyrantOptions* o) {
  std::int64_t points = 0, item = 0, mget = 0;
  Status s = net::ReadServerPoolOptions(section, &o->pool);
  if (s.ok()) s = section.GetIntInRange("ketama_points", 1, 100000, &points);
  if (s.ok()) s = section.GetIntInRange("max_item_size", 1, kMaxFieldSize, &item);
  if (s.ok()) s = section.GetIntInRange("mget_max_keys", 1, kMaxItems, &mget);
  if (!s.ok()) return s;
  o->ketama_points = static_cast<std::uint32_t>(points);
  o->max_item_size = static_cast<std::size_t>(item);
  o->mget_max_keys = static_cast<std::size_t>(mget);
  return Status::OK();
}

Status ReadOptions(const ConfigSection& section, TokyoTyrantOptions* o) {
  if (Status s = net::ReadServers(section, 1978, &o->servers, &o->distribution); !s.ok()) {
    return s;
  }
  o->addint_counters = section.GetBool("addint_counters");
  o->putcat_append = section.GetBool("putcat_append");
  return ReadNumbers(section, o);
}

// The descriptor's validation hook: the factory's own option reading, so that
// `cachet check` refuses exactly what opening would.
Status ValidateTokyoTyrantOptions(const ConfigSection& section) noexcept {
  return GuardedCreate("tokyotyrant", [&] {
    TokyoTyrantOptions options;
    return ReadOptions(section, &options);
  });
}

Status CreateTokyoTyrantBackend(const PluginContext& context,
                                std::unique_ptr<Backend>* out) noexcept {
  return GuardedCreate("tokyotyrant", [&] {
    TokyoTyrantOptions options;
    if (Status s = ReadOptions(context.options, &options); !s.ok()) return s;
    *out = std::make_unique<TokyoTyrantBackend>(std::move(options));
    return Status::OK();
  });
}

constexpr PluginDescriptor kDescriptor{
    kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "tokyotyrant",
    CACHET_VERSION_STRING,
    "Tokyo Tyrant servers on one ring over the binary protocol (TTL and flags emulated)",
    kOptions.data(),
    kOptions.size(),
    TokyoTyrantBackend::kCapabilities.bits(),
    &CreateTokyoTyrantBackend,
    &ValidateTokyoTyrantOptions,
};

}  // namespace
}  // namespace cachet::tokyotyrant

CACHET_DEFINE_PLUGIN(cachet::tokyotyrant::kDescriptor)
