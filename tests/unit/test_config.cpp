// Config: parsing, overrides, validation against a schema, and rendering.
#include <array>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cachet/config.h"

using cachet::CacheOptionSpecs;
using cachet::Config;
using cachet::NearCacheOptionSpecs;
using cachet::OptionSpec;
using cachet::OptionType;

namespace {

constexpr std::array kMemcachedOptions = {
    OptionSpec{"servers", OptionType::kList, "127.0.0.1:11211", "host:port[:weight] list"},
    OptionSpec{"distribution", OptionType::kString, "ketama", "key placement", false, false,
               "ketama|modula"},
    OptionSpec{"io_timeout_ms", OptionType::kInt, "1000", "per-operation deadline"},
};

constexpr std::array kRedisOptions = {
    OptionSpec{"host", OptionType::kString, "127.0.0.1", "server host"},
    OptionSpec{"password", OptionType::kString, nullptr, "AUTH password", true, true},
};

const char* const kShopConf =
    "# shop.conf: a cache in front of memcached\n"                            // 1
    "[cache]\n"                                                               // 2
    "backend = memcached          # plugin name\n"                            // 3
    "compress_threshold = 2048\n"                                             // 4
    "metrics = off\n"                                                         // 5
    "\n"                                                                      // 6
    "[memcached]\n"                                                           // 7
    "servers = 10.0.0.1:11211:1, 10.0.0.2:11211:2   # host:port[:weight]\n";  // 8

Config MustParse(std::string_view text, std::vector<std::string> overrides = {}) {
  auto config = Config::Parse(text, "shop.conf", overrides);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  return std::move(config).value();
}

std::string ValidateError(std::string_view text, std::string_view section,
                          std::span<const OptionSpec> schema,
                          std::vector<std::string> overrides = {}) {
  Config config = MustParse(text, std::move(overrides));
  cachet::Status status = config.Validate(section, schema);
  REQUIRE(status.IsConfigError());
  return std::string(status.message());
}

}  // namespace

TEST_CASE("values come back with their line, inline comments removed", "[config]") {
  Config config = MustParse(kShopConf);
  const cachet::ConfigSection* cache = config.section("cache");
  REQUIRE(cache != nullptr);
  const cachet::ConfigValue* backend = cache->Find("backend");
  REQUIRE(backend != nullptr);
  CHECK(backend->value == "memcached");
  CHECK(backend->line == 3);
  CHECK(backend->source == "shop.conf");
  CHECK(config.SectionNames() == std::vector<std::string>{"cache", "memcached"});
}

// A config works from any working directory: its relative paths are its folder's.
TEST_CASE("relative paths in a file are taken from its folder and those of -o from here",
          "[config]") {
  const std::string overrides[] = {"other.key_file=from/here.key"};
  auto parsed = Config::Parse(
      "[other]\nca_file = certs/ca.crt\ncert_file = /etc/abs.crt\nca_dir = ../up\n"
      "dirs = a, /b, ./c\nkey_file = file.key\n",
      "/srv/app/conf/app.conf", overrides);
  REQUIRE(parsed.ok());
  const cachet::ConfigSection& other = *parsed->section("other");
  CHECK(other.GetPath("ca_file") == "/srv/app/conf/certs/ca.crt");
  CHECK(other.GetPath("cert_file") == "/etc/abs.crt");
  CHECK(other.GetPath("ca_dir") == "/srv/app/up");
  CHECK(other.GetPath("key_file") == "from/here.key");  // -o: the working directory's
  CHECK(other.GetPath("absent").empty());
  CHECK(other.GetPathList("dirs") ==
        std::vector<std::string>{"/srv/app/conf/a", "/b", "/srv/app/conf/c"});
  // A file named without a folder: its paths stay relative to the working directory.
  auto here = Config::Parse("[other]\nca_file = certs/ca.crt\n", "app.conf");
  REQUIRE(here.ok());
  CHECK(here->section("other")->GetPath("ca_file") == "certs/ca.crt");
}

