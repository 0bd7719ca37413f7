// ReadEpochs: lets the memory store's readers run without taking a lock, by
// telling writers when a block they unlinked can no longer be in any reader's hands.
//
// A reader announces itself for the length of one lookup (a Section); a writer
// that unlinks an entry does not free it but tags it with the current epoch and
// hands it to its thread's Limbo. The epoch only advances from E to E+1 when no
// reader is still inside a section announced under the other parity, so a block
// retired during epoch E is free of readers once the epoch reaches E+2:
//   - a reader that found the block entered before it was unlinked;
//   - the advance E+1 -> E+2 checked, after the unlink, that no reader of E's
//     parity remained, and the advance E -> E+1 did the same for the other parity
//     (or for a reader announced even earlier, an advance before it did).
// A reader re-reads the epoch after announcing itself and starts again if it
// moved, so its announcement always names an epoch that was current while it was
// in. The argument above needs a total order of the announcements, the reads of
// the epoch and the links: a reader's announcement and its loads of the epoch
// and the links are sequentially consistent (taking the announcement back is a
// release store), and a writer unlinks with a release store, then issues a
// sequentially consistent fence before it reads the epoch or the slots
// (Limbo::Settle, one fence for several unlinks).
//
// A second, quicker way out: when a writer, after unlinking, finds no reader
// inside a section in any slot, nothing it unlinked before can be in a reader's
// hands (NoReaders), whatever the epoch. A reader it missed announced itself
// after the writer looked, so after the unlink, and can only find what replaced
// the block. This lets writes with no reader beside them free what they retired
// at once, without writing the epoch: the one word every writer reads.
//
// Announcements are counters, two per slot (one per parity), and each thread
// writes the slot of its number (cachet/thread_number.h: the lowest free one,
// given back when the thread ends): threads do not share the cache lines they
// write, so readers on different cores do not slow each other down. The slot
// also carries the thread's hit and miss counts, for the same reason. A thread
// numbered below kSlots owns its slot, so it leaves a section and counts with a
// plain load and store (announcing still takes an atomic add: the fence the
// protocol needs); threads numbered beyond share one more slot, with atomic adds,
// as does an ending thread once its number is given back (kGivenBackNumber).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cachet/thread_number.h"

namespace cachet::memory {

class ReadEpochs {
 public:
  static constexpr std::size_t kSlots = 32;           // slots owned by one thread each
  static constexpr std::size_t kSharedSlot = kSlots;  // the slot of every other thread

  struct alignas(64) Slot {
    std::atomic<std::uint64_t> readers[2] = {0, 0};
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
  };

  // One reader's stay: while it lives, nothing unlinked after it began is freed.
  class Section {
   public:
    // Announces the reader in the parity of the current epoch, as long as the
    // epoch stays put while it does (else Reannounce).
    explicit Section(ReadEpochs& epochs) noexcept
        : slot_(epochs.slots_[ThisThreadSlotIndex()]),
          owned_(&slot_ != &epochs.slots_[kSharedSlot]) {
      const std::uint64_t epoch = epochs.epoch_.load();
      parity_ = static_cast<unsigned>(epoch & 1);
      slot_.readers[parity_].fetch_add(1);  // sequentially consistent, even in an owned slot
      if (epochs.epoch_.load() != epoch) [[unlikely]] Reannounce(epochs);
    }
    ~Section() {
      // Release: the reader's loads come before writers can see it gone.
      Subtract(slot_.readers[parity_], owned_);
      if (both_) Subtract(slot_.readers[parity_ ^ 1], owned_);
    }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

    void CountHit() noexcept { Count(slot_.hits, owned_); }
    void CountMiss() noexcept { Count(slot_.misses, owned_); }

   private:
    // The epoch moved while the reader announced itself: announces it again.
    void Reannounce(ReadEpochs& epochs) noexcept;

    Slot& slot_;
    const bool owned_;  // the thread owns slot_ (numbered below kSlots)
    unsigned parity_ = 0;
    bool both_ = false;  // announced in both parities (see Reannounce)
  };

  ReadEpochs() = default;
  ReadEpochs(const ReadEpochs&) = delete;
  ReadEpochs& operator=(const ReadEpochs&) = delete;

  std::uint64_t current() const noexcept { return epoch_.load(); }
  // Whether a block retired while the epoch was `retired_in` can be freed.
  bool Reclaimable(std::uint64_t retired_in) const noexcept { return current() >= retired_in + 2; }
  // Whether no reader is inside a section, in either parity, as the slots are
  // read one after the other: everything unlinked before the call is then free.
  bool NoReaders() const noexcept;
  // Moves to the next epoch if no reader remains in the previous one's parity;
  // false when one does (try again later) or another thread advanced first.
  bool TryAdvance() noexcept;

  // Hit and miss counts summed over the slots (not one instant: see metrics).
  std::uint64_t hits() const noexcept;
  std::uint64_t misses() const noexcept;
  // The calling thread's slot, also its lane among WriterLanes: its number, or
  // kSharedSlot for a thread numbered kSlots or more.
  static std::size_t ThisThreadSlotIndex() noexcept {
    const std::size_t number = ThreadNumber(ThreadNumbering::kMemoryStores);
    return number < kSlots ? number : kSharedSlot;
  }
  // Counts from a writer, which holds no Section.
  void CountHit() noexcept;
  void CountMiss() noexcept;

 private:
  // A count of the calling thread's slot plus one; only its owner writes an
  // owned slot, so a plain load and store do (no atomic add, no lock prefix).
  static void Count(std::atomic<std::uint64_t>& counter, bool owned) noexcept {
    if (owned) {
      counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      counter.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // An announcement taken back, as Count's owner rule, with release order.
  static void Subtract(std::atomic<std::uint64_t>& counter, bool owned) noexcept {
    if (owned) {
      counter.store(counter.load(std::memory_order_relaxed) - 1, std::memory_order_release);
    } else {
      counter.fetch_sub(1, std::memory_order_release);
    }
  }

  alignas(64) std::atomic<std::uint64_t> epoch_{0};
  std::array<Slot, kSlots + 1> slots_;  // kSharedSlot last
};

}  // namespace cachet::memory
