// `cachet plugins`: every plugin on the search path with its version, one-line
// description, capabilities (marking those the core emulates) and options.
#include <ostream>
#include <string>

#include "cachet/backend.h"
#include "cachet/envelope.h"
#include "cachet/plugin.h"
#include "commands.h"
#include "exit_codes.h"
#include "plugin_search.h"
#include "reply.h"

namespace cachet::cli {
namespace {

// What the store can do through a Cache: its own capabilities, and those the
// value envelope (envelope.h) adds, marked; those it drops are not listed.
void PrintCapabilities(Capabilities native, std::ostream& out) {
  const Capabilities through_cache = CapabilitiesThroughCache(native);
  out << "  capabilities:";
  const char* separator = " ";
  for (Capability c : AllCapabilities()) {
    if (!through_cache.has(c)) continue;
    out << separator << CapabilityName(c) << (native.has(c) ? "" : " (emulated by cachet)");
    separator = ", ";
  }
  out << '\n';
}

void PrintOption(const OptionSpec& option, std::ostream& out) {
  out << "    " << option.name << " (" << OptionTypeName(option.type);
  if (option.default_value != nullptr) {
    out << ", default "
        << (option.secret && *option.default_value ? "********" : option.default_value);
  }
  if (option.required) out << ", required";
  if (option.secret) out << ", secret";
  if (option.choices != nullptr) out << ", one of " << option.choices;
  out << "): " << option.help << '\n';
}

void PrintPlugin(const Plugin& plugin, std::ostream& out) {
  const PluginDescriptor& d = plugin.descriptor();
  out << d.name << ' ' << d.version << ": " << d.description << '\n';
  out << "  file: " << plugin.path().string() << '\n';
  PrintCapabilities(plugin.capabilities(), out);
  out << "  options" << (plugin.options().empty() ? ": none\n" : ":\n");
  for (const OptionSpec& option : plugin.options()) PrintOption(option, out);
}

// The config's plugin_path counts only when [cache] is valid; a broken config
// still lets the user see what is installed.
PluginLoader LoaderForListing(CommandContext& ctx) {
  Config config = ctx.config;
  Status status = config.Validate("cache", CacheOptionSpecs());
  if (status.ok()) return LoaderFor(config);
  ctx.err << "cachet: ignoring plugin_path: " << status.ToString() << '\n';
  return PluginLoader(PluginLoader::DefaultSearchPath());
}

}  // namespace

int RunPlugins(CommandContext& ctx, const Invocation&) {
  PluginLoader loader = LoaderForListing(ctx);
  int listed = 0;
  for (const auto& found : loader.Discover()) {
    if (!found.ok()) {
      ctx.err << "cachet: " << found.status().ToString() << '\n';
      continue;
    }
    if (listed++ > 0) ctx.out << '\n';
    PrintPlugin(**found, ctx.out);
  }
  if (listed > 0) return kExitSuccess;
  ctx.err << "cachet: no plugins found in:";
  for (const auto& dir : loader.search_path()) ctx.err << ' ' << dir.string();
  ctx.err << '\n';
  return kExitUsage;
}

}  // namespace cachet::cli
