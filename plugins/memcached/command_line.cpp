// CommandLine: decimals, values and the pieces of a stack-built request.
#include "command_line.h"

namespace cachet::memcached {

void CommandLine::AppendDecimal(std::uint64_t value) noexcept {
  // One digit (a delta of 1, flags and exptime 0, the usual case) is one byte.
  if (value < 10) {
    Append(static_cast<char>('0' + value));
    return;
  }
  // Digits are produced backwards into a small array, then appended in order.
  char digits[20];
  std::size_t count = 0;
  do {
    digits[sizeof(digits) - 1 - count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  Append(std::string_view(digits + sizeof(digits) - count, count));
}

void CommandLine::AppendValue(std::string_view value) noexcept {
  if (value.size() < kCopyLimit) {
    Append(value);
    return;
  }
  if (!reference_.empty()) {
    overflowed_ = true;
    return;
  }
  reference_ = value;
  reference_offset_ = size_;
}

int CommandLine::ReferencedIovecs(iovec (&out)[3]) noexcept {
  out[0] = {bytes_, reference_offset_};
  out[1] = {const_cast<char*>(reference_.data()), reference_.size()};
  out[2] = {bytes_ + reference_offset_, size_ - reference_offset_};
  // A value at the very end leaves an empty third piece, which is left out.
  return out[2].iov_len == 0 ? 2 : 3;
}

}  // namespace cachet::memcached
