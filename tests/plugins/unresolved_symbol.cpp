// A broken test plugin: it needs a function that no library defines. Loading with
// rtld_now must fail at once, and the message must name the missing symbol.
#include "cachet/plugin.h"

extern "C" int cachet_test_symbol_that_does_not_exist();

namespace {

cachet::Status CreateNothing(const cachet::PluginContext&,
                             std::unique_ptr<cachet::Backend>*) noexcept {
  return cachet::Status::Internal(std::to_string(cachet_test_symbol_that_does_not_exist()));
}

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
    "unresolved-symbol",
    "1.0",
    "Needs a symbol nobody has",
    nullptr,
    0,
    0,
    &CreateNothing,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
