// The consumer's store plugin, "notebook": a map in memory, built outside
// cachet's tree with cachet_add_plugin() and checked by cachet-conformance
// (cachet_add_conformance_test in CMakeLists.txt). It keeps to the rules of
// docs/plugins.md: set, add and replace with their answers, a miss that is
// kNotFound, Get writing into the caller's Item, a mutex for threads; what it
// does not declare (TTL, flags) the core emulates, the rest answers unsupported.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cachet/plugin.h"

namespace {

class NotebookBackend final : public cachet::Backend {
 public:
  std::string_view name() const noexcept override { return "notebook"; }
  cachet::Capabilities capabilities() const noexcept override { return {}; }

  cachet::Status Get(std::string_view key, cachet::Item* out) override {
    std::lock_guard lock(mutex_);
    auto it = pages_.find(key);
    if (it == pages_.end()) return cachet::Status::NotFound();
    // Assigning into the caller's string keeps its buffer when it is big enough.
    out->value.assign(it->second.value);
    out->flags = it->second.flags;
    out->cas = 0;
    return cachet::Status::OK();
  }

  cachet::Status Store(cachet::StoreMode mode, std::string_view key, cachet::ItemView item,
                       const cachet::WriteOptions&) override {
    std::lock_guard lock(mutex_);
    auto it = pages_.find(key);
    switch (mode) {
      case cachet::StoreMode::kSet:
        break;
      case cachet::StoreMode::kAdd:
        if (it != pages_.end()) return cachet::Status::NotStored();
        break;
      case cachet::StoreMode::kReplace:
        if (it == pages_.end()) return cachet::Status::NotStored();
        break;
      default:
        return UnsupportedOperation(StoreModeName(mode));
    }
    if (it == pages_.end()) it = pages_.emplace(std::string(key), cachet::Item{}).first;
    it->second.value.assign(item.value);
    it->second.flags = item.flags;
    return cachet::Status::OK();
  }

  cachet::Status Remove(std::string_view key) override {
    std::lock_guard lock(mutex_);
    auto it = pages_.find(key);
    if (it == pages_.end()) return cachet::Status::NotFound();
    pages_.erase(it);
    return cachet::Status::OK();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, cachet::Item, std::less<>> pages_;
};

cachet::Status CreateNotebook(const cachet::PluginContext&,
                              std::unique_ptr<cachet::Backend>* out) noexcept {
  return cachet::GuardedCreate("notebook", [out] {
    *out = std::make_unique<NotebookBackend>();
    return cachet::Status::OK();
  });
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "notebook",
    "1.0",
    "A map in memory, built out of tree",
    nullptr,
    0,
    0,
    &CreateNotebook,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
