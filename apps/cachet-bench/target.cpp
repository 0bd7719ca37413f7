// Opening configs as benchmark targets and giving them distinct labels.
#include "target.h"

#include <algorithm>
#include <filesystem>

#include "cache_client.h"
#include "cachet/cache.h"

namespace cachet::bench {
namespace {

std::string Stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string CacheValue(const Config& config, std::string_view key) {
  const ConfigSection* cache = config.section("cache");
  const ConfigValue* value = cache == nullptr ? nullptr : cache->Find(key);
  return value == nullptr ? std::string() : value->value;
}

// "host:port[:weight]" -> "host:port".
std::string FirstServer(const Config& config, const std::string& backend) {
  const ConfigSection* section = config.section(backend);
  const ConfigValue* servers = section == nullptr ? nullptr : section->Find("servers");
  if (servers == nullptr) return {};
  std::string first = servers->value.substr(0, servers->value.find(','));
  first.erase(0, first.find_first_not_of(' '));
  first.erase(first.find_last_not_of(' ') + 1);
  const auto colon = first.find(':');
  const auto weight = colon == std::string::npos ? colon : first.find(':', colon + 1);
  return weight == std::string::npos ? first : first.substr(0, weight);
}

Result<std::shared_ptr<Cache>> OpenCache(const std::string& path,
                                         const std::vector<std::string>& overrides) {
  Result<Config> config = Config::LoadFile(path, overrides);
  if (!config.ok()) return config.status();
  Result<std::unique_ptr<Cache>> cache = Cache::Open(std::move(config).value());
  if (!cache.ok()) return cache.status();
  return std::shared_ptr<Cache>(std::move(cache).value());
}

// What a CacheClient works on: the Cache as configured, and one that compresses
// with zstd (the same Cache when the config already compresses).
struct ClientCaches {
  std::shared_ptr<Cache> plain;
  std::shared_ptr<Cache> compressing;

  std::unique_ptr<Client> NewClient() const {
    return std::make_unique<CacheClient>(plain, compressing);
  }
};

Result<ClientCaches> OpenClientCaches(const std::string& path, std::vector<std::string> overrides,
                                      bool add_zstd) {
  Result<std::shared_ptr<Cache>> plain = OpenCache(path, overrides);
  if (!plain.ok()) return plain.status();
  ClientCaches caches{*plain, *plain};
  if (add_zstd) {
    overrides.push_back("cache.compressor=zstd");
    Result<std::shared_ptr<Cache>> zstd = OpenCache(path, overrides);
    if (!zstd.ok()) return zstd.status();
    caches.compressing = *zstd;
  }
  return caches;
}

struct OpenedConfig {
  std::string backend;
  std::string first_server;
  Target target;
};

// Loads the file once to learn its backend, then opens it with the server and
// compressor overrides that backend needs.
Result<OpenedConfig> OpenConfig(const std::string& path, std::vector<std::string> overrides,
                                const std::map<std::string, std::string>& servers,
                                bool cache_per_thread) {
  Result<Config> probe = Config::LoadFile(path, overrides);
  if (!probe.ok()) return probe.status();
  const std::string backend = CacheValue(*probe, "backend");
  if (auto it = servers.find(backend); it != servers.end()) {
    overrides.push_back(backend + ".servers=" + it->second);
  }
  const std::string compressor = CacheValue(*probe, "compressor");
  const bool add_zstd = compressor.empty() || compressor == "none";
  // Opened now, so a config that does not open fails before any scenario runs.
  Result<ClientCaches> first = OpenClientCaches(path, overrides, add_zstd);
  if (!first.ok()) return first.status();
  Result<Config> used = Config::LoadFile(path, overrides);
  OpenedConfig opened{backend, used.ok() ? FirstServer(*used, backend) : std::string(), {}};
  opened.target.source = path;
  if (!cache_per_thread) {
    opened.target.connect = [caches = *first]() -> Result<std::unique_ptr<Client>> {
      return caches.NewClient();
    };
    return opened;
  }
  // Each Client opens Caches of its own (those opened above only checked the config).
  opened.target.connect = [path, overrides, add_zstd]() -> Result<std::unique_ptr<Client>> {
    Result<ClientCaches> own = OpenClientCaches(path, overrides, add_zstd);
    if (!own.ok()) return own.status();
    return own->NewClient();
  };
  return opened;
}

void AssignLabels(std::vector<Target>& targets, const std::vector<std::string>& backends) {
  std::vector<std::string> base;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::string stem = Stem(targets[i].source);
    const auto same = std::count_if(targets.begin(), targets.end(),
                                    [&](const Target& t) { return Stem(t.source) == stem; });
    base.push_back(same > 1 ? stem + ":" + backends[i] : stem);
  }
  // Still equal (the same config twice): number the repeats.
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto earlier = std::count(base.begin(), base.begin() + static_cast<long>(i), base[i]);
    targets[i].label = earlier > 0 ? base[i] + "#" + std::to_string(earlier + 1) : base[i];
  }
}

}  // namespace

Result<OpenedTargets> OpenTargets(const std::vector<std::string>& config_paths,
                                  const std::vector<std::string>& overrides,
                                  const std::map<std::string, std::string>& servers,
                                  bool cache_per_thread) {
  OpenedTargets out;
  std::vector<std::string> backends;
  for (const std::string& path : config_paths) {
    Result<OpenedConfig> opened = OpenConfig(path, overrides, servers, cache_per_thread);
    if (!opened.ok()) return opened.status();
    backends.push_back(opened->backend);
    if (!opened->first_server.empty()) {
      out.first_server.emplace(opened->backend, opened->first_server);
    }
    out.targets.push_back(std::move(opened->target));
  }
  AssignLabels(out.targets, backends);
  return out;
}

}  // namespace cachet::bench
