// GetOrCompute with its options: one loader for every process sharing the store
// (a lease), stale-while-revalidate, early refresh and cached misses.
// Usage: example_get_or_compute_fleet [CONFIG [section.key=value]...]
#include <chrono>
#include <cstdio>
#include <string>

#include "example_cache.h"

namespace {

int loads = 0;

// Stands for a database read; "not found" is an answer worth caching too.
cachet::Result<std::string> LoadRow(const std::string& id) {
  ++loads;
  if (id == "missing") return cachet::Status::NotFound("no such row");
  return "row " + id;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;
  (void)cache->Remove("row:1");  // start from misses (not_found is fine)
  (void)cache->Remove("row:missing");

  cachet::ComputeOptions options;
  options.ttl = cachet::TtlFromSeconds(60);
  options.lease = std::chrono::seconds(5);            // one loader in the whole fleet
  options.stale = std::chrono::seconds(30);           // old value at once while one refreshes
  options.early_refresh = 1;                          // refresh a hot key before it expires
  options.negative_ttl = cachet::TtlFromSeconds(10);  // remember "not found" for 10 s

  for (int request = 0; request < 3; ++request) {
    cachet::Lookup<std::string> row = cache->GetOrCompute<std::string>(
        "row:1", [] { return LoadRow("1"); }, options);
    if (!row.hit()) return 3;
    std::printf("request %d: %s\n", request, row->c_str());
  }
  // The loader's not_found is a miss, cached: the second call does not load.
  for (int request = 0; request < 2; ++request) {
    cachet::Lookup<std::string> row = cache->GetOrCompute<std::string>(
        "row:missing", [] { return LoadRow("missing"); }, options);
    std::printf("missing row: %s\n", row.miss() ? "miss" : "unexpected");
  }
  std::printf("loader ran %d time(s)\n", loads);
  return loads == 2 ? 0 : 1;
}
