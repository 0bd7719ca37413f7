// Where cachet looks for its config when no -c is given.
#pragma once

#include <filesystem>
#include <vector>

#include "cachet/result.h"

namespace cachet::cli {

// In order: <exe>/../../config/default.conf when <exe>/.. is a build tree
// (build/bin/cachet), then <exe>/../share/cachet/config/default.conf (an
// install, wherever it was moved). No path is compiled in.
std::vector<std::filesystem::path> DefaultConfigCandidates();

// The first candidate that exists; kConfigError listing the places looked at.
Result<std::filesystem::path> FindDefaultConfig();

}  // namespace cachet::cli
