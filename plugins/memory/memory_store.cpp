// MemoryStore: builds the shards and sums their statistics.
#include "memory_store.h"

namespace cachet::memory {

MemoryStore::WritesStopped::WritesStopped(std::vector<std::unique_ptr<MemoryShard>>& shards)
    : shards_(shards) {
  // In one order; a writer waits for no second shard's lock, so none deadlocks.
  for (auto& shard : shards_) shard->write_lock().lock();
}

MemoryStore::WritesStopped::~WritesStopped() {
  for (auto& shard : shards_) shard->write_lock().unlock();
}

MemoryStore::MemoryStore(const MemoryStoreOptions& options)
    : options_(options),
      budget_(options.max_bytes),
      // Spares are not charged: each lane's take a 512th of the budget at most
      // (and never more than Limbo's 64 KiB), the 33 lanes' together 6.4 %.
      lanes_(epochs_, options.max_bytes / 16 / ReadEpochs::kSlots) {
  const ShardLimits limits{options_.max_bytes / options_.shards, options_.max_item_size,
                           options_.policy, options_.window_percent,
                           options_.expiry_rounds_down};
  shards_.reserve(options_.shards);
  std::vector<MemoryShard*> lenders;
  for (std::size_t i = 0; i < options_.shards; ++i) {
    shards_.push_back(std::make_unique<MemoryShard>(limits, epochs_, budget_, lanes_, i));
    lenders.push_back(shards_.back().get());
  }
  budget_.SetShards(std::move(lenders));
}

void MemoryStore::Flush() {
  for (auto& shard : shards_) shard->Flush();
  // The store may see no write after a flush: give back now what readers allow.
  WritesStopped stopped(shards_);
  lanes_.Reclaim(/*keep_spares=*/false);
}

ShardStats MemoryStore::TotalStats() {
  WritesStopped stopped(shards_);
  lanes_.Reclaim(/*keep_spares=*/true);  // a quiet thread's limbo moves only here
  ShardStats total;
  for (const auto& shard : shards_) {
    const ShardStats s = shard->stats();
    total.items += s.items;
    total.bytes += s.bytes;
    total.table_bytes += s.table_bytes;
    total.evictions += s.evictions;
    total.expired += s.expired;
    total.total_items += s.total_items;
    total.rejected += s.rejected;
    total.payload_bytes += s.payload_bytes;
    total.sketch_bytes += s.sketch_bytes;
    total.window_bytes += s.window_bytes;
    total.window_items += s.window_items;
  }
  // Entries removed in place are still in the tables, but no longer items. (A
  // lane's count may lag its write in place by an instant: never below 0.)
  auto less = [](std::uint64_t total, std::int64_t removed) -> std::uint64_t {
    if (removed <= 0) return total;
    const auto gone = static_cast<std::uint64_t>(removed);
    return gone < total ? total - gone : 0;
  };
  const RemovedEntries removed = lanes_.removed();
  total.items = less(total.items, removed.items);
  total.payload_bytes = less(total.payload_bytes, removed.payload);
  total.reclaiming_bytes = lanes_.bytes();
  total.get_hits = epochs_.hits();
  total.get_misses = epochs_.misses();
  return total;
}

}  // namespace cachet::memory
