// WriterLanes: the lanes, and reclaiming what every lane holds.
#include "writer_lanes.h"

namespace cachet::memory {

WriterLanes::WriterLanes(ReadEpochs& epochs, std::size_t spare_limit) {
  lanes_.reserve(ReadEpochs::kSlots + 1);
  for (std::size_t i = 0; i <= ReadEpochs::kSlots; ++i) {
    lanes_.push_back(
        std::make_unique<Lane>(epochs, spare_limit, i == ReadEpochs::kSharedSlot, cas_blocks_));
  }
}

void WriterLanes::Reclaim(bool keep_spares) noexcept {
  for (auto& lane : lanes_) {
    Held held(*lane);
    held.limbo().Reclaim(keep_spares);
  }
}

std::size_t WriterLanes::bytes() noexcept {
  std::size_t total = 0;
  for (auto& lane : lanes_) {
    Held held(*lane);
    total += held.limbo().bytes();
  }
  return total;
}

RemovedEntries WriterLanes::removed() const noexcept {
  RemovedEntries total;
  for (const auto& lane : lanes_) {
    total += {lane->removed_items.load(std::memory_order_relaxed),
              lane->removed_payload.load(std::memory_order_relaxed)};
  }
  return total;
}

}  // namespace cachet::memory
