// Limbo: the blocks one shard has unlinked, kept until no reader can hold them.
//
// Readers of the memory store take no lock (see ReadEpochs), so a writer that
// unlinks an entry, or a bucket array the table outgrew, cannot free it at once:
// a reader may be looking at it. The writer retires it here instead, tagged with
// the epoch of the moment it was unlinked, and the limbo frees it once the epoch
// is two further on. Blocks wait in the order they were retired, so the oldest are
// always the first that may go. Every few retirements (or bytes' worth) the limbo
// tries to advance the epoch itself, so memory comes back while writes go on.
// Bytes waiting here are not charged to the shard's budget: they are on their way
// out. Not synchronized: the shard's lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "read_epochs.h"

namespace cachet::memory {

// What a retirable block carries for the limbo; MemoryEntry and BucketArray start with it.
struct Retirable {
  using Destroyer = void (*)(Retirable*) noexcept;

  Retirable* retired_next = nullptr;
  std::uint64_t retired_in = 0;  // the epoch when it was unlinked
  std::size_t retired_bytes = 0;
  Destroyer destroy = nullptr;
};

class Limbo {
 public:
  explicit Limbo(ReadEpochs& epochs) noexcept : epochs_(epochs) {}
  // Frees everything: a limbo ends with its store, when no reader is left.
  ~Limbo();
  Limbo(const Limbo&) = delete;
  Limbo& operator=(const Limbo&) = delete;

  // Takes an unlinked block of `bytes` bytes, to be freed with `destroy`.
  void Retire(Retirable* block, std::size_t bytes, Retirable::Destroyer destroy) noexcept;
  // Frees the blocks no reader can hold any more.
  void FreeReclaimable() noexcept;

  std::size_t blocks() const noexcept { return blocks_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  // An attempt to advance the epoch after this many retirements or bytes.
  static constexpr std::size_t kAdvanceEveryBlocks = 8;
  static constexpr std::size_t kAdvanceEveryBytes = std::size_t{256} << 10;

  void FreeOldest() noexcept;

  ReadEpochs& epochs_;
  Retirable* oldest_ = nullptr;
  Retirable* newest_ = nullptr;
  std::size_t blocks_ = 0;
  std::size_t bytes_ = 0;
  std::size_t blocks_since_advance_ = 0;
  std::size_t bytes_since_advance_ = 0;
};

}  // namespace cachet::memory
