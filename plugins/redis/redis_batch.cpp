// One server's pipelined batch: encode every operation, then map replies in order.
#include "redis_batch.h"

#include "cluster_slots.h"
#include "redis_commands.h"
#include "redis_replies.h"

namespace cachet::redis {

namespace {

// Append and prepend, whose script answers 1 or 0 (kNotStored).
bool IsAppendOrPrepend(const Operation& op) {
  return op.kind == OpKind::kStore &&
         (op.mode == StoreMode::kAppend || op.mode == StoreMode::kPrepend);
}

bool IsCas(const Operation& op) { return op.kind == OpKind::kStore && op.mode == StoreMode::kCas; }

// Encodes `op`; false when it is settled without a command.
bool Encode(Operation& op, CounterMode counters, std::string* out) {
  switch (op.kind) {
    case OpKind::kGet:
      AppendGet(out, op.key);
      return true;
    case OpKind::kStore:
      if (IsCas(op)) {
        AppendCas(out, op.key, op.item.value, op.item.cas, op.ttl, false);
      } else if (IsAppendOrPrepend(op)) {
        AppendScript(out, op.mode, op.key, op.item.value, false);
      } else {
        AppendSet(out, op.mode, op.key, op.item.value, op.ttl);
      }
      return true;
    case OpKind::kRemove:
      AppendDel(out, op.key);
      return true;
    case OpKind::kIncr:
    case OpKind::kDecr:
      if (counters == CounterMode::kNative) {
        op.status = CheckCounterDelta(op.delta);
        if (!op.status.ok()) return false;
      }
      AppendCounter(out, counters, op.kind == OpKind::kIncr, op.key, op.delta, false);
      return true;
    case OpKind::kTouch:
      AppendTouch(out, op.key, op.ttl);
      return true;
  }
  op.status = Status::Internal("unknown operation kind");
  return false;
}

Status Apply(Operation& op, RespValue reply, std::string_view where) {
  switch (op.kind) {
    case OpKind::kGet:
      return ReadValue(reply, where, &op.result);
    case OpKind::kStore:
      if (IsCas(op)) return ReadCasOutcome(reply, where);
      return IsAppendOrPrepend(op) ? ReadOneOrZero(reply, where, Status::NotStored())
                                   : ReadStored(reply, where);
    case OpKind::kRemove:
      return ReadOneOrZero(reply, where, Status::NotFound());
    case OpKind::kIncr:
    case OpKind::kDecr:
      return ReadCounter(reply, where, &op.counter);
    case OpKind::kTouch:
      if (op.ttl.count() > 0) return ReadOneOrZero(reply, where, Status::NotFound());
      return reply.IsNull() ? Status::NotFound() : ReadNotError(reply, where);
  }
  return Status::Internal("unknown operation kind");
}

}  // namespace

void RedisBatch::NoteError(Operation& op, std::string_view error) {
  if (error.starts_with("NOSCRIPT")) {
    needs_script_.push_back(&op);
  } else if (ClassifyClusterError(error) != ClusterErrorKind::kNone) {
    redirected_.push_back({&op, std::string(error)});
  }
}

void RedisBatch::Add(Operation& op) {
  if (Encode(op, counters_, &request_)) sent_.push_back(&op);
}

Status RedisBatch::Consume(net::ReadBuffer& buffer) {
  while (next_ < sent_.size()) {
    switch (parser_.Parse(buffer.data())) {
      case RespParser::Outcome::kNeedMore:
        return Status::OK();
      case RespParser::Outcome::kError:
        return Status::ProtocolError("redis " + where_ + ": " +
                                     std::string(parser_.error().message()));
      case RespParser::Outcome::kReply:
        break;
    }
    RespValue reply = parser_.reply().root();
    // Out-of-band RESP3 pushes are not replies to our commands.
    if (reply.type() != RespType::kPush) {
      Operation& op = *sent_[next_++];
      op.status = Apply(op, reply, where_);
      if (reply.IsError()) NoteError(op, reply.text());
    }
    buffer.Consume(parser_.consumed());
  }
  return Status::OK();
}

void RedisBatch::Settle(const Status& status) {
  for (std::size_t i = next_; i < sent_.size(); ++i) {
    sent_[i]->status = status.ok() ? Status::IoError("redis " + where_ + ": no reply") : status;
  }
}

}  // namespace cachet::redis
