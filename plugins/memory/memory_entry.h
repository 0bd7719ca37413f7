// MemoryEntry and LruList: one stored item of the memory store and the intrusive
// recency list its shard keeps.
//
// An entry owns its key and value. The shard's hash map is keyed by a string_view
// into the entry's own key, so a lookup by string_view allocates nothing; entries
// live on the heap and never move, which keeps those views valid. The LRU links
// are inside the entry (intrusive), so touching an item on a hit is two pointer
// swaps and no allocation. Neither type is synchronized: the shard's mutex guards
// both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cachet::memory {

// Bookkeeping charged to every entry on top of its key and value bytes: the
// entry itself plus the hash map node and bucket that point to it.
inline constexpr std::size_t kEntryOverhead = 96;

struct MemoryEntry {
  std::string key;
  std::string value;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;
  std::int64_t expires_at_ms = 0;  // steady clock milliseconds; 0: never

  MemoryEntry* newer = nullptr;  // towards the most recently used end
  MemoryEntry* older = nullptr;  // towards the eviction end

  std::size_t charge() const noexcept { return key.size() + value.size() + kEntryOverhead; }
  bool ExpiredAt(std::int64_t now_ms) const noexcept {
    return expires_at_ms != 0 && now_ms >= expires_at_ms;
  }
};

// A doubly linked list through MemoryEntry's links; it never owns the entries.
class LruList {
 public:
  LruList() = default;
  LruList(const LruList&) = delete;
  LruList& operator=(const LruList&) = delete;

  // Inserts `entry` as the most recently used. REQUIRES: not in a list.
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

  void MarkUsed(MemoryEntry* entry) noexcept {
    if (newest_ == entry) return;
    Unlink(entry);
    PushNewest(entry);
  }

  MemoryEntry* oldest() const noexcept { return oldest_; }
  void Clear() noexcept { newest_ = oldest_ = nullptr; }

 private:
  MemoryEntry* newest_ = nullptr;
  MemoryEntry* oldest_ = nullptr;
};

}  // namespace cachet::memory
