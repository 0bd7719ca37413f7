// The schema of the [cache] section, and option type names.
#include <array>

#include "cachet/config.h"

namespace cachet {

namespace {

constexpr std::array kCacheOptions = {
    OptionSpec{"backend", OptionType::kString, "memory",
               "The store plugin to use: memory, memcached, redis, tokyotyrant, ..."},
    OptionSpec{"namespace", OptionType::kString, "", "A prefix added to every key"},
    OptionSpec{"serializer", OptionType::kString, "json", "Encoding of structured values", false,
               false, "json|msgpack|cbor"},
    OptionSpec{"compressor", OptionType::kString, "none", "Compression of large values", false,
               false, "none|zlib|gzip|zstd"},
    OptionSpec{"compression_level", OptionType::kInt, "0",
               "The compressor's level; 0 picks the compressor's own default"},
    OptionSpec{"compress_threshold", OptionType::kInt, "1024",
               "Values of at least this many encoded bytes are compressed"},
    OptionSpec{"compress_min_savings", OptionType::kDouble, "0.2",
               "Keep a compressed value only if it is at least this fraction smaller"},
    OptionSpec{"max_value_size", OptionType::kInt, "67108864",
               "The largest value written or decompressed, in bytes; larger is too_large"},
    OptionSpec{"default_ttl", OptionType::kInt, "0",
               "Seconds to live when a write gives no TTL; 0 means never expire"},
    OptionSpec{"flags_profile", OptionType::kString, "cachet",
               "How value flags are written, for sharing a store with other clients", false, false,
               "cachet|perl|python"},
    OptionSpec{"log_level", OptionType::kString, "info", "The core logger's level", false, false,
               "trace|debug|info|warn|error|critical|off"},
    OptionSpec{"plugin", OptionType::kString, "",
               "An explicit path to the backend's plugin file; empty: search plugin_path"},
    OptionSpec{"plugin_path", OptionType::kList, "",
               "Directories searched for plugins before the standard ones, comma-separated"},
    OptionSpec{"metrics", OptionType::kBool, "true",
               "Count hits, misses, errors and latency for each operation"},
    OptionSpec{"lease_ms", OptionType::kInt, "0",
               "GetOrCompute: one loader per missing key across processes, holding a lease "
               "this long at most; 0: threads of one process only"},
    OptionSpec{"lease_wait_ms", OptionType::kInt, "0",
               "GetOrCompute: how long others wait for the lease holder's value; 0: lease_ms"},
    OptionSpec{"stale_ms", OptionType::kInt, "0",
               "GetOrCompute: serve a value this long past its TTL while one caller refreshes it"},
    OptionSpec{"early_refresh", OptionType::kDouble, "0",
               "GetOrCompute: XFetch beta, to refresh a value before it expires; 0: off, 1: usual"},
    OptionSpec{"negative_ttl", OptionType::kInt, "0",
               "GetOrCompute: seconds a loader's not_found is cached as a miss; 0: not cached"},
    OptionSpec{"near_cache", OptionType::kBool, "off",
               "An in-process copy of recently read values in front of the store ([near_cache])"},
};

constexpr std::array kNearCacheOptions = {
    OptionSpec{"max_bytes", OptionType::kInt, "16777216",
               "The near cache's memory budget in bytes (the memory store's engine, LRU)"},
    OptionSpec{"ttl_ms", OptionType::kInt, "1000",
               "The longest an entry is served without the store's word; 0 with tracking: "
               "until invalidated"},
    OptionSpec{"invalidation", OptionType::kString, "auto",
               "auto: tracking where the store offers invalidations, else ttl; tracking: the "
               "store's invalidations (an error where it has none); ttl: expiry only",
               false, false, "auto|tracking|ttl"},
};

}  // namespace

std::span<const OptionSpec> CacheOptionSpecs() noexcept { return kCacheOptions; }

std::span<const OptionSpec> NearCacheOptionSpecs() noexcept { return kNearCacheOptions; }

std::string_view OptionTypeName(OptionType t) noexcept {
  switch (t) {
    case OptionType::kString:
      return "string";
    case OptionType::kInt:
      return "int";
    case OptionType::kBool:
      return "bool";
    case OptionType::kDouble:
      return "double";
    case OptionType::kList:
      return "list";
  }
  return "unknown";
}

}  // namespace cachet
