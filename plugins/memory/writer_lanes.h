// WriterLanes: each writing thread's limbo, so what a write retires and the
// spare it writes into stay with the thread that wrote them.
//
// Every write unlinks the entry it replaces and builds the new one in a spare
// (Limbo). Per thread, a write's spare is one this thread freed a few writes
// earlier, still in its caches; no two writers share one, and however many
// shards there are, each limbo sees every retirement of its thread.
//
// A thread writes through the lane of its ReadEpochs slot: its own if it is
// numbered below kSlots, used with no lock of its own, as a write holds its
// shard's lock and only the owner writes through it; threads numbered beyond
// share the last lane, under its lock (lock order: a shard's, then that one).
// So a lane is only ever used under some shard's lock, and Reclaim and bytes(),
// which reach every lane, need the caller to hold every shard's lock.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "limbo.h"
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

   private:
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

 private:
  struct alignas(64) Lane {
    Lane(ReadEpochs& epochs, std::size_t spare_limit, bool shared_lane) noexcept
        : shared(shared_lane), limbo(epochs, spare_limit) {}

    const bool shared;  // the lane of threads numbered kSlots and beyond
    WriteLock lock;     // taken only when shared
    Limbo limbo;
  };

  std::vector<std::unique_ptr<Lane>> lanes_;  // one per ReadEpochs slot, the shared one last
};

}  // namespace cachet::memory
