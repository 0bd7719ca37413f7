// The plugin loader a config asks for: [cache] plugin_path first, then the
// standard places (PluginLoader::DefaultSearchPath).
#pragma once

#include "cachet/config.h"
#include "cachet/plugin.h"

namespace cachet::cli {

// REQUIRES: `config`'s [cache] section was validated (plugin_path is then a list).
PluginLoader LoaderFor(const Config& config);

}  // namespace cachet::cli
