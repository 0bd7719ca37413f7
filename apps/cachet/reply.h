// How command results are printed, in one place, so the one-shot client and the
// shell agree:
// - a write prints a word: STORED, DELETED, TOUCHED, OK, or for the ordinary
//   outcomes NOT_STORED, EXISTS, NOT_FOUND;
// - an error prints "ERROR <code>: <message>" as the shell's result line, or
//   "cachet: <code>: <message>" on stderr for a one-shot command;
// - a value is printed alone on its line in the shell; a one-shot command writes
//   the exact bytes, adding a newline only when stdout is a terminal.
#pragma once

#include <cstdint>
#include <string_view>

#include "cachet/status.h"
#include "command.h"

namespace cachet::cli {

// Prints `ok_word` on success, the outcome word or the error otherwise. Returns
// the exit code for `status`.
int ReportWrite(CommandContext& ctx, const Status& status, std::string_view ok_word);

// Prints an error (or an ordinary outcome as its word). Returns its exit code.
int ReportFailure(CommandContext& ctx, const Status& status);

// A usage error: the message and a pointer to --help. Returns kExitUsage.
int ReportUsage(CommandContext& ctx, std::string_view message);

// Prints a value that is the whole result (get, gets): the bytes as they are,
// or in the shell one line of ShellValue.
void PrintValue(CommandContext& ctx, std::string_view bytes);

// Prints a counter's new value on its line: signed where the store's counters
// are (Redis's own, counters = redis, whose results come back as their two's
// complement), unsigned otherwise.
void PrintCounter(CommandContext& ctx, std::uint64_t value);

// NOT_FOUND, NOT_STORED, EXISTS; "" for any other code.
std::string_view OutcomeWord(const Status& status) noexcept;

}  // namespace cachet::cli
