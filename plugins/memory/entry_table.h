// EntryTable: the memory store's hash table, chained through the entries.
//
// Buckets are a power-of-two array of chain heads; an entry records its hash, so
// a lookup compares keys only when the hashes match, and growing the table never
// hashes a key again. The table owns its entries and destroys them with itself.
//
// Writers (Insert, Detach, Replace, RetireAll) hold the shard's lock. Find may
// also run without it, beside a writer: every link it follows is an atomic, an
// unlinked entry keeps its own link (a reader standing on it walks on), and what
// writers unlink goes to the Limbo, not to the allocator. A lock-free Find can
// miss an entry only while the table grows (entries move between chains), so it
// reports the table's layout generation: a miss counts only if the generation,
// read before and after, did not change.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "limbo.h"
#include "memory_entry.h"

namespace cachet::memory {

class EntryTable {
 public:
  explicit EntryTable(Limbo& limbo);
  ~EntryTable();
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;

  MemoryEntry* Find(std::string_view key, std::uint64_t hash) const noexcept {
    const BucketArray* buckets = buckets_.load();
    for (MemoryEntry* e = buckets->heads[hash & buckets->mask].load(); e != nullptr;
         e = e->chain_next.load()) {
      if (e->hash == hash && e->key() == key) return e;
    }
    return nullptr;
  }
  // Odd while the table grows; changes with every growth. See the opening comment.
  std::uint64_t layout() const noexcept { return layout_.load(); }

  // Takes ownership. REQUIRES: no entry with the same key is present.
  void Insert(MemoryEntry* entry) noexcept;
  // Unlinks `entry` and gives its ownership back to the caller, who must retire
  // it rather than free it.
  void Detach(MemoryEntry* entry) noexcept;
  // Puts `replacement` (same key) in place of `entry`, which the caller then owns
  // and must retire.
  void Replace(MemoryEntry* entry, MemoryEntry* replacement) noexcept;
  // Unlinks every entry and retires it to the limbo.
  void RetireAll() noexcept;

  std::size_t size() const noexcept { return size_; }

 private:
  // Small, so that many shards cost little while empty; the table doubles as it fills.
  static constexpr std::size_t kInitialBuckets = 64;

  struct BucketArray final : RetiredArray {
    std::size_t mask = 0;
    std::unique_ptr<std::atomic<MemoryEntry*>[]> heads;

    // nullptr when memory runs out.
    static BucketArray* Create(std::size_t count) noexcept;
  };

  std::atomic<MemoryEntry*>& HeadOf(const MemoryEntry* entry) noexcept {
    BucketArray* buckets = buckets_.load(std::memory_order_relaxed);
    return buckets->heads[entry->hash & buckets->mask];
  }
  // The link that points at `entry` (its bucket's head or its predecessor's
  // chain link), or nullptr if it is not in the table.
  std::atomic<MemoryEntry*>* LinkTo(const MemoryEntry* entry) noexcept;
  // Doubles the buckets once there are more entries than buckets. When memory
  // runs out the table keeps its size: chains grow longer, nothing is lost.
  void GrowIfFull() noexcept;

  Limbo& limbo_;
  std::atomic<BucketArray*> buckets_;
  std::atomic<std::uint64_t> layout_{0};
  std::size_t size_ = 0;
};

}  // namespace cachet::memory
