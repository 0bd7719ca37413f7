// Cache::Open: from a config to a working Cache on the memory plugin of the
// build tree, and the errors of a config that names what does not exist.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <spdlog/sinks/ostream_sink.h>
#include <sstream>
#include <string>

#include "cachet/cache.h"
#include "cachet/compressor.h"
#include "cachet/config.h"
#include "cachet/log.h"
#include "zstd_frames.h"

using cachet::Cache;
using cachet::Config;
using cachet::ItemView;
using cachet::StoreMode;
using cachet::Ttl;
using cachet::test::ZstdRleFrame;

namespace {

cachet::Result<std::unique_ptr<Cache>> OpenText(const std::string& text) {
  auto config = Config::Parse(text, "open-test.conf");
  REQUIRE(config.ok());
  return Cache::Open(std::move(config).value());
}

// Flags of the cachet profile for bytes compressed by zlib, gzip or zstd.
constexpr std::uint32_t kZlibBytes = 1u << 8;
constexpr std::uint32_t kGzipBytes = 2u << 8;
constexpr std::uint32_t kZstdBytes = 3u << 8;

std::string Compressed(const char* name, const std::string& in) {
  auto compressor = cachet::CompressorRegistry::Global().Create(name);
  REQUIRE(compressor.ok());
  std::string out;
  REQUIRE((*compressor)->Compress(in, &out).ok());
  return out;
}

// Stores `bytes` with `flags` as they are, bypassing the codec, as another
// client (or an attacker with access to the store) could.
void Plant(Cache& cache, const std::string& key, const std::string& bytes, std::uint32_t flags) {
  REQUIRE(cache.StoreItem(StoreMode::kSet, key, ItemView(bytes, flags)).ok());
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

TEST_CASE("log_level applies when the config sets it and leaves the level alone otherwise",
          "[cache][open][log]") {
  // The logger is the process's: a Cache whose config is silent on it keeps
  // what the application (or an earlier Cache) chose.
  REQUIRE(cachet::SetLogLevel("error").ok());
  REQUIRE(OpenText("[cache]\nbackend = memory\n").ok());
  CHECK(cachet::Logger()->level() == spdlog::level::err);
  REQUIRE(OpenText("[cache]\nbackend = memory\nlog_level = warn\n").ok());
  CHECK(cachet::Logger()->level() == spdlog::level::warn);
  REQUIRE(OpenText("[cache]\nbackend = memory\n").ok());
  CHECK(cachet::Logger()->level() == spdlog::level::warn);
  REQUIRE(cachet::SetLogLevel("info").ok());
}

TEST_CASE("a section that names no plugin is a config error", "[cache][open]") {
  auto cache = OpenText("[cache]\nbackend = memory\n[nosuch]\nkey = value\n");
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().IsConfigError());
  CHECK(cache.status().message() == "open-test.conf:4: [nosuch]: no plugin named 'nosuch'");
}

// Without `backend` the embedded store would take the writes meant for the
// store the config describes, and they would reach no server.
TEST_CASE("a store's section without backend set is a config error", "[cache][open]") {
  for (const std::string& text : {std::string("[memcached]\nservers = 127.0.0.1:1\n"),
                                  std::string("[cache]\nnamespace = a:\n[redis]\n")}) {
    INFO(text);
    auto cache = OpenText(text);
    REQUIRE_FALSE(cache.ok());
    CHECK(cache.status().IsConfigError());
    CHECK_THAT(std::string(cache.status().message()),
               Catch::Contains("backend is not set") && Catch::Contains("set backend = "));
  }
  // Chosen explicitly, the embedded store may sit beside other stores' sections;
  // its own section, or [near_cache], needs no backend line.
  CHECK(OpenText("[cache]\nbackend = memory\n[memcached]\nservers = 127.0.0.1:1\n").ok());
  CHECK(OpenText("[memory]\nmax_bytes = 1048576\n").ok());
  CHECK(OpenText("[cache]\nnamespace = a:\n").ok());
}

// The INI reader keeps quotes: namespace = "app:" would put them in every key.
TEST_CASE("a quoted config value is a config error", "[cache][open][config]") {
  for (const char* text : {"[cache]\nnamespace = \"app:\"\n", "[cache]\nnamespace = 'app:'\n"}) {
    INFO(text);
    auto config = Config::Parse(text, "quoted.conf");
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().IsConfigError());
    CHECK(config.status().message() ==
          "quoted.conf:2: [cache] namespace: the value is in quotes, which would be part of it; "
          "write it without them");
  }
  CHECK(Config::Parse("[cache]\nnamespace = a\"b\n", "inner.conf").ok());
  const std::vector<std::string> overrides{"cache.namespace=\"app:\""};
  const auto overridden = Config::Parse("[cache]\n", "o.conf", overrides);
  REQUIRE_FALSE(overridden.ok());
  CHECK_THAT(std::string(overridden.status().message()),
             Catch::Contains("[cache] namespace: the value is in quotes"));

