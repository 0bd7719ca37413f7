// Shared parts of the per-protocol server batches: the reply loop, filling items.
#include "memcached_batch.h"

namespace cachet::memcached {

Status MemcachedBatch::Consume(net::ReadBuffer& buffer) {
  for (;;) {
    if (direct_.active()) {
      bool whole = false;
      if (Status s = ContinueDirect(buffer, &whole); !s.ok() || !whole) return s;
    }
    if (Status s = TakeUsualReplies(buffer); !s.ok()) return s;
    if (done()) {
      if (buffer.empty()) return Status::OK();
      if (stopped_reading_) {
        buffer.Consume(buffer.size());
        return Status::OK();
      }
      return Status::ProtocolError("memcached: bytes after the last expected reply");
    }
    Reply reply;
    ParseResult parsed = ParseReply(buffer.data(), &reply);
    if (parsed.outcome == ParseOutcome::kNeedMore) return StartDirect(buffer);
    if (parsed.outcome == ParseOutcome::kError) {
      // A value too large to read is its key's error; the keys after it go unanswered.
      if (parsed.error.IsTooLarge()) {
        if (Operation* owner = OwnerOf(reply); owner != nullptr) {
          owner->status = parsed.error;
          too_large_ = owner;
        }
      }
      return parsed.error;
    }
    Status s = OnReply(reply);
    // Consumed only now: the reply's views point into the buffer.
    buffer.Consume(parsed.consumed);
    if (!s.ok()) return s;
  }
}

Status MemcachedBatch::StartDirect(net::ReadBuffer& buffer) {
  Reply reply;
  std::size_t offset = 0;
  std::uint64_t size = 0;
  if (done() || !ValueHeader(buffer.data(), &reply, &offset, &size) ||
      !net::DirectValue::Worthwhile(buffer, offset, size)) {
    return Status::OK();
  }
  routing_direct_ = true;
  direct_op_ = nullptr;
  Status s = OnReply(reply);
  routing_direct_ = false;
  if (!s.ok()) return s;
  if (direct_op_ == nullptr) {
    return Status::ProtocolError("memcached: a large value for an operation that reads none");
  }
  direct_.Start(buffer, offset, static_cast<std::size_t>(size), &ResultOf(*direct_op_).value);
  return Status::OK();
}

Status MemcachedBatch::ContinueDirect(net::ReadBuffer& buffer, bool* done) {
  Status s = direct_.Continue(buffer, done);
  if (!s.ok()) return Status::ProtocolError("memcached: " + std::string(s.message()));
  if (*done) direct_op_->status = Status::OK();
  return Status::OK();
}

void MemcachedBatch::SettleDirect(const Status& transport) {
  if (!transport.ok() && direct_.active() && direct_op_ != nullptr) direct_op_->status = transport;
}

void MemcachedBatch::FillItem(Operation& op, const Reply& reply) {
  if (!routing_direct_) {
    StoreHit(op, reply.data, reply.flags, reply.cas);
    return;
  }
  Item& item = ResultOf(op);
  item.flags = reply.flags;
  item.cas = reply.cas;
  // Until the data is whole, a failed exchange must not leave a hit behind.
  direct_op_ = &op;
  op.status = Status::IoError("memcached: the connection failed inside a value");
}

}  // namespace cachet::memcached
