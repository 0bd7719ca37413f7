// The memory_churn scenario: resident memory under a write-heavy churn, beside
// the budget the memory store keeps.
#include "memory_churn.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string_view>

#include "cachet/cache.h"
#include "cachet/config.h"
#include "payloads.h"

namespace cachet::bench {
namespace {

constexpr std::size_t kKeys = std::size_t{4} << 20;  // the key space: new keys and overwrites mix
constexpr double kSmallest = 32;
constexpr double kLargest = 16384;

// Resident bytes of this process (/proc/self/statm), 0 when unknown.
std::size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::uint64_t NextRandom(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t StatOf(const StatsMap& stats, std::string_view name) {
  for (const auto& [key, value] : stats) {
    if (key == name) return std::stoull("0" + value);
  }
  return 0;
}

double MiB(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

Status RunConfig(const std::string& path, const MemoryChurnPlan& plan) {
  const std::string label = std::filesystem::path(path).stem().string();
  std::vector<std::string> overrides = plan.overrides;
  overrides.push_back("memory.max_bytes=" + std::to_string(plan.max_bytes));
  Result<Config> config = Config::LoadFile(path, overrides);
  if (!config.ok()) return config.status();
  const ConfigSection* cache_section = config->section("cache");
  const ConfigValue* backend = cache_section == nullptr ? nullptr : cache_section->Find("backend");
  if (backend != nullptr && backend->value != "memory") {
    std::printf("memory_churn: %s: skipped: not a memory store\n", label.c_str());
    return Status::OK();
  }
  const std::string text = MakeRandomText(static_cast<std::size_t>(kLargest), 11);
  const std::size_t before = ResidentBytes();
  Result<std::unique_ptr<Cache>> cache = Cache::Open(std::move(config).value());
  if (!cache.ok()) return cache.status();
  std::uint64_t random = 42;
  std::size_t written = 0, writes = 0;
  char key[32];
  while (written < plan.turnovers * plan.max_bytes) {
    const std::uint64_t r = NextRandom(random);
    // Log-uniform sizes: as many small values as large ones per doubling.
    const double unit = static_cast<double>(r >> 11) * 0x1.0p-53;
    const auto size = static_cast<std::size_t>(kSmallest * std::pow(kLargest / kSmallest, unit));
    std::snprintf(key, sizeof key, "churn:%010llu",
                  static_cast<unsigned long long>(NextRandom(random) % kKeys));
    // tinylfu answers not_stored for a new key it refuses; the churn goes on.
    if (Status s = (*cache)->Set(key, std::string_view(text).substr(0, size));
        !s.ok() && !s.IsNotStored()) {
      return s;
    }
    written += size;
    ++writes;
  }
  const std::size_t after = ResidentBytes();
  Result<StatsMap> stats = (*cache)->Stats();
  if (!stats.ok()) return stats.status();
  // The entries and the hash tables' slots: both are charged to max_bytes.
  const std::size_t held = StatOf(*stats, "bytes") + StatOf(*stats, "table_bytes");
  const std::size_t limbo = StatOf(*stats, "reclaiming_bytes");
  const std::size_t sketch = StatOf(*stats, "sketch_bytes");
  const std::size_t allowed = plan.max_bytes + limbo + sketch;
  const std::size_t grown = after > before ? after - before : 0;
  std::printf(
      "memory_churn: %s: %zu sets of 32 B..16 KiB values (%.0f MiB written, %llu items held)\n"
      "  resident growth %.1f MiB; max_bytes %.1f MiB + limbo %.1f MiB + sketch %.1f MiB = %.1f "
      "MiB; store charges %.1f MiB\n  resident / (max_bytes + limbo + sketch) = %.3f; "
      "overhead_per_item %llu bytes\n",
      label.c_str(), writes, MiB(written),
      static_cast<unsigned long long>(StatOf(*stats, "curr_items")), MiB(grown),
      MiB(plan.max_bytes), MiB(limbo), MiB(sketch), MiB(allowed), MiB(held),
      static_cast<double>(grown) / static_cast<double>(allowed),
      static_cast<unsigned long long>(StatOf(*stats, "overhead_per_item")));
  return Status::OK();
}

}  // namespace

Status RunMemoryChurn(const MemoryChurnPlan& plan) {
  for (const std::string& path : plan.configs) {
    if (Status s = RunConfig(path, plan); !s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace cachet::bench
