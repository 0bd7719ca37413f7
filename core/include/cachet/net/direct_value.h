// DirectValue: a large value's bytes received from the socket straight into the
// string that will hold them, instead of into the connection's ReadBuffer and
// then copied out.
//
// A batch reader that has parsed a value's header ("VALUE k 0 102400",
// "VA 102400", "$102400") while most of its data block is still to come calls
// Start(): the destination is sized (a string that already has the size, as a
// reused buffer of the same value does, is not touched), the bytes already
// buffered are moved in, and the ReadBuffer is told to receive the rest into
// the destination. Each later Consume() of the reader calls Continue() until the
// data and the "\r\n" after it have arrived. The parsers are not involved: they
// keep checking whole replies, byte by byte. Not thread-safe: one per reader.
#pragma once

#include <cstddef>
#include <string>

#include "cachet/export.h"
#include "cachet/net/read_buffer.h"
#include "cachet/status.h"

namespace cachet::net {

class CACHET_EXPORT DirectValue {
 public:
  // Reading direct pays from this many bytes still to come; below it, copying
  // them out of the buffer costs less than the receives it would take.
  static constexpr std::size_t kMinimumOwed = 16 * 1024;

  // True when a value of `size` bytes whose data starts at `offset` in
  // `buffer` has at least kMinimumOwed bytes still to come.
  static bool Worthwhile(const ReadBuffer& buffer, std::size_t offset, std::size_t size) noexcept;

  // Consumes the header (`offset` bytes) and the data already buffered, and has
  // the rest received into `*dest`, resized to `size`. REQUIRES: offset <=
  // buffer.size(); `dest` outlives the exchange (or the connection is closed).
  void Start(ReadBuffer& buffer, std::size_t offset, std::size_t size, std::string* dest);

  bool active() const noexcept { return dest_ != nullptr; }

  // While active(): ok and *done false until every byte and the "\r\n" after
  // them arrived, then ok and *done true (no longer active); protocol_error
  // when the data is not followed by "\r\n".
  Status Continue(ReadBuffer& buffer, bool* done);

  // Forgets a value left unfinished (an exchange that failed in its middle).
  void Reset() noexcept { dest_ = nullptr; }

 private:
  std::string* dest_ = nullptr;
};

}  // namespace cachet::net
