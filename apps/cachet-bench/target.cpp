// Opening benchmark targets and giving them distinct labels.
#include "target.h"

#include <algorithm>
#include <filesystem>

namespace cachet::bench {
namespace {

std::size_t CountLabel(const std::vector<Target>& targets, const std::string& label, bool by_stem) {
  return static_cast<std::size_t>(
      std::count_if(targets.begin(), targets.end(), [&](const Target& t) {
        return (by_stem ? std::filesystem::path(t.config_path).stem().string() : t.label) == label;
      }));
}

void AssignLabels(std::vector<Target>& targets) {
  for (Target& t : targets) {
    const std::string stem = std::filesystem::path(t.config_path).stem().string();
    t.label = stem;
    if (CountLabel(targets, stem, true) > 1) {
      t.label = stem + ":" + std::string(t.cache->backend().name());
    }
  }
  // Still equal (the same config twice): number the repeats.
  std::vector<std::string> base;
  for (const Target& t : targets) base.push_back(t.label);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto earlier = std::count(base.begin(), base.begin() + static_cast<long>(i), base[i]);
    if (earlier > 0) targets[i].label += "#" + std::to_string(earlier + 1);
  }
}

}  // namespace

Result<std::vector<Target>> OpenTargets(const std::vector<std::string>& config_paths,
                                        const std::vector<std::string>& overrides) {
  std::vector<Target> targets;
  for (const std::string& path : config_paths) {
    Result<Config> config = Config::LoadFile(path, overrides);
    if (!config.ok()) return config.status();
    Result<std::unique_ptr<Cache>> cache = Cache::Open(std::move(config).value());
    if (!cache.ok()) return cache.status();
    targets.push_back(Target{"", path, std::move(cache).value()});
  }
  AssignLabels(targets);
  return targets;
}

}  // namespace cachet::bench
