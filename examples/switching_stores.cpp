// Switching stores: the code stays the same, the config names the store. What a
// store cannot do answers unsupported, and its capabilities say so up front.
// Usage: example_switching_stores [CONFIG [section.key=value]...]
//   e.g. example_switching_stores memcached.conf
//        example_switching_stores default.conf cache.backend=redis redis.servers=127.0.0.1:6379
#include <cstdio>
#include <string>

#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  const cachet::Capabilities caps = cache->backend().capabilities();
  std::printf("store: %s\ncapabilities:", std::string(cache->backend().name()).c_str());
  for (cachet::Capability cap : cachet::AllCapabilities()) {
    if (caps.has(cap)) std::printf(" %s", std::string(cachet::CapabilityName(cap)).c_str());
  }
  std::printf("\n");

  // Ask before relying on an optional operation, or handle unsupported.
  if (!cache->Set("session:42", "token").ok()) return 3;
  if (caps.has(cachet::Capability::kTouch)) {
    cachet::Status touched = cache->Touch("session:42", cachet::TtlFromSeconds(1800));
    std::printf("touch: %s\n", touched.ToString().c_str());
  }
  cachet::Status appended = cache->Append("session:42", ";renewed");
  if (appended.IsUnsupported()) {
    std::printf("this store cannot append: %s\n", std::string(appended.message()).c_str());
  }
  return appended.ok() || appended.IsUnsupported() ? 0 : 1;
}
