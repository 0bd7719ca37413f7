// Typed values: strings stay raw bytes, integers are decimal text (so counters
// work), Json documents go through the configured serializer.
// Usage: example_typed_values [CONFIG [section.key=value]...]
#include <cstdint>
#include <cstdio>

#include "example_cache.h"

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;

  // Strings and bytes: stored as they are, readable by any other client.
  if (!cache->Set("motd", std::string("closed on Sunday")).ok()) return 3;
  cachet::Lookup<std::string> motd = cache->Get<std::string>("motd");

  // Integers: decimal text, so the store's own counters work on them.
  if (!cache->Set("visits", 41).ok()) return 3;
  cachet::Result<std::uint64_t> visits = cache->Incr("visits");
  cachet::Lookup<std::int64_t> read_back = cache->Get<std::int64_t>("visits");

  // Documents: a cachet::Json (nlohmann::json), encoded by [cache] serializer.
  const cachet::Json user = {{"name", "Ada"}, {"langs", {"C++", "Perl"}}, {"admin", false}};
  if (!cache->Set("user:1", user).ok()) return 3;
  cachet::Lookup<cachet::Json> doc = cache->Get<cachet::Json>("user:1");

  if (!motd.hit() || !visits.ok() || !read_back.hit() || !doc.hit()) return 1;
  std::printf("motd: %s\nvisits: %llu (read back %lld)\nuser %s, first language %s\n",
              motd->c_str(), static_cast<unsigned long long>(*visits),
              static_cast<long long>(*read_back), doc->dump().c_str(),
              doc->at("langs").at(0).get<std::string>().c_str());
  return 0;
}
