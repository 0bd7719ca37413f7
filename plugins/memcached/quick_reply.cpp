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
[[gnu::always_inline]] inline QuickOutcome ExpectLiteral(std::string_view input, std::size_t* pos,
                                                         const char (&literal)[N]) {
  constexpr std::size_t kLength = N - 1;
  if (input.size() - *pos < kLength) return Expect(input, pos, literal);
  if (std::memcmp(input.data() + *pos, literal, kLength) != 0) return QuickOutcome::kUnusual;
  *pos += kLength;
  return QuickOutcome::kDone;
}

template <class Word>
Word Load(const char* at) {
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
QuickOutcome ExpectValueFor(std::string_view input, std::string_view key, std::size_t* pos) {
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

// The data block of `size` bytes from `*pos` and its "\r\n": kDone with *pos
// past them, kNeedMore, or kUnusual.
QuickOutcome ReadDataBlockAt(std::string_view input, std::size_t* pos, std::uint64_t size) {
  if (input.size() - *pos < size + 2) return QuickOutcome::kNeedMore;
  std::size_t end = *pos + static_cast<std::size_t>(size);
  if (ExpectLiteral(input, &end, "\r\n") != QuickOutcome::kDone) return QuickOutcome::kUnusual;
  *pos = end;
  return QuickOutcome::kDone;
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

QuickReply QuickTextValue(std::string_view input, std::string_view key, const ParserLimits& limits,
                          std::size_t* consumed) {
  std::size_t pos = 0;
  QuickOutcome step = ExpectValueFor(input, key, &pos);
  QuickReply reply;
  std::uint64_t size = 0;
  if (step == QuickOutcome::kDone) step = ReadValueNumbers(input, &pos, &reply, &size);
  if (step != QuickOutcome::kDone) return Outcome(step);
  // The general reader's limits: a line it would refuse, or a value over
  // max_value, is its to report.
  if (pos - 2 > limits.max_line || size > limits.max_value) return Outcome(QuickOutcome::kUnusual);
  const std::size_t start = pos;
  step = ReadDataBlockAt(input, &pos, size);
  if (step != QuickOutcome::kDone) return Outcome(step);
  reply.outcome = QuickOutcome::kDone;
  reply.code = StatusCode::kOk;
  reply.data = input.substr(start, static_cast<std::size_t>(size));
  *consumed = pos;
  return reply;
}

QuickReply QuickTextRetrieval(std::string_view input, std::string_view key,
                              const ParserLimits& limits) {
  std::size_t pos = 0;
  if (!input.empty() && input[0] == 'E') {
    QuickOutcome end = ExpectLiteral(input, &pos, "END\r\n");
    if (end == QuickOutcome::kDone && pos != input.size()) return Outcome(QuickOutcome::kUnusual);
    return end == QuickOutcome::kDone ? Done(StatusCode::kNotFound) : Outcome(end);
  }
  QuickReply reply = QuickTextValue(input, key, limits, &pos);
  if (reply.outcome != QuickOutcome::kDone) return reply;
  // A whole value whose END is still to come is the batch reader's: it keeps
  // the hit even if the END never arrives, and this must decide alike.
  if (ExpectLiteral(input, &pos, "END\r\n") != QuickOutcome::kDone || pos != input.size()) {
    return Outcome(QuickOutcome::kUnusual);
  }
  return reply;
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
