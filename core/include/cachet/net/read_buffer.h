// ReadBuffer: the bytes a connection received and a parser has not consumed yet.
//
// One growable buffer per connection, reused for every reply so steady-state
// reads allocate nothing. Parsers see data() and report how much they consumed;
// when space runs out, a small unread tail is moved to the front, and a large
// one (a big reply arriving in pieces) makes the buffer grow instead, so big
// replies are not moved over and over. The buffer keeps its largest size. Not
// thread-safe: it belongs to one Connection.
//
// Direct reads: a reader that knows the next bytes of the stream are a large
// value's data can have them received straight into the value's own string
// (ReceiveInto, see direct_value.h), so they are not copied out of this buffer
// afterwards. Receives then go to that destination until the bytes owed have
// come, and the receive right after one takes only a few bytes (kPeekAfterDirect),
// enough for the next reply's header, so that a stream of large values is read
// mostly direct rather than a buffer-load at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cachet/export.h"

namespace cachet::net {

class CACHET_EXPORT ReadBuffer {
 public:
  // Unconsumed bytes.
  std::string_view data() const noexcept {
    return std::string_view(storage_.data() + begin_, end_ - begin_);
  }
  std::size_t size() const noexcept { return end_ - begin_; }
  bool empty() const noexcept { return begin_ == end_; }

  // Drops `n` bytes from the front. REQUIRES: n <= size().
  void Consume(std::size_t n) noexcept {
    begin_ += n;
    // An emptied buffer restarts at the front, so the common case never moves bytes.
    if (begin_ == end_) begin_ = end_ = 0;
  }

  // A writable region of at least `min_free` bytes after the data; call
  // Commit() with what was actually written into it. While a direct read is
  // owed bytes, the region is the rest of its destination instead. Inline: the
  // usual receive finds the room there already.
  char* PrepareWrite(std::size_t min_free) {
    if (owed_ == 0 && storage_.size() - end_ >= min_free) return storage_.data() + end_;
    return MakeRoom(min_free);
  }
  // Inline, as Consume: every receive calls them.
  std::size_t writable() const noexcept {
    if (owed_ > 0) return owed_;
    const std::size_t free = storage_.size() - end_;
    return after_direct_ && free > kPeekAfterDirect ? kPeekAfterDirect : free;
  }
  void Commit(std::size_t n) noexcept {
    received_ += n;
    after_direct_ = false;
    if (owed_ == 0) {
      end_ += n;
    } else {
      CommitDirect(n);
    }
  }

  // The next `size` bytes received go to `dest`, not into this buffer.
  // REQUIRES: empty(); `dest` holds `size` bytes and outlives the receives (a
  // Clear(), which a connection's Close() makes, forgets it).
  void ReceiveInto(char* dest, std::size_t size) noexcept;
  // Every byte received over the buffer's life (Clear() keeps the count): an
  // exchange that compares it before and after knows whether anything came.
  std::uint64_t received() const noexcept { return received_; }
  // Bytes a direct read still waits for; 0 when none is under way.
  std::size_t owed() const noexcept { return owed_; }

  void Clear() noexcept {
    begin_ = end_ = 0;
    direct_ = nullptr;
    owed_ = 0;
    after_direct_ = false;
  }

  // How much the receive right after a direct read takes at most.
  static constexpr std::size_t kPeekAfterDirect = 4096;

 private:
  // PrepareWrite() when a direct read is owed bytes or the room is short.
  char* MakeRoom(std::size_t min_free);
  // Reallocates to `capacity` bytes with the unread bytes at the front.
  void Grow(std::size_t capacity);
  // Commit() while a direct read is owed bytes.
  void CommitDirect(std::size_t n) noexcept;

  std::string storage_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  char* direct_ = nullptr;     // where a direct read's next bytes go
  std::size_t owed_ = 0;       // how many it still waits for
  bool after_direct_ = false;  // the next receive peeks (kPeekAfterDirect)
  std::uint64_t received_ = 0;
};

}  // namespace cachet::net
