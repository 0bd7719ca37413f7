// The first program: open a Cache, store a string, read it back.
// Usage: example_hello [CONFIG [section.key=value]...]
#include <cstdio>

#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  cachet::Status stored = cache->Set("greeting", "hello, cache", cachet::TtlFromSeconds(60));
  if (!stored.ok()) {
    std::fprintf(stderr, "set: %s\n", stored.ToString().c_str());
    return 3;
  }
  cachet::Lookup<std::string> greeting = cache->Get("greeting");
  if (!greeting.hit()) {
    std::fprintf(stderr, "get: %s\n", greeting.status().ToString().c_str());
    return 3;
  }
  std::printf("%s says: %s\n", std::string(cache->backend().name()).c_str(),
              greeting.value().c_str());
  return 0;
}
