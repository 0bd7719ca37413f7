// PluginLoader and Plugin: loading the test plugins (tests/plugins), one clear
// line for every broken one, and backends that keep their library loaded.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cachet/config.h"
#include "cachet/plugin.h"

namespace fs = std::filesystem;
using cachet::PluginLoader;

namespace {

const fs::path kPluginDir = CACHET_TEST_PLUGIN_DIR;

PluginLoader TestLoader() { return PluginLoader({kPluginDir}); }

fs::path PluginFile(std::string_view name) { return kPluginDir / PluginLoader::FileNameFor(name); }

// The message of a load that must fail, checked to be one line about `name`'s file.
std::string LoadFailure(std::string_view name) {
  auto plugin = TestLoader().Load(name);
  REQUIRE(plugin.status().IsPluginError());
  std::string message(plugin.status().message());
  INFO(message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.starts_with("plugin " + PluginFile(name).string() + ": "));
  return message;
}

bool IsMapped(const fs::path& file) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // RTLD_NOLOAD still counts a reference; give it back.
  return true;
}

}  // namespace

TEST_CASE("a working plugin loads by name and describes itself", "[plugin]") {
  auto plugin = TestLoader().Load("tinymap");
  INFO(plugin.status().ToString());
  REQUIRE(plugin.ok());
  CHECK((*plugin)->name() == "tinymap");
  CHECK((*plugin)->path() == PluginFile("tinymap"));
  CHECK((*plugin)->options().size() == 1);
  CHECK(std::string((*plugin)->descriptor().fingerprint) == cachet::CoreBuildFingerprint());
}

TEST_CASE("a plugin loads by explicit path", "[plugin]") {
  PluginLoader empty_search_path({});
  auto plugin = empty_search_path.Load(PluginFile("tinymap").string());
  INFO(plugin.status().ToString());
  REQUIRE(plugin.ok());
  CHECK((*plugin)->name() == "tinymap");
}

TEST_CASE("the backend keeps its library loaded after plugin and loader are gone", "[plugin]") {
  std::shared_ptr<cachet::Backend> backend;
  {
    PluginLoader loader = TestLoader();
    auto plugin = loader.Load("tinymap");
    REQUIRE(plugin.ok());
    cachet::ConfigSection options("tinymap");
    auto made = (*plugin)->CreateBackend(options, nullptr);
    INFO(made.status().ToString());
    REQUIRE(made.ok());
    backend = *made;
  }
  REQUIRE(IsMapped(PluginFile("tinymap")));
  // Every call below runs code that lives in the plugin's library.
  CHECK(backend->name() == "tinymap");
  REQUIRE(backend->Store(cachet::StoreMode::kSet, "k", cachet::ItemView("v", 7), {}).ok());
  cachet::Item item;
  REQUIRE(backend->Get("k", &item).ok());
  CHECK(item.value == "v");
  CHECK(item.flags == 7);
  CHECK(backend->Remove("k").ok());
  CHECK(backend->Get("k", &item).IsNotFound());
  backend.reset();  // runs the plugin's destructor, then releases the library
}

TEST_CASE("a missing plugin lists the directories searched", "[plugin]") {
  PluginLoader loader({"/nonexistent/one", kPluginDir});
  auto plugin = loader.Load("nosuchstore");
  REQUIRE(plugin.status().IsPluginError());
  CHECK(plugin.status().message() ==
        "plugin cachet-nosuchstore.so: not found in "
        "/nonexistent/one, " +
            kPluginDir.string());
}

TEST_CASE("a missing explicit path is not found", "[plugin]") {
  auto plugin = TestLoader().Load("/nonexistent/cachet-x.so");
  REQUIRE(plugin.status().IsPluginError());
  CHECK(plugin.status().message() == "plugin /nonexistent/cachet-x.so: not found");
}

TEST_CASE("a directory is not a plugin", "[plugin]") {
  auto plugin = TestLoader().Load(kPluginDir.string() + "/");
  REQUIRE(plugin.status().IsPluginError());
  CHECK(plugin.status().message().ends_with(": not a regular file"));
}

