// The text reader's usual replies (TextBatch's internals, called from it alone):
// a hit for the key expected next, the END of a gets line, and the one-line
// reply a store, delete, incr/decr or touch may get.
//
// The reader knows which command each reply answers and which key a hit must
// carry, so these compare instead of scanning and tokenizing: the key is matched
// with one compare, numbers are read where they must be. They take a reply only
// when it is whole and decided exactly as the general parser (TextReplyParser)
// and TextBatch::OnReply would decide it; anything else (an error line, another
// key, garbage, a value over the limit, a reply still arriving) is left to them.
// The fuzzer (tests/fuzz/fuzz_memcached_text_reader.cpp) checks both ways agree.
// No I/O, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "cachet/backend.h"
#include "reply.h"
#include "reply_line.h"

namespace cachet::memcached {

struct QuickReply {
  QuickOutcome outcome = QuickOutcome::kUnusual;
  std::string_view data;  // kDone: the value bytes
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;
};

// A one-line reply taken: the bytes it spans with its "\r\n" (0: none taken),
// the operation's outcome and, after incr/decr, the new value.
struct UsualLine {
  std::size_t consumed = 0;
  StatusCode code = StatusCode::kOk;
  std::uint64_t number = 0;
};

namespace quick_detail {

// "VALUE <key> " at the front of `input`: kDone with *pos past it, kNeedMore
// for a prefix of it, kUnusual for anything else.
inline QuickOutcome ExpectValueFor(std::string_view input, std::string_view key, std::size_t* pos) {
  const std::size_t length = 7 + key.size();
  if (input.size() < length) {
    // Only part of it has arrived: compared piece by piece.
    QuickOutcome step = ExpectLiteral(input, pos, "VALUE ");
    if (step == QuickOutcome::kDone) step = Expect(input, pos, key);
    return step == QuickOutcome::kDone ? ExpectLiteral(input, pos, " ") : step;
  }
  if (!reply_line_detail::SameBytes(input.data(), "VALUE ", 6) ||
      !reply_line_detail::SameBytes(input.data() + 6, key.data(), key.size()) ||
      input[length - 1] != ' ') {
    return QuickOutcome::kUnusual;
  }
  *pos = length;
  return QuickOutcome::kDone;
}

// "<flags> <bytes>[ <cas>]\r\n", the rest of a VALUE line after the key's space.
inline QuickOutcome ReadValueNumbers(std::string_view input, std::size_t* pos, QuickReply* reply,
                                     std::uint64_t* size) {
  std::uint64_t flags = 0;
  QuickOutcome step = ReadNumber(input, pos, &flags);
  if (step != QuickOutcome::kDone) return step;
  if (flags > UINT32_MAX || input[*pos] != ' ') return QuickOutcome::kUnusual;
  ++*pos;
  step = ReadNumber(input, pos, size);
  if (step != QuickOutcome::kDone) return step;
  if (input[*pos] == ' ') {
    ++*pos;
    step = ReadNumber(input, pos, &reply->cas);
    if (step != QuickOutcome::kDone) return step;
  }
  reply->flags = static_cast<std::uint32_t>(flags);
  return ExpectLiteral(input, pos, "\r\n");
}

// The data block of `size` bytes from `*pos` and its "\r\n": kDone with *pos
// past them, kNeedMore, or kUnusual.
inline QuickOutcome ReadDataBlockAt(std::string_view input, std::size_t* pos, std::uint64_t size) {
  if (input.size() - *pos < size + 2) return QuickOutcome::kNeedMore;
  std::size_t end = *pos + static_cast<std::size_t>(size);
  if (ExpectLiteral(input, &end, "\r\n") != QuickOutcome::kDone) return QuickOutcome::kUnusual;
  *pos = end;
  return QuickOutcome::kDone;
}

// A fixed reply line at the front of `input`, with its outcome.
template <std::size_t N>
inline bool FixedLine(std::string_view input, const char (&literal)[N], StatusCode code,
                      UsualLine* line) {
  if (!StartsWith(input, literal)) return false;
  line->consumed = N - 1;
  line->code = code;
  return true;
}

}  // namespace quick_detail

// One whole hit for `key` at the front of `input`, as a gets reply holds one
// per key found: "VALUE <key> <flags> <bytes> [<cas>]\r\n", the data and its
// "\r\n". kDone with the data, flags and cas, and in *consumed the bytes it
// spans; whatever follows is not looked at. kNeedMore while it is incomplete;
// kUnusual for anything else, a VALUE for another key included.
inline QuickReply QuickTextValue(std::string_view input, std::string_view key,
                                 const ParserLimits& limits, std::size_t* consumed) {
  std::size_t pos = 0;
  QuickOutcome step = quick_detail::ExpectValueFor(input, key, &pos);
  QuickReply reply;
  std::uint64_t size = 0;
  if (step == QuickOutcome::kDone)
    step = quick_detail::ReadValueNumbers(input, &pos, &reply, &size);
  if (step != QuickOutcome::kDone) {
    reply.outcome = step;
    return reply;
  }
  // The general parser's limits: a line it would refuse, or a value over
  // max_value, is its to report.
  if (pos - 2 > limits.max_line || size > limits.max_value) return reply;
  const std::size_t start = pos;
  step = quick_detail::ReadDataBlockAt(input, &pos, size);
  if (step != QuickOutcome::kDone) {
    reply.outcome = step;
    return reply;
  }
  reply.outcome = QuickOutcome::kDone;
  reply.data = input.substr(start, static_cast<std::size_t>(size));
  *consumed = pos;
  return reply;
}

// UsualTextLine() for the replies other than the success a command expects:
// NOT_STORED, EXISTS, NOT_FOUND. Out of line (text_batch.cpp): they are rarer.
UsualLine OtherUsualTextLine(std::string_view input, OpKind kind);

// The one-line reply to a `kind` command at the front of `input`, whole: the
// success the command expects, or another reply TextReplyFits allows it,
// errors aside (an incr/decr's success is its new value). Nothing taken
// (consumed 0) for anything else. The caller checks the line's length against
// max_line, as the general parser does.
inline UsualLine UsualTextLine(std::string_view input, OpKind kind) {
  using quick_detail::FixedLine;
  UsualLine line;
  switch (kind) {
    case OpKind::kStore:
      if (FixedLine(input, "STORED\r\n", StatusCode::kOk, &line)) return line;
      break;
    case OpKind::kRemove:
      if (FixedLine(input, "DELETED\r\n", StatusCode::kOk, &line)) return line;
      break;
    case OpKind::kTouch:
      if (FixedLine(input, "TOUCHED\r\n", StatusCode::kOk, &line)) return line;
      break;
    case OpKind::kIncr:
    case OpKind::kDecr: {
      std::size_t pos = 0;
      if (ReadNumber(input, &pos, &line.number) == QuickOutcome::kDone &&
          ExpectLiteral(input, &pos, "\r\n") == QuickOutcome::kDone) {
        line.consumed = pos;
        return line;
      }
      break;
    }
    case OpKind::kGet:
      return line;
  }
  return OtherUsualTextLine(input, kind);
}

}  // namespace cachet::memcached
