// Decimal text for the memory store's counters.
#include "counter_text.h"

#include <charconv>

namespace cachet::memory {

bool ParseCounter(std::string_view text, std::uint64_t* value) noexcept {
  // from_chars would accept a value with trailing junk; insist on the whole text.
  if (text.empty() || text.size() > 20) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value, 10);
  return ec == std::errc() && ptr == end;
}

void FormatCounter(std::uint64_t value, std::string* out) {
  char digits[20];
  auto [ptr, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  (void)ec;  // 20 characters always hold a 64-bit value
  out->assign(digits, ptr);
}

}  // namespace cachet::memory
