// Limbo: what one writing thread has unlinked, kept until no reader can hold it.
//
// Readers of the memory store take no lock (see ReadEpochs), so a writer that
// unlinks an entry, or a bucket array the table outgrew, cannot free it at once:
// a reader may be looking at it. The writer retires it here instead, tagged with
// an epoch read after it was unlinked (for entries, at the next fence: Settle),
// and the limbo frees it once the epoch is two further on. Things wait in the
// order they were retired, so the oldest are always the first that may go.
// Every few retirements (or bytes' worth) the limbo frees all that waits if no
// reader is in (ReadEpochs::NoReaders), else tries to advance the epoch itself,
// so memory comes back while writes go on, soon enough that a freed entry is
// reused as a spare while its lines are still in the caches. Bytes waiting here
// are not charged to the store's budget: they are on their way out. Not
// synchronized: its lane's rule guards it (WriterLanes: its owner under a
// shard's lock, or the shared lane's lock).
//
// Entries wait in a ring of (entry, epoch) pairs that the limbo owns (an entry
// carries no link of its own: readers may still be reading all of it), so a
// live item costs nothing here; the rare bucket arrays wait on a list of their
// own. Since most writes build a new entry (an overwrite of the same size is
// made in place), the limbo keeps a few dozen small
// freed entries as spares for the next writes, which then skip the allocator
// (and the freed entry its free); spares are not charged either.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "memory_entry.h"
#include "read_epochs.h"

namespace cachet::memory {

// The epoch of an entry retired since the limbo's last fence (Limbo::Settle):
// not yet known, so not free.
inline constexpr std::uint64_t kUnsettled = ~std::uint64_t{0};

// A block other than an entry that may be retired: the limbo destroys it through
// the virtual destructor.
struct RetiredArray {
  virtual ~RetiredArray() = default;

  RetiredArray* retired_next = nullptr;
  std::uint64_t retired_in = 0;  // the epoch when it was unlinked
  std::size_t retired_bytes = 0;
};

class Limbo {
 public:
  // Spares take at most `spare_limit` bytes (and never more than kSpareBytes).
  Limbo(ReadEpochs& epochs, std::size_t spare_limit) noexcept
      : epochs_(epochs), spare_limit_(spare_limit < kSpareBytes ? spare_limit : kSpareBytes) {}
  // Frees everything: a limbo ends with its store, when no reader is left.
  ~Limbo();
  Limbo(const Limbo&) = delete;
  Limbo& operator=(const Limbo&) = delete;

  // Takes an entry unlinked from the table, whose charge() is `charge`. The
  // unlink may be a release store: the entry is tagged with its epoch later,
  // after a fence (Settle).
  void Retire(MemoryEntry* entry, std::size_t charge) noexcept;
  // Takes an array of `bytes` bytes that readers may still be reading.
  void Retire(RetiredArray* array, std::size_t bytes) noexcept;
  // Frees what no reader can hold any more.
  void FreeReclaimable() noexcept;
  // For a thread whose writes stopped (Flush, stats): frees all that waits if no
  // reader is in, else tries at most twice to advance the epoch (all a block
  // retired now needs) and frees what no reader can hold; without `keep_spares`
  // the spares are freed too.
  void Reclaim(bool keep_spares) noexcept;
  // A freed entry with room for `bytes` bytes after its header (MemoryEntry::RoomFor;
  // and less than 16 more), to be rebuilt with MemoryEntry::Recycle, and its
  // charge() in `*charge`; nullptr if none fits.
  MemoryEntry* TakeSpare(std::size_t bytes, std::size_t* charge) noexcept;

  // Waiting blocks and spares, as charged (a spare is memory the store holds).
  std::size_t bytes() const noexcept {
    return bytes_ + spare_bytes_;
  }

 private:
  // A look for readers (and, with one in, an attempt to advance the epoch) after
  // this many retirements or bytes. The epoch is the one word every writer
  // shares, so each advance takes its cache line from the other cores; but a
  // retired entry becomes a spare only two advances later, and the next write
  // fills that spare: the sooner, the likelier its lines are still cached
  // (docs/memory.md, "One thread").
  static constexpr std::size_t kAdvanceEveryBlocks = 8;
  static constexpr std::size_t kAdvanceEveryBytes = std::size_t{256} << 10;
  // Spares: how many, and the largest room (key and value bytes) worth keeping.
  static constexpr std::size_t kSpares = 64;
  static constexpr std::size_t kLargestSpare = 4096;
  static constexpr std::size_t kSpareBytes = std::size_t{64} << 10;  // all spares, at most

