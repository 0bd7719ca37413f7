// MemoryShard: one lock's worth of the memory store: a hash map of entries, their
// LRU list, a byte budget and a CAS counter.
//
// Every method takes the shard's mutex for its whole duration, so each operation
// is atomic with respect to the others on the same shard. Expired entries are
// removed lazily, when an operation finds them, and first when room is needed.
// Keys and values are validated by the caller (MemoryBackend); the shard only
// enforces its byte budget and the item size limit that append can reach.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "cachet/backend.h"
#include "cachet/item.h"
#include "cachet/status.h"
#include "memory_entry.h"

namespace cachet::memory {

struct ShardLimits {
  std::size_t capacity_bytes = 0;  // keys + values + kEntryOverhead per entry
  std::size_t max_item_size = 0;   // largest value
};

struct ShardStats {
  std::uint64_t items = 0;
  std::uint64_t bytes = 0;
  std::uint64_t get_hits = 0;
  std::uint64_t get_misses = 0;
  std::uint64_t evictions = 0;    // live entries dropped for room
  std::uint64_t expired = 0;      // expired entries reclaimed
  std::uint64_t total_items = 0;  // entries ever created
};

// Milliseconds of the steady clock: the memory store's time base for expiry.
std::int64_t SteadyNowMs() noexcept;

class alignas(64) MemoryShard {
 public:
  explicit MemoryShard(ShardLimits limits) : limits_(limits) {}
  MemoryShard(const MemoryShard&) = delete;
  MemoryShard& operator=(const MemoryShard&) = delete;

  Status Get(std::string_view key, Item* out);
  Status GetAndTouch(std::string_view key, Ttl ttl, Item* out);
  Status Store(StoreMode mode, std::string_view key, ItemView item, Ttl ttl);
  Status Remove(std::string_view key);
  Status Touch(std::string_view key, Ttl ttl);
  Status AddToCounter(std::string_view key, std::uint64_t delta, bool increment,
                      std::uint64_t* value);
  void Flush();
  ShardStats stats() const;

 private:
  // The live entry under `key`, or nullptr; an expired one is removed on the way.
  MemoryEntry* FindLive(std::string_view key);
  Status StoreNew(std::string_view key, ItemView item, Ttl ttl);
  Status Overwrite(MemoryEntry* entry, ItemView item, Ttl ttl);
  Status Concatenate(MemoryEntry* entry, std::string_view bytes, bool after);
  void ChargeResize(MemoryEntry* entry, std::size_t old_charge);
  void Erase(MemoryEntry* entry);
  // Drops the least recently used entries, never `keep`, until the budget holds.
  void EvictOver(const MemoryEntry* keep);
  static void CopyOut(const MemoryEntry& entry, Item* out);

  mutable std::mutex mutex_;
  ShardLimits limits_;
  std::unordered_map<std::string_view, std::unique_ptr<MemoryEntry>> entries_;
  LruList lru_;
  std::size_t bytes_ = 0;
  std::uint64_t next_cas_ = 1;
  ShardStats counters_;  // items and bytes are filled in by stats()
};

}  // namespace cachet::memory
