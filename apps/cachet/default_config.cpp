// Locating config/default.conf relative to the running executable.
#include "default_config.h"

#include <string>
#include <system_error>

namespace cachet::cli {
namespace fs = std::filesystem;

std::vector<fs::path> DefaultConfigCandidates() {
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return candidates;
  const fs::path bin = exe.parent_path();
  // A build tree (its CMakeCache.txt beside bin/) inside the checkout, as the
  // presets make it: the checkout's config/. Decided here, at run time, so that
  // an installed cachet never reads a config from outside its own tree.
  if (fs::is_regular_file(bin / ".." / "CMakeCache.txt", ec)) {
    candidates.push_back(bin / ".." / ".." / "config" / "default.conf");
  }
  candidates.push_back(bin / ".." / "share" / "cachet" / "config" / "default.conf");
  return candidates;
}

Result<fs::path> FindDefaultConfig() {
  std::string looked;
  for (const fs::path& candidate : DefaultConfigCandidates()) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal();
    looked += "\n  " + candidate.lexically_normal().string();
  }
  return Status::ConfigError("no -c FILE given and no default config found; looked at:" + looked);
}

}  // namespace cachet::cli
