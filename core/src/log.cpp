// The core logger: one spdlog logger named "cachet" writing to stderr.
//
// The logger is deliberately kept out of spdlog's global registry: plugins get it
// from the core (PluginContext), and a registry lookup from inside a plugin would
// consult the plugin's own copy of spdlog's statics.
#include "cachet/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <utility>

namespace cachet {

namespace {

std::shared_ptr<spdlog::logger> MakeLogger() {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("cachet", std::move(sink));
  logger->set_level(spdlog::level::info);
  return logger;
}

constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 7> kLevels = {{
    {"trace", spdlog::level::trace},
    {"debug", spdlog::level::debug},
    {"info", spdlog::level::info},
    {"warn", spdlog::level::warn},
    {"error", spdlog::level::err},
    {"critical", spdlog::level::critical},
    {"off", spdlog::level::off},
}};

}  // namespace

std::shared_ptr<spdlog::logger> Logger() {
  // Never destroyed, so code running during static destruction can still log.
  static auto* const logger = new std::shared_ptr<spdlog::logger>(MakeLogger());
  return *logger;
}

Status SetLogLevel(std::string_view level) {
  for (const auto& [name, value] : kLevels) {
    if (name == level) {
      Logger()->set_level(value);
      return Status::OK();
    }
  }
  return Status::ConfigError("log_level '" + std::string(level) +
                             "' is not one of trace, debug, info, warn, error, critical, off");
}

}  // namespace cachet
