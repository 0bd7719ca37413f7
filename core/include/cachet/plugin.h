// Plugin: the ABI between cachet and a store plugin, and the loader.
//
// A plugin is a MODULE library (cachet-<name>.so) that exports exactly one
// C-linkage function, cachet_plugin_v1, returning a PluginDescriptor with static
// storage. Define it with CACHET_DEFINE_PLUGIN(descriptor). The loader checks the
// ABI version and the build fingerprint before it reads anything else: a plugin
// and the core must come from the same compiler, standard library and cachet
// version, because Status, std::string and Backend's vtable cross the boundary.
//
// The factory is noexcept and answers with a Status; no exception crosses the
// boundary. A Backend from CreateBackend holds its library: the library stays
// loaded while any object it created is alive, however long the Plugin lives.
//
// Search order for a plugin name (docs/plugins.md): an explicit path, then the
// `plugin_path` directories of the config, then $CACHET_PLUGIN_PATH (':'-separated),
// then cachet/plugins beside the loaded libcachet (the build tree's for a build,
// the installed one for an install, wherever either was moved).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include "cachet/backend.h"
#include "cachet/config.h"
#include "cachet/export.h"
#include "cachet/result.h"
#include "cachet/status.h"
#include "cachet/version.h"

namespace cachet {

// Version 2 added PluginDescriptor::validate; version 3 made Status one pointer
// (status.h); version 4 grew ServerHealth and net::Connection (the pool's bound);
// version 5 made net::ConnectionSetup hand the engine a login (fan_out.h) and
// grew net::Exchange; version 6 grew net::ServerPool::Lease and made its
// return inline (server_pool.h), so the layout of ServerPool's Server record
// now builds into plugins too: a change to it needs a new version.
// Version 6 also added net::Connection's count of TLS crossed waits; version 7
// made ServerPool::Acquire's usual borrow inline (and the thread number it reads);
// version 8 grew net::Exchange and BatchRunner's record of an exchange (whether
// its request went out: `sent`, for retries); version 9 gave ServerPool's
// Server record 32 spare slots instead of 8; version 10 gave it a queue of the
// threads waiting under max_connections in place of a condition variable;
// version 11 added failover_max_keys to net::ServerPoolOptions (failover's
// rule moved into core/net, net::Failover); version 12 added net::ReadBuffer's
// count of bytes received (a read resent after an unanswered close).
// These cross the boundary, so plugins built before version 12 are refused: rebuild them.
inline constexpr std::uint32_t kPluginAbiVersion = 12;
inline constexpr std::uint32_t kOldestPluginAbiVersion = 12;
inline constexpr const char* kPluginEntryPoint = "cachet_plugin_v1";

#define CACHET_STRINGIFY_DETAIL(x) #x
#define CACHET_STRINGIFY(x) CACHET_STRINGIFY_DETAIL(x)

// Compiler, standard library, language level and cachet version, as compiled into
// whoever includes this header. The core's own copy is CoreBuildFingerprint().
#if defined(__GLIBCXX__)
#define CACHET_STDLIB_ID "libstdc++ " CACHET_STRINGIFY(__GLIBCXX__)
#elif defined(_LIBCPP_VERSION)
#define CACHET_STDLIB_ID "libc++ " CACHET_STRINGIFY(_LIBCPP_VERSION)
#else
#define CACHET_STDLIB_ID "unknown stdlib"
#endif
#define CACHET_BUILD_FINGERPRINT                                                       \
  "cachet " CACHET_VERSION_STRING "; " __VERSION__ "; " CACHET_STDLIB_ID "; C++ " \
  CACHET_STRINGIFY(__cplusplus)

CACHET_EXPORT const char* CoreBuildFingerprint() noexcept;

// What a factory receives. References are valid only during the call.
struct PluginContext {
  const ConfigSection& options;            // validated against the plugin's schema
  std::shared_ptr<spdlog::logger> logger;  // the core's logger (log.h)
};

using BackendFactory = Status (*)(const PluginContext& context,
                                  std::unique_ptr<Backend>* out) noexcept;

// Checks what a schema cannot: ranges and combinations of a section's values
// (already validated against the schema). It creates nothing and connects
// nowhere, so `cachet check` runs it; the factory must refuse exactly what it
// refuses, which is simplest when both call the same function. kConfigError
// naming the file, line and key (ConfigSection::ErrorAt).
using OptionsValidator = Status (*)(const ConfigSection& options) noexcept;

struct PluginDescriptor {
  std::uint32_t abi_version;  // kPluginAbiVersion
  const char* fingerprint;    // CACHET_BUILD_FINGERPRINT
  const char* name;           // the config's backend name and section name
  const char* version;
  const char* description;    // one line
  const OptionSpec* options;  // the plugin's config section schema
  std::size_t option_count;
  std::uint32_t capabilities;  // Capabilities::bits()
  BackendFactory create;
  OptionsValidator validate = nullptr;  // nullptr: the schema says it all
};

// The signature of the entry point. Keep this the only spelling of it.
using PluginEntryPointFn = const PluginDescriptor*() noexcept;

// The body of a factory: runs `create` (a callable answering a Status) and turns
// any exception it throws into kPluginError naming the store, so that none
// crosses the plugin boundary. For example:
//   return GuardedCreate("mystore", [&] { ...; *out = std::make_unique<...>(...); return
//   Status::OK(); });
template <class Create>
Status GuardedCreate(std::string_view store, Create&& create) noexcept {
  try {
    return create();
  } catch (const std::bad_alloc&) {
    return Status::PluginError(std::string(store) + ": out of memory creating the backend");
  } catch (const std::exception& e) {
    return Status::PluginError(std::string(store) + ": " + e.what());
  } catch (...) {
    return Status::PluginError(std::string(store) + ": unknown error creating the backend");
  }
}

#define CACHET_DEFINE_PLUGIN(descriptor)                                     \
  extern "C" CACHET_PLUGIN_EXPORT const ::cachet::PluginDescriptor*         \
  cachet_plugin_v1() noexcept {                                              \
    return &(descriptor);                                                    \
  }

// A loaded, checked plugin library.
class CACHET_EXPORT Plugin {
 public:
  const PluginDescriptor& descriptor() const noexcept { return *descriptor_; }
  const std::filesystem::path& path() const noexcept { return path_; }
  std::string_view name() const noexcept { return descriptor_->name; }
  Capabilities capabilities() const noexcept { return Capabilities(descriptor_->capabilities); }
  std::span<const OptionSpec> options() const noexcept {
    return {descriptor_->options, descriptor_->option_count};
  }

