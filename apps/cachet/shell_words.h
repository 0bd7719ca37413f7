// Splits one shell line into words.
//
// Words are separated by spaces or tabs. A double-quoted word may hold spaces and
// these escapes: \\ \" \n \r \t \0 and \xHH (any byte), so any value can be
// written on one line; "" is the empty word. Outside quotes a backslash is an
// ordinary character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cachet/result.h"

namespace cachet::cli {

// kInvalidArgument for an unterminated quote or a bad escape.
Result<std::vector<std::string>> SplitShellWords(std::string_view line);

}  // namespace cachet::cli
