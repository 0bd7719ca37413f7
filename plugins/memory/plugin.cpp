// The memory plugin's descriptor and factory: cachet's embedded default store.
#include "cachet/plugin.h"

#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "memory_backend.h"

namespace cachet::memory {
namespace {

constexpr OptionSpec kOptions[] = {
    {"max_bytes", OptionType::kInt, "67108864",
     "memory budget in bytes: keys, values and per-item overhead; above it a CLOCK (close to "
     "LRU) evicts items"},
    {"shards", OptionType::kString, "auto",
     "independent write locks the keys are spread over: 1..1024, or auto (lru: one per 512 KiB "
     "of max_bytes, 16 to 128; tinylfu: one per 64 KiB, 16 to 1024); reads take no lock"},
    {"max_item_size", OptionType::kInt, "1048576",
     "largest value in bytes (1..4294967295); a bigger one is refused with too_large"},
    {"max_key_size", OptionType::kInt, "250",
     "longest key in bytes (1..65535); a longer one is refused with invalid_argument"},
    {"policy", OptionType::kString, "lru",
     "lru: a new item always evicts the CLOCK victim; tinylfu: only if it was asked for "
     "more often lately (frequency sketch)",
     false, false, "lru|tinylfu"},
    {"window_percent", OptionType::kInt, "1",
     "tinylfu only: percent of each shard's share held by the admission window that new "
     "items enter (0..50); 0: no window, a new item is judged as it arrives"},
    {"expiry_rounding", OptionType::kString, "up",
     "expiries more than 24.8 days after the store's first use are kept to the second: up "
     "(an item never expires early) or down (never late: the near cache's tier)",
     false, false, "up|down"},
};

// Reads an integer option and checks it lies in [low, high].
Status ReadBounded(const ConfigSection& section, const char* key, std::int64_t low,
                   std::int64_t high, std::size_t* out) {
  std::int64_t value = 0;
  if (Status s = section.GetIntInRange(key, low, high, &value); !s.ok()) return s;
  *out = static_cast<std::size_t>(value);
  return Status::OK();
}

// `shards`: auto (0 in `*shards`), or a number from 1 to 1024, read as the integer
// options are (a leading + allowed) with the same message out of range.
Status ReadShards(const ConfigSection& section, std::size_t* shards) {
  const std::string text = section.GetString("shards");
  if (text == "auto") {
    *shards = 0;
    return Status::OK();
  }
  const std::size_t sign = text.starts_with('+') ? 1 : 0;
  std::int64_t count = 0;
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(text.data() + sign, last, count);
  if (error != std::errc() || end != last) {
    return section.ErrorAt("shards", "must be auto or a number from 1 to 1024");
  }
  if (count < 1 || count > 1024) return section.ErrorAt("shards", "must be between 1 and 1024");
  *shards = static_cast<std::size_t>(count);
  return Status::OK();
}

Status ReadOptions(const ConfigSection& section, MemoryStoreOptions* options) {
  constexpr std::int64_t kMaxInt = INT64_MAX;
  if (Status s = ReadShards(section, &options->shards); !s.ok()) return s;
  const bool auto_shards = options->shards == 0;
  // An entry keeps a value's size in 32 bits and a key's in 16 (MemoryEntry).
  constexpr auto kValueLimit = static_cast<std::int64_t>(kLargestValue);
  constexpr auto kKeyLimit = static_cast<std::int64_t>(kLargestKey);
  if (Status s = ReadBounded(section, "max_item_size", 1, kValueLimit, &options->max_item_size);
      !s.ok()) {
    return s;
  }
  if (Status s = ReadBounded(section, "max_key_size", 1, kKeyLimit, &options->max_key_size);
      !s.ok()) {
    return s;
  }
  const std::string policy = section.GetString("policy");
  if (policy == "lru") {
    options->policy = EvictionPolicy::kLru;
  } else if (policy == "tinylfu") {
    options->policy = EvictionPolicy::kTinyLfu;
  } else {
    return section.ErrorAt("policy", "must be lru or tinylfu");
  }
  if (Status s = ReadBounded(section, "window_percent", 0, 50, &options->window_percent);
      !s.ok()) {
    return s;
  }
  // A window only tinylfu has: set beside lru, it would be silently ignored.
  const ConfigValue* window = section.Find("window_percent");
  if (options->policy == EvictionPolicy::kLru && window != nullptr &&
      window->source != "default") {
    return section.ErrorAt("window_percent", "applies to policy = tinylfu only (policy is lru)");
  }
  options->expiry_rounds_down = section.GetString("expiry_rounding") == "down";
  // The budget holds the shards' empty tables and at least 1 KiB of items: a smaller
  // one would accept the config and then refuse every write as too large.
  const std::size_t least_shards =
      auto_shards ? AutoShards(0, options->policy) : options->shards;
  const auto min_bytes = static_cast<std::int64_t>(least_shards * kEmptyTableBytes + 1024);
  if (Status s = ReadBounded(section, "max_bytes", min_bytes, kMaxInt, &options->max_bytes);
      !s.ok()) {
    return s;
  }
  if (auto_shards) options->shards = AutoShards(options->max_bytes, options->policy);
  return Status::OK();
}

// The descriptor's validation hook: the factory's own option reading, so that
// `cachet check` refuses exactly what opening would.
Status ValidateMemoryOptions(const ConfigSection& section) noexcept {
  return GuardedCreate("memory", [&] {
    MemoryStoreOptions options;
    return ReadOptions(section, &options);
  });
}

Status CreateMemoryBackend(const PluginContext& context, std::unique_ptr<Backend>* out) noexcept {
  return GuardedCreate("memory", [&] {
    MemoryStoreOptions options;
    if (Status s = ReadOptions(context.options, &options); !s.ok()) return s;
    *out = std::make_unique<MemoryBackend>(options);
    if (context.logger) {
      context.logger->debug("memory store: {} bytes in {} shards", options.max_bytes,
                            options.shards);
    }
    return Status::OK();
  });
}

constexpr PluginDescriptor kDescriptor{
    kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "memory",
    CACHET_VERSION_STRING,
    "in-process sharded LRU store with TTL, CAS and counters (the embedded default)",
    kOptions,
    sizeof(kOptions) / sizeof(kOptions[0]),
    MemoryBackend::kCapabilities.bits(),
    &CreateMemoryBackend,
    &ValidateMemoryOptions,
};

}  // namespace
}  // namespace cachet::memory

CACHET_DEFINE_PLUGIN(cachet::memory::kDescriptor)
