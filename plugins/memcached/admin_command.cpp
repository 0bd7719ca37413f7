// AdminReplyReader: STAT lines up to END, a VERSION line, or OK: each only to its command.
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
    poisoned_ = true;
    done_ = true;
    return Status::OK();
  }
  switch (expect_) {
    case Expect::kStats:
      if (reply.kind == ReplyKind::kStat) {
        lines_.emplace_back(reply.text, reply.stat_value);
        return Status::OK();
      }
      if (reply.kind != ReplyKind::kEnd) break;
      done_ = true;
      return Status::OK();
    case Expect::kVersion:
    case Expect::kOk:
      if (reply.kind != (expect_ == Expect::kVersion ? ReplyKind::kVersion : ReplyKind::kOk)) break;
      lines_.emplace_back(expect_ == Expect::kVersion ? "version" : "ok", reply.text);
      done_ = true;
      return Status::OK();
  }
  return Status::ProtocolError("memcached: a reply that does not fit the admin command");
}

}  // namespace cachet::memcached