TEST_CASE("validation fills defaults and typed getters read them", "[config]") {
  Config config = MustParse(kShopConf);
  REQUIRE(config.Validate("cache", CacheOptionSpecs()).ok());
  REQUIRE(config.Validate("memcached", kMemcachedOptions).ok());
  const cachet::ConfigSection& cache = *config.section("cache");
  CHECK(cache.GetInt("compress_threshold") == 2048);
  CHECK_FALSE(cache.GetBool("metrics"));
  CHECK(cache.GetString("serializer") == "json");
  CHECK(cache.GetDouble("compress_min_savings") == Approx(0.2));
  CHECK(cache.Find("serializer")->source == "default");
  const cachet::ConfigSection& memcached = *config.section("memcached");
  CHECK(memcached.GetList("servers") ==
        std::vector<std::string>{"10.0.0.1:11211:1", "10.0.0.2:11211:2"});
  CHECK(memcached.GetInt("io_timeout_ms") == 1000);
}

TEST_CASE("a section absent from the file validates as its defaults", "[config]") {
  Config config = MustParse("[cache]\nbackend = memory\n");
  REQUIRE(config.Validate("memcached", kMemcachedOptions).ok());
  REQUIRE(config.section("memcached") != nullptr);
  CHECK(config.section("memcached")->GetString("distribution") == "ketama");
}

TEST_CASE("every [cache] option has a help text and a default", "[config]") {
  CHECK(CacheOptionSpecs().size() == 20);
  for (const OptionSpec& spec : CacheOptionSpecs()) {
    INFO(spec.name);
    CHECK(spec.help != nullptr);
    CHECK(spec.default_value != nullptr);
  }
}

TEST_CASE("every [near_cache] option has a help text and a default", "[config]") {
  CHECK(NearCacheOptionSpecs().size() == 3);
  for (const OptionSpec& spec : NearCacheOptionSpecs()) {
    INFO(spec.name);
    CHECK(spec.help != nullptr);
    CHECK(spec.default_value != nullptr);
  }
}

TEST_CASE("a typo'd key names the file, the line, and the likely option", "[config]") {
  std::string error =
      ValidateError("[memcached]\n\nsrvers = a:1\n", "memcached", kMemcachedOptions);
  CHECK(error == "shop.conf:3: [memcached] srvers: unknown option (did you mean 'servers'?)");
}

TEST_CASE("an unknown key far from every option gets no suggestion", "[config]") {
  std::string error = ValidateError("[cache]\ncolour = blue\n", "cache", CacheOptionSpecs());
  CHECK(error == "shop.conf:2: [cache] colour: unknown option");
}

TEST_CASE("a bad integer names its line and value", "[config]") {
  std::string error = ValidateError("[cache]\nbackend = memory\n\ncompress_threshold = abc\n",
                                    "cache", CacheOptionSpecs());
  CHECK(error == "shop.conf:4: [cache] compress_threshold: 'abc' is not an integer");
}

TEST_CASE("bad booleans and numbers are refused", "[config]") {
  CHECK(ValidateError("[cache]\nmetrics = maybe\n", "cache", CacheOptionSpecs())
            .starts_with("shop.conf:2: [cache] metrics: 'maybe' is not a boolean"));
  CHECK(ValidateError("[cache]\ncompress_min_savings = 20%\n", "cache", CacheOptionSpecs()) ==
        "shop.conf:2: [cache] compress_min_savings: '20%' is not a number");
  CHECK(ValidateError("[cache]\ndefault_ttl = 1.5\n", "cache", CacheOptionSpecs()) ==
        "shop.conf:2: [cache] default_ttl: '1.5' is not an integer");
}

TEST_CASE("a value outside the choices lists them", "[config]") {
  std::string error = ValidateError("[cache]\ncompressor = lz4\n", "cache", CacheOptionSpecs());
  CHECK(error == "shop.conf:2: [cache] compressor: 'lz4' is not one of none|zlib|gzip|zstd");
}

