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

}  // namespace cachet::memcached
