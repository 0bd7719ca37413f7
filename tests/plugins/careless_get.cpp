// A store that breaks one rule of docs/plugins.md, for the conformance kit's own
// test: Get hands back a fresh Item instead of writing into the caller's, so a
// caller's buffer is thrown away on every read. cachet-conformance must fail it,
// naming the case "a second read of same-size values reuses every buffer".
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cachet/plugin.h"

namespace {

class CarelessGetBackend final : public cachet::Backend {
 public:
  std::string_view name() const noexcept override { return "careless-get"; }
  cachet::Capabilities capabilities() const noexcept override { return {}; }

  cachet::Status Get(std::string_view key, cachet::Item* out) override {
    std::lock_guard lock(mutex_);
    auto it = items_.find(key);
    if (it == items_.end()) return cachet::Status::NotFound();
    // The broken rule: the caller's string is replaced, its buffer freed.
    *out = cachet::Item{std::string(it->second.value), it->second.flags, 0};
    return cachet::Status::OK();
  }

  cachet::Status Store(cachet::StoreMode mode, std::string_view key, cachet::ItemView item,
                       const cachet::WriteOptions&) override {
    std::lock_guard lock(mutex_);
    auto it = items_.find(key);
    switch (mode) {
      case cachet::StoreMode::kSet:
        break;
      case cachet::StoreMode::kAdd:
        if (it != items_.end()) return cachet::Status::NotStored();
        break;
      case cachet::StoreMode::kReplace:
        if (it == items_.end()) return cachet::Status::NotStored();
        break;
      default:
        return UnsupportedOperation(StoreModeName(mode));
    }
    if (it == items_.end()) it = items_.emplace(std::string(key), cachet::Item{}).first;
    it->second.value.assign(item.value);
    it->second.flags = item.flags;
    return cachet::Status::OK();
  }

  cachet::Status Remove(std::string_view key) override {
    std::lock_guard lock(mutex_);
    auto it = items_.find(key);
    if (it == items_.end()) return cachet::Status::NotFound();
    items_.erase(it);
    return cachet::Status::OK();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, cachet::Item, std::less<>> items_;
};

cachet::Status CreateCarelessGet(const cachet::PluginContext&,
                                 std::unique_ptr<cachet::Backend>* out) noexcept {
  return cachet::GuardedCreate("careless-get", [out] {
    *out = std::make_unique<CarelessGetBackend>();
    return cachet::Status::OK();
  });
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "careless-get",
    "1.0",
    "A map in memory whose Get drops the caller's buffer",
    nullptr,
    0,
    0,
    &CreateCarelessGet,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
