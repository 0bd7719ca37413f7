// Cache::Check and Cache::Open: from a Config to a ready Cache. Check validates
// [cache], loads the backend's plugin, validates every section against its
// plugin (schema, then the plugin's validation hook) and builds the Codec; Open
// does the same checks, then creates the backend and wraps it in the value
// envelope when it lacks native flags or TTL.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cachet/cache.h"
#include "cachet/envelope.h"
#include "cachet/log.h"
#include "cachet/near_cache.h"
#include "cachet/plugin.h"
#include "cachet/suggest.h"

namespace cachet {

namespace {

constexpr std::string_view kCacheSection = "cache";
constexpr std::string_view kNearCacheSection = "near_cache";
// The near cache keeps no value above 1/64 of its budget, so one value never
// empties a shard (its memory store splits the budget over kNearShards).
constexpr std::int64_t kNearItemShare = 64;
constexpr std::string_view kNearShards = "16";
// The smallest budget its memory store takes: 16 empty tables of 512 bytes and
// 1 KiB of items (the memory store's own minimum for 16 shards).
constexpr std::int64_t kNearMinBytes = 16 * 512 + 1024;
// Keys are the store's: longer than the memory store's default allows, up to
// the longest it can hold (its entries keep a key's size in 16 bits).
constexpr std::string_view kNearMaxKeySize = "65535";
// The largest max_value_size accepted: 4 GiB - 1, what zlib compresses in one call.
constexpr std::int64_t kMaxValueSizeLimit = 0xFFFFFFFF;

// Where a section came from, for messages: the file and first line of its
// values read from a file, else "-o" when only -o gave it values, else the
// config's path (a section with no values), else a generic name.
std::string SourceOf(const Config& config, std::string_view section_name) {
  const ConfigValue* first = nullptr;
  bool from_option = false;
  if (const ConfigSection* section = config.section(section_name)) {
    for (const auto& [key, value] : section->values()) {
      if (value.line > 0 && (first == nullptr || value.line < first->line)) first = &value;
      from_option |= value.source == "-o";
    }
  }
  if (first != nullptr) return first->source + ":" + std::to_string(first->line);
  if (from_option) return "-o";
  return config.path().empty() ? "config" : config.path();
}

Result<FlagsProfile> ParseFlagsProfile(std::string_view name) {
  if (name == "cachet") return FlagsProfile::kCachet;
  if (name == "perl") return FlagsProfile::kPerl;
  if (name == "python") return FlagsProfile::kPython;
  return Status::ConfigError("[cache] flags_profile '" + std::string(name) +
                             "' is not one of cachet, perl, python");
}

Result<CodecOptions> ReadCodecOptions(const ConfigSection& cache) {
  CodecOptions options;
  options.serializer = cache.GetString("serializer");
  options.compressor = cache.GetString("compressor");
  // Any int: each compressor refuses levels it does not have; nothing wraps.
  std::int64_t level = 0;
  if (Status s = cache.GetIntInRange("compression_level", std::numeric_limits<int>::min(),
                                     std::numeric_limits<int>::max(), &level);
      !s.ok()) {
    return s;
  }
  options.compression_level = static_cast<int>(level);
  const std::int64_t threshold = cache.GetInt("compress_threshold");
  if (threshold < 0) return cache.ErrorAt("compress_threshold", "must not be negative");
  options.compress_threshold = static_cast<std::size_t>(threshold);
  options.compress_min_savings = cache.GetDouble("compress_min_savings");
  if (!(options.compress_min_savings >= 0.0 && options.compress_min_savings < 1.0)) {
    return cache.ErrorAt("compress_min_savings", "must be at least 0 and below 1");
  }
  std::int64_t max_value_size = 0;
  if (Status s = cache.GetIntInRange("max_value_size", 1, kMaxValueSizeLimit, &max_value_size);
      !s.ok()) {
    return s;
  }
  options.max_value_size = static_cast<std::size_t>(max_value_size);
  Result<FlagsProfile> profile = ParseFlagsProfile(cache.GetString("flags_profile"));
  if (!profile.ok()) return profile.status();
  options.flags_profile = *profile;
  return options;
}

// Codec::Create's refusal (a compressor, its level, or a compressor the flags
// profile cannot record), placed at [cache] compressor, with where the profile
// was set when that may be the other half of the conflict.
Status CodecErrorAt(const ConfigSection& cache, const Status& refused) {
  std::string reason(refused.message());
  const ConfigValue* profile = cache.Find("flags_profile");
  if (profile != nullptr && profile->value != "cachet" && profile->line > 0) {
    reason +=
        "; flags_profile = " + profile->value + " is set on line " + std::to_string(profile->line);
  }
  return cache.ErrorAt("compressor", reason);
}

Result<CacheOptions> ReadCacheOptions(const ConfigSection& cache) {
  CacheOptions options;
  options.key_namespace = cache.GetString("namespace");
  const std::int64_t ttl_seconds = cache.GetInt("default_ttl");
  if (ttl_seconds < 0) return cache.ErrorAt("default_ttl", "must not be negative");
  options.default_ttl = TtlFromSeconds(ttl_seconds);
  options.metrics = cache.GetBool("metrics");
  // GetOrCompute's defaults: none negative, the milliseconds at most
  // ComputeOptions::kMaxDuration.
  if (cache.GetInt("negative_ttl") < 0) {
    return cache.ErrorAt("negative_ttl", "must not be negative");
  }
  std::int64_t ms[3] = {};
  const char* const ms_names[3] = {"lease_ms", "lease_wait_ms", "stale_ms"};
  for (int i = 0; i < 3; ++i) {
    const std::int64_t most = ComputeOptions::kMaxDuration.count();
    if (Status s = cache.GetIntInRange(ms_names[i], 0, most, &ms[i]); !s.ok()) return s;
  }
  ComputeOptions& compute = options.compute;
  compute.lease = std::chrono::milliseconds(ms[0]);
  compute.lease_wait = std::chrono::milliseconds(ms[1]);
  compute.stale = std::chrono::milliseconds(ms[2]);
  compute.negative_ttl = TtlFromSeconds(cache.GetInt("negative_ttl"));
  compute.early_refresh = cache.GetDouble("early_refresh");
  if (!(compute.early_refresh >= 0) || !std::isfinite(compute.early_refresh)) {
    return cache.ErrorAt("early_refresh", "must be a finite number >= 0");
  }
  return options;
}

// " (did you mean 'memcached'?)" for a store name no plugin file in the search
// path has, or "".
std::string SuggestStore(const PluginLoader& loader, std::string_view name) {
  const std::vector<std::string> available = loader.AvailableNames();
  if (std::find(available.begin(), available.end(), name) != available.end()) return "";
  const std::vector<std::string_view> names(available.begin(), available.end());
  return DidYouMean(name, names);
}

// The backend's plugin: the explicit `plugin` file when set, else `backend`
// searched by name. An explicit file must be the plugin `backend` names.
Result<std::shared_ptr<const Plugin>> LoadBackendPlugin(const PluginLoader& loader,
                                                        const ConfigSection& cache) {
  const std::string backend = cache.GetString("backend");
  // A path (with a '/') is taken from the config file's folder; a bare name is searched.
  const std::string given = cache.GetString("plugin");
  const std::string explicit_file =
      given.find('/') == std::string::npos ? given : cache.GetPath("plugin");
  auto plugin = loader.Load(explicit_file.empty() ? backend : explicit_file);
  // Named where the config set it: the file and line, or -o.
  if (!plugin.ok()) {
    const std::string reason =
        std::string(plugin.status().message()) +
        (explicit_file.empty() ? SuggestStore(loader, backend) : std::string());
    const Status at = cache.ErrorAt(explicit_file.empty() ? "backend" : "plugin", reason);
    return Status::PluginError(std::string(at.message()));
  }
  if (explicit_file.empty()) return plugin;
  if ((*plugin)->name() != backend) {
    return Status::ConfigError("[cache] plugin " + explicit_file + " is the '" +
                               std::string((*plugin)->name()) +
                               "' plugin, but backend = " + backend);
  }
  return plugin;
}

// A section against its plugin: the schema, then the plugin's own checks.
Status ValidateSection(Config* config, const Plugin& plugin, std::string_view name) {
  if (Status s = config->Validate(name, plugin.options()); !s.ok()) return s;
  return plugin.ValidateOptions(*config->section(name));
}

// Every section other than [cache] and the backend's must belong to a plugin
// that can be found, and must validate against that plugin, so a typo in a
// section name is an error rather than silently ignored settings, and switching
// `backend =` to a configured store cannot meet a bad section.
Status ValidateOtherSections(Config* config, const PluginLoader& loader,
                             std::string_view backend_section,
                             std::vector<std::shared_ptr<const Plugin>>* plugins) {
  for (const std::string& name : config->SectionNames()) {
    if (name == kCacheSection || name == kNearCacheSection || name == backend_section) continue;
    auto plugin = loader.Load(name);
    if (!plugin.ok()) {
      Logger()->debug("section [{}]: {}", name, plugin.status().ToString());
      return Status::ConfigError(SourceOf(*config, name) + ": [" + name + "]: no plugin named '" +
                                 name + "'" + SuggestStore(loader, name));
    }
    plugins->push_back(*plugin);
    if (Status s = ValidateSection(config, **plugin, name); !s.ok()) return s;
  }
  return Status::OK();
}

// A config that configures a store but leaves `backend` unset would run on the
// embedded default, its writes reaching no server: refused, naming the store.
Status CheckBackendChosen(const Config& config, std::string_view backend_section) {
  const ConfigValue* backend = config.section(kCacheSection)->Find("backend");
  if (backend == nullptr || backend->line != 0 || backend->source != "default") {
    return Status::OK();
  }
  for (const std::string& name : config.SectionNames()) {
    if (name == kCacheSection || name == kNearCacheSection || name == backend_section) continue;
    return Status::ConfigError(SourceOf(config, name) + ": [" + name +
                               "] is configured but [cache] backend is not set, so the " +
                               std::string(backend_section) +
                               " store would be used: set backend = " + name + " (or backend = " +
                               std::string(backend_section) + " to keep it)");
  }
  return Status::OK();
}

// [near_cache] as read, when [cache] near_cache is on.
struct NearCacheSettings {
  std::int64_t max_bytes = 0;
  NearCacheOptions options;
  std::shared_ptr<const Plugin> memory;  // the near tier's engine
};

Result<NearInvalidation> ParseNearInvalidation(const ConfigSection& near) {
  const std::string mode = near.GetString("invalidation");
  if (mode == "auto") return NearInvalidation::kAuto;
  if (mode == "tracking") return NearInvalidation::kTracking;
  if (mode == "ttl") return NearInvalidation::kTtl;
  return near.ErrorAt("invalidation", "must be auto, tracking or ttl");
}

// Reads [near_cache] and checks it against what the store's plugin declares;
// WithNearCache checks the same against the store's Backend, which a plugin
// keeps equal to its declaration (Redis: RedisBackend::kOffered in both modes).
Status ReadNearCache(const ConfigSection& near, const Plugin& store_plugin,
                     const std::string& key_namespace, NearCacheSettings* settings) {
  if (Status s = near.GetIntInRange("max_bytes", kNearMinBytes, INT64_MAX, &settings->max_bytes);
      !s.ok()) {
    return s;
  }
  std::int64_t ttl_ms = 0;
  if (Status s = near.GetIntInRange("ttl_ms", 0, INT64_MAX, &ttl_ms); !s.ok()) return s;
  settings->options.ttl = Ttl{ttl_ms};
  auto mode = ParseNearInvalidation(near);
  if (!mode.ok()) return mode.status();
  settings->options.invalidation = *mode;
  const bool offered = store_plugin.capabilities().has(Capability::kInvalidations);
  if (*mode == NearInvalidation::kTracking && !offered) {
    return near.ErrorAt("invalidation", "the " + std::string(store_plugin.name()) +
                                            " store does not offer invalidations "
                                            "(use auto or ttl)");
  }
  const bool tracking = offered && *mode != NearInvalidation::kTtl;
  if (ttl_ms == 0 && !tracking) {
    return near.ErrorAt("ttl_ms", "0 means 'until invalidated', which needs tracking; the " +
                                      std::string(store_plugin.name()) +
                                      " store is used with ttl invalidation");
  }
  if (!key_namespace.empty()) settings->options.prefixes.push_back(key_namespace);
  return Status::OK();
}

// The near tier's engine: a memory store with the [near_cache] budget.
Result<std::shared_ptr<Backend>> CreateNearStore(const NearCacheSettings& settings) {
  const std::int64_t item = std::max<std::int64_t>(1, settings.max_bytes / kNearItemShare);
  const std::string text = "[memory]\nmax_bytes = " + std::to_string(settings.max_bytes) +
                           "\nmax_item_size = " + std::to_string(item) +
                           "\nshards = " + std::string(kNearShards) +
                           "\nmax_key_size = " + std::string(kNearMaxKeySize) +
                           // Never late: an entry must not outlive ttl_ms.
                           "\nexpiry_rounding = down\n";
  auto config = Config::Parse(text, "[near_cache]");
  if (!config.ok()) return config.status();
  if (Status s = config->Validate("memory", settings.memory->options()); !s.ok()) return s;
  return settings.memory->CreateBackend(*config->section("memory"), Logger());
}

// What Check establishes and Open goes on with.
struct CheckedConfig {
  std::vector<std::shared_ptr<const Plugin>> plugins;  // the backend's first
  std::shared_ptr<const Codec> codec;
  CacheOptions cache_options;
  std::optional<NearCacheSettings> near_cache;  // when [cache] near_cache is on
};

// A plugin_path folder that does not exist is logged, not refused: one config
// may serve machines with different folders, but a misspelt one would otherwise
// go unnoticed while the plugin is loaded from another folder. (A missing
// $CACHET_PLUGIN_PATH folder is logged by PluginLoader::DefaultSearchPath.)
void WarnMissingPluginDirs(const ConfigSection& cache, const std::vector<std::string>& dirs) {
  const ConfigValue* value = cache.Find("plugin_path");
  if (value == nullptr) return;
  std::string where = value->source;  // a file (with its line) or "-o"
  if (value->line > 0) where += ":" + std::to_string(value->line);
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) continue;
    Logger()->warn("{}: [cache] plugin_path: no folder '{}'; plugins are searched elsewhere",
                   where, dir);
  }
}