  // Runs the descriptor's validation hook, if it has one, on a section already
  // validated against options(). Creates nothing, connects nowhere.
  Status ValidateOptions(const ConfigSection& options) const;

  // Calls the factory. `options` must be validated against options(). The
  // returned Backend keeps this plugin's library loaded.
  Result<std::shared_ptr<Backend>> CreateBackend(const ConfigSection& options,
                                                 std::shared_ptr<spdlog::logger> logger) const;

  // Public for make_shared; use PluginLoader.
  Plugin(std::shared_ptr<void> library, const PluginDescriptor* descriptor,
         std::filesystem::path path);

 private:
  std::shared_ptr<void> library_;  // owns the boost::dll::shared_library
  const PluginDescriptor* descriptor_;  // static storage inside library_
  std::filesystem::path path_;
};

class CACHET_EXPORT PluginLoader {
 public:
  // `search_path`: directories, in order.
  explicit PluginLoader(std::vector<std::filesystem::path> search_path);

  // The standard search path: `config_dirs`, $CACHET_PLUGIN_PATH, then the
  // cachet/plugins folder beside the libcachet in use (found with dladdr).
  static std::vector<std::filesystem::path> DefaultSearchPath(
      std::span<const std::string> config_dirs = {});

  // "cachet-<name>.so".
  static std::string FileNameFor(std::string_view name);

  // Loads a plugin by name (searched) or by path (anything with a '/' or ending
  // in ".so"). kPluginError with one line naming the file and the reason: not
  // found, not a shared library, no entry point, ABI or fingerprint mismatch.
  Result<std::shared_ptr<const Plugin>> Load(std::string_view name_or_path) const;

  // Every plugin file in the search path, loaded (first occurrence of a name
  // wins). Failures are returned too, as error Results.
  std::vector<Result<std::shared_ptr<const Plugin>>> Discover() const;

  // The names of the plugin files in the search path ("memcached" for
  // cachet-memcached.so), sorted, each once, without loading them: for "did you
  // mean" hints.
  std::vector<std::string> AvailableNames() const;

  const std::vector<std::filesystem::path>& search_path() const noexcept { return search_path_; }

 private:
  std::vector<std::filesystem::path> search_path_;
};

}  // namespace cachet
