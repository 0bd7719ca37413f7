// An application on the Cache API, built by the install tests both with
// find_package(cachet) and with pkg-config: opens the embedded memory store from
// a config, the way an application does, then writes and reads a value. The
// memory plugin is found beside the libcachet this program runs with.
#include <cstdio>
#include <string>
#include <utility>

#include "cachet/cache.h"
#include "cachet/config.h"

int main() {
  auto config = cachet::Config::Parse("[cache]\nbackend = memory\n", "app");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 1;
  }
  auto cache = cachet::Cache::Open(std::move(*config));
  if (!cache.ok()) {
    std::fprintf(stderr, "%s\n", cache.status().ToString().c_str());
    return 1;
  }
  cachet::Status stored = (*cache)->Set("greeting", std::string("hello"));
  cachet::Lookup<std::string> read = (*cache)->Get("greeting");
  if (!stored.ok() || !read.hit() || read.value() != "hello") {
    std::fprintf(stderr, "cache: set/get failed: %s / %s\n", stored.ToString().c_str(),
                 read.status().ToString().c_str());
    return 1;
  }
  std::printf("cache: set and get ok\n");
  return 0;
}
