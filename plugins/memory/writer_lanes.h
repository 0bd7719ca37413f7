// WriterLanes: each writing thread's limbo, so what a write retires and the
// spare it writes into stay with the thread that wrote them.
//
// A write that rebuilds an entry unlinks the old one and builds the new one in
// a spare (Limbo). Per thread, a write's spare is one this thread freed a few
// writes earlier, still in its caches; no two writers share one, and however
// many shards there are, each limbo sees every retirement of its thread.
//
// A thread writes through the lane of its ReadEpochs slot: its own if it is
// numbered below kSlots, used with no lock of its own, as only the owner
// writes through it; threads numbered beyond share the last lane, under its
// lock (lock order: a shard's, then that one; writes without the shard's lock
// run only on threads with a lane of their own). A lane's limbo is only ever
// used under some shard's lock, so Reclaim and bytes(), which reach every
// lane's limbo, need the caller to hold every shard's lock.
//
// A lane also hands out its thread's CAS tokens, taken from the store 65,536 at
// a time: tokens are unique in the store (until their 47 bits wrap, after 2^47
// writes) and a write takes no shared line for one. And it counts the entries
// its thread removed in place (or unlinked after that), for the statistics.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "limbo.h"
#include "memory_entry.h"
#include "read_epochs.h"
#include "write_lock.h"

namespace cachet::memory {

class WriterLanes {
 private:
  struct Lane;

 public:
  // The calling thread's lane, held until this goes.
  class Held {
   public:
    explicit Held(Lane& lane) noexcept : lane_(lane) {
      if (lane_.shared) lane_.lock.lock();
    }
    ~Held() {
      if (lane_.shared) lane_.lock.unlock();
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

    Limbo& limbo() noexcept { return lane_.limbo; }
    // Adds to the thread's count of entries removed in place and still in the
    // tables: +1 for a removal, -1 for an unlink or a revival after one.
    void CountRemoved(const RemovedEntries& delta) noexcept {
      Add(lane_.removed_items, delta.items);
      Add(lane_.removed_payload, delta.payload);
    }
    // A CAS token no write in the store has had (MemoryEntry's 47 bits, never 0).
    std::uint64_t NextCas() noexcept {
      if (lane_.next_cas == lane_.cas_end) lane_.TakeCasBlock();
      return lane_.next_cas++;
    }

   private:
    // Only the lane's holder writes its counts; statistics read them meanwhile.
    static void Add(std::atomic<std::int64_t>& count, std::int64_t delta) noexcept {
      count.store(count.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
    }

    Lane& lane_;
  };

  // Each lane's spares take at most `spare_limit` bytes.
  WriterLanes(ReadEpochs& epochs, std::size_t spare_limit);
  WriterLanes(const WriterLanes&) = delete;
  WriterLanes& operator=(const WriterLanes&) = delete;

  Held Mine() noexcept { return Held(*lanes_[ReadEpochs::ThisThreadSlotIndex()]); }

  // For a store whose writes stopped (flush, stats): Limbo::Reclaim on every lane.
  // REQUIRES: no write under way (the caller holds every shard's lock).
  void Reclaim(bool keep_spares) noexcept;
  // What waits in every lane, spares included. REQUIRES: as Reclaim.
  std::size_t bytes() noexcept;
  // The entries removed in place and still in the tables, summed over the
  // lanes (CountRemoved; a lane's own count may be negative).
  RemovedEntries removed() const noexcept;

  // A lane's CAS tokens come in blocks of 2^16: 2^31 blocks fill the 47 bits.
  static constexpr int kCasBlockBits = 16;
  static constexpr std::uint64_t kCasBlocks = std::uint64_t{1} << 31;
  // The first token of the `block`th block handed out (they wrap after
  // kCasBlocks); never 0, which is no token.
  static constexpr std::uint64_t FirstCasOf(std::uint64_t block) noexcept {
    const std::uint64_t first = (block % kCasBlocks) << kCasBlockBits;
    return first == 0 ? 1 : first;
  }
  // One past the last token of that block.
  static constexpr std::uint64_t CasEndOf(std::uint64_t block) noexcept {
    return (block % kCasBlocks + 1) << kCasBlockBits;
  }

 private:
  struct alignas(64) Lane {
    Lane(ReadEpochs& epochs, std::size_t spare_limit, bool shared_lane,
         std::atomic<std::uint64_t>& blocks) noexcept
        : shared(shared_lane), limbo(epochs, spare_limit), cas_blocks(blocks) {}

    // The next block of the store's tokens.
    void TakeCasBlock() noexcept {
      const std::uint64_t block = cas_blocks.fetch_add(1, std::memory_order_relaxed);
      next_cas = FirstCasOf(block);
      cas_end = CasEndOf(block);
    }

    const bool shared;  // the lane of threads numbered kSlots and beyond
    WriteLock lock;     // taken only when shared
    Limbo limbo;
    std::atomic<std::uint64_t>& cas_blocks;  // the store's count of blocks handed out
    std::uint64_t next_cas = 0;              // the lane's next token, up to cas_end
    std::uint64_t cas_end = 0;
    std::atomic<std::int64_t> removed_items{0};    // Held::CountRemoved
    std::atomic<std::int64_t> removed_payload{0};
  };

  alignas(64) std::atomic<std::uint64_t> cas_blocks_{0};
  std::vector<std::unique_ptr<Lane>> lanes_;  // one per ReadEpochs slot, the shared one last
};

}  // namespace cachet::memory
