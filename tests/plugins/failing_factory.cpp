// A broken test plugin: it loads and checks out, but its factory fails, as a
// store would when its server cannot be reached.
#include "cachet/plugin.h"

namespace {

cachet::Status CreateNothing(const cachet::PluginContext&,
                             std::unique_ptr<cachet::Backend>*) noexcept {
  return cachet::Status::Unavailable("127.0.0.1:1: connection refused");
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "failing-factory",
    "1.0",
    "A factory that always fails",
    nullptr,
    0,
    0,
    &CreateNothing,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
