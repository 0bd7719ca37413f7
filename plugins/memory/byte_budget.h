// ByteBudget: the memory store's max_bytes, lent out to its shards.
//
// A shard charges what it holds against credit it borrowed from here, a chunk
// at a time, so this shared counter is touched once per chunk of growth, not
// once per write: two threads writing different shards share nothing. A shard
// that needs more than the budget has left evicts its own CLOCK victims; only
// when it has too few (a large item in a shard holding little) does it ask the
// other shards to evict and give bytes back (Reclaim). Before either, entries
// removed in place (MemoryShard::RemoveUnlocked), which still hold their bytes,
// are unlinked wherever they are (ReclaimRemoved). So shards may be many and
// small, and none of them needs a fixed share large enough for the largest item.
// The sum of all credit never exceeds max_bytes. Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "writer_lanes.h"

namespace cachet::memory {

class MemoryShard;

class ByteBudget {
 public:
  explicit ByteBudget(std::size_t total) noexcept : total_(total), free_(total) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // The shards Reclaim may ask; set once, before any write.
  void SetShards(std::vector<MemoryShard*> shards) {
    shards_ = std::move(shards);
    removed_ = std::vector<std::atomic<std::uint64_t>>((shards_.size() + 63) / 64);
  }

  // Takes up to `want` bytes of what is left; returns how many it took.
  std::size_t Borrow(std::size_t want) noexcept;
  void Return(std::size_t bytes) noexcept { free_.fetch_add(bytes, std::memory_order_relaxed); }
  // Asks shards other than `asking` (whose lock the caller holds) to evict until
  // `bytes` came back, starting after where the last call started, each for its
  // even part of `bytes` (or a quarter of a share) per pass; what they evict
  // goes to the caller's `lane`. A shard busy with a write of its own is passed
  // over (try_lock), so this never waits for a lock and two shards reclaiming
  // cannot deadlock; up to kPasses passes.
  void Reclaim(const MemoryShard* asking, std::size_t bytes, WriterLanes::Held& lane) noexcept;

  static constexpr int kPasses = 8;

  // Notes that shard number `shard` (its place in SetShards) holds entries
  // removed in place. A bit per shard, written only when it changes, so
  // threads deleting in shards already noted write nothing shared.
  void NoteRemoved(std::size_t shard) noexcept {
    std::atomic<std::uint64_t>& word = removed_[shard / 64];
    const std::uint64_t bit = std::uint64_t{1} << (shard % 64);
    // A note a sweep takes just as this reads it may miss the caller's entry:
    // the shard's next removal notes it again, and its CLOCK takes it meanwhile.
    if ((word.load(std::memory_order_relaxed) & bit) != 0) return;
    word.fetch_or(bit);
    any_removed_.store(true);
  }
  // Takes shard `shard`'s note back; true when it had one.
  bool TakeRemovedNote(std::size_t shard) noexcept {
    std::atomic<std::uint64_t>& word = removed_[shard / 64];
    const std::uint64_t bit = std::uint64_t{1} << (shard % 64);
    if ((word.load(std::memory_order_relaxed) & bit) == 0) return false;
    return (word.fetch_and(~bit) & bit) != 0;
  }
  bool MayHoldRemoved() const noexcept { return any_removed_.load(std::memory_order_relaxed); }
  // Has every noted shard but `asking` (whose lock the caller holds) unlink its
  // removed entries into `lane` and return all its unused credit; a busy one
  // keeps its note for the next shard out of credit.
  void ReclaimRemoved(const MemoryShard* asking, WriterLanes::Held& lane) noexcept;

  std::size_t total() const noexcept { return total_; }
  std::size_t left() const noexcept { return free_.load(std::memory_order_relaxed); }

 private:
  const std::size_t total_;
  alignas(64) std::atomic<std::size_t> free_;  // its own line: shards write it now and then
  std::atomic<std::size_t> hand_{0};           // where Reclaim starts next
  alignas(64) std::atomic<bool> any_removed_{false};  // some bit of removed_ may be set
  std::vector<std::atomic<std::uint64_t>> removed_;    // NoteRemoved's bits, one per shard
  std::vector<MemoryShard*> shards_;
};

}  // namespace cachet::memory