// `opening`: also applies log_level when the config sets it (the logger is the
// process's: left unset, the application's own choice stands), before the
// plugins load, so that their loading is logged at that level.
Status CheckInto(Config* config, bool opening, CheckedConfig* checked) {
  if (Status s = config->Validate(kCacheSection, CacheOptionSpecs()); !s.ok()) return s;
  const ConfigSection cache = *config->section(kCacheSection);
  const ConfigValue* level = cache.Find("log_level");
  if (opening && level != nullptr && level->source != "default") {
    if (Status s = SetLogLevel(level->value); !s.ok()) return s;
  }
  const std::vector<std::string> plugin_dirs = cache.GetPathList("plugin_path");
  WarnMissingPluginDirs(cache, plugin_dirs);
  const PluginLoader loader(PluginLoader::DefaultSearchPath(plugin_dirs));
  auto plugin = LoadBackendPlugin(loader, cache);
  if (!plugin.ok()) return plugin.status();
  checked->plugins.push_back(*plugin);
  const std::string backend_section((*plugin)->name());
  if (Status s = ValidateSection(config, **plugin, backend_section); !s.ok()) return s;
  if (Status s = ValidateOtherSections(config, loader, backend_section, &checked->plugins);
      !s.ok()) {
    return s;
  }
  if (Status s = CheckBackendChosen(*config, backend_section); !s.ok()) return s;
  auto codec_options = ReadCodecOptions(cache);
  if (!codec_options.ok()) return codec_options.status();
  auto codec = Codec::Create(*codec_options);
  if (!codec.ok()) return CodecErrorAt(cache, codec.status());
  checked->codec = std::move(*codec);
  auto cache_options = ReadCacheOptions(cache);
  if (!cache_options.ok()) return cache_options.status();
  checked->cache_options = std::move(*cache_options);
  // [near_cache], when given, is checked whole whether or not it is switched
  // on, so switching it on later meets no error `cachet check` did not show.
  const bool near_given = config->section(kNearCacheSection) != nullptr;
  if (Status s = config->Validate(kNearCacheSection, NearCacheOptionSpecs()); !s.ok()) return s;
  const bool near_on = cache.GetBool("near_cache");
  if (!near_given && !near_on) return Status::OK();
  NearCacheSettings near;
  if (Status s = ReadNearCache(*config->section(kNearCacheSection), **plugin,
                               checked->cache_options.key_namespace, &near);
      !s.ok()) {
    return s;
  }
  if (!near_on) return Status::OK();
  auto memory = loader.Load("memory");
  if (!memory.ok()) return memory.status();
  near.memory = std::move(*memory);
  checked->near_cache = std::move(near);
  return Status::OK();
}

}  // namespace