TEST_CASE("a missing required option names the file and the key", "[config]") {
  std::string error = ValidateError("[redis]\nhost = 127.0.0.1\n", "redis", kRedisOptions);
  CHECK(error == "shop.conf: [redis] password: required option is missing");
}

TEST_CASE("all errors of a section are reported, in line order", "[config]") {
  std::string error = ValidateError("[cache]\nserializer = yaml\nmetrics = 2\nbackend = x\n",
                                    "cache", CacheOptionSpecs());
  CHECK(error ==
        "shop.conf:2: [cache] serializer: 'yaml' is not one of json|msgpack|cbor\n"
        "shop.conf:3: [cache] metrics: '2' is not a boolean (true/false, yes/no, on/off, 1/0)");
}

TEST_CASE("a key set twice in a section names both lines", "[config]") {
  auto config =
      Config::Parse("[cache]\nbackend = memory\n[redis]\n[cache]\nbackend = redis\n", "shop.conf");
  REQUIRE(config.status().IsConfigError());
  CHECK(config.status().message() == "shop.conf:5: [cache] backend: set twice, on lines 2 and 5");
}

TEST_CASE("malformed lines are errors with their line number", "[config]") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"[cache]\nbackend memory\n",
       "shop.conf:2: 'backend memory': expected 'key = value' or '[section]'"},
      {"backend = memory\n", "shop.conf:1: backend: key outside any section (add e.g. [cache])"},
      {"[cache\n", "shop.conf:1: '[cache': a section header needs a closing ']'"},
      {"\n[]\n", "shop.conf:2: empty section name '[]'"},
      {"[a.b]\n", "shop.conf:1: '[a.b]': a section name cannot contain blanks or '.'"},
      {"[cache]\n = memory\n", "shop.conf:2: '= memory': no key"},
  };
  for (const Case& c : cases) {
    auto config = Config::Parse(c.text, "shop.conf");
    INFO(c.text);
    REQUIRE(config.status().IsConfigError());
    CHECK(config.status().message() == c.message);
  }
}

TEST_CASE("an override wins over the file and remembers where it came from", "[config]") {
  Config config = MustParse(kShopConf, {"cache.compress_threshold=99", "redis.host = 10.1.1.1"});
  const cachet::ConfigValue* threshold = config.section("cache")->Find("compress_threshold");
  CHECK(threshold->value == "99");
  CHECK(threshold->source == "-o");
  CHECK(threshold->line == 0);
  REQUIRE(config.section("redis") != nullptr);
  CHECK(config.section("redis")->GetString("host") == "10.1.1.1");
}

TEST_CASE("an override with a bad value is reported as from -o", "[config]") {
  std::string error =
      ValidateError(kShopConf, "cache", CacheOptionSpecs(), {"cache.compress_threshold=lots"});
  CHECK(error == "-o: [cache] compress_threshold: 'lots' is not an integer");
}

TEST_CASE("a malformed override is an error naming it", "[config]") {
  for (const char* bad : {"cache.backend", "backend=memory", ".backend=x", "cache.=x", ""}) {
    std::vector<std::string> overrides{bad};
    auto config = Config::Parse(kShopConf, "shop.conf", overrides);
    INFO(bad);
    REQUIRE(config.status().IsConfigError());
    CHECK(config.status().message() ==
          "-o '" + std::string(bad) + "': malformed override, expected section.key=value");
  }
}

TEST_CASE("Render masks secrets and shows the effective settings", "[config]") {
  Config config = MustParse("[redis]\npassword = hunter2\n[other]\napi_token = abc\nname = x\n");
  REQUIRE(config.Validate("redis", kRedisOptions).ok());
  std::string text = config.Render();
  CHECK(text.find("hunter2") == std::string::npos);
  CHECK(text.find("password = ********") != std::string::npos);
  CHECK(text.find("host = 127.0.0.1") != std::string::npos);
  // Not validated, so no schema: a name that looks secret is masked anyway.
  CHECK(text.find("abc") == std::string::npos);
  CHECK(text.find("name = x") != std::string::npos);
}

