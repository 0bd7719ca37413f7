// TextReplyParser: memcached's classic text protocol replies, from bytes.
//
// Fed the unconsumed bytes of a connection, it answers need-more, one reply (and
// how many bytes it spans), or an error for bytes that are no reply. It does no
// I/O and keeps no state between calls, so a reply split anywhere parses the
// same once complete. Limits: a line of ParserLimits::max_line bytes, a value of
// max_value bytes. Thread-safe (const).
#pragma once

#include <string_view>

#include "reply.h"

namespace cachet::memcached {

class TextReplyParser {
 public:
  explicit TextReplyParser(ParserLimits limits = {}) : limits_(limits) {}
  ParseResult Parse(std::string_view input, Reply* reply) const;

  // True when `input` begins with a whole, well-formed VALUE line whose data
  // block is within the limits, whatever of the data has arrived: fills the
  // reply's key, flags and cas, where the data starts and its size. For a
  // reader that receives large data blocks directly (net::DirectValue).
  bool ValueHeader(std::string_view input, Reply* reply, std::size_t* data_offset,
                   std::uint64_t* size) const;

 private:
  ParseResult ParseValue(std::string_view input, std::string_view args, std::size_t line_end,
                         Reply* reply) const;

  ParserLimits limits_;
};

}  // namespace cachet::memcached
