// WriterLanes: each writing thread's limbo, so what a write retires and the
// spare it writes into stay with the thread that wrote them.
//
// Every write unlinks the entry it replaces and builds the new one in a spare
// (Limbo). Per thread, a write's spare is one this thread freed a few writes
// earlier, still in its caches; no two writers share one, and however many
// shards there are, each limbo sees every retirement of its thread.
//
// A thread writes through the lane of its ReadEpochs slot, its own while at most
// kSlots threads live; beyond that threads share lanes, so a lane has a lock,
// which stats and flush take too. Lock order: a shard's lock, then a lane's;
// Reclaim and bytes() take the lanes' locks one at a time and no shard's.
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
    explicit Held(Lane& lane) noexcept : lane_(lane) { lane_.lock.lock(); }
    ~Held() { lane_.lock.unlock(); }
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
  void Reclaim(bool keep_spares) noexcept;
  // What waits in every lane, spares included.
  std::size_t bytes() noexcept;

 private:
  struct alignas(64) Lane {
    Lane(ReadEpochs& epochs, std::size_t spare_limit) noexcept : limbo(epochs, spare_limit) {}

    WriteLock lock;
    Limbo limbo;
  };

  std::vector<std::unique_ptr<Lane>> lanes_;  // one per ReadEpochs slot
};

}  // namespace cachet::memory
