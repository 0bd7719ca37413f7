// Opening a Cache without a config file: the embedded default, or settings
// written in code as INI text, validated exactly as a file would be.
// Usage: example_open_from_code
#include <cstdio>
#include <string>
#include <utility>

#include "cachet/cache.h"
#include "cachet/config.h"

namespace {

int Fail(const cachet::Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return 2;
}

}  // namespace

int main() {
  // An empty Config is the embedded default: the memory store, every default.
  auto embedded = cachet::Cache::Open(cachet::Config());
  if (!embedded.ok()) return Fail(embedded.status());

  // Settings from code. "app-settings" names the text in error messages, as a
  // file name would; the overrides replace values, like -o on the command line.
  const std::string settings =
      "[cache]\n"
      "backend = memory\n"
      "namespace = app:\n"
      "default_ttl = 300\n"
      "[memory]\n"
      "max_bytes = 16777216\n";
  const std::string overrides[] = {"cache.namespace=app-v2:"};
  auto config = cachet::Config::Parse(settings, "app-settings", overrides);
  if (!config.ok()) return Fail(config.status());
  auto cache = cachet::Cache::Open(std::move(config).value());
  if (!cache.ok()) return Fail(cache.status());

  std::printf("namespace %s, default TTL %lld ms\n", (*cache)->options().key_namespace.c_str(),
              static_cast<long long>((*cache)->options().default_ttl.count()));
  return 0;
}
