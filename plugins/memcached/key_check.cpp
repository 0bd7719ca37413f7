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

using key_check_detail::ForbiddenBits;
using key_check_detail::LoadAt;

bool IsForbiddenByte(unsigned char c) { return c <= 0x20 || c == 0x7f; }

// Four to seven bytes: two four-byte words, which overlap, tested as one.
bool ShortKeyHasForbiddenByte(const char* key, std::size_t size) {
  const std::uint64_t low = LoadAt<std::uint32_t>(key);
  const std::uint64_t high = LoadAt<std::uint32_t>(key + size - 4);
  return ForbiddenBits(low | high << 32) != 0;
}

}  // namespace

bool HasForbiddenByte(std::string_view key) noexcept {
  const char* const bytes = key.data();
  const std::size_t size = key.size();
  if (size < 4) {
    for (char c : key) {
      if (IsForbiddenByte(static_cast<unsigned char>(c))) return true;
    }
    return false;
  }
  if (size < 8) return ShortKeyHasForbiddenByte(bytes, size);
  // The last eight bytes as one word, overlapping the words before: the
  // question is whether any byte is forbidden, which asking twice cannot change.
  std::uint64_t found = ForbiddenBits(LoadAt<std::uint64_t>(bytes + size - 8));
  // Up to 16 bytes, the usual key, that and the first word are all.
  if (size <= 16) return (found | ForbiddenBits(LoadAt<std::uint64_t>(bytes))) != 0;
  for (std::size_t i = 0; i + 8 < size; i += 8)
    found |= ForbiddenBits(LoadAt<std::uint64_t>(bytes + i));
  return found != 0;
}

namespace {

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

Status KeyError(std::string_view key, bool binary_keys) {
  if (key.empty()) return Status::InvalidArgument("memcached key is empty");
  if (binary_keys) {
    if (Base64Length(key.size()) > kMaxKeyLength) {
      return BadKey(key, "is " + std::to_string(key.size()) +
                             " bytes; base64-encoded binary keys allow at most 186");
    }
  } else if (key.size() > kMaxKeyLength) {
    return BadKey(key, "is " + std::to_string(key.size()) +
                           " bytes; memcached allows at most 250 (namespace included)");
  } else if (HasForbiddenByte(key)) {
    return ForbiddenByteError(key);
  }
  // KeyIsValid and this function state the same rules; were they ever to
  // disagree, the key is refused plainly rather than sent.
  return Status::Internal("memcached: key '" + Printable(key) + "' refused without a reason");
}

}  // namespace cachet::memcached
