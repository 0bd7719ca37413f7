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

 private:
  ParseResult ParseValue(std::string_view input, std::string_view args, std::size_t line_end,
                         Reply* reply) const;

  ParserLimits limits_;
};

}  // namespace cachet::memcached
