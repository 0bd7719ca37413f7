// Cache::Open: from a config to a working Cache on the memory plugin of the
// build tree, and the errors of a config that names what does not exist.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "cachet/cache.h"
#include "cachet/config.h"

using cachet::Cache;
using cachet::Config;
using cachet::Ttl;

namespace {

cachet::Result<std::unique_ptr<Cache>> OpenText(const std::string& text) {
  auto config = Config::Parse(text, "open-test.conf");
  REQUIRE(config.ok());
  return Cache::Open(std::move(config).value());
}

}  // namespace

TEST_CASE("Open reads the [cache] settings and opens the memory store", "[cache][open]") {
  auto cache =
      OpenText("[cache]\nbackend = memory\nnamespace = app:\ndefault_ttl = 300\nmetrics = false\n");
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  Cache& c = **cache;
  CHECK(c.backend().name() == "memory");
  CHECK(c.options().key_namespace == "app:");
  CHECK(c.options().default_ttl == Ttl{300000});
  CHECK_FALSE(c.options().metrics);

  REQUIRE(c.Set("k", std::string("v")).ok());
  cachet::Item raw;
  REQUIRE(c.backend().Get("app:k", &raw).ok());
  CHECK(raw.value == "v");
}

TEST_CASE("Open with no config at all opens the embedded default", "[cache][open]") {
  auto cache = Cache::Open(Config());
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  CHECK((*cache)->backend().name() == "memory");
}

TEST_CASE("a section that names no plugin is a config error", "[cache][open]") {
  auto cache = OpenText("[cache]\nbackend = memory\n[nosuch]\nkey = value\n");
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().IsConfigError());
  CHECK(cache.status().message() == "open-test.conf: [nosuch]: no plugin named 'nosuch'");
}

TEST_CASE("an unknown backend is a plugin error naming it", "[cache][open]") {
  auto cache = OpenText("[cache]\nbackend = nosuchstore\n");
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().IsPluginError());
  CHECK_THAT(std::string(cache.status().message()), Catch::Contains("nosuchstore"));
}

TEST_CASE("the backend's section is validated against its plugin's schema", "[cache][open]") {
  auto unknown = OpenText("[cache]\nbackend = memory\n[memory]\nmax_byte = 10\n");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().IsConfigError());
  CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("max_byte"));

  auto out_of_range = OpenText("[cache]\nbackend = memory\n[memory]\nshards = 0\n");
  // The schema cannot express a range; the factory checks it, and the loader
  // reports the factory's refusal as a plugin error that quotes it.
  REQUIRE_FALSE(out_of_range.ok());
  CHECK(out_of_range.status().IsPluginError());
  CHECK_THAT(std::string(out_of_range.status().message()), Catch::Contains("shards"));
}

TEST_CASE("a bad [cache] value is a config error", "[cache][open]") {
  auto cache = OpenText("[cache]\nbackend = memory\ncompressor = lzma\n");
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().IsConfigError());
  auto negative = OpenText("[cache]\nbackend = memory\ndefault_ttl = -1\n");
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().IsConfigError());
}
