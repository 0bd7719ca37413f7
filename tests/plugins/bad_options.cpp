// A broken test plugin: its options break the schema's own rules. Built twice:
// with CACHET_TEST_NULL_HELP one option has no help; otherwise an int option's
// default is not a number. Either is refused at load, before any factory runs.
#include "cachet/plugin.h"

namespace {

#ifdef CACHET_TEST_NULL_HELP
constexpr const char* kSizeHelp = nullptr;
constexpr const char* kSizeDefault = "10";
#else
constexpr const char* kSizeHelp = "how many";
constexpr const char* kSizeDefault = "abc";
#endif

cachet::Status CreateNothing(const cachet::PluginContext&,
                             std::unique_ptr<cachet::Backend>*) noexcept {
  return cachet::Status::Unavailable("never reached: the descriptor is refused first");
}

const cachet::OptionSpec kOptions[] = {
    {"size", cachet::OptionType::kInt, kSizeDefault, kSizeHelp},
};

const cachet::PluginDescriptor kDescriptor = {
    cachet::kPluginAbiVersion,
    CACHET_BUILD_FINGERPRINT,
#ifdef CACHET_TEST_NULL_HELP
    "null-help",
#else
    "bad-default",
#endif
    "1.0",
    "Options that break the schema's rules",
    kOptions,
    1,
    0,
    &CreateNothing,
};

}  // namespace

CACHET_DEFINE_PLUGIN(kDescriptor)
