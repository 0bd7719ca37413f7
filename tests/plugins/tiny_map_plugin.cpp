// A working test plugin: an in-process map behind a mutex, with just Get, Store
// and Remove, so the loader tests can create a backend and use it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cachet/plugin.h"

namespace {

class TinyMapBackend final : public cachet::Backend {
 public:
  std::string_view name() const noexcept override { return "tinymap"; }
  cachet::Capabilities capabilities() const noexcept override { return {}; }

  cachet::Status Get(std::string_view key, cachet::Item* out) override {
    std::lock_guard lock(mutex_);
    auto it = items_.find(std::string(key));
    if (it == items_.end()) return cachet::Status::NotFound();
    *out = it->second;
    return cachet::Status::OK();
  }

  // Only kSet is needed by the tests; other modes are refused, not faked.
  cachet::Status Store(cachet::StoreMode mode, std::string_view key, cachet::ItemView item,
                       const cachet::WriteOptions&) override {
    if (mode != cachet::StoreMode::kSet) return UnsupportedOperation(StoreModeName(mode));
    std::lock_guard lock(mutex_);
    items_[std::string(key)] = cachet::Item{std::string(item.value), item.flags, 0};
    return cachet::Status::OK();
  }

  cachet::Status Remove(std::string_view key) override {
    std::lock_guard lock(mutex_);
    return items_.erase(std::string(key)) == 1 ? cachet::Status::OK() : cachet::Status::NotFound();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, cachet::Item> items_;
};

cachet::Status CreateTinyMap(const cachet::PluginContext&,
                             std::unique_ptr<cachet::Backend>* out) noexcept {
  return cachet::GuardedCreate("tiny-map", [out] {
    *out = std::make_unique<TinyMapBackend>();
    return cachet::Status::OK();
  });
}

const cachet::OptionSpec kOptions[] = {
    {"greeting", cachet::OptionType::kString, "hello", "An option nobody reads"},
};

#ifndef CACHET_TEST_ABI_V1

// The validation hook: a greeting longer than 16 bytes is refused.
cachet::Status ValidateTinyMap(const cachet::ConfigSection& options) noexcept {
  if (options.GetString("greeting").size() > 16) {
    return options.ErrorAt("greeting", "longer than 16 bytes");
  }
  return cachet::Status::OK();
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "tinymap",
    "1.0",
    "A map in memory, for the loader tests",
    kOptions,
    1,
    0,
    &CreateTinyMap,
    &ValidateTinyMap,
};

#else

// The same store as a plugin built for ABI version 1 described it (the
// descriptor ends at `create`): the loader refuses it by its version alone.
struct PluginDescriptorV1 {
  std::uint32_t abi_version;
  const char* fingerprint;
  const char* name;
  const char* version;
  const char* description;
  const cachet::OptionSpec* options;
  std::size_t option_count;
  std::uint32_t capabilities;
  cachet::BackendFactory create;
};

const PluginDescriptorV1 kDescriptorV1 = {
    1,
    CACHET_BUILD_FINGERPRINT,
    "tinymap-v1",
    "1.0",
    "tinymap with an ABI version 1 descriptor",
    kOptions,
    1,
    0,
    &CreateTinyMap,
};

#endif

}  // namespace

#ifndef CACHET_TEST_ABI_V1
CACHET_DEFINE_PLUGIN(kDescriptor)
#else
extern "C" CACHET_PLUGIN_EXPORT const PluginDescriptorV1* cachet_plugin_v1() noexcept {
  return &kDescriptorV1;
}
#endif
