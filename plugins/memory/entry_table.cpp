// EntryTable: insertion, removal and growth of the chained hash table.
#include "entry_table.h"

#include <new>
#include <utility>

namespace cachet::memory {

void EntryTable::Insert(MemoryEntry* entry) noexcept {
  GrowIfFull();
  MemoryEntry** head = HeadOf(entry);
  entry->chain_next = *head;
  *head = entry;
  ++size_;
}

void EntryTable::Detach(MemoryEntry* entry) noexcept {
  for (MemoryEntry** link = HeadOf(entry); *link != nullptr; link = &(*link)->chain_next) {
    if (*link == entry) {
      *link = entry->chain_next;
      entry->chain_next = nullptr;
      --size_;
      return;
    }
  }
}

void EntryTable::Replace(MemoryEntry* entry, MemoryEntry* replacement) noexcept {
  for (MemoryEntry** link = HeadOf(entry); *link != nullptr; link = &(*link)->chain_next) {
    if (*link == entry) {
      replacement->chain_next = entry->chain_next;
      *link = replacement;
      entry->chain_next = nullptr;
      return;
    }
  }
}

void EntryTable::Clear() noexcept {
  for (MemoryEntry*& head : buckets_) {
    while (head != nullptr) {
      MemoryEntry* next = head->chain_next;
      MemoryEntry::Destroy(head);
      head = next;
    }
  }
  size_ = 0;
}

void EntryTable::GrowIfFull() noexcept {
  if (size_ < buckets_.size()) return;
  std::vector<MemoryEntry*> bigger;
  try {
    bigger.resize(buckets_.size() * 2, nullptr);
  } catch (const std::bad_alloc&) {
    return;
  }
  const std::size_t mask = bigger.size() - 1;
  for (MemoryEntry* head : buckets_) {
    while (head != nullptr) {
      MemoryEntry* next = head->chain_next;
      head->chain_next = bigger[head->hash & mask];
      bigger[head->hash & mask] = head;
      head = next;
    }
  }
  buckets_ = std::move(bigger);
}

}  // namespace cachet::memory
