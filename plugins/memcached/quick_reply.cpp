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

// A decimal from `*pos` up to the first non-digit, which is left at *pos.
QuickOutcome ReadNumber(std::string_view input, std::size_t* pos, std::uint64_t* value) {
  const std::size_t start = *pos;
  std::size_t end = start;
  while (end < input.size() && end - start <= kMaxDigits &&
         static_cast<unsigned char>(input[end]) - unsigned{'0'} <= 9) {
    ++end;
  }
  if (end - start > kMaxDigits) return QuickOutcome::kUnusual;
  if (end == input.size()) return QuickOutcome::kNeedMore;
  if (!ParseU64(input.substr(start, end - start), value)) return QuickOutcome::kUnusual;
  *pos = end;
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
  return Expect(input, pos, "\r\n");
}

// The data block of `size` bytes from `start`, then "\r\n" and "END\r\n", which
// must end the input.
QuickReply ReadDataAndEnd(std::string_view input, std::size_t start, std::uint64_t size,
                          QuickReply reply) {
  if (input.size() - start < size + 2) return Outcome(QuickOutcome::kNeedMore);
  std::size_t pos = start + static_cast<std::size_t>(size);
  QuickOutcome step = Expect(input, &pos, "\r\n");
  if (step != QuickOutcome::kDone) return Outcome(step);
  // A whole value whose END is still to come is the batch reader's: it keeps
  // the hit even if the END never arrives, and this must decide alike.
  if (Expect(input, &pos, "END\r\n") != QuickOutcome::kDone || pos != input.size()) {
    return Outcome(QuickOutcome::kUnusual);
  }
  reply.outcome = QuickOutcome::kDone;
  reply.code = StatusCode::kOk;
  reply.data = input.substr(start, static_cast<std::size_t>(size));
  return reply;
}

// A whole input that is exactly `line` and its "\r\n".
bool IsLine(std::string_view input, std::string_view line) {
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
    QuickOutcome end = Expect(input, &pos, "END\r\n");
    if (end == QuickOutcome::kDone && pos != input.size()) return Outcome(QuickOutcome::kUnusual);
    return end == QuickOutcome::kDone ? Done(StatusCode::kNotFound) : Outcome(end);
  }
  QuickOutcome step = Expect(input, &pos, "VALUE ");
  if (step == QuickOutcome::kDone) step = Expect(input, &pos, key);
  if (step == QuickOutcome::kDone) step = Expect(input, &pos, " ");
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
