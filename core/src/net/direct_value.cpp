// DirectValue: sizing the destination, moving in what is buffered, and checking
// the "\r\n" that ends the data block.
#include "cachet/net/direct_value.h"

#include <algorithm>
#include <cstring>

namespace cachet::net {

bool DirectValue::Worthwhile(const ReadBuffer& buffer, std::size_t offset,
                             std::size_t size) noexcept {
  const std::size_t buffered = buffer.size() > offset ? buffer.size() - offset : 0;
  return buffered < size && size - buffered >= kMinimumOwed;
}

void DirectValue::Start(ReadBuffer& buffer, std::size_t offset, std::size_t size,
                        std::string* dest) {
  // Growing zero-fills the new bytes; a reused string of this size costs nothing.
  if (dest->size() != size) dest->resize(size);
  const std::size_t buffered = std::min(buffer.size() - offset, size);
  std::memcpy(dest->data(), buffer.data().data() + offset, buffered);
  buffer.Consume(offset + buffered);
  if (buffered < size) buffer.ReceiveInto(dest->data() + buffered, size - buffered);
  dest_ = dest;
}

Status DirectValue::Continue(ReadBuffer& buffer, bool* done) {
  *done = false;
  if (buffer.owed() > 0 || buffer.size() < 2) return Status::OK();
  const std::string_view data = buffer.data();
  if (data[0] != '\r' || data[1] != '\n') {
    dest_ = nullptr;
    return Status::ProtocolError("a value's data block not ended by \\r\\n");
  }
  buffer.Consume(2);
  dest_ = nullptr;
  *done = true;
  return Status::OK();
}

}  // namespace cachet::net
