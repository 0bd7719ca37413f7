// The inline quick recognizers (see quick_reply.h): QuickTextValue, one whole
// hit of a gets reply for the key expected, read in one pass, and QuickTextLine,
// the one-line reply to a single command. Inline, with their helpers: a batch
// read calls the first once per key and every single command the second. The
// helpers are shared with the other quick recognizers (quick_reply.cpp). No I/O,
// no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "quick_reply.h"
#include "reply_line.h"
#include "reply_status.h"
#include "text_parser.h"

namespace cachet::memcached {

namespace quick_detail {

inline constexpr std::size_t kMaxDigits = 20;  // the widest 64-bit decimal

inline QuickReply Outcome(QuickOutcome outcome) {
  QuickReply reply;
  reply.outcome = outcome;
  return reply;
}

inline QuickReply Done(StatusCode code) {
  QuickReply reply;
  reply.outcome = QuickOutcome::kDone;
  reply.code = code;
  return reply;
}

// Whether `input`, from `*pos`, continues with `expected`: kDone (and *pos moved
// past it), kNeedMore when the input ends inside it, kUnusual on a difference.
inline QuickOutcome Expect(std::string_view input, std::size_t* pos, std::string_view expected) {
  const std::size_t available = input.size() - *pos;
  const std::size_t compared = available < expected.size() ? available : expected.size();
  if (std::memcmp(input.data() + *pos, expected.data(), compared) != 0) {
    return QuickOutcome::kUnusual;
  }
  if (compared < expected.size()) return QuickOutcome::kNeedMore;
  *pos += expected.size();
  return QuickOutcome::kDone;
}

// Expect() for a literal: when the input holds all of it, the comparison has a
// constant size, which the compiler turns into a load and compare or two.
template <std::size_t N>
inline QuickOutcome ExpectLiteral(std::string_view input, std::size_t* pos,
                                  const char (&literal)[N]) {
  constexpr std::size_t kLength = N - 1;
  if (input.size() - *pos < kLength) return Expect(input, pos, literal);
  if (std::memcmp(input.data() + *pos, literal, kLength) != 0) return QuickOutcome::kUnusual;
  *pos += kLength;
  return QuickOutcome::kDone;
}

using reply_line_detail::SameBytes;

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
  if (std::memcmp(input.data(), "VALUE ", 6) != 0 ||
      !SameBytes(input.data() + 6, key.data(), key.size()) || input[length - 1] != ' ') {
    return QuickOutcome::kUnusual;
  }
  *pos = length;
  return QuickOutcome::kDone;
}

// A decimal of 1 to 20 digits from `*pos`, without overflow, up to the first
// non-digit, which is left at *pos: what ParseU64 accepts, read in one pass.
inline QuickOutcome ReadNumber(std::string_view input, std::size_t* pos, std::uint64_t* value) {
  const char* const begin = input.data() + *pos;
  const char* const end = input.data() + input.size();
  const char* at = begin;
  std::uint64_t number = 0;
  unsigned digit = 0;
  // Digits are summed without a check; a number long enough to overflow is
  // read again, strictly, below.
  while (at != end && (digit = static_cast<unsigned char>(*at) - unsigned{'0'}) <= 9) {
    number = number * 10 + digit;
    ++at;
  }
  const std::size_t digits = static_cast<std::size_t>(at - begin);
  // 19 digits always fit in 64 bits; 20 may not, 21 never do.
  if (digits >= kMaxDigits &&
      (digits > kMaxDigits || !ParseU64(std::string_view(begin, digits), &number))) {
    return QuickOutcome::kUnusual;
  }
  if (at == end) return QuickOutcome::kNeedMore;
  if (digits == 0) return QuickOutcome::kUnusual;
  *value = number;
  *pos += digits;
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

// QuickTextLine() when `input` is no usual reply: wait while the general reader
// would wait too, that is while no line has ended and the input is within a
// line's limit; anything else is the general reader's to judge.
inline QuickReply LineNotUsual(std::string_view input, const ParserLimits& limits) {
  if (input.find('\n') != std::string_view::npos || input.size() > limits.max_line + 1) {
    return Outcome(QuickOutcome::kUnusual);
  }
  return Outcome(QuickOutcome::kNeedMore);
}

}  // namespace quick_detail

// The one-line reply to a store, delete, incr/decr or touch, whole in `input`
// and nothing after it: a fixed reply line the command may get (the general
// parser's and batch reader's own rules: FixedTextReply, TextReplyFits,
// CodeOfKind), or an incr/decr's number. always_inline: GCC otherwise calls it
// out of line from a single operation (docs/performance.md).
[[gnu::always_inline]] inline QuickReply QuickTextLine(std::string_view input, OpKind kind,
                                                       const ParserLimits& limits) {
  const std::size_t size = input.size();
  if (size < 2 || input[size - 2] != '\r' || input[size - 1] != '\n') {
    return quick_detail::LineNotUsual(input, limits);
  }
  const std::string_view line = input.substr(0, size - 2);
  ReplyKind reply = ReplyKind::kNumber;
  QuickReply quick = quick_detail::Done(StatusCode::kOk);
  // A line that is no fixed reply may be a number (kNumber), as the general
  // parser reads it; whether the reply fits the command is asked once.
  if ((!FixedTextReply(line, &reply) && !ParseU64(line, &quick.number)) ||
      !TextReplyFits(kind, reply)) {
    return quick_detail::Outcome(QuickOutcome::kUnusual);
  }
  quick.code = CodeOfKind(reply);
  return quick;
}

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
  if (step != QuickOutcome::kDone) return quick_detail::Outcome(step);
  // The general reader's limits: a line it would refuse, or a value over
  // max_value, is its to report.
  if (pos - 2 > limits.max_line || size > limits.max_value)
    return quick_detail::Outcome(QuickOutcome::kUnusual);
  const std::size_t start = pos;
  step = quick_detail::ReadDataBlockAt(input, &pos, size);
  if (step != QuickOutcome::kDone) return quick_detail::Outcome(step);
  reply.outcome = QuickOutcome::kDone;
  reply.code = StatusCode::kOk;
  reply.data = input.substr(start, static_cast<std::size_t>(size));
  *consumed = pos;
  return reply;
}

}  // namespace cachet::memcached