Status Cache::Check(Config* config, std::vector<std::shared_ptr<const Plugin>>* plugins) {
  CheckedConfig checked;
  Status status = CheckInto(config, /*opening=*/false, &checked);
  *plugins = std::move(checked.plugins);
  return status;
}

Result<std::unique_ptr<Cache>> Cache::Open(Config config) {
  CheckedConfig checked;
  if (Status s = CheckInto(&config, /*opening=*/true, &checked); !s.ok()) return s;
  const Plugin& plugin = *checked.plugins.front();
  const std::string backend_section(plugin.name());
  auto backend = plugin.CreateBackend(*config.section(backend_section), Logger());
  if (!backend.ok()) return backend.status();
  Logger()->debug("cache open: backend {} from {}", backend_section, plugin.path().string());
  std::shared_ptr<Backend> store = WithEnvelope(std::move(*backend));
  if (checked.near_cache) {
    auto near_store = CreateNearStore(*checked.near_cache);
    if (!near_store.ok()) return near_store.status();
    auto near =
        WithNearCache(std::move(store), std::move(*near_store), checked.near_cache->options);
    if (!near.ok()) return near.status();
    store = std::move(*near);
  }
  return std::make_unique<Cache>(std::move(store), std::move(checked.codec),
                                 std::move(checked.cache_options));
}

}  // namespace cachet
