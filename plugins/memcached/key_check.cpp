// Key checks before anything is sent.
#include "key_check.h"

#include <string>

#include "printable.h"

namespace cachet::memcached {

namespace {

Status BadKey(std::string_view key, const std::string& problem) {
  return Status::InvalidArgument("memcached key '" + Printable(key) + "' " + problem);
}

}  // namespace

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
  for (std::size_t i = 0; i < key.size(); ++i) {
    auto c = static_cast<unsigned char>(key[i]);
    if (c == ' ') return BadKey(key, "contains a space at byte " + std::to_string(i));
    if (c < 0x20 || c == 0x7f) {
      return BadKey(key, "contains the control byte " + Printable(key.substr(i, 1)) + " at byte " +
                             std::to_string(i));
    }
  }
  return Status::OK();
}

}  // namespace cachet::memcached
