// `cachet check`: validates a config the way Cache::Open does — [cache], the
// backend's section against its plugin's schema, and every other section against
// the plugin it names — then prints the effective settings (defaults filled in,
// secrets masked). It loads plugins but creates no backend, so it opens no
// connection.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_codes.h"
#include "plugin_search.h"
#include "reply.h"

namespace cachet::cli {
namespace {

// The explicit `plugin` file when set, else the plugin `backend` names.
Result<std::shared_ptr<const Plugin>> LoadBackendPlugin(const PluginLoader& loader,
                                                        const ConfigSection& cache) {
  const std::string backend = cache.GetString("backend");
  const std::string file = cache.GetString("plugin");
  auto plugin = loader.Load(file.empty() ? backend : file);
  if (plugin.ok() && (*plugin)->name() != backend) {
    return Status::ConfigError("[cache] plugin " + file + " is the '" +
                               std::string((*plugin)->name()) +
                               "' plugin, but backend = " + backend);
  }
  return plugin;
}

// The plugins whose schemas a validated Config points into: they must stay
// loaded while the Config is rendered.
using LoadedPlugins = std::vector<std::shared_ptr<const Plugin>>;

// A section that names no plugin is an error, as in Cache::Open: it is most
// likely a typo that would silently drop its settings.
Status ValidateSection(Config* config, const PluginLoader& loader, const std::string& name,
                       LoadedPlugins* plugins) {
  auto plugin = loader.Load(name);
  if (!plugin.ok()) {
    return Status::ConfigError(config->path() + ": [" + name + "]: no plugin named '" + name +
                               "' (" + plugin.status().ToString() + ")");
  }
  plugins->push_back(*plugin);
  return config->Validate(name, (*plugin)->options());
}

Status ValidateAll(Config* config, LoadedPlugins* plugins) {
  if (Status s = config->Validate("cache", CacheOptionSpecs()); !s.ok()) return s;
  const PluginLoader loader = LoaderFor(*config);
  auto plugin = LoadBackendPlugin(loader, *config->section("cache"));
  if (!plugin.ok()) return plugin.status();
  plugins->push_back(*plugin);
  const std::string backend((*plugin)->name());
  if (Status s = config->Validate(backend, (*plugin)->options()); !s.ok()) return s;
  for (const std::string& name : config->SectionNames()) {
    if (name == "cache" || name == backend) continue;
    if (Status s = ValidateSection(config, loader, name, plugins); !s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace

int RunCheck(CommandContext& ctx, const Invocation&) {
  LoadedPlugins plugins;  // declared first: outlives `config`
  Config config = ctx.config;
  Status status = ValidateAll(&config, &plugins);
  if (!status.ok()) return ReportFailure(ctx, status);
  ctx.out << config.Render();
  return kExitSuccess;
}

}  // namespace cachet::cli
