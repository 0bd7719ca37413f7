// The hit_ratio scenario: Zipf streams replayed against the memory store's
// policies and against an exact LRU of the same byte budget.
#include "hit_ratio.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <list>
#include <memory>
#include <unordered_map>

#include "cache_client.h"
#include "cachet/cache.h"
#include "cachet/config.h"
#include "payloads.h"

namespace cachet::bench {

struct ExactLru::State {
  std::size_t budget = 0;
  std::size_t bytes = 0;
  std::list<std::pair<std::uint64_t, std::size_t>> order;  // newest first: key, charge
  std::unordered_map<std::uint64_t, decltype(order)::iterator> where;
};

ExactLru::ExactLru(std::size_t budget_bytes) : state_(new State) { state_->budget = budget_bytes; }
ExactLru::~ExactLru() { delete state_; }

bool ExactLru::Access(std::uint64_t key, std::size_t charge) {
  State& s = *state_;
  if (auto it = s.where.find(key); it != s.where.end()) {
    s.order.splice(s.order.begin(), s.order, it->second);
    return true;
  }
  if (charge > s.budget) return false;  // could never be kept
  s.order.emplace_front(key, charge);
  s.where.emplace(key, s.order.begin());
  s.bytes += charge;
  while (s.bytes > s.budget) {
    s.bytes -= s.order.back().second;
    s.where.erase(s.order.back().first);
    s.order.pop_back();
  }
  return false;
}

ZipfStream::ZipfStream(std::size_t keys, double skew, std::uint64_t seed) : state_(seed) {
  cdf_.resize(keys);
  double sum = 0;
  for (std::size_t r = 0; r < keys; ++r) {
    sum += 1.0 / std::pow(static_cast<double>(r + 1), skew);
    cdf_[r] = sum;
  }
  for (double& c : cdf_) c /= sum;
}

std::size_t ZipfStream::Next() {
  // splitmix64: a fixed, portable sequence (std:: distributions differ between libraries).
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cdf_.begin()), cdf_.size() - 1);
}

