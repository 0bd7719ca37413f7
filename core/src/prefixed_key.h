// PrefixedKey: a Cache namespace prefix joined to a caller's key, for one call.
//
// The Cache hands the store full keys ("shop:" + "cart:42"); callers never see
// the prefix. Joining happens on every operation, so the result lives in a small
// buffer inside this object (on the caller's stack) and only a key longer than
// that buffer allocates. Without a prefix the caller's key is used as it is, and
// the object costs a branch: the buffer is left uninitialised and nothing needs
// destroying. The view points into this object: it must not outlive it, and the
// object is neither copyable nor movable for that reason.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace cachet {

class PrefixedKey {
 public:
  PrefixedKey(std::string_view prefix, std::string_view key) {
    if (prefix.empty()) {
      view_ = key;
    } else {
      Join(prefix, key);
    }
  }
  PrefixedKey(const PrefixedKey&) = delete;
  PrefixedKey& operator=(const PrefixedKey&) = delete;

  std::string_view view() const noexcept { return view_; }

 private:
  // memcached keys are at most 250 bytes, so nearly every real key fits.
  static constexpr std::size_t kInlineSize = 256;

  void Join(std::string_view prefix, std::string_view key) {
    const std::size_t size = prefix.size() + key.size();
    char* dst = inline_;
    if (size > kInlineSize) {
      spill_ = std::make_unique_for_overwrite<char[]>(size);
      dst = spill_.get();
    }
    std::memcpy(dst, prefix.data(), prefix.size());
    std::memcpy(dst + prefix.size(), key.data(), key.size());
    view_ = std::string_view(dst, size);
  }

  std::string_view view_;
  std::unique_ptr<char[]> spill_;  // only for a key longer than inline_
  char inline_[kInlineSize];
};

// WithPrefix's call for a non-empty prefix: out of line, so that the buffer's
// stack frame is set up only when a prefix is joined.
template <class Use>
[[gnu::noinline]] auto WithJoinedPrefix(std::string_view prefix, std::string_view key, Use& use) {
  const PrefixedKey full_key(prefix, key);
  return use(full_key.view());
}

// Calls `use` with `key` under `prefix` and returns its result. Without a
// prefix `key` is passed as it is and no PrefixedKey is made, so the usual
// call sets up no buffer and has nothing to destroy.
template <class Use>
auto WithPrefix(std::string_view prefix, std::string_view key, Use&& use) {
  if (prefix.empty()) return use(key);
  return WithJoinedPrefix(prefix, key, use);
}

}  // namespace cachet