TEST_CASE("a file that is not a shared library says why", "[plugin]") {
  std::string message = LoadFailure("not-a-library");
  CHECK(message.find("cannot load: ") != std::string::npos);
  CHECK(message.find("Bad file descriptor") == std::string::npos);
  CHECK(message.find("ELF") != std::string::npos);
}

TEST_CASE("an unresolved symbol is reported by name at load time", "[plugin]") {
  std::string message = LoadFailure("unresolved-symbol");
  CHECK(message.find("cachet_test_symbol_that_does_not_exist") != std::string::npos);
}

TEST_CASE("a library without the entry point is not a cachet plugin", "[plugin]") {
  CHECK(LoadFailure("no-entry-point")
            .ends_with(": not a cachet plugin: no cachet_plugin_v1 entry point"));
}

TEST_CASE("a wrong ABI version is refused before anything else", "[plugin]") {
  // wrong_abi.cpp claims this cachet's version plus 41.
  const std::string expected = ": ABI version " + std::to_string(cachet::kPluginAbiVersion + 41) +
                               ", but this cachet reads version " +
                               std::to_string(cachet::kPluginAbiVersion) +
                               " (rebuild the plugin against this cachet)";
  CHECK(LoadFailure("wrong-abi").ends_with(expected));
}

// A default goes to the factory as it is, so it must pass its own option's
// checks; and `cachet plugins` prints every option's help.
TEST_CASE("a plugin whose options break the schema's rules is refused", "[plugin]") {
  const std::string bad_default = LoadFailure("bad-default");
  INFO(bad_default);
  CHECK(bad_default.find(": option 'size' has a bad default 'abc': ") != std::string::npos);
  CHECK(LoadFailure("null-help").ends_with(": option 'size' has no help"));
}

TEST_CASE("a wrong fingerprint is refused, printing both", "[plugin]") {
  std::string message = LoadFailure("wrong-fingerprint");
  CHECK(message.find("build fingerprint mismatch") != std::string::npos);
  CHECK(message.find("cachet 0.0.0; some other compiler") != std::string::npos);
  CHECK(message.find(cachet::CoreBuildFingerprint()) != std::string::npos);
}

TEST_CASE("a plugin whose descriptor names another plugin is refused, naming both", "[plugin]") {
  // cachet-renamed.so is the tinymap plugin: asked for "renamed", it must not
  // load and validate the [renamed] section under another store's schema.
  std::string message = LoadFailure("renamed");
  CHECK(message.ends_with(": its descriptor names the plugin 'tinymap', not 'renamed'"));
  // Its explicit path still opens it, as the plugin it says it is.
  auto by_path = TestLoader().Load(PluginFile("renamed").string());
  REQUIRE(by_path.ok());
  CHECK((*by_path)->name() == "tinymap");
}

TEST_CASE("a failing factory is a plugin error carrying its reason", "[plugin]") {
  auto plugin = TestLoader().Load("failing-factory");
  REQUIRE(plugin.ok());
  cachet::ConfigSection options("failing-factory");
  auto backend = (*plugin)->CreateBackend(options, nullptr);
  REQUIRE(backend.status().IsPluginError());
  CHECK(backend.status().message() ==
        "plugin " + PluginFile("failing-factory").string() +
            ": create failed: unavailable: 127.0.0.1:1: connection refused");
}

TEST_CASE("a factory that returns ok without a backend is an error", "[plugin]") {
  auto plugin = TestLoader().Load("null-backend");
  REQUIRE(plugin.ok());
  cachet::ConfigSection options("null-backend");
  auto backend = (*plugin)->CreateBackend(options, nullptr);
  REQUIRE(backend.status().IsPluginError());
  CHECK(
      backend.status().message().ends_with("create failed: the factory returned ok but no "
                                           "backend"));
}