namespace {

constexpr std::uint64_t kSeed = 20261201;
constexpr double kSkews[] = {0.7, 0.9, 1.1};
constexpr double kCacheFractions[] = {0.01, 0.10};
// The mixed stream: after every kScanEvery Zipf requests, a scan of keys/10 keys
// that are asked for once and never again.
constexpr std::size_t kScanEvery = 50000;

// The key of stream id `id`: 16 bytes, like the rate scenarios' keys.
std::string KeyOf(std::uint64_t id) {
  char key[32];
  std::snprintf(key, sizeof key, "hr:%013llu", static_cast<unsigned long long>(id));
  return key;
}

// One request of a stream: a key id, and whether it counts (Zipf requests after
// the warm-up do; scans and the warm-up do not).
struct Request {
  std::uint64_t id;
  bool counted;
};

// Replays a stream: `visit(request)` for each request, in order.
template <class Visit>
void Replay(const HitRatioPlan& plan, double skew, bool scans, Visit visit) {
  ZipfStream zipf(plan.keys, skew, kSeed);
  std::uint64_t next_scan_id = plan.keys;  // scan keys lie outside the Zipf key space
  const std::size_t scan_length = std::max<std::size_t>(1, plan.keys / 10);
  for (std::size_t n = 0; n < plan.warmup + plan.requests; ++n) {
    if (scans && n > 0 && n % kScanEvery == 0) {
      for (std::size_t i = 0; i < scan_length; ++i) visit(Request{next_scan_id++, false});
    }
    visit(Request{zipf.Next(), n >= plan.warmup});
  }
}

std::string StatOf(const StatsMap& stats, std::string_view name) {
  for (const auto& [key, value] : stats) {
    if (key == name) return value;
  }
  return {};
}

// `policy` is lru, tinylfu (with its default window) or tinylfu-nowindow
// (window_percent = 0: each new key judged as it arrives).
Result<std::shared_ptr<Cache>> OpenWith(const std::string& path, std::vector<std::string> overrides,
                                        std::size_t max_bytes, const std::string& policy) {
  overrides.push_back("memory.max_bytes=" + std::to_string(max_bytes));
  if (policy == "tinylfu-nowindow") {
    overrides.push_back("memory.policy=tinylfu");
    overrides.push_back("memory.window_percent=0");
  } else {
    overrides.push_back("memory.policy=" + policy);
  }
  Result<Config> config = Config::LoadFile(path, overrides);
  if (!config.ok()) return config.status();
  Result<std::unique_ptr<Cache>> cache = Cache::Open(std::move(config).value());
  if (!cache.ok()) return cache.status();
  return std::shared_ptr<Cache>(std::move(cache).value());
}

// What one item costs the store (bytes charged to max_bytes: its block and its
// share of the hash table's slots), learnt by storing every key of the plan in a
// store large enough to keep them all.
Result<std::size_t> ItemCharge(const std::string& path, const HitRatioPlan& plan,
                               const std::string& value) {
  Result<std::shared_ptr<Cache>> cache =
      OpenWith(path, plan.overrides, std::size_t{1} << 30, "lru");
  if (!cache.ok()) return cache.status();
  for (std::uint64_t id = 0; id < plan.keys; ++id) {
    if (Status s = (*cache)->Set(KeyOf(id), std::string_view(value)); !s.ok()) return s;
  }
  Result<StatsMap> stats = (*cache)->Stats();
  if (!stats.ok()) return stats.status();
  const std::size_t bytes = std::stoull("0" + StatOf(*stats, "bytes")) +
                            std::stoull("0" + StatOf(*stats, "table_bytes"));
  const std::size_t items = std::stoull("0" + StatOf(*stats, "curr_items"));
  if (bytes == 0 || items == 0) {
    return Status::Internal("hit_ratio: the store reports no bytes or items");
  }
  return bytes / items;
}

struct Cell {
  double hit_ratio = 0;
  std::uint64_t rejected = 0;
};

Result<Cell> RunStore(const std::string& path, const HitRatioPlan& plan, std::size_t budget,
                      const std::string& policy, double skew, bool scans,
                      const std::string& value) {
  Result<std::shared_ptr<Cache>> cache = OpenWith(path, plan.overrides, budget, policy);
  if (!cache.ok()) return cache.status();
  CacheClient client(*cache, *cache);
  std::string read;
  std::uint64_t hits = 0, counted = 0;
  Status failure;
  Replay(plan, skew, scans, [&](const Request& r) {
    if (!failure.ok()) return;
    const std::string key = KeyOf(r.id);
    Status got = client.Get(key, &read);
    if (got.ok()) {
      if (r.counted) ++hits;
    } else if (got.IsNotFound()) {
      // tinylfu without a window answers not_stored for a new key it refuses:
      // that is a verdict, not a failure.
      if (Status s = client.Set(key, value); !s.ok() && !s.IsNotStored()) failure = s;
    } else {
      failure = got;
    }
    if (r.counted) ++counted;
  });
  if (!failure.ok()) return failure;
  Result<StatsMap> stats = (*cache)->Stats();
  Cell cell;
  cell.hit_ratio = static_cast<double>(hits) / static_cast<double>(counted);
  if (stats.ok()) cell.rejected = std::stoull("0" + StatOf(*stats, "rejected"));
  return cell;
}

double RunReference(const HitRatioPlan& plan, std::size_t budget, std::size_t charge, double skew,
                    bool scans) {
  ExactLru lru(budget);
  std::uint64_t hits = 0, counted = 0;
  Replay(plan, skew, scans, [&](const Request& r) {
    const bool hit = lru.Access(r.id, charge);
    if (r.counted) {
      ++counted;
      if (hit) ++hits;
    }
  });
  return static_cast<double>(hits) / static_cast<double>(counted);
}

std::string Percent(double ratio) {
  char text[16];
  std::snprintf(text, sizeof text, "%6.2f%%", 100 * ratio);
  return text;
}

std::string Points(double difference) {
  char text[16];
  std::snprintf(text, sizeof text, "%+6.2f", 100 * difference);
  return text;
}

std::string BackendOf(const std::string& path, const std::vector<std::string>& overrides) {
  Result<Config> config = Config::LoadFile(path, overrides);
  if (!config.ok()) return {};
  const ConfigSection* cache = config->section("cache");
  const ConfigValue* backend = cache == nullptr ? nullptr : cache->Find("backend");
  return backend == nullptr ? "memory" : backend->value;
}

// Whether the config sets the memory store's window_percent, which the lru rows
// cannot run with (the store refuses it beside policy = lru).
bool SetsWindow(const std::string& path, const std::vector<std::string>& overrides) {
  Result<Config> config = Config::LoadFile(path, overrides);
  const ConfigSection* memory = config.ok() ? config->section("memory") : nullptr;
  return memory != nullptr && memory->Find("window_percent") != nullptr;
}

Status RunConfig(const std::string& path, const HitRatioPlan& plan) {
  const std::string label = std::filesystem::path(path).stem().string();
  if (BackendOf(path, plan.overrides) != "memory") {
    std::cout << "hit_ratio: " << label << ": skipped: only the memory store has a policy\n";
    return Status::OK();
  }
  if (SetsWindow(path, plan.overrides)) {
    return Status::InvalidArgument("hit_ratio: " + path +
                                   " sets window_percent: each row sets the policy and window "
                                   "itself, and policy = lru refuses a window; leave it unset");
  }
  const std::string value = MakeRandomText(plan.value_size, 7);
  Result<std::size_t> charge = ItemCharge(path, plan, value);
  if (!charge.ok()) return charge.status();
  const std::size_t space = plan.keys * *charge;
  std::cout << "hit_ratio: " << label << ": " << plan.keys << " keys of 16 + " << plan.value_size
            << " bytes, " << *charge << " bytes each as the store charges them; " << plan.warmup
            << " warm-up + " << plan.requests << " counted requests (get, set on a miss)\n"
            << "  exact LRU: the benchmark's reference, same byte budget and charge per item;"
               " +/-: points against it;\n  zipf+scan: a scan of "
            << plan.keys / 10 << " one-time keys after every " << kScanEvery
            << " requests (only Zipf requests count)\n"
            << "  tinylfu: W-TinyLFU, new items enter a window of 1 % of each shard"
               " (window_percent = 1);\n  no window: window_percent = 0, each new key"
               " judged as it arrives\n";
  std::printf("  %-10s %5s %6s %7s %10s %9s %7s %10s %7s %9s %7s %9s\n", "stream", "skew",
              "cache", "items", "exact LRU", "lru", "+/-", "no window", "+/-", "tinylfu", "+/-",
              "rejected");
  for (const bool scans : {false, true}) {
    for (const double fraction : kCacheFractions) {
      for (const double skew : kSkews) {
        const auto budget = static_cast<std::size_t>(fraction * static_cast<double>(space));
        const double reference = RunReference(plan, budget, *charge, skew, scans);
        Result<Cell> lru = RunStore(path, plan, budget, "lru", skew, scans, value);
        if (!lru.ok()) return lru.status();
        Result<Cell> judged =
            RunStore(path, plan, budget, "tinylfu-nowindow", skew, scans, value);
        if (!judged.ok()) return judged.status();
        Result<Cell> tiny = RunStore(path, plan, budget, "tinylfu", skew, scans, value);
        if (!tiny.ok()) return tiny.status();
        std::printf("  %-10s %5.1f %5.0f%% %7zu %10s %9s %7s %10s %7s %9s %7s %9llu\n",
                    scans ? "zipf+scan" : "zipf", skew, 100 * fraction, budget / *charge,
                    Percent(reference).c_str(), Percent(lru->hit_ratio).c_str(),
                    Points(lru->hit_ratio - reference).c_str(),
                    Percent(judged->hit_ratio).c_str(),
                    Points(judged->hit_ratio - reference).c_str(), Percent(tiny->hit_ratio).c_str(),
                    Points(tiny->hit_ratio - reference).c_str(),
                    static_cast<unsigned long long>(tiny->rejected));
        std::fflush(stdout);
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status RunHitRatio(const HitRatioPlan& plan) {
  for (const std::string& path : plan.configs) {
    if (Status s = RunConfig(path, plan); !s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace cachet::bench
