// EntryTable: the memory store's hash table, chained through the entries.
//
// Buckets are a power-of-two array of chain heads; an entry records its hash, so
// a lookup compares keys only when the hashes match, and growing the table never
// hashes a key again. The table owns its entries and destroys them with itself.
// Not synchronized: the shard's mutex guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "memory_entry.h"

namespace cachet::memory {

class EntryTable {
 public:
  EntryTable() : buckets_(kInitialBuckets, nullptr) {}
  ~EntryTable() { Clear(); }
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;

  MemoryEntry* Find(std::string_view key, std::uint64_t hash) const noexcept {
    for (MemoryEntry* e = buckets_[hash & (buckets_.size() - 1)]; e != nullptr; e = e->chain_next) {
      if (e->hash == hash && e->key() == key) return e;
    }
    return nullptr;
  }

  // Takes ownership. REQUIRES: no entry with the same key is present.
  void Insert(MemoryEntry* entry) noexcept;
  // Unlinks `entry` and gives its ownership back to the caller.
  void Detach(MemoryEntry* entry) noexcept;
  // Puts `replacement` (same key) in place of `entry`, which the caller then owns.
  void Replace(MemoryEntry* entry, MemoryEntry* replacement) noexcept;
  // Destroys every entry.
  void Clear() noexcept;

  std::size_t size() const noexcept { return size_; }

 private:
  static constexpr std::size_t kInitialBuckets = 1024;

  MemoryEntry** HeadOf(const MemoryEntry* entry) noexcept {
    return &buckets_[entry->hash & (buckets_.size() - 1)];
  }
  // Doubles the buckets once there are more entries than buckets. When memory
  // runs out the table keeps its size: chains grow longer, nothing is lost.
  void GrowIfFull() noexcept;

  std::vector<MemoryEntry*> buckets_;
  std::size_t size_ = 0;
};

}  // namespace cachet::memory
