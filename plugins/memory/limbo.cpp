// Limbo: retiring unlinked blocks and freeing them once the epoch allows.
#include "limbo.h"

namespace cachet::memory {

Limbo::~Limbo() {
  while (oldest_ != nullptr) FreeOldest();
}

void Limbo::Retire(Retirable* block, std::size_t bytes, Retirable::Destroyer destroy) noexcept {
  // The epoch is read after the block was unlinked (the unlinking stores and this
  // load are sequentially consistent), which the reclamation rule requires.
  block->retired_in = epochs_.current();
  block->retired_bytes = bytes;
  block->destroy = destroy;
  block->retired_next = nullptr;
  if (newest_ == nullptr) {
    oldest_ = block;
  } else {
    newest_->retired_next = block;
  }
  newest_ = block;
  ++blocks_;
  bytes_ += bytes;
  ++blocks_since_advance_;
  bytes_since_advance_ += bytes;
  if (blocks_since_advance_ >= kAdvanceEveryBlocks || bytes_since_advance_ >= kAdvanceEveryBytes) {
    blocks_since_advance_ = 0;
    bytes_since_advance_ = 0;
    epochs_.TryAdvance();
  }
  FreeReclaimable();
}

void Limbo::FreeReclaimable() noexcept {
  while (oldest_ != nullptr && epochs_.Reclaimable(oldest_->retired_in)) FreeOldest();
}

void Limbo::FreeOldest() noexcept {
  Retirable* block = oldest_;
  oldest_ = block->retired_next;
  if (oldest_ == nullptr) newest_ = nullptr;
  --blocks_;
  bytes_ -= block->retired_bytes;
  block->destroy(block);
}

}  // namespace cachet::memory
