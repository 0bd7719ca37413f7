// RequestBuffer: the bytes of one pipelined request, ready for a gathered write.
//
// Protocol encoders append command text, and values either copied (small ones,
// fewer pieces to send) or referenced in place (large ones, no copy). Iovecs()
// then lists the pieces in order for Connection::WriteSome / FanOut. Referenced
// values are borrowed: they must outlive the write. Clear() keeps the capacity,
// so a buffer reused per thread or per connection stops allocating.
// Not thread-safe.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/export.h"

namespace cachet::net {

class CACHET_EXPORT RequestBuffer {
 public:
  // Values at least this long are referenced instead of copied.
  static constexpr std::size_t kReferenceThreshold = 2048;

  void Append(std::string_view text) { text_.append(text); }
  void Append(char c) { text_.push_back(c); }
  void AppendDecimal(std::uint64_t value);
  // Copies a small value, references a large one.
  void AppendValue(std::string_view value);

  // Every byte appended since Clear(), in order.
  void Iovecs(std::vector<iovec>* out) const;
  std::size_t size() const noexcept;
  bool empty() const noexcept { return size() == 0; }
  void Clear() noexcept;

  // The text part only (tests): referenced values are not included.
  std::string_view text() const noexcept { return text_; }

 private:
  // A referenced value, placed after text_[0, text_offset).
  struct Reference {
    std::size_t text_offset;
    std::string_view value;
  };
  std::string text_;
  std::vector<Reference> references_;
};

}  // namespace cachet::net
