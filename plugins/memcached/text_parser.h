// TextReplyParser: memcached's classic text protocol replies, from bytes.
//
// Fed the unconsumed bytes of a connection, it answers need-more, one reply (and
// how many bytes it spans), or an error for bytes that are no reply. It does no
// I/O and keeps no state between calls, so a reply split anywhere parses the
// same once complete. Limits: a line of ParserLimits::max_line bytes, a value of
// max_value bytes. Thread-safe (const).
#pragma once

#include <string_view>

#include "cachet/backend.h"
#include "reply.h"
#include "reply_line.h"

namespace cachet::memcached {

// The fixed reply lines (without "\r\n"): END, STORED, NOT_STORED, EXISTS,
// NOT_FOUND, DELETED, TOUCHED, OK. True and `*kind` for one of them; `*kind`
// is left alone otherwise. By length, a word or two compared.
namespace text_parser_detail {

// Whether the line at `at` is `text` (the caller checked its length): the
// literal's length is a constant, so this is a word or two compared.
template <std::size_t N>
inline bool IsFixed(const char* at, const char (&text)[N], ReplyKind which, ReplyKind* kind) {
  if (!reply_line_detail::SameBytes(at, text, N - 1)) return false;
  *kind = which;
  return true;
}

}  // namespace text_parser_detail

inline bool FixedTextReply(std::string_view line, ReplyKind* kind) {
  using text_parser_detail::IsFixed;
  const char* const at = line.data();
  switch (line.size()) {
    case 2:
      return IsFixed(at, "OK", ReplyKind::kOk, kind);
    case 3:
      return IsFixed(at, "END", ReplyKind::kEnd, kind);
    case 6:
      return IsFixed(at, "STORED", ReplyKind::kStored, kind) ||
             IsFixed(at, "EXISTS", ReplyKind::kExists, kind);
    case 7:
      return IsFixed(at, "DELETED", ReplyKind::kDeleted, kind) ||
             IsFixed(at, "TOUCHED", ReplyKind::kTouched, kind);
    case 9:
      return IsFixed(at, "NOT_FOUND", ReplyKind::kNotFound, kind);
    case 10:
      return IsFixed(at, "NOT_STORED", ReplyKind::kNotStored, kind);
    default:
      return false;
  }
}

// The replies a single-line text command may get, errors aside; anything else
// means the stream is out of step. The success a command expects comes first.
inline bool TextReplyFits(OpKind command, ReplyKind reply) {
  switch (command) {
    case OpKind::kStore:
      return reply == ReplyKind::kStored || reply == ReplyKind::kNotStored ||
             reply == ReplyKind::kExists || reply == ReplyKind::kNotFound;
    case OpKind::kRemove:
      return reply == ReplyKind::kDeleted || reply == ReplyKind::kNotFound;
    case OpKind::kIncr:
    case OpKind::kDecr:
      return reply == ReplyKind::kNumber || reply == ReplyKind::kNotFound;
    case OpKind::kTouch:
      return reply == ReplyKind::kTouched || reply == ReplyKind::kNotFound;
    case OpKind::kGet:
      return false;
  }
  return false;
}

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
