// FrequencySketch: how often each key was asked for lately, approximately: a
// count-min sketch with aging, for the memory store's TinyLFU admission.
//
// Four rows of saturating counters (0..15, one byte each); a key bumps one
// counter per row, picked by a different mix of its hash, and its estimate is
// the smallest of the four (collisions only ever add). A key's four counters
// lie in one 64-byte block (16 counters of each row), picked by its hash, so
// recording or estimating a key touches one cache line, not four. Only the
// smallest counters are bumped (conservative update), which keeps collisions
// from inflating the others. After `sample` bumps every counter is halved, so
// the sketch forgets what was popular long ago and a once-hot key loses its weight.
//
// The sketch starts small and grows with the shard's items (Grow), up to the
// width its budget allows, so a shard holding few items keeps its counters in
// the processor's caches: a read's bump then costs a cache hit, not a miss.
// Growing doubles the blocks and copies each into both of its successors, so
// every key keeps its estimate. The old counters are retired to the writing
// thread's limbo, so readers that still hold them (inside a ReadEpochs section) are safe.
// Header-only; it never frees what a reader may hold.
//
// Lock-free readers bump the sketch beside the shard's writer, so counters are
// relaxed atomics: a lost or doubled bump only blurs an estimate that is blurred
// by design; the count of accesses is a relaxed load and store, not an atomic
// add, for the same reason (a lost addition only delays aging a little). Aging
// and growing are done by the writer (under the shard's lock), never by readers.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "limbo.h"

namespace cachet::memory {

class FrequencySketch {
 public:
  static constexpr unsigned kRows = 4;
  static constexpr std::uint8_t kMaxCount = 15;

  // Room to tell apart about `keys` keys (rounded up to a power of two, at least
  // 64), growing up to `most_keys` (no less than `keys`).
  explicit FrequencySketch(std::size_t keys, std::size_t most_keys = 0)
      : most_width_(std::bit_ceil(most_keys < keys ? Width(keys) : Width(most_keys))),
        counters_(Counters::Create(Width(keys))) {
    if (counters_.load() == nullptr) throw std::bad_alloc();
  }
  ~FrequencySketch() { delete counters_.load(); }
  FrequencySketch(const FrequencySketch&) = delete;
  FrequencySketch& operator=(const FrequencySketch&) = delete;

