// How every example opens its Cache: from the config file named on the command
// line, with "section.key=value" overrides after it, or the embedded default (the
// in-process memory store) when no file is named. Usage of every example:
//   example_NAME [CONFIG [section.key=value]...]
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cachet/cache.h"
#include "cachet/config.h"

// The opened Cache, or nullptr after printing why it could not be opened.
inline std::unique_ptr<cachet::Cache> OpenExampleCache(int argc, char** argv) {
  cachet::Config config;  // empty: [cache] backend = memory, every default
  if (argc > 1) {
    const std::vector<std::string> overrides(argv + 2, argv + argc);
    auto loaded = cachet::Config::LoadFile(argv[1], overrides);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return nullptr;
    }
    config = std::move(loaded).value();
  }
  auto cache = cachet::Cache::Open(std::move(config));
  if (!cache.ok()) {
    std::fprintf(stderr, "%s\n", cache.status().ToString().c_str());
    return nullptr;
  }
  return std::move(cache).value();
}
