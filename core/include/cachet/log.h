// Logging: the core's spdlog logger, shared with every plugin.
//
// The core owns one logger named "cachet" writing to stderr. Plugins receive it in
// their PluginContext and must not create loggers of their own (a plugin's spdlog
// registry would be a different one). Nothing is logged per operation at info or
// above. Secrets from the config are never logged.
#pragma once

#include <memory>
#include <string_view>

#include <spdlog/logger.h>

#include "cachet/export.h"
#include "cachet/status.h"

namespace cachet {

// The core logger; created on first use, never destroyed. Thread-safe.
CACHET_EXPORT std::shared_ptr<spdlog::logger> Logger();

// trace | debug | info | warn | error | critical | off. kConfigError otherwise.
CACHET_EXPORT Status SetLogLevel(std::string_view level);

}  // namespace cachet
