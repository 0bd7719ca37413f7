// Builds the plugin loader from a validated config.
#include "plugin_search.h"

#include <string>
#include <vector>

namespace cachet::cli {

PluginLoader LoaderFor(const Config& config) {
  std::vector<std::string> dirs;
  if (const ConfigSection* cache = config.section("cache"); cache != nullptr) {
    dirs = cache->GetPathList("plugin_path");
  }
  return PluginLoader(PluginLoader::DefaultSearchPath(dirs));
}

}  // namespace cachet::cli
