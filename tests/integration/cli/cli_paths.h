// Where the CLI tests find the executables, the example config and the test
// plugin, and a scratch file helper.
#pragma once

#include <unistd.h>

#include <fstream>
#include <string>

namespace cachet::test {

inline const std::string kCachet = std::string(CACHET_BINARY_DIR) + "/bin/cachet";
inline const std::string kCachetBench = std::string(CACHET_BINARY_DIR) + "/bin/cachet-bench";
inline const std::string kDefaultConfig = std::string(CACHET_SOURCE_DIR) + "/config/default.conf";

// Writes `text` to a file unique to this process and test name; returns its path.
inline std::string WriteScratchFile(const std::string& name, const std::string& text) {
  const std::string path =
      std::string(CACHET_BINARY_DIR) + "/tests/cli-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace cachet::test
