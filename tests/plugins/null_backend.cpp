// A broken test plugin: its factory says ok but makes no backend.
#include "cachet/plugin.h"

namespace {

cachet::Status CreateNull(const cachet::PluginContext&,
                          std::unique_ptr<cachet::Backend>* out) noexcept {
  out->reset();
  return cachet::Status::OK();
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "null-backend",
    "1.0",
    "A factory that returns ok and nothing",
    nullptr,
    0,
    0,
    &CreateNull,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
