// ReadEpochs: announcing readers, advancing the epoch, and the per-thread slots.
#include "read_epochs.h"

namespace cachet::memory {

void ReadEpochs::Section::Reannounce(ReadEpochs& epochs) noexcept {
  // Each retry means the epoch advanced between the two reads; an advance needs
  // the other parity empty, so a retry is rare and the loop ends quickly. The
  // bound only guards against a writer advancing without pause forever.
  Subtract(slot_.readers[parity_], owned_);
  std::uint64_t epoch = epochs.epoch_.load();
  for (int attempt = 0; attempt < 1000; ++attempt) {
    parity_ = static_cast<unsigned>(epoch & 1);
    slot_.readers[parity_].fetch_add(1);
    const std::uint64_t again = epochs.epoch_.load();
    if (again == epoch) return;
    Subtract(slot_.readers[parity_], owned_);
    epoch = again;
  }
  // Announced in both parities, no advance can complete after the one that may
  // already be under way, and a block this reader finds needs two more: safe
  // without the validation above, at the price of holding reclamation up.
  parity_ = 0;
  both_ = true;
  slot_.readers[0].fetch_add(1);
  slot_.readers[1].fetch_add(1);
}

bool ReadEpochs::NoReaders() const noexcept {
  for (const Slot& slot : slots_) {
    if (slot.readers[0].load() != 0 || slot.readers[1].load() != 0) return false;
  }
  return true;
}

bool ReadEpochs::TryAdvance() noexcept {
  std::uint64_t epoch = epoch_.load();
  const unsigned next_parity = static_cast<unsigned>((epoch + 1) & 1);
  for (const Slot& slot : slots_) {
    if (slot.readers[next_parity].load() != 0) return false;
  }
  return epoch_.compare_exchange_strong(epoch, epoch + 1);
}

std::uint64_t ReadEpochs::hits() const noexcept {
  std::uint64_t total = 0;
  for (const Slot& slot : slots_) total += slot.hits.load(std::memory_order_relaxed);
  return total;
}

std::uint64_t ReadEpochs::misses() const noexcept {
  std::uint64_t total = 0;
  for (const Slot& slot : slots_) total += slot.misses.load(std::memory_order_relaxed);
  return total;
}

void ReadEpochs::CountHit() noexcept {
  const std::size_t index = ThisThreadSlotIndex();
  Count(slots_[index].hits, index != kSharedSlot);
}

void ReadEpochs::CountMiss() noexcept {
  const std::size_t index = ThisThreadSlotIndex();
  Count(slots_[index].misses, index != kSharedSlot);
}

}  // namespace cachet::memory
