// A store plugin for the CLI tests: it declares a secret option (so `cachet
// check` can be seen masking it) and lacks native TTL and flags (so `cachet
// plugins` can be seen marking them as emulated). It never creates a backend.
#include "cachet/plugin.h"

namespace {

const cachet::OptionSpec kOptions[] = {
    {"password", cachet::OptionType::kString, "", "A password that must never be printed", false,
     true},
    {"user", cachet::OptionType::kString, "cachet", "A user name, printed as it is"},
};

cachet::Status Create(const cachet::PluginContext&, std::unique_ptr<cachet::Backend>*) noexcept {
  return cachet::Status::PluginError("secretstore is a test plugin without a backend");
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "secretstore",
    "0.0.1",
    "test plugin with a secret option",
    kOptions,
    sizeof kOptions / sizeof kOptions[0],
    cachet::Capabilities{cachet::Capability::kCas, cachet::Capability::kCounters}.bits(),
    Create,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
