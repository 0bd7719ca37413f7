// `cachet check`: validates a config exactly as opening it would
// (Cache::Check: [cache] and the codec settings, every section against its
// plugin's schema and validation hook), then prints the effective settings
// (defaults filled in, secrets masked). It creates no backend, so it opens no
// connection.
#include <memory>
#include <ostream>
#include <vector>

#include "cachet/cache.h"
#include "cachet/plugin.h"
#include "commands.h"
#include "exit_codes.h"
#include "reply.h"

namespace cachet::cli {

int RunCheck(CommandContext& ctx, const Invocation&) {
  // Declared first, so it outlives `config`, whose schemas point into the plugins.
  std::vector<std::shared_ptr<const Plugin>> plugins;
  Config config = ctx.config;
  Status status = Cache::Check(&config, &plugins);
  if (!status.ok()) return ReportFailure(ctx, status);
  ctx.out << config.Render();
  return kExitSuccess;
}

}  // namespace cachet::cli
