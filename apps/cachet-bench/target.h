// A benchmark target: one config, opened as a Cache, with the label its table
// rows carry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cachet/cache.h"
#include "cachet/result.h"

namespace cachet::bench {

struct Target {
  std::string label;  // the config file's stem ("default"), made unique if needed
  std::string config_path;
  std::unique_ptr<Cache> cache;
};

// Opens every config with the same overrides applied to each. Labels are file
// stems; when two stems collide the backend name is added ("a:redis"), then a
// number ("a:redis#2"). Fails on the first config that does not open.
Result<std::vector<Target>> OpenTargets(const std::vector<std::string>& config_paths,
                                        const std::vector<std::string>& overrides);

}  // namespace cachet::bench
