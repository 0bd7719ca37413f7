// MemoryStore: the memory store's shards, and the choice of shard for a key.
//
// The byte budget is split evenly between the shards; each shard evicts on its
// own, so a key's neighbours in other shards never pay for it. Thread-safe: the
// shards lock themselves, and the shard list never changes after construction.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "memory_shard.h"

namespace cachet::memory {

struct MemoryStoreOptions {
  std::size_t max_bytes = std::size_t{64} << 20;
  std::size_t shards = 16;
  std::size_t max_item_size = std::size_t{1} << 20;
  std::size_t max_key_size = 250;
};

class MemoryStore {
 public:
  // REQUIRES: options.shards >= 1.
  explicit MemoryStore(const MemoryStoreOptions& options);

  MemoryShard& ShardFor(std::string_view key) {
    // The map inside the shard uses the low bits of the same hash for its
    // buckets; mixing in the high bits keeps the two choices independent.
    const std::size_t h = std::hash<std::string_view>{}(key);
    return *shards_[(h ^ (h >> 32)) % shards_.size()];
  }

  void Flush();
  // The shards' counters, summed.
  ShardStats TotalStats() const;
  const MemoryStoreOptions& options() const noexcept { return options_; }

 private:
  MemoryStoreOptions options_;
  std::vector<std::unique_ptr<MemoryShard>> shards_;
};

}  // namespace cachet::memory
