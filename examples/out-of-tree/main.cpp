// Loads store plugins with PluginLoader and does a set and a get through each.
// Usage: cachet_consumer <dir with cachet-notebook.so> [--memory]
// With --memory, the memory plugin is looked up on the default search path (so
// beside the libcachet in use) and its file is printed.
#include <cstdio>
#include <string>

#include "cachet/config.h"
#include "cachet/plugin.h"

namespace {

// Loads `name` with `loader`, writes a value and reads it back; prints what failed.
bool SetAndGet(const cachet::PluginLoader& loader, const std::string& name) {
  auto plugin = loader.Load(name);
  if (!plugin.ok()) {
    std::fprintf(stderr, "%s\n", plugin.status().ToString().c_str());
    return false;
  }
  std::printf("%s: loaded %s\n", name.c_str(), (*plugin)->path().c_str());
  // docs/plugins.md names the ABI version a plugin built against this cachet carries.
  std::printf("%s: ABI version %u\n", name.c_str(), unsigned{(*plugin)->descriptor().abi_version});
  auto config = cachet::Config::Parse("", "consumer");
  cachet::Status valid = config->Validate(name, (*plugin)->options());
  if (!valid.ok()) {
    std::fprintf(stderr, "%s\n", valid.ToString().c_str());
    return false;
  }
  auto backend = (*plugin)->CreateBackend(*config->section(name), nullptr);
  if (!backend.ok()) {
    std::fprintf(stderr, "%s\n", backend.status().ToString().c_str());
    return false;
  }
  cachet::Status stored =
      (*backend)->Store(cachet::StoreMode::kSet, "greeting", cachet::ItemView("hello"), {});
  cachet::Item item;
  cachet::Status read = (*backend)->Get("greeting", &item);
  if (!stored.ok() || !read.ok() || item.value != "hello") {
    std::fprintf(stderr, "%s: set/get failed: %s / %s\n", name.c_str(), stored.ToString().c_str(),
                 read.ToString().c_str());
    return false;
  }
  // A miss and an error with a message, made in the plugin, read and freed here.
  cachet::Status miss = (*backend)->Get("absent", &item);
  cachet::Status refused = (*backend)->Touch("greeting", cachet::Ttl(-1));
  if (!miss.IsNotFound() || refused.ok() || refused.message().empty()) {
    std::fprintf(stderr, "%s: miss / refusal wrong: %s / %s\n", name.c_str(),
                 miss.ToString().c_str(), refused.ToString().c_str());
    return false;
  }
  std::printf("%s: set and get ok\n", name.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool memory = argc == 3 && std::string(argv[2]) == "--memory";
  if (argc < 2 || argc > 3 || (argc == 3 && !memory)) {
    std::fprintf(stderr, "usage: %s NOTEBOOK_PLUGIN_DIR [--memory]\n", argv[0]);
    return 2;
  }
  bool ok = SetAndGet(cachet::PluginLoader({argv[1]}), "notebook");
  if (memory) {
    const cachet::PluginLoader standard(cachet::PluginLoader::DefaultSearchPath());
    ok = SetAndGet(standard, "memory") && ok;
  }
  return ok ? 0 : 1;
}
