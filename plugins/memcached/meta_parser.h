// MetaReplyParser: memcached's meta protocol replies (VA HD EN NS EX NF MN), from
// bytes, plus the ERROR / CLIENT_ERROR / SERVER_ERROR lines both protocols share.
//
// Same contract as TextReplyParser: need-more, one reply, or an error; no I/O,
// no state between calls. Return flags understood: f (client flags), c (CAS),
// O (opaque, a decimal request index), k (key); other flags are skipped.
// Thread-safe (const).
#pragma once

#include <string_view>

#include "reply.h"

namespace cachet::memcached {

class MetaReplyParser {
 public:
  explicit MetaReplyParser(ParserLimits limits = {}) : limits_(limits) {}
  ParseResult Parse(std::string_view input, Reply* reply) const;

  // True when `input` begins with a whole, well-formed VA line whose data block
  // is within the limits, whatever of the data has arrived: fills the reply's
  // flags, where the data starts and its size (see TextReplyParser).
  bool ValueHeader(std::string_view input, Reply* reply, std::size_t* data_offset,
                   std::uint64_t* size) const;

 private:
  ParserLimits limits_;
};

}  // namespace cachet::memcached
