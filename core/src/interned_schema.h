// InternSchema: a lasting copy of an option schema.
//
// A plugin's schema lives in the plugin's library, which is unloaded when the last
// Plugin and Backend from it are gone, but a validated ConfigSection keeps its
// schema (to mask secrets, to answer schema()) for as long as the Config lives.
// So Validate keeps a copy made here instead: one per distinct schema, owned by a
// process-wide table that is never destroyed. Thread-safe.
#pragma once

#include <span>

#include "cachet/config.h"

namespace cachet {

// A copy of `schema`, strings included, valid until the process ends. Equal
// schemas share one copy, so validating many times does not grow the table.
std::span<const OptionSpec> InternSchema(std::span<const OptionSpec> schema);

}  // namespace cachet
