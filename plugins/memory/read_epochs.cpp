// ReadEpochs: announcing readers, advancing the epoch, and the per-thread slots.
#include "read_epochs.h"

#include <array>
#include <bit>

namespace cachet::memory {

namespace {

// The numbers of the live threads that used a store: the lowest free one goes to
// a thread when it first reads or writes and comes back when it ends, so up to
// kSlots live threads always have slots (and writer lanes) of their own, however
// many threads came and went before them. Lock-free and allocation-free, so a
// fork or an exit never finds it half-changed; past kTracked live threads,
// numbers are handed out once and not reused (they still map to slots).
class ThreadNumbers {
 public:
  static ThreadNumbers& Get() noexcept {
    static ThreadNumbers numbers;
    return numbers;
  }
  std::size_t Take() noexcept {
    for (std::size_t word = 0; word < kWords; ++word) {
      std::uint64_t bits = used_[word].load();
      while (bits != ~std::uint64_t{0}) {
        const int bit = std::countr_one(bits);
        if (used_[word].compare_exchange_weak(bits, bits | (std::uint64_t{1} << bit))) {
          return word * 64 + static_cast<std::size_t>(bit);
        }
      }
    }
    return kTracked + beyond_.fetch_add(1, std::memory_order_relaxed);
  }
  void Give(std::size_t number) noexcept {
    if (number < kTracked) used_[number / 64].fetch_and(~(std::uint64_t{1} << (number % 64)));
  }

 private:
  static constexpr std::size_t kWords = 16;
  static constexpr std::size_t kTracked = kWords * 64;
  std::array<std::atomic<std::uint64_t>, kWords> used_{};
  std::atomic<std::size_t> beyond_{0};
};

// A thread's number, held for the thread's life.
struct ThreadNumber {
  ThreadNumber() : value(ThreadNumbers::Get().Take()) {}
  ~ThreadNumber() { ThreadNumbers::Get().Give(value); }
  const std::size_t value;
};

std::size_t ThisThreadNumber() noexcept {
  thread_local const ThreadNumber number;
  return number.value;
}

}  // namespace

ReadEpochs::Section::Section(ReadEpochs& epochs) noexcept : slot_(epochs.ThisThreadSlot()) {
  // Each retry means the epoch advanced between the two reads; an advance needs
  // the other parity empty, so a retry is rare and the loop ends quickly. The
  // bound only guards against a writer advancing without pause forever.
  std::uint64_t epoch = epochs.epoch_.load();
  for (int attempt = 0; attempt < 1000; ++attempt) {
    parity_ = static_cast<unsigned>(epoch & 1);
    slot_.readers[parity_].fetch_add(1);
    const std::uint64_t again = epochs.epoch_.load();
    if (again == epoch) return;
    slot_.readers[parity_].fetch_sub(1);
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

std::size_t ReadEpochs::ThisThreadSlotIndex() noexcept { return ThisThreadNumber() % kSlots; }

ReadEpochs::Slot& ReadEpochs::ThisThreadSlot() noexcept { return slots_[ThisThreadSlotIndex()]; }

}  // namespace cachet::memory
