// BoundedOutput: the growing output buffer of a streaming decompressor.
//
// Decompressors write into free_begin()/free_size(), Commit() what they wrote and
// call Grow() when the buffer is full. The buffer never grows past max_output + 1
// bytes: one byte more than allowed is enough to know the output is too large,
// without ever allocating what a hostile header claims.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>

namespace cachet {

class BoundedOutput {
 public:
  // `size_hint` is the first allocation (capped by the bound); the caller makes
  // it from the input size, never from a size the input merely declares.
  BoundedOutput(std::string* out, std::size_t max_output, std::size_t size_hint)
      : out_(out),
        max_output_(max_output),
        limit_(max_output == std::numeric_limits<std::size_t>::max() ? max_output
                                                                     : max_output + 1) {
    out_->resize(std::min(limit_, std::max(size_hint, kMinimumSize)));
  }

  char* free_begin() { return out_->data() + produced_; }
  std::size_t free_size() const { return out_->size() - produced_; }
  void Commit(std::size_t n) { produced_ += n; }

  // Doubles the buffer, up to the bound. False when it already holds the bound.
  bool Grow() {
    if (out_->size() >= limit_) return false;
    const std::size_t doubled = out_->size() > limit_ / 2 ? limit_ : out_->size() * 2;
    out_->resize(doubled);
    return true;
  }

  bool over_limit() const { return produced_ > max_output_; }

  // Cuts the string to what was produced.
  void Finish() { out_->resize(produced_); }

 private:
  static constexpr std::size_t kMinimumSize = 256;

  std::string* out_;
  std::size_t max_output_;
  std::size_t limit_;
  std::size_t produced_ = 0;
};

}  // namespace cachet
