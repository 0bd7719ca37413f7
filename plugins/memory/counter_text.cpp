// Decimal text for the memory store's counters.
#include "counter_text.h"

#include <charconv>

namespace cachet::memory {

bool ParseCounter(std::string_view text, std::uint64_t* value) noexcept {
  // from_chars would accept a value with trailing junk; insist on the whole text.
  if (text.empty() || text.size() > kCounterDigits) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value, 10);
  return ec == std::errc() && ptr == end;
}

std::string_view FormatCounter(std::uint64_t value, char (&buffer)[kCounterDigits]) noexcept {
  // 20 characters always hold a 64-bit value, so to_chars cannot fail here.
  auto [ptr, ec] = std::to_chars(buffer, buffer + kCounterDigits, value);
  (void)ec;
  return std::string_view(buffer, static_cast<std::size_t>(ptr - buffer));
}

}  // namespace cachet::memory
