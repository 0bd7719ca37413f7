// ByteBudget: the memory store's max_bytes, lent out to its shards.
//
// A shard charges what it holds against credit it borrowed from here, a chunk
// at a time, so this shared counter is touched once per chunk of growth, not
// once per write: two threads writing different shards share nothing. A shard
// that needs more than the budget has left evicts its own CLOCK victims; only
// when it has too few (a large item in a shard holding little) does it ask the
// other shards to evict and give bytes back (Reclaim). So shards may be many and
// small, and none of them needs a fixed share large enough for the largest item.
// The sum of all credit never exceeds max_bytes. Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace cachet::memory {

class Limbo;
class MemoryShard;

class ByteBudget {
 public:
  explicit ByteBudget(std::size_t total) noexcept : total_(total), free_(total) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // The shards Reclaim may ask; set once, before any write.
  void SetShards(std::vector<MemoryShard*> shards) { shards_ = std::move(shards); }

  // Takes up to `want` bytes of what is left; returns how many it took.
  std::size_t Borrow(std::size_t want) noexcept;
  void Return(std::size_t bytes) noexcept { free_.fetch_add(bytes, std::memory_order_relaxed); }
  // Asks shards other than `asking` (whose lock the caller holds) to evict until
  // `bytes` came back, starting after where the last call started, each for its
  // even part of `bytes` (or a quarter of a share) per pass; what they evict
  // goes to the caller's `limbo`. A shard busy with a write of its own is passed
  // over (try_lock), so this never waits for a lock and two shards reclaiming
  // cannot deadlock; up to kPasses passes.
  void Reclaim(const MemoryShard* asking, std::size_t bytes, Limbo& limbo) noexcept;

  static constexpr int kPasses = 8;

  std::size_t total() const noexcept { return total_; }
  std::size_t left() const noexcept { return free_.load(std::memory_order_relaxed); }

 private:
  const std::size_t total_;
  alignas(64) std::atomic<std::size_t> free_;  // its own line: shards write it now and then
  std::atomic<std::size_t> hand_{0};           // where Reclaim starts next
  std::vector<MemoryShard*> shards_;
};

}  // namespace cachet::memory
