// Cache::Open: from a Config to a ready Cache. Validates [cache], loads the
// backend's plugin and validates its section, checks that every other section
// names a plugin, builds the Codec, creates the backend and wraps it in the
// value envelope when it lacks native flags or TTL.
#include <string>
#include <utility>

#include "cachet/cache.h"
#include "cachet/envelope.h"
#include "cachet/log.h"
#include "cachet/plugin.h"

namespace cachet {

namespace {

constexpr std::string_view kCacheSection = "cache";
// The largest max_value_size accepted: 4 GiB - 1, what zlib compresses in one call.
constexpr std::int64_t kMaxValueSizeLimit = 0xFFFFFFFF;

// The file a section came from, for messages: the config's path, else the
// source its values remember, else a generic name.
std::string SourceOf(const Config& config, std::string_view section_name) {
  if (!config.path().empty()) return config.path();
  if (const ConfigSection* section = config.section(section_name)) {
    for (const auto& [key, value] : section->values()) {
      if (value.line > 0) return value.source;
    }
  }
  return "config";
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
  options.compression_level = static_cast<int>(cache.GetInt("compression_level"));
  const std::int64_t threshold = cache.GetInt("compress_threshold");
  if (threshold < 0) {
    return Status::ConfigError("[cache] compress_threshold must not be negative");
  }
  options.compress_threshold = static_cast<std::size_t>(threshold);
  options.compress_min_savings = cache.GetDouble("compress_min_savings");
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

Result<CacheOptions> ReadCacheOptions(const ConfigSection& cache) {
  CacheOptions options;
  options.key_namespace = cache.GetString("namespace");
  const std::int64_t ttl_seconds = cache.GetInt("default_ttl");
  if (ttl_seconds < 0) return Status::ConfigError("[cache] default_ttl must not be negative");
  options.default_ttl = TtlFromSeconds(ttl_seconds);
  options.metrics = cache.GetBool("metrics");
  return options;
}

// The backend's plugin: the explicit `plugin` file when set, else `backend`
// searched by name. An explicit file must be the plugin `backend` names.
Result<std::shared_ptr<const Plugin>> LoadBackendPlugin(const PluginLoader& loader,
                                                        const ConfigSection& cache) {
  const std::string backend = cache.GetString("backend");
  const std::string explicit_file = cache.GetString("plugin");
  auto plugin = loader.Load(explicit_file.empty() ? backend : explicit_file);
  if (!plugin.ok() || explicit_file.empty()) return plugin;
  if ((*plugin)->name() != backend) {
    return Status::ConfigError("[cache] plugin " + explicit_file + " is the '" +
                               std::string((*plugin)->name()) +
                               "' plugin, but backend = " + backend);
  }
  return plugin;
}

// Every section other than [cache] and the backend's must belong to a plugin
// that can be found, and must validate against that plugin's schema, so a typo
// in a section name is an error rather than silently ignored settings.
Status ValidateOtherSections(Config* config, const PluginLoader& loader,
                             std::string_view backend_section) {
  for (const std::string& name : config->SectionNames()) {
    if (name == kCacheSection || name == backend_section) continue;
    auto plugin = loader.Load(name);
    if (!plugin.ok()) {
      Logger()->debug("section [{}]: {}", name, plugin.status().ToString());
      return Status::ConfigError(SourceOf(*config, name) + ": [" + name + "]: no plugin named '" +
                                 name + "'");
    }
    if (Status s = config->Validate(name, (*plugin)->options()); !s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<Cache>> Cache::Open(Config config) {
  if (Status s = config.Validate(kCacheSection, CacheOptionSpecs()); !s.ok()) return s;
  const ConfigSection cache = *config.section(kCacheSection);
  if (Status s = SetLogLevel(cache.GetString("log_level")); !s.ok()) return s;

  const std::vector<std::string> plugin_dirs = cache.GetList("plugin_path");
  const PluginLoader loader(PluginLoader::DefaultSearchPath(plugin_dirs));
  auto plugin = LoadBackendPlugin(loader, cache);
  if (!plugin.ok()) return plugin.status();
  const std::string backend_section((*plugin)->name());
  if (Status s = config.Validate(backend_section, (*plugin)->options()); !s.ok()) return s;
  if (Status s = ValidateOtherSections(&config, loader, backend_section); !s.ok()) return s;

  auto codec_options = ReadCodecOptions(cache);
  if (!codec_options.ok()) return codec_options.status();
  auto codec = Codec::Create(*codec_options);
  if (!codec.ok()) return codec.status();
  auto cache_options = ReadCacheOptions(cache);
  if (!cache_options.ok()) return cache_options.status();

  auto backend = (*plugin)->CreateBackend(*config.section(backend_section), Logger());
  if (!backend.ok()) return backend.status();
  Logger()->debug("cache open: backend {} from {}", backend_section, (*plugin)->path().string());
  return std::make_unique<Cache>(WithEnvelope(std::move(*backend)), std::move(*codec),
                                 std::move(*cache_options));
}

}  // namespace cachet
