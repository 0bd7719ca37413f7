// MemoryStore: builds the shards and sums their statistics.
#include "memory_store.h"

namespace cachet::memory {

MemoryStore::MemoryStore(const MemoryStoreOptions& options) : options_(options) {
  const ShardLimits limits{options.max_bytes / options.shards, options.max_item_size};
  shards_.reserve(options.shards);
  for (std::size_t i = 0; i < options.shards; ++i) {
    shards_.push_back(std::make_unique<MemoryShard>(limits));
  }
}

void MemoryStore::Flush() {
  for (auto& shard : shards_) shard->Flush();
}

ShardStats MemoryStore::TotalStats() const {
  ShardStats total;
  for (const auto& shard : shards_) {
    const ShardStats s = shard->stats();
    total.items += s.items;
    total.bytes += s.bytes;
    total.get_hits += s.get_hits;
    total.get_misses += s.get_misses;
    total.evictions += s.evictions;
    total.expired += s.expired;
    total.total_items += s.total_items;
  }
  return total;
}

}  // namespace cachet::memory
