// AdminReplyReader: STAT lines up to END, or a single OK / VERSION line.
#include "admin_command.h"

#include "reply_status.h"

namespace cachet::memcached {

Status AdminReplyReader::Consume(net::ReadBuffer& buffer) {
  while (!done_) {
    Reply reply;
    ParseResult parsed = parser_.Parse(buffer.data(), &reply);
    if (parsed.outcome == ParseOutcome::kNeedMore) return Status::OK();
    if (parsed.outcome == ParseOutcome::kError) return parsed.error;
    Status s = OnReply(reply);
    buffer.Consume(parsed.consumed);
    if (!s.ok()) return s;
  }
  if (!buffer.empty()) return Status::ProtocolError("memcached: bytes after the reply");
  return Status::OK();
}

Status AdminReplyReader::OnReply(const Reply& reply) {
  if (IsErrorReply(reply.kind)) {
    outcome_ = StatusFromReply(reply);
    done_ = true;
    return Status::OK();
  }
  if (multi_line_ && reply.kind == ReplyKind::kStat) {
    lines_.emplace_back(reply.text, reply.stat_value);
    return Status::OK();
  }
  if (multi_line_ && reply.kind == ReplyKind::kEnd) {
    done_ = true;
    return Status::OK();
  }
  if (!multi_line_ && (reply.kind == ReplyKind::kOk || reply.kind == ReplyKind::kVersion)) {
    lines_.emplace_back(reply.kind == ReplyKind::kVersion ? "version" : "ok", reply.text);
    done_ = true;
    return Status::OK();
  }
  return Status::ProtocolError("memcached: unexpected reply to an admin command");
}

}  // namespace cachet::memcached
