// Reply lines: what both memcached parsers share. Finding a complete line,
// splitting tokens, strict decimal numbers, the error lines of both protocols,
// and a printable excerpt of bad bytes for messages. No I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "reply.h"

namespace cachet::memcached {

// The first line of `input` (without "\r\n") and the bytes it spans with "\r\n".
// kNeedMore while no '\n' arrived within `max_line` bytes; kError for a line
// that is too long or ends in a bare '\n'.
ParseResult FindLine(std::string_view input, std::size_t max_line, std::string_view* line);

// Splits off the text up to the first space (the whole rest if none).
std::string_view NextToken(std::string_view* rest);

// Strict unsigned decimals: digits only, no sign, no overflow.
bool ParseU64(std::string_view text, std::uint64_t* out);
bool ParseU32(std::string_view text, std::uint32_t* out);

// ERROR, CLIENT_ERROR <msg>, SERVER_ERROR <msg>: true and fills `reply` if
// `line` is one of them.
bool ParseErrorLine(std::string_view line, Reply* reply);

// Reads a data block of `size` bytes plus "\r\n" that starts at `input[offset]`.
// Fills `result` (kNeedMore, kReply with consumed, or kError) and `*data`.
void ReadDataBlock(std::string_view input, std::size_t offset, std::uint64_t size,
                   const ParserLimits& limits, std::string_view* data, ParseResult* result);

// A protocol_error result quoting (a printable prefix of) the offending bytes.
ParseResult Garbage(std::string_view what, std::string_view bytes);

}  // namespace cachet::memcached
