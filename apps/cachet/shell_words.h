// Splits one shell line into words, and quotes bytes the same way for messages.
//
// Words are separated by spaces or tabs. A double-quoted word may hold spaces and
// these escapes: \\ \" \n \r \t \0 and \xHH (any byte), so any value can be
// written on one line; "" is the empty word. Outside quotes a backslash is an
// ordinary character.
//
// An error message that repeats what the user typed quotes it with
// QuoteShellWord: escaped, so no control byte (ESC) reaches a terminal, and cut
// after kQuotedInputBytes, so a huge input makes a short message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cachet/result.h"

namespace cachet::cli {

// kInvalidArgument for an unterminated quote or a bad escape.
Result<std::vector<std::string>> SplitShellWords(std::string_view line);

// How much of an input an error message repeats, in bytes.
inline constexpr std::size_t kQuotedInputBytes = 200;

// `bytes` as a double-quoted word that SplitShellWords reads back: '\\', '"' and
// every byte outside printable ASCII escaped. Past `max_bytes` bytes of input the
// word is cut and followed by the full length: "xxxx"... (1048576 bytes).
std::string QuoteShellWord(std::string_view bytes, std::size_t max_bytes = kQuotedInputBytes);

// How the shell and mget print a miss.
inline constexpr std::string_view kMissWord = "(nil)";

// A value as the shell prints it on its one line: as it is when that reads back
// unambiguously (printable ASCII, not empty, not starting with '"', no space at
// either end, not "(nil)", which is how a miss prints, nor starting with
// "ERROR ", as an error's line does), else QuoteShellWord of it whole, never
// cut: "a\nb", "(nil)", "", "ERROR x", " x".
std::string ShellValue(std::string_view bytes);

// The same escapes and cut without the quotes, for a message that quotes input
// its own way (a library's error text).
std::string EscapeShellBytes(std::string_view bytes, std::size_t max_bytes = kQuotedInputBytes);

}  // namespace cachet::cli
