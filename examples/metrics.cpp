// Metrics: calls, hits, misses, errors and sampled latency per operation, kept by
// every Cache unless [cache] metrics = false.
// Usage: example_metrics [CONFIG [section.key=value]...]
#include <cstdio>
#include <string>

#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  for (int i = 0; i < 10; ++i) (void)cache->Set("item:" + std::to_string(i), i);
  for (int i = 0; i < 100; ++i) (void)cache->Get<std::int64_t>("item:" + std::to_string(i % 12));

  // A snapshot: one OpMetrics per operation, indexed by CacheOp.
  const cachet::Metrics metrics = cache->metrics();
  std::printf("%-10s %6s %6s %6s %6s %10s\n", "op", "calls", "hits", "misses", "errors", "mean ns");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const cachet::OpMetrics& m = metrics[i];
    if (m.calls == 0) continue;
    const std::uint64_t mean_ns = m.timed_calls ? m.total_latency_ns / m.timed_calls : 0;
    std::printf("%-10s %6llu %6llu %6llu %6llu %10llu\n",
                std::string(cachet::CacheOpName(static_cast<cachet::CacheOp>(i))).c_str(),
                static_cast<unsigned long long>(m.calls), static_cast<unsigned long long>(m.hits),
                static_cast<unsigned long long>(m.misses),
                static_cast<unsigned long long>(m.errors),
                static_cast<unsigned long long>(mean_ns));
  }

  const cachet::OpMetrics& gets = metrics[static_cast<std::size_t>(cachet::CacheOp::kGet)];
  cache->ResetMetrics();  // counting starts again from zero, e.g. once per report
  return gets.calls == 100 && gets.hits + gets.misses == 100 && gets.timed_calls > 0 ? 0 : 1;
}
