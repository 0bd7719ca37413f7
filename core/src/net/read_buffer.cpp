// ReadBuffer: compaction and growth of a connection's receive buffer.
#include "cachet/net/read_buffer.h"

#include <algorithm>
#include <cstring>

namespace cachet::net {

void ReadBuffer::Consume(std::size_t n) noexcept {
  begin_ += n;
  // An emptied buffer restarts at the front, so the common case never moves bytes.
  if (begin_ == end_) begin_ = end_ = 0;
}

char* ReadBuffer::PrepareWrite(std::size_t min_free) {
  if (storage_.size() - end_ < min_free && begin_ > 0) {
    std::memmove(storage_.data(), storage_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (storage_.size() - end_ < min_free) {
    // Growth doubles, so a large value costs a logarithmic number of resizes.
    std::size_t wanted = std::max(end_ + min_free, storage_.size() * 2);
    storage_.resize(wanted);
  }
  return storage_.data() + end_;
}

}  // namespace cachet::net
