// Limbo: retiring unlinked entries and arrays, and freeing them once the epoch allows.
#include "limbo.h"

#include <atomic>
#include <new>
#include <thread>

namespace cachet::memory {

bool Limbo::Ring::Grow() noexcept {
  const std::size_t capacity = count_ == 0 ? 64 : 2 * count_;
  auto* items = new (std::nothrow) Waiting[capacity];
  if (items == nullptr) return false;
  for (std::size_t i = 0; i < count_; ++i) items[i] = items_[(head_ + i) & mask_];
  delete[] items_;
  items_ = items;
  mask_ = capacity - 1;
  head_ = 0;
  return true;
}

Limbo::~Limbo() {
  FreeAll(/*keep_spares=*/false);
  for (std::size_t i = 0; i < spare_count_; ++i) MemoryEntry::Destroy(spares_[i].entry);
}

void Limbo::Retire(MemoryEntry* entry, std::size_t charge) noexcept {
  if (entries_.Push({entry, kUnsettled, charge})) {
    ++unsettled_;
    bytes_ += charge;
    Retired(charge);
    return;
  }
  // No memory for the ring: wait, here, until no reader can hold the entry.
  // Readers stay for one lookup, so this ends soon.
  std::atomic_thread_fence(std::memory_order_seq_cst);  // as Settle
  const std::uint64_t epoch = epochs_.current();
  while (!epochs_.Reclaimable(epoch)) {
    if (!epochs_.TryAdvance()) std::this_thread::yield();
  }
  MemoryEntry::Destroy(entry);
}

// An array is unlinked by a sequentially consistent store (EntryTable's slot
// arrays, FrequencySketch's counters), so the epoch read now is one after it.
void Limbo::Retire(RetiredArray* array, std::size_t bytes) noexcept {
  array->retired_in = epochs_.current();
  array->retired_bytes = bytes;
  arrays_.Push(array);
  bytes_ += bytes;
  Retired(bytes);
}

void Limbo::Retired(std::size_t bytes) noexcept {
  ++blocks_since_advance_;
  bytes_since_advance_ += bytes;
  if (blocks_since_advance_ >= kAdvanceEveryBlocks || bytes_since_advance_ >= kAdvanceEveryBytes) {
    blocks_since_advance_ = 0;
    bytes_since_advance_ = 0;
    Settle();
    // With no reader in, all that waits is free now and the epoch, which every
    // writer reads, stays as it is: writers on other cores keep their copy of it.
    if (epochs_.NoReaders()) {
      FreeAll(/*keep_spares=*/true);
      return;
    }
    (void)epochs_.TryAdvance();  // fails at once while a reader of the previous epoch is in
  }
  // What waits can only become free when the epoch moves, so the ring is looked
  // at once per epoch, not per write.
  if (const std::uint64_t epoch = epochs_.current(); epoch != freed_in_) {
    freed_in_ = epoch;
    FreeReclaimable();
  }
}

void Limbo::Settle() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (unsettled_ == 0) return;
  entries_.TagNewest(unsettled_, epochs_.current());
  unsettled_ = 0;
}

void Limbo::FreeReclaimable() noexcept {
  FreeWhile(
      [this](std::uint64_t retired_in) {
        return retired_in != kUnsettled && epochs_.Reclaimable(retired_in);
      },
      /*keep_spares=*/true);
}

void Limbo::FreeAll(bool keep_spares) noexcept {
  unsettled_ = 0;  // free too: no reader was seen after a fence, or the store is gone
  FreeWhile([](std::uint64_t) { return true; }, keep_spares);
}

void Limbo::Reclaim(bool keep_spares) noexcept {
  // With no reader in, everything is free at once. Else a block retired in epoch
  // E is free at E+2: two advances at most, each of which fails at once while a
  // reader of the previous epoch is still in (or loses to another thread's
  // advance, which moves the epoch just as well).
  Settle();
  for (int attempt = 0; attempt < 2; ++attempt) {
    // The newest waiting block is the last to become free.
    std::uint64_t newest = 0;
    if (!entries_.empty()) newest = entries_.newest().retired_in;
    if (arrays_.newest != nullptr && arrays_.newest->retired_in > newest) {
      newest = arrays_.newest->retired_in;
    }
    if ((entries_.empty() && arrays_.newest == nullptr) || epochs_.Reclaimable(newest)) break;
    if (epochs_.NoReaders()) {
      FreeAll(/*keep_spares=*/true);
      break;
    }
    (void)epochs_.TryAdvance();
  }
  FreeReclaimable();
  if (!keep_spares) {
    for (std::size_t i = 0; i < spare_count_; ++i) MemoryEntry::Destroy(spares_[i].entry);
    spare_count_ = 0;
    spare_bytes_ = 0;
  }
}

MemoryEntry* Limbo::TakeSpare(std::size_t bytes, std::size_t* charge) noexcept {
  for (std::size_t i = spare_count_; i > 0; --i) {
    const Spare spare = spares_[i - 1];
    const std::size_t capacity = MemoryEntry::CapacityOf(spare.charge);
    // Room enough, and no more than the allocator's own rounding to 16 bytes
    // would give: a spare never makes an item cost more than a new block.
    if (capacity >= bytes && capacity - bytes < 16) {
      spares_[i - 1] = spares_[--spare_count_];
      spare_bytes_ -= spare.charge;
      *charge = spare.charge;
      return spare.entry;
    }
  }
  return nullptr;
}

void Limbo::KeepSpare(MemoryEntry* entry, std::size_t charge) noexcept {
  // Full: spares make way in turn, so those of a size no write asks for any
  // more (the values changed size) give their places to the newest.
  while (spare_count_ == kSpares || spare_bytes_ + charge > spare_limit_) {
    const std::size_t i = next_to_drop_++ % spare_count_;
    spare_bytes_ -= spares_[i].charge;
    MemoryEntry::Destroy(spares_[i].entry);
    spares_[i] = spares_[--spare_count_];
  }
  spares_[spare_count_++] = {entry, charge};
  spare_bytes_ += charge;
}

template <class Predicate>
void Limbo::FreeWhile(Predicate may_free, bool keep_spares) noexcept {
  while (!entries_.empty() && may_free(entries_.oldest().retired_in)) {
    const Waiting waiting = entries_.Pop();
    MemoryEntry* entry = waiting.entry;
    const std::size_t charge = waiting.charge;
    bytes_ -= charge;
    if (keep_spares && MemoryEntry::CapacityOf(charge) <= kLargestSpare && charge <= spare_limit_) {
      KeepSpare(entry, charge);
    } else {
      MemoryEntry::Destroy(entry);
    }
  }
  while (arrays_.oldest != nullptr && may_free(arrays_.oldest->retired_in)) {
    RetiredArray* array = arrays_.Pop();
    bytes_ -= array->retired_bytes;
    delete array;
  }
}

}  // namespace cachet::memory