TEST_CASE("LoadFile names the file, and reads it like Parse", "[config]") {
  auto missing = Config::LoadFile("/nonexistent/cachet.conf");
  REQUIRE(missing.status().IsConfigError());
  CHECK(missing.status().message() == "/nonexistent/cachet.conf: cannot read: no such file");

  std::filesystem::path file =
      std::filesystem::temp_directory_path() / "cachet_test_config_load.conf";
  std::ofstream(file) << "[cache]\r\nbackend = redis\r\ndefault_ttl = x\r\n";
  auto config = Config::LoadFile(file.string());
  REQUIRE(config.ok());
  CHECK(config->path() == file.string());
  CHECK(config->section("cache")->GetString("backend") == "redis");
  cachet::Status status = config->Validate("cache", CacheOptionSpecs());
  CHECK(status.message() == file.string() + ":3: [cache] default_ttl: 'x' is not an integer");
  std::filesystem::remove(file);
}

TEST_CASE("an empty file is a valid config of defaults", "[config]") {
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / "cachet_test_config_empty.conf";
  std::ofstream{file};
  auto config = Config::LoadFile(file.string());
  std::filesystem::remove(file);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  REQUIRE(config->Validate("cache", CacheOptionSpecs()).ok());
  CHECK(config->section("cache")->GetString("backend") == "memory");
}

TEST_CASE("a validated section keeps its schema after the caller's copy is gone", "[config]") {
  // A plugin's schema lives in its library, which may be unloaded while the
  // Config lives on; Render must still know which values are secret.
  Config config = MustParse("[vault]\npin = 1234\n");
  {
    std::string name = "pin";
    std::vector<OptionSpec> schema{{name.c_str(), OptionType::kInt, nullptr, "a PIN", false, true}};
    REQUIRE(config.Validate("vault", schema).ok());
    name = "xxx";
  }
  const cachet::ConfigSection& vault = *config.section("vault");
  REQUIRE(vault.schema().size() == 1);
  CHECK(std::string(vault.schema()[0].name) == "pin");
  CHECK(config.Render() == "[vault]\npin = ********\n");
}

TEST_CASE("an integer out of bounds names its line, section, value and bounds", "[config]") {
  Config config = MustParse("[memcached]\nio_timeout_ms = 0\n");
  REQUIRE(config.Validate("memcached", kMemcachedOptions).ok());
  const cachet::ConfigSection& section = *config.section("memcached");
  std::int64_t value = 42;
  const cachet::Status status = section.GetIntInRange("io_timeout_ms", 1, 3600000, &value);
  REQUIRE(status.IsConfigError());
  CHECK(status.message() ==
        "shop.conf:2: [memcached] io_timeout_ms = 0: must be between 1 and "
        "3600000");
  CHECK(value == 42);
  REQUIRE(section.GetIntInRange("io_timeout_ms", 0, 10, &value).ok());
  CHECK(value == 0);
}

TEST_CASE("ErrorAt never shows a secret option's value", "[config][security]") {
  Config config = MustParse("[redis]\npassword = hunter2\n[other]\nsentinel_password = s3cr3t\n");
  REQUIRE(config.Validate("redis", kRedisOptions).ok());
  // Validated: the schema says password is secret.
  const cachet::Status status = config.section("redis")->ErrorAt("password", "is refused");
  CHECK(status.message() == "shop.conf:2: [redis] password = ********: is refused");
  CHECK(status.ToString().find("hunter2") == std::string::npos);
  // Not validated: a name that looks secret is masked anyway.
  const cachet::Status other =
      config.section("other")->ErrorAt("sentinel_password", "needs mode = sentinel");
  CHECK(other.message() ==
        "shop.conf:4: [other] sentinel_password = ********: needs mode = sentinel");
  CHECK(other.ToString().find("s3cr3t") == std::string::npos);
  // A plain option still shows its value; a default's is marked so, with no place.
  CHECK(config.section("redis")->ErrorAt("host", "is refused").message() ==
        "[redis] host = 127.0.0.1 (the default): is refused");
}
