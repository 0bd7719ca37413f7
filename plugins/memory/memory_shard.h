// MemoryShard: one lock's worth of the memory store: a hash table of entries,
// their LRU list, a byte budget and a CAS counter.
//
// Every method takes the shard's mutex for its whole duration, so each operation
// is atomic with respect to the others on the same shard. Recency is kept the
// CLOCK way: a read only marks its entry as referenced (no list surgery on the
// hot path); eviction starts at the least recently written end and gives a
// referenced entry a second chance by moving it to the newest end. Expired
// entries are removed lazily, when an operation finds them or eviction reaches
// them. Keys and values are validated by the caller (MemoryBackend); the shard
// enforces its byte budget and the item size limit that append can reach.
// Nothing here throws: allocation failures come back as Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "cachet/backend.h"
#include "cachet/item.h"
#include "cachet/status.h"
#include "shard_lock.h"
#include "entry_table.h"
#include "memory_entry.h"

namespace cachet::memory {

struct ShardLimits {
  std::size_t capacity_bytes = 0;  // sum of the entries' charge()
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

// A key and its hash, computed once by the store and used by the shard's table.
struct KeyRef {
  std::string_view key;
  std::uint64_t hash;
};

// Milliseconds of the steady clock: the memory store's time base for expiry.
std::int64_t SteadyNowMs() noexcept;

class alignas(64) MemoryShard {
 public:
  explicit MemoryShard(ShardLimits limits) : limits_(limits) {}
  MemoryShard(const MemoryShard&) = delete;
  MemoryShard& operator=(const MemoryShard&) = delete;

  Status Get(KeyRef key, Item* out);
  Status GetAndTouch(KeyRef key, Ttl ttl, Item* out);
  Status Store(StoreMode mode, KeyRef key, ItemView item, Ttl ttl);
  Status Remove(KeyRef key);
  Status Touch(KeyRef key, Ttl ttl);
  Status AddToCounter(KeyRef key, std::uint64_t delta, bool increment, std::uint64_t* value);
  void Flush();
  ShardStats stats() const;

 private:
  // The live entry under `key`, or nullptr; an expired one is removed on the way.
  MemoryEntry* FindLive(KeyRef key);
  Status StoreNew(KeyRef key, ItemView item, Ttl ttl);
  Status Overwrite(MemoryEntry* entry, ItemView item, Ttl ttl);
  Status Concatenate(MemoryEntry* entry, std::string_view bytes, bool after);
  // Replaces the value bytes, moving the entry to a bigger block if needed.
  // Returns the entry's (possibly new) address, or nullptr when out of memory.
  MemoryEntry* SetValue(MemoryEntry* entry, std::string_view value);
  // Moves `entry` to a block with room for `value_capacity` value bytes, with
  // its value when `keep_value` (else empty). nullptr, and `entry` untouched,
  // when out of memory.
  MemoryEntry* Regrow(MemoryEntry* entry, std::size_t value_capacity, bool keep_value);
  Status CheckFits(std::size_t key_size, std::size_t value_size) const;
  void Erase(MemoryEntry* entry);
  // Drops the least recently used entries, never `keep`, until the budget holds.
  void EvictOver(const MemoryEntry* keep);
  static void CopyOut(const MemoryEntry& entry, Item* out);
  // Values up to this size are read out through the stack (see Get).
  static constexpr std::size_t kStackCopy = 512;

  mutable ShardLock mutex_;
  const ShardLimits limits_;
  EntryTable table_;
  LruList lru_;
  std::size_t bytes_ = 0;
  std::uint64_t next_cas_ = 1;
  ShardStats counters_;  // items and bytes are filled in by stats()
};

}  // namespace cachet::memory
