// cachet-bench --stampede: see stampede.h.
#include "stampede.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"

namespace cachet::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using SteadyClock = std::chrono::steady_clock;

// The pause between two reads of one thread: steady traffic rather than a spin.
constexpr milliseconds kReadPause{1};

struct OptionSet {
  const char* name;
  ComputeOptions options;
};

std::vector<OptionSet> OptionSets(const BenchOptions& bench) {
  const milliseconds ttl(bench.stampede_ttl_ms);
  const milliseconds lease = std::max(milliseconds(2000), 4 * milliseconds(bench.loader_ms));
  ComputeOptions off;
  off.ttl = ttl;
  ComputeOptions with_lease = off;
  with_lease.lease = lease;
  ComputeOptions with_stale = with_lease;
  with_stale.stale = ttl;
  ComputeOptions with_early = with_lease;
  with_early.early_refresh = 1;
  ComputeOptions all = with_stale;
  all.early_refresh = 1;
  return {{"off (per-Cache only)", off},
          {"lease", with_lease},
          {"lease + stale", with_stale},
          {"lease + early refresh", with_early},
          {"lease + stale + early", all}};
}

struct Outcome {
  int loader_runs = 0;
  std::uint64_t reads = 0;
  std::uint64_t errors = 0;
  std::uint64_t slow = 0;  // reads that took at least half the loader's time
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
};

double Percentile(const std::vector<nanoseconds>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(sorted.size() - 1));
  return static_cast<double>(sorted[index].count()) / 1e6;
}

Result<Outcome> RunOne(const BenchOptions& bench, const OptionSet& set, const std::string& key) {
  std::vector<std::unique_ptr<Cache>> caches;
  for (unsigned i = 0; i < bench.threads(); ++i) {
    Result<Config> config = Config::LoadFile(bench.configs[0], bench.overrides);
    if (!config.ok()) return config.status();
    Result<std::unique_ptr<Cache>> cache = Cache::Open(std::move(config).value());
    if (!cache.ok()) return cache.status();
    caches.push_back(std::move(cache).value());
  }
  (void)caches[0]->Remove(key);

  std::atomic<int> runs{0};
  const milliseconds loader_pause(bench.loader_ms);
  auto loader = [&]() -> Result<std::string> {
    ++runs;
    std::this_thread::sleep_for(loader_pause);
    return std::string("value");
  };
  std::vector<std::vector<nanoseconds>> latencies(bench.threads());
  std::atomic<std::uint64_t> errors{0};
  const auto deadline =
      SteadyClock::now() + std::chrono::duration_cast<nanoseconds>(
                               std::chrono::duration<double>(bench.duration_seconds));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < bench.threads(); ++t) {
    threads.emplace_back([&, t] {
      while (SteadyClock::now() < deadline) {
        const auto asked = SteadyClock::now();
        Lookup<std::string> got = caches[t]->GetOrCompute<std::string>(key, loader, set.options);
        latencies[t].push_back(SteadyClock::now() - asked);
        if (!got.hit()) ++errors;
        std::this_thread::sleep_for(kReadPause);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  (void)caches[0]->Remove(key);

  std::vector<nanoseconds> all;
  for (const auto& per_thread : latencies)
    all.insert(all.end(), per_thread.begin(), per_thread.end());
  std::sort(all.begin(), all.end());
  Outcome outcome;
  outcome.loader_runs = runs.load();
  outcome.reads = all.size();
  outcome.errors = errors.load();
  outcome.p50_ms = Percentile(all, 0.50);
  outcome.p99_ms = Percentile(all, 0.99);
  outcome.p999_ms = Percentile(all, 0.999);
  const nanoseconds slow = std::chrono::duration_cast<nanoseconds>(loader_pause) / 2;
  outcome.slow =
      static_cast<std::uint64_t>(all.end() - std::lower_bound(all.begin(), all.end(), slow));
  outcome.max_ms = all.empty() ? 0 : static_cast<double>(all.back().count()) / 1e6;
  return outcome;
}

}  // namespace

int RunStampede(const BenchOptions& bench) {
  const double periods =
      bench.duration_seconds * 1000.0 / static_cast<double>(bench.stampede_ttl_ms);
  std::printf(
      "cachet-bench --stampede: %s, %u thread(s) with a Cache each, one hot key,\n"
      "TTL %llu ms, loader %llu ms, %.1f s per row (%.1f TTL periods), a read every %lld ms"
      " per thread\n\n",
      bench.configs[0].c_str(), bench.threads(),
      static_cast<unsigned long long>(bench.stampede_ttl_ms),
      static_cast<unsigned long long>(bench.loader_ms), bench.duration_seconds, periods,
      static_cast<long long>(kReadPause.count()));
  std::printf("%-30s %6s %8s %8s %6s %8s %8s %8s %8s %6s\n", "options", "loads", "per TTL", "reads",
              "slow", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors");
  int status = 0;
  for (const OptionSet& set : OptionSets(bench)) {
    const std::string key = "cachet-bench:stampede:" + std::to_string(::getpid());
    Result<Outcome> outcome = RunOne(bench, set, key);
    if (!outcome.ok()) {
      std::cerr << "cachet-bench: " << outcome.status().ToString() << '\n';
      return 3;
    }
    const Outcome& o = *outcome;
    std::printf("%-30s %6d %8.2f %8llu %6llu %8.2f %8.2f %8.2f %8.2f %6llu\n", set.name,
                o.loader_runs, o.loader_runs / periods, static_cast<unsigned long long>(o.reads),
                static_cast<unsigned long long>(o.slow), o.p50_ms, o.p99_ms, o.p999_ms, o.max_ms,
                static_cast<unsigned long long>(o.errors));
    std::fflush(stdout);
    if (o.errors > 0) status = 3;
  }
  return status;
}

}  // namespace cachet::bench
