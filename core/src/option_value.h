// Typed reading and checking of config option values, shared by validation and
// the ConfigSection getters so that both agree on what a valid value is.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cachet/config.h"

namespace cachet {

// Whole-string conversions; nullopt when `text` is not entirely a valid value.
std::optional<std::int64_t> ParseIntOption(std::string_view text);
std::optional<bool> ParseBoolOption(std::string_view text);  // true/false yes/no on/off 1/0
std::optional<double> ParseDoubleOption(std::string_view text);

// Why `value` is not acceptable for `spec` ("'abc' is not an integer"), or "" if
// it is.
std::string ExplainBadValue(const OptionSpec& spec, std::string_view value);

// The option of `schema` whose name is closest to `name`, when it is close enough
// to be a likely typo; "" otherwise.
std::string ClosestOptionName(std::string_view name, std::span<const OptionSpec> schema);

}  // namespace cachet
