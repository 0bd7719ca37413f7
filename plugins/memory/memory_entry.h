// MemoryEntry and LruList: one stored item of the memory store, and the recency
// list its shard keeps.
//
// An entry is one heap block: this header followed by the key bytes and then the
// value bytes, so a hit touches the bucket, the header and the bytes beside it
// and nothing else. The links of the hash chain and the LRU list are inside the
// entry (intrusive), so neither structure allocates.
//
// Readers take no lock, so an entry is immutable once published in the table:
// its key, value, flags and CAS never change. A write builds a new entry, puts it
// in the old one's place and retires the old one (Limbo). Only three fields change
// in place, and they are atomics: the chain link (readers follow it), the expiry
// (touch) and the referenced mark (reads). The LRU links are the writers' alone,
// under the shard's lock, as is LruList.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>

namespace cachet::memory {

struct MemoryEntry {
  std::atomic<MemoryEntry*> chain_next{nullptr};  // next entry in the same hash bucket
  MemoryEntry* newer = nullptr;       // towards the most recently used end; once
                                      // retired, the next entry in the Limbo
  MemoryEntry* older = nullptr;       // towards the eviction end
  std::uint64_t hash = 0;
  std::uint64_t cas = 0;
  std::atomic<std::int64_t> expires_at_ms{0};  // steady clock milliseconds; 0: never
  std::size_t key_size = 0;
  std::size_t value_size = 0;
  std::size_t capacity = 0;  // bytes after the header, for key and value
  std::uint32_t flags = 0;
  std::atomic<bool> referenced{false};  // read since it last moved in the LRU list
  std::uint64_t retired_in = 0;         // the epoch it was unlinked in (Limbo)

  // A block for `key` with room for a value of `value_capacity` bytes; the
  // value is empty. nullptr when memory runs out.
  static MemoryEntry* Create(std::uint64_t hash, std::string_view key,
                             std::size_t value_capacity) noexcept {
    void* block = ::operator new(sizeof(MemoryEntry) + key.size() + value_capacity, std::nothrow);
    if (block == nullptr) return nullptr;
    return Build(block, hash, key, key.size() + value_capacity);
  }
  // Makes the block of a freed entry (no reader can hold it) a new, empty entry
  // for `key`, keeping its room. REQUIRES: room for the key.
  static MemoryEntry* Recycle(MemoryEntry* freed, std::uint64_t hash,
                              std::string_view key) noexcept {
    const std::size_t capacity = freed->capacity;
    freed->~MemoryEntry();
    return Build(freed, hash, key, capacity);
  }
  static void Destroy(MemoryEntry* entry) noexcept {
    entry->~MemoryEntry();
    ::operator delete(entry);
  }

  static MemoryEntry* Build(void* block, std::uint64_t hash, std::string_view key,
                            std::size_t capacity) noexcept {
    auto* entry = new (block) MemoryEntry;
    entry->hash = hash;
    entry->key_size = key.size();
    entry->capacity = capacity;
    std::memcpy(entry->bytes(), key.data(), key.size());
    return entry;
  }

  char* bytes() noexcept { return reinterpret_cast<char*>(this + 1); }
  const char* bytes() const noexcept { return reinterpret_cast<const char*>(this + 1); }
  std::string_view key() const noexcept { return {bytes(), key_size}; }
  std::string_view value() const noexcept { return {bytes() + key_size, value_size}; }
  char* value_data() noexcept { return bytes() + key_size; }

  // What the entry costs the shard's budget: its block plus an allowance for
  // the allocator's header and the bucket pointer.
  std::size_t charge() const noexcept;
  std::int64_t expiry() const noexcept { return expires_at_ms.load(std::memory_order_relaxed); }
  void set_expiry(std::int64_t at_ms) noexcept {
    expires_at_ms.store(at_ms, std::memory_order_relaxed);
  }
  bool ExpiredAt(std::int64_t now_ms) const noexcept {
    const std::int64_t at = expiry();
    return at != 0 && now_ms >= at;
  }
  // A read marks the entry only when the mark is missing, so readers of a hot
  // entry do not keep writing its cache line.
  void MarkReferenced() noexcept {
    if (!referenced.load(std::memory_order_relaxed)) {
      referenced.store(true, std::memory_order_relaxed);
    }
  }
};

// What an entry costs beyond its key and value bytes: the header, and an
// allowance for the allocator's header and the bucket pointer.
inline constexpr std::size_t kEntryOverhead = sizeof(MemoryEntry) + 24;

inline std::size_t MemoryEntry::charge() const noexcept { return kEntryOverhead + capacity; }

// A doubly linked list through MemoryEntry's links; it never owns the entries.
class LruList {
 public:
  LruList() = default;
  LruList(const LruList&) = delete;
  LruList& operator=(const LruList&) = delete;

  // Inserts `entry` as the most recently used. REQUIRES: not in the list.
  void PushNewest(MemoryEntry* entry) noexcept {
    entry->older = newest_;
    entry->newer = nullptr;
    if (newest_ != nullptr) newest_->newer = entry;
    newest_ = entry;
    if (oldest_ == nullptr) oldest_ = entry;
  }

  void Unlink(MemoryEntry* entry) noexcept {
    if (entry->newer != nullptr) entry->newer->older = entry->older;
    if (entry->older != nullptr) entry->older->newer = entry->newer;
    if (newest_ == entry) newest_ = entry->older;
    if (oldest_ == entry) oldest_ = entry->newer;
    entry->newer = entry->older = nullptr;
  }

  void MoveToNewest(MemoryEntry* entry) noexcept {
    if (newest_ == entry) return;
    Unlink(entry);
    PushNewest(entry);
  }

  // Puts `replacement` where `entry` is. REQUIRES: `replacement` not listed.
  void Substitute(MemoryEntry* entry, MemoryEntry* replacement) noexcept {
    replacement->newer = entry->newer;
    replacement->older = entry->older;
    if (entry->newer != nullptr) entry->newer->older = replacement;
    if (entry->older != nullptr) entry->older->newer = replacement;
    if (newest_ == entry) newest_ = replacement;
    if (oldest_ == entry) oldest_ = replacement;
    entry->newer = entry->older = nullptr;
  }

  MemoryEntry* oldest() const noexcept { return oldest_; }
  void Clear() noexcept { newest_ = oldest_ = nullptr; }

 private:
  MemoryEntry* newest_ = nullptr;
  MemoryEntry* oldest_ = nullptr;
};

}  // namespace cachet::memory
