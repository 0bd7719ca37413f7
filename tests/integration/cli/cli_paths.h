// Where the CLI tests find the executables, the example config and the test
// plugin, and a scratch file helper.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace cachet::test {

inline const std::string kCachet = std::string(CACHET_BINARY_DIR) + "/bin/cachet";
inline const std::string kCachetBench = std::string(CACHET_BINARY_DIR) + "/bin/cachet-bench";
inline const std::string kDefaultConfig = std::string(CACHET_SOURCE_DIR) + "/config/default.conf";

// The scratch files this process wrote, removed when it exits (not by a forked child).
struct ScratchFiles {
  pid_t owner = ::getpid();
  std::vector<std::string> paths;
  ~ScratchFiles() {
    if (::getpid() != owner) return;
    for (const std::string& path : paths) std::remove(path.c_str());
  }
};

// Writes `text` to a file unique to this process and test name; returns its path.
inline std::string WriteScratchFile(const std::string& name, const std::string& text) {
  static ScratchFiles files;
  const std::string path =
      std::string(CACHET_BINARY_DIR) + "/tests/cli-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary) << text;
  files.paths.push_back(path);
  return path;
}

}  // namespace cachet::test
