// Plugin: a loaded, checked plugin library, and the backends its factory makes.
#include "cachet/plugin.h"

#include <utility>

#include "cachet/log.h"
#include "plugin_library.h"

namespace cachet {

const char* CoreBuildFingerprint() noexcept { return CACHET_BUILD_FINGERPRINT; }

Plugin::Plugin(std::shared_ptr<void> library, const PluginDescriptor* descriptor,
               std::filesystem::path path)
    : library_(std::move(library)), descriptor_(descriptor), path_(std::move(path)) {}

Status Plugin::ValidateOptions(const ConfigSection& options) const {
  if (descriptor_->validate == nullptr) return Status::OK();
  return descriptor_->validate(options);
}

Result<std::shared_ptr<Backend>> Plugin::CreateBackend(
    const ConfigSection& options, std::shared_ptr<spdlog::logger> logger) const {
  PluginContext context{options, logger != nullptr ? std::move(logger) : Logger()};
  std::unique_ptr<Backend> made;
  Status status = descriptor_->create(context, &made);
  if (!status.ok()) {
    return Status::PluginError(PluginFailure(path_, "create failed: " + status.ToString()));
  }
  if (made == nullptr) {
    return Status::PluginError(
        PluginFailure(path_, "create failed: the factory returned ok but no backend"));
  }
  // The deleter holds the library, so the backend's code (its vtable and
  // destructor) stays mapped until the backend is gone, whatever happens to
  // this Plugin and its loader. The library is released after the delete.
  return std::shared_ptr<Backend>(made.release(),
                                  [library = library_](Backend* backend) { delete backend; });
}

}  // namespace cachet
