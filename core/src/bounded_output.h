// BoundedOutput: the growing output buffer of a streaming decompressor.
//
// Decompressors write into free_begin()/free_size(), Commit() what they wrote and
// call Grow() when the buffer is full. The buffer never grows past max_output + 1
// bytes: one byte more than allowed is enough to know the output is too large,
// without ever allocating what a hostile header claims. Each allocation is of
// exactly the size asked for, never a string's usual doubling past it.
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
    Resize(std::min(limit_, std::max(size_hint, kMinimumSize)));
  }

  char* free_begin() { return out_->data() + produced_; }
  std::size_t free_size() const { return out_->size() - produced_; }
  void Commit(std::size_t n) { produced_ += n; }

  // Doubles the buffer, up to the bound. False when it already holds the bound.
  bool Grow() {
    if (out_->size() >= limit_) return false;
    Resize(out_->size() > limit_ / 2 ? limit_ : out_->size() * 2);
    return true;
  }

  bool over_limit() const { return produced_ > max_output_; }

  // Cuts the string to what was produced.
  void Finish() { out_->resize(produced_); }

 private:
  static constexpr std::size_t kMinimumSize = 256;

  // Resizes the output to `size` bytes, keeping what was produced. Growing a
  // std::string past its capacity may allocate up to twice the size asked for
  // (libstdc++ at least doubles), which near the bound would be twice the bound:
  // a larger buffer is made at exactly `size` and the output moved into it.
  void Resize(std::size_t size) {
    if (size <= out_->capacity()) {
      out_->resize(size);
      return;
    }
    std::string larger;
    larger.reserve(size);
    larger.append(out_->data(), produced_);
    larger.resize(size);
    out_->swap(larger);
  }

  std::string* out_;
  std::size_t max_output_;
  std::size_t limit_;
  std::size_t produced_ = 0;
};

}  // namespace cachet
