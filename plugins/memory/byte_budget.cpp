// ByteBudget: lending bytes to shards, and asking them back.
#include "byte_budget.h"

#include <algorithm>
#include <thread>

#include "memory_shard.h"

namespace cachet::memory {

// Relaxed: the count guards no other memory, only how much may be allocated.
std::size_t ByteBudget::Borrow(std::size_t want) noexcept {
  std::size_t free = free_.load(std::memory_order_relaxed);
  for (;;) {
    const std::size_t take = std::min(free, want);
    if (take == 0) return 0;
    if (free_.compare_exchange_weak(free, free - take, std::memory_order_relaxed)) return take;
  }
}

void ByteBudget::Reclaim(const MemoryShard* asking, std::size_t bytes,
                         WriterLanes::Held& lane) noexcept {
  const std::size_t count = shards_.size();
  // Each shard is asked for its even part of what is missing, or a quarter of
  // its share if that is more, which its CLOCK victims give: a large item takes
  // a little from many shards rather than emptying the first few, whose hot
  // items would go with the cold, and one pass suffices when none is busy.
  const std::size_t others = count > 1 ? count - 1 : 1;
  const std::size_t slice =
      std::max<std::size_t>({1, total_ / count / 4, (bytes + others - 1) / others});
  // A shard is locked only for one write, so a pass that found the shards with
  // bytes to give busy is tried again, a few times.
  for (int pass = 0; pass < kPasses && bytes > 0; ++pass) {
    if (pass > 0) std::this_thread::yield();
    const std::size_t start = hand_.fetch_add(1, std::memory_order_relaxed);
    for (std::size_t i = 0; i < count && bytes > 0; ++i) {
      MemoryShard* shard = shards_[(start + i) % count];
      if (shard == asking) continue;
      const std::size_t given = shard->TryGiveBack(std::min(bytes, slice), lane);
      bytes -= std::min(given, bytes);
    }
  }
}

void ByteBudget::ReclaimRemoved(const MemoryShard* asking, WriterLanes::Held& lane) noexcept {
  // Cleared before the bits are read: a note set meanwhile sets it again.
  (void)any_removed_.exchange(false);
  for (std::size_t word = 0; word < removed_.size(); ++word) {
    for (std::uint64_t bits = removed_[word].load(); bits != 0;
         bits &= bits - 1) {
      MemoryShard* shard = shards_[word * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))];
      if (shard == asking || !shard->TryGiveBackRemoved(lane)) {
        any_removed_.store(true);  // still noted: later
      }
    }
  }
}

}  // namespace cachet::memory
