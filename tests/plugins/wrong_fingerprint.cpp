// A broken test plugin: the right ABI version, but built (it says) by another
// compiler and cachet version.
#include "cachet/plugin.h"

namespace {

cachet::Status NeverCalled(const cachet::PluginContext&,
                           std::unique_ptr<cachet::Backend>*) noexcept {
  return cachet::Status::Internal("the loader must refuse this plugin before creating");
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    "cachet 0.0.0; some other compiler; libc++ 1; C++ 201703",
    "wrong-fingerprint",
    "1.0",
    "Built elsewhere",
    nullptr,
    0,
    0,
    &NeverCalled,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
