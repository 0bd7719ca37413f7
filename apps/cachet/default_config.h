// Where cachet looks for its config when no -c is given.
#pragma once

#include <filesystem>
#include <vector>

#include "cachet/result.h"

namespace cachet::cli {

// In order: <exe>/../../config/default.conf (the build tree: build/bin/cachet),
// <exe>/../share/cachet/config/default.conf (a relocated install), and the
// configured install prefix's share/cachet/config/default.conf.
std::vector<std::filesystem::path> DefaultConfigCandidates();

// The first candidate that exists; kConfigError listing the places looked at.
Result<std::filesystem::path> FindDefaultConfig();

}  // namespace cachet::cli
