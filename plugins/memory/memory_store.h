// MemoryStore: the memory store's shards, and the choice of shard for a key.
//
// The shards borrow from one ByteBudget, so a shard holds what its keys need and
// evicts its own items first: a key's neighbours in other shards pay for it only
// when its shard has nothing left to give, and no shard needs a fixed share
// large enough for the largest item. A key is hashed once: the high bits pick
// the shard, the low bits the bucket inside it.
// Thread-safe: the shards lock themselves for writes, reads run in the store's
// ReadEpochs, and the shard list never changes after construction.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "memory_shard.h"

namespace cachet::memory {

struct MemoryStoreOptions {
  std::size_t max_bytes = std::size_t{64} << 20;
  std::size_t shards = 16;  // the plugin's `auto` sets AutoShards(max_bytes, policy)
  std::size_t max_item_size = std::size_t{1} << 20;
  std::size_t max_key_size = 250;
  EvictionPolicy policy = EvictionPolicy::kLru;
  std::size_t window_percent = 1;  // TinyLFU's admission window (0: none)
  bool expiry_rounds_down = false;  // [memory] expiry_rounding = down
};

// The shard count of `shards = auto`. Under lru, where overwrites of the same
// size and deletes take no lock, one per 512 KiB of the budget, from 16 to 128:
// only inserts and removals meet on a shard's lock, and every shard's own lines
// are what one thread's lookups miss in the caches. Under tinylfu, where every
// write takes the lock, one per 64 KiB, from 16 to 1024, so that writing threads
// seldom meet on one (docs/memory.md, "How many shards").
inline std::size_t AutoShards(std::size_t max_bytes, EvictionPolicy policy) {
  if (policy == EvictionPolicy::kTinyLfu) {
    return std::clamp<std::size_t>(max_bytes / (std::size_t{64} << 10), 16, 1024);
  }
  return std::clamp<std::size_t>(max_bytes / (std::size_t{512} << 10), 16, 128);
}

// What a shard's empty table takes of the budget (64 slots of 8 bytes).
inline constexpr std::size_t kEmptyTableBytes = 512;

class MemoryStore {
 public:
  // REQUIRES: options.shards >= 1.
  explicit MemoryStore(const MemoryStoreOptions& options);

  // The shard that holds `key`, and the key with its hash for that shard.
  std::pair<MemoryShard&, KeyRef> Locate(std::string_view key) {
    const std::uint64_t hash = std::hash<std::string_view>{}(key);
    // The top 32 bits scaled to the shard count: a multiply, not a division.
    const std::uint64_t pick = ((hash >> 32) * shards_.size()) >> 32;
    MemoryShard& shard = *shards_[pick];
    const KeyRef ref{key, hash};
    shard.PrefetchSlot(ref);  // the slot is a cache miss in a large store: start it now
    return {shard, ref};
  }

  void Flush();
  // The shards' counters, summed.
  ShardStats TotalStats();
  const MemoryStoreOptions& options() const noexcept { return options_; }

 private:
  // Every shard's lock, held while it lives: no write under a shard's lock is
  // under way, so every lane's limbo may be reached (WriterLanes::Reclaim).
  // Writes without the lock (MemoryShard::OverwriteUnlocked...) may still run:
  // they touch no limbo.
  class WritesStopped {
   public:
    explicit WritesStopped(std::vector<std::unique_ptr<MemoryShard>>& shards);
    ~WritesStopped();
    WritesStopped(const WritesStopped&) = delete;
    WritesStopped& operator=(const WritesStopped&) = delete;

   private:
    std::vector<std::unique_ptr<MemoryShard>>& shards_;
  };

  MemoryStoreOptions options_;
  ReadEpochs epochs_;  // before shards_, which use it until they are gone
  ByteBudget budget_;  // likewise
  WriterLanes lanes_;  // likewise; gone after the shards, it frees what they retired
  std::vector<std::unique_ptr<MemoryShard>> shards_;
};

}  // namespace cachet::memory
