// Parses the words after a command name (from argv or a shell line) into an
// Invocation: positional arguments, --ttl SECONDS and --help.
//
// Only long options are recognised, so values and deltas that begin with '-'
// ("-5", "-") stay positional; "--" ends the options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/result.h"
#include "command.h"

namespace cachet::cli {

// kInvalidArgument with a one-line reason for an unknown option, a bad --ttl or a
// wrong number of arguments (not checked when --help is given).
Result<Invocation> ParseInvocation(const CommandSpec& spec, const std::vector<std::string>& words);

// A positional number (a delta, a CAS token, seconds): unsigned 64-bit decimal,
// nothing else on the word; nullopt otherwise.
std::optional<std::uint64_t> ParseUnsigned(std::string_view text);

// SECONDS of touch as a Ttl; past the largest signed count it saturates, like
// any far-off expiry.
Ttl TtlFromUnsignedSeconds(std::uint64_t seconds);

}  // namespace cachet::cli
