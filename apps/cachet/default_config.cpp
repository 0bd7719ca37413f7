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
  if (!ec) {
    const fs::path bin = exe.parent_path();
    candidates.push_back(bin / ".." / ".." / "config" / "default.conf");
    candidates.push_back(bin / ".." / "share" / "cachet" / "config" / "default.conf");
  }
  candidates.push_back(fs::path(CACHET_INSTALL_CONFIG_DIR) / "default.conf");
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
