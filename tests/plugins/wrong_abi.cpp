// A broken test plugin: its descriptor claims an ABI version this cachet does not
// speak, and nothing else in it may be read.
#include "cachet/plugin.h"

namespace {

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion + 41,
    CACHET_BUILD_FINGERPRINT,
    "wrong-abi",
    "1.0",
    "Claims a future ABI",
    nullptr,
    0,
    0,
    nullptr,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
