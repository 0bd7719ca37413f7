// The consumer's store plugin, "notebook": a map in memory, built outside
// cachet's tree with cachet_add_plugin().
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
    auto it = pages_.find(std::string(key));
    if (it == pages_.end()) return cachet::Status::NotFound();
    *out = it->second;
    return cachet::Status::OK();
  }

  cachet::Status Store(cachet::StoreMode mode, std::string_view key, cachet::ItemView item,
                       const cachet::WriteOptions&) override {
    if (mode != cachet::StoreMode::kSet) return UnsupportedOperation(StoreModeName(mode));
    std::lock_guard lock(mutex_);
    pages_[std::string(key)] = cachet::Item{std::string(item.value), item.flags, 0};
    return cachet::Status::OK();
  }

  cachet::Status Remove(std::string_view key) override {
    std::lock_guard lock(mutex_);
    return pages_.erase(std::string(key)) == 1 ? cachet::Status::OK() : cachet::Status::NotFound();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, cachet::Item> pages_;
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
