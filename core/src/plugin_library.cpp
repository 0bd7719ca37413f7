// Opening and checking one plugin file (see plugin_library.h).
#include "plugin_library.h"

#include <dlfcn.h>

#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <exception>
#include <system_error>

#include "option_value.h"

namespace cachet {

namespace {

namespace fs = std::filesystem;

// Boost.DLL reports "Bad file descriptor" for every failed load; the dynamic
// loader's own message says why (not an ELF file, an undefined symbol, ...).
std::string LoaderReason(const fs::path& file, const std::error_code& boost_error) {
  const char* reason = dlerror();
  if (reason == nullptr) return boost_error.message();
  std::string text(reason);
  // dlerror() usually starts with the file name, which the message already has.
  std::string prefix = file.string() + ": ";
  if (text.starts_with(prefix)) text.erase(0, prefix.size());
  return text;
}

std::string FingerprintMismatch(const char* plugin_fingerprint) {
  return std::string("build fingerprint mismatch: plugin '") +
         (plugin_fingerprint != nullptr ? plugin_fingerprint : "(none)") + "', core '" +
         CoreBuildFingerprint() + "' (rebuild the plugin against this cachet)";
}

// Why `descriptor` cannot be used, or "" when it can. The ABI version is read
// first: it is the one field whose place every ABI version agrees on.
std::string ExplainBadDescriptor(const PluginDescriptor* descriptor) {
  if (descriptor == nullptr) return "the entry point returned no descriptor";
  if (descriptor->abi_version < kOldestPluginAbiVersion ||
      descriptor->abi_version > kPluginAbiVersion) {
    const std::string readable = kOldestPluginAbiVersion == kPluginAbiVersion
                                     ? "version " + std::to_string(kPluginAbiVersion)
                                     : "versions " + std::to_string(kOldestPluginAbiVersion) +
                                           " to " + std::to_string(kPluginAbiVersion);
    return "ABI version " + std::to_string(descriptor->abi_version) + ", but this cachet reads " +
           readable + " (rebuild the plugin against this cachet)";
  }
  if (descriptor->fingerprint == nullptr ||
      std::strcmp(descriptor->fingerprint, CoreBuildFingerprint()) != 0) {
    return FingerprintMismatch(descriptor->fingerprint);
  }
  if (descriptor->name == nullptr || *descriptor->name == '\0') return "descriptor has no name";
  if (descriptor->version == nullptr) return "descriptor has no version";
  if (descriptor->create == nullptr) return "descriptor has no factory";
  if (descriptor->description == nullptr) return "descriptor has no description";
  if (descriptor->options == nullptr && descriptor->option_count != 0) {
    return "descriptor declares options but gives none";
  }
  // Every option must be named and described, and its default must pass its
  // own type and choices: a default goes to the factory unchecked otherwise.
  for (std::size_t i = 0; i < descriptor->option_count; ++i) {
    const OptionSpec& spec = descriptor->options[i];
    if (spec.name == nullptr || *spec.name == '\0') {
      return "option " + std::to_string(i) + " has no name";
    }
    if (spec.help == nullptr) return "option '" + std::string(spec.name) + "' has no help";
    if (spec.default_value == nullptr) continue;
    if (std::string reason = ExplainBadValue(spec, spec.default_value); !reason.empty()) {
      return "option '" + std::string(spec.name) + "' has a bad default '" +
             std::string(spec.default_value) + "': " + reason;
    }
  }
  return "";
}

Result<std::shared_ptr<const Plugin>> OpenCheckedFile(const fs::path& file) {
  auto library = std::make_shared<boost::dll::shared_library>();
  std::error_code load_error;
  dlerror();  // Clears any stale message, so the one read below is about this load.
  library->load(file, boost::dll::load_mode::rtld_now, load_error);
  if (load_error) {
    return Status::PluginError(
        PluginFailure(file, "cannot load: " + LoaderReason(file, load_error)));
  }
  if (!library->has(kPluginEntryPoint)) {
    return Status::PluginError(
        PluginFailure(file, "not a cachet plugin: no cachet_plugin_v1 entry point"));
  }
  PluginEntryPointFn& entry_point = library->get<PluginEntryPointFn>(kPluginEntryPoint);
  const PluginDescriptor* descriptor = entry_point();
  std::string reason = ExplainBadDescriptor(descriptor);
  if (!reason.empty()) return Status::PluginError(PluginFailure(file, reason));
  return std::make_shared<const Plugin>(std::move(library), descriptor, file);
}

}  // namespace

std::string PluginFailure(const fs::path& file, std::string_view reason) {
  return "plugin " + file.string() + ": " + std::string(reason);
}

Result<std::shared_ptr<const Plugin>> OpenPluginFile(const fs::path& file_as_given) {
  std::error_code ec;
  fs::path file = fs::absolute(file_as_given, ec).lexically_normal();
  if (ec) file = file_as_given;
  if (!fs::exists(file, ec)) return Status::PluginError(PluginFailure(file, "not found"));
  if (!fs::is_regular_file(file, ec)) {
    return Status::PluginError(PluginFailure(file, "not a regular file"));
  }
  try {
    return OpenCheckedFile(file);
  } catch (const std::exception& e) {
    return Status::PluginError(PluginFailure(file, std::string("cannot load: ") + e.what()));
  }
}

}  // namespace cachet
