// PluginLoader: finds plugin files along a search path and opens them.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <system_error>
#include <utility>

#include "cachet/log.h"
#include "cachet/plugin.h"
#include "plugin_library.h"

namespace cachet {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFilePrefix = "cachet-";
constexpr std::string_view kFileSuffix = ".so";

// Appends `dir` unless an equivalent spelling of it is already there.
void AddDirectory(std::vector<fs::path>* dirs, const fs::path& dir) {
  if (dir.empty()) return;
  fs::path normal = dir.lexically_normal();
  if (std::find(dirs->begin(), dirs->end(), normal) == dirs->end()) dirs->push_back(normal);
}

void AddColonSeparated(std::vector<fs::path>* dirs, std::string_view list) {
  while (!list.empty()) {
    std::size_t colon = list.find(':');
    AddDirectory(dirs, fs::path(list.substr(0, colon)));
    if (colon == std::string_view::npos) break;
    list.remove_prefix(colon + 1);
  }
}

// The plugin folder beside the libcachet this code runs in: <libdir>/cachet/plugins.
// The same relative layout holds in the build tree (build/lib) and in an
// installed or copied tree, so no absolute path is compiled in and a binary sees
// the build tree's plugins only when it runs the build tree's libcachet. Empty
// when the library's own location is unknown.
fs::path BesideLibrary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&BesideLibrary), &info) == 0 ||
      info.dli_fname == nullptr || *info.dli_fname == '\0') {
    return {};
  }
  std::error_code ec;
  fs::path library = fs::absolute(info.dli_fname, ec);
  if (ec) return {};
  return library.parent_path() / "cachet" / "plugins";
}

bool IsPluginFileName(const std::string& name) {
  return name.size() > kFilePrefix.size() + kFileSuffix.size() && name.starts_with(kFilePrefix) &&
         name.ends_with(kFileSuffix);
}

bool LooksLikePath(std::string_view name_or_path) {
  return name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(kFileSuffix);
}

// Plugin file names in `dir`, sorted so that discovery is repeatable.
std::vector<std::string> PluginFileNamesIn(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (IsPluginFileName(name)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string JoinDirectories(const std::vector<fs::path>& dirs) {
  if (dirs.empty()) return "(the search path is empty)";
  std::string text;
  for (const fs::path& dir : dirs) {
    if (!text.empty()) text += ", ";
    text += dir.string();
  }
  return text;
}

// Opens `file`, found as the plugin `name`. Its descriptor must give the same
// name: otherwise a renamed file would load silently under another section.
Result<std::shared_ptr<const Plugin>> OpenNamedPlugin(const fs::path& file, std::string_view name) {
  auto plugin = OpenPluginFile(file);
  if (plugin.ok() && (*plugin)->name() != name) {
    return Status::PluginError(PluginFailure(file, "its descriptor names the plugin '" +
                                                       std::string((*plugin)->name()) + "', not '" +
                                                       std::string(name) + "'"));
  }
  return plugin;
}

}  // namespace

PluginLoader::PluginLoader(std::vector<fs::path> search_path)
    : search_path_(std::move(search_path)) {}

std::vector<fs::path> PluginLoader::DefaultSearchPath(std::span<const std::string> config_dirs) {
  std::vector<fs::path> dirs;
  for (const std::string& dir : config_dirs) AddDirectory(&dirs, dir);
  if (const char* env = std::getenv("CACHET_PLUGIN_PATH")) {
    std::vector<fs::path> env_dirs;
    AddColonSeparated(&env_dirs, env);
    for (const fs::path& dir : env_dirs) {
      // Logged, not refused, as a missing plugin_path folder is (cache_open.cpp).
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) {
        Logger()->warn("CACHET_PLUGIN_PATH: no folder '{}'; plugins are searched elsewhere",
                       dir.string());
      }
      AddDirectory(&dirs, dir);
    }
  }
  AddDirectory(&dirs, BesideLibrary());
  return dirs;
}

std::string PluginLoader::FileNameFor(std::string_view name) {
  return std::string(kFilePrefix) + std::string(name) + std::string(kFileSuffix);
}

Result<std::shared_ptr<const Plugin>> PluginLoader::Load(std::string_view name_or_path) const {
  if (name_or_path.empty()) return Status::PluginError("plugin '': no name given");
  if (LooksLikePath(name_or_path)) return OpenPluginFile(fs::path(name_or_path));
  std::string file_name = FileNameFor(name_or_path);
  for (const fs::path& dir : search_path_) {
    std::error_code ec;
    fs::path candidate = dir / file_name;
    if (fs::exists(candidate, ec)) return OpenNamedPlugin(candidate, name_or_path);
  }
  return Status::PluginError(
      PluginFailure(file_name, "not found in " + JoinDirectories(search_path_)));
}

std::vector<Result<std::shared_ptr<const Plugin>>> PluginLoader::Discover() const {
  std::vector<Result<std::shared_ptr<const Plugin>>> found;
  std::set<std::string> seen;
  for (const fs::path& dir : search_path_) {
    for (const std::string& name : PluginFileNamesIn(dir)) {
      // The first directory that has a name wins, as it would for Load(name).
      if (!seen.insert(name).second) continue;
      const std::string_view plugin_name = std::string_view(name).substr(
          kFilePrefix.size(), name.size() - kFilePrefix.size() - kFileSuffix.size());
      found.push_back(OpenNamedPlugin(dir / name, plugin_name));
    }
  }
  return found;
}

std::vector<std::string> PluginLoader::AvailableNames() const {
  std::set<std::string> names;
  for (const fs::path& dir : search_path_) {
    for (const std::string& file : PluginFileNamesIn(dir)) {
      names.insert(
          file.substr(kFilePrefix.size(), file.size() - kFilePrefix.size() - kFileSuffix.size()));
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace cachet
