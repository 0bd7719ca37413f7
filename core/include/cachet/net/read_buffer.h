// ReadBuffer: the bytes a connection received and a parser has not consumed yet.
//
// One growable buffer per connection, reused for every reply so steady-state
// reads allocate nothing. Parsers see data() and report how much they consumed;
// when space runs out, a small unread tail is moved to the front, and a large
// one (a big reply arriving in pieces) makes the buffer grow instead, so big
// replies are not moved over and over. The buffer keeps its largest size. Not
// thread-safe: it belongs to one Connection.
#pragma once

#include <cstddef>
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
  void Consume(std::size_t n) noexcept;

  // A writable region of at least `min_free` bytes after the data; call
  // Commit() with what was actually written into it.
  char* PrepareWrite(std::size_t min_free);
  std::size_t writable() const noexcept { return storage_.size() - end_; }
  void Commit(std::size_t n) noexcept { end_ += n; }

  void Clear() noexcept { begin_ = end_ = 0; }

 private:
  // Reallocates to `capacity` bytes with the unread bytes at the front.
  void Grow(std::size_t capacity);

  std::string storage_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace cachet::net