  struct Waiting {
    MemoryEntry* entry;
    std::uint64_t retired_in;  // an epoch read after its unlink, or kUnsettled
    // Its charge(), kept here: by the time it is freed the entry's lines have
    // left the caches, and asking the allocator again would fetch one of them.
    std::size_t charge;
  };
  // A first-in, first-out ring of waiting entries that doubles when full.
  class Ring {
   public:
    ~Ring() { delete[] items_; }
    bool empty() const noexcept { return count_ == 0; }
    const Waiting& oldest() const noexcept { return items_[head_]; }
    const Waiting& newest() const noexcept { return items_[(head_ + count_ - 1) & mask_]; }
    // Sets the epoch of the newest `count` entries.
    void TagNewest(std::size_t count, std::uint64_t epoch) noexcept {
      for (std::size_t i = count_ - count; i < count_; ++i) {
        items_[(head_ + i) & mask_].retired_in = epoch;
      }
    }
    // false when the ring is full and cannot grow (out of memory). Inline, so
    // the fields go straight into the ring, not through a copy on the stack.
    bool Push(const Waiting& waiting) noexcept {
      if (count_ == mask_ + 1 && !Grow()) return false;
      items_[(head_ + count_) & mask_] = waiting;
      ++count_;
      return true;
    }
    Waiting Pop() noexcept {
      const Waiting waiting = items_[head_];
      head_ = (head_ + 1) & mask_;
      --count_;
      return waiting;
    }

   private:
    // Twice the room (64 at first), the waiting entries in order; false when
    // out of memory.
    bool Grow() noexcept;

    Waiting* items_ = nullptr;
    std::size_t mask_ = ~std::size_t{0};  // capacity - 1; no capacity yet
    std::size_t head_ = 0;
    std::size_t count_ = 0;
  };
  // A first-in, first-out list of arrays linked through `retired_next`.
  struct ArrayQueue {
    RetiredArray* oldest = nullptr;
    RetiredArray* newest = nullptr;

    void Push(RetiredArray* array) noexcept {
      array->retired_next = nullptr;
      if (newest == nullptr) {
        oldest = array;
      } else {
        newest->retired_next = array;
      }
      newest = array;
    }
    RetiredArray* Pop() noexcept {
      RetiredArray* array = oldest;
      oldest = array->retired_next;
      if (oldest == nullptr) newest = nullptr;
      return array;
    }
  };

  // Counts a retirement, now and then advancing the epoch; frees what it can.
  void Retired(std::size_t bytes) noexcept;
  // A sequentially consistent fence, then the epoch as the tag of the entries
  // retired since the last: their unlinks (release stores) now come before the
  // loads that follow, of the epoch and the reader slots, as ReadEpochs requires.
  // One fence for several unlinks, where each unlink would otherwise be one.
  void Settle() noexcept;
  // Frees from the front of both queues while `may_free(retired_in)` says so,
  // keeping spares when `keep_spares`.
  template <class Predicate>
  void FreeWhile(Predicate may_free, bool keep_spares) noexcept;
  // Frees everything waiting, whatever the epoch: only when no reader can hold it.
  void FreeAll(bool keep_spares) noexcept;
  // Keeps a freed entry of at most spare_limit_ bytes as a spare, dropping
  // older spares while the spares are full.
  void KeepSpare(MemoryEntry* entry, std::size_t charge) noexcept;

  ReadEpochs& epochs_;
  const std::size_t spare_limit_;  // bytes all spares together may take
  Ring entries_;
  ArrayQueue arrays_;
  struct Spare {
    MemoryEntry* entry;
    std::size_t charge;  // its charge(): its room is MemoryEntry::CapacityOf(charge)
  };
  std::array<Spare, kSpares> spares_{};
  std::size_t spare_count_ = 0;
  std::size_t spare_bytes_ = 0;
  std::size_t next_to_drop_ = 0;  // turns over the spares when they are full
  std::size_t bytes_ = 0;
  std::uint64_t freed_in_ = 0;    // the epoch of the last look for what may be freed
  std::size_t blocks_since_advance_ = 0;
  std::size_t bytes_since_advance_ = 0;
  std::size_t unsettled_ = 0;  // the newest entries, tagged kUnsettled
};

}  // namespace cachet::memory
