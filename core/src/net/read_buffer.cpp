// ReadBuffer: compaction and growth of a connection's receive buffer.
#include "cachet/net/read_buffer.h"

#include <algorithm>
#include <cstring>

namespace cachet::net {

namespace {

// Unread bytes are moved to the front only while they are at most this
// fraction of the buffer; more than that, and the buffer grows instead.
constexpr std::size_t kCompactFraction = 8;

}  // namespace

void ReadBuffer::CommitDirect(std::size_t n) noexcept {
  direct_ += n;
  owed_ -= n;
  // The next reply's header follows the value: a short receive fetches it (and
  // the start of its data), so a large value after it can go direct too.
  if (owed_ == 0) {
    direct_ = nullptr;
    after_direct_ = true;
  }
}

void ReadBuffer::ReceiveInto(char* dest, std::size_t size) noexcept {
  direct_ = size > 0 ? dest : nullptr;
  owed_ = size;
  after_direct_ = false;
}

char* ReadBuffer::MakeRoom(std::size_t min_free) {
  if (owed_ > 0) return direct_;
  if (storage_.size() - end_ >= min_free) return storage_.data() + end_;
  const std::size_t unread = size();
  // Moving a few unread bytes to the front is cheap. A large reply arriving in
  // pieces is different: it would be moved again every time the space ran out,
  // so the buffer grows instead, which makes those moves rare (and it keeps
  // its size for the next large reply).
  if (begin_ > 0 && unread <= storage_.size() / kCompactFraction &&
      storage_.size() - unread >= min_free) {
    std::memmove(storage_.data(), storage_.data() + begin_, unread);
    begin_ = 0;
    end_ = unread;
    return storage_.data() + end_;
  }
  // Doubling, so a large value costs a logarithmic number of growths.
  Grow(std::max(unread + min_free, storage_.size() * 2));
  return storage_.data() + end_;
}

void ReadBuffer::Grow(std::size_t capacity) {
  std::string bigger(capacity, '\0');
  // Only the unread bytes are worth keeping.
  if (!empty()) std::memcpy(bigger.data(), storage_.data() + begin_, size());
  end_ = size();
  begin_ = 0;
  storage_.swap(bigger);
}

}  // namespace cachet::net
