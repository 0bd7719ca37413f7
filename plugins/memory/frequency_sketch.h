// FrequencySketch: how often each key was asked for lately, approximately: a
// count-min sketch with aging, for the memory store's TinyLFU admission.
//
// Four rows of saturating counters (0..15, one byte each); a key bumps one
// counter per row, picked by a different mix of its hash, and its estimate is
// the smallest of the four (collisions only ever add). A key's four counters
// lie in one 64-byte block (16 counters of each row), picked by its hash, so
// recording or estimating a key touches one cache line, not four. Only the smallest
// counters are bumped (conservative update), which keeps collisions from
// inflating the others. After `sample` bumps every counter is halved, so the
// sketch forgets what was popular long ago and a once-hot key loses its weight.
//
// Lock-free readers bump the sketch beside the shard's writer, so counters are
// relaxed atomics: a lost or doubled bump only blurs an estimate that is blurred
// by design; the count of accesses is a relaxed load and store, not an atomic
// add, for the same reason (a lost addition only delays aging a little). Aging
// is done by the writer (under the shard's lock), never by readers.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace cachet::memory {

class FrequencySketch {
 public:
  static constexpr unsigned kRows = 4;
  static constexpr std::uint8_t kMaxCount = 15;

  // Room to tell apart about `keys` keys (rounded up to a power of two, at least 64).
  explicit FrequencySketch(std::size_t keys)
      : width_(std::bit_ceil(keys < 64 ? std::size_t{64} : keys)),
        sample_(10 * width_),
        block_mask_(kRows * width_ / kBlock - 1),
        counters_(new (std::align_val_t{kBlock}) std::atomic<std::uint8_t>[kRows * width_]()) {}

  // Counts one access to the key with this hash.
  void Record(std::uint64_t hash) noexcept {
    std::size_t slots[kRows];
    std::uint8_t counts[kRows];
    std::uint8_t smallest = kMaxCount;
    for (unsigned row = 0; row < kRows; ++row) {
      slots[row] = Slot(hash, row);
      counts[row] = counters_[slots[row]].load(std::memory_order_relaxed);
      if (counts[row] < smallest) smallest = counts[row];
    }
    if (smallest == kMaxCount) return;  // saturated: nothing to write
    for (unsigned row = 0; row < kRows; ++row) {
      if (counts[row] == smallest) {
        counters_[slots[row]].store(static_cast<std::uint8_t>(smallest + 1),
                                    std::memory_order_relaxed);
      }
    }
    additions_.store(additions_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // The estimated accesses to the key with this hash since it was last halved.
  std::uint8_t Estimate(std::uint64_t hash) const noexcept {
    std::uint8_t smallest = kMaxCount;
    for (unsigned row = 0; row < kRows; ++row) {
      const std::uint8_t c = counters_[Slot(hash, row)].load(std::memory_order_relaxed);
      if (c < smallest) smallest = c;
    }
    return smallest;
  }

  // Halves every counter once `sample` accesses were recorded since the last
  // halving. Writers call it; it returns whether it aged.
  bool AgeIfDue() noexcept {
    if (additions_.load(std::memory_order_relaxed) < sample_) return false;
    for (std::size_t i = 0; i < kRows * width_; ++i) {
      const std::uint8_t c = counters_[i].load(std::memory_order_relaxed);
      counters_[i].store(static_cast<std::uint8_t>(c / 2), std::memory_order_relaxed);
    }
    additions_.store(0, std::memory_order_relaxed);
    return true;
  }

  std::size_t width() const noexcept { return width_; }
  std::size_t sample() const noexcept { return sample_; }
  // Accesses recorded since the last halving (saturated keys are not counted).
  std::size_t additions() const noexcept { return additions_.load(std::memory_order_relaxed); }
  std::size_t bytes() const noexcept { return kRows * width_; }

 private:
  static constexpr std::size_t kBlock = 64;                 // bytes: one cache line
  static constexpr std::size_t kRowInBlock = kBlock / kRows;  // 16 counters of each row

  // Row `row`'s counter for `hash`: the key's block, picked by one mix of the
  // hash, then one of the row's 16 counters in it, picked by 4 bits of another
  // mix that differ per row, so two keys that share a block and collide in one
  // row rarely collide in another.
  std::size_t Slot(std::uint64_t hash, unsigned row) const noexcept {
    std::uint64_t h = (hash ^ (hash >> 29)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
    std::uint64_t g = (hash ^ (hash >> 31)) * 0xC2B2AE3D27D4EB4Full;
    g ^= g >> 29;
    const std::size_t block = static_cast<std::size_t>(h) & block_mask_;
    const std::size_t counter = static_cast<std::size_t>(g >> (8 * row)) & (kRowInBlock - 1);
    return block * kBlock + row * kRowInBlock + counter;
  }

  const std::size_t width_;       // counters per row, a power of two
  const std::size_t sample_;      // recorded accesses between two halvings
  const std::size_t block_mask_;  // blocks - 1, a power of two less one
  struct AlignedDelete {
    void operator()(std::atomic<std::uint8_t>* counters) const noexcept {
      ::operator delete[](counters, std::align_val_t{kBlock});
    }
  };
  std::unique_ptr<std::atomic<std::uint8_t>[], AlignedDelete> counters_;  // 64-byte aligned
  // Written by every Record that bumps a counter, from any reading thread: on a
  // cache line of its own, so those writes do not take the line of the fields
  // above (read by every Record and Estimate) from the other cores. Not sampled:
  // a key whose counters are saturated (15) writes nothing, so a hot key writes
  // it at most 15 times per aging period; the writes that remain are cold keys'.
  alignas(64) std::atomic<std::size_t> additions_{0};
};

}  // namespace cachet::memory
