// Metrics: calls, hits, misses, errors and latency percentiles per operation,
// kept by every Cache unless [cache] metrics = false, and written for Prometheus.
// Usage: example_metrics [CONFIG [section.key=value]...]
#include <cstdio>
#include <iostream>
#include <string>

#include "cachet/metrics_format.h"
#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  for (int i = 0; i < 10; ++i) (void)cache->Set("item:" + std::to_string(i), i);
  for (int i = 0; i < 100; ++i) (void)cache->Get<std::int64_t>("item:" + std::to_string(i % 12));

  // A snapshot: one OpMetrics per operation, indexed by CacheOp.
  const cachet::Metrics metrics = cache->metrics();
  std::printf("%-10s %6s %6s %6s %6s %9s %9s\n", "op", "calls", "hits", "misses", "errors",
              "p50 ns", "p99 ns");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const cachet::OpMetrics& m = metrics[i];
    if (m.calls == 0) continue;
    std::printf("%-10s %6llu %6llu %6llu %6llu %9llu %9llu\n",
                std::string(cachet::CacheOpName(static_cast<cachet::CacheOp>(i))).c_str(),
                static_cast<unsigned long long>(m.calls), static_cast<unsigned long long>(m.hits),
                static_cast<unsigned long long>(m.misses),
                static_cast<unsigned long long>(m.errors),
                static_cast<unsigned long long>(m.latency.PercentileNs(0.50)),
                static_cast<unsigned long long>(m.latency.PercentileNs(0.99)));
  }

  // The same figures for Prometheus (or WriteMetricsJson for JSON).
  cachet::WritePrometheus(*cache, std::cout);

  const cachet::OpMetrics& gets = metrics[static_cast<std::size_t>(cachet::CacheOp::kGet)];
  cache->ResetMetrics();  // counting starts again from zero, e.g. once per report
  return gets.calls == 100 && gets.hits + gets.misses == 100 && gets.latency.count() > 0 ? 0 : 1;
}
