// Key checks before anything is sent.
#include "key_check.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "printable.h"

namespace cachet::memcached {

namespace {

Status BadKey(std::string_view key, const std::string& problem) {
  return Status::InvalidArgument("memcached key '" + Printable(key) + "' " + problem);
}

// Eight bytes at a time, "any byte below 0x21, or equal to 0x7f" (space, the
// control bytes, DEL: what memcached would read as a separator or what could end
// a command line). Every key is checked, so a valid key should cost about one
// instruction per byte. The classic zero-byte tests: for bytes under 0x80,
// (x - n) & ~x has the high bit set exactly when x < n; bytes of 0x80 and up,
// which memcached accepts, are masked out by ~x. Either test is exact about
// whether some byte matches (not about which).
constexpr std::uint64_t kOnes = 0x0101010101010101;
constexpr std::uint64_t kHighBits = 0x8080808080808080;

bool WordHasForbiddenByte(std::uint64_t x) {
  const std::uint64_t below_0x21 = (x - kOnes * 0x21) & ~x & kHighBits;
  const std::uint64_t del = x ^ (kOnes * 0x7f);
  const std::uint64_t is_del = (del - kOnes) & ~del & kHighBits;
  return (below_0x21 | is_del) != 0;
}

bool IsForbiddenByte(unsigned char c) { return c <= 0x20 || c == 0x7f; }

bool WordAtHasForbiddenByte(std::string_view key, std::size_t at) noexcept {
  std::uint64_t word;
  std::memcpy(&word, key.data() + at, sizeof(word));
  return WordHasForbiddenByte(word);
}

bool HasForbiddenByte(std::string_view key) noexcept {
  if (key.size() < 8) {
    for (char c : key) {
      if (IsForbiddenByte(static_cast<unsigned char>(c))) return true;
    }
    return false;
  }
  for (std::size_t i = 0; i + 8 <= key.size(); i += 8) {
    if (WordAtHasForbiddenByte(key, i)) return true;
  }
  // The last eight bytes as one word, overlapping the words before: the
  // question is whether any byte is forbidden, which asking twice cannot change.
  return key.size() % 8 != 0 && WordAtHasForbiddenByte(key, key.size() - 8);
}

Status ForbiddenByteError(std::string_view key) {
  for (std::size_t i = 0; i < key.size(); ++i) {
    auto c = static_cast<unsigned char>(key[i]);
    if (c == ' ') return BadKey(key, "contains a space at byte " + std::to_string(i));
    if (c < 0x20 || c == 0x7f) {
      return BadKey(key, "contains the control byte " + Printable(key.substr(i, 1)) + " at byte " +
                             std::to_string(i));
    }
  }
  return Status::InvalidArgument("memcached key has a forbidden byte");
}

}  // namespace

bool KeyIsValid(std::string_view key, bool binary_keys) noexcept {
  if (key.empty()) return false;
  if (binary_keys) return Base64Length(key.size()) <= kMaxKeyLength;
  return key.size() <= kMaxKeyLength && !HasForbiddenByte(key);
}

Status CheckKey(std::string_view key, bool binary_keys) {
  if (key.empty()) return Status::InvalidArgument("memcached key is empty");
  if (binary_keys) {
    if (Base64Length(key.size()) > kMaxKeyLength) {
      return BadKey(key, "is " + std::to_string(key.size()) +
                             " bytes; base64-encoded binary keys allow at most 186");
    }
    return Status::OK();
  }
  if (key.size() > kMaxKeyLength) {
    return BadKey(key, "is " + std::to_string(key.size()) +
                           " bytes; memcached allows at most 250 (namespace included)");
  }
  // The message naming the bad byte is built only when there is one.
  if (HasForbiddenByte(key)) return ForbiddenByteError(key);
  return Status::OK();
}

}  // namespace cachet::memcached