TEST_CASE("Discover finds every plugin file once, the first directory winning", "[plugin]") {
  // A second directory holding a broken file under the working plugin's name:
  // the first directory's tinymap must win.
  fs::path shadow = fs::temp_directory_path() / "cachet_test_discover_shadow";
  fs::create_directories(shadow);
  fs::copy_file(PluginFile("not-a-library"), shadow / PluginLoader::FileNameFor("tinymap"),
                fs::copy_options::overwrite_existing);
  auto found = PluginLoader({kPluginDir, shadow}).Discover();
  fs::remove_all(shadow);

  std::vector<std::string> loaded;
  int failures = 0;
  for (const auto& plugin : found) {
    if (plugin.ok()) {
      loaded.emplace_back((*plugin)->name());
    } else {
      ++failures;
    }
  }
  // tinymap, careless-get, failing-factory and null-backend load (the
  // factories of the last two fail later); not-a-library, unresolved-symbol,
  // no-entry-point, wrong-abi, tinymap-v1 (an older ABI), wrong-fingerprint,
  // renamed (a file name that is not its descriptor's), bad-default and
  // null-help (options that break the schema's rules) do not.
  std::sort(loaded.begin(), loaded.end());
  CHECK(loaded ==
        std::vector<std::string>{"careless-get", "failing-factory", "null-backend", "tinymap"});
  CHECK(failures == 9);
}

// A [tinymap] section with `greeting`, validated against the plugin's schema.
cachet::Config GreetingConfig(const cachet::Plugin& plugin, const std::string& greeting) {
  auto config = cachet::Config::Parse("[tinymap]\ngreeting = " + greeting + "\n", "tiny.conf");
  REQUIRE(config.ok());
  REQUIRE(config->Validate("tinymap", plugin.options()).ok());
  return *config;
}

TEST_CASE("a plugin's validation hook runs without creating a backend", "[plugin]") {
  auto plugin = TestLoader().Load("tinymap");
  REQUIRE(plugin.ok());
  REQUIRE((*plugin)->descriptor().validate != nullptr);
  CHECK((*plugin)->ValidateOptions(*GreetingConfig(**plugin, "hi").section("tinymap")).ok());
  const cachet::Config long_greeting = GreetingConfig(**plugin, "a-very-long-greeting");
  const cachet::Status refused = (*plugin)->ValidateOptions(*long_greeting.section("tinymap"));
  REQUIRE(refused.IsConfigError());
  CHECK(refused.message() ==
        "tiny.conf:2: [tinymap] greeting = a-very-long-greeting: longer than 16 bytes");
}

TEST_CASE(
    "a plugin built for an older ABI version (another layout of what crosses the boundary) is "
    "refused",
    "[plugin]") {
  // Its descriptor is version 1 and otherwise whole: the version alone refuses it.
  CHECK(LoadFailure("tinymap-v1")
            .ends_with(": ABI version 1, but this cachet reads version 12 (rebuild the plugin "
                       "against this cachet)"));
}

TEST_CASE("AvailableNames lists plugin files by name without loading them", "[plugin]") {
  const std::vector<std::string> names = TestLoader().AvailableNames();
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(std::count(names.begin(), names.end(), "tinymap") == 1);
  CHECK(std::count(names.begin(), names.end(), "not-a-library") == 1);
}

TEST_CASE("the default search path puts config dirs, then CACHET_PLUGIN_PATH first", "[plugin]") {
  REQUIRE(setenv("CACHET_PLUGIN_PATH", "/env/one::/env/two", 1) == 0);
  std::vector<std::string> config_dirs{"/config/dir"};
  auto dirs = PluginLoader::DefaultSearchPath(config_dirs);
  unsetenv("CACHET_PLUGIN_PATH");
  REQUIRE(dirs.size() >= 4);
  CHECK(dirs[0] == "/config/dir");
  CHECK(dirs[1] == "/env/one");
  CHECK(dirs[2] == "/env/two");
  CHECK(dirs[3] == fs::path(CACHET_BINARY_DIR) / "lib" / "cachet" / "plugins");
}

TEST_CASE("the default search path ends beside libcachet, with no compiled-in folder", "[plugin]") {
  unsetenv("CACHET_PLUGIN_PATH");
  // This test runs the build tree's libcachet (build/lib), so its plugins are the
  // build tree's; an installed libcachet would name its own lib/cachet/plugins.
  CHECK(PluginLoader::DefaultSearchPath() ==
        std::vector<fs::path>{fs::path(CACHET_BINARY_DIR) / "lib" / "cachet" / "plugins"});
}

TEST_CASE("plugin file names follow cachet-<name>.so", "[plugin]") {
  CHECK(PluginLoader::FileNameFor("redis") == "cachet-redis.so");
}
