// `cachet check`: validates the [cache] section and the chosen backend's section
// against the plugin's own schema, then prints the effective settings (defaults
// filled in, secrets masked). It loads the plugin but opens no connection.
#include <ostream>
#include <string>

#include "commands.h"
#include "exit_codes.h"
#include "plugin_search.h"
#include "reply.h"

namespace cachet::cli {
namespace {

Status ValidateWithBackend(Config* config) {
  Status status = config->Validate("cache", CacheOptionSpecs());
  if (!status.ok()) return status;
  const std::string backend = config->section("cache")->GetString("backend");
  Result<std::shared_ptr<const Plugin>> plugin = LoaderFor(*config).Load(backend);
  if (!plugin.ok()) return plugin.status();
  return config->Validate(backend, (*plugin)->options());
}

}  // namespace

int RunCheck(CommandContext& ctx, const Invocation&) {
  Config config = ctx.config;
  Status status = ValidateWithBackend(&config);
  if (!status.ok()) return ReportFailure(ctx, status);
  ctx.out << config.Render();
  return kExitSuccess;
}

}  // namespace cachet::cli
