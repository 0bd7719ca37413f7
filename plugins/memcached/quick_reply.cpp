// Quick replies: recognizing the usual answer to one text command.
#include "quick_reply.h"

#include <cstring>

#include "quick_value.h"
#include "reply_line.h"

namespace cachet::memcached {

namespace {

using quick_detail::Done;
using quick_detail::ExpectLiteral;
using quick_detail::Outcome;

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
