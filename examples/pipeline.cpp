// Pipelines: a Batch of mixed operations sent with cache.Run(batch), in one
// round trip per server on the network stores, each outcome read afterwards.
// Usage: example_pipeline [CONFIG [section.key=value]...]
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cachet/batch.h"
#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  // Add operations, keeping their handles; values are typed as with Set and Get.
  cachet::Batch batch(*cache);
  const cachet::BatchWrite stored = batch.Set("visits", 1);
  const cachet::BatchCounter counted = batch.Incr("visits", 5);
  const cachet::BatchRead<std::int64_t> visits = batch.Get<std::int64_t>("visits");
  const cachet::BatchRead<std::string> absent = batch.Get("no-such-key");
  cache->Run(batch);  // everything is sent at once

  // Each outcome as the single call would answer it: Status, Result or Lookup.
  std::printf("set: %s\n", batch.Outcome(stored).ToString().c_str());
  const cachet::Result<std::uint64_t> first_count = batch.Outcome(counted);
  std::printf("incr: %llu\n", static_cast<unsigned long long>(first_count.value()));
  std::printf("get: %lld\n", static_cast<long long>(batch.Outcome(visits).value()));
  std::printf("absent: %s\n", batch.Outcome(absent).miss() ? "miss" : "?");

  // Reuse: Clear() keeps the buffers, so a warm batch refilled in a loop
  // allocates nothing for its operations.
  std::vector<cachet::BatchCounter> hits;
  for (int round = 0; round < 100; ++round) {
    batch.Clear();
    hits.clear();
    for (int page = 0; page < 100; ++page) hits.push_back(batch.Incr("visits"));
    cache->Run(batch);
  }
  const std::uint64_t last = batch.Outcome(hits.back()).value();
  std::printf("after 10000 increments: %llu\n", static_cast<unsigned long long>(last));

  // noreply: writes sent without waiting where the store has it (memcached,
  // Tokyo Tyrant); elsewhere each answers unsupported, naming the store.
  batch.Clear();
  const cachet::BatchWrite quiet = batch.Set("last-page", std::string("/home"));
  batch.Noreply(quiet);
  cache->Run(batch);
  const cachet::Status quiet_status = batch.Outcome(quiet);
  std::printf("noreply set: %s\n", quiet_status.ToString().c_str());

  const bool as_expected = last == 10006 && first_count.value() == 6 &&
                           (quiet_status.ok() || quiet_status.IsUnsupported());
  return as_expected ? 0 : 1;
}
