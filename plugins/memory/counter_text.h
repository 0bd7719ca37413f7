// Counter values as memcached keeps them: unsigned 64-bit decimal text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cachet::memory {

// The most digits a 64-bit counter has.
inline constexpr std::size_t kCounterDigits = 20;

// True when `text` is 1 to 20 decimal digits whose value fits in 64 bits.
bool ParseCounter(std::string_view text, std::uint64_t* value) noexcept;

// The decimal text of `value`, written into `buffer`.
std::string_view FormatCounter(std::uint64_t value, char (&buffer)[kCounterDigits]) noexcept;

// memcached's arithmetic: incr wraps around at 2^64, decr stops at 0.
inline std::uint64_t ApplyDelta(std::uint64_t current, std::uint64_t delta, bool increment) {
  if (increment) return current + delta;  // unsigned arithmetic wraps by definition
  return delta > current ? 0 : current - delta;
}

}  // namespace cachet::memory
