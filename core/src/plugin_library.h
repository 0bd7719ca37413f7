// Opening one plugin file: load it with Boost.DLL, find the entry point, and check
// the descriptor (ABI version first, then the build fingerprint, then the fields)
// before anything in it is trusted.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "cachet/plugin.h"
#include "cachet/result.h"

namespace cachet {

// "plugin FILE: REASON", the one-line form of every plugin failure.
std::string PluginFailure(const std::filesystem::path& file, std::string_view reason);

// kPluginError with one line naming `file` and the reason it cannot be used.
Result<std::shared_ptr<const Plugin>> OpenPluginFile(const std::filesystem::path& file);

}  // namespace cachet
