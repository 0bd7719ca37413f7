// RequestBuffer: copied text with referenced large values, flattened to iovecs.
#include "cachet/net/request_buffer.h"

#include <charconv>

namespace cachet::net {

void RequestBuffer::AppendDecimal(std::uint64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  (void)ec;  // 24 bytes always hold a 64-bit number.
  text_.append(digits, end);
}

void RequestBuffer::AppendValue(std::string_view value) {
  if (value.size() < kReferenceThreshold) {
    text_.append(value);
  } else {
    references_.push_back({text_.size(), value});
  }
}

void RequestBuffer::Iovecs(std::vector<iovec>* out) const {
  out->clear();
  std::size_t from = 0;
  auto add = [out](const char* data, std::size_t size) {
    if (size > 0) out->push_back({const_cast<char*>(data), size});
  };
  for (const Reference& r : references_) {
    add(text_.data() + from, r.text_offset - from);
    add(r.value.data(), r.value.size());
    from = r.text_offset;
  }
  add(text_.data() + from, text_.size() - from);
}

std::size_t RequestBuffer::size() const noexcept {
  std::size_t total = text_.size();
  for (const Reference& r : references_) total += r.value.size();
  return total;
}

void RequestBuffer::Clear() noexcept {
  text_.clear();
  references_.clear();
}

}  // namespace cachet::net
