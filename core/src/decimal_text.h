// Decimal text: how cachet writes numbers and bools, and how it reads them back,
// including what memcached and other clients write (memcached pads a counter
// that shrank with trailing spaces: decr from 100 leaves "99 ").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cachet/status.h"

namespace cachet {

// Replace `*out` with the shortest decimal text that reads back to the same value.
void FormatInteger(std::int64_t v, std::string* out);
void FormatInteger(std::uint64_t v, std::string* out);
void FormatDouble(double v, std::string* out);

// kInvalidArgument naming the problem (empty, not a number, out of range).
Status ParseInteger(std::string_view text, std::int64_t* out);
Status ParseInteger(std::string_view text, std::uint64_t* out);
Status ParseDouble(std::string_view text, double* out);
// "1" and "0"; "true" and "false" too, as other clients write them.
Status ParseBool(std::string_view text, bool* out);

}  // namespace cachet