  // A quoted item of a list is refused too, before any server is asked.
  auto listed = OpenText("[cache]\nbackend = memcached\n[memcached]\n"
                         "servers = \"127.0.0.1:1\", 127.0.0.1:2\n");
  REQUIRE_FALSE(listed.ok());
  CHECK(listed.status().IsConfigError());
  CHECK_THAT(std::string(listed.status().message()),
             Catch::Contains("'\"127.0.0.1:1\"' is in quotes"));
}

TEST_CASE("a plugin_path folder that does not exist is logged as a warning", "[cache][open]") {
  // The logger's output, caught for the length of the case.
  std::ostringstream logged;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(logged);
  cachet::Logger()->sinks().push_back(sink);
  const std::string existing = std::filesystem::temp_directory_path().string();
  auto opened = OpenText("[cache]\nbackend = memory\nplugin_path = /no/such/cachet-dir, " +
                         existing + "\n");
  cachet::Logger()->sinks().pop_back();
  REQUIRE(opened.ok());  // the memory plugin is found beside the library
  const std::string text = logged.str();
  CHECK(text.find("open-test.conf:3: [cache] plugin_path: no folder '/no/such/cachet-dir'") !=
        std::string::npos);
  CHECK(text.find(existing + "'") == std::string::npos);
}

TEST_CASE("a CACHET_PLUGIN_PATH folder that does not exist is logged as a warning",
          "[cache][open]") {
  std::ostringstream logged;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(logged);
  cachet::Logger()->sinks().push_back(sink);
  const std::string existing = std::filesystem::temp_directory_path().string();
  REQUIRE(setenv("CACHET_PLUGIN_PATH", ("/no/such/env-dir::" + existing).c_str(), 1) == 0);
  auto opened = OpenText("[cache]\nbackend = memory\n");
  unsetenv("CACHET_PLUGIN_PATH");
  cachet::Logger()->sinks().pop_back();
  REQUIRE(opened.ok());
  const std::string text = logged.str();
  CHECK(text.find("CACHET_PLUGIN_PATH: no folder '/no/such/env-dir'") != std::string::npos);
  CHECK(text.find(existing + "'") == std::string::npos);
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
  // The schema cannot express a range; the plugin's validation hook checks it
  // before any backend is made, naming the line and the key.
  REQUIRE_FALSE(out_of_range.ok());
  CHECK(out_of_range.status().IsConfigError());
  CHECK_THAT(std::string(out_of_range.status().message()),
             Catch::Contains(":4: [memory] shards = 0: must be between 1 and 1024"));
}

TEST_CASE("a bad [cache] value is a config error", "[cache][open]") {
  auto cache = OpenText("[cache]\nbackend = memory\ncompressor = lzma\n");
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().IsConfigError());
  auto negative = OpenText("[cache]\nbackend = memory\ndefault_ttl = -1\n");
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().IsConfigError());
}

