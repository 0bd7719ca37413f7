// CAS tokens for Redis values: a 64-bit fingerprint of the value's bytes.
//
// The token is the first 8 bytes of the value's SHA-1 read as a big-endian
// number (the first 16 hex digits of redis.sha1hex), with 0 mapped to 1 so that
// a real token is never 0 ("no token" in cachet). The cas script (lua_scripts.h)
// computes the same on the server, so any string has a token, including one set
// by another client, and values stay raw. Identical bytes have identical
// tokens: see the ABA note in docs/redis.md.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cachet::redis {

std::uint64_t CasTokenOf(std::string_view value);

// The token as the cas script receives it: 16 lowercase hex digits, kept inline
// (a std::string of 16 characters would allocate on every cas).
class CasTokenText {
 public:
  explicit CasTokenText(std::uint64_t token);
  std::string_view view() const noexcept { return {digits_.data(), digits_.size()}; }

 private:
  std::array<char, 16> digits_;
};

}  // namespace cachet::redis
