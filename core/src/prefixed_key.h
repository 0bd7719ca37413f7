// PrefixedKey: a Cache namespace prefix joined to a caller's key, for one call.
//
// The Cache hands the store full keys ("shop:" + "cart:42"); callers never see
// the prefix. Joining happens on every operation, so the result lives in a small
// buffer inside this object (on the caller's stack) and only a key longer than
// that buffer allocates. Without a prefix the caller's key is used as it is.
// The view points into this object: it must not outlive it, and the object is
// neither copyable nor movable for that reason.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace cachet {

class PrefixedKey {
 public:
  PrefixedKey(std::string_view prefix, std::string_view key) {
    if (prefix.empty()) {
      view_ = key;
      return;
    }
    const std::size_t size = prefix.size() + key.size();
    char* dst = inline_;
    if (size > kInlineSize) {
      spill_.resize(size);
      dst = spill_.data();
    }
    std::memcpy(dst, prefix.data(), prefix.size());
    std::memcpy(dst + prefix.size(), key.data(), key.size());
    view_ = std::string_view(dst, size);
  }
  PrefixedKey(const PrefixedKey&) = delete;
  PrefixedKey& operator=(const PrefixedKey&) = delete;

  std::string_view view() const noexcept { return view_; }

 private:
  // memcached keys are at most 250 bytes, so nearly every real key fits.
  static constexpr std::size_t kInlineSize = 256;

  char inline_[kInlineSize];
  std::string spill_;
  std::string_view view_;
};

}  // namespace cachet
