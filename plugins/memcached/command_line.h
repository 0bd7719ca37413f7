// CommandLine: the request of one single operation, built on the stack.
//
// A single get, set or incr sends one command line (and a store's value), a few
// hundred bytes at most. Building it in a fixed array instead of the batch's
// growable RequestBuffer costs a copy per piece and nothing else: no capacity
// checks of a std::string, no heap, no per-thread scratch to look up. It speaks
// the same append interface as net::RequestBuffer, so the text and meta encoders
// (text_request.h, meta_request.h) write either. A value too large to copy is
// referenced in place (it must outlive the send), like RequestBuffer does.
//
// Anything that would not fit marks the line overflowed() instead of being cut;
// the caller then takes the batch path. Not thread-safe; one per call.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace cachet::memcached {

class CommandLine {
 public:
  // Room for the longest command line (a 250-byte key, or its base64 form, and
  // every number at its widest take under 400 bytes) plus a copied value.
  static constexpr std::size_t kLineRoom = 512;
  // Values shorter than this are copied after the line; longer ones referenced.
  static constexpr std::size_t kCopyLimit = 2048;
  static constexpr std::size_t kCapacity = kLineRoom + kCopyLimit + 2;

  void Append(std::string_view text) noexcept {
    if (text.size() > kCapacity - size_) {
      overflowed_ = true;
      return;
    }
    CopyShort(bytes_ + size_, text.data(), text.size());
    size_ += text.size();
  }
  void Append(char c) noexcept {
    if (size_ == kCapacity) {
      overflowed_ = true;
      return;
    }
    bytes_[size_++] = c;
  }
  void AppendDecimal(std::uint64_t value) noexcept;
  // Copies a value shorter than kCopyLimit, references a longer one (only one
  // value per line: a second reference overflows).
  void AppendValue(std::string_view value) noexcept;

  bool overflowed() const noexcept { return overflowed_; }

  // The request as up to three pieces: the text before a referenced value, the
  // value, the text after it. Returns how many pieces. Inline: a single
  // command's line is nearly always the one piece.
  int Iovecs(iovec (&out)[3]) noexcept {
    if (reference_.empty()) {
      out[0] = {bytes_, size_};
      return 1;
    }
    return ReferencedIovecs(out);
  }

  // The text part only (tests): a referenced value is not included.
  std::string_view text() const noexcept { return std::string_view(bytes_, size_); }

 private:
  // Iovecs() of a line with a referenced value.
  int ReferencedIovecs(iovec (&out)[3]) noexcept;

  // memcpy, but a piece of 4 to 16 bytes (a key, most often) is copied inline
  // in two overlapping words rather than through a library call.
  static void CopyShort(char* to, const char* from, std::size_t size) noexcept {
    if (size >= 8 && size <= 16) {
      CopyWord<std::uint64_t>(to, from);
      CopyWord<std::uint64_t>(to + size - 8, from + size - 8);
    } else if (size >= 4 && size < 8) {
      CopyWord<std::uint32_t>(to, from);
      CopyWord<std::uint32_t>(to + size - 4, from + size - 4);
    } else {
      std::memcpy(to, from, size);
    }
  }
  template <class Word>
  static void CopyWord(char* to, const char* from) noexcept {
    Word word;
    std::memcpy(&word, from, sizeof(word));
    std::memcpy(to, &word, sizeof(word));
  }

  char bytes_[kCapacity];
  std::size_t size_ = 0;
  std::string_view reference_;        // a referenced value, if any
  std::size_t reference_offset_ = 0;  // where in bytes_ it belongs
  bool overflowed_ = false;
};

}  // namespace cachet::memcached
