// GetOrCompute: the cached value, or the loader's, stored for the next caller.
// While one thread loads a key, the other threads asking for it wait for that
// value instead of loading it too.
// Usage: example_get_or_compute [CONFIG [section.key=value]...]
#include <cstdio>
#include <string>

#include "example_cache.h"

namespace {

int loads = 0;

// Stands for the expensive work the cache saves: a query, a rendering, a call.
cachet::Result<std::string> RenderProfile(const std::string& user) {
  ++loads;
  if (user.empty()) return cachet::Status::InvalidArgument("no user named");
  return "<h1>" + user + "</h1>";
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;
  (void)cache->Remove("profile:ada");  // start from a miss (not_found is fine)

  for (int request = 0; request < 3; ++request) {
    cachet::Lookup<std::string> page = cache->GetOrCompute<std::string>(
        "profile:ada", [] { return RenderProfile("ada"); }, cachet::TtlFromSeconds(300));
    if (!page.hit()) return 3;
    std::printf("request %d: %s\n", request, page->c_str());
  }
  std::printf("loader ran %d time(s)\n", loads);

  // A loader's error comes back as the Lookup's error, and nothing is stored.
  cachet::Lookup<std::string> failed =
      cache->GetOrCompute<std::string>("profile:", [] { return RenderProfile(""); });
  std::printf("failed load: %s\n", failed.status().ToString().c_str());
  return loads == 2 && failed.error() ? 0 : 1;
}
