// Quick replies: recognizing the usual answer to one text command.
#include "quick_reply.h"

#include <cstring>

#include "reply_line.h"

namespace cachet::memcached {

namespace {

constexpr std::size_t kMaxDigits = 20;  // the widest 64-bit decimal

QuickReply Outcome(QuickOutcome outcome) {
  QuickReply reply;
  reply.outcome = outcome;
  return reply;
}

QuickReply Done(StatusCode code) {
  QuickReply reply;
  reply.outcome = QuickOutcome::kDone;
  reply.code = code;
  return reply;
}

// Whether `input`, from `*pos`, continues with `expected`: kDone (and *pos moved
// past it), kNeedMore when the input ends inside it, kUnusual on a difference.
QuickOutcome Expect(std::string_view input, std::size_t* pos, std::string_view expected) {
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
QuickOutcome ExpectLiteral(std::string_view input, std::size_t* pos, const char (&literal)[N]) {
  constexpr std::size_t kLength = N - 1;
  if (input.size() - *pos < kLength) return Expect(input, pos, literal);
  if (std::memcmp(input.data() + *pos, literal, kLength) != 0) return QuickOutcome::kUnusual;
  *pos += kLength;
  return QuickOutcome::kDone;
}

bool IsDigit(char c) { return static_cast<unsigned char>(c) - unsigned{'0'} <= 9; }

// A decimal of 1 to 20 digits from `*pos`, without overflow, up to the first
// non-digit, which is left at *pos: what ParseU64 accepts, read in one pass.
// Inlined into each of its few callers: a reply's three numbers are short, and
// a call's register saving cost as much as reading their digits.
[[gnu::always_inline]] inline QuickOutcome ReadNumber(std::string_view input, std::size_t* pos, std::uint64_t* value) {
  const char* const begin = input.data() + *pos;
  const char* const end = input.data() + input.size();
  // 19 digits always fit in 64 bits; only a 20th can overflow.
  const std::size_t left = static_cast<std::size_t>(end - begin);
  const char* const safe_end = left > kMaxDigits - 1 ? begin + kMaxDigits - 1 : end;
  const char* at = begin;
  std::uint64_t number = 0;
  for (; at != safe_end && IsDigit(*at); ++at) {
    number = number * 10 + static_cast<unsigned>(*at - '0');
  }
  if (at == safe_end && at != end && IsDigit(*at)) {
    const unsigned digit = static_cast<unsigned>(*at - '0');
    if (__builtin_mul_overflow(number, 10u, &number) ||
        __builtin_add_overflow(number, digit, &number)) {
      return QuickOutcome::kUnusual;
    }
    ++at;
  }
  if (at == end) return QuickOutcome::kNeedMore;
  // No digit at all, or a 21st one.
  if (at == begin || IsDigit(*at)) return QuickOutcome::kUnusual;
  *value = number;
  *pos += static_cast<std::size_t>(at - begin);
  return QuickOutcome::kDone;
}

// "<flags> <bytes>[ <cas>]\r\n", the rest of a VALUE line after the key's space.
QuickOutcome ReadValueNumbers(std::string_view input, std::size_t* pos, QuickReply* reply,
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

// The data block of `size` bytes from `start`, then "\r\n" and "END\r\n", which
// must end the input.
QuickReply ReadDataAndEnd(std::string_view input, std::size_t start, std::uint64_t size,
                          QuickReply reply) {
  if (input.size() - start < size + 2) return Outcome(QuickOutcome::kNeedMore);
  std::size_t pos = start + static_cast<std::size_t>(size);
  QuickOutcome step = ExpectLiteral(input, &pos, "\r\n");
  if (step != QuickOutcome::kDone) return Outcome(step);
  // A whole value whose END is still to come is the batch reader's: it keeps
  // the hit even if the END never arrives, and this must decide alike.
  if (ExpectLiteral(input, &pos, "END\r\n") != QuickOutcome::kDone || pos != input.size()) {
    return Outcome(QuickOutcome::kUnusual);
  }
  reply.outcome = QuickOutcome::kDone;
  reply.code = StatusCode::kOk;
  reply.data = input.substr(start, static_cast<std::size_t>(size));
  return reply;
}

// A whole input that is exactly `line` and its "\r\n". Inlined, so that each
// literal's length is a constant and a mismatch costs a comparison.
[[gnu::always_inline]] inline bool IsLine(std::string_view input, std::string_view line) {
  return input.size() == line.size() + 2 && input.starts_with(line);
}

QuickReply LineOutcome(std::string_view input, OpKind kind) {
  if (IsLine(input, "NOT_FOUND")) return Done(StatusCode::kNotFound);
  switch (kind) {
    case OpKind::kStore:
      if (IsLine(input, "STORED")) return Done(StatusCode::kOk);
      if (IsLine(input, "NOT_STORED")) return Done(StatusCode::kNotStored);
      if (IsLine(input, "EXISTS")) return Done(StatusCode::kExists);
      break;
    case OpKind::kRemove:
      if (IsLine(input, "DELETED")) return Done(StatusCode::kOk);
      break;
    case OpKind::kTouch:
      if (IsLine(input, "TOUCHED")) return Done(StatusCode::kOk);
      break;
    case OpKind::kIncr:
    case OpKind::kDecr: {
      QuickReply reply = Done(StatusCode::kOk);
      if (ParseU64(input.substr(0, input.size() - 2), &reply.number)) return reply;
      break;
    }
    case OpKind::kGet:
      break;
  }
  return Outcome(QuickOutcome::kUnusual);
}

}  // namespace

QuickReply QuickTextRetrieval(std::string_view input, std::string_view key,
                              const ParserLimits& limits) {
  std::size_t pos = 0;
  if (!input.empty() && input[0] == 'E') {
    QuickOutcome end = ExpectLiteral(input, &pos, "END\r\n");
    if (end == QuickOutcome::kDone && pos != input.size()) return Outcome(QuickOutcome::kUnusual);
    return end == QuickOutcome::kDone ? Done(StatusCode::kNotFound) : Outcome(end);
  }
  QuickOutcome step = ExpectLiteral(input, &pos, "VALUE ");
  if (step == QuickOutcome::kDone) step = Expect(input, &pos, key);
  if (step == QuickOutcome::kDone) step = ExpectLiteral(input, &pos, " ");
  QuickReply reply;
  std::uint64_t size = 0;
  if (step == QuickOutcome::kDone) step = ReadValueNumbers(input, &pos, &reply, &size);
  if (step != QuickOutcome::kDone) return Outcome(step);
  // The general reader's limits: a line it would refuse, or a value over
  // max_value, is its to report.
  if (pos - 2 > limits.max_line || size > limits.max_value) return Outcome(QuickOutcome::kUnusual);
  return ReadDataAndEnd(input, pos, size, reply);
}

QuickReply QuickTextLine(std::string_view input, OpKind kind, const ParserLimits& limits) {
  // The usual case: the input is one whole line.
  if (input.size() >= 2 && input[input.size() - 2] == '\r' && input.back() == '\n') {
    return LineOutcome(input, kind);
  }
  // Not (yet) one whole line: wait while the general reader would wait too, that
  // is while no line has ended and the input is within a line's limit.
  if (input.find('\n') != std::string_view::npos || input.size() > limits.max_line + 1) {
    return Outcome(QuickOutcome::kUnusual);
  }
  return Outcome(QuickOutcome::kNeedMore);
}

}  // namespace cachet::memcached