  // Counts one access to the key with this hash. A reader calls it inside a
  // ReadEpochs section (the counters may be retired meanwhile).
  void Record(std::uint64_t hash) noexcept {
    Counters& c = *counters_.load();
    std::size_t slots[kRows];
    std::uint8_t counts[kRows];
    std::uint8_t smallest = kMaxCount;
    for (unsigned row = 0; row < kRows; ++row) {
      slots[row] = c.Slot(hash, row);
      counts[row] = c.bytes[slots[row]].load(std::memory_order_relaxed);
      if (counts[row] < smallest) smallest = counts[row];
    }
    if (smallest == kMaxCount) return;  // saturated: nothing to write
    for (unsigned row = 0; row < kRows; ++row) {
      if (counts[row] == smallest) {
        c.bytes[slots[row]].store(static_cast<std::uint8_t>(smallest + 1),
                                  std::memory_order_relaxed);
      }
    }
    c.additions.store(c.additions.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // The estimated accesses to the key with this hash since it was last halved.
  std::uint8_t Estimate(std::uint64_t hash) const noexcept {
    const Counters& c = *counters_.load();
    std::uint8_t smallest = kMaxCount;
    for (unsigned row = 0; row < kRows; ++row) {
      const std::uint8_t count = c.bytes[c.Slot(hash, row)].load(std::memory_order_relaxed);
      if (count < smallest) smallest = count;
    }
    return smallest;
  }

  // Halves every counter once `sample` accesses were recorded since the last
  // halving. Writers call it; it returns whether it aged.
  bool AgeIfDue() noexcept {
    Counters& c = *counters_.load(std::memory_order_relaxed);
    if (c.additions.load(std::memory_order_relaxed) < c.sample()) return false;
    for (std::size_t i = 0; i < kRows * c.width; ++i) {
      const std::uint8_t count = c.bytes[i].load(std::memory_order_relaxed);
      c.bytes[i].store(static_cast<std::uint8_t>(count / 2), std::memory_order_relaxed);
    }
    c.additions.store(0, std::memory_order_relaxed);
    return true;
  }

  // Widens the sketch to tell apart about `keys` keys (within its most), keeping
  // every estimate. A writer calls it, and retires the old counters it returns
  // (readers may hold them) with `bytes`; nullptr when it is wide enough already
  // or memory ran out.
  RetiredArray* Grow(std::size_t keys) noexcept {
    Counters* old = counters_.load(std::memory_order_relaxed);
    std::size_t width = old->width;
    while (width < keys && width < most_width_) width *= 2;
    if (width == old->width) return nullptr;
    Counters* wider = Counters::Create(width);
    if (wider == nullptr) return nullptr;
    // Block b of the wider sketch is where the keys of block b mod (old blocks)
    // land now: it starts as a copy of that block.
    for (std::size_t block = 0; block <= wider->block_mask; ++block) {
      const std::size_t from = (block & old->block_mask) * kBlock;
      for (std::size_t i = 0; i < kBlock; ++i) {
        wider->bytes[block * kBlock + i].store(old->bytes[from + i].load(std::memory_order_relaxed),
                                               std::memory_order_relaxed);
      }
    }
    wider->additions.store(old->additions.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
    counters_.store(wider);
    return old;
  }

  std::size_t width() const noexcept { return counters_.load()->width; }
  std::size_t sample() const noexcept { return counters_.load()->sample(); }
  // Accesses recorded since the last halving (saturated keys are not counted).
  std::size_t additions() const noexcept {
    return counters_.load()->additions.load(std::memory_order_relaxed);
  }
  std::size_t bytes() const noexcept { return kRows * width(); }

 private:
  static constexpr std::size_t kBlock = 64;                 // bytes: one cache line
  static constexpr std::size_t kRowInBlock = kBlock / kRows;  // 16 counters of each row

  static std::size_t Width(std::size_t keys) noexcept {
    return std::bit_ceil(keys < 64 ? std::size_t{64} : keys);
  }

  struct AlignedDelete {
    void operator()(std::atomic<std::uint8_t>* bytes) const noexcept {
      ::operator delete[](bytes, std::align_val_t{kBlock});
    }
  };

  // One generation of counters: the sketch swaps them whole when it grows.
  struct Counters final : RetiredArray {
    std::size_t width = 0;       // counters per row, a power of two
    std::size_t block_mask = 0;  // blocks - 1
    std::unique_ptr<std::atomic<std::uint8_t>[], AlignedDelete> bytes;  // 64-byte aligned
    // Written by every Record that bumps a counter, from any reading thread: on a
    // cache line of its own, so those writes do not take the line of the fields
    // above (read by every Record and Estimate) from the other cores. A key whose
    // counters are saturated (15) writes nothing, so a hot key writes it at most
    // 15 times per aging period; the writes that remain are cold keys'.
    alignas(64) std::atomic<std::size_t> additions{0};

    // Recorded accesses between two halvings.
    std::size_t sample() const noexcept { return 10 * width; }

    // nullptr when memory runs out.
    static Counters* Create(std::size_t width) noexcept {
      auto* c = new (std::nothrow) Counters;
      if (c == nullptr) return nullptr;
      c->bytes.reset(new (std::align_val_t{kBlock}, std::nothrow)
                         std::atomic<std::uint8_t>[kRows * width]());
      if (c->bytes == nullptr) {
        delete c;
        return nullptr;
      }
      c->width = width;
      c->block_mask = kRows * width / kBlock - 1;
      return c;
    }

    // Row `row`'s counter for `hash`: the key's block, picked by one mix of the
    // hash, then one of the row's 16 counters in it, picked by 4 bits of another
    // mix that differ per row, so two keys that share a block and collide in one
    // row rarely collide in another.
    std::size_t Slot(std::uint64_t hash, unsigned row) const noexcept {
      std::uint64_t h = (hash ^ (hash >> 29)) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 32;
      std::uint64_t g = (hash ^ (hash >> 31)) * 0xC2B2AE3D27D4EB4Full;
      g ^= g >> 29;
      const std::size_t block = static_cast<std::size_t>(h) & block_mask;
      const std::size_t counter = static_cast<std::size_t>(g >> (8 * row)) & (kRowInBlock - 1);
      return block * kBlock + row * kRowInBlock + counter;
    }
  };

  static_assert(alignof(Counters) == 64 && sizeof(Counters) == 128,
                "the access count starts a cache line of its own");

  const std::size_t most_width_;  // the width Grow stops at
  std::atomic<Counters*> counters_;
};

}  // namespace cachet::memory
