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
#include <string_view>

#include "cachet/status.h"

namespace cachet::memcached {

inline constexpr std::size_t kMaxKeyLength = 250;

constexpr std::size_t Base64Length(std::size_t raw) { return (raw + 2) / 3 * 4; }

// ok, or kInvalidArgument naming the key and its problem.
Status CheckKey(std::string_view key, bool binary_keys);

// Whether a text key holds a byte memcached would misread: a space, a control
// byte or DEL.
bool HasForbiddenByte(std::string_view key) noexcept;

// Whether CheckKey would say ok, without building a Status: the common case
// costs no Status, and CheckKey is called for the message only when it fails.
// Inline: every key of every batch asks.
inline bool KeyIsValid(std::string_view key, bool binary_keys) noexcept {
  if (key.empty()) return false;
  if (binary_keys) return Base64Length(key.size()) <= kMaxKeyLength;
  return key.size() <= kMaxKeyLength && !HasForbiddenByte(key);
}

}  // namespace cachet::memcached
