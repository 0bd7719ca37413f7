// MemoryStore: builds the shards and sums their statistics.
#include "memory_store.h"

namespace cachet::memory {

MemoryStore::MemoryStore(const MemoryStoreOptions& options) : options_(options) {
  const ShardLimits limits{options.max_bytes / options.shards, options.max_item_size,
                           options.policy};
  shards_.reserve(options.shards);
  for (std::size_t i = 0; i < options.shards; ++i) {
    shards_.push_back(std::make_unique<MemoryShard>(limits, epochs_));
  }
}

void MemoryStore::Flush() {
  for (auto& shard : shards_) shard->Flush();
}

ShardStats MemoryStore::TotalStats() {
  ShardStats total;
  for (const auto& shard : shards_) {
    const ShardStats s = shard->stats();
    total.items += s.items;
    total.bytes += s.bytes;
    total.table_bytes += s.table_bytes;
    total.reclaiming_bytes += s.reclaiming_bytes;
    total.evictions += s.evictions;
    total.expired += s.expired;
    total.total_items += s.total_items;
    total.rejected += s.rejected;
    total.payload_bytes += s.payload_bytes;
    total.sketch_bytes += s.sketch_bytes;
  }
  total.get_hits = epochs_.hits();
  total.get_misses = epochs_.misses();
  return total;
}

}  // namespace cachet::memory
