// The inline quick recognizers (see quick_reply.h): QuickTextValue, one whole
// hit of a gets reply for the key expected, read in one pass, and QuickTextLine,
// the one-line reply to a single command. Inline, with their helpers, because a
// batch read calls the first once per key and every single command the second:
// a call cost as much as the reading itself. The helpers are shared with the
// other quick recognizers (quick_reply.cpp). No I/O, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "quick_reply.h"
#include "reply_line.h"

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
[[gnu::always_inline]] inline QuickOutcome ExpectLiteral(std::string_view input, std::size_t* pos,
                                                         const char (&literal)[N]) {
  constexpr std::size_t kLength = N - 1;
  if (input.size() - *pos < kLength) return Expect(input, pos, literal);
  if (std::memcmp(input.data() + *pos, literal, kLength) != 0) return QuickOutcome::kUnusual;
  *pos += kLength;
  return QuickOutcome::kDone;
}

template <class Word>
inline Word Load(const char* at) {
  Word word;
  std::memcpy(&word, at, sizeof(word));
  return word;
}

// Whether the `n` bytes at `a` and `b` are equal. Inline, a word at a time: a
// key is compared once per hit, and a memcmp call costs more than the compare
// of a short key itself. The last word may overlap the one before it.
[[gnu::always_inline]] inline bool SameBytes(const char* a, const char* b, std::size_t n) {
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8) {
      if (Load<std::uint64_t>(a + i) != Load<std::uint64_t>(b + i)) return false;
    }
    return n % 8 == 0 || Load<std::uint64_t>(a + n - 8) == Load<std::uint64_t>(b + n - 8);
  }
  if (n >= 4) {
    return Load<std::uint32_t>(a) == Load<std::uint32_t>(b) &&
           Load<std::uint32_t>(a + n - 4) == Load<std::uint32_t>(b + n - 4);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

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
// Inlined into each of its few callers: a reply's three numbers are short, and
// a call's register saving cost as much as reading their digits.
[[gnu::always_inline]] inline QuickOutcome ReadNumber(std::string_view input, std::size_t* pos,
                                                      std::uint64_t* value) {
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

// Whether `input` is exactly `line` (which ends in "\r\n"): a size check and
// a word or two compared, since the literal's length is a constant.
template <std::size_t N>
[[gnu::always_inline]] inline bool IsWholeLine(std::string_view input, const char (&line)[N]) {
  return input.size() == N - 1 && SameBytes(input.data(), line, N - 1);
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
// and nothing after it: the command's success first, then NOT_FOUND.
[[gnu::always_inline]] inline QuickReply QuickTextLine(std::string_view input, OpKind kind,
                                                       const ParserLimits& limits) {
  using quick_detail::Done;
  using quick_detail::IsWholeLine;
  switch (kind) {
    case OpKind::kStore:
      if (IsWholeLine(input, "STORED\r\n")) return Done(StatusCode::kOk);
      if (IsWholeLine(input, "NOT_STORED\r\n")) return Done(StatusCode::kNotStored);
      if (IsWholeLine(input, "EXISTS\r\n")) return Done(StatusCode::kExists);
      break;
    case OpKind::kRemove:
      if (IsWholeLine(input, "DELETED\r\n")) return Done(StatusCode::kOk);
      break;
    case OpKind::kTouch:
      if (IsWholeLine(input, "TOUCHED\r\n")) return Done(StatusCode::kOk);
      break;
    case OpKind::kIncr:
    case OpKind::kDecr: {
      const std::size_t size = input.size();
      QuickReply reply = Done(StatusCode::kOk);
      if (size > 2 && input[size - 2] == '\r' && input[size - 1] == '\n' &&
          ParseU64(input.substr(0, size - 2), &reply.number)) {
        return reply;
      }
      break;
    }
    case OpKind::kGet:
      break;
  }
  if (IsWholeLine(input, "NOT_FOUND\r\n")) return Done(StatusCode::kNotFound);
  return quick_detail::LineNotUsual(input, limits);
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
