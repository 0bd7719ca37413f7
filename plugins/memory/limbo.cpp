// Limbo: retiring unlinked entries and arrays, and freeing them once the epoch allows.
#include "limbo.h"

#include <limits>

namespace cachet::memory {

Limbo::~Limbo() { FreeAll(); }

// The epoch is read after the block was unlinked (the unlinking stores and this
// load are sequentially consistent), which the reclamation rule requires.
void Limbo::Retire(MemoryEntry* entry) noexcept {
  entry->retired_in = epochs_.current();
  entry->newer = nullptr;
  if (newest_entry_ == nullptr) {
    oldest_entry_ = entry;
  } else {
    newest_entry_->newer = entry;
  }
  newest_entry_ = entry;
  Retired(entry->charge());
}

void Limbo::Retire(RetiredArray* array, std::size_t bytes) noexcept {
  array->retired_in = epochs_.current();
  array->retired_bytes = bytes;
  array->retired_next = nullptr;
  if (newest_array_ == nullptr) {
    oldest_array_ = array;
  } else {
    newest_array_->retired_next = array;
  }
  newest_array_ = array;
  Retired(bytes);
}

void Limbo::Retired(std::size_t bytes) noexcept {
  bytes_ += bytes;
  ++blocks_since_advance_;
  bytes_since_advance_ += bytes;
  if (blocks_since_advance_ >= kAdvanceEveryBlocks || bytes_since_advance_ >= kAdvanceEveryBytes) {
    blocks_since_advance_ = 0;
    bytes_since_advance_ = 0;
    epochs_.TryAdvance();
  }
  FreeReclaimable();
}

void Limbo::FreeReclaimable() noexcept {
  while (oldest_entry_ != nullptr && epochs_.Reclaimable(oldest_entry_->retired_in)) {
    MemoryEntry* entry = oldest_entry_;
    oldest_entry_ = entry->newer;
    if (oldest_entry_ == nullptr) newest_entry_ = nullptr;
    bytes_ -= entry->charge();
    MemoryEntry::Destroy(entry);
  }
  while (oldest_array_ != nullptr && epochs_.Reclaimable(oldest_array_->retired_in)) {
    RetiredArray* array = oldest_array_;
    oldest_array_ = array->retired_next;
    if (oldest_array_ == nullptr) newest_array_ = nullptr;
    bytes_ -= array->retired_bytes;
    delete array;
  }
}

void Limbo::FreeAll() noexcept {
  while (oldest_entry_ != nullptr) {
    MemoryEntry* entry = oldest_entry_;
    oldest_entry_ = entry->newer;
    MemoryEntry::Destroy(entry);
  }
  while (oldest_array_ != nullptr) {
    RetiredArray* array = oldest_array_;
    oldest_array_ = array->retired_next;
    delete array;
  }
  newest_entry_ = nullptr;
  newest_array_ = nullptr;
  bytes_ = 0;
}

}  // namespace cachet::memory
