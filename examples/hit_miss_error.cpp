// A read answers one of three things: a hit with its value, a miss, or an error.
// A miss is not an error, and a store that is down is an error, never a miss.
// Usage: example_hit_miss_error [CONFIG [section.key=value]...]
#include <cstdint>
#include <cstdio>
#include <string>

#include "example_cache.h"

namespace {

// What an application usually does with each of the three outcomes.
template <class T>
std::string Describe(const cachet::Lookup<T>& lookup) {
  if (lookup.hit()) return "hit";
  if (lookup.miss()) return "miss";
  // lookup.error(): unavailable, timeout, invalid_argument, corruption, ...
  return "error: " + lookup.status().ToString();
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<cachet::Cache> cache = OpenExampleCache(argc, argv);
  if (!cache) return 2;
  if (!cache->Set("name", "Ada").ok()) return 3;

  cachet::Lookup<std::string> hit = cache->Get("name");
  cachet::Lookup<std::string> miss = cache->Get("no-such-key");
  // Text that is not a number, read as an integer: an error, not a miss.
  cachet::Lookup<std::int64_t> error = cache->Get<std::int64_t>("name");

  std::printf("name: %s\nno-such-key: %s\nname as an integer: %s\n", Describe(hit).c_str(),
              Describe(miss).c_str(), Describe(error).c_str());

  // value_or() treats a miss and an error alike: fine for a display default,
  // wrong where an outage must not look like "no such key".
  std::printf("no-such-key, with a default: %s\n", miss.value_or("(none)").c_str());

  // GetInto: the same outcomes as a Status, the value in a string the caller
  // keeps, whose storage serves read after read.
  std::string value;
  int hits = 0;
  for (const char* key : {"name", "no-such-key", "name"}) {
    cachet::Status read = cache->GetInto(key, &value);
    if (read.ok()) {
      ++hits;  // `value` holds the value
    } else if (read.IsError()) {
      std::printf("%s: error: %s\n", key, read.ToString().c_str());
    }  // else a miss, and `value` is empty
  }
  std::printf("GetInto: %d hits, last value %s\n", hits, value.c_str());
  return hit.hit() && miss.miss() && error.error() && hits == 2 ? 0 : 1;
}