TEST_CASE("the [cache] GetOrCompute keys set the Cache's defaults", "[cache][open][compute]") {
  auto cache = OpenText(
      "[cache]\nbackend = memory\nlease_ms = 1500\nlease_wait_ms = 700\nstale_ms = 30000\n"
      "early_refresh = 1.5\nnegative_ttl = 10\n");
  REQUIRE(cache.ok());
  const cachet::ComputeOptions& compute = (*cache)->options().compute;
  CHECK(compute.lease == std::chrono::milliseconds(1500));
  CHECK(compute.lease_wait == std::chrono::milliseconds(700));
  CHECK(compute.stale == std::chrono::milliseconds(30000));
  CHECK(compute.early_refresh == 1.5);
  CHECK(compute.negative_ttl == Ttl{10000});
  CHECK_FALSE(compute.ttl.has_value());  // default_ttl applies

  // Too large to add to the clock's now (it would wrap), or to an int (a level).
  for (const char* bad : {"lease_ms = -1", "stale_ms = -5", "negative_ttl = -1",
                          "early_refresh = -0.5", "lease_wait_ms = -2",
                          "lease_ms = 9223372036854775807", "lease_wait_ms = 315360000001",
                          "compression_level = 4294967297"}) {
    INFO(bad);
    auto refused = OpenText(std::string("[cache]\nbackend = memory\n") + bad + "\n");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().IsConfigError());
  }
}

TEST_CASE("max_value_size bounds the values the Cache writes", "[cache][open][bounds]") {
  auto cache = OpenText(
      "[cache]\nbackend = memory\ncompressor = zstd\nmax_value_size = 1048576\n"
      "[memory]\nmax_item_size = 4194304\n");
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  Cache& c = **cache;
  CHECK(c.codec().options().max_value_size == 1048576);
  const std::string at_bound(1048576, 'v');
  REQUIRE(c.Set("at", at_bound).ok());
  auto read = c.Get<std::string>("at");
  REQUIRE(read.hit());
  CHECK(*read == at_bound);

  // One byte more is refused before anything is stored, compressible or not.
  cachet::Status over = c.Set("over", std::string(1048577, 'v'));
  CHECK(over.IsTooLarge());
  CHECK_THAT(std::string(over.message()), Catch::Contains("max_value_size"));
  CHECK(c.Get<std::string>("over").miss());

  auto zero = OpenText("[cache]\nbackend = memory\nmax_value_size = 0\n");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().IsConfigError());
}

TEST_CASE("compressed values planted in the store read as errors past max_value_size",
          "[cache][open][bounds]") {
  auto cache = OpenText("[cache]\nbackend = memory\nmax_value_size = 1048576\n");
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  Cache& c = **cache;
  const std::uint64_t huge = std::uint64_t{200} << 20;
  Plant(c, "zstd-declared", ZstdRleFrame(huge, 'x', huge), kZstdBytes);
  Plant(c, "zstd-unknown", ZstdRleFrame(huge, 'x', std::nullopt), kZstdBytes);
  Plant(c, "zlib", Compressed("zlib", std::string(1048577, '\0')), kZlibBytes);
  Plant(c, "gzip", Compressed("gzip", std::string(1048577, '\0')), kGzipBytes);
  for (const char* key : {"zstd-declared", "zstd-unknown", "zlib", "gzip"}) {
    INFO(key);
    auto read = c.Get<std::string>(key);
    REQUIRE(read.error());
    CHECK(read.status().IsTooLarge());
    CHECK_THAT(std::string(read.status().message()), Catch::Contains("1048576"));
  }

  Plant(c, "garbage", "not a zstd frame", kZstdBytes);
  CHECK(c.Get<std::string>("garbage").status().IsCorruption());
  Plant(c, "at-bound", ZstdRleFrame(1048576, 'x', std::nullopt), kZstdBytes);
  auto at_bound = c.Get<std::string>("at-bound");
  REQUIRE(at_bound.hit());
  CHECK(at_bound->size() == 1048576);
}

TEST_CASE("the default max_value_size stops a zstd bomb", "[cache][open][bounds]") {
  auto cache = OpenText("[cache]\nbackend = memory\n");
  REQUIRE(cache.ok());
  Cache& c = **cache;
  // About 6 KiB that would expand to 200 MiB.
  Plant(c, "bomb", ZstdRleFrame(std::uint64_t{200} << 20, 'x', std::nullopt), kZstdBytes);
  auto read = c.Get<std::string>("bomb");
  REQUIRE(read.error());
  CHECK(read.status().IsTooLarge());
}
