// Byte-string helpers for the Tokyo Tyrant protocol tests: requests and replies
// are written as hex ("c8 10 00000001") so each test reads like the wire.
#pragma once

#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cachet::test {

// Bytes from hex digits; spaces are ignored so fields can be grouped.
inline std::string Hex(std::string_view hex) {
  std::string out;
  int pending = -1;
  for (char c : hex) {
    if (c == ' ') continue;
    const int digit = std::isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (digit < 0 || digit > 15) throw std::invalid_argument("bad hex digit in test data");
    if (pending < 0) {
      pending = digit;
    } else {
      out.push_back(static_cast<char>(pending * 16 + digit));
      pending = -1;
    }
  }
  if (pending >= 0) throw std::invalid_argument("odd number of hex digits in test data");
  return out;
}

}  // namespace cachet::test
