// Key checks: what may reach memcached's wire as a key.
//
// memcached splits commands on spaces and newlines only, so a key holding a
// space or "\r\n" would run the rest as a command. Every key is checked before a
// byte is sent: at most 250 bytes (namespace included: the key arrives already
// prefixed), no space, no control byte. With binary_keys (meta protocol only) any
// bytes are allowed: the key is sent base64-encoded and the 250-byte limit
// applies to the encoded form, 186 raw bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "cachet/status.h"

namespace cachet::memcached {

inline constexpr std::size_t kMaxKeyLength = 250;

constexpr std::size_t Base64Length(std::size_t raw) { return (raw + 2) / 3 * 4; }

// kInvalidArgument naming the key and its problem. REQUIRES: !KeyIsValid(key).
Status KeyError(std::string_view key, bool binary_keys);

// Whether a text key holds a byte memcached would misread: a space, a control
// byte or DEL.
bool HasForbiddenByte(std::string_view key) noexcept;

namespace key_check_detail {

// Eight bytes at a time, "any byte below 0x21, or equal to 0x7f" (space, the
// control bytes, DEL: what memcached would read as a separator or what could end
// a command line). The classic zero-byte tests: for bytes under 0x80,
// (x - n) & ~x has the high bit set exactly when x < n; bytes of 0x80 and up,
// which memcached accepts, are masked out by ~x. Either test is exact about
// whether some byte matches (not about which), so the words of a key are
// tested together: their results are or-ed and looked at once.
inline constexpr std::uint64_t kOnes = 0x0101010101010101;
inline constexpr std::uint64_t kHighBits = 0x8080808080808080;

// Nonzero when some byte of `x` is forbidden.
inline std::uint64_t ForbiddenBits(std::uint64_t x) noexcept {
  const std::uint64_t below_0x21 = (x - kOnes * 0x21) & ~x;
  const std::uint64_t del = x ^ (kOnes * 0x7f);
  const std::uint64_t is_del = (del - kOnes) & ~del;
  return (below_0x21 | is_del) & kHighBits;
}

template <class Word>
Word LoadAt(const char* at) noexcept {
  Word word;
  std::memcpy(&word, at, sizeof(word));
  return word;
}

}  // namespace key_check_detail

// Whether `key` may be sent. Inline: every key of every batch asks.
inline bool KeyIsValid(std::string_view key, bool binary_keys) noexcept {
  using key_check_detail::ForbiddenBits;
  using key_check_detail::LoadAt;
  const std::size_t size = key.size();
  // The usual text key, 8 to 16 bytes, is its first and its last eight bytes
  // (the two words overlap when shorter): two words, tested together, no call.
  if (!binary_keys && size - 8 <= 8) {
    const char* const bytes = key.data();
    return (ForbiddenBits(LoadAt<std::uint64_t>(bytes)) |
            ForbiddenBits(LoadAt<std::uint64_t>(bytes + size - 8))) == 0;
  }
  if (size == 0) return false;
  if (binary_keys) return Base64Length(size) <= kMaxKeyLength;
  return size <= kMaxKeyLength && !HasForbiddenByte(key);
}

// ok, or kInvalidArgument naming the key and its problem.
inline Status CheckKey(std::string_view key, bool binary_keys) {
  if (KeyIsValid(key, binary_keys)) return Status::OK();
  return KeyError(key, binary_keys);
}

}  // namespace cachet::memcached
