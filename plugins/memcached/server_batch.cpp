// Shared parts of the per-protocol server batches: the reply loop, filling items.
#include "server_batch.h"

namespace cachet::memcached {

Status ServerBatch::Consume(net::ReadBuffer& buffer) {
  for (;;) {
    if (done()) {
      if (buffer.empty()) return Status::OK();
      return Status::ProtocolError("memcached: bytes after the last expected reply");
    }
    Reply reply;
    ParseResult parsed = ParseReply(buffer.data(), &reply);
    if (parsed.outcome == ParseOutcome::kNeedMore) return Status::OK();
    if (parsed.outcome == ParseOutcome::kError) return parsed.error;
    Status s = OnReply(reply);
    // Consumed only now: the reply's views point into the buffer.
    buffer.Consume(parsed.consumed);
    if (!s.ok()) return s;
  }
}

void FillItem(Operation& op, const Reply& reply) {
  // assign() reuses the capacity of the caller's Item.
  op.result.value.assign(reply.data.data(), reply.data.size());
  op.result.flags = reply.flags;
  op.result.cas = reply.cas;
  op.status = Status::OK();
}

}  // namespace cachet::memcached
